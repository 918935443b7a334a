package engine

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// worker proves the jobs of one device, one at a time.
type worker struct {
	e   *Engine
	dev Device

	idle atomic.Bool // waiting for a job in take

	mu      sync.Mutex
	busy    time.Duration // proving time of the jobs done
	since   time.Time     // start of the proof running now (zero: none)
	done    int64         // jobs the worker took and is done with
	current []string      // the jobs it proves now
	down    error
	placed  map[string]KeyPlacement // by key, as preloaded (Status lists those still hot here)
	// early is the job taken while the proof before it still ran, once
	// that proof's quotient was done; announced is the job whose first
	// quotient vector the device was told to send ahead, and asking
	// whether the device holds a source of that vector (ahead.go).
	early, announced *Job
	asking           bool
	watch            *aheadWatch // the current proof's wait for the next job (ahead.go)
}

func (w *worker) run() {
	defer w.e.wg.Done()
	name := w.dev.Name()
	hot := func(j *Job) bool { return w.e.cfg.Keys.IsHotOn(j.Req.Circuit.Key, name) }
	eligible := func(j *Job) bool { return hot(j) || !w.e.heldByIdleOther(j, w) }
	var next *Job      // taken at the end of the last proof
	var release func() // the last proof's vectors, handed back during the next one (see prove)
	defer func() {
		if release != nil {
			release()
		}
	}()
	for {
		j := next
		if j == nil {
			w.idle.Store(true)
			var err error
			j, err = w.e.handoff.take(w.e.ctx, eligible, hot)
			w.idle.Store(false)
			if err != nil {
				return
			}
		}
		w.e.handoff.kick() // jobs whose key this device holds may go to others now
		var err error
		next, release, err = w.proveSome(j, release, eligible, hot)
		if err != nil {
			w.mu.Lock()
			w.down = err
			w.mu.Unlock()
			w.e.cfg.Log.Error("device out of service", "device", name, "err", err)
			return
		}
	}
}

// prove makes j's proof on the device. It returns an error only when the
// device could not recover from a failure (j has then failed).
//
// prev hands back the vectors of the proof before j's: prove calls it once
// j's Prove has done its host work (groth16.PhaseHost), or at its end. A
// synthesizer waiting for host memory then solves beside j's device work,
// not beside the host work at its start, whose copies would run at half
// speed with every core solving (docs/perf.md). When another job is waiting
// for this device at j's end, prove takes it (next) and leaves j's vectors
// to it in the same way (release); otherwise it hands them back at once.
func (w *worker) prove(j *Job, prev func(), eligible, prefer func(*Job) bool) (next *Job, release func(), down error) {
	e, name := w.e, w.dev.Name()
	handBack := once(prev)
	defer handBack()
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("job %s: prove on %s: panic: %v", j.ID, name, p)
			w.stopWatch()
			w.dropAhead()
			down = w.recoverDevice(err)
			e.end(j, nil, err)
			next, release = w.afterFailure(down)
		}
	}()
	j.timings.Handoff = time.Since(j.marks.ready)
	j.setState(Proving, Event{Kind: EventProving, Device: name})
	w.setCurrent(j.ID)
	defer w.setCurrent()
	if err := e.takeKey(j); err != nil {
		w.dropAhead() // j's vectors go back
		e.end(j, nil, err)
		return nil, nil, nil
	}
	if err := e.cfg.Keys.MakeRoomOn(j.handle, name); err != nil {
		w.dropAhead()
		e.end(j, nil, fmt.Errorf("job %s: key residency on %s: %w", j.ID, name, err))
		return nil, nil, nil
	}
	phases := &proofPhases{byName: map[string]time.Duration{}}
	phases.afterQuotient = sync.OnceFunc(func() { w.takeAhead(j, eligible, prefer) })
	ctx := groth16.WithTrace(j.ctx, phases.trace(j, name, handBack))
	start := w.startBusy()
	proof, err := w.dev.Prove(ctx, j.handle.PK, j.asg, e.rand())
	w.stopWatch()
	j.timings.Prove = time.Since(start)
	w.addBusy(j.timings.Prove)
	if err != nil && j.ctx.Err() != nil {
		// Cancelled: the device stopped at a stage boundary and freed the job's memory.
		w.dropAhead()
		e.end(j, nil, fmt.Errorf("job %s: cancelled while proving on %s: %w", j.ID, name, j.ctx.Err()))
		next, release = w.afterFailure(nil)
		return next, release, nil
	}
	if err != nil {
		// Restore the device before reporting, so that a client seeing the
		// failure sees the device's state after it.
		w.dropAhead()
		down := w.recoverDevice(err)
		e.end(j, nil, fmt.Errorf("job %s: prove on %s: %w", j.ID, name, err))
		next, release = w.afterFailure(down)
		return next, release, down
	}
	if w.dev.Resident() {
		e.cfg.Keys.MarkHot(j.handle, name)
	}
	// The proof is made: the job's vectors (and their reservation) serve
	// the next job of its key.
	key, vec, reserved := j.handle.Key, j.vec, j.reserved
	release = func() { e.freeVectors(e.budget.keep(key, vec, reserved)) }
	j.asg, j.vec, j.reserved = nil, nil, 0
	j.timings.Phases, j.timings.SentAheadBytes = phases.done()
	if next = w.nextAfter(eligible, prefer); next == nil {
		release()
		release = nil
	}
	r := &Result{Proof: proof, Public: j.public, Device: name}
	// The check runs beside the device's next job: the pairing is host work
	// the GPU need not wait for.
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		e.verifyAndEnd(j, r)
	}()
	return next, release, nil
}

