//go:build mage

package main

import (
	"context"
	"errors"
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

// Explain says for every kernel where a build would take it from (hit local, hit remote, built) and, if built, exactly which inputs changed.
func Explain(ctx context.Context) error {
	pins, err := toolchain.LoadEnv()
	if err != nil {
		return err
	}
	e, err := newEngine(ctx, pins, toolchain.Native)
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

// containerChoice is returned when the missing kernels must be built inside
// the pinned image, by its executor.
type containerChoice struct{ choice toolchain.Choice }

func (c containerChoice) Error() string { return "no native toolchain: build inside the pinned image" }

// kernels brings cuda/fatbin up to date: from the local cache, the remote
// one, or nvcc, which is only looked for (and installed, if need be) when a
// kernel is in neither cache.
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
	if mode == toolchain.Container {
		host, err := toolchain.SystemHost(pins, os.Environ(), os.Stdout)
		if err != nil {
			return kbuild.Report{}, err
		}
		choice, err := toolchain.Ensure(ctx, pins, mode, host)
		if err != nil {
			return kbuild.Report{}, err
		}
		fmt.Printf("kernels: toolchain %s\n", choice)
		return kbuild.Report{}, ciKernels(ctx, choice.Executor)
	}
	e, err := newEngine(ctx, pins, mode)
	if err != nil {
		return kbuild.Report{}, err
	}
	rep, err := e.Build(ctx)
	var cc containerChoice
	if errors.As(err, &cc) {
		fmt.Printf("kernels: no pinned native nvcc; building the kernels the caches lack with toolchain %s\n", cc.choice)
		return kbuild.Report{}, ciKernels(ctx, cc.choice.Executor)
	}
	if err == nil {
		fmt.Printf("kernels: %d units, %d hits (%d remote), %d nvcc runs, %d uploaded, %d files written, %s\n",
			len(rep.Results), rep.Hits, rep.Fetched, rep.Compile, rep.Uploaded, rep.Written, time.Since(start).Round(time.Millisecond))
	}
	return rep, err
}

// newEngine returns an engine for this tree whose keys hold the pinned
// toolchain identity, with the remote cache the configuration names. nvcc
// is found (per mode, installing it on Debian if need be) on the first
// kernel no cache has. Inside the pinned image (CUZK_IMAGE set) the image's
// nvcc is used from the start and its identity keys the build.
func newEngine(ctx context.Context, pins toolchain.Pins, mode toolchain.Mode) (*kbuild.Engine, error) {
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
	remote, err := toolchain.OpenRemote(pins, os.Environ())
	if err != nil {
		return nil, err
	}
	if remote != nil {
		opts = append(opts, kbuild.WithRemote(remote))
	}
	host, err := toolchain.SystemHost(pins, os.Environ(), os.Stdout)
	if err != nil {
		return nil, err
	}
	tc := toolchain.Local{Identity: toolchain.PinnedIdentity(pins, "")}
	if os.Getenv(toolchain.EnvImage) != "" {
		choice, err := toolchain.Ensure(ctx, pins, toolchain.Native, host)
		if err != nil {
			return nil, err
		}
		tc = choice.Local
		fmt.Printf("kernels: toolchain %s in %s\n", choice, tc.Container)
	} else {
		opts = append(opts, kbuild.WithCompiler(func(ctx context.Context) (toolchain.Local, error) {
			choice, err := toolchain.Ensure(ctx, pins, mode, host)
			if err != nil {
				return toolchain.Local{}, err
			}
			if choice.Mode == toolchain.Container {
				return toolchain.Local{}, containerChoice{choice}
			}
			fmt.Printf("kernels: toolchain %s\n", choice)
			return choice.Local, nil
		}))
	}
	return kbuild.New(".", pins, tc, store, opts...)
}
