package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/device"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// fakeDevice is a named device proving on the CPU backend, with hooks to
// hold, fail or observe its jobs.
type fakeDevice struct {
	*device.CPU
	name     string
	before   func(ctx context.Context, asg *r1cs.Assignment) error // nil: prove at once
	recovers atomic.Int32
	mu       sync.Mutex
	proved   []string // public input 1 (the seed-derived comm_r) per proof, in order
}

func newFake(t testing.TB, name string) *fakeDevice {
	cpu, err := device.NewCPU(name)
	require.NoError(t, err)
	return &fakeDevice{CPU: cpu, name: name}
}

func (d *fakeDevice) Name() string { return d.name }

func (d *fakeDevice) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	if d.before != nil {
		if err := d.before(ctx, asg); err != nil {
			return nil, err
		}
	}
	p, err := d.CPU.Prove(ctx, pk, asg, rnd)
	if err == nil {
		d.mu.Lock()
		d.proved = append(d.proved, asg.Public[2].String())
		d.mu.Unlock()
	}
	return p, err
}

func (d *fakeDevice) Recover(error) error { d.recovers.Add(1); return nil }

// gate blocks provers until opened; it counts who is waiting.
type gate struct {
	ch      chan struct{}
	waiting atomic.Int32
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) hold(ctx context.Context, _ *r1cs.Assignment) error {
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	select {
	case <-g.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) open() { close(g.ch) }

var reg = registry.Default()

func porep(t testing.TB, constraints uint64) *registry.Resolved {
	c, err := reg.Resolve("porep-synth", map[string]uint64{"constraints": constraints})
	require.NoError(t, err)
	return c
}

func seedInput(seed uint64) []byte { return binary.LittleEndian.AppendUint64(nil, seed) }

func newEngine(t testing.TB, cfg Config, devs ...Device) *Engine {
	t.Helper()
	if cfg.Keys == nil {
		km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
		require.NoError(t, err)
		cfg.Keys = km
	}
	cfg.Devices = devs
	if cfg.Vectors == nil {
		cfg.Vectors = device.NewVectorPool(devs, cfg.Log) // as daemon/assembly does: pinned where a device pins
	}
	e, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

func submit(t *testing.T, e *Engine, c *registry.Resolved, seed uint64, p Priority) *Job {
	t.Helper()
	j, existing, err := e.Submit(Request{Circuit: c, Input: seedInput(seed), Priority: p})
	require.NoError(t, err)
	require.False(t, existing)
	return j
}

func wait(t *testing.T, j *Job) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return j.Wait(ctx)
}

// allReady waits until every job is synthesized and waits for a device.
func allReady(t *testing.T, jobs ...*Job) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, j := range jobs {
			if j.State() != Ready {
				return false
			}
		}
		return true
	}, time.Minute, time.Millisecond)
}

func TestConcurrentJobsAllVerify(t *testing.T) {
	d0, d1 := newFake(t, "fake0"), newFake(t, "fake1")
	e := newEngine(t, Config{Synthesizers: 3}, d0, d1)
	c := porep(t, 2048)
	var jobs []*Job
	for i := range 8 {
		jobs = append(jobs, submit(t, e, c, uint64(i+1), Normal))
	}
	for _, j := range jobs {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
		assert.Contains(t, []string{"fake0", "fake1"}, r.Device)
		assert.Equal(t, Done, j.State())
		assert.Positive(t, r.Timings.Synthesis)
		assert.Positive(t, r.Timings.Prove)
		assert.GreaterOrEqual(t, r.Timings.Total, r.Timings.Synthesis+r.Timings.Prove)
		assert.NotEmpty(t, r.Timings.Phases)
	}
	assert.Equal(t, 8, len(d0.proved)+len(d1.proved))
}

