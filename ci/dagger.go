package ci

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"

	"dagger.io/dagger"
)

// connectEngine opens a Dagger session; progress goes to log.
func connectEngine(ctx context.Context, log io.Writer) (*dagger.Client, error) {
	return dagger.Connect(ctx, dagger.WithLogOutput(log))
}

// container translates the build part of p into Dagger calls: the pinned
// image, the Go root and source mounts, caches, environment, then the steps.
// Nothing runs until a result is requested.
func container(c *dagger.Client, p Plan, goroot string) *dagger.Container {
	ctr := c.Container(dagger.ContainerOpts{Platform: dagger.Platform(p.Platform)}).From(p.Image)
	ctr = ctr.WithMountedDirectory(GoRoot, c.Host().Directory(goroot))
	ctr = ctr.WithMountedDirectory(p.Workdir, c.Host().Directory(p.Source.Host,
		dagger.HostDirectoryOpts{Exclude: p.Source.Exclude}))
	for _, cv := range p.Caches {
		ctr = ctr.WithMountedCache(cv.Path, c.CacheVolume(cv.Key))
	}
	for _, e := range p.Env {
		ctr = ctr.WithEnvVariable(e.Name, e.Value)
	}
	ctr = ctr.WithWorkdir(p.Workdir)
	for _, s := range p.Steps {
		ctr = ctr.WithExec(s.Args)
	}
	return ctr
}

// image translates an ImagePlan: files from the build container laid onto
// the runtime base, with the payload's environment, labels, annotations
// and entrypoint.
func image(c *dagger.Client, im *ImagePlan, platform string, built *dagger.Container) *dagger.Container {
	img := c.Container(dagger.ContainerOpts{Platform: dagger.Platform(platform)}).From(im.Base)
	for _, f := range im.Files {
		img = img.WithFile(f.To, built.File(f.From), dagger.ContainerWithFileOpts{Permissions: f.Mode})
	}
	for _, e := range im.Env {
		img = img.WithEnvVariable(e.Name, e.Value)
	}
	for _, k := range sortedKeys(im.Labels) {
		img = img.WithLabel(k, im.Labels[k])
	}
	for _, k := range sortedKeys(im.Annotations) {
		img = img.WithAnnotation(k, im.Annotations[k])
	}
	return img.WithEntrypoint(im.Entrypoint)
}

// run executes p on c: the steps, the exports, then the image.
func run(ctx context.Context, c *dagger.Client, p Plan, goroot string) (published string, err error) {
	built, err := container(c, p, goroot).Sync(ctx)
	if err != nil {
		return "", fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	for _, x := range p.Exports {
		src := x.Path
		if !path.IsAbs(src) {
			src = path.Join(p.Workdir, src)
		}
		if x.Dir {
			_, err = built.Directory(src).Export(ctx, x.Host)
		} else {
			_, err = built.File(src).Export(ctx, x.Host)
		}
		if err != nil {
			return "", fmt.Errorf("pipeline %s: export %s to %s: %w", p.Name, src, x.Host, err)
		}
	}
	if p.Publish == nil {
		return "", nil
	}
	img := image(c, p.Publish, p.Platform, built)
	if p.Publish.Tarball != "" {
		if _, err := img.Export(ctx, p.Publish.Tarball); err != nil {
			return "", fmt.Errorf("pipeline %s: export image to %s: %w", p.Name, p.Publish.Tarball, err)
		}
	}
	if p.Publish.Address != "" {
		ref, err := img.Publish(ctx, p.Publish.Address)
		if err != nil {
			return "", fmt.Errorf("pipeline %s: publish image to %s: %w", p.Name, p.Publish.Address, err)
		}
		return ref, nil
	}
	return "", nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
