package ci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// Run is one build compared by Same: where it ran, how long it took, what
// its kernels step said, and the hash of every file it produced.
type Run struct {
	Name string
	Wall time.Duration
	// Kernels is the kernels step's summary line, parsed; zero when the
	// step printed none (a release reuses the materialized kernels).
	Kernels KernelLine
	// Files maps each produced file (slash path under the output) to its
	// sha256.
	Files map[string]string
}

// KernelLine is what `mage kernels` prints when it ends.
type KernelLine struct {
	Units, Hits, Remote, Nvcc int
	Seen                      bool
}

var kernelLineRE = regexp.MustCompile(`kernels: (\d+) units, (\d+) hits \((\d+) remote\), (\d+) nvcc runs`)

// ParseKernelLine finds the last summary line of a kernels step in out.
func ParseKernelLine(out []byte) KernelLine {
	all := kernelLineRE.FindAllSubmatch(out, -1)
	if len(all) == 0 {
		return KernelLine{}
	}
	m := all[len(all)-1]
	n := func(i int) int { v, _ := strconv.Atoi(string(m[i])); return v } // the pattern admits digits only
	return KernelLine{Units: n(1), Hits: n(2), Remote: n(3), Nvcc: n(4), Seen: true}
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
// under out hashed.
func NativeMage(ctx context.Context, root, target, out string, environ []string, log io.Writer) (Run, error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "run", "mage.go", target)
	cmd.Dir = root
	cmd.Env = append(append([]string{}, environ...), toolchain.EnvToolchain+"="+string(toolchain.Native))
	cmd.Stdout = io.MultiWriter(log, &buf)
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return Run{}, fmt.Errorf("native %s: %w", target, err)
	}
	r := Run{Name: "native " + target, Wall: time.Since(start), Kernels: ParseKernelLine(buf.Bytes())}
	var err error
	r.Files, err = TreeHashes(filepath.Join(root, out))
	return r, err
}

// ContainerPipeline runs the pipeline build in the image (as Kernels or
// Release do) and returns the run with the files under out hashed.
func ContainerPipeline(ctx context.Context, name string, opts Options, build func(Options) (Plan, error), out string) (Run, error) {
	var buf bytes.Buffer
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	opts.Log = io.MultiWriter(opts.Log, &buf)
	start := time.Now()
	if _, err := execute(ctx, opts, build); err != nil {
		return Run{}, err
	}
	r := Run{Name: name, Wall: time.Since(start), Kernels: ParseKernelLine(buf.Bytes())}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return Run{}, err
	}
	r.Files, err = TreeHashes(filepath.Join(root, out))
	return r, err
}

// SameTable renders runs as the table `ci:same` prints: wall time, the
// kernels line and how each run's files compare with the first's.
func SameTable(runs []Run, ignore ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %9s %6s %5s %5s  %s\n", "build", "wall", "units", "hits", "nvcc", "files vs the first run")
	for i, r := range runs {
		k := "-"
		hits, nvcc := "-", "-"
		if r.Kernels.Seen {
			k, hits, nvcc = strconv.Itoa(r.Kernels.Units), strconv.Itoa(r.Kernels.Hits), strconv.Itoa(r.Kernels.Nvcc)
		}
		same := fmt.Sprintf("%d files", len(r.Files))
		if i > 0 {
			if d := DiffTrees(runs[0].Files, r.Files, ignore...); len(d) == 0 {
				same += ", byte-identical"
			} else {
				same += fmt.Sprintf(", %d differ: %s", len(d), strings.Join(d, "; "))
			}
		}
		fmt.Fprintf(&b, "%-44s %9s %6s %5s %5s  %s\n", r.Name, r.Wall.Round(100*time.Millisecond), k, hits, nvcc, same)
	}
	return b.String()
}

// SameReport is what Same measured: the kernels natively, in the image on
// an empty kernel cache and in the image on the natively filled one; the
// release natively and in the image.
type SameReport struct {
	Kernels, Release []Run
}

// Problems lists every way the report breaks the promise that native and
// container builds are one build; empty means kept.
func (r SameReport) Problems() []string {
	var out []string
	if len(r.Kernels) == 3 {
		for _, c := range r.Kernels[1:] {
			if d := DiffTrees(r.Kernels[0].Files, c.Files); len(d) > 0 {
				out = append(out, fmt.Sprintf("%s: cuda/fatbin differs from %s: %s", c.Name, r.Kernels[0].Name, strings.Join(d, "; ")))
			}
		}
		if k := r.Kernels[2].Kernels; !k.Seen || k.Nvcc != 0 || k.Hits != k.Units {
			out = append(out, fmt.Sprintf("%s: %d hits of %d units and %d nvcc runs, want every unit a hit and none (seen %v)",
				r.Kernels[2].Name, k.Hits, k.Units, k.Nvcc, k.Seen))
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
// (through o's executor) and reports how they compare. coldCache is an
// empty directory for the image's cold kernel build. The native steps run
// `go run mage.go` in o.Root; the tree's cuda/fatbin and dist/ are rewritten
// by every step. log receives every step's output.
func Same(ctx context.Context, o Options, coldCache string) (SameReport, error) {
	o, err := o.withDefaults()
	if err != nil {
		return SameReport{}, err
	}
	var rep SameReport
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
		r, err := ContainerPipeline(ctx, c.name, c.o, KernelsPlan, "cuda/fatbin")
		if err != nil {
			return rep, err
		}
		rep.Kernels = append(rep.Kernels, r)
	}
	nrel, err := NativeMage(ctx, o.Root, "release", "dist", o.Environ, o.Log)
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