// TestPriorityOrder holds the one device on a first job, keeps the one
// synthesizer busy on a larger job while LOW, NORMAL, CRITICAL and HIGH
// jobs are queued, and checks the order they are proved in once all are
// synthesized.
func TestPriorityOrder(t *testing.T) {
	d := newFake(t, "fake0")
	g := newGate()
	var first atomic.Bool
	d.before = func(ctx context.Context, asg *r1cs.Assignment) error {
		if first.CompareAndSwap(false, true) {
			return g.hold(ctx, asg)
		}
		return nil
	}
	e := newEngine(t, Config{Synthesizers: 1, Handoff: 8}, d)
	c, big := porep(t, 1024), porep(t, 1<<16)
	first.Store(true)                                // the warm-up is not held
	_, err := wait(t, submit(t, e, big, 99, Normal)) // its key is warm before the timed part
	require.NoError(t, err)
	first.Store(false)
	d.proved = nil
	head := submit(t, e, c, 100, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	blocker := submit(t, e, big, 101, Normal) // the synthesizer works on it while the rest queue
	low := submit(t, e, c, 1, Low)
	n1 := submit(t, e, c, 2, Normal)
	n2 := submit(t, e, c, 3, Normal)
	crit := submit(t, e, c, 4, Critical)
	high := submit(t, e, c, 5, High)
	all := []*Job{blocker, low, n1, n2, crit, high}
	allReady(t, all...)
	g.open()
	for _, j := range append([]*Job{head}, all...) {
		_, err := wait(t, j)
		require.NoError(t, err)
	}
	want := []string{publicOf(t, c, 100), publicOf(t, c, 4), publicOf(t, c, 5), publicOf(t, big, 101),
		publicOf(t, c, 2), publicOf(t, c, 3), publicOf(t, c, 1)}
	assert.Equal(t, want, d.proved, "proved in the order: held head, then critical, high, normal (FIFO), low")
}

func publicOf(t *testing.T, c *registry.Resolved, seed uint64) string {
	circ, err := c.Circuit(seedInput(seed))
	require.NoError(t, err)
	sys, err := r1cs.Compile(circ)
	require.NoError(t, err)
	asg, err := r1cs.Solve(circ, r1cs.WithShape(sys))
	require.NoError(t, err)
	return asg.Public[2].String()
}

func TestCancelQueuedSynthesizingAndProving(t *testing.T) {
	d := newFake(t, "fake0")
	g := newGate()
	d.before = func(ctx context.Context, asg *r1cs.Assignment) error {
		if asg.Public[2].String() == publicOf(t, porep(t, 1024), 1) {
			return g.hold(ctx, asg) // only the first job is held
		}
		return nil
	}
	e := newEngine(t, Config{Synthesizers: 1, Handoff: 1}, d)
	c := porep(t, 1024)
	running := submit(t, e, c, 1, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	ready := submit(t, e, c, 2, Normal)
	require.Eventually(t, func() bool { return ready.State() == Ready }, time.Minute, time.Millisecond)
	queued := submit(t, e, c, 3, Normal)
	// The synthesizer holds job 3 waiting for room in the hand-off; job 4 stays queued.
	queued2 := submit(t, e, c, 4, Normal)

	for _, j := range []*Job{queued2, ready, running} {
		_, err := e.Cancel(j.ID)
		require.NoError(t, err)
		_, err = wait(t, j)
		require.ErrorIs(t, err, context.Canceled, "job %s", j.ID)
		assert.Equal(t, Cancelled, j.State())
	}
	assert.Zero(t, d.recovers.Load(), "a cancelled job is not a device fault")
	r, err := wait(t, queued)
	require.NoError(t, err, "the device goes on after cancelled jobs")
	assert.True(t, r.Verified)
	assert.Zero(t, e.budget.jobBytes(), "cancelled jobs gave back their host memory (vectors kept for reuse aside)")
}

func TestCancelDuringSynthesis(t *testing.T) {
	d := newFake(t, "fake0")
	e := newEngine(t, Config{Synthesizers: 1}, d)
	c := porep(t, 1<<14) // synthesis long enough to cancel inside it
	j := submit(t, e, c, 1, Normal)
	require.Eventually(t, func() bool { return j.State() == Synthesizing }, time.Minute, time.Microsecond)
	_, err := e.Cancel(j.ID)
	require.NoError(t, err)
	_, err = wait(t, j)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, d.proved, "a job cancelled while synthesizing never reaches the device")
}

func TestQueueFull(t *testing.T) {
	d := newFake(t, "fake0")
	g := newGate()
	d.before = g.hold
	e := newEngine(t, Config{Synthesizers: 1, Handoff: 1, QueueSize: 2}, d)
	c := porep(t, 1024)
	submit(t, e, c, 1, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	j2 := submit(t, e, c, 2, Normal)
	require.Eventually(t, func() bool { return j2.State() == Ready }, time.Minute, time.Millisecond)
	j3 := submit(t, e, c, 3, Normal)
	require.Eventually(t, func() bool { return j3.State() == Ready }, time.Minute, time.Millisecond)
	submit(t, e, c, 4, Normal)
	submit(t, e, c, 5, Normal)
	_, _, err := e.Submit(Request{Circuit: c, Input: seedInput(6)})
	require.ErrorIs(t, err, ErrQueueFull)
	g.open()
}

func TestIdempotentResubmission(t *testing.T) {
	e := newEngine(t, Config{}, newFake(t, "fake0"))
	c := porep(t, 1024)
	j, existing, err := e.Submit(Request{RequestID: "r1", Circuit: c, Input: seedInput(1)})
	require.NoError(t, err)
	require.False(t, existing)
	again, existing, err := e.Submit(Request{RequestID: "r1", Circuit: c, Input: seedInput(1)})
	require.NoError(t, err)
	assert.True(t, existing)
	assert.Same(t, j, again)
	_, _, err = e.Submit(Request{RequestID: "r1", Circuit: c, Input: seedInput(2)})
	require.ErrorIs(t, err, ErrRequestConflict)
	_, err = wait(t, j)
	require.NoError(t, err)
	after, existing, err := e.Submit(Request{RequestID: "r1", Circuit: c, Input: seedInput(1)})
	require.NoError(t, err)
	assert.True(t, existing, "an ended job is still found by its request_id")
	assert.Same(t, j, after)
}

func TestFailingJobBesideHealthyOnes(t *testing.T) {
	d := newFake(t, "fake0")
	bad := publicOf(t, porep(t, 1024), 3)
	d.before = func(_ context.Context, asg *r1cs.Assignment) error {
		if asg.Public[2].String() == bad {
			return errors.New("injected device fault")
		}
		return nil
	}
	e := newEngine(t, Config{Synthesizers: 2}, d)
	c := porep(t, 1024)
	var jobs []*Job
	for i := range 5 {
		jobs = append(jobs, submit(t, e, c, uint64(i+1), Normal))
	}
	for i, j := range jobs {
		r, err := wait(t, j)
		if i == 2 {
			require.Error(t, err)
			assert.Contains(t, err.Error(), "prove on fake0: injected device fault")
			assert.Equal(t, Failed, j.State())
			continue
		}
		require.NoError(t, err)
		assert.True(t, r.Verified)
	}
	assert.Equal(t, int32(1), d.recovers.Load(), "the device was asked to recover once")
}

func TestNeverFitsAndWaitsForBudget(t *testing.T) {
	c := porep(t, 1024)
	e := newEngine(t, Config{HostBudget: 1000}, newFake(t, "fake0"))
	// porep-synth knows its counts: refused when it arrives, before any work.
	_, _, err := e.Submit(Request{Circuit: c, Input: seedInput(1)})
	require.ErrorIs(t, err, ErrNeverFits)
	assert.Contains(t, err.Error(), "its synthesis of porep-synth/constraints=1024 needs")
	assert.Contains(t, err.Error(), "budget is 1000")
	_, _, err = e.Submit(Request{Circuit: c, Input: partitionInput(1, 2), Partitions: 2})
	require.ErrorIs(t, err, ErrNeverFits)
	assert.Contains(t, err.Error(), "each partition's synthesis")
	// sha256 does not: a counting pass finds its counts, and it is refused
	// when it arrives too.
	s, err := reg.Resolve("sha256", map[string]uint64{"bytes": 64})
	require.NoError(t, err)
	_, _, err = e.Submit(Request{Circuit: s, Input: make([]byte, 64)})
	require.ErrorIs(t, err, ErrNeverFits)
	assert.Contains(t, err.Error(), "its synthesis of sha256/bytes=64 needs")
	assert.Contains(t, err.Error(), "budget is 1000")

	// A budget of one job: jobs wait for each other and all prove.
	one := int64(32 * (2*2048 + 2048 + 64)) // generous for 1024 constraints, below two jobs
	e2 := newEngine(t, Config{HostBudget: one * 2, Synthesizers: 4}, newFake(t, "fake1"))
	var jobs []*Job
	for i := range 4 {
		jobs = append(jobs, submit(t, e2, c, uint64(i+1), Normal))
	}
	for _, j := range jobs {
		_, err := wait(t, j)
		require.NoError(t, err)
	}
}

func TestDrain(t *testing.T) {
	d := newFake(t, "fake0")
	e := newEngine(t, Config{}, d)
	c := porep(t, 1024)
	j := submit(t, e, c, 1, Normal)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, e.Drain(ctx))
	assert.Equal(t, Done, j.State(), "drain lets running jobs finish")
	_, _, err := e.Submit(Request{Circuit: c, Input: seedInput(2)})
	require.ErrorIs(t, err, ErrDraining)
}

// StopTaking refuses every Submit from its return on, before Drain waits:
// a job taken before it still finishes.
func TestStopTakingRefusesAtOnce(t *testing.T) {
	e := newEngine(t, Config{}, newFake(t, "fake0"))
	c := porep(t, 1024)
	j := submit(t, e, c, 1, Normal)
	e.StopTaking()
	_, _, err := e.Submit(Request{Circuit: c, Input: seedInput(2)})
	require.ErrorIs(t, err, ErrDraining)
	assert.True(t, e.Draining())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, e.Drain(ctx))
	assert.Equal(t, Done, j.State(), "a job taken before StopTaking finishes")
}

