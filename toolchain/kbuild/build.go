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

// Status is what happened to a unit in a build: where its fatbin came from.
type Status string

// Unit outcomes.
const (
	Hit       Status = "hit local"  // the local cache had it
	HitRemote Status = "hit remote" // the remote cache had it (now the local one does too)
	Built     Status = "built"      // nvcc compiled it
	Failed    Status = "FAILED"
)

// fatbinOutput is the name of a unit's output inside its cache entry.
const fatbinOutput = "fatbin"

// Result is one unit's outcome.
type Result struct {
	Unit     Unit
	Status   Status
	Why      []string // for Built: what changed since this tree's last build (and why a remote copy was not used)
	Duration time.Duration
	Fatbin   []byte
	Uploaded bool // for Built: stored on the remote cache too
	Err      error
}

// Report is a whole build's outcome.
type Report struct {
	Results  []Result
	Hits     int // units served from a cache, local or remote
	Fetched  int // of those, units fetched from the remote
	Uploaded int // built units stored on the remote
	Compile  int // nvcc runs, verify runs included
	Written  int // files written into the output directory
}

// Build brings every unit up to date: a unit is looked up in the local
// cache, then in the remote one (all units at once, at most fetch-jobs
// fetches in flight), and only then compiled (at most jobs nvcc runs at
// once) and stored. If every unit succeeds the outputs and manifest are
// materialized; if any fails, the error carries nvcc's message, the output
// directory is left as it was, and the units that did build stay in the
// cache.
func (e *Engine) Build(ctx context.Context) (Report, error) {
	units, err := e.Plan(ctx)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Results: make([]Result, len(units))}
	e.prog.reset(len(units))
	s := e.newSlots()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, compiles := e.buildUnit(ctx, u, s)
			mu.Lock()
			defer mu.Unlock()
			rep.Results[i] = r
			rep.Compile += compiles
			e.printResult(r)
		}()
	}
	wg.Wait()
	var errs []error
	local := 0
	for _, r := range rep.Results {
		switch r.Status {
		case Hit:
			rep.Hits++
			local++
		case HitRemote:
			rep.Hits++
			rep.Fetched++
		case Built:
			if r.Uploaded {
				rep.Uploaded++
			}
		case Failed:
			errs = append(errs, r.Err)
		}
	}
	// Counters are advisory: a failure to record them must not fail a build.
	_ = e.store.Count(cas.Counters{Hits: int64(local), Misses: int64(len(units) - local),
		Puts: int64(len(units) - local - len(errs))})
	if len(errs) > 0 {
		return rep, fmt.Errorf("kbuild: %d of %d kernels failed; %s left unchanged:\n%w",
			len(errs), len(units), e.layout.Out, joinDistinct(rep.Results))
	}
	n, err := e.materialize(rep.Results)
	rep.Written = n
	return rep, err
}

// buildUnit returns the unit's result and how many times nvcc ran. It holds
// the action's cross-process lock from lookup to store, so concurrent builds
// sharing a cache compile (or fetch) each unit once.
func (e *Engine) buildUnit(ctx context.Context, u Unit, s *slots) (Result, int) {
	start := time.Now()
	unlock, err := e.store.Lock(u.ID)
	if err != nil {
		return Result{Unit: u, Status: Failed, Err: err}, 0
	}
	defer unlock()
	r, miss := e.lookup(ctx, u, s)
	if miss == nil {
		r.Duration = time.Since(start)
		if err := e.noteBuilt(ctx, u); err != nil {
			return Result{Unit: u, Status: Failed, Err: err}, 0
		}
		if !e.verify {
			return r, 0
		}
		return e.verifyHit(ctx, r, s), 1
	}
	if !errors.Is(miss, cas.ErrNotFound) {
		return Result{Unit: u, Status: Failed, Err: miss}, 0
	}
	why := append(r.Why, e.why(ctx, u, miss)...)
	b, err := e.compileSlot(ctx, u, s)
	if err != nil {
		return Result{Unit: u, Status: Failed, Why: why, Err: err, Duration: time.Since(start)}, 1
	}
	if _, err := e.store.Put(ctx, u.ID, map[string][]byte{fatbinOutput: b}, u.Lines); err != nil {
		return Result{Unit: u, Status: Failed, Err: err}, 1
	}
	uploaded := e.upload(ctx, u, b)
	if err := e.noteBuilt(ctx, u); err != nil {
		return Result{Unit: u, Status: Failed, Err: err}, 1
	}
	return Result{Unit: u, Status: Built, Why: why, Fatbin: b, Uploaded: uploaded, Duration: time.Since(start)}, 1
}

