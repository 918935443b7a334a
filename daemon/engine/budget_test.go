package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/device"
	"github.com/cuzk-dev/cuzk/daemon/device/devicetest"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestBudgetKeepsAssignmentsForTheirKey(t *testing.T) {
	ctx := context.Background()
	b := newBudget(100, 0)
	got, dropped, err := b.acquireFor(ctx, "x", 40)
	require.NoError(t, err)
	assert.Nil(t, got, "nothing kept yet")
	assert.Empty(t, dropped)
	v := &vectors{asg: &r1cs.Assignment{}}
	assert.Nil(t, b.keep("x", v, 40))
	assert.Equal(t, int64(40), b.inUse(), "kept vectors stay counted")

	got, _, err = b.acquireFor(ctx, "x", 40)
	require.NoError(t, err)
	assert.Same(t, v, got, "the next job of its key solves into them")
	assert.Equal(t, int64(40), b.inUse())

	assert.Nil(t, b.keep("x", got, 40))
	got, dropped, err = b.acquireFor(ctx, "y", 70)
	require.NoError(t, err)
	assert.Nil(t, got)
	assert.Equal(t, []*vectors{v}, dropped, "x's kept vectors were dropped, for the caller to free")
	assert.Equal(t, int64(70), b.inUse(), "another key's job dropped x's kept vectors to fit")
	b.release(70)
	assert.Zero(t, b.inUse())
}

func TestBudgetWaitsForAKeptAssignment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := newBudget(50, 0)
	_, _, err := b.acquireFor(ctx, "x", 40)
	require.NoError(t, err)
	v := &vectors{asg: &r1cs.Assignment{}}
	got := make(chan *vectors)
	checked := &checkedCtx{Context: ctx, checked: make(chan struct{})}
	go func() {
		a, _, err := b.acquireFor(checked, "x", 40)
		assert.NoError(t, err)
		got <- a
	}()
	// acquireFor checks its context holding the budget's lock, then waits
	// on the budget (80 bytes don't fit in 50), which releases the lock: so
	// keep, which takes the lock, runs once the second job waits.
	<-checked.checked
	b.keep("x", v, 40)
	assert.Same(t, v, <-got, "the waiting job of the same key takes the vectors handed back")
	assert.Equal(t, int64(40), b.inUse())

	short, stop := context.WithTimeout(ctx, 20*time.Millisecond)
	defer stop()
	_, _, err = b.acquireFor(short, "x", 40)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "nothing kept and no room: it waits until its context ends")
}

// checkedCtx closes checked the first time its Err is called.
type checkedCtx struct {
	context.Context
	checked chan struct{}
	once    sync.Once
}

func (c *checkedCtx) Err() error {
	c.once.Do(func() { close(c.checked) })
	return c.Context.Err()
}

func TestBudgetUnboundedKeepsAtMostKeptMax(t *testing.T) {
	ctx := context.Background()
	b := newBudget(0, 2)
	for range 3 {
		_, _, err := b.acquireFor(ctx, "x", 10)
		require.NoError(t, err)
	}
	var back []*vectors
	for range 3 {
		back = append(back, b.keep("x", &vectors{asg: &r1cs.Assignment{}}, 10))
	}
	assert.Equal(t, int64(20), b.inUse(), "two kept, the third returned to be freed")
	assert.Nil(t, back[0])
	assert.Nil(t, back[1])
	assert.NotNil(t, back[2])
	assert.Nil(t, b.keep("x", nil, 0))
	assert.Equal(t, int64(20), b.inUse())
}

func TestJobsSolveIntoTheVectorsOfEarlierJobs(t *testing.T) {
	c := porep(t, 1024)
	e := newEngine(t, Config{Synthesizers: 1}, newFake(t, "fake0"))
	for i := range 3 {
		r, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		assert.True(t, r.Verified, "job %d's proof, solved into reused vectors, verifies", i)
	}
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	assert.Equal(t, int64(2), e.budget.reused, "the second and third jobs reused the vectors of the one before")
}

