package engine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// BatchProver is a device that proves several proofs of one key in one
// call where that saves work: a GPU whose plan for the key streams bases
// from host memory sends each chunk of them once for the whole batch
// (groth16.ProveBatch), not once per proof.
type BatchProver interface {
	// BatchSize is how many proofs of pk the device takes together at
	// most (1: one at a time).
	BatchSize(pk *groth16.ProvingKey) int
	// ProveBatch makes the batch's proofs (groth16.ProveBatch), joined
	// ones included: each BatchProof's Ctx carries its job's trace and
	// cancellation, and its Free hands the job's vectors back as soon as
	// the batch no longer reads them. Like Prove, it is called only by the
	// device's worker.
	ProveBatch(ctx context.Context, pk *groth16.ProvingKey, b groth16.Batch, rnd io.Reader) ([]*groth16.Proof, []error)
}

// readyPK returns the proving key j will be proved with once its key is
// taken (takeKey), or nil while it is not known: the job's handle, or its
// key load's once that ended without error.
func (j *Job) readyPK() *groth16.ProvingKey {
	if j.handle != nil {
		return j.handle.PK
	}
	if l := j.key; l != nil && l.ended() && l.err == nil && l.h != nil {
		return l.h.PK
	}
	return nil
}

// proveSome proves j: alone (prove) unless the device batches j's key
// (BatchProver, BatchSize above 1), else as the first of a batch that the
// jobs of the same key join when they are ready: those ready now at once,
// later ones each time a proof of the batch has done its own part (never
// waiting for one), up to the batch size.
func (w *worker) proveSome(j *Job, prev func(), eligible, prefer func(*Job) bool) (next *Job, release func(), down error) {
	bp, ok := w.dev.(BatchProver)
	pk := j.readyPK()
	if !ok || pk == nil || bp.BatchSize(pk) < 2 {
		return w.prove(j, prev, eligible, prefer)
	}
	return w.proveBatch(bp, pk, j, prev, eligible, prefer)
}

