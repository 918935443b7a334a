package engine

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// A worker whose device is a QuotientPrefetcher gives the device, as soon
// as its current proof's quotient is done, a source of the next proof's
// first quotient vector (its A evaluations), and takes the job to prove
// next early (rather than at the proof's end): at once if one is ready,
// else as soon as one is, by a watcher beside the proof's A and B MSMs.
// The device asks the source beside each chunk of those MSMs that leaves
// the link room, and sends the vector beside the chunks left: the next
// proof's quotient then starts without waiting for it (at 2^27, 4.3 GB,
// about 80 ms of link a proof). The job stays this worker's from then on,
// so its vectors cannot go back (and be reused) while the device may still
// read them; the announcement is dropped before they do.
//
// The source runs on the device's own thread, so it only reads what the
// worker or its watcher published (an atomic pointer): it takes no lock,
// since the key manager's may be held by a caller waiting for that very
// thread (an eviction).
//
// Taking early is skipped while another device is idle (that device takes
// the job now), and a job taken early gives way at the proof's end to one
// that outranks it, which arrived meanwhile.

// aheadWatch is a proof's wait for the job to prove next: the vector it
// published for the device's source, and the watcher goroutine's end.
type aheadWatch struct {
	vec    atomic.Pointer[[]fr.Element]
	cancel context.CancelFunc
	done   chan struct{}
}

// takeAhead runs once j's quotient is done (its fused phase reported): it
// gives the device the source of the next proof's vector, and takes the
// next job now, or starts a watcher that takes it once one is ready.
func (w *worker) takeAhead(j *Job, eligible, prefer func(*Job) bool) {
	qp, ok := w.dev.(QuotientPrefetcher)
	if !ok || j.handle == nil {
		return
	}
	pk := j.handle.PK
	wa := &aheadWatch{done: make(chan struct{})}
	w.mu.Lock()
	w.announced = nil // j's quotient took or dropped what was sent for it
	w.asking = true
	w.watch = wa
	w.mu.Unlock()
	source := func() []fr.Element {
		if v := wa.vec.Load(); v != nil {
			return *v
		}
		return nil
	}
	if err := qp.PrefetchQuotient(context.WithoutCancel(j.ctx), source); err != nil {
		w.e.cfg.Log.Warn("asking for the next proof's quotient vector", "device", w.dev.Name(), "err", err)
	}
	if w.takeNext(wa, pk, w.e.handoff.tryTake(eligible, prefer)) {
		close(wa.done)
		return
	}
	ctx, cancel := context.WithCancel(w.e.ctx)
	wa.cancel = cancel
	go func() {
		defer close(wa.done)
		if n, err := w.e.handoff.take(ctx, eligible, prefer); err == nil {
			w.takeNext(wa, pk, n)
		}
	}()
}

// takeNext makes n (when not nil) the job this worker proves next, and
// publishes its A evaluations to the device's source where it is of key pk
// and solved; it reports whether it took n. A job found while another
// device is idle goes back to the hand-off for that device.
func (w *worker) takeNext(wa *aheadWatch, pk *groth16.ProvingKey, n *Job) bool {
	if n == nil {
		return false
	}
	if w.e.otherIdle(w) {
		if !w.e.handoff.putBack(n) {
			w.e.end(n, nil, fmt.Errorf("job %s: %w", n.ID, ErrShutdown))
		}
		return true
	}
	w.e.handoff.kick()
	announce := n.asg != nil && n.readyPK() == pk // another key: its quotient is another size
	w.mu.Lock()
	w.early = n
	if announce {
		w.announced = n // before the device can see the vector
	}
	w.mu.Unlock()
	if announce {
		a := n.asg.A
		wa.vec.Store(&a)
	}
	return true
}

// stopWatch ends the current proof's watcher, if any, and waits for it:
// once it returns, the job taken early (if any) is settled.
func (w *worker) stopWatch() {
	w.mu.Lock()
	wa := w.watch
	w.watch = nil
	w.mu.Unlock()
	if wa == nil {
		return
	}
	if wa.cancel != nil {
		wa.cancel()
	}
	<-wa.done
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

// readyJobs counts the synthesized jobs waiting for a device: those in the
// hand-off and those a worker took early, which wait for its proof's end.
func (e *Engine) readyJobs() int {
	n := e.handoff.len()
	for _, w := range e.workers {
		w.mu.Lock()
		if w.early != nil {
			n++
		}
		w.mu.Unlock()
	}
	return n
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
