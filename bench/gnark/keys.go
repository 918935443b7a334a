package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
)

// keyPaths names the cached key files of one circuit shape. The shape id
// hashes the exported matrices and counts (not the assignment), so another
// witness of the same circuit reuses the keys and any change of shape
// misses; the gnark version is in the name because the raw encoding is
// gnark's own.
func keyPaths(dir string, shapeID [32]byte) (pk, vk string) {
	base := filepath.Join(dir, fmt.Sprintf("gnark-%s-%s", gnarkVersion, hex.EncodeToString(shapeID[:12])))
	return base + ".pk", base + ".vk"
}

// keysFor loads the keys of sys from dir, or runs gnark's setup and stores
// them there. A cache that cannot be written is reported in rep, not
// fatal: the benchmark still runs, only the next run pays the setup again.
func keysFor(sys *system, shapeID [32]byte, dir string, rep *Report) (groth16.ProvingKey, groth16.VerifyingKey, error) {
	var pkPath, vkPath string
	if dir != "" {
		pkPath, vkPath = keyPaths(dir, shapeID)
		start := time.Now()
		pk, vk, err := readKeys(pkPath, vkPath)
		if err == nil {
			rep.SetupCached, rep.KeyLoad = true, time.Since(start)
			return pk, vk, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			rep.KeyCacheError = err.Error() // damaged: replaced below, like a miss
		}
	}
	start := time.Now()
	pk, vk, err := groth16.Setup(sys.ccs)
	if err != nil {
		return nil, nil, fmt.Errorf("gnark setup: %w", err)
	}
	rep.Setup = time.Since(start)
	if dir != "" {
		if err := writeKeys(dir, pkPath, vkPath, pk, vk); err != nil {
			rep.KeyCacheError = err.Error()
		}
	}
	return pk, vk, nil
}

func readKeys(pkPath, vkPath string) (groth16.ProvingKey, groth16.VerifyingKey, error) {
	pk, vk := groth16.NewProvingKey(ecc.BLS12_381), groth16.NewVerifyingKey(ecc.BLS12_381)
	// The files are this program's own output (written atomically below),
	// so the unchecked fast path of gnark's decoder is used for the pk.
	if err := readFile(pkPath, func(r io.Reader) (int64, error) { return pk.UnsafeReadFrom(r) }); err != nil {
		return nil, nil, err
	}
	if err := readFile(vkPath, vk.ReadFrom); err != nil {
		return nil, nil, err
	}
	return pk, vk, nil
}

func readFile(path string, read func(io.Reader) (int64, error)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close() // read-only: Close has nothing to report
	if _, err := read(f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

func writeKeys(dir, pkPath, vkPath string, pk groth16.ProvingKey, vk groth16.VerifyingKey) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("key cache: %w", err)
	}
	if err := writeFileAtomic(pkPath, pk.WriteRawTo); err != nil {
		return err
	}
	return writeFileAtomic(vkPath, vk.WriteRawTo)
}

// writeFileAtomic writes through a temporary file renamed into place, so a
// concurrent or interrupted run never reads half a key.
func writeFileAtomic(path string, write func(io.Writer) (int64, error)) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = write(f)
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
