//go:build mage

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/magefile/mage/mg"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// Toolchain targets inspect and install the pinned CUDA toolchain.
type Toolchain mg.Namespace

// Verify prints the pins and the local toolchain, and fails with a diff when the local nvcc is not the pinned build.
func (Toolchain) Verify(ctx context.Context) error {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	fmt.Printf("pins:\n  go %s\n  cuda %s, nvcc build %s (nvcc %q, host compiler %q)\n  identity: %s\n  remote cache %q (upload %v)\n  debian %s=%s\n  archs %v ptx %v\n  flags %v defines %v\n  build image   %s\n  runtime image %s\n",
		pins.Go, pins.CUDA.Release, pins.CUDA.NvccBuild, pins.CUDA.Nvcc, pins.CUDA.HostCompiler,
		toolchain.PinnedIdentity(pins, ""), pins.Remote.URL, pins.Remote.Upload,
		pins.CUDA.DebianPackage, pins.CUDA.DebianVersion, pins.Archs, pins.PTX, pins.Flags, pins.Defines,
		pins.Images.Build, pins.Images.Runtime)
	local, err := toolchain.Detect(ctx, pins, os.Environ())
	if err != nil {
		return fmt.Errorf("local toolchain: %w (run `go run mage.go toolchain:install`)", err)
	}
	fmt.Printf("local:\n  nvcc %s\n  %s\n  identity %s\n", local.Nvcc, local.Identity, local.Hash()[:16])
	if diff := toolchain.Mismatch(pins, local); len(diff) > 0 {
		return errors.New("local toolchain is not the pinned one:\n  " + strings.Join(diff, "\n  "))
	}
	fmt.Println("ok: local nvcc is the pinned build")
	return nil
}

// Install installs the pinned native CUDA toolchain on Debian 12, printing each step (elsewhere it says to build in the image).
func (Toolchain) Install(ctx context.Context) error {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	return toolchain.Install(ctx, pins, os.Stdout)
}
