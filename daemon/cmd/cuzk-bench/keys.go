package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/prover/bench"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// keyInfo says where a key pair came from and what it cost.
type keyInfo struct {
	cached         bool
	pkPath, vkPath string
	compile, setup time.Duration // shape and development setup (cache miss)
	load, store    time.Duration // reading or writing the files
	pkSize, vkSize int64
	replaced       string // why a cached file was not used; "" when none was there
}

// defaultKeyDir is where keys are cached unless -keys says otherwise.
func defaultKeyDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir() // no home or XDG directory: still cache per machine
	}
	return filepath.Join(dir, "cuzk-bench", "keys")
}

// keyPaths names the key files of porep-synth at target with a setup seed.
// The layout is a function of the target alone, so the circuit seed (which
// only changes the witness) is not part of the name.
func keyPaths(dir string, target int, setupSeed uint64, shape string) (pk, vk string) {
	base := filepath.Join(dir, fmt.Sprintf("porep-synth-%d-setup%d-%s", target, setupSeed, shape))
	return base + ".pk", base + ".vk"
}

// devKeys returns the keys of c's shape: from dir when present and matching
// the layout, otherwise from a development setup (seeded by setupSeed),
// written to dir for the next run. An empty dir disables the cache.
func devKeys(dir string, c *porep.Circuit, setupSeed uint64) (*groth16.ProvingKey, *groth16.VerifyingKey, keyInfo, error) {
	var info keyInfo
	start := time.Now()
	sys, err := r1cs.Compile(c)
	if err != nil {
		return nil, nil, info, fmt.Errorf("compile porep-synth %s: %w", sizeString(c.Layout.Target), err)
	}
	info.compile = time.Since(start)
	if dir != "" {
		// The name carries the compiled shape's hash: a key made before a
		// circuit change is never taken for the new circuit.
		info.pkPath, info.vkPath = keyPaths(dir, c.Layout.Target, setupSeed, bench.ShapeID(sys))
		start := time.Now()
		pk, vk, err := readKeys(info.pkPath, info.vkPath)
		switch {
		case err == nil && keysFit(pk, c):
			info.cached, info.load = true, time.Since(start)
			info.pkSize, info.vkSize = fileSize(info.pkPath), fileSize(info.vkPath)
			return pk, vk, info, nil
		case err == nil:
			info.replaced = "made for another layout"
		case !errors.Is(err, os.ErrNotExist):
			info.replaced = err.Error() // damaged: replaced below, like a miss
		}
	}
	start = time.Now()
	pk, vk, err := groth16.Setup(sys, seededReader(setupSeed, 0)) // development only
	if err != nil {
		return nil, nil, info, fmt.Errorf("setup: %w", err)
	}
	info.setup = time.Since(start)
	if dir == "" {
		return pk, vk, info, nil
	}
	start = time.Now()
	if err := writeKeys(dir, info.pkPath, info.vkPath, pk, vk); err != nil {
		return nil, nil, info, err
	}
	info.store = time.Since(start)
	info.pkSize, info.vkSize = fileSize(info.pkPath), fileSize(info.vkPath)
	return pk, vk, info, nil
}

// keysFit reports whether pk was made for c's layout.
func keysFit(pk *groth16.ProvingKey, c *porep.Circuit) bool {
	l := c.Layout
	return pk.NbPublic == l.Publics() && pk.DomainSize == r1cs.DomainSize(l.Constraints(), l.Publics())
}

func readKeys(pkPath, vkPath string) (*groth16.ProvingKey, *groth16.VerifyingKey, error) {
	pk, vk := new(groth16.ProvingKey), new(groth16.VerifyingKey)
	if err := readFile(pkPath, pk); err != nil {
		return nil, nil, err
	}
	if err := readFile(vkPath, vk); err != nil {
		return nil, nil, err
	}
	return pk, vk, nil
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

func writeKeys(dir, pkPath, vkPath string, pk *groth16.ProvingKey, vk *groth16.VerifyingKey) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("key cache: %w", err)
	}
	if err := writeFileAtomic(pkPath, pk); err != nil {
		return err
	}
	return writeFileAtomic(vkPath, vk)
}

// writeFileAtomic writes src to a temporary file beside path and renames it
// into place, so a concurrent or interrupted run never sees half a key.
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

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0 // only printed
	}
	return st.Size()
}

// seededReader is a deterministic byte stream for (seed, stream): the setup
// trapdoor and each run's blinding scalars r, s. Equal arguments give equal
// bytes, so the CPU and GPU proofs of one run use the same r and s.
func seededReader(seed uint64, stream uint64) io.Reader {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], stream)
	copy(key[16:], "cuzk-bench rand")
	return rand.NewChaCha8(key)
}
