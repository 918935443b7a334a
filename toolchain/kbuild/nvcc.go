package kbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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
	name, args := e.norandomize.wrap(nvcc, args, e.prog.printf)
	cmd := exec.CommandContext(ctx, name, args...)
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

// noRandomize runs nvcc with address-space randomization off
// (`setarch <machine> -R`, personality ADDR_NO_RANDOMIZE, inherited by every
// stage nvcc starts). ptxas 11.8 lays out some tables of a large sm_90
// cubin (msm_g2's) in an order that follows heap addresses: with ASLR on,
// two compiles of the same input differed in 750 bytes of frame data now
// and then (same SASS), which a content-addressed cache must never see. With
// ASLR off the output was the same in every run and environment tried.
// Where the personality cannot be set (a container whose seccomp profile
// refuses it) nvcc runs as before and one warning says so.
type noRandomize struct {
	once  sync.Once
	argv0 string // "setarch", or "" when unavailable
	arch  string
}

// machine is `uname -m` for the Go architecture.
func machine() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

func (n *noRandomize) wrap(nvcc string, args []string, printf func(string, ...any)) (string, []string) {
	n.once.Do(func() {
		n.arch = machine()
		path, err := exec.LookPath("setarch")
		if err == nil {
			err = exec.Command(path, n.arch, "-R", "true").Run()
		}
		if err != nil {
			printf("warning: cannot turn address randomization off for nvcc (setarch %s -R: %v): ptxas may lay out large sm_90 kernels differently from run to run\n", n.arch, err)
			return
		}
		n.argv0 = path
	})
	if n.argv0 == "" {
		return nvcc, args
	}
	return n.argv0, append([]string{n.arch, "-R", nvcc}, args...)
}
