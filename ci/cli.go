package ci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/toolchain"

	"github.com/cuzk-dev/cuzk/internal/shquote"
)

// cliRuntime runs a Plan with a container CLI (podman or docker): the same
// image, mounts, caches, environment, steps and exports as the Dagger
// executor, for machines without a Dagger engine.
type cliRuntime struct {
	bin string
	// flags go after `run` on every container.
	flags []string
}

// newCLIRuntime returns the runtime for e. podman gets runc when it is
// installed (crun fails on cgroup v1 hosts) and bounded ulimits (the
// defaults some hosts hand down are refused by the runtime).
func newCLIRuntime(e toolchain.Executor) (cliRuntime, error) {
	switch e {
	case toolchain.Podman:
		rt := cliRuntime{bin: "podman", flags: []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}}
		if _, err := exec.LookPath("runc"); err == nil {
			rt.flags = append(rt.flags, "--runtime", "runc")
		}
		return rt, nil
	case toolchain.Docker:
		return cliRuntime{bin: "docker"}, nil
	}
	return cliRuntime{}, fmt.Errorf("ci: %s is not a container CLI", e)
}

// imageID returns the runtime's ID for tag, or "" when it has no such image.
func (rt cliRuntime) imageID(ctx context.Context, tag string) string {
	out, err := exec.CommandContext(ctx, rt.bin, "image", "inspect", "--format", "{{.Id}}", tag).Output()
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "sha256:")
}

// ensureLoaded makes img available to the runtime under img.Tag(), loading
// its OCI archive unless an image with that tag and img's config (or
// manifest) digest is already there. A tag naming other content is
// replaced.
func (rt cliRuntime) ensureLoaded(ctx context.Context, img buildimage.Result, log io.Writer) error {
	tag := img.Tag()
	if id := rt.imageID(ctx, tag); id == img.Config.Hex || id == img.Digest.Hex {
		return nil
	}
	archive, err := buildimage.Archive(img)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: loading %s\n", rt.bin, img.Ref)
	out, err := exec.CommandContext(ctx, rt.bin, "load", "-i", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s load %s: %w\n%s", rt.bin, archive, err, out)
	}
	// podman names an OCI archive's image after its ref.name annotation
	// (the tag alone); give it the full name either way.
	for _, cand := range []string{img.Config.Hex, img.Digest.Hex} {
		if exec.CommandContext(ctx, rt.bin, "tag", cand, tag).Run() == nil {
			break
		}
	}
	if id := rt.imageID(ctx, tag); id != img.Config.Hex && id != img.Digest.Hex {
		return fmt.Errorf("%s load %s: %s has id %q, want %s", rt.bin, archive, tag, id, img.Config)
	}
	return nil
}

// runArgs returns the `run` command line for p in img with the source
// staged at stage and the report directory at out.
func (rt cliRuntime) runArgs(p Plan, img buildimage.Result, stage, out string) ([]string, error) {
	args := append([]string{"run", "--rm", "--network", "none", "--platform", p.Platform}, rt.flags...)
	if p.NoASLR {
		args = append(args, "--security-opt", "seccomp=unconfined")
	}
	args = append(args, "-v", stage+":"+p.Workdir, "-w", p.Workdir)
	for _, m := range p.Mounts {
		args = append(args, "-v", m.Host+":"+m.Path+":ro")
	}
	for _, c := range p.Caches {
		if c.Host == "" {
			return nil, fmt.Errorf("pipeline %s: cache %s has no host directory", p.Name, c.Key)
		}
		if err := os.MkdirAll(c.Host, 0o755); err != nil {
			return nil, fmt.Errorf("pipeline %s: cache %s: %w", p.Name, c.Key, err)
		}
		v := c.Host + ":" + c.Path
		if c.Use == ReadOnly {
			v += ":ro"
		}
		args = append(args, "-v", v)
	}
	if p.Out != "" {
		args = append(args, "-v", out+":"+p.Out)
	}
	for _, e := range p.Env {
		args = append(args, "-e", e.Name+"="+e.Value)
	}
	return append(args, img.Tag(), "sh", "-c", script(p.Steps, p.Out)), nil
}

