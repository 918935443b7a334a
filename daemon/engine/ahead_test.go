package engine

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// aheadDevice is a fake device that is a QuotientPrefetcher: after
// reporting its fused quotient phase, each proof asks the source it was
// given beside two "chunks" (the first after the gate afterQuot, the
// second after the gate chunk2; gates held only for the proof of the seed
// given, as is the gate before the quotient), and it logs what was
// announced, dropped and proved, and whether each proof's A was the vector
// announced.
type aheadDevice struct {
	*fakeDevice
	holdSeed                  string // public input of the proof the gates hold
	before, afterQuot, chunk2 *gate
	mu                        sync.Mutex
	next                      func() []fr.Element
	announced                 *fr.Element
	log                       []string
}

func newAheadDevice(t *testing.T, name string) *aheadDevice {
	return &aheadDevice{fakeDevice: newFake(t, name), before: newGate(), afterQuot: newGate(), chunk2: newGate()}
}

func (d *aheadDevice) record(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, s)
}

func (d *aheadDevice) entries() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.log...)
}

func (d *aheadDevice) PrefetchQuotient(_ context.Context, next func() []fr.Element) error {
	d.mu.Lock()
	d.next, d.announced = next, nil
	d.mu.Unlock()
	if next == nil {
		d.record("drop")
	}
	return nil
}

// chunk asks the source, as the GPU does beside a chunk with link room.
func (d *aheadDevice) chunk() {
	d.mu.Lock()
	next := d.next
	d.mu.Unlock()
	if next == nil {
		return
	}
	if a := next(); a != nil {
		d.mu.Lock()
		d.next, d.announced = nil, unsafe.SliceData(a)
		d.mu.Unlock()
		d.record("announce")
	}
}

func (d *aheadDevice) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	pub := asg.Public[2].String()
	d.mu.Lock()
	hit := d.announced != nil && d.announced == unsafe.SliceData(asg.A)
	d.next, d.announced = nil, nil // the quotient takes or drops what was sent
	d.mu.Unlock()
	if hit {
		d.record("prove " + pub + " sent ahead")
	} else {
		d.record("prove " + pub)
	}
	held := pub == d.holdSeed
	hold := func(g *gate) error {
		if !held {
			return nil
		}
		return g.hold(ctx, asg)
	}
	if err := hold(d.before); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // stopped before the quotient, as a GPU stops at a stage boundary
	}
	info := groth16.PhaseInfo{Phase: groth16.PhaseQuotientLH, Start: time.Now()}
	if hit {
		info.Detail = sentAhead(len(asg.A) * 32)
	}
	groth16.PhaseDone(ctx, info)
	if err := hold(d.afterQuot); err != nil {
		return nil, err
	}
	d.chunk()
	if err := hold(d.chunk2); err != nil {
		return nil, err
	}
	d.chunk()
	return d.fakeDevice.Prove(ctx, pk, asg, rnd)
}

// sentAhead is a phase detail that reports bytes sent ahead, as the GPU's
// quotient record does.
type sentAhead int64

func (s sentAhead) SentAheadBytes() int64 { return int64(s) }

// published reports whether the only worker's watcher has published the
// next job's vector for the device's source.
func published(e *Engine) bool {
	w := e.workers[0]
	w.mu.Lock()
	wa := w.watch
	w.mu.Unlock()
	return wa != nil && wa.vec.Load() != nil
}

