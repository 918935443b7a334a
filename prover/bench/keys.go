package bench

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// DefaultKeyDir is where keys are cached unless told otherwise: the
// directory cuzk-bench uses (the file names differ: these carry the shape).
func DefaultKeyDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir() // no home or XDG directory: still cache per machine
	}
	return filepath.Join(dir, "cuzk-bench", "keys")
}

// keyPaths names the key files of a porep-synth shape. The name carries a
// hash of the compiled matrices, so a key made before a circuit change is
// never taken for the new circuit, even when its counts still match.
func keyPaths(dir string, target int, setupSeed uint64, shape string) (pk, vk string) {
	base := filepath.Join(dir, fmt.Sprintf("porep-synth-%d-setup%d-%s", target, setupSeed, shape))
	return base + ".pk", base + ".vk"
}

// ShapeID hashes sys's counts, coefficients and matrices (SHA-256, first
// 12 bytes in hex).
func ShapeID(sys *r1cs.System) string {
	h := sha256.New()
	le := binary.LittleEndian
	_ = binary.Write(h, le, []uint32{uint32(sys.NbPublic), uint32(sys.NbPrivate), uint32(sys.NbConstraints)}) // hash writes never fail
	for i := range sys.Coeffs {
		b := sys.Coeffs[i].Bytes()
		h.Write(b[:])
	}
	for _, m := range []*r1cs.Matrix{&sys.A, &sys.B, &sys.C} {
		_ = binary.Write(h, le, m.RowPtr) // hash writes never fail
		_ = binary.Write(h, le, m.Col)
		_ = binary.Write(h, le, m.CoeffID)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// loadKeys reads the cached keys of sys; ok is false on a miss or a damaged
// or mismatched file (all replaced by the caller).
func loadKeys(dir string, target int, sys *r1cs.System, setupSeed uint64) (pk *groth16.ProvingKey, vk *groth16.VerifyingKey, ok bool) {
	if dir == "" {
		return nil, nil, false
	}
	pkPath, vkPath := keyPaths(dir, target, setupSeed, ShapeID(sys))
	pk, vk = new(groth16.ProvingKey), new(groth16.VerifyingKey)
	if readFile(pkPath, pk) != nil || readFile(vkPath, vk) != nil {
		return nil, nil, false
	}
	fits := pk.NbPublic == sys.NbPublic && pk.NbPrivate == sys.NbPrivate && pk.DomainSize == sys.DomainSize()
	return pk, vk, fits
}

// setupKeys runs the development setup for sys (NOT for production: the
// trapdoor comes from setupSeed) and stores the keys in dir when dir is set.
func setupKeys(dir string, target int, sys *r1cs.System, setupSeed uint64) (*groth16.ProvingKey, *groth16.VerifyingKey, error) {
	pk, vk, err := groth16.Setup(sys, seededReader(setupSeed, 0))
	if err != nil {
		return nil, nil, fmt.Errorf("setup: %w", err)
	}
	if dir == "" {
		return pk, vk, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("key cache: %w", err)
	}
	pkPath, vkPath := keyPaths(dir, target, setupSeed, ShapeID(sys))
	if err := writeFileAtomic(pkPath, pk); err != nil {
		return nil, nil, err
	}
	return pk, vk, writeFileAtomic(vkPath, vk)
}

func readFile(path string, dst io.ReaderFrom) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close() // read-only: Close has nothing to report
	if _, err := dst.ReadFrom(f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes src beside path and renames it into place, so a
// concurrent or interrupted run never reads half a file.
func writeFileAtomic(path string, src io.WriterTo) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = src.WriteTo(f)
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name()) // best effort: the write error is the one to report
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// seededReader is a deterministic byte stream for (seed, stream): the setup
// trapdoor and each run's blinding r, s. It derives the same bytes as
// cuzk-bench's, so a shared cached key is the key either would have made.
func seededReader(seed, stream uint64) io.Reader {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], stream)
	copy(key[16:], "cuzk-bench rand")
	return rand.NewChaCha8(key)
}
