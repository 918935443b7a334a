package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// DefaultKeyDir is where keys are cached unless told otherwise: the
// directory cuzk-bench uses, with its file names, so keys made by either
// tool serve the other.
func DefaultKeyDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir() // no home or XDG directory: still cache per machine
	}
	return filepath.Join(dir, "cuzk-bench", "keys")
}

// keyPaths names the key files of porep-synth at target (cuzk-bench's
// names; the layout depends on the target alone).
func keyPaths(dir string, target int, setupSeed uint64) (pk, vk string) {
	base := filepath.Join(dir, fmt.Sprintf("porep-synth-%d-setup%d", target, setupSeed))
	return base + ".pk", base + ".vk"
}

// loadKeys reads cached keys that fit c's layout; ok is false on a miss, a
// damaged file or a key made for another layout (all replaced by the caller).
func loadKeys(dir string, c *porep.Circuit, setupSeed uint64) (pk *groth16.ProvingKey, vk *groth16.VerifyingKey, ok bool) {
	if dir == "" {
		return nil, nil, false
	}
	pkPath, vkPath := keyPaths(dir, c.Layout.Target, setupSeed)
	pk, vk = new(groth16.ProvingKey), new(groth16.VerifyingKey)
	if readFile(pkPath, pk) != nil || readFile(vkPath, vk) != nil {
		return nil, nil, false
	}
	l := c.Layout
	fits := pk.NbPublic == l.Publics() && pk.DomainSize == r1cs.DomainSize(l.Constraints(), l.Publics())
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
	pkPath, vkPath := keyPaths(dir, target, setupSeed)
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
