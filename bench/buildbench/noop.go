package buildbench

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Targets for the no-op paths, from the project's performance goals
// (docs/perf.md, "Kernel build engine"): what a developer pays for every
// build that has nothing to do.
const (
	EngineNoOpTarget = 50 * time.Millisecond
	MageNoOpTarget   = 1500 * time.Millisecond
)

// Timing is a repeated measurement and the target its median must meet.
type Timing struct {
	Name   string
	Runs   []time.Duration
	Target time.Duration
}

// Median returns stats.Median of the runs (the mean of the middle pair for
// an even count); 0 when there are none.
func (t Timing) Median() time.Duration { return stats.Median(t.Runs) }

// Pass says whether the median meets the target.
func (t Timing) Pass() bool { return len(t.Runs) > 0 && t.Median() <= t.Target }

// engineNoOp times no-op builds of the engine's tree, each with a fresh
// engine (plan, cache lookups, output check) and fails if one compiles.
func (b *bench) engineNoOp(ctx context.Context) (Timing, error) {
	t := Timing{Name: "kbuild no-op Build (plan + cache lookups)", Target: EngineNoOpTarget}
	for range b.cfg.NoOpRuns {
		s, err := measure(ctx, b.cuzk.build, b.cuzkCount)
		if err != nil {
			return t, fmt.Errorf("buildbench: no-op build: %w", err)
		}
		if s.Nvcc != 0 || b.cuzk.last.Hits != len(b.res.Units) || b.cuzk.last.Written != 0 {
			return t, fmt.Errorf("buildbench: no-op build ran nvcc %d times, %d of %d hits, wrote %d files",
				s.Nvcc, b.cuzk.last.Hits, len(b.res.Units), b.cuzk.last.Written)
		}
		t.Runs = append(t.Runs, s.Wall)
	}
	return t, nil
}

// TimeCommand runs argv in dir warm times untimed, then runs times timed;
// env is added to the current environment. A failing run is an error with
// its output.
func TimeCommand(ctx context.Context, name, dir string, env, argv []string, warm, runs int, target time.Duration) (Timing, error) {
	t := Timing{Name: name, Target: target}
	for i := range warm + runs {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return t, fmt.Errorf("time %s: %w\n%s", strings.Join(argv, " "), err, out.Bytes())
		}
		if i >= warm {
			t.Runs = append(t.Runs, time.Since(start))
		}
	}
	return t, nil
}

// Snapshot writes the files of the repository's HEAD commit into dst (git
// archive), so a measurement sees committed sources only, never edits in
// progress in the working tree.
func Snapshot(ctx context.Context, repo, dst string) error {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", "HEAD")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("snapshot %s: git archive: %w: %s", repo, err, errb.Bytes())
	}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", repo, err)
		}
		if err := extract(dst, h, tr); err != nil {
			return fmt.Errorf("snapshot %s: %w", repo, err)
		}
	}
}

func extract(dst string, h *tar.Header, r io.Reader) error {
	p := filepath.Join(dst, filepath.FromSlash(h.Name))
	if !strings.HasPrefix(p, filepath.Clean(dst)+string(filepath.Separator)) {
		return fmt.Errorf("entry %q leaves the destination", h.Name)
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(p, 0o755)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return os.WriteFile(p, b, os.FileMode(h.Mode)&0o777)
	case tar.TypeSymlink:
		return os.Symlink(h.Linkname, p)
	}
	return nil // pax headers and the like carry no files
}

// Measure benchmarks the repository at repo as committed: it snapshots HEAD
// into a temporary directory, runs the sequence on that kernel tree, then,
// if mageRuns > 0, times `go run mage.go build` in the snapshot with nothing
// to do (after one untimed warm build, whose kernels the sequence's cache
// already holds). The temporary directory is removed afterwards.
func Measure(ctx context.Context, repo string, pins toolchain.Pins, mageRuns int, cfg Config) (Result, error) {
	work, err := os.MkdirTemp("", "cuzk-buildbench-")
	if err != nil {
		return Result{}, fmt.Errorf("buildbench: %w", err)
	}
	defer os.RemoveAll(work) // best effort: a leftover temp dir harms nothing
	snap := filepath.Join(work, "repo")
	if err := Snapshot(ctx, repo, snap); err != nil {
		return Result{}, fmt.Errorf("buildbench: %w", err)
	}
	res, err := Run(ctx, snap, filepath.Join(work, "bench"), pins, cfg)
	if err != nil || mageRuns == 0 {
		return res, err
	}
	// CUZK_ARCHS and CUZK_PTX are the pin overrides for archs and ptx
	// (toolchain.Load); the cache is the one the sequence filled.
	env := []string{toolchain.PinVariable("archs") + "=" + strings.Join(res.Archs, ","), toolchain.PinVariable("ptx") + "=", cas.EnvDir + "=" + res.CacheDir}
	t, err := TimeCommand(ctx, "go run mage.go build, no-op", snap, env,
		[]string{"go", "run", "mage.go", "build"}, 1, mageRuns, MageNoOpTarget)
	if err != nil {
		return res, fmt.Errorf("buildbench: %w", err)
	}
	res.MageNoOp = &t
	return res, nil
}
