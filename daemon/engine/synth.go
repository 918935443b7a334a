package engine

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// synthesizer is one synthesis worker: it takes the highest-priority
// queued job, makes its key warm, reserves its host memory, solves it and
// hands it to the device workers.
func (e *Engine) synthesizer() {
	defer e.wg.Done()
	for {
		j, err := e.queue.pop(e.ctx)
		if err != nil {
			return
		}
		e.synthesize(j)
	}
}

func (e *Engine) synthesize(j *Job) {
	defer func() {
		if p := recover(); p != nil {
			e.end(j, nil, fmt.Errorf("job %s: synthesis: panic: %v", j.ID, p))
		}
	}()
	now := time.Now()
	j.marks.synthStart = now
	j.timings.Queue = now.Sub(j.submitted)
	e.setSynth(+1)
	defer e.setSynth(-1)
	j.setState(Synthesizing, Event{})
	if err := j.ctx.Err(); err != nil {
		e.end(j, nil, fmt.Errorf("job %s: %w", j.ID, err))
		return
	}
	sh, err := e.cfg.Keys.Shape(j.ctx, j.Req.Circuit)
	if err != nil {
		e.end(j, nil, fmt.Errorf("job %s: key: %w", j.ID, err))
		return
	}
	sys, key := sh.Sys, j.Req.Circuit.Key
	if err := e.keyForJob(j, sh); err != nil {
		e.end(j, nil, fmt.Errorf("job %s: key: %w", j.ID, err))
		return
	}
	need := sys.AssignmentBytes()
	if err := e.neverFits("synthesis of "+key, need); err != nil {
		e.end(j, nil, fmt.Errorf("job %s: %w", j.ID, err))
		return
	}
	vec, dropped, err := e.budget.acquireFor(j.ctx, key, need)
	e.freeVectors(dropped...)
	if err != nil {
		e.end(j, nil, fmt.Errorf("job %s: waiting for host memory: %w", j.ID, err))
		return
	}
	j.reserved = need
	asg, err := e.solve(j, sys, vec)
	if err == nil {
		err = j.ctx.Err()
	}
	if err != nil {
		e.end(j, nil, fmt.Errorf("job %s: synthesis: %w", j.ID, err))
		return
	}
	if l := j.key; l != nil {
		if err := l.failed(); err != nil { // no device time for a job whose key will not come
			e.end(j, nil, fmt.Errorf("job %s: key: %w", j.ID, err))
			return
		}
	}
	j.asg = asg
	j.public = append(j.public[:0], asg.PublicInputs()...)
	j.setState(Ready, Event{Kind: EventSynthesisDone})
	j.marks.ready = time.Now()
	if err := e.handoff.put(j.ctx, j); err != nil {
		if errors.Is(err, errClosed) {
			err = fmt.Errorf("engine closed: %w", j.ctx.Err())
		}
		e.end(j, nil, fmt.Errorf("job %s: waiting for a device: %w", j.ID, err))
	}
}

// keyForJob starts j's key load beside the solve (keyload.go) or, where
// the host budget cannot hold the load and the vectors solved meanwhile
// at once (overlapKey), loads it before the solve.
func (e *Engine) keyForJob(j *Job, sh keys.Shape) error {
	if e.overlapKey(j, sh) {
		j.key = e.startKeyLoad(j)
		return nil
	}
	h, err := e.cfg.Keys.Acquire(j.ctx, j.Req.Circuit)
	if err != nil {
		return err
	}
	j.handle = h
	j.timings.KeyLoad = h.LoadTime
	j.event(Event{Kind: EventKeyReady})
	return nil
}

