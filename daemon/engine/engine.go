package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuzk-dev/cuzk/daemon/keys"
)

// Errors callers act on, each saying it is the engine's ("engine: ").
var (
	// ErrDraining means the engine takes no new jobs (it is shutting down).
	ErrDraining = errors.New("engine: draining, not accepting jobs")
	// ErrUnknownJob means no job has the id (or it was forgotten).
	ErrUnknownJob = errors.New("engine: unknown job")
	// ErrNeverFits means a job needs more host memory than the budget.
	ErrNeverFits = errors.New("engine: job can never fit the host memory budget")
	// ErrRequestConflict means a request_id was reused for another request.
	ErrRequestConflict = errors.New("engine: request_id already used for a different request")
	// ErrShutdown ends the jobs still running when the engine closes; they
	// may be submitted again elsewhere.
	ErrShutdown = errors.New("engine: shut down before the job ended")
)

// Config configures an Engine. Zero values take the defaults noted.
type Config struct {
	Devices      []Device      // required: one prover worker each
	Keys         *keys.Manager // required
	QueueSize    int           // queued jobs (default 1024)
	Synthesizers int           // synthesis workers (default runtime.NumCPU())
	// SynthesisWorkers is how many goroutines one synthesis uses
	// (r1cs.WithWorkers). 0 (the default) decides per solve: the cores
	// shared among the solves running at once, halved while a device
	// streams the job's key's bases (synthesisWorkers). Either way the
	// device workers' host work keeps its share.
	SynthesisWorkers int
	// Handoff bounds synthesized jobs waiting for a device (default 2 per device).
	Handoff int
	// HostBudget bounds the bytes of synthesized jobs in flight (0: none).
	HostBudget int64
	// HostTotal bounds what one request may need of host memory at its
	// peak: its key with its compile or one partition's vectors (0: none).
	// The daemon sets it to its host budget (configured, or derived from
	// the machine), so that no request can take the host down alone.
	HostTotal int64
	// Retain is how many ended jobs are remembered for Await and
	// idempotent resubmission (default 4096).
	Retain int
	// Vectors makes the vectors jobs are solved into, outside the Go heap
	// and pinned for the devices (nil: on the Go heap).
	Vectors VectorPool
	Log     *slog.Logger
	Metrics prometheus.Registerer // nil: not registered
	Rand    io.Reader             // proof blinding (default crypto/rand)
}

// Engine schedules jobs over the synthesis pool and the device workers.
type Engine struct {
	cfg     Config
	queue   *queue
	handoff *handoff
	budget  *budget
	vecs    *hostVectors
	metrics *metrics
	start   time.Time
	workers []*worker

	ctx    context.Context // cancelled by Close, with cause ErrShutdown
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	jobs     map[string]*Job
	byReq    map[string]*Job
	ended    []*Job // in end order, for retention
	seq      uint64
	draining bool
	active   int // jobs not ended
	idle     *sync.Cond
	synth    int // jobs synthesizing
	solving  int // jobs inside their solve (synthesisWorkers)
	randMu   sync.Mutex
	uploadMu sync.Mutex // one early key upload at a time (uploadEarly): a second finds the key hot
}

