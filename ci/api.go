package ci

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// ErrNoEngine reports that no Dagger engine is reachable: no `dagger run`
// session and no container runtime answering.
var ErrNoEngine = errors.New("ci: no Dagger engine reachable (start docker or podman, or run under `dagger run`; or build natively with CUZK_TOOLCHAIN=native)")

// Kernels builds the kernel fatbins inside the pinned build image and
// exports cuda/fatbin into Root. See KernelsPlan.
func Kernels(ctx context.Context, opts Options) error {
	_, err := execute(ctx, opts, KernelsPlan)
	return err
}

// Test runs the test suite inside the pinned build image. See TestPlan.
func Test(ctx context.Context, opts Options) error {
	_, err := execute(ctx, opts, TestPlan)
	return err
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
	fetch := o.fetchDebs
	if fetch == nil {
		fetch = func(ctx context.Context, dir string, pkgs []debian.Package) error {
			_, err := debian.Fetcher{Dir: dir, Logger: o.Logger}.Fetch(ctx, pkgs)
			return err
		}
	}
	if err := fetch(ctx, o.DebCache, release.BasePackages(o.Pins)); err != nil {
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

// execute builds a plan, checks for an engine, resolves the pinned Go on
// the host and runs the plan through Dagger.
func execute(ctx context.Context, opts Options, build func(Options) (Plan, error)) (string, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return "", err
	}
	p, err := build(o)
	if err != nil {
		return "", err
	}
	ready := o.engineReady
	if ready == nil {
		ready = func(ctx context.Context) bool { return toolchain.EngineReachable(ctx, o.Environ) }
	}
	if !ready(ctx) {
		return "", fmt.Errorf("pipeline %s: %w", p.Name, ErrNoEngine)
	}
	resolve := o.resolveGo
	if resolve == nil {
		resolve = func(ctx context.Context, g GoToolchain) (string, error) { return ResolveGo(ctx, o.GoCommand, g) }
	}
	goroot, err := resolve(ctx, p.Go)
	if err != nil {
		return "", fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	connect := o.connect
	if connect == nil {
		connect = connectEngine
	}
	c, err := connect(ctx, o.Log)
	if err != nil {
		return "", fmt.Errorf("pipeline %s: connect to engine: %w", p.Name, err)
	}
	defer c.Close() // the session's results are already exported
	start := time.Now()
	o.Logger.Info("pipeline start", "pipeline", p.Name, "image", p.Image)
	if err := run(ctx, c, p, goroot); err != nil {
		return "", err
	}
	o.Logger.Info("pipeline done", "pipeline", p.Name, "duration", time.Since(start))
	return "", nil
}
