package engine

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// A worker whose device is a QuotientPrefetcher gives the device, as soon
// as its current proof's quotient is done, a source of the next proof's
// first quotient vector (its A evaluations). The device asks the source
// beside each chunk of the proof's A and B MSMs that leaves the link room;
// once a job is ready, the source takes it early (rather than at the
// proof's end) and answers its vector, which the device sends beside the
// chunks left: the next proof's quotient then starts without waiting for
// it (at 2^27, 4.3 GB, about 80 ms of link a proof). The job stays this
// worker's from then on, so its vectors cannot go back (and be reused)
// while the device may still read them; the announcement is dropped before
// they do.
//
// Taking early is skipped while another device is idle (that device takes
// the job now), and a job taken early gives way at the proof's end to one
// that outranks it, which arrived meanwhile.

// takeAhead runs once j's quotient is done (its fused phase reported): it
// gives the device the source of the next proof's vector (nextVector).
func (w *worker) takeAhead(j *Job, eligible, prefer func(*Job) bool) {
	qp, ok := w.dev.(QuotientPrefetcher)
	if !ok || j.handle == nil {
		return
	}
	w.mu.Lock()
	w.announced = nil // j's quotient took or dropped what was sent for it
	w.asking = true
	w.mu.Unlock()
	pk := j.handle.PK
	next := func() []fr.Element { return w.nextVector(pk, eligible, prefer) }
	if err := qp.PrefetchQuotient(context.WithoutCancel(j.ctx), next); err != nil {
		w.e.cfg.Log.Warn("asking for the next proof's quotient vector", "device", w.dev.Name(), "err", err)
	}
}

// nextVector is the source takeAhead gives the device, run on the device's
// own thread: the A evaluations of the job to prove next, taken early from
// the hand-off when none was, where that job is of key pk and solved; nil
// while there is none (the device asks again beside its next chunk).
func (w *worker) nextVector(pk *groth16.ProvingKey, eligible, prefer func(*Job) bool) []fr.Element {
	w.mu.Lock()
	n := w.early
	w.mu.Unlock()
	if n == nil {
		if w.e.otherIdle(w) {
			return nil
		}
		if n = w.e.handoff.tryTake(eligible, prefer); n == nil {
			return nil
		}
		w.e.handoff.kick()
		w.mu.Lock()
		w.early = n
		w.mu.Unlock()
	}
	if n.asg == nil || n.readyPK() != pk {
		return nil // another key: its quotient is another size, and its key not yet taken
	}
	w.mu.Lock()
	w.announced = n
	w.mu.Unlock()
	return n.asg.A
}

// dropAhead withdraws the announced vector, waiting for its upload, so
// that the announced job's vectors may go back.
func (w *worker) dropAhead() {
	w.mu.Lock()
	asked := w.asking || w.announced != nil
	w.announced, w.asking = nil, false
	w.mu.Unlock()
	if !asked {
		return
	}
	if err := w.dev.(QuotientPrefetcher).PrefetchQuotient(context.Background(), nil); err != nil {
		w.e.cfg.Log.Warn("dropping the next proof's quotient vector", "device", w.dev.Name(), "err", err)
	}
}

// takeEarly returns the job taken early and forgets it.
func (w *worker) takeEarly() *Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.early
	w.early = nil
	return n
}

// nextAfter returns the job to prove after a proof that succeeded: the one
// taken early, unless a job that outranks it came meanwhile (it then goes
// back to the hand-off, its announcement dropped), else the best now.
func (w *worker) nextAfter(eligible, prefer func(*Job) bool) *Job {
	h := w.e.handoff
	early := w.takeEarly()
	if early == nil {
		return h.tryTake(eligible, prefer)
	}
	better := h.tryTake(func(o *Job) bool { return eligible(o) && o.Req.Priority > early.Req.Priority }, prefer)
	if better == nil {
		return early
	}
	w.giveBack(early, ErrShutdown)
	return better
}

// giveBack returns a job taken early to the hand-off for any device (its
// announcement dropped first), or ends it with cause once the hand-off is
// closed.
func (w *worker) giveBack(j *Job, cause error) {
	w.dropAhead()
	if !w.e.handoff.putBack(j) {
		w.e.end(j, nil, fmt.Errorf("job %s: %w", j.ID, cause))
	}
}

// otherIdle reports whether a device other than me's waits for a job.
func (e *Engine) otherIdle(me *worker) bool {
	for _, w := range e.workers {
		if w != me && w.idle.Load() {
			return true
		}
	}
	return false
}
