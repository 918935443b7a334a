package devkeys

import (
	"fmt"
	"io"
	"os"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// load reads a key pair and checks it against sys. The error matches
// os.ErrNotExist when a file is absent; any other error means a damaged or
// mismatched file.
func load(pkPath, vkPath string, sys *r1cs.System) (*groth16.ProvingKey, *groth16.VerifyingKey, error) {
	pk, vk := new(groth16.ProvingKey), new(groth16.VerifyingKey)
	if err := readFile(pkPath, pk); err != nil {
		return nil, nil, err
	}
	if err := readFile(vkPath, vk); err != nil {
		return nil, nil, err
	}
	if err := fits(pk, vk, sys); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", pkPath, err)
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

// store writes both keys into dir, creating it when needed; an empty
// pkPath writes the verifying key alone.
func store(dir, pkPath, vkPath string, pk *groth16.ProvingKey, vk *groth16.VerifyingKey) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dev keys: %w", err)
	}
	if pkPath != "" {
		if err := writeFileAtomic(pkPath, pk); err != nil {
			return err
		}
	}
	return writeFileAtomic(vkPath, vk)
}

// writeFileAtomic writes src through renameio, so a concurrent or
// interrupted run never reads half a file and a crash never leaves one.
func writeFileAtomic(path string, src io.WriterTo) error {
	return renameio.WriteFrom(path, 0o644, func(w io.Writer) error {
		_, err := src.WriteTo(w)
		return err
	})
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0 // only reported, never relied on
	}
	return st.Size()
}
