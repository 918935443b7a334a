package ci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// Run is one build compared by Same: where it ran, how long it took, the
// report its kernels step wrote, and the hash of every file it produced.
type Run struct {
	Name string
	Wall time.Duration
	// Kernels is the kernels step's report; nil for a run that builds no
	// kernels of its own (a release reuses the materialized kernels).
	Kernels *KernelsReport
	// Files maps each produced file (slash path under the output) to its
	// sha256, as found on the host afterwards.
	Files map[string]string
}

// TreeHashes returns the sha256 of every regular file under dir, by slash
// path relative to dir.
func TreeHashes(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close() // read-only
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	return out, err
}

// DiffTrees lists how b differs from a, one line a file; empty means the
// same files with the same bytes. Names matching ignore are left out.
func DiffTrees(a, b map[string]string, ignore ...string) []string {
	skip := func(n string) bool {
		for _, pat := range ignore {
			if ok, _ := filepath.Match(pat, n); ok {
				return true
			}
		}
		return false
	}
	var diff []string
	for n, h := range a {
		switch hb, ok := b[n]; {
		case skip(n):
		case !ok:
			diff = append(diff, "only in the first: "+n)
		case hb != h:
			diff = append(diff, fmt.Sprintf("%s: %s vs %s", n, h[:12], hb[:12]))
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok && !skip(n) {
			diff = append(diff, "only in the second: "+n)
		}
	}
	sort.Strings(diff)
	return diff
}

// NativeMage runs `go run mage.go target` natively in root (CUZK_TOOLCHAIN
// native), its output going to log, and returns the run with the files
// under out hashed. For the kernels target the run holds the report the
// build wrote.
func NativeMage(ctx context.Context, root, target, out string, environ []string, log io.Writer) (Run, error) {
	dir, err := os.MkdirTemp("", "cuzk-native-"+target+"-")
	if err != nil {
		return Run{}, err
	}
	defer os.RemoveAll(dir) // the report, read below
	report := filepath.Join(dir, KernelsReportFile)
	var tail tailWriter
	cmd := exec.CommandContext(ctx, "go", "run", "mage.go", target)
	cmd.Dir = root
	cmd.Env = append(append([]string{}, environ...), toolchain.EnvToolchain+"="+string(toolchain.Native))
	if target == "kernels" {
		cmd.Env = append(cmd.Env, EnvKernelsReport+"="+report)
	}
	cmd.Stdout, cmd.Stderr = log, io.MultiWriter(log, &tail)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return Run{}, &StepError{Pipeline: "native " + target, Step: Step{Why: "natively", Args: cmd.Args},
			Exit: cmd.ProcessState.ExitCode(), Stderr: tail.String(), Err: err}
	}
	r := Run{Name: "native " + target, Wall: time.Since(start)}
	if target == "kernels" {
		k, err := ReadKernelsReport(report, start)
		if err != nil {
			return Run{}, err
		}
		r.Kernels = &k
	}
	r.Files, err = TreeHashes(filepath.Join(root, out))
	return r, err
}

// ContainerKernels runs the kernels pipeline in the image and returns the
// run with its report and the files of cuda/fatbin hashed.
func ContainerKernels(ctx context.Context, name string, opts Options) (Run, error) {
	start := time.Now()
	k, err := Kernels(ctx, opts)
	if err != nil {
		return Run{}, err
	}
	r := Run{Name: name, Wall: time.Since(start), Kernels: &k}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return Run{}, err
	}
	r.Files, err = TreeHashes(filepath.Join(root, "cuda", "fatbin"))
	return r, err
}

// SameTable renders runs as the table `ci:same` prints: wall time, the
// kernels step's report (units, hits, nvcc runs, whether the step ran or
// its executor served it from its cache) and how each run's files compare
// with the first's.
func SameTable(runs []Run, ignore ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %9s %6s %5s %5s %7s  %s\n", "build", "wall", "units", "hits", "nvcc", "step", "files vs the first run")
	for i, r := range runs {
		units, hits, nvcc, step := "-", "-", "-", "-"
		if k := r.Kernels; k != nil {
			units, hits, nvcc, step = strconv.Itoa(k.Units), strconv.Itoa(k.Hits), strconv.Itoa(k.Nvcc), "ran"
			if k.Cached {
				step = "cached"
			}
		}
		same := fmt.Sprintf("%d files", len(r.Files))
		if i > 0 {
			if d := DiffTrees(runs[0].Files, r.Files, ignore...); len(d) == 0 {
				same += ", byte-identical"
			} else {
				same += fmt.Sprintf(", %d differ: %s", len(d), strings.Join(d, "; "))
			}
		}
		fmt.Fprintf(&b, "%-44s %9s %6s %5s %5s %7s  %s\n", r.Name, r.Wall.Round(100*time.Millisecond), units, hits, nvcc, step, same)
	}
	return b.String()
}