func TestWatchEvents(t *testing.T) {
	e := newEngine(t, Config{}, newFake(t, "fake0"))
	j := submit(t, e, porep(t, 1024), 1, Normal)
	var kinds []EventKind
	require.NoError(t, j.Watch(context.Background(), func(ev Event) error {
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev.Kind {
			kinds = append(kinds, ev.Kind)
		}
		return nil
	}))
	// The key loads beside the synthesis: ready before or after it, and
	// before the proof's phases.
	require.Contains(t, kinds, EventKeyReady)
	key := slices.Index(kinds, EventKeyReady)
	rest := slices.Delete(slices.Clone(kinds), key, key+1)
	assert.Equal(t, []EventKind{EventQueued, EventSynthesisDone, EventProving, EventPhase, EventDone}, rest)
	assert.Less(t, key, slices.Index(kinds, EventPhase))
}

func TestHandoffPrefersHotKeysWithinAPriority(t *testing.T) {
	h := newHandoff(8)
	mk := func(seq uint64, p Priority) *Job { return &Job{seq: seq, Req: Request{Priority: p}} }
	a, b, c := mk(1, Normal), mk(2, Normal), mk(3, Low)
	for _, j := range []*Job{a, b, c} {
		require.NoError(t, h.put(context.Background(), j))
	}
	all := func(*Job) bool { return true }
	got, err := h.take(context.Background(), all, func(j *Job) bool { return j == b || j == c })
	require.NoError(t, err)
	assert.Same(t, b, got, "within NORMAL the hot job goes first")
	got, err = h.take(context.Background(), all, func(j *Job) bool { return j == c })
	require.NoError(t, err)
	assert.Same(t, a, got, "priority before residency")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = h.take(ctx, func(j *Job) bool { return j != c }, all)
	require.ErrorIs(t, err, context.DeadlineExceeded, "only an ineligible job left: take waits (here until ctx ends)")
}