// pinningDevice is the CPU device as a device.HostPinner that records what
// it was given (devicetest.Pinner), as the GPU device would page-lock it.
type pinningDevice struct {
	*fakeDevice
	*devicetest.Pinner
	inMem bool // every proof's vectors lay in pinned memory (under Mu)
}

func newPinning(t *testing.T, name string, log *[]string) *pinningDevice {
	return &pinningDevice{fakeDevice: newFake(t, name), Pinner: devicetest.NewPinner(name, log), inMem: true}
}

func (d *pinningDevice) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	d.Mu.Lock()
	in := false
	for p, n := range d.Pinned {
		lo := uintptr(unsafe.Pointer(p))
		a := uintptr(unsafe.Pointer(unsafe.SliceData(asg.A)))
		c := uintptr(unsafe.Pointer(unsafe.SliceData(asg.C))) + uintptr(len(asg.C))*32
		in = in || (a >= lo && c <= lo+uintptr(n))
	}
	d.inMem = d.inMem && in
	d.Mu.Unlock()
	return d.fakeDevice.Prove(ctx, pk, asg, rnd)
}

func TestJobsSolveIntoPinnedVectorsOutsideTheHeap(t *testing.T) {
	d := newPinning(t, "pin0", nil)
	c := porep(t, 1024)
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	e, err := New(Config{Devices: []Device{d}, Keys: km, Synthesizers: 1, Vectors: device.NewVectorPool([]Device{d}, nil)})
	require.NoError(t, err)
	for i := range 3 {
		r, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		assert.True(t, r.Verified, "job %d's proof, solved into out-of-heap vectors, verifies", i)
	}
	d.Mu.Lock()
	assert.True(t, d.inMem, "every proof's a, b, c lay in the pinned memory")
	assert.Equal(t, 1, d.Pins, "one set of vectors, pinned once, served the three jobs")
	assert.Len(t, d.Pinned, 1)
	d.Mu.Unlock()

	require.NoError(t, e.Close())
	d.Mu.Lock()
	defer d.Mu.Unlock()
	assert.Empty(t, d.Pinned, "Close unpins and frees the kept vectors")
}

// TestJobsSolveIntoTheHeapWithoutAPool: an engine given no VectorPool
// solves into the Go heap, pinning nothing, whatever its devices can pin.
func TestJobsSolveIntoTheHeapWithoutAPool(t *testing.T) {
	d := newPinning(t, "pin0", nil)
	c := porep(t, 1024)
	sys, _, err := c.Counts()
	require.NoError(t, err)
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	e, err := New(Config{Devices: []Device{d}, Keys: km, Synthesizers: 1, HostBudget: 4 * sys.AssignmentBytes()})
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	require.NoError(t, e.Preload(context.Background(), c, false))
	assert.Zero(t, e.budget.keptCount(c.Key), "no vectors made ahead")
	for i := range 2 {
		r, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		assert.True(t, r.Verified, "job %d's proof, solved into the heap, verifies", i)
	}
	d.Mu.Lock()
	defer d.Mu.Unlock()
	assert.False(t, d.inMem, "the proofs' vectors lay in no pinned memory")
	assert.Zero(t, d.Pins, "nothing pinned")
	assert.Empty(t, d.Adopted)
}