// SameReport is what Same measured: the kernels natively, in the image on
// an empty kernel cache and in the image on the natively filled one; the
// release natively and in the image; and the executor that ran the image's
// steps.
type SameReport struct {
	Executor         toolchain.Executor
	Kernels, Release []Run
}

// Problems lists every way the report breaks the promise that native and
// container builds are one build; empty means kept. Every check reads the
// steps' reports and the files that came back, so it holds whether a step
// ran or was served from the executor's cache.
func (r SameReport) Problems() []string {
	var out []string
	for _, k := range r.Kernels {
		switch {
		case k.Kernels == nil:
			out = append(out, k.Name+": no kernels report")
		default:
			if d := DiffTrees(k.Kernels.Files, k.Files); len(d) > 0 {
				out = append(out, fmt.Sprintf("%s: the files that came back are not the ones its report lists: %s", k.Name, strings.Join(d, "; ")))
			}
		}
	}
	if len(r.Kernels) == 3 && r.Kernels[1].Kernels != nil && r.Kernels[2].Kernels != nil {
		for _, c := range r.Kernels[1:] {
			if d := DiffTrees(r.Kernels[0].Files, c.Files); len(d) > 0 {
				out = append(out, fmt.Sprintf("%s: cuda/fatbin differs from %s: %s", c.Name, r.Kernels[0].Name, strings.Join(d, "; ")))
			}
		}
		if k := r.Kernels[1].Kernels; k.Hits != k.Remote || k.Units == 0 {
			out = append(out, fmt.Sprintf("%s: %d local hits of %d units, want none: its kernel cache was not empty",
				r.Kernels[1].Name, k.Hits-k.Remote, k.Units))
		}
		if k := r.Kernels[2].Kernels; k.Nvcc != 0 || k.Hits != k.Units || k.Units == 0 {
			out = append(out, fmt.Sprintf("%s: %d hits of %d units and %d nvcc runs, want every unit a hit and none",
				r.Kernels[2].Name, k.Hits, k.Units, k.Nvcc))
		}
	}
	if len(r.Release) == 2 {
		if d := DiffTrees(r.Release[0].Files, r.Release[1].Files); len(d) > 0 {
			out = append(out, fmt.Sprintf("%s: dist differs from %s: %s", r.Release[1].Name, r.Release[0].Name, strings.Join(d, "; ")))
		}
	}
	return out
}

// Same builds the kernels and the release natively and in the build image
// and reports how they compare. The executor is chosen once (o.Executor,
// else CUZK_EXECUTOR's or the first that answers) and runs every container
// leg. coldCache is an empty directory for the image's cold kernel build.
// The native steps run `go run mage.go` in o.Root; the tree's cuda/fatbin
// and dist/ are rewritten by every step. log receives every step's output.
func Same(ctx context.Context, o Options, coldCache string) (SameReport, error) {
	o, err := o.withDefaults()
	if err != nil {
		return SameReport{}, err
	}
	if o.Executor == "" {
		if o.Executor, err = o.chooseExecutor(ctx); err != nil {
			return SameReport{}, fmt.Errorf("ci same: %w", err)
		}
	}
	rep := SameReport{Executor: o.Executor}
	fmt.Fprintf(o.Log, "ci same: container legs through %s\n", o.Executor)
	native, err := NativeMage(ctx, o.Root, "kernels", "cuda/fatbin", o.Environ, o.Log)
	if err != nil {
		return rep, err
	}
	rep.Kernels = append(rep.Kernels, native)
	cold := o
	cold.HostCaches.Kernels = coldCache
	for _, c := range []struct {
		name string
		o    Options
	}{{"container kernels, empty kernel cache", cold}, {"container kernels, natively filled cache", o}} {
		r, err := ContainerKernels(ctx, c.name, c.o)
		if err != nil {
			return rep, err
		}
		rep.Kernels = append(rep.Kernels, r)
	}
	// The native release gets the identity the container's gets (the
	// commit and date taken when Same began), whatever HEAD is by now.
	nenv := append([]string{}, o.Environ...)
	if o.Commit != "" {
		nenv = append(nenv, release.EnvCommit+"="+o.Commit)
	}
	if !o.Epoch.IsZero() {
		nenv = append(nenv, release.EnvSourceDateEpoch+"="+strconv.FormatInt(o.Epoch.Unix(), 10))
	}
	nrel, err := NativeMage(ctx, o.Root, "release", "dist", nenv, o.Log)
	if err != nil {
		return rep, err
	}
	rep.Release = append(rep.Release, nrel)
	start := time.Now()
	if _, err := Release(ctx, o); err != nil {
		return rep, err
	}
	crel := Run{Name: "container release", Wall: time.Since(start)}
	if crel.Files, err = TreeHashes(filepath.Join(o.Root, "dist")); err != nil {
		return rep, err
	}
	rep.Release = append(rep.Release, crel)
	return rep, nil
}