// proveBatch makes the proofs of j and of the jobs of its key pk that join
// it, in one batch on the device. It returns an error only when the device
// could not recover from a failure (the batch's jobs have then failed).
// Each job's vectors go back as soon as the batch no longer reads them
// (BatchProof.Free), so a synthesizer solves the next proof beside the
// batch's device work, and that proof may join the batch; prev (the
// vectors of the proof before) goes back once the batch's first host work
// is done, as in prove.
func (w *worker) proveBatch(bp BatchProver, pk *groth16.ProvingKey, j *Job, prev func(), eligible, prefer func(*Job) bool) (
	next *Job, release func(), down error) {
	e, name := w.e, w.dev.Name()
	handBack := once(prev)
	defer handBack()
	var live []*Job // the jobs in the batch, in its order
	var phases []*proofPhases
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("batch of %s: prove on %s: panic: %v", ids(live), name, p)
			down = w.recoverDevice(err)
			for _, j := range live {
				e.end(j, nil, err)
			}
		}
	}()
	defer w.setCurrent()
	var freeMu sync.Mutex
	// enter makes o one of the batch's proofs; false where o ended instead
	// (its key could not be taken).
	enter := func(o *Job) (groth16.BatchProof, bool) {
		o.timings.Handoff = time.Since(o.marks.ready)
		o.setState(Proving, Event{Kind: EventProving, Device: name})
		if err := e.takeKey(o); err != nil {
			e.end(o, nil, err)
			return groth16.BatchProof{}, false
		}
		if o.handle.PK != pk { // cannot happen: readyPK matched it
			e.end(o, nil, fmt.Errorf("job %s: key %s changed before its batch", o.ID, o.Req.Circuit.Key))
			return groth16.BatchProof{}, false
		}
		ph := &proofPhases{byName: map[string]time.Duration{}}
		live, phases = append(live, o), append(phases, ph)
		w.setCurrent(jobIDs(live)...)
		key, vec, reserved := o.handle.Key, o.vec, o.reserved
		return groth16.BatchProof{
			Ctx: groth16.WithTrace(o.ctx, ph.trace(o, name, handBack)),
			Asg: o.asg,
			Free: func() {
				// The batch no longer reads the job's vectors: they serve
				// the next job of the key.
				freeMu.Lock()
				defer freeMu.Unlock()
				e.freeVectors(e.budget.keep(key, vec, reserved))
				o.vec, o.reserved = nil, 0
			},
		}, true
	}
	size := bp.BatchSize(pk)
	// join takes a ready job of the key from the hand-off, if there is one.
	join := func() (groth16.BatchProof, bool) {
		for {
			// A job of lower priority than the batch's first never joins:
			// it would hold the first one's result back by its own part.
			o := e.handoff.tryTake(func(o *Job) bool {
				return eligible(o) && o.readyPK() == pk && o.Req.Priority >= j.Req.Priority
			}, prefer)
			if o == nil {
				return groth16.BatchProof{}, false
			}
			e.handoff.kick()
			if b, ok := enter(o); ok {
				return b, true
			}
		}
	}
	var first []groth16.BatchProof
	if b, ok := enter(j); ok {
		first = append(first, b)
	}
	for len(first) > 0 && len(first) < size {
		b, ok := join()
		if !ok {
			break
		}
		first = append(first, b)
	}
	if len(first) == 0 {
		return nil, nil, nil
	}
	if err := e.cfg.Keys.MakeRoomOn(live[0].handle, name); err != nil {
		for _, j := range live {
			e.end(j, nil, fmt.Errorf("job %s: key residency on %s: %w", j.ID, name, err))
		}
		return nil, nil, nil
	}
	start := w.startBusy()
	proofs, errs := bp.ProveBatch(e.ctx, pk, groth16.Batch{Proofs: first, Join: join, Max: size}, e.rand())
	wall := time.Since(start)
	w.addBusy(wall)
	if len(proofs) != len(live) || len(errs) != len(live) {
		err := fmt.Errorf("batch of %s on %s: %d results for %d jobs", ids(live), name, len(proofs), len(live))
		down = w.recoverDevice(err)
		for _, j := range live {
			e.end(j, nil, err)
		}
		return nil, nil, down
	}
	var failed error
	for i, j := range live {
		if errs[i] != nil && j.ctx.Err() == nil {
			failed = errs[i]
		}
	}
	if failed != nil {
		// Restore the device before reporting, so that a client seeing the
		// failure sees the device's state after it.
		down = w.recoverDevice(failed)
	}
	if down != nil {
		for _, j := range live {
			j.asg = nil
			e.end(j, nil, fmt.Errorf("job %s: prove on %s (a batch of %d): %w", j.ID, name, len(live), failed))
		}
		return nil, nil, down
	}
	if w.dev.Resident() {
		// Before any job ends: ending releases the job's handle.
		for i, j := range live {
			if errs[i] == nil {
				e.cfg.Keys.MarkHot(j.handle, name)
				break
			}
		}
	}
	made := 0
	for i, j := range live {
		j.timings.Prove = wall / time.Duration(len(live))
		j.asg = nil
		switch {
		case errs[i] != nil && j.ctx.Err() != nil:
			e.end(j, nil, fmt.Errorf("job %s: cancelled while proving on %s: %w", j.ID, name, j.ctx.Err()))
		case errs[i] != nil:
			e.end(j, nil, fmt.Errorf("job %s: prove on %s (a batch of %d): %w", j.ID, name, len(live), errs[i]))
		default:
			made++
			j.timings.Phases, j.timings.SentAheadBytes = phases[i].done()
			r := &Result{Proof: proofs[i], Public: j.public, Device: name}
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				e.verifyAndEnd(j, r)
			}()
		}
	}
	if len(live) > 1 {
		e.metrics.batched.Add(float64(made))
		e.cfg.Log.Info("batch proved", "device", name, "jobs", ids(live), "made", made, "wall", wall)
	}
	return e.handoff.tryTake(eligible, prefer), nil, nil
}

// jobIDs lists the jobs' IDs in order.
func jobIDs(jobs []*Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// ids lists the jobs' IDs, comma separated (for errors and logs).
func ids(jobs []*Job) string { return strings.Join(jobIDs(jobs), ",") }