func TestUnmapKeepsTheHeapResult(t *testing.T) {
	d := newPinning(t, "pin0", nil)
	hv := newHostVectors(device.NewVectorPool([]Device{d}, nil))
	c := porep(t, 1024)
	sys, _, err := c.Counts()
	require.NoError(t, err)
	v, err := hv.alloc(sys)
	require.NoError(t, err)
	require.NotNil(t, v.mem, "out of the heap")
	circ, err := c.Circuit(seedInput(3))
	require.NoError(t, err)
	asg, err := r1cs.Solve(circ, r1cs.WithShape(sys), r1cs.WithBuffers(v.asg))
	require.NoError(t, err)
	assert.True(t, v.owns(asg), "Solve filled the vectors in place")
	heap, err := r1cs.Solve(circ, r1cs.WithShape(sys))
	require.NoError(t, err)
	assert.False(t, v.owns(heap), "a solve into fresh heap vectors is not theirs")
	v.asg = heap
	require.NoError(t, hv.unmap(v))
	assert.Nil(t, v.mem)
	assert.Same(t, heap, v.asg, "unmap leaves the heap result")
	assert.True(t, v.owns(heap), "heap vectors own whatever they hold")
	assert.Empty(t, d.Pinned)
	require.NoError(t, hv.free(v))
	assert.Nil(t, v.asg)
}

// TestInstancesBuiltOnceWithPrefetch counts instance builds: the
// synthesizer builds the next queued job's instance during a solve, and
// each job's instance is still built exactly once.
func TestInstancesBuiltOnceWithPrefetch(t *testing.T) {
	c := porep(t, 1024)
	def := *c.Def
	var builds atomic.Int32
	orig := def.Build
	def.Build = func(p map[string]uint64, in []byte) (r1cs.Circuit, error) {
		builds.Add(1)
		return orig(p, in)
	}
	counted := &registry.Resolved{Def: &def, Params: c.Params, Key: c.Key}
	e := newEngine(t, Config{Synthesizers: 1}, newFake(t, "fake0"))
	require.NoError(t, e.Preload(context.Background(), counted, false))
	builds.Store(0) // the key's shape compile builds an instance of its own
	var jobs []*Job
	for i := range 5 {
		jobs = append(jobs, submit(t, e, counted, uint64(i+1), Normal))
	}
	for _, j := range jobs {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
		_, err = j.instance()
		assert.ErrorIs(t, err, errInstanceDropped, "a solved job lets its instance go")
	}
	assert.Equal(t, int32(5), builds.Load(), "one build a job, prefetched or not")
}

func TestInstanceBuildPanicIsAnError(t *testing.T) {
	c := porep(t, 1024)
	def := *c.Def
	def.Build = func(map[string]uint64, []byte) (r1cs.Circuit, error) { panic("bad input") }
	j := &Job{Req: Request{Circuit: &registry.Resolved{Def: &def, Params: c.Params, Key: c.Key}, Input: seedInput(1)}}
	_, err := j.instance()
	assert.ErrorContains(t, err, "build the instance: panic: bad input")
	_, again := j.instance()
	assert.Equal(t, err, again, "built once")
}

// blockingDevice holds each proof until release closes.
type blockingDevice struct {
	*fakeDevice
	started chan struct{}
	release chan struct{}
}

func (d *blockingDevice) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	close(d.started)
	<-d.release
	return d.fakeDevice.Prove(ctx, pk, asg, rnd)
}

func TestBusyRatioCountsTheRunningProof(t *testing.T) {
	d := &blockingDevice{fakeDevice: newFake(t, "fake0"), started: make(chan struct{}), release: make(chan struct{})}
	e := newEngine(t, Config{Synthesizers: 1}, d)
	j := submit(t, e, porep(t, 1024), 1, Normal)
	<-d.started
	require.Eventually(t, func() bool {
		st := e.Status()
		return len(st.Devices) == 1 && st.Devices[0].BusyRatio > 0
	}, time.Minute, time.Millisecond, "the proof in progress counts before it ends")
	assert.Zero(t, e.Status().Devices[0].JobsDone)
	close(d.release)
	_, err := wait(t, j)
	require.NoError(t, err)
}

// refusingPinner refuses every PinHost, as a low locked-memory limit would.
type refusingPinner struct{ *pinningDevice }

func (refusingPinner) PinHost([]byte) error { return errors.New("mlock limit") }

