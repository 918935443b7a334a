package engine

import (
	"context"
	"fmt"
)

// A worker whose device is a QuotientPrefetcher takes the job it will prove
// next as soon as its current proof's quotient is done, rather than at the
// proof's end, and announces that job's first quotient vector to the
// device, which sends it beside the current proof's A and B MSMs: the next
// proof's quotient then starts without waiting for it (at 2^27, 4.3 GB,
// about 80 ms of link a proof). The job stays this worker's from then on,
// so its vectors cannot go back (and be reused) while the device may still
// read them; the announcement is dropped before they do.
//
// Taking early is skipped while another device is idle (that device takes
// the job now), and a job taken early gives way at the proof's end to one
// that outranks it, which arrived meanwhile.

// takeAhead runs once j's quotient is done (its fused phase reported): it
// takes the job to prove next from the hand-off and, where that job is of
// j's key and solved, announces its first quotient vector.
func (w *worker) takeAhead(j *Job, eligible, prefer func(*Job) bool) {
	qp, ok := w.dev.(QuotientPrefetcher)
	if !ok {
		return
	}
	w.mu.Lock()
	taken := w.early != nil
	w.announced = nil // j's quotient took or dropped what was sent for it
	w.mu.Unlock()
	if taken || w.e.otherIdle(w) {
		return
	}
	n := w.e.handoff.tryTake(eligible, prefer)
	if n == nil {
		return
	}
	w.e.handoff.kick()
	w.mu.Lock()
	w.early = n
	w.mu.Unlock()
	if n.asg == nil || j.handle == nil || n.readyPK() != j.handle.PK {
		return // another key: its quotient is another size, and its key not yet taken
	}
	if err := qp.PrefetchQuotient(context.WithoutCancel(j.ctx), n.asg.A); err != nil {
		w.e.cfg.Log.Warn("announcing the next proof's quotient vector", "device", w.dev.Name(), "job", n.ID, "err", err)
		return
	}
	w.mu.Lock()
	w.announced = n
	w.mu.Unlock()
}

// dropAhead withdraws the announced vector, waiting for its upload, so
// that the announced job's vectors may go back.
func (w *worker) dropAhead() {
	w.mu.Lock()
	n := w.announced
	w.announced = nil
	w.mu.Unlock()
	if n == nil {
		return
	}
	if err := w.dev.(QuotientPrefetcher).PrefetchQuotient(context.Background(), nil); err != nil {
		w.e.cfg.Log.Warn("dropping the next proof's quotient vector", "device", w.dev.Name(), "job", n.ID, "err", err)
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