// heldHead starts an engine on an aheadDevice whose first proof (seed 100)
// the gates hold, and returns once that proof waits before its quotient.
func heldHead(t *testing.T) (*aheadDevice, *Engine, *registry.Resolved, *Job) {
	t.Helper()
	d := newAheadDevice(t, "fake0")
	c := porep(t, 1024)
	d.holdSeed = publicOf(t, c, 100)
	e := newEngine(t, Config{Synthesizers: 1, Handoff: 8}, d)
	head := submit(t, e, c, 100, Normal)
	require.Eventually(t, func() bool { return d.before.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	return d, e, c, head
}

// takenEarly submits a job (seed 1) behind the held head and lets the
// head's quotient and its first chunk go: the device asks the source, and
// the worker takes that job early. It returns once the head waits before
// its second chunk.
func takenEarly(t *testing.T, d *aheadDevice, e *Engine, c *registry.Resolved) *Job {
	t.Helper()
	j := submit(t, e, c, 1, Normal)
	allReady(t, j)
	d.before.open()
	d.afterQuot.open()
	require.Eventually(t, func() bool { return d.chunk2.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	require.Equal(t, 0, e.handoff.len(), "the job was taken beside the head's first chunk")
	require.Equal(t, 1, e.Status().Ready, "a job taken early still waits for a device")
	return j
}

// Once a proof's quotient is done, its worker takes the next job and
// announces that job's A: each proof after the first finds its own A sent
// ahead, in order, and every proof verifies.
func TestNextProofsQuotientVectorSentAhead(t *testing.T) {
	d, e, c, head := heldHead(t)
	rest := []*Job{submit(t, e, c, 1, Normal), submit(t, e, c, 2, Normal), submit(t, e, c, 3, Normal)}
	allReady(t, rest...)
	d.before.open()
	d.afterQuot.open()
	d.chunk2.open()
	for i, j := range append([]*Job{head}, rest...) {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
		if i == 0 {
			assert.Zero(t, r.Timings.SentAheadBytes, "nothing was sent ahead of the first proof")
		} else {
			assert.Positive(t, r.Timings.SentAheadBytes, "the job's timings count its A sent ahead")
		}
	}
	want := []string{"prove " + publicOf(t, c, 100), "announce"}
	for _, s := range []uint64{1, 2, 3} {
		want = append(want, "prove "+publicOf(t, c, s)+" sent ahead")
		if s < 3 {
			want = append(want, "announce")
		}
	}
	assert.Equal(t, want, d.entries())
}

// A job that becomes ready only after the proof's quotient, and after the
// device first asked, is still taken and announced beside a later chunk:
// its proof finds its A sent ahead.
func TestJobReadyAfterTheQuotientIsStillSentAhead(t *testing.T) {
	d, e, c, head := heldHead(t)
	d.before.open()
	d.afterQuot.open()
	require.Eventually(t, func() bool { return d.chunk2.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	late := submit(t, e, c, 1, Normal)
	require.Eventually(t, func() bool { return published(e) }, time.Minute, time.Millisecond,
		"the watcher took the late job and published its vector")
	// The source runs on the device's thread and takes no lock: it answers
	// while the worker's is held (as a status read or a solve's placement
	// check may hold it while waiting for the key manager's).
	d.mu.Lock()
	source := d.next
	d.mu.Unlock()
	require.NotNil(t, source)
	w := e.workers[0]
	w.mu.Lock()
	answered := make(chan bool, 1)
	go func() { answered <- source() != nil }()
	select {
	case got := <-answered:
		w.mu.Unlock()
		assert.True(t, got, "the source answers the published vector")
	case <-time.After(10 * time.Second):
		w.mu.Unlock()
		t.Fatal("the device's source blocked on the worker's lock")
	}
	d.chunk2.open()
	for _, j := range []*Job{head, late} {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
	}
	assert.Equal(t, []string{"prove " + publicOf(t, c, 100), "announce", "prove " + publicOf(t, c, 1) + " sent ahead"},
		d.entries(), "nothing ready beside the first chunk; the late job announced beside the second")
}

// A job taken early gives way to one that outranks it and came while the
// proof before still ran: its announcement is dropped, the high-priority
// job is proved first, and the early one after it, from the hand-off.
func TestJobTakenEarlyGivesWayToOneThatOutranksIt(t *testing.T) {
	d, e, c, head := heldHead(t)
	normal := takenEarly(t, d, e, c)
	high := submit(t, e, c, 2, High)
	allReady(t, high)
	d.chunk2.open()
	for _, j := range []*Job{head, normal, high} {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
	}
	assert.Equal(t, []string{"prove " + publicOf(t, c, 100), "announce", "drop",
		"prove " + publicOf(t, c, 2), "announce", "prove " + publicOf(t, c, 1) + " sent ahead"}, d.entries(),
		"the high job first (the normal one's vector dropped), then the normal one, announced again")
}

// A job taken early and cancelled before its turn ends as cancelled, its
// announcement dropped before its vectors go back, and the device goes on.
func TestCancelledJobTakenEarlyDropsItsVector(t *testing.T) {
	d, e, c, head := heldHead(t)
	early := takenEarly(t, d, e, c)
	_, err := e.Cancel(early.ID)
	require.NoError(t, err)
	d.chunk2.open()
	_, err = wait(t, head)
	require.NoError(t, err)
	_, err = wait(t, early)
	require.ErrorIs(t, err, context.Canceled)
	log := d.entries()
	require.Contains(t, log, "drop", "the cancelled job's vector was dropped before it ended")
	assert.Less(t, indexOf(log, "announce"), indexOf(log, "drop"))
	after := submit(t, e, c, 2, Normal)
	r, err := wait(t, after)
	require.NoError(t, err, "the device goes on")
	assert.True(t, r.Verified)
	assert.Zero(t, d.recovers.Load(), "a cancelled job is not a device fault")
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// A job found for an early take while another device is idle goes back to
// the hand-off, and the idle device proves it now: a device never waits
// for a job that another device holds for later.
func TestJobFoundWhileAnotherDeviceIdlesGoesToThatDevice(t *testing.T) {
	devs := []*aheadDevice{newAheadDevice(t, "fake0"), newAheadDevice(t, "fake1")}
	c := porep(t, 1024)
	for _, d := range devs {
		d.holdSeed = publicOf(t, c, 100)
	}
	e := newEngine(t, Config{Synthesizers: 1, Handoff: 8}, devs[0], devs[1])
	head := submit(t, e, c, 100, Normal)
	require.Eventually(t, func() bool { return devs[0].before.waiting.Load()+devs[1].before.waiting.Load() == 1 },
		time.Minute, time.Millisecond)
	busy, other := devs[0], devs[1]
	if other.before.waiting.Load() == 1 {
		busy, other = other, busy
	}
	other.holdSeed = publicOf(t, c, 200)
	second := submit(t, e, c, 200, Normal)
	require.Eventually(t, func() bool { return other.before.waiting.Load() == 1 }, time.Minute, time.Millisecond)

	// Both devices are busy; a job becomes ready, and is found (as the busy
	// device's watcher would find it) once the other device is idle.
	j := submit(t, e, c, 1, Normal)
	allReady(t, j)
	found := e.handoff.tryTake(func(*Job) bool { return true }, func(*Job) bool { return false })
	require.Same(t, j, found)
	other.before.open()
	other.afterQuot.open()
	other.chunk2.open()
	_, err := wait(t, second)
	require.NoError(t, err)
	var wb, wo *worker
	for _, w := range e.workers {
		if w.dev.Name() == busy.Name() {
			wb = w
		} else {
			wo = w
		}
	}
	require.Eventually(t, func() bool { return wo.idle.Load() }, time.Minute, time.Millisecond)

	require.True(t, wb.takeNext(&aheadWatch{done: make(chan struct{})}, j.readyPK(), j), "the job found is settled")
	r, err := wait(t, j)
	require.NoError(t, err)
	assert.True(t, r.Verified)
	assert.Equal(t, other.Name(), r.Device, "the idle device proved the job found")
	assert.Nil(t, wb.takeEarly(), "the busy device did not keep it")
	assert.NotContains(t, busy.entries(), "announce")

	busy.before.open()
	busy.afterQuot.open()
	busy.chunk2.open()
	_, err = wait(t, head)
	require.NoError(t, err)
}
