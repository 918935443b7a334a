//go:build mage

package main

import (
	"context"
	"os"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// containerKernels builds the kernels inside the pinned build image.
func containerKernels(ctx context.Context, _ toolchain.Pins) error {
	opts, err := ci.OptionsFromEnv(ctx, ".", os.Environ())
	if err != nil {
		return err
	}
	return ci.Kernels(ctx, opts)
}
