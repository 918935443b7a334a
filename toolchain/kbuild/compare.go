package kbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"sort"

	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Staleness compares one kernel of a running binary (a daemon's embedded
// manifest) with this tree's current build of it.
type Staleness struct {
	Name    string
	Running string // the daemon's ActionID ("" when it lacks the kernel)
	Current string // this tree's ActionID ("" when the tree lacks the unit)
	Stale   bool
	Why     []string // what differs, when stale
}

// Compare says, for every kernel of running and every unit of this tree,
// whether the running binary embeds this tree's current build, and if not
// which inputs changed: the diff of the two action keys when the cache
// holds the running build's record, else whether the sources differ
// (closure hash). It runs no nvcc and writes nothing.
func (e *Engine) Compare(ctx context.Context, running []manifest.Kernel) ([]Staleness, error) {
	units, err := e.Plan(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]manifest.Kernel{}
	for _, k := range running {
		byName[k.Name] = k
	}
	var out []Staleness
	for _, u := range units {
		s := Staleness{Name: u.Name, Current: u.ID.String()}
		k, ok := byName[u.Name]
		delete(byName, u.Name)
		switch {
		case !ok:
			s.Stale, s.Why = true, []string{"the daemon has no such kernel"}
		case k.ActionID == s.Current:
			s.Running = k.ActionID
		default:
			s.Running, s.Stale = k.ActionID, true
			if s.Why, err = e.whyRunning(ctx, u, k); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	for name, k := range byName {
		out = append(out, Staleness{Name: name, Running: k.ActionID, Stale: true, Why: []string{"this tree has no such kernel"}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// whyRunning explains how a running kernel's build differs from unit u.
func (e *Engine) whyRunning(ctx context.Context, u Unit, k manifest.Kernel) ([]string, error) {
	id, err := cas.ParseActionID(k.ActionID)
	if err != nil {
		return []string{fmt.Sprintf("the daemon reports a malformed action id %q", k.ActionID)}, nil
	}
	old, err := e.store.Entry(ctx, id)
	if err == nil {
		return Diff(old.Inputs, u.Lines), nil
	}
	if !errors.Is(err, cas.ErrNotFound) {
		return nil, err
	}
	if k.ClosureHash == u.ClosureHash() {
		return []string{"same sources; flags, targets or toolchain differ (the daemon's build is not in this cache)"}, nil
	}
	return []string{"sources differ (the daemon's build is not in this cache, so the changed file is unknown)"}, nil
}

// ClosureHash is the hex sha256 of the unit's source closure: a line
// "path sum" per input, in order (the manifest's closure_hash).
func (u Unit) ClosureHash() string {
	h := sha256.New()
	for _, in := range u.Inputs {
		fmt.Fprintf(h, "%s %s\n", in.Path, in.Sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}