// New starts an engine: its synthesis workers and one worker per device.
func New(cfg Config) (*Engine, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("engine: no devices")
	}
	if cfg.Keys == nil {
		return nil, errors.New("engine: no key manager")
	}
	if cfg.QueueSize < 0 || cfg.Synthesizers < 0 || cfg.Handoff < 0 || cfg.HostBudget < 0 || cfg.HostTotal < 0 || cfg.Retain < 0 {
		return nil, errors.New("engine: negative size in config")
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 1024
	}
	if cfg.Synthesizers == 0 {
		cfg.Synthesizers = runtime.NumCPU()
	}
	if cfg.SynthesisWorkers < 0 {
		return nil, errors.New("engine: negative synthesis workers")
	}
	if cfg.Handoff == 0 {
		cfg.Handoff = 2 * len(cfg.Devices)
	}
	if cfg.Retain == 0 {
		cfg.Retain = 4096
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	e := &Engine{cfg: cfg, queue: newQueue(cfg.QueueSize), handoff: newHandoff(cfg.Handoff), budget: newBudget(cfg.HostBudget, cfg.Synthesizers+cfg.Handoff+len(cfg.Devices)),
		vecs:  newHostVectors(cfg.Vectors),
		start: time.Now(), jobs: map[string]*Job{}, byReq: map[string]*Job{}}
	e.idle = sync.NewCond(&e.mu)
	e.ctx, e.cancel = context.WithCancelCause(context.Background())
	m, err := newMetrics(e, cfg.Metrics)
	if err != nil {
		return nil, err
	}
	e.metrics = m
	for _, d := range cfg.Devices {
		w := &worker{e: e, dev: d}
		e.workers = append(e.workers, w)
		cfg.Keys.AddDevice(d.Name(), d)
	}
	for range cfg.Synthesizers {
		e.wg.Add(1)
		go e.synthesizer()
	}
	for _, w := range e.workers {
		e.wg.Add(1)
		go w.run()
	}
	return e, nil
}

// Submit is SubmitContext without a deadline for the admission.
func (e *Engine) Submit(req Request) (j *Job, existing bool, err error) {
	return e.SubmitContext(context.Background(), req)
}

// SubmitContext queues req once it is admitted (Admit: a request that can
// never fit the host budgets is refused before any work; ctx bounds the
// wait for its shape's counting pass). A request_id already known returns
// its job and existing = true (the request must be the same, see
// sameRequest). A full queue is ErrQueueFull, a draining engine
// ErrDraining.
func (e *Engine) SubmitContext(ctx context.Context, req Request) (j *Job, existing bool, err error) {
	if req.Circuit == nil {
		return nil, false, errors.New("engine: request without a circuit")
	}
	if req.Priority == 0 {
		req.Priority = Normal
	}
	if err := checkInput(req); err != nil {
		return nil, false, err // before the lock: validation never holds up other callers
	}
	if _, err := e.Admit(ctx, req.Circuit, req.partitions()); err != nil {
		return nil, false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if req.RequestID != "" {
		if old, ok := e.byReq[req.RequestID]; ok {
			if err := sameRequest(old.Req, req); err != nil {
				return nil, false, err
			}
			if !retries(old) {
				return old, true, nil
			}
		}
	}
	if e.draining {
		return nil, false, ErrDraining
	}
	e.seq++
	j = &Job{ID: newID(), Req: req, seq: e.seq, index: -1, state: Queued, changed: make(chan struct{}), submitted: time.Now()}
	j.ctx, j.cancel = context.WithCancel(e.ctx)
	queued := []*Job{j}
	if req.partitions() > 1 {
		queued = e.splitLocked(j)
	}
	if err := e.queue.pushAll(queued); err != nil {
		j.cancel()
		return nil, false, err
	}
	j.events = append(j.events, Event{Kind: EventQueued, Time: j.submitted})
	e.jobs[j.ID] = j
	if req.RequestID != "" {
		e.byReq[req.RequestID] = j
	}
	e.active++
	e.metrics.submitted(req.Priority)
	return j, false, nil
}

// Job returns the job with id.
func (e *Engine) Job(id string) (*Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownJob, id)
	}
	return j, nil
}

// Cancel cancels job id wherever it is. A queued or waiting job ends at
// once; a synthesizing or proving one at its next stage boundary.
func (e *Engine) Cancel(id string) (State, error) {
	j, err := e.Job(id)
	if err != nil {
		return 0, err
	}
	j.cancel()
	waiting := []*Job{j}
	if j.parts != nil {
		waiting = j.parts.children
	}
	for _, w := range waiting {
		if e.queue.remove(w) || e.handoff.remove(w) {
			e.end(w, nil, fmt.Errorf("job %s: %w", w.ID, context.Canceled))
		}
	}
	return j.State(), nil
}

