package ci

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// ErrNoEngine reports that no executor answers: no Dagger engine, podman
// or docker.
var ErrNoEngine = errors.New("ci: no container executor (no Dagger engine, podman or docker answers; or build natively with CUZK_TOOLCHAIN=native on Debian 12)")

// Kernels builds the kernel fatbins inside the pinned build image and
// exports cuda/fatbin into Root. See KernelsPlan.
func Kernels(ctx context.Context, opts Options) error {
	_, err := execute(ctx, opts, KernelsPlan)
	return err
}

// Test fetches and verifies the pinned .deb files on the host (the release
// tests lay them into an image; the container has no network), then runs
// the test suite inside the pinned build image. See TestPlan.
func Test(ctx context.Context, opts Options) error {
	o, err := opts.withDefaults()
	if err != nil {
		return err
	}
	if err := o.fetchBase(ctx); err != nil {
		return fmt.Errorf("pipeline test: %w", err)
	}
	_, err = execute(ctx, o, TestPlan)
	return err
}

// fetchBase puts the release's verified base .debs into o.DebCache.
func (o Options) fetchBase(ctx context.Context) error {
	fetch := o.fetchDebs
	if fetch == nil {
		fetch = func(ctx context.Context, dir string, pkgs []debian.Package) error {
			_, err := debian.Fetcher{Dir: dir, Logger: o.Logger}.Fetch(ctx, pkgs)
			return err
		}
	}
	return fetch(ctx, o.DebCache, release.BasePackages(o.Pins))
}

// Release fetches and verifies the pinned .deb files on the host, builds
// the release inside the pinned build image, exports dist/ into Root, and
// when opts.Address is set pushes dist/image there with go-containerregistry.
// It returns the pushed image by digest (repository@sha256:...), or "".
// See ReleasePlan.
func Release(ctx context.Context, opts Options) (string, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return "", err
	}
	if err := o.fetchBase(ctx); err != nil {
		return "", fmt.Errorf("pipeline release: %w", err)
	}
	if _, err := execute(ctx, o, ReleasePlan); err != nil {
		return "", err
	}
	if o.Address == "" {
		return "", nil
	}
	push := o.push
	if push == nil {
		push = func(ctx context.Context, layout, address string) (string, error) {
			d, err := oci.PushLayout(ctx, layout, address)
			return d.String(), err
		}
	}
	ref, err := push(ctx, filepath.Join(o.Root, "dist", release.ImageDir), o.Address)
	if err != nil {
		return "", fmt.Errorf("pipeline release: %w", err)
	}
	return ref, nil
}

// execute builds a plan, picks the executor, makes sure the pinned build
// image exists (built from the lock, or cached) and runs the plan in it.
func execute(ctx context.Context, opts Options, build func(Options) (Plan, error)) (string, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return "", err
	}
	p, err := build(o)
	if err != nil {
		return "", err
	}
	exe, err := o.chooseExecutor(ctx)
	if err != nil {
		return "", fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	image := o.image
	if image == nil {
		image = func(ctx context.Context, o Options) (buildimage.Result, error) { return BuildImage(ctx, o, false) }
	}
	img, err := image(ctx, o)
	if err != nil {
		return "", fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	start := time.Now()
	fmt.Fprintf(o.Log, "pipeline %s: executor %s, image %s\n", p.Name, exe, img.Ref)
	o.Logger.Info("pipeline start", "pipeline", p.Name, "executor", exe, "image", img.Ref)
	if exe == toolchain.Dagger {
		err = o.runDagger(ctx, p, img)
	} else {
		var rt cliRuntime
		if rt, err = newCLIRuntime(exe); err == nil {
			err = rt.run(ctx, p, img, o.Log)
		}
	}
	if err != nil {
		return "", err
	}
	o.Logger.Info("pipeline done", "pipeline", p.Name, "duration", time.Since(start))
	return "", nil
}

// chooseExecutor returns o.Executor, else the first that answers.
func (o Options) chooseExecutor(ctx context.Context) (toolchain.Executor, error) {
	ready := o.ready
	if ready == nil {
		ready = func(ctx context.Context, e toolchain.Executor) bool {
			return toolchain.ExecutorReady(ctx, e, o.Environ)
		}
	}
	forced := o.Executor
	if forced == "" {
		var err error
		if forced, err = toolchain.ParseExecutor(envValue(o.Environ, toolchain.EnvExecutor)); err != nil {
			return "", err
		}
	}
	e, err := toolchain.ChooseExecutor(ctx, toolchain.Host{Ready: ready, Forced: forced})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoEngine, err)
	}
	return e, nil
}

// runDagger runs p through a Dagger engine, the image imported from its OCI
// archive.
func (o Options) runDagger(ctx context.Context, p Plan, img buildimage.Result) error {
	archive, err := buildimage.Archive(img)
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	connect := o.connect
	if connect == nil {
		connect = connectEngine
	}
	c, err := connect(ctx, o.Log)
	if err != nil {
		return fmt.Errorf("pipeline %s: connect to engine: %w", p.Name, err)
	}
	defer c.Close() // the session's results are already exported
	return run(ctx, c, p, archive)
}

func envValue(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}
