package kbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Status is what happened to a unit in a build.
type Status string

// Unit outcomes.
const (
	Hit    Status = "hit"
	Built  Status = "built"
	Failed Status = "FAILED"
)

// fatbinOutput is the name of a unit's output inside its cache entry.
const fatbinOutput = "fatbin"

// Result is one unit's outcome.
type Result struct {
	Unit     Unit
	Status   Status
	Why      []string // for Built: what changed since this tree's last build
	Duration time.Duration
	Fatbin   []byte
	Err      error
}

// Report is a whole build's outcome.
type Report struct {
	Results []Result
	Hits    int // units served from the cache
	Compile int // nvcc runs, verify runs included
	Written int // files written into the output directory
}

// Build brings every unit up to date: cache hits cost nothing, misses run
// nvcc (at most jobs at once) and are stored. If every unit succeeds the
// outputs and manifest are materialized; if any fails, the error carries
// nvcc's message, the output directory is left as it was, and the units that
// did build stay in the cache.
func (e *Engine) Build(ctx context.Context) (Report, error) {
	units, err := e.Plan(ctx)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Results: make([]Result, len(units))}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, e.jobs)
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r, compiles := e.buildUnit(ctx, u)
			mu.Lock()
			defer mu.Unlock()
			rep.Results[i] = r
			rep.Compile += compiles
			e.printResult(r)
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range rep.Results {
		switch r.Status {
		case Hit:
			rep.Hits++
		case Failed:
			errs = append(errs, r.Err)
		}
	}
	// Counters are advisory: a failure to record them must not fail a build.
	_ = e.store.Count(cas.Counters{Hits: int64(rep.Hits), Misses: int64(len(units) - rep.Hits),
		Puts: int64(len(units) - rep.Hits - len(errs))})
	if len(errs) > 0 {
		return rep, fmt.Errorf("kbuild: %d of %d kernels failed; %s left unchanged:\n%w",
			len(errs), len(units), e.layout.Out, errors.Join(errs...))
	}
	n, err := e.materialize(rep.Results)
	rep.Written = n
	return rep, err
}

// buildUnit returns the unit's result and how many times nvcc ran. It holds
// the action's cross-process lock from lookup to store, so concurrent builds
// of one tree compile each unit once.
func (e *Engine) buildUnit(ctx context.Context, u Unit) (Result, int) {
	start := time.Now()
	unlock, err := e.store.Lock(u.ID)
	if err != nil {
		return Result{Unit: u, Status: Failed, Err: err}, 0
	}
	defer unlock()
	_, data, err := e.store.Get(u.ID)
	if err == nil {
		r := Result{Unit: u, Status: Hit, Fatbin: data[fatbinOutput]}
		if err := e.noteBuilt(u); err != nil {
			return Result{Unit: u, Status: Failed, Err: err}, 0
		}
		if !e.verify {
			return r, 0
		}
		return e.verifyHit(ctx, r), 1
	}
	if !errors.Is(err, cas.ErrNotFound) {
		return Result{Unit: u, Status: Failed, Err: err}, 0
	}
	why := e.why(u, err)
	b, err := e.compile(ctx, u)
	if err != nil {
		return Result{Unit: u, Status: Failed, Why: why, Err: err, Duration: time.Since(start)}, 1
	}
	if _, err := e.store.Put(u.ID, map[string][]byte{fatbinOutput: b}, u.Lines); err != nil {
		return Result{Unit: u, Status: Failed, Err: err}, 1
	}
	if err := e.noteBuilt(u); err != nil {
		return Result{Unit: u, Status: Failed, Err: err}, 1
	}
	return Result{Unit: u, Status: Built, Why: why, Fatbin: b, Duration: time.Since(start)}, 1
}

// noteBuilt records u's action as this tree's last build of the unit, the
// baseline the next miss is explained against. A hit counts too: after
// A → B → A (a revert, served from the cache), a change to C is explained
// against A, not B. The ref is only rewritten when it moves, so a no-op
// build writes nothing.
func (e *Engine) noteBuilt(u Unit) error {
	if prev, err := e.store.Ref(e.refName(u)); err == nil && prev == u.ID {
		return nil
	}
	return e.store.SetRef(e.refName(u), u.ID)
}

// verifyHit recompiles a cache hit and fails the unit if nvcc's bytes differ
// from the cached ones (CUZK_VERIFY=1): the key missed an input, or the
// compiler is not deterministic.
func (e *Engine) verifyHit(ctx context.Context, r Result) Result {
	start := time.Now()
	b, err := e.compile(ctx, r.Unit)
	r.Duration = time.Since(start)
	if err != nil {
		r.Status, r.Err = Failed, fmt.Errorf("verify %s: %w", r.Unit.Name, err)
		return r
	}
	if !bytes.Equal(b, r.Fatbin) {
		r.Status = Failed
		r.Err = fmt.Errorf("verify %s: rebuilt fatbin sha256 %x differs from cached %x (action %s)",
			r.Unit.Name, sha256.Sum256(b), sha256.Sum256(r.Fatbin), r.Unit.ID.Short())
	}
	return r
}

// why explains a miss: the diff against this tree's last build of the unit.
func (e *Engine) why(u Unit, miss error) []string {
	prev, err := e.store.Ref(e.refName(u))
	if err != nil {
		return []string{"no earlier build in this tree"}
	}
	if prev == u.ID {
		return []string{"cache entry missing or damaged: " + strings.TrimPrefix(miss.Error(), cas.ErrNotFound.Error()+": ")}
	}
	old, err := e.store.Entry(prev)
	if err != nil {
		return []string{"earlier build's record was trimmed"}
	}
	return Diff(old.Inputs, u.Lines)
}

func (e *Engine) printResult(r Result) {
	switch r.Status {
	case Hit:
		fmt.Fprintf(e.progress, "kernel %-24s hit %s\n", r.Unit.Name, r.Unit.ID.Short())
	case Built:
		fmt.Fprintf(e.progress, "kernel %-24s built in %.1fs (%s)\n", r.Unit.Name, r.Duration.Seconds(), strings.Join(r.Why, "; "))
	case Failed:
		fmt.Fprintf(e.progress, "kernel %-24s FAILED\n%v\n", r.Unit.Name, r.Err)
	}
}