// lockedLog is a log the engine's goroutines write while a test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestUnpinnedVectorsStillProve(t *testing.T) {
	d := refusingPinner{newPinning(t, "pin0", nil)}
	var logs lockedLog // a job's timing is logged after its waiter wakes
	log := slog.New(slog.NewTextHandler(&logs, nil))
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	e, err := New(Config{Devices: []Device{d}, Keys: km, Synthesizers: 2, Log: log, Vectors: device.NewVectorPool([]Device{d}, log)})
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Close()) }()
	c := porep(t, 1024)
	var jobs []*Job
	for i := range 3 {
		jobs = append(jobs, submit(t, e, c, uint64(i+1), Normal))
	}
	for _, j := range jobs {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified, "vectors outside the heap prove unpinned too")
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "solved vectors not pinned"), "logged once")
	d.Mu.Lock()
	defer d.Mu.Unlock()
	assert.Empty(t, d.Adopted, "nothing adopts memory that is not pinned")
}

// A proof's vectors go back to the budget once the next proof on the device
// has done its host work (groth16.PhaseHost), when that proof was waiting
// for the device: the synthesis they let start then runs beside device
// work, not beside the copies. Three jobs, host memory for two: the third
// solves into the first's vectors, and not before the second's host work.
func TestVectorsGoBackAfterTheNextProofsHostWork(t *testing.T) {
	c := porep(t, 1024)
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	h, err := km.Acquire(context.Background(), c)
	require.NoError(t, err)
	need := h.Sys.AssignmentBytes()
	h.Release()

	d := newFake(t, "fake0")
	first := newGate()
	var mu sync.Mutex
	var calls int
	var reusedAtSecond int64 = -1
	var e *Engine
	d.before = func(ctx context.Context, asg *r1cs.Assignment) error {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1:
			return first.hold(ctx, asg)
		case 2:
			e.budget.mu.Lock()
			reusedAtSecond = e.budget.reused
			e.budget.mu.Unlock()
		}
		return nil
	}
	e = newEngine(t, Config{Keys: km, Synthesizers: 1, HostBudget: 2 * need}, d)
	jobs := []*Job{submit(t, e, c, 1, Normal), submit(t, e, c, 2, Normal), submit(t, e, c, 3, Normal)}
	var seen atomic.Value // the states last polled, for the failure's message
	if !assert.Eventually(t, func() bool {
		held, s2, s3 := first.waiting.Load(), jobs[1].State(), jobs[2].State()
		seen.Store(fmt.Sprintf("provers held %d, job 1 %v, job 2 %v, job 3 %v, host memory in use %d of %d",
			held, jobs[0].State(), s2, s3, e.budget.inUse(), 2*need))
		return held == 1 && s2 == Ready && s3 == Synthesizing
	}, time.Minute, time.Millisecond, "job 1 proving, job 2 waiting for the device, job 3 for host memory") {
		t.Fatalf("last seen: %v", seen.Load())
	}
	assert.Equal(t, 2*need, e.budget.inUse())
	first.open()
	for i, j := range jobs {
		r, err := wait(t, j)
		require.NoError(t, err, "job %d", i)
		assert.True(t, r.Verified, "job %d", i)
		assert.Positive(t, r.Timings.Phases[string(groth16.PhaseHost)], "job %d: its host work is a phase", i)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, int64(0), reusedAtSecond, "job 1's vectors were still held when job 2's proof began")
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	assert.Equal(t, int64(1), e.budget.reused, "job 3 solved into job 1's vectors")
}

