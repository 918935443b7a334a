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
	// ProveBatch makes the batch's proofs (groth16.ProveBatch): each
	// BatchProof's Ctx carries its job's trace and cancellation, and its
	// Free hands the job's vectors back as soon as the batch no longer
	// reads them. Like Prove, it is called only by the device's worker.
	ProveBatch(ctx context.Context, pk *groth16.ProvingKey, batch []groth16.BatchProof, rnd io.Reader) ([]*groth16.Proof, []error)
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

// proveSome proves j, with up to the device's batch size less one more
// jobs of the same key that are ready now (never waiting for one), in one
// batch where the device batches that key; else alone (prove).
func (w *worker) proveSome(j *Job, prev func(), eligible, prefer func(*Job) bool) (next *Job, release func(), down error) {
	bp, ok := w.dev.(BatchProver)
	pk := j.readyPK()
	if !ok || pk == nil {
		return w.prove(j, prev, eligible, prefer)
	}
	size := bp.BatchSize(pk)
	jobs := []*Job{j}
	for len(jobs) < size {
		peer := w.e.handoff.tryTake(func(o *Job) bool { return eligible(o) && o.readyPK() == pk }, prefer)
		if peer == nil {
			break
		}
		jobs = append(jobs, peer)
	}
	if len(jobs) == 1 {
		return w.prove(j, prev, eligible, prefer)
	}
	w.e.handoff.kick()
	return w.proveBatch(bp, pk, jobs, prev, eligible, prefer)
}

// proveBatch makes the proofs of jobs, all of key pk, in one batch on the
// device. It returns an error only when the device could not recover from
// a failure (the batch's jobs have then failed). Each job's vectors go
// back as soon as the batch no longer reads them (BatchProof.Free), so a
// synthesizer solves the next proof beside the batch's device work; prev
// (the vectors of the proof before) goes back once the batch's first host
// work is done, as in prove.
func (w *worker) proveBatch(bp BatchProver, pk *groth16.ProvingKey, jobs []*Job, prev func(), eligible, prefer func(*Job) bool) (
	next *Job, release func(), down error) {
	e, name := w.e, w.dev.Name()
	var once sync.Once
	handBack := func() {
		if prev != nil {
			once.Do(prev)
		}
	}
	defer handBack()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("batch %s: prove on %s: panic: %v", strings.Join(ids, ", "), name, p)
			down = w.recoverDevice(err)
			for _, j := range jobs {
				e.end(j, nil, err)
			}
		}
	}()
	w.setCurrent(strings.Join(ids, ","))
	defer w.setCurrent("")
	var live []*Job
	for _, j := range jobs {
		j.timings.Handoff = time.Since(j.marks.ready)
		j.setState(Proving, Event{Kind: EventProving, Device: name})
		if err := e.takeKey(j); err != nil {
			e.end(j, nil, err)
			continue
		}
		if j.handle.PK != pk { // cannot happen: readyPK matched it
			e.end(j, nil, fmt.Errorf("job %s: key %s changed before its batch", j.ID, j.Req.Circuit.Key))
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return nil, nil, nil
	}
	if err := e.cfg.Keys.MakeRoomOn(live[0].handle, name); err != nil {
		for _, j := range live {
			e.end(j, nil, fmt.Errorf("job %s: key residency on %s: %w", j.ID, name, err))
		}
		return nil, nil, nil
	}
	batch := make([]groth16.BatchProof, len(live))
	phases := make([]*proofPhases, len(live))
	var freeMu sync.Mutex
	for i, j := range live {
		phases[i] = &proofPhases{byName: map[string]time.Duration{}}
		key, vec, reserved := j.handle.Key, j.vec, j.reserved
		batch[i] = groth16.BatchProof{
			Ctx: groth16.WithTrace(j.ctx, phases[i].trace(j, name, handBack)),
			Asg: j.asg,
			Free: func() {
				// The batch no longer reads the job's vectors: they serve
				// the next job of the key.
				freeMu.Lock()
				defer freeMu.Unlock()
				e.freeVectors(e.budget.keep(key, vec, reserved))
				j.vec, j.reserved = nil, 0
			},
		}
	}
	start := w.startBusy()
	proofs, errs := bp.ProveBatch(e.ctx, pk, batch, e.rand())
	wall := time.Since(start)
	w.addBusy(wall)
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
			j.timings.Phases = phases[i].done()
			r := &Result{Proof: proofs[i], Public: j.public, Device: name}
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				e.verifyAndEnd(j, r)
			}()
		}
	}
	e.metrics.batched.Add(float64(made))
	e.cfg.Log.Info("batch proved", "device", name, "jobs", strings.Join(ids, ","), "made", made, "wall", wall)
	return e.handoff.tryTake(eligible, prefer), nil, nil
}
