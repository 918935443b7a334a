package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Priority orders jobs; higher runs first.
type Priority int

// Priorities, lowest first.
const (
	Low Priority = iota + 1
	Normal
	High
	Critical
)

func (p Priority) String() string {
	switch p {
	case Low:
		return "low"
	case Normal:
		return "normal"
	case High:
		return "high"
	case Critical:
		return "critical"
	}
	return "unknown"
}

// State is where a job is.
type State int

// Job states.
const (
	Queued State = iota + 1
	Synthesizing
	Ready // synthesized, waiting for a device
	Proving
	Done
	Failed
	Cancelled
)

func (s State) String() string {
	return [...]string{"unknown", "queued", "synthesizing", "ready", "proving", "done", "failed", "cancelled"}[s]
}

// Ended reports whether s is final.
func (s State) Ended() bool { return s >= Done }

// Request is one proof to make.
type Request struct {
	RequestID string // caller's id; a repeat returns the same job ("" : none)
	Circuit   *registry.Resolved
	// Input is one input of the circuit's encoding, or with Partitions > 1
	// that many inputs concatenated: partition k is bytes [k·size, (k+1)·size).
	Input []byte
	// Partitions is how many proofs of the one circuit the job makes (the
	// C2 shape: one per partition, returned in order); 0 means 1.
	Partitions int
	Priority   Priority
	SkipVerify bool
}

// partitions is the request's partition count (at least 1).
func (r Request) partitions() int { return max(1, r.Partitions) }

// EventKind is the kind of a job event.
type EventKind int

// Event kinds, in the order a job passes them, except EventKeyReady: a key
// loading beside the job's synthesis (keyload.go) is ready before or after
// EventSynthesisDone, at most by the time the job proves.
const (
	EventQueued EventKind = iota + 1
	EventKeyReady
	EventSynthesisDone
	EventProving
	EventPhase
	EventDone
	EventFailed
	EventCancelled
)

// Event is one step of a job's progress. A multi-partition job carries its
// partitions' events, numbered by Partition.
type Event struct {
	Kind      EventKind
	Partition int
	Time      time.Time
	Phase     string        // EventPhase: the prover phase
	Duration  time.Duration // EventPhase: its duration
	Device    string
	Err       error // EventFailed
}

// Timings are one job's durations, and the goroutines its solve ran on.
type Timings struct {
	Queue, KeyLoad, Synthesis, Handoff, Prove, Verify, Total time.Duration
	Phases                                                   map[string]time.Duration
	// SynthesisWorkers is the goroutines the solve ran on (Engine's
	// synthesisWorkers); 0 for a multi-partition job's own Result, whose
	// partitions each say theirs.
	SynthesisWorkers int
	// SentAheadBytes are the bytes of the proof's input its device had
	// received before the calls that read them (the quotient's A
	// evaluations, sent beside the proof before: QuotientPrefetcher); 0
	// where none, and for a multi-partition job's own Result.
	SentAheadBytes int64
}

// Result is a finished proof; a multi-partition job's Result holds its
// partitions' results in order in Partitions (and no Proof of its own).
type Result struct {
	Proof      *groth16.Proof
	Public     []fr.Element // without the constant 1
	Timings    Timings
	Device     string
	Verified   bool
	Partitions []*Result
}

// Job is one request's life in the engine. Its exported methods are safe
// for concurrent use.
type Job struct {
	ID  string
	Req Request

	ctx    context.Context
	cancel context.CancelFunc
	seq    uint64
	index  int // in the queue heap; -1 when not queued

	mu      sync.Mutex
	state   State
	events  []Event
	changed chan struct{} // closed and replaced on every event
	result  *Result
	err     error

	// A partition of a multi-partition job: its parent and index. A parent
	// is never queued itself; its partitions are, and report to it.
	parent *Job
	part   int
	parts  *partitionState

	// The instance (witness values, trees), built once by the synthesizer
	// or ahead of it (prefetchInstance), dropped once solved or ended.
	instMu   sync.Mutex
	instDone bool
	inst     r1cs.Circuit
	instErr  error

	// Pipeline data, owned by the stage holding the job.
	handle    *keys.Handle
	key       *keyLoad // the key loading beside the synthesis, until takeKey takes its handle
	asg       *r1cs.Assignment
	vec       *vectors // the memory asg lies in, kept or freed when the job ends
	public    []fr.Element
	reserved  int64
	submitted time.Time
	marks     struct{ synthStart, ready, proveStart time.Time }
	timings   Timings
}

// State returns the job's current state.
func (j *Job) State() State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

