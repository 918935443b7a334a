//go:build mage

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Ci targets run the same steps inside cuzk's pinned CUDA build image, through Dagger, podman or docker.
type Ci mg.Namespace

// Kernels builds the kernels inside the pinned build image (Dagger, else podman, else docker; CUZK_EXECUTOR picks) and exports cuda/fatbin.
func (Ci) Kernels(ctx context.Context) error {
	_, err := kernels(ctx, toolchain.Container)
	return err
}

// Test runs `go run mage.go test` inside the pinned build image (Dagger, else podman, else docker; CUZK_TEST_PACKAGES narrows it).
func (Ci) Test(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	opts.Log = os.Stdout
	return ci.Test(ctx, opts)
}

// Release builds the release inside the pinned build image (Dagger, podman or docker) and, when RELEASE_IMAGE names a repository, pushes the image by digest.
func (Ci) Release(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	ref, err := ci.Release(ctx, opts)
	if err == nil && ref != "" {
		fmt.Println("ci:release: pushed", ref)
	}
	return err
}

// Same builds the kernels and the release natively and in the build image, prints a table, and fails unless fatbins, ActionIDs and release bytes are identical.
func (Ci) Same(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	opts.Log = os.Stdout
	cold, err := os.MkdirTemp("", "cuzk-cold-kernels-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cold)
	rep, err := ci.Same(ctx, opts, cold)
	fmt.Printf("== native and container builds (%s)\n", rep.Executor)
	fmt.Print(ci.SameTable(rep.Kernels))
	fmt.Print(ci.SameTable(rep.Release))
	if path := os.Getenv(ci.EnvSameReport); path != "" {
		b, jerr := json.MarshalIndent(rep, "", "  ")
		if jerr == nil {
			jerr = renameio.WriteFile(path, append(b, '\n'), 0o644)
		}
		if jerr != nil {
			return fmt.Errorf("ci:same: %s: %w", ci.EnvSameReport, jerr)
		}
	}
	if err != nil {
		return err
	}
	if p := rep.Problems(); len(p) > 0 {
		return fmt.Errorf("ci:same: native and container builds differ:\n  %s", strings.Join(p, "\n  "))
	}
	fmt.Printf("ci:same: kernels (fatbins, ActionIDs in the manifest) and the release are byte-identical natively and in the image (%s)\n", rep.Executor)
	return nil
}
