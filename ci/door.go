package ci

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	envmap "github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// KernelBuild is how this machine builds the kernels, decided once by
// ChooseKernelBuild: natively (the pinned nvcc, or the caches alone) or in
// the build image by one executor.
type KernelBuild struct {
	// Choice is what was decided; its String says it in words.
	Choice  toolchain.Choice
	opts    Options
	kernels *kbuild.Engine // native choices: the kernel build engine
}

// String says what will build, for the line a build prints.
func (b KernelBuild) String() string { return b.Choice.String() }

// ChooseKernelBuild is the one door of a kernel build. From the pins and
// the environment in o (CUZK_TOOLCHAIN, CUZK_EXECUTOR, CUZK_IMAGE,
// CUZK_VERIFY, the remote cache's settings) it decides, once, what builds:
//   - inside cuzk's build image (CUZK_IMAGE set): the image's nvcc;
//   - otherwise toolchain.Ensure's order: the pinned native nvcc; the
//     caches alone, when every kernel is in the local or remote cache (not
//     with CUZK_VERIFY=1, which recompiles hits); an executor running the
//     kernels pipeline in the image; on Debian 12, the pinned nvcc
//     installed.
//
// progress receives the build's progress and the install's output.
func ChooseKernelBuild(ctx context.Context, o Options, progress io.Writer) (KernelBuild, error) {
	o, err := o.withDefaults()
	if err != nil {
		return KernelBuild{}, err
	}
	env := envmap.Map(o.Environ)
	mode, err := toolchain.ParseMode(env[toolchain.EnvToolchain])
	if err != nil {
		return KernelBuild{}, err
	}
	host, err := toolchain.SystemHost(o.Pins, o.Environ, progress)
	if err != nil {
		return KernelBuild{}, err
	}
	b := KernelBuild{opts: o}
	if env[toolchain.EnvImage] != "" {
		// The image's own nvcc from the start; its identity keys the build.
		if b.Choice, err = toolchain.Ensure(ctx, o.Pins, toolchain.Native, host); err != nil {
			return KernelBuild{}, err
		}
		b.kernels, err = NativeKernelEngine(o, b.Choice.Local, nil, progress)
		return b, err
	}
	// Keys come from the pins; nvcc is looked for only when a unit misses
	// every cache, and must then be the pinned build.
	find := func(ctx context.Context) (toolchain.Local, error) {
		c, err := toolchain.Ensure(ctx, o.Pins, toolchain.Native, host)
		if err != nil {
			return toolchain.Local{}, err
		}
		if c.Cached {
			return toolchain.Local{}, fmt.Errorf("kernels: a kernel missed every cache after all and no pinned nvcc is here (run `go run mage.go toolchain:install`)")
		}
		return c.Local, nil
	}
	if b.kernels, err = NativeKernelEngine(o, toolchain.Local{Identity: toolchain.PinnedIdentity(o.Pins, "")}, find, progress); err != nil {
		return KernelBuild{}, err
	}
	if env[EnvVerify] != "1" {
		host.Cached = func(ctx context.Context) bool { return allCached(ctx, b.kernels) }
	}
	if b.Choice, err = toolchain.Ensure(ctx, o.Pins, mode, host); err != nil {
		return KernelBuild{}, err
	}
	if b.Choice.Mode == toolchain.Container {
		b.kernels = nil
		b.opts.Executor = b.Choice.Executor
	}
	return b, nil
}

// allCached reports whether a build would take every unit from a cache.
func allCached(ctx context.Context, e *kbuild.Engine) bool {
	xs, err := e.Explain(ctx)
	if err != nil || len(xs) == 0 {
		return false
	}
	for _, x := range xs {
		if !x.Fresh {
			return false
		}
	}
	return true
}

// Build builds the kernels as decided and returns the build's report:
// natively, from the engine's result; in the image, the report the
// kernels step wrote there. When the environment names CUZK_KERNELS_REPORT
// the report is also written to that file.
func (b KernelBuild) Build(ctx context.Context) (KernelsReport, error) {
	var r KernelsReport
	if b.kernels == nil {
		var err error
		if r, err = Kernels(ctx, b.opts); err != nil {
			return KernelsReport{}, err
		}
	} else {
		start := time.Now()
		rep, err := b.kernels.Build(ctx)
		if err != nil {
			return KernelsReport{}, err
		}
		files, err := TreeHashes(filepath.Join(b.opts.Root, filepath.FromSlash(kbuild.DefaultLayout.Out)))
		if err != nil {
			return KernelsReport{}, err
		}
		r = NewKernelsReport(rep, b.Choice.String(), files, start, time.Now())
	}
	if path := envmap.Map(b.opts.Environ)[EnvKernelsReport]; path != "" {
		if err := r.Write(path); err != nil {
			return KernelsReport{}, err
		}
	}
	return r, nil
}

// NativeKernelEngine returns a kernel build engine (kbuild.Engine) for the tree at o.Root over
// the kernel cache o.HostCaches.Kernels and the remote cache the pins
// name, whose keys hold tc's identity; it compiles with tc's nvcc, or with
// what find returns on the first unit no cache has (find nil: tc must name
// an nvcc). CUZK_VERIFY and CUZK_DEBUGHASH in o.Environ apply.
func NativeKernelEngine(o Options, tc toolchain.Local, find func(context.Context) (toolchain.Local, error), progress io.Writer) (*kbuild.Engine, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	env := envmap.Map(o.Environ)
	store, err := cas.Open(o.HostCaches.Kernels)
	if err != nil {
		return nil, err
	}
	opts := []kbuild.Option{kbuild.WithProgress(progress), kbuild.WithVerify(env[EnvVerify] == "1")}
	if env[EnvDebugHash] == "1" {
		opts = append(opts, kbuild.WithDebugHash(progress))
	}
	remote, err := toolchain.OpenRemote(o.Pins, o.Environ)
	if err != nil {
		return nil, err
	}
	if remote != nil {
		opts = append(opts, kbuild.WithRemote(remote))
	}
	if find != nil {
		opts = append(opts, kbuild.WithCompiler(find))
	}
	return kbuild.New(o.Root, o.Pins, tc, store, opts...)
}
