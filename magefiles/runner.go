//go:build mage

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/ci"
)

// Runner targets are what CI runners with special hardware run.
type Runner mg.Namespace

// Gpu runs the GPU tests here (log in .gpu/gpu.log) and fails if any skipped for lack of a device: the GPU runner's job.
func (Runner) Gpu(ctx context.Context) error {
	mg.CtxDeps(ctx, Kernels)
	if err := os.MkdirAll(".gpu", 0o755); err != nil {
		return err
	}
	var log bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-v", "-count=1", "-timeout", "30m"}, ci.GPUTestPackages...)...)
	cmd.Stdout = io.MultiWriter(os.Stdout, &log)
	cmd.Stderr = cmd.Stdout
	runErr := cmd.Run()
	if err := os.WriteFile(filepath.Join(".gpu", "gpu.log"), log.Bytes(), 0o644); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return ci.CheckGPULog(log.Bytes())
}