// Priority is the job's priority.
func (j *Job) Priority() Priority { return j.Req.Priority }

func (j *Job) setState(s State, ev Event) {
	j.mu.Lock()
	if j.state.Ended() {
		j.mu.Unlock()
		return
	}
	j.state = s
	if ev.Kind != 0 {
		j.appendLocked(ev)
	}
	j.mu.Unlock()
	j.forward(s, ev)
}

func (j *Job) event(ev Event) {
	j.mu.Lock()
	if j.state.Ended() {
		j.mu.Unlock()
		return
	}
	j.appendLocked(ev)
	j.mu.Unlock()
	j.forward(0, ev)
}

// forward passes a partition's state and event to its parent: the parent
// moves forward only (queued → synthesizing → ready → proving) and records
// the event under the partition's number.
func (j *Job) forward(s State, ev Event) {
	p := j.parent
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state.Ended() {
		return
	}
	if s > p.state {
		p.state = s
	}
	if ev.Kind != 0 {
		ev.Partition = j.part
		p.appendLocked(ev)
	}
}

func (j *Job) appendLocked(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	j.events = append(j.events, ev)
	close(j.changed)
	j.changed = make(chan struct{})
}

// finish ends the job once: with r (Done), or err (Failed, or Cancelled
// when the job's context was cancelled). It reports whether it ended it.
// counted, when not nil and the job ends here, runs before anyone waiting
// for the job sees its end (the job's metrics: a client that has its
// result reads them counted).
func (j *Job) finish(r *Result, err error, cancelled bool, counted func()) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state.Ended() {
		return false
	}
	if counted != nil {
		counted()
	}
	switch {
	case cancelled:
		j.state, j.err = Cancelled, err
		j.appendLocked(Event{Kind: EventCancelled, Err: err})
	case err != nil:
		j.state, j.err = Failed, err
		j.appendLocked(Event{Kind: EventFailed, Err: err})
	default:
		j.state, j.result = Done, r
		j.appendLocked(Event{Kind: EventDone, Device: r.Device})
	}
	return true
}

// partitionState collects a multi-partition job's partitions as they end.
type partitionState struct {
	mu        sync.Mutex
	children  []*Job
	results   []*Result
	remaining int
	err       error // the first partition's failure
}

// Outcome returns the job's result or error once it has ended; ok is
// false while it runs.
func (j *Job) Outcome() (r *Result, err error, ok bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.result, j.err, j.state.Ended()
}

// Wait blocks until the job ends or ctx is done.
func (j *Job) Wait(ctx context.Context) (*Result, error) {
	for {
		j.mu.Lock()
		if j.state.Ended() {
			r, err := j.result, j.err
			j.mu.Unlock()
			return r, err
		}
		ch := j.changed
		j.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Watch calls fn for every event of the job, past and future, until the
// job ends, fn fails or ctx is done.
func (j *Job) Watch(ctx context.Context, fn func(Event) error) error {
	next := 0
	for {
		j.mu.Lock()
		evs := j.events[next:]
		next = len(j.events)
		ended := j.state.Ended()
		ch := j.changed
		j.mu.Unlock()
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		if ended {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errInstanceDropped is instance's answer after dropInstance.
var errInstanceDropped = errors.New("engine: the job's instance was dropped")

// instance returns the job's circuit instance, building it on the first
// call (a panic in the build is its error); concurrent calls wait for that
// one.
func (j *Job) instance() (r1cs.Circuit, error) {
	j.instMu.Lock()
	defer j.instMu.Unlock()
	if !j.instDone {
		j.instDone = true
		func() {
			defer func() {
				if p := recover(); p != nil {
					j.instErr = fmt.Errorf("build the instance: panic: %v", p)
				}
			}()
			j.inst, j.instErr = j.Req.Circuit.Circuit(j.Req.Input)
		}()
	}
	return j.inst, j.instErr
}

// dropInstance lets the instance go (after its solve, or when the job ends
// with one built ahead), waiting for a build in progress.
func (j *Job) dropInstance() {
	j.instMu.Lock()
	defer j.instMu.Unlock()
	j.dropInstanceLocked()
}

// dropInstanceSoon is dropInstance without waiting: a build in progress
// (ahead of the job) drops its instance when it ends.
func (j *Job) dropInstanceSoon() {
	if !j.instMu.TryLock() {
		go j.dropInstance()
		return
	}
	defer j.instMu.Unlock()
	j.dropInstanceLocked()
}

func (j *Job) dropInstanceLocked() {
	if j.instDone && j.inst != nil {
		j.inst, j.instErr = nil, errInstanceDropped
	}
}