// TestPreloadMakesTheVectorsItsJobsSolveInto: a preload pins the vector
// sets its jobs will use (as many as the job budget holds, here three of
// the four a one-synthesizer pipeline could), so the jobs after it pin
// nothing: a GPU proving meanwhile never waits out a page-locking. A
// second preload makes none, and an unbounded budget none at all.
func TestPreloadMakesTheVectorsItsJobsSolveInto(t *testing.T) {
	c := porep(t, 1024)
	sys, _, err := c.Counts()
	require.NoError(t, err)
	n := sys.AssignmentBytes()
	d := newPinning(t, "pin0", nil)
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	e, err := New(Config{Devices: []Device{d}, Keys: km, Synthesizers: 1, HostBudget: 3*n + n/2, Vectors: device.NewVectorPool([]Device{d}, nil)})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, e.Preload(ctx, c, true))
	d.Mu.Lock()
	assert.Equal(t, 3, d.Pins, "three sets fit the budget")
	d.Mu.Unlock()
	assert.Equal(t, 3, e.budget.keptCount(c.Key))
	assert.Equal(t, 3*n, e.budget.inUse(), "kept sets stay counted")

	require.NoError(t, e.Preload(ctx, c, true))
	for i := range 3 {
		r, err := wait(t, submit(t, e, c, uint64(i+1), Normal))
		require.NoError(t, err)
		assert.True(t, r.Verified, "job %d", i)
	}
	d.Mu.Lock()
	assert.Equal(t, 3, d.Pins, "neither the second preload nor the jobs pinned anything")
	assert.True(t, d.inMem, "every proof's vectors lay in the sets made ahead")
	d.Mu.Unlock()
	e.budget.mu.Lock()
	assert.Equal(t, int64(3), e.budget.reused, "every job solved into a set made ahead")
	e.budget.mu.Unlock()
	require.NoError(t, e.Close())
	d.Mu.Lock()
	assert.Empty(t, d.Pinned, "Close unpins and frees them")
	d.Mu.Unlock()

	u := newPinning(t, "pin1", nil)
	eu, err := New(Config{Devices: []Device{u}, Keys: km, Synthesizers: 1, Vectors: device.NewVectorPool([]Device{u}, nil)})
	require.NoError(t, err)
	defer func() { assert.NoError(t, eu.Close()) }()
	require.NoError(t, eu.Preload(ctx, c, true))
	u.Mu.Lock()
	defer u.Mu.Unlock()
	assert.Zero(t, u.Pins, "an unbounded job budget: the jobs make their own")
}

// TestPreloadMakesVectorsBesideALoadOnlyWhereBothFit: with room in the
// host budget for the key's load and the job budget together, the sets are
// made while the load is still held at its setup; without, only once the
// load has ended (none while it is held).
func TestPreloadMakesVectorsBesideALoadOnlyWhereBothFit(t *testing.T) {
	c := porep(t, 1024)
	sys, _, err := c.Counts()
	require.NoError(t, err)
	n := sys.AssignmentBytes()
	run := func(beside bool) {
		g := newGatedSetup()
		km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, FixedBase: g, DevKeysInMemory: true})
		require.NoError(t, err)
		t.Cleanup(km.Close)
		sh, err := km.Shape(context.Background(), c)
		require.NoError(t, err)
		total := km.LoadBytes(c, sh) + 3*n
		if !beside {
			total--
		}
		d := newPinning(t, "pin0", nil)
		e, err := New(Config{Devices: []Device{d}, Keys: km, Synthesizers: 1, HostBudget: 3 * n, HostTotal: total, Vectors: device.NewVectorPool([]Device{d}, nil)})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, e.Close()) })
		require.Equal(t, beside, e.loadFitsBeside(c, sh, e.cfg.HostBudget))
		pins := func() int {
			d.Mu.Lock()
			defer d.Mu.Unlock()
			return d.Pins
		}
		done := make(chan error, 1)
		go func() { done <- e.Preload(context.Background(), c, false) }()
		<-g.entered // the key's setup is held
		if beside {
			require.Eventually(t, func() bool { return pins() == 3 }, time.Minute, time.Millisecond, "made beside the held load")
		} else {
			assert.Zero(t, pins(), "none while the load is held")
		}
		close(g.open)
		require.NoError(t, <-done)
		assert.Equal(t, 3, pins(), "beside: %v", beside)
	}
	run(true)
	run(false)
}