// lookup serves u from the local cache, else from the remote one, whose
// verified hit it writes to the local cache. On a miss it returns the local
// miss error and, in the result's Why, a note on a damaged remote copy.
func (e *Engine) lookup(ctx context.Context, u Unit, s *slots) (Result, error) {
	_, data, err := e.store.Get(ctx, u.ID)
	if err == nil {
		return Result{Unit: u, Status: Hit, Fatbin: data[fatbinOutput]}, nil
	}
	if !errors.Is(err, cas.ErrNotFound) {
		return Result{Unit: u}, err
	}
	remote, note := e.fetch(ctx, u, s)
	if remote == nil {
		r := Result{Unit: u}
		if note != "" {
			r.Why = []string{note}
		}
		return r, err
	}
	// The local entry holds this tree's key lines, not the remote's copy.
	if _, err := e.store.Put(ctx, u.ID, remote, u.Lines); err != nil {
		return Result{Unit: u}, fmt.Errorf("kbuild: kernel %s: store remote hit: %w", u.Name, err)
	}
	return Result{Unit: u, Status: HitRemote, Fatbin: remote[fatbinOutput]}, nil
}

// compileSlot runs nvcc for u within the build's bound on parallel runs.
func (e *Engine) compileSlot(ctx context.Context, u Unit, s *slots) ([]byte, error) {
	tc, err := e.compiler.get(ctx, e.tc.Identity)
	if err != nil {
		return nil, err
	}
	if err := acquire(ctx, s.compile); err != nil {
		return nil, fmt.Errorf("kbuild: kernel %s: %w", u.Name, err)
	}
	defer func() { <-s.compile }()
	defer e.prog.begin(u.Name)()
	return e.compile(ctx, tc.Nvcc, u)
}

// noteBuilt records u's action as this tree's last build of the unit, the
// baseline the next miss is explained against. A hit counts too: after
// A → B → A (a revert, served from the cache), a change to C is explained
// against A, not B. The ref is only rewritten when it moves, so a no-op
// build writes nothing.
func (e *Engine) noteBuilt(_ context.Context, u Unit) error {
	if prev, err := e.store.Ref(e.refName(u)); err == nil && prev == u.ID {
		return nil
	}
	return e.store.SetRef(e.refName(u), u.ID)
}

// verifyHit recompiles a cache hit and fails the unit if nvcc's bytes differ
// from the cached ones (CUZK_VERIFY=1): the key missed an input, or the
// compiler is not deterministic.
func (e *Engine) verifyHit(ctx context.Context, r Result, s *slots) Result {
	start := time.Now()
	b, err := e.compileSlot(ctx, r.Unit, s)
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
func (e *Engine) why(ctx context.Context, u Unit, miss error) []string {
	prev, err := e.store.Ref(e.refName(u))
	if err != nil {
		return []string{"no earlier build in this tree"}
	}
	if prev == u.ID {
		return []string{"cache entry missing or damaged: " + strings.TrimPrefix(miss.Error(), cas.ErrNotFound.Error()+": ")}
	}
	old, err := e.store.Entry(ctx, prev)
	if err != nil {
		return []string{"earlier build's record was trimmed"}
	}
	return Diff(old.Inputs, u.Lines)
}

func (e *Engine) printResult(r Result) {
	switch r.Status {
	case Hit:
		e.printf("kernel %-24s hit local %s\n", r.Unit.Name, r.Unit.ID.Short())
	case HitRemote:
		e.printf("kernel %-24s hit remote %s (%.2f MB in %.1fs)\n", r.Unit.Name, r.Unit.ID.Short(),
			float64(len(r.Fatbin))/1e6, r.Duration.Seconds())
	case Built:
		up := ""
		if r.Uploaded {
			up = ", uploaded"
		}
		e.printf("kernel %-24s built in %.1fs (%s)%s\n", r.Unit.Name, r.Duration.Seconds(), strings.Join(r.Why, "; "), up)
	case Failed:
		e.printf("kernel %-24s FAILED\n%v\n", r.Unit.Name, r.Err)
	}
}

// printf writes one progress line; lines from concurrent units never mix.
func (e *Engine) printf(format string, args ...any) { e.prog.printf(format, args...) }

// joinDistinct joins the failed units' errors, each distinct message once
// with the kernels it stopped: one missing compiler fails every unit that
// needed it with the same words.
func joinDistinct(results []Result) error {
	var order []string
	byMsg := map[string][]Result{}
	for _, r := range results {
		if r.Status != Failed {
			continue
		}
		msg := r.Err.Error()
		if _, ok := byMsg[msg]; !ok {
			order = append(order, msg)
		}
		byMsg[msg] = append(byMsg[msg], r)
	}
	errs := make([]error, 0, len(order))
	for _, msg := range order {
		rs := byMsg[msg]
		if len(rs) == 1 {
			errs = append(errs, rs[0].Err)
			continue
		}
		names := make([]string, len(rs))
		for i, r := range rs {
			names[i] = r.Unit.Name
		}
		errs = append(errs, fmt.Errorf("kernels %s: %w", strings.Join(names, ", "), rs[0].Err))
	}
	return errors.Join(errs...)
}
