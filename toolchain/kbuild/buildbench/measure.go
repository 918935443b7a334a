package buildbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// Measure benchmarks the repository at repo as committed: it snapshots HEAD
// into a temporary directory, runs the sequence on that kernel tree, then,
// if mageRuns > 0, times `go run mage.go build` in the snapshot with nothing
// to do (after one untimed warm build, whose kernels the sequence's cache
// already holds). The temporary directory is removed afterwards.
func Measure(ctx context.Context, repo string, pins toolchain.Pins, mageRuns int, opts ...Option) (Result, error) {
	work, err := os.MkdirTemp("", "cuzk-buildbench-")
	if err != nil {
		return Result{}, fmt.Errorf("buildbench: %w", err)
	}
	defer os.RemoveAll(work) // best effort: a leftover temp dir harms nothing
	snap := filepath.Join(work, "repo")
	if err := Snapshot(ctx, repo, snap); err != nil {
		return Result{}, fmt.Errorf("buildbench: %w", err)
	}
	res, err := Run(ctx, snap, filepath.Join(work, "bench"), pins, opts...)
	if err != nil || mageRuns == 0 {
		return res, err
	}
	// CUZK_ARCHS and CUZK_PTX are the pin overrides for archs and ptx
	// (toolchain.Load); the cache is the one the sequence filled.
	env := []string{"CUZK_ARCHS=" + strings.Join(res.Archs, ","), "CUZK_PTX=", toolchain.EnvCache + "=" + res.CacheDir}
	t, err := TimeCommand(ctx, "go run mage.go build, no-op", snap, env,
		[]string{"go", "run", "mage.go", "build"}, 1, mageRuns, MageNoOpTarget)
	if err != nil {
		return res, fmt.Errorf("buildbench: %w", err)
	}
	res.MageNoOp = &t
	return res, nil
}
