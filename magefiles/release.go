//go:build mage

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Release builds the reproducible release bundle (tar.gz + SHA256SUMS) and OCI image layout into dist/.
func Release(ctx context.Context) error {
	mg.CtxDeps(ctx, Kernels)
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	epoch, err := release.ParseEpoch(os.Environ())
	if err != nil {
		if epoch, err = release.EpochFromGit(ctx, "."); err != nil {
			return fmt.Errorf("release: no SOURCE_DATE_EPOCH and no git commit time: %w", err)
		}
	}
	b, err := release.Build(ctx, release.Options{Root: ".", OutDir: "dist", Version: os.Getenv(release.EnvVersion),
		Epoch: epoch, GoVersion: pins.Go, Extra: []release.Extra{release.KernelManifestExtra(".")}})
	if err != nil {
		return err
	}
	if err := os.RemoveAll("dist/image"); err != nil {
		return err
	}
	d, err := b.WriteImage("dist/image", pins.Images.Runtime)
	if err != nil {
		return err
	}
	fmt.Printf("release: %s\nrelease: OCI layout dist/image, manifest %s\n", b.Archive, d.Digest)
	return nil
}

// Ci targets run the same steps inside the pinned CUDA build image through a Dagger engine.
type Ci mg.Namespace

// Kernels builds the kernels inside the pinned build image and exports cuda/fatbin.
func (Ci) Kernels(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	return ci.Kernels(ctx, opts)
}

// Test runs `go run mage.go test` inside the pinned build image.
func (Ci) Test(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	return ci.Test(ctx, opts)
}

// Release builds the release bundle and daemon OCI image inside the pinned build image (RELEASE_IMAGE publishes it).
func (Ci) Release(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	ref, err := ci.Release(ctx, opts)
	if err == nil && ref != "" {
		fmt.Println("ci:release: published", ref)
	}
	return err
}