// neverFits is ErrNeverFits, naming what and its size, when need exceeds
// the host budget.
func (e *Engine) neverFits(what string, need int64) error {
	if e.cfg.HostBudget > 0 && need > e.cfg.HostBudget {
		return fmt.Errorf("%s needs %d bytes of host memory, the budget is %d: %w", what, need, e.cfg.HostBudget, ErrNeverFits)
	}
	return nil
}

// freeVectors frees vectors no job or budget entry holds any more.
func (e *Engine) freeVectors(vs ...*vectors) {
	for _, v := range vs {
		if err := e.vecs.free(v); err != nil {
			e.cfg.Log.Warn("freeing solved vectors", "err", err)
		}
	}
}

// end finishes j, frees what it holds and logs its timings.
func (e *Engine) end(j *Job, r *Result, err error) {
	if err != nil && errors.Is(context.Cause(j.ctx), ErrShutdown) && !errors.Is(err, ErrShutdown) {
		err = fmt.Errorf("%w: %w", ErrShutdown, err)
	}
	cancelled := err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ErrShutdown))
	if j.reserved > 0 {
		e.budget.release(j.reserved)
		j.reserved = 0
	}
	if j.handle != nil {
		j.handle.Release()
		j.handle = nil
	}
	dropKeyLoad(j)
	j.asg = nil
	j.dropInstanceSoon() // one built ahead for a job that ended before its solve
	if j.vec != nil {    // not handed back to the budget: the job failed or was cancelled
		e.freeVectors(j.vec)
		j.vec = nil
	}
	j.timings.Total = time.Since(j.submitted)
	if r != nil {
		r.Timings.Total = j.timings.Total
	}
	var counted func()
	if j.parent == nil {
		counted = func() { e.metrics.ended(j, r, err, cancelled) }
	}
	if !j.finish(r, err, cancelled, counted) {
		return
	}
	j.cancel()
	if j.parent != nil {
		e.logTiming(j, r, err)
		e.partitionEnded(j, r, err)
		return
	}
	e.logTiming(j, r, err)
	e.mu.Lock()
	e.active--
	e.ended = append(e.ended, j)
	for len(e.ended) > e.cfg.Retain {
		old := e.ended[0]
		e.ended = e.ended[1:]
		delete(e.jobs, old.ID)
		if e.byReq[old.Req.RequestID] == old {
			delete(e.byReq, old.Req.RequestID)
		}
	}
	e.idle.Broadcast()
	e.mu.Unlock()
}

// StopTaking makes every Submit from its return on fail with ErrDraining;
// jobs already taken go on. Drain begins with it.
func (e *Engine) StopTaking() {
	e.mu.Lock()
	e.draining = true
	e.mu.Unlock()
}

// Drain stops taking jobs and waits until every job has ended or ctx is
// done.
func (e *Engine) Drain(ctx context.Context) error {
	e.StopTaking()
	e.mu.Lock()
	defer context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.idle.Broadcast()
		e.mu.Unlock()
	})()
	defer e.mu.Unlock()
	for e.active > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("drain: %d jobs still running: %w", e.active, err)
		}
		e.idle.Wait()
	}
	return nil
}

// Draining reports whether Drain has been called.
func (e *Engine) Draining() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.draining
}

// Close cancels every job, stops the workers and closes the devices.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.draining = true
	var all []*Job
	for _, j := range e.jobs {
		all = append(all, j)
	}
	e.mu.Unlock()
	e.cancel(ErrShutdown)
	e.queue.close()
	e.handoff.close()
	e.wg.Wait()
	for _, j := range e.handoff.drain() { // synthesized, never proved: partitions too
		e.end(j, nil, fmt.Errorf("job %s: %w", j.ID, ErrShutdown))
	}
	for _, j := range all {
		e.end(j, nil, fmt.Errorf("job %s: %w", j.ID, ErrShutdown))
	}
	e.freeVectors(e.budget.drainKept()...) // before the devices that pinned them close
	var errs []error
	for _, w := range e.workers {
		errs = append(errs, w.dev.Close())
	}
	return errors.Join(errs...)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