// stepFile is where the script records, in the report directory, the index
// of the step it is running: after a failure, the step that failed.
const stepFile = ".step"

// script runs steps in order in one shell, each announced with its reason
// and its index recorded in out's stepFile (when out is set), stopping at
// the first failure.
func script(steps []Step, out string) string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for i, s := range steps {
		if out != "" {
			fmt.Fprintf(&b, "echo %d >%s\n", i, shquote.Quote(path.Join(out, stepFile)))
		}
		fmt.Fprintf(&b, "echo %s\n", shquote.Quote("== step: "+s.Why))
		q := make([]string, len(s.Args))
		for i, a := range s.Args {
			q[i] = shquote.Quote(a)
		}
		b.WriteString(strings.Join(q, " ") + "\n")
	}
	return b.String()
}

// run executes p with rt: stage the source (without the excluded paths),
// run every step in one container with the report directory bound at
// out, then copy the exports back. A failed step comes back as a
// StepError.
func (rt cliRuntime) run(ctx context.Context, p Plan, img buildimage.Result, out string, log io.Writer) error {
	if err := rt.ensureLoaded(ctx, img, log); err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	stage, err := os.MkdirTemp("", "cuzk-"+p.Name+"-")
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	defer os.RemoveAll(stage) // a copy of the source and the steps' outputs
	if err := copyTree(p.Source.Host, stage, p.Source.Exclude); err != nil {
		return fmt.Errorf("pipeline %s: stage source: %w", p.Name, err)
	}
	args, err := rt.runArgs(p, img, stage, out)
	if err != nil {
		return err
	}
	var tail tailWriter
	cmd := exec.CommandContext(ctx, rt.bin, args...)
	cmd.Stdout, cmd.Stderr = log, io.MultiWriter(log, &tail)
	if err := cmd.Run(); err != nil {
		var xe *exec.ExitError
		if !errors.As(err, &xe) {
			return fmt.Errorf("pipeline %s: %s run %s: %w", p.Name, rt.bin, img.Ref, err)
		}
		se := &StepError{Pipeline: p.Name, Exit: xe.ExitCode(), Stderr: tail.String(), Err: err}
		if b, rerr := os.ReadFile(filepath.Join(out, stepFile)); rerr == nil {
			if i, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && i >= 0 && i < len(p.Steps) {
				se.Step = p.Steps[i]
			}
		}
		return se
	}
	os.Remove(filepath.Join(out, stepFile)) // bookkeeping, not a report
	for _, x := range p.Exports {
		if path.IsAbs(x.Path) {
			return fmt.Errorf("pipeline %s: export %s: %s exports only paths under the workdir", p.Name, x.Path, rt.bin)
		}
		src := filepath.Join(stage, filepath.FromSlash(x.Path))
		if x.Wipe {
			if err := os.RemoveAll(x.Host); err != nil {
				return fmt.Errorf("pipeline %s: export %s: wipe %s: %w", p.Name, x.Path, x.Host, err)
			}
		}
		if err := copyTree(src, x.Host, nil); err != nil {
			return fmt.Errorf("pipeline %s: export %s to %s: %w", p.Name, x.Path, x.Host, err)
		}
	}
	return nil
}

// copyTree copies the directory src into dst (created; existing files
// replaced, others kept, as Dagger's Directory.Export does), leaving out
// every path matching one of exclude (doublestar patterns relative to src)
// and everything below it. Symbolic links are copied as links.
func copyTree(src, dst string, exclude []string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, pat := range exclude {
			if ok, _ := doublestar.Match(pat, rel); ok && rel != "." {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			os.Remove(target) // replaced; a missing target is fine
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices: not source
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close() // read-only
	os.Remove(dst)   // replaced, never written through (it may be a link)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// moduleDirs lists the directories under root that hold a go.mod (the
// root's and nested modules' such as bench/gnark), leaving out testdata.
func moduleDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	return dirs, err
}

// hostGoEnv returns `go env name` on the host.
func hostGoEnv(goCmd, name string) (string, error) {
	var errb bytes.Buffer
	cmd := exec.Command(goCmd, "env", name)
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w: %s", name, err, errb.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}
