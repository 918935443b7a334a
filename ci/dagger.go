package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"dagger.io/dagger"
)

// connectEngine opens a Dagger session; progress goes to log.
func connectEngine(ctx context.Context, log io.Writer) (*dagger.Client, error) {
	return dagger.Connect(ctx, dagger.WithLogOutput(log))
}

// daggerBuild is a plan translated into Dagger calls: the container after
// the last step, and the host directories its Shared caches came from.
type daggerBuild struct {
	ctr    *dagger.Container
	shared map[string]*dagger.Directory // by cache path: the host directory as imported
}

// hostDirs are a plan's host directories as Dagger imports them: the
// source, the further mounts (in p.Mounts' order) and the caches that are
// host content (by cache path; a Scratch cache is the engine's own).
type hostDirs struct {
	source *dagger.Directory
	mounts []*dagger.Directory
	caches map[string]*dagger.Directory
}

// hostImports names p's host directories to c; nothing is read yet. A
// ReadOnly cache leaves out what no step reads (Cache.Unread).
func hostImports(c *dagger.Client, p Plan) hostDirs {
	h := hostDirs{
		source: c.Host().Directory(p.Source.Host, dagger.HostDirectoryOpts{Exclude: p.Source.Exclude}),
		caches: map[string]*dagger.Directory{},
	}
	for _, m := range p.Mounts {
		h.mounts = append(h.mounts, c.Host().Directory(m.Host))
	}
	for _, cv := range p.Caches {
		if cv.Use != Scratch {
			h.caches[cv.Path] = c.Host().Directory(cv.Host, dagger.HostDirectoryOpts{Exclude: cv.Unread})
		}
	}
	return h
}

// load has the engine take in each host directory in turn, before any step
// needs them, so that a directory it cannot take in is named in the error
// (left to the steps, the engine takes them all in at once, and its error
// names a file inside its own snapshot). Each directory is then the one
// taken in (by its id), so the steps do not copy it again.
func (h *hostDirs) load(ctx context.Context, p Plan) error {
	take := func(what string, d **dagger.Directory) error {
		got, err := (*d).Sync(ctx)
		if err != nil {
			return fmt.Errorf("pipeline %s: take in %s: %w", p.Name, what, err)
		}
		*d = got
		return nil
	}
	if err := take("the source "+p.Source.Host, &h.source); err != nil {
		return err
	}
	for i, m := range p.Mounts {
		if err := take(m.Host, &h.mounts[i]); err != nil {
			return err
		}
	}
	for _, cv := range p.Caches {
		d, ok := h.caches[cv.Path]
		if !ok {
			continue
		}
		if err := take("cache "+cv.Key+" from "+cv.Host, &d); err != nil {
			return err
		}
		h.caches[cv.Path] = d
	}
	return nil
}

// container translates the build part of p into Dagger calls: the pinned
// image imported from its OCI archive on the host (cuzk builds it; no
// registry holds it), the source, the caches as their Use says, the report
// directory, the environment, then the steps. Shared and ReadOnly caches are
// imported host directories (h), so their content is an input of every step
// and a step Dagger serves from its cache had the same caches. Nothing runs
// until a result is requested.
func container(c *dagger.Client, p Plan, archive string, h hostDirs) daggerBuild {
	b := daggerBuild{shared: map[string]*dagger.Directory{}}
	ctr := c.Container(dagger.ContainerOpts{Platform: dagger.Platform(p.Platform)}).Import(c.Host().File(archive))
	ctr = ctr.WithMountedDirectory(p.Workdir, h.source)
	for i, m := range p.Mounts {
		ctr = ctr.WithMountedDirectory(m.Path, h.mounts[i])
	}
	for _, cv := range p.Caches {
		if cv.Use == Scratch {
			// The engine's own volume: a host directory as its seed would
			// make the steps' keys change with a cache that never changes a
			// result.
			ctr = ctr.WithMountedCache(cv.Path, c.CacheVolume(cv.Key))
			continue
		}
		dir := h.caches[cv.Path]
		if cv.Use == Shared {
			b.shared[cv.Path] = dir
		}
		ctr = ctr.WithMountedDirectory(cv.Path, dir)
	}
	if p.Out != "" {
		ctr = ctr.WithMountedDirectory(p.Out, c.Directory())
	}
	for _, e := range p.Env {
		ctr = ctr.WithEnvVariable(e.Name, e.Value)
	}
	ctr = ctr.WithWorkdir(p.Workdir)
	for _, s := range p.Steps {
		ctr = ctr.WithExec(s.Args, dagger.ContainerWithExecOpts{InsecureRootCapabilities: p.NoASLR})
	}
	b.ctr = ctr
	return b
}

// run executes p on c: the steps, then what comes back to the host: the
// report directory into out (when p has one), what the steps added to each
// Shared cache, and the exports.
func run(ctx context.Context, c *dagger.Client, p Plan, archive, out string) error {
	for _, cv := range p.Caches {
		// A cache the host never had starts empty, as podman's bind does.
		if err := os.MkdirAll(cv.Host, 0o755); err != nil {
			return fmt.Errorf("pipeline %s: cache %s: %w", p.Name, cv.Key, err)
		}
	}
	h := hostImports(c, p)
	if err := h.load(ctx, p); err != nil {
		return err
	}
	b := container(c, p, archive, h)
	built, err := b.ctr.Sync(ctx)
	if err != nil {
		var ee *dagger.ExecError
		if errors.As(err, &ee) {
			return &StepError{Pipeline: p.Name, Step: stepByArgs(p.Steps, ee.Cmd), Exit: ee.ExitCode, Stderr: Tail(ee.Stderr), Err: err}
		}
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	if p.Out != "" {
		if _, err := built.Directory(p.Out).Export(ctx, out); err != nil {
			return fmt.Errorf("pipeline %s: export the reports to %s: %w", p.Name, out, err)
		}
	}
	for _, cv := range p.Caches {
		if cv.Use != Shared {
			continue
		}
		// Only what the steps added or changed travels back; the host's
		// other entries stay as they are (a cache never loses entries to a
		// build).
		added := b.shared[cv.Path].Diff(built.Directory(cv.Path)) // what the second holds beyond the first
		if _, err := added.Export(ctx, cv.Host); err != nil {
			return fmt.Errorf("pipeline %s: export cache %s to %s: %w", p.Name, cv.Key, cv.Host, err)
		}
	}
	for _, x := range p.Exports {
		src := x.Path
		if !path.IsAbs(src) {
			src = path.Join(p.Workdir, src)
		}
		if x.Dir {
			_, err = built.Directory(src).Export(ctx, x.Host, dagger.DirectoryExportOpts{Wipe: x.Wipe})
		} else {
			_, err = built.File(src).Export(ctx, x.Host)
		}
		if err != nil {
			return fmt.Errorf("pipeline %s: export %s to %s: %w", p.Name, src, x.Host, err)
		}
	}
	return nil
}
