package engine

import (
	"context"
	"fmt"
	"runtime"

	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// Preload makes c's key warm and, with hot, resident on a device: the one
// already holding it, else the first device in order whose budget admits
// it. It also makes the solved vectors of c's jobs ahead (warmVectors):
// beside the key's load where the load's peak and the job budget fit the
// host budget together (as a job's key loads beside its synthesis), else
// once the load has ended (its compile and setup scalars gone), beside the
// upload. It runs beside the workers: device work is serialized by the
// device. A key that can never fit is refused before any work (Admit).
func (e *Engine) Preload(ctx context.Context, c *registry.Resolved, hot bool) error {
	if _, err := e.Admit(ctx, c, 0); err != nil {
		return fmt.Errorf("preload %s: %w", c.Key, err)
	}
	sh, err := e.cfg.Keys.Shape(ctx, c) // Admit's, remembered
	if err != nil {
		return fmt.Errorf("preload %s: %w", c.Key, err)
	}
	warmed := make(chan struct{})
	startWarm := func() {
		go func() {
			defer close(warmed)
			if n, err := e.warmVectors(ctx, c, sh); err != nil {
				e.cfg.Log.Warn("solved vectors not made ahead: the first jobs make them", "key", c.Key, "made", n, "err", err)
			} else if n > 0 {
				e.cfg.Log.Info("solved vectors made ahead for the key's jobs", "key", c.Key, "sets", n)
			}
		}()
	}
	beside := e.loadFitsBeside(c, sh, e.cfg.HostBudget)
	if beside {
		startWarm()
	}
	h, err := e.cfg.Keys.Acquire(ctx, c)
	if err != nil {
		if beside {
			<-warmed
		}
		return fmt.Errorf("preload %s: %w", c.Key, err)
	}
	defer h.Release()
	if !beside {
		startWarm()
	}
	defer func() { <-warmed }()
	if !hot {
		return nil
	}
	return e.makeHot(ctx, h, e.workers[0])
}

// warmVectors makes out-of-heap solved vectors for c's shape, pinned, and
// keeps them for c's jobs: as many as a pipeline with one synthesizer
// holds at once (one solving, the hand-off full, one proving on each
// device) and the job budget has room for now (it neither waits nor drops
// other keys' kept vectors), counting sets of c's already kept. Page-locking a
// fresh set (16 GiB at 2^27) takes seconds in the GPU driver, which a
// device proving meanwhile appears to wait out (the C2 run's single
// proof: 11.2 s on its first partition, not 1.76 s, while two fresh sets
// were solved into): made at preload, while nothing proves, the first
// proofs solve into them instead.
// Without an enabled VectorPool, or with an unbounded job budget, it
// makes none. It returns how many sets it made.
func (e *Engine) warmVectors(ctx context.Context, c *registry.Resolved, sh keys.Shape) (int, error) {
	if !e.vecs.enabled() {
		return 0, nil
	}
	n := sh.VectorBytes()
	made, want := 0, 1+e.cfg.Handoff+len(e.workers)-e.budget.keptCount(c.Key)
	for made < want && ctx.Err() == nil && e.budget.tryReserve(n) {
		v, err := e.vecs.alloc(sh.Sys)
		if err != nil {
			e.budget.release(n)
			return made, err
		}
		e.freeVectors(e.budget.keep(c.Key, v, n))
		made++
	}
	return made, nil
}

// makeHot makes h's key resident on w's device unless some device holds it
// already or w's device proves from host memory.
func (e *Engine) makeHot(ctx context.Context, h *keys.Handle, w *worker) error {
	for _, o := range e.workers {
		if e.cfg.Keys.IsHotOn(h.Key, o.dev.Name()) {
			return nil
		}
	}
	if !w.dev.Resident() {
		return nil // the CPU proves from the warm key
	}
	if err := e.cfg.Keys.MakeRoomOn(h, w.dev.Name()); err != nil {
		return fmt.Errorf("preload %s: %w", h.Key, err)
	}
	if err := w.dev.Preload(ctx, h.PK); err != nil {
		return fmt.Errorf("preload %s on %s: %w", h.Key, w.dev.Name(), err)
	}
	if kp, ok := w.dev.(KeyPlanner); ok {
		if p, ok := kp.KeyPlan(h.PK); ok {
			w.setPlacement(h.Key, p)
			e.cfg.Log.Info("key placed", "key", h.Key, "device", w.dev.Name(), "whole", p.Whole(), "plan", p.String())
			if p.StreamedBytes() > 0 { // the device reads the host copy for every proof: it stays
				e.cfg.Keys.MarkHotStreaming(h, w.dev.Name())
				if e.cfg.SynthesisWorkers == 0 {
					e.cfg.Log.Info("key streamed: its solves leave half the cores to the device's copies", "key", h.Key,
						"device", w.dev.Name(), "synthesis_workers", synthesisWorkers(runtime.NumCPU(), 1, true))
				}
				return nil
			}
		}
	}
	e.cfg.Keys.MarkHot(h, w.dev.Name())
	return nil
}

// KeyPlacement is how one key uses a device's memory: the bytes of its
// bases resident there and those streamed to it for each proof, the most
// device memory a proof holds, and the plan in words.
type KeyPlacement struct {
	Key                                     string
	ResidentBytes, StreamedBytes, PeakBytes int64
	Plan                                    string
}

// setPlacement records how key uses w's device.
func (w *worker) setPlacement(key string, p KeyPlan) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.placed == nil {
		w.placed = map[string]KeyPlacement{}
	}
	w.placed[key] = KeyPlacement{Key: key, ResidentBytes: p.ResidentBytes(), StreamedBytes: p.StreamedBytes(),
		PeakBytes: p.Peak(), Plan: p.String()}
}
