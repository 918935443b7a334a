//go:build mage

package main

import (
	"context"
	"errors"

	"github.com/cuzk-dev/cuzk/toolchain"
)

func containerKernels(ctx context.Context, pins toolchain.Pins) error {
	return errors.New("container builds: wiring pending")
}
