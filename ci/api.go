package ci

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// Release builds the release bundle inside the pinned build image, exports
// dist/ into Root, and publishes the daemon image to opts.Address (or
// exports it as dist/<name>.oci.tar). It returns the published reference
// with its digest, or "" when exported. See ReleasePlan.
func Release(ctx context.Context, opts Options) (string, error) {
	return execute(ctx, opts, ReleasePlan)
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
	ref, err := run(ctx, c, p, goroot)
	if err != nil {
		return "", err
	}
	o.Logger.Info("pipeline done", "pipeline", p.Name, "duration", time.Since(start), "published", ref)
	return ref, nil
}