func TestHandoffAdmitsOutrankingJobWhenFull(t *testing.T) {
	h := newHandoff(1)
	require.NoError(t, h.put(context.Background(), &Job{seq: 1, Req: Request{Priority: Normal}}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.put(ctx, &Job{seq: 2, Req: Request{Priority: Normal}}), context.DeadlineExceeded)
	require.NoError(t, h.put(context.Background(), &Job{seq: 3, Req: Request{Priority: Critical}}))
	assert.Equal(t, 2, h.len())
}

// residentFake is a fake device that keeps keys resident, as a GPU does.
type residentFake struct{ *fakeDevice }

func (residentFake) Resident() bool { return true }

// TestJobsGoToTheDeviceHoldingTheirKey makes key A hot on one device and
// key B on the other, then submits jobs one at a time (both devices idle
// each time): every job must be proved where its key is.
func TestJobsGoToTheDeviceHoldingTheirKey(t *testing.T) {
	d0, d1 := residentFake{newFake(t, "gpu0")}, residentFake{newFake(t, "gpu1")}
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	e := newEngine(t, Config{Keys: km, Synthesizers: 2}, d0, d1)
	a, b := porep(t, 1024), porep(t, 2048)
	for _, kd := range []struct {
		c   *registry.Resolved
		dev string
	}{{a, "gpu0"}, {b, "gpu1"}} {
		h, err := km.Acquire(context.Background(), kd.c)
		require.NoError(t, err)
		km.MarkHot(h, kd.dev)
		h.Release()
	}
	for i := range 6 {
		c, want := a, "gpu0"
		if i%2 == 1 {
			c, want = b, "gpu1"
		}
		r, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		assert.Equal(t, want, r.Device, "job %d (%s) goes to the device holding its key", i, c.Key)
	}
	// With the holder busy, the other device takes the job (work-conserving).
	g := newGate()
	d0.before = g.hold
	held := submit(t, e, a, 100, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	r, err := wait(t, submit(t, e, a, 101, Normal))
	require.NoError(t, err)
	assert.Equal(t, "gpu1", r.Device, "the holder is busy: the idle device proves it")
	g.open()
	_, err = wait(t, held)
	require.NoError(t, err)
}

// A job's end is counted in the metrics before a client waiting for it
// has its result: each job's count is there the moment Wait returns.
func TestMetricsCountAJobBeforeItsResult(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEngine(t, Config{Synthesizers: 1, Metrics: reg}, newFake(t, "fake0"))
	c := porep(t, 1024)
	for i := range 8 {
		_, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		require.Contains(t, metricsText(t, reg), fmt.Sprintf("cuzk_jobs_total{outcome=\"done\"} %d\n", i+1), "job %d", i+1)
	}
}
