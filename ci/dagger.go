package ci

import (
	"context"
	"fmt"
	"io"
	"path"

	"dagger.io/dagger"
)

// connectEngine opens a Dagger session; progress goes to log.
func connectEngine(ctx context.Context, log io.Writer) (*dagger.Client, error) {
	return dagger.Connect(ctx, dagger.WithLogOutput(log))
}

// container translates the build part of p into Dagger calls: the pinned
// image imported from its OCI archive on the host (cuzk builds it; no
// registry holds it), the source mount, caches, environment, then the steps.
// Nothing runs until a result is requested.
func container(c *dagger.Client, p Plan, archive string) *dagger.Container {
	ctr := c.Container(dagger.ContainerOpts{Platform: dagger.Platform(p.Platform)}).Import(c.Host().File(archive))
	ctr = ctr.WithMountedDirectory(p.Workdir, c.Host().Directory(p.Source.Host,
		dagger.HostDirectoryOpts{Exclude: p.Source.Exclude}))
	for _, m := range p.Mounts {
		ctr = ctr.WithMountedDirectory(m.Path, c.Host().Directory(m.Host))
	}
	for _, cv := range p.Caches {
		ctr = ctr.WithMountedCache(cv.Path, c.CacheVolume(cv.Key))
	}
	for _, e := range p.Env {
		ctr = ctr.WithEnvVariable(e.Name, e.Value)
	}
	ctr = ctr.WithWorkdir(p.Workdir)
	for _, s := range p.Steps {
		ctr = ctr.WithExec(s.Args, dagger.ContainerWithExecOpts{InsecureRootCapabilities: p.NoASLR})
	}
	return ctr
}

// run executes p on c: the steps, then the exports.
func run(ctx context.Context, c *dagger.Client, p Plan, archive string) error {
	built, err := container(c, p, archive).Sync(ctx)
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
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
