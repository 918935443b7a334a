//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// Kernels compiles every CUDA kernel whose inputs changed and materializes cuda/fatbin.
func Kernels(ctx context.Context) error {
	_, err := kernels(ctx, "")
	return err
}

// Explain says for every kernel where a build would take it from (hit local, hit remote, built) and, if built, exactly which inputs changed.
func Explain(ctx context.Context) error {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	e, err := newKernelEngine(ctx, pins, toolchain.Native)
	if err != nil {
		return err
	}
	xs, err := e.Explain(ctx)
	if err != nil {
		return err
	}
	for _, x := range xs {
		state := string(x.Source)
		switch {
		case x.Source == kbuild.Built:
			state += " (stale: " + join(x.Why) + ")"
		case x.Source == kbuild.HitRemote:
			state += " (not in the local cache yet)"
		case !x.Materialized:
			state += " (cuda/fatbin not materialized yet)"
		}
		fmt.Printf("%-24s %s  %s\n", x.Unit.Name, x.Unit.ID.Short(), state)
	}
	return nil
}

// kernels brings cuda/fatbin up to date through the one door
// (ci.ChooseKernelBuild), which decides what builds and says so; mode ""
// is CUZK_TOOLCHAIN's.
func kernels(ctx context.Context, mode toolchain.Mode) (ci.KernelsReport, error) {
	start := time.Now()
	environ := os.Environ()
	if mode != "" {
		environ = append(environ, toolchain.EnvToolchain+"="+string(mode))
	}
	opts, err := ci.OptionsFromEnv(ctx, ".", environ)
	if err != nil {
		return ci.KernelsReport{}, err
	}
	opts.Log = os.Stdout
	b, err := ci.ChooseKernelBuild(ctx, opts, os.Stdout)
	if err != nil {
		return ci.KernelsReport{}, err
	}
	fmt.Printf("kernels: toolchain %s\n", b)
	r, err := b.Build(ctx)
	if err != nil {
		return ci.KernelsReport{}, err
	}
	step := ""
	if r.Cached {
		step = " (the executor served the step from its cache)"
	}
	fmt.Printf("kernels: %d units, %d hits (%d remote), %d nvcc runs, %d uploaded, %d files written, %s%s\n",
		r.Units, r.Hits, r.Remote, r.Nvcc, r.Uploaded, r.Written, time.Since(start).Round(time.Millisecond), step)
	return r, nil
}

// newKernelEngine returns the native kernel build engine for this tree (keys from the pins;
// nvcc, which must be the pinned build, found on the first kernel no cache
// has), for the targets that look at kernels without building them.
func newKernelEngine(ctx context.Context, pins toolchain.Pins, mode toolchain.Mode) (*kbuild.Engine, error) {
	host, err := toolchain.SystemHost(pins, os.Environ(), os.Stdout)
	if err != nil {
		return nil, err
	}
	find := func(ctx context.Context) (toolchain.Local, error) {
		c, err := toolchain.Ensure(ctx, pins, mode, host)
		return c.Local, err
	}
	return ci.NativeKernelEngine(ci.Options{Root: ".", Pins: pins}, toolchain.Local{Identity: toolchain.PinnedIdentity(pins, "")}, find, os.Stdout)
}
