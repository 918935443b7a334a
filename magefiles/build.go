//go:build mage

// Targets for cuzk: kernels built by content hash, the daemon, tests and benchmarks.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/ci/release"
)

// Default is what `go run mage.go` with no target runs.
var Default = Build

// Build compiles changed kernels (zero nvcc runs when nothing changed) and builds bin/cuzk-daemon, bin/cuzk and bin/cuzk-bench with them embedded, stamped with the version and commit as a release is.
func Build(ctx context.Context) error {
	start := time.Now()
	mg.CtxDeps(ctx, Kernels)
	stamp, err := release.WorkStamp(ctx, ".", os.Environ())
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	ldflag, err := stamp.Ldflag()
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	fmt.Printf("build: go build %s (version %s, commit %s)\n", strings.Join(release.DefaultPackages, " "), stamp.Version, orUnknown(stamp.Commit))
	// The mains a release carries (cuzk-daemon, cuzk, cuzk-bench): one list.
	args := append([]string{"build", "-ldflags=" + ldflag, "-o", "bin/"}, release.DefaultPackages...)
	// One go build for every main: the staleness check loads the shared graph once.
	tk := during("build: go build")
	defer tk.Stop()
	if err := sh.RunV("go", args...); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	fmt.Printf("build: done in %s (bin/)\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// orUnknown is s, or "unknown (not a git checkout)" when empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown (not a git checkout)"
	}
	return s
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
