//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// Kernels compiles every CUDA kernel whose inputs changed and materializes cuda/fatbin.
func Kernels(ctx context.Context) error {
	_, err := kernels(ctx)
	return err
}

// Explain says for every kernel whether it is fresh and, if not, exactly which inputs changed.
func Explain(ctx context.Context) error {
	e, err := engine(ctx, toolchain.Native)
	if err != nil {
		return err
	}
	xs, err := e.Explain(ctx)
	if err != nil {
		return err
	}
	for _, x := range xs {
		state := "fresh"
		if !x.Fresh {
			state = "STALE: " + join(x.Why)
		} else if !x.Materialized {
			state = "fresh in cache; cuda/fatbin not materialized yet"
		}
		fmt.Printf("%-24s %s  %s\n", x.Unit.Name, x.Unit.ID.Short(), state)
	}
	return nil
}

// kernels ensures a toolchain and brings cuda/fatbin up to date.
func kernels(ctx context.Context) (kbuild.Report, error) {
	start := time.Now()
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return kbuild.Report{}, err
	}
	mode, err := toolchain.ParseMode(os.Getenv(toolchain.EnvToolchain))
	if err != nil {
		return kbuild.Report{}, err
	}
	choice, err := toolchain.Ensure(ctx, pins, mode, toolchain.SystemHost(pins, os.Environ(), os.Stdout))
	if err != nil {
		return kbuild.Report{}, err
	}
	if choice.Mode == toolchain.Container {
		return kbuild.Report{}, Ci{}.Kernels(ctx)
	}
	e, err := newEngine(pins, choice.Local)
	if err != nil {
		return kbuild.Report{}, err
	}
	rep, err := e.Build(ctx)
	if err == nil {
		fmt.Printf("kernels: %d units, %d hits, %d nvcc runs, %d files written, %s\n",
			len(rep.Results), rep.Hits, rep.Compile, rep.Written, time.Since(start).Round(time.Millisecond))
	}
	return rep, err
}

// engine returns an engine for this tree on the native toolchain.
func engine(ctx context.Context, mode toolchain.Mode) (*kbuild.Engine, error) {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return nil, err
	}
	choice, err := toolchain.Ensure(ctx, pins, mode, toolchain.SystemHost(pins, os.Environ(), os.Stdout))
	if err != nil {
		return nil, err
	}
	return newEngine(pins, choice.Local)
}

func newEngine(pins toolchain.Pins, tc toolchain.Local) (*kbuild.Engine, error) {
	dir, err := cas.DefaultDir()
	if err != nil {
		return nil, err
	}
	store, err := cas.Open(dir)
	if err != nil {
		return nil, err
	}
	opts := []kbuild.Option{kbuild.WithProgress(os.Stdout), kbuild.WithVerify(os.Getenv(toolchain.EnvVerify) == "1")}
	if os.Getenv(toolchain.EnvDebugHash) == "1" {
		opts = append(opts, kbuild.WithDebugHash(os.Stderr))
	}
	return kbuild.New(".", pins, tc, store, opts...)
}
