//go:build mage

// Targets for cuzk: kernels built by content hash, the daemon, tests and benchmarks.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/ci/release"
)

// Default is what `go run mage.go` with no target runs.
var Default = Build

// Build compiles changed kernels (zero nvcc runs when nothing changed) and builds bin/cuzk-daemon, bin/cuzk and bin/cuzk-bench with them embedded.
func Build(ctx context.Context) error {
	start := time.Now()
	mg.CtxDeps(ctx, Kernels)
	// The mains a release carries (cuzk-daemon, cuzk, cuzk-bench): one list.
	args := append([]string{"build", "-o", "bin/"}, release.DefaultPackages...)
	// One go build for every main: the staleness check loads the shared graph once.
	if err := sh.RunV("go", args...); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	fmt.Printf("build: done in %s (bin/)\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// Clean removes project outputs (bin/, .gpu/, dist/, cuda/fatbin); the kernel cache survives.
func Clean() error {
	for _, d := range []string{"bin", ".gpu", "dist"} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	ents, err := os.ReadDir("cuda/fatbin")
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range ents {
		if e.Name() != "README.md" {
			if err := os.RemoveAll(filepath.Join("cuda/fatbin", e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
