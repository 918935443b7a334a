package kbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NvccError is a failed compiler run: its exit code and what it printed.
type NvccError struct {
	Kernel   string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *NvccError) Error() string {
	return fmt.Sprintf("nvcc %s: exit %d: %v\n%s", e.Kernel, e.ExitCode, e.Err, strings.TrimRight(e.Stderr, "\n"))
}

func (e *NvccError) Unwrap() error { return e.Err }

// compile runs nvcc for u in the root (so every path is relative) into a
// private temporary directory and returns the fatbin bytes.
func (e *Engine) compile(ctx context.Context, nvcc string, u Unit) ([]byte, error) {
	tmp, err := os.MkdirTemp(filepath.Join(e.store.Dir(), "tmp"), "nvcc-")
	if err != nil {
		return nil, fmt.Errorf("kbuild: kernel %s: %w", u.Name, err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, filepath.Base(u.Name)+".fatbin")
	args := make([]string, len(u.Args))
	for i, a := range u.Args {
		if a == OutPlaceholder {
			a = out
		}
		args[i] = a
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, nvcc, args...)
	cmd.Dir = e.root
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return nil, &NvccError{Kernel: u.Name, ExitCode: code, Stderr: stderr.String(), Err: err}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("kbuild: kernel %s: read nvcc output: %w", u.Name, err)
	}
	return b, nil
}