// afterFailure returns the job to prove after a proof that failed (its
// announcement already dropped): the one taken early, or none while the
// device is out of service (down), which gives that job back to the others.
func (w *worker) afterFailure(down error) (*Job, func()) {
	early := w.takeEarly()
	if early == nil {
		return nil, nil
	}
	if down != nil {
		w.giveBack(early, down)
		return nil, nil
	}
	return early, nil
}

// once returns a function that calls f the first time it is called (f
// may be nil): the hand-back of the last proof's vectors, which the new
// proof's host work or its end triggers, whichever comes first.
func once(f func()) func() {
	if f == nil {
		return func() {}
	}
	return sync.OnceFunc(f)
}

// proofPhases sums one proof's phases by name for its timings.
type proofPhases struct {
	mu     sync.Mutex
	byName map[string]time.Duration
	// afterQuotient, when not nil, runs when the proof's quotient and L‖H
	// call has been reported (groth16.PhaseQuotientLH), before its A and
	// B MSMs.
	afterQuotient func()
	// sentAhead sums the bytes the device had received ahead of the
	// proof's calls (groth16.SentAhead details).
	sentAhead int64
}

// trace records each phase of j's proof on device and sends it as an
// event; the end of Prove's own host work hands the last proof's vectors
// back (handBack), as the new proof no longer needs them.
func (p *proofPhases) trace(j *Job, device string, handBack func()) *groth16.Trace {
	return &groth16.Trace{PhaseDone: func(info groth16.PhaseInfo) {
		if info.Phase == groth16.PhaseHost && info.Call == "" {
			handBack()
		}
		if info.Phase == groth16.PhaseQuotientLH && info.Call == "" && p.afterQuotient != nil {
			p.afterQuotient()
		}
		name := phaseName(info)
		p.mu.Lock()
		p.byName[name] += info.Duration
		if a, ok := info.Detail.(groth16.SentAhead); ok {
			p.sentAhead += a.SentAheadBytes()
		}
		p.mu.Unlock()
		j.event(Event{Kind: EventPhase, Phase: name, Duration: info.Duration, Device: device})
	}}
}

// done returns the sums once Prove has returned: the phases' durations
// by name, and the bytes sent ahead.
func (p *proofPhases) done() (map[string]time.Duration, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byName, p.sentAhead
}

// verifyAndEnd checks r's proof against the job's verifying key (unless
// the request skipped it) and ends the job.
func (e *Engine) verifyAndEnd(j *Job, r *Result) {
	if !j.Req.SkipVerify {
		start := time.Now()
		err := groth16.Verify(j.handle.VK, r.Proof, r.Public)
		j.timings.Verify = time.Since(start)
		if err != nil {
			e.end(j, nil, fmt.Errorf("job %s: verify proof from %s: %w", j.ID, r.Device, err))
			return
		}
		r.Verified = true
	}
	r.Timings = j.timings
	e.end(j, r, nil)
}

func (w *worker) recoverDevice(err error) error {
	if rerr := w.dev.Recover(err); rerr != nil {
		return fmt.Errorf("%w: recover after %v: %w", errDeviceDown, err, rerr)
	}
	w.e.cfg.Keys.ForgetDevice(w.dev.Name())
	w.e.vecs.repin(w.dev)
	w.e.cfg.Log.Warn("device recovered after a failed job", "device", w.dev.Name(), "err", err)
	return nil
}

// setCurrent records the jobs the worker proves now (a batch's grow as
// jobs join it); none when it is idle again, which counts the jobs it held
// as done.
func (w *worker) setCurrent(ids ...string) {
	w.mu.Lock()
	if len(ids) == 0 {
		w.done += int64(len(w.current))
	}
	w.current = ids
	w.mu.Unlock()
}

// startBusy marks a proof's start, so that the busy time read meanwhile
// counts it so far.
func (w *worker) startBusy() time.Time {
	now := time.Now()
	w.mu.Lock()
	w.since = now
	w.mu.Unlock()
	return now
}

func (w *worker) addBusy(d time.Duration) {
	w.mu.Lock()
	w.busy += d
	w.since = time.Time{}
	w.mu.Unlock()
}

// busyLocked is the proving time so far, the running proof's included.
func (w *worker) busyLocked(now time.Time) time.Duration {
	if w.since.IsZero() {
		return w.busy
	}
	return w.busy + now.Sub(w.since)
}

// heldByIdleOther reports whether another device that is idle holds j's
// key: that device takes the job, so a job goes to the GPU that already
// has its key whenever that GPU is free.
func (e *Engine) heldByIdleOther(j *Job, me *worker) bool {
	for _, w := range e.workers {
		if w != me && w.idle.Load() && w.dev.Resident() && e.cfg.Keys.IsHotOn(j.Req.Circuit.Key, w.dev.Name()) {
			return true
		}
	}
	return false
}

// rand returns the blinding source, serialized when it is not crypto/rand.
func (e *Engine) rand() io.Reader { return lockedReader{r: e.cfg.Rand, mu: &e.randMu} }

type lockedReader struct {
	r  io.Reader
	mu *sync.Mutex
}

func (l lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// phaseName names a reported phase in a job's timings: Prove's own phases
// by their name, a backend's sub-phases under the call that did them
// ("msm A: msm sort").
func phaseName(info groth16.PhaseInfo) string {
	if info.Call == "" || info.Call == info.Phase {
		return string(info.Phase)
	}
	return string(info.Call) + ": " + string(info.Phase)
}
