package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// ErrNoExecutor reports that no executor answers: no Dagger engine, podman
// or docker.
var ErrNoExecutor = errors.New("ci: no container executor (no Dagger engine, podman or docker answers; or build natively with " + toolchain.EnvToolchain + "=native on Debian 12)")

// Kernels builds the kernel fatbins inside the pinned build image, exports
// cuda/fatbin into Root and returns the report the kernels step wrote. See
// KernelsPlan.
func Kernels(ctx context.Context, opts Options) (KernelsReport, error) {
	out, err := execute(ctx, opts, KernelsPlan)
	if err != nil {
		return KernelsReport{}, err
	}
	defer out.remove()
	r, err := ReadKernelsReport(filepath.Join(out.dir, KernelsReportFile), out.began)
	if err != nil {
		return KernelsReport{}, fmt.Errorf("pipeline kernels (%s): %w", out.executor, err)
	}
	return r, nil
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
	out, err := execute(ctx, o, TestPlan)
	out.remove()
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
	out, err := execute(ctx, o, ReleasePlan)
	out.remove()
	if err != nil {
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

// outcome is what a pipeline run left on the host.
type outcome struct {
	// dir holds what the steps wrote into the plan's Out.
	dir string
	// began is when the host started the steps (a report finished before
	// then was served from the executor's cache).
	began    time.Time
	executor toolchain.Executor
}

// remove deletes the report directory.
func (o outcome) remove() {
	if o.dir != "" {
		os.RemoveAll(o.dir) // reports already read
	}
}

// execute builds a plan, takes o.Executor (else chooses one), makes sure
// the pinned build image exists (built from the lock, or cached), fills the
// host's module cache (the steps build offline from it, whichever executor
// runs them) and runs the plan in the image. The caller removes the
// outcome's directory.
func execute(ctx context.Context, opts Options, build func(Options) (Plan, error)) (outcome, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return outcome{}, err
	}
	p, err := build(o)
	if err != nil {
		return outcome{}, err
	}
	exe := o.Executor
	if exe == "" {
		if exe, err = o.chooseExecutor(ctx); err != nil {
			return outcome{}, fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
	}
	image := o.image
	if image == nil {
		image = func(ctx context.Context, o Options) (buildimage.Result, error) { return BuildImage(ctx, o, false) }
	}
	img, err := image(ctx, o)
	if err != nil {
		return outcome{}, fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	download := o.download
	if download == nil {
		download = downloadModules
	}
	if err := download(ctx, o.GoCommand, o.Root, o.Log); err != nil {
		return outcome{}, fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	out := outcome{executor: exe}
	if out.dir, err = os.MkdirTemp("", "cuzk-"+p.Name+"-out-"); err != nil {
		return outcome{}, fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	out.began = time.Now()
	fmt.Fprintf(o.Log, "pipeline %s: executor %s, image %s\n", p.Name, exe, img.Ref)
	o.Logger.Info("pipeline start", "pipeline", p.Name, "executor", exe, "image", img.Ref)
	if exe == toolchain.Dagger {
		err = o.runDagger(ctx, p, img, out.dir)
	} else {
		var rt cliRuntime
		if rt, err = newCLIRuntime(exe); err == nil {
			err = rt.run(ctx, p, img, out.dir, o.Log)
		}
	}
	if err != nil {
		out.remove()
		return outcome{}, err
	}
	o.Logger.Info("pipeline done", "pipeline", p.Name, "duration", time.Since(out.began))
	return out, nil
}

// downloadModules fills the host's module cache for every module of the
// tree at root (a no-op when it is full): the steps run with GOPROXY=off.
func downloadModules(ctx context.Context, goCmd, root string, log io.Writer) error {
	mods, err := moduleDirs(root)
	if err != nil {
		return err
	}
	for _, dir := range mods {
		dl := exec.CommandContext(ctx, goCmd, "mod", "download")
		dl.Dir, dl.Stdout, dl.Stderr = dir, log, log
		if err := dl.Run(); err != nil {
			return fmt.Errorf("go mod download in %s on the host (the build image's steps are offline): %w", dir, err)
		}
	}
	return nil
}

// chooseExecutor returns the first executor that answers, or
// CUZK_EXECUTOR's if it does.
func (o Options) chooseExecutor(ctx context.Context) (toolchain.Executor, error) {
	ready := o.ready
	if ready == nil {
		ready = func(ctx context.Context, e toolchain.Executor) bool {
			return toolchain.ExecutorReady(ctx, e, o.Environ)
		}
	}
	forced, err := toolchain.ParseExecutor(envValue(o.Environ, toolchain.EnvExecutor))
	if err != nil {
		return "", err
	}
	e, err := toolchain.ChooseExecutor(ctx, toolchain.Host{Ready: ready, Forced: forced})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoExecutor, err)
	}
	return e, nil
}

// runDagger runs p through a Dagger engine, the image imported from its OCI
// archive, the reports exported into out.
//
// An engine fault outside the steps (a host directory it could not take
// in, a snapshot it could not make: "failed to sync: … too many open files"
// once ended a release) is tried once more in a new session. The steps that
// ran the first time are served from the engine's cache, unchanged, so the
// second try costs what failed; exporting again writes the same files. A
// step's own failure (StepError) and a cancelled run are not tried again.
func (o Options) runDagger(ctx context.Context, p Plan, img buildimage.Result, out string) error {
	archive, err := buildimage.Archive(img)
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	first := o.runDaggerSession(ctx, p, archive, out)
	var step *StepError
	if first == nil || errors.As(first, &step) || ctx.Err() != nil {
		return first
	}
	fmt.Fprintf(o.Log, "pipeline %s: the engine failed outside the steps (%v); once more in a new session\n", p.Name, first)
	o.Logger.Warn("pipeline engine fault, once more", "pipeline", p.Name, "err", first)
	if err := o.runDaggerSession(ctx, p, archive, out); err != nil {
		return fmt.Errorf("%w (tried twice; the first session failed too: %v)", err, first)
	}
	return nil
}

// runDaggerSession is one try of runDagger, in a session of its own.
func (o Options) runDaggerSession(ctx context.Context, p Plan, archive, out string) error {
	connect := o.connect
	if connect == nil {
		connect = connectEngine
	}
	c, err := connect(ctx, o.Log)
	if err != nil {
		return fmt.Errorf("pipeline %s: connect to engine: %w", p.Name, err)
	}
	defer c.Close() // the session's results are already exported
	return run(ctx, c, p, archive, out)
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