// solve synthesizes j's instance into vec (an earlier job's vectors, or nil:
// fresh ones) and times it (the vectors' allocation included). j.vec holds
// the vectors from then on, with the assignment once solved; a solve that
// outgrew them leaves its result on the heap and gives them back.
func (e *Engine) solve(j *Job, sys *r1cs.System, vec *vectors) (*r1cs.Assignment, error) {
	start := time.Now()
	defer func() { j.timings.Synthesis = time.Since(start) }()
	if vec == nil {
		var err error
		if vec, err = e.vecs.alloc(sys); err != nil {
			return nil, err
		}
	}
	j.vec = vec
	e.prefetchInstance()
	circ, err := j.instance() // the instance: witness values, trees (maybe built ahead)
	var asg *r1cs.Assignment
	if err == nil {
		workers := e.startSolve(j.Req.Circuit.Key)
		j.timings.SynthesisWorkers = workers
		opts := []r1cs.SolveOption{r1cs.WithShape(sys), r1cs.WithWorkers(workers)}
		if vec != nil {
			opts = append(opts, r1cs.WithBuffers(vec.asg)) // an earlier job's vectors, or fresh pinned ones
		}
		func() {
			defer e.endSolve() // a panic in the solve (recovered by synthesize) still ends its count
			asg, err = r1cs.Solve(circ, opts...)
		}()
	}
	j.dropInstance() // solved: the tree and the witness values can go
	if err != nil {
		return nil, err
	}
	if vec == nil {
		vec = &vectors{}
		j.vec = vec
	} else if !vec.owns(asg) { // Solve outgrew them: the result is on the heap
		if err := e.vecs.unmap(vec); err != nil {
			e.cfg.Log.Warn("freeing solved vectors", "err", err)
		}
	}
	vec.asg = asg
	return asg, nil
}

// prefetchInstance starts building the instance of the job the queue
// would hand out next, beside this solve: most of an instance's build (a
// Merkle tree, the labels) runs on fewer cores than the solve, whose tail
// leaves cores idle, so the next job's synthesis starts with its instance
// ready. A job that is cancelled, or taken by another synthesizer, just
// finds it built.
func (e *Engine) prefetchInstance() {
	k := e.queue.peek()
	if k == nil || k.ctx.Err() != nil {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_, _ = k.instance() // an error is the job's own synthesis's to report
	}()
}

// startSolve counts a solve of a job of key as running and returns the
// goroutines it runs on: synthesis_workers where the operator set it, and
// otherwise synthesisWorkers over the cores, the solves running now (this
// one included) and whether a device streams key's bases. endSolve undoes
// the count.
func (e *Engine) startSolve(key string) int {
	streamed := e.cfg.SynthesisWorkers == 0 && e.streamsKey(key) // outside e.mu: workers and the key manager lock their own
	e.mu.Lock()
	defer e.mu.Unlock()
	e.solving++
	if e.cfg.SynthesisWorkers > 0 {
		return e.cfg.SynthesisWorkers
	}
	return synthesisWorkers(runtime.NumCPU(), e.solving, streamed)
}

func (e *Engine) endSolve() {
	e.mu.Lock()
	e.solving--
	e.mu.Unlock()
}

// synthesisWorkers is the default goroutines of one solve on a host of
// cores, with solving solves running (this one included): the cores shared
// among them, and half of that while a device streams the job's key's bases
// from host memory. The copies that feed a streaming device run on the
// host's cores and memory bandwidth beside the solve; on an H100 at a 16 GiB
// budget, one solve on 8 of 16 cores gives 24.90 s a proof against 26.12 s on
// all 16, with the solve (1.6 s a partition) still well inside the device's
// 2.5 s (docs/perf.md, "A streaming device's copies get half the cores"). A
// key held whole on its device keeps every core for its solves.
func synthesisWorkers(cores, solving int, streamed bool) int {
	n := cores / max(1, solving)
	if streamed {
		n /= 2
	}
	return max(1, n)
}

// streamsKey reports whether a device holds key hot with part of its bases
// streamed from host memory for each proof (its KeyPlan, made at Preload).
func (e *Engine) streamsKey(key string) bool {
	for _, w := range e.workers {
		w.mu.Lock()
		p, ok := w.placed[key]
		w.mu.Unlock()
		if ok && p.StreamedBytes > 0 && e.cfg.Keys.IsHotOn(key, w.dev.Name()) {
			return true
		}
	}
	return false
}

func (e *Engine) setSynth(d int) {
	e.mu.Lock()
	e.synth += d
	e.mu.Unlock()
}
