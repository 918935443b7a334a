package engine

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// A job's key loads beside its synthesis. A synthesizer that takes a job
// starts the key's Acquire on a goroutine of its own (keyLoad) and solves
// at once from the shape's counts (keys.Shape, which admission computed):
// a cold key (a raw file to read, a development setup) then costs the
// first partition only what is still missing when its solve ends. A
// solved job whose key still loads waits in the hand-off, not on a device,
// so a device proves other keys' jobs meanwhile (handoff.bestLocked); the
// load's end wakes the workers, and the one that takes the job gets the
// key's handle from awaitKey. A load that fails fails the job, naming the
// key, and nothing else. On a daemon
// with one GPU the loaded key is uploaded there at once (uploadEarly),
// still beside the solve.
//
// The overlap holds the key's load (with a development key's compile and
// setup scalars) beside the vectors solved meanwhile, which admission's
// peak (Need.Peak) counts one after the other: where HostTotal bounds the
// host and the two together would pass it, the job waits for its key
// before it solves, as before.

// keyLoad is one job's Acquire running beside its synthesis. done closes
// when it returns (and an early upload has ended); h and err are set before.
type keyLoad struct {
	done chan struct{}
	h    *keys.Handle
	err  error
}

// startKeyLoad starts j's Acquire under j's context: a job cancelled or
// ended leaves the load (keys.Manager.Acquire) and a handle that arrives
// anyway is released (dropKeyLoad).
func (e *Engine) startKeyLoad(j *Job) *keyLoad {
	l := &keyLoad{done: make(chan struct{})}
	go func() {
		defer e.handoff.kick() // the job may go to a device now (handoff.bestLocked)
		defer close(l.done)
		defer func() {
			if p := recover(); p != nil {
				if l.h == nil {
					l.err = fmt.Errorf("key %s: acquire: panic: %v", j.Req.Circuit.Key, p)
					return
				}
				// The key is there; only its early upload failed: the proof uploads it.
				e.cfg.Log.Warn("key upload beside the synthesis panicked: the proof uploads it", "job", j.ID,
					"key", l.h.Key, "panic", p)
			}
		}()
		l.h, l.err = e.cfg.Keys.Acquire(j.ctx, j.Req.Circuit)
		if l.err == nil {
			j.event(Event{Kind: EventKeyReady}) // when it is: before or after the solve
			e.uploadEarly(j, l.h)
		}
	}()
	return l
}

// uploadEarly makes a key just loaded resident on the daemon's one device
// while the job still solves, so that its first proof does not upload the
// bases itself (a 2^27 key's 46-61 GiB). With several devices the job's
// device is not known yet: the proof uploads where it runs. A failed
// upload is logged and left to that proof, which uploads again.
func (e *Engine) uploadEarly(j *Job, h *keys.Handle) {
	if len(e.workers) != 1 || !e.workers[0].dev.Resident() {
		return
	}
	e.uploadMu.Lock()
	defer e.uploadMu.Unlock()
	if err := e.makeHot(j.ctx, h, e.workers[0]); err != nil && j.ctx.Err() == nil {
		e.cfg.Log.Warn("key upload beside the synthesis failed: the proof uploads it", "job", j.ID, "key", h.Key, "err", err)
	}
}

// keyReady reports whether j's key may be proved with now: acquired by the
// synthesizer, or its load beside the synthesis has ended (with an error,
// which the device worker reports at once).
func (j *Job) keyReady() bool { return j.key == nil || j.key.ended() }

// ended reports whether the load has returned.
func (l *keyLoad) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// failed returns the load's error once it has ended with one; nil while
// it runs or when it succeeded.
func (l *keyLoad) failed() error {
	if !l.ended() {
		return nil
	}
	return l.err
}

// overlapKey reports whether j's key (of shape sh) may load beside its
// synthesis: always without a host bound, else when the load's peak
// (keys.Manager.LoadBytes: a development key's compile and setup scalars
// included) and the vectors the synthesizers may fill meanwhile (the job
// budget, or all of j's partitions without one) fit it together.
func (e *Engine) overlapKey(j *Job, sh keys.Shape) bool {
	vectors := e.cfg.HostBudget
	if vectors == 0 {
		vectors = sh.VectorBytes() * int64(j.Req.partitions())
	}
	return e.loadFitsBeside(j.Req.Circuit, sh, vectors)
}

// loadFitsBeside reports whether a load of c's key (of shape sh) fits
// HostTotal beside vectors bytes of solved vectors: always without a
// bound, else by the load's peak (keys.Manager.LoadBytes).
func (e *Engine) loadFitsBeside(c *registry.Resolved, sh keys.Shape, vectors int64) bool {
	t := e.cfg.HostTotal
	return t == 0 || e.cfg.Keys.LoadBytes(c, sh)+vectors <= t
}

// takeKey gives j the handle its load beside the synthesis acquired (the
// hand-off gives a device only jobs whose load has ended); nothing when the
// synthesizer acquired the key itself. On the load's error j keeps the load
// for end to drop.
func (e *Engine) takeKey(j *Job) error {
	l := j.key
	if l == nil {
		return nil
	}
	select {
	case <-l.done:
	case <-j.ctx.Done(): // not reached through the hand-off: a load there has ended
		return fmt.Errorf("job %s: waiting for key %s: %w", j.ID, j.Req.Circuit.Key, j.ctx.Err())
	}
	if l.err != nil {
		return fmt.Errorf("job %s: key: %w", j.ID, l.err)
	}
	j.key, j.handle = nil, l.h
	j.timings.KeyLoad = l.h.LoadTime
	return nil
}

// dropKeyLoad lets go of a load j no longer waits for: its handle, when
// it comes, is released.
func dropKeyLoad(j *Job) {
	l := j.key
	if l == nil {
		return
	}
	j.key = nil
	go func() {
		<-l.done
		if l.h != nil {
			l.h.Release()
		}
	}()
}
