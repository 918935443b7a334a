//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Release empties dist/ and builds the reproducible release into it: tar.gz with LICENSE*, OCI image on the pinned Debian base, SPDX 2.3 SBOM, in-toto provenance, SHA256SUMS.
func Release(ctx context.Context) error {
	mg.CtxDeps(ctx, Kernels)
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	start := time.Now()
	d, err := release.Run(ctx, release.RunOptions{Root: ".", OutDir: "dist", Pins: pins, Environ: os.Environ()})
	if err != nil {
		return err
	}
	fmt.Printf("release: %s (sha256 %s)\nrelease: image dist/%s, manifest %s\nrelease: %s, %s (%.1fs)\n", d.Bundle.Archive,
		d.Bundle.ArchiveSHA256, release.ImageDir, d.Image.Digest, d.SBOM, d.Provenance, time.Since(start).Seconds())
	return nil
}

// Dist targets check a release directory.
type Dist mg.Namespace

// Verify re-checks a release directory: bytes (SHA256SUMS, image blobs) and meaning (SBOM valid SPDX 2.3 and equal to the binaries' build info and kernel manifest, provenance commit fields consistent).
func (Dist) Verify(dir string) error {
	v, err := release.Verify(dir)
	if err != nil {
		return err
	}
	fmt.Printf("release:verify: %s ok: %s, image %s, commit %s, %d kernels; SBOM valid SPDX 2.3 and equal to the binaries' build info\n",
		dir, v.Name, v.ImageDigest, v.Commit, len(v.Manifest.Kernels))
	return nil
}

// Rebuild verifies a release directory, rebuilds it from the commit it names in a fresh clone, and compares every byte, naming the first file that differs.
func (Dist) Rebuild(ctx context.Context, dir string) error {
	if err := release.Rebuild(ctx, release.RebuildOptions{Dir: dir, Repo: "."}); err != nil {
		return err
	}
	fmt.Printf("release:rebuild: %s rebuilt byte for byte\n", dir)
	return nil
}

// Attach verifies a release directory and attaches SHA256SUMS, the archive, SBOM and provenance to the GitHub release RELEASE_VERSION (gh CLI).
func (Dist) Attach(ctx context.Context, dir string) error {
	assets, err := release.Assets(dir)
	if err != nil {
		return err
	}
	tag := os.Getenv(release.EnvVersion)
	if tag == "" {
		return fmt.Errorf("dist:attach: %s is not set", release.EnvVersion)
	}
	return sh.RunV("gh", append([]string{"release", "create", tag, "--verify-tag", "--title", tag}, assets...)...)
}

// Aliases give the dist targets their release: names.
var Aliases = map[string]any{"release:verify": Dist.Verify, "release:rebuild": Dist.Rebuild, "release:attach": Dist.Attach}

// Ci targets run the same steps inside cuzk's pinned CUDA build image, through Dagger, podman or docker.
type Ci mg.Namespace

// Kernels builds the kernels inside the pinned build image (Dagger, else podman, else docker; CUZK_EXECUTOR picks) and exports cuda/fatbin.
func (Ci) Kernels(ctx context.Context) error { return ciKernels(ctx, "") }

// ciKernels runs the kernels pipeline with executor e ("": the first that answers).
func ciKernels(ctx context.Context, e toolchain.Executor) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	opts.Executor = e
	return ci.Kernels(ctx, opts)
}

// Test runs `go run mage.go test` inside the pinned build image (Dagger, else podman, else docker; CUZK_TEST_PACKAGES narrows it).
func (Ci) Test(ctx context.Context) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
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
	fmt.Println("== native and container builds")
	fmt.Print(ci.SameTable(rep.Kernels))
	fmt.Print(ci.SameTable(rep.Release))
	if err != nil {
		return err
	}
	if p := rep.Problems(); len(p) > 0 {
		return fmt.Errorf("ci:same: native and container builds differ:\n  %s", strings.Join(p, "\n  "))
	}
	fmt.Println("ci:same: kernels (fatbins, ActionIDs in the manifest) and the release are byte-identical natively and in the image")
	return nil
}
