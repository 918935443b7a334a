package kbuild

import (
	"context"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Diff says, in words, how the key lines of a unit's earlier build (old)
// differ from its current ones (cur): "cuda/include/cuzk/fr.cuh changed",
// "flag -O3 added", "nvcc build changed: A → B".
func Diff(old, cur []string) []string {
	o, c := parseLines(old), parseLines(cur)
	var out []string
	for _, kind := range []string{"engine", "nvcc-build", "nvcc-release", "host-compiler", "image"} {
		if a, b := first(o[kind]), first(c[kind]); a != b {
			out = append(out, fmt.Sprintf("%s changed: %s → %s", strings.ReplaceAll(kind, "-", " "), orNone(a), orNone(b)))
		}
	}
	// The root is keyed only under path-embedding flags; its appearing or
	// going is explained by the flag change itself.
	if a, b := first(o["root"]), first(c["root"]); a != "" && b != "" && a != b {
		out = append(out, fmt.Sprintf("tree moved: %s → %s (debug info embeds it)", a, b))
	}
	for _, kind := range []string{"arch", "ptx", "flag", "define"} {
		for _, v := range minus(c[kind], o[kind]) {
			out = append(out, fmt.Sprintf("%s %s added", kind, v))
		}
		for _, v := range minus(o[kind], c[kind]) {
			out = append(out, fmt.Sprintf("%s %s removed", kind, v))
		}
	}
	out = append(out, diffInputs(o["input"], c["input"])...)
	if len(out) == 0 && first(o["argv"]) != first(c["argv"]) {
		out = append(out, "nvcc command line changed")
	}
	if len(out) == 0 {
		out = append(out, "key changed in an unrecognized way")
	}
	return out
}

func diffInputs(old, cur []string) []string {
	split := func(vs []string) map[string]string {
		m := map[string]string{}
		for _, v := range vs {
			p, sum, _ := strings.Cut(v, " ")
			m[p] = sum
		}
		return m
	}
	o, c := split(old), split(cur)
	var out []string
	for p, sum := range c {
		switch was, ok := o[p]; {
		case !ok:
			out = append(out, p+" now included")
		case was != sum:
			out = append(out, p+" changed")
		}
	}
	for p := range o {
		if _, ok := c[p]; !ok {
			out = append(out, p+" no longer included")
		}
	}
	sort.Strings(out)
	return out
}

func parseLines(lines []string) map[string][]string {
	m := map[string][]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, " ")
		m[k] = append(m[k], v)
	}
	return m
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, v := range b {
		in[v] = true
	}
	var out []string
	for _, v := range a {
		if !in[v] {
			out = append(out, v)
		}
	}
	return out
}

// Explanation says whether a unit is fresh and, if not, why.
type Explanation struct {
	Unit Unit
	// Source is where a build would take the unit from: Hit (the local
	// cache), HitRemote (the remote cache) or Built (nvcc).
	Source Status
	Fresh  bool     // a build would run nvcc 0 times for this unit (Source is not Built)
	Why    []string // for stale units: what changed since this tree's last build
	// Materialized reports whether the output directory holds this build.
	Materialized bool
}

// Explain computes every unit's key and compares it with the caches (the
// remote's entries are read, not their blobs) and with this tree's last
// build, without running nvcc or writing anything.
func (e *Engine) Explain(ctx context.Context) ([]Explanation, error) {
	units, err := e.Plan(ctx)
	if err != nil {
		return nil, err
	}
	man, _ := e.readManifest() // a missing manifest only means nothing is materialized
	out := make([]Explanation, len(units))
	for i, u := range units {
		x := Explanation{Unit: u, Source: Hit, Fresh: true}
		_, err := e.store.Entry(ctx, u.ID)
		switch {
		case errors.Is(err, cas.ErrNotFound):
			if ok, note := e.remoteHas(ctx, u); ok {
				x.Source = HitRemote
			} else {
				x.Source, x.Fresh = Built, false
				if note != "" {
					x.Why = append(x.Why, note)
				}
				x.Why = append(x.Why, e.why(ctx, u, err)...)
			}
		case err != nil:
			return nil, err
		}
		if k, ok := man.Lookup(u.Name); ok && k.ActionID == u.ID.String() {
			_, statErr := os.Stat(filepath.Join(e.root, e.layout.Out, u.Name+".fatbin"))
			x.Materialized = statErr == nil
		}
		out[i] = x
	}
	return out, nil
}

func (e *Engine) readManifest() (manifest.Manifest, error) {
	b, err := os.ReadFile(filepath.Join(e.root, e.layout.Out, manifest.File))
	if err != nil {
		return manifest.Manifest{}, err
	}
	return manifest.Decode(b)
}
