package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// batchFake is fakeDevice as a BatchProver of size batch for every key: its
// batches run groth16.ProveBatch on the CPU backend, after fakeDevice's
// before hook (with the first proof). It records each
// batch's proofs (their public input 1), joined ones included; beforeJoin
// runs before each join the batch asks for, afterJoin after each job joined.
type batchFake struct {
	*fakeDevice
	size       int
	be         *cpu.Backend
	beforeJoin func()
	afterJoin  func(*r1cs.Assignment)
	mu         sync.Mutex
	batches    [][]string
}

func newBatchFake(t *testing.T, name string, size int) *batchFake {
	be, err := cpu.New()
	require.NoError(t, err)
	return &batchFake{fakeDevice: newFake(t, name), size: size, be: be}
}

func (d *batchFake) BatchSize(*groth16.ProvingKey) int { return d.size }

func (d *batchFake) ProveBatch(ctx context.Context, pk *groth16.ProvingKey, b groth16.Batch, rnd io.Reader) (
	[]*groth16.Proof, []error) {
	if d.before != nil { // as in Prove: the hold of holdFirst
		if err := d.before(b.Proofs[0].Ctx, b.Proofs[0].Asg); err != nil {
			errs := make([]error, len(b.Proofs))
			for i := range errs {
				errs[i] = err
			}
			return make([]*groth16.Proof, len(b.Proofs)), errs
		}
	}
	var ids []string
	for _, p := range b.Proofs {
		ids = append(ids, p.Asg.Public[2].String())
	}
	if join := b.Join; join != nil {
		b.Join = func() (groth16.BatchProof, bool) {
			if d.beforeJoin != nil {
				d.beforeJoin()
			}
			p, ok := join()
			if ok {
				ids = append(ids, p.Asg.Public[2].String())
				if d.afterJoin != nil {
					d.afterJoin(p.Asg)
				}
			}
			return p, ok
		}
	}
	proofs, errs := groth16.ProveBatch(ctx, pk, b, d.be, rnd)
	d.mu.Lock()
	d.batches = append(d.batches, ids)
	d.mu.Unlock()
	return proofs, errs
}

// joinable reports whether j may join a batch: solved, and its key load
// (beside the solve) ended; a job whose key still loads joins none, by
// design.
func joinable(j *Job) bool { return j.State() == Ready && j.readyPK() != nil }

// holdFirst makes d's first proof, alone, wait for the gate it returns,
// so that the jobs submitted meanwhile are ready together when it opens.
func holdFirst(d *batchFake) *gate {
	g := newGate()
	var held sync.Once
	d.before = func(ctx context.Context, asg *r1cs.Assignment) error {
		var err error
		held.Do(func() { err = g.hold(ctx, asg) })
		return err
	}
	return g
}

// Jobs of one key that are ready together go to the device as one batch
// (never more than its batch size), jobs of another key never join them,
// every proof verifies, each job's timings hold its share of the batch,
// and the metric counts the batched jobs.
func TestBatchProvesReadyJobsOfOneKeyTogether(t *testing.T) {
	d := newBatchFake(t, "fake0", 2)
	g := holdFirst(d)
	reg := prometheus.NewRegistry()
	e := newEngine(t, Config{Synthesizers: 2, Handoff: 8, Metrics: reg}, d)
	a, b := porep(t, 1024), porep(t, 2048)
	first := submit(t, e, a, 1, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	var rest []*Job
	for i, c := range []int{0, 0, 0, 1, 1} {
		rest = append(rest, submit(t, e, []*registry.Resolved{a, b}[c], uint64(10+i), Normal))
	}
	require.Eventually(t, func() bool {
		for _, j := range rest {
			if !joinable(j) {
				return false
			}
		}
		return true
	}, time.Minute, time.Millisecond)
	g.open()
	batched := 0
	for _, j := range append([]*Job{first}, rest...) {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
		assert.Positive(t, r.Timings.Prove)
		assert.NotEmpty(t, r.Timings.Phases)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ids := range d.batches {
		assert.LessOrEqual(t, len(ids), 2, "batches of at most the device's size: %v", d.batches)
		if len(ids) > 1 {
			batched += len(ids)
		}
	}
	// Three of key a and two of key b were ready together: one batch of
	// each key at least, and the odd job of a alone.
	t.Logf("batches: %v; alone: %v", d.batches, d.proved)
	assert.GreaterOrEqual(t, len(d.batches), 2, "%v", d.batches)
	all := len(d.proved)
	for _, ids := range d.batches {
		all += len(ids)
	}
	assert.Equal(t, 1+len(rest), all, "every job proved once, alone or in a batch")
	assert.Positive(t, batched, "some jobs proved in pairs: %v", d.batches)
	want := map[string]bool{publicOf(t, b, 13): true, publicOf(t, b, 14): true}
	for _, ids := range d.batches {
		inB := 0
		for _, id := range ids {
			if want[id] {
				inB++
			}
		}
		assert.Contains(t, []int{0, len(ids)}, inB, "a batch holds jobs of one key: %v", ids)
	}
	assert.Contains(t, metricsText(t, reg), fmt.Sprintf("cuzk_batched_jobs_total %d\n", batched))
}

// A job cancelled once it has joined a batch ends cancelled; the batch's
// other jobs verify, the device is not recovered, and no host memory is
// held.
func TestBatchCancelOneJob(t *testing.T) {
	d := newBatchFake(t, "fake0", 3)
	g := holdFirst(d)
	e := newEngine(t, Config{Synthesizers: 2, Handoff: 8}, d)
	c := porep(t, 1024)
	first := submit(t, e, c, 1, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	j1, j2 := submit(t, e, c, 2, Normal), submit(t, e, c, 3, Normal)
	require.Eventually(t, func() bool { return joinable(j1) && joinable(j2) }, time.Minute, time.Millisecond)
	victim := publicOf(t, c, 3)
	d.afterJoin = func(asg *r1cs.Assignment) {
		if asg.Public[2].String() == victim {
			_, err := e.Cancel(j2.ID)
			require.NoError(t, err)
		}
	}
	g.open()
	for _, j := range []*Job{first, j1} {
		r, err := wait(t, j)
		require.NoError(t, err)
		assert.True(t, r.Verified)
	}
	_, err := wait(t, j2)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Cancelled, j2.State())
	d.mu.Lock()
	require.Equal(t, [][]string{{publicOf(t, c, 1), publicOf(t, c, 2), victim}}, d.batches, "the two ready jobs joined the first")
	d.mu.Unlock()
	assert.Zero(t, d.recovers.Load(), "a cancelled job is not a device fault")
	assert.Zero(t, e.budget.jobBytes(), "the batch's jobs gave back their host memory (vectors kept for reuse aside)")
}

// A job of lower priority than a batch's first does not join it; one of
// higher priority does.
func TestBatchJoinsNoLowerPriority(t *testing.T) {
	d := newBatchFake(t, "fake0", 2)
	g := holdFirst(d)
	e := newEngine(t, Config{Synthesizers: 2, Handoff: 8}, d)
	c := porep(t, 1024)
	first := submit(t, e, c, 1, Normal)
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	low := submit(t, e, c, 2, Low)
	require.Eventually(t, func() bool { return low.State() == Ready }, time.Minute, time.Millisecond)
	g.open()
	for _, j := range []*Job{first, low} {
		_, err := wait(t, j)
		require.NoError(t, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	assert.Equal(t, [][]string{{publicOf(t, c, 1)}, {publicOf(t, c, 2)}}, d.batches, "the low job proved after, alone")
}

// A device of batch size 1 gets every job alone.
func TestBatchSizeOneProvesAlone(t *testing.T) {
	d := newBatchFake(t, "fake0", 1)
	g := holdFirst(d)
	e := newEngine(t, Config{Synthesizers: 2, Handoff: 8}, d)
	c := porep(t, 1024)
	jobs := []*Job{submit(t, e, c, 1, Normal)}
	require.Eventually(t, func() bool { return g.waiting.Load() == 1 }, time.Minute, time.Millisecond)
	jobs = append(jobs, submit(t, e, c, 2, Normal), submit(t, e, c, 3, Normal))
	require.Eventually(t, func() bool { return jobs[1].State() == Ready && jobs[2].State() == Ready }, time.Minute, time.Millisecond)
	g.open()
	for _, j := range jobs {
		_, err := wait(t, j)
		require.NoError(t, err)
	}
	assert.Empty(t, d.batches)
	assert.Len(t, d.proved, 3)
}

// A job that becomes ready while a batch's first proof does its own part
// joins that batch: the worker never waits for it, and the batch holds
// both.
func TestBatchJoinsAJobReadyMeanwhile(t *testing.T) {
	d := newBatchFake(t, "fake0", 2)
	reg := prometheus.NewRegistry()
	e := newEngine(t, Config{Synthesizers: 2, Handoff: 8, Metrics: reg}, d)
	c := porep(t, 1024)
	_, err := wait(t, submit(t, e, c, 1, Normal)) // the key loads and goes hot first
	require.NoError(t, err)
	var second *Job
	var proving []string // the device's current jobs once the second joined
	onDevice := 0        // the engine's count of jobs proving then
	d.afterJoin = func(*r1cs.Assignment) {
		st := e.Status()
		proving, onDevice = st.Devices[0].Current, st.Proving
	}
	joins := 0
	d.beforeJoin = func() {
		joins++
		if joins == 1 { // the first batch's first join: the next job is submitted and solved now
			second = submit(t, e, c, 3, Normal)
			require.Eventually(t, func() bool { return joinable(second) }, time.Minute, time.Millisecond)
		}
	}
	first := submit(t, e, c, 2, Normal)
	for _, j := range []*Job{first} {
		_, err := wait(t, j)
		require.NoError(t, err)
	}
	require.NotNil(t, second)
	r, err := wait(t, second)
	require.NoError(t, err)
	assert.True(t, r.Verified)
	d.mu.Lock()
	defer d.mu.Unlock()
	assert.Contains(t, d.batches, []string{publicOf(t, c, 2), publicOf(t, c, 3)}, "the job ready meanwhile joined: %v", d.batches)
	assert.Contains(t, metricsText(t, reg), "cuzk_batched_jobs_total 2\n")
	// The status lists both jobs of the batch while it proves, and counts
	// each as done once it ends (the worker clears its jobs after their
	// results are out).
	assert.Equal(t, []string{first.ID, second.ID}, proving)
	assert.Equal(t, 2, onDevice, "the batch's two jobs are proving")
	require.Eventually(t, func() bool { return len(e.Status().Devices[0].Current) == 0 }, time.Minute, time.Millisecond)
	assert.EqualValues(t, 3, e.Status().Devices[0].JobsDone, "three jobs: one alone, two in a batch")
}

// metricsText is reg's metrics in the Prometheus text format.
func metricsText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var buf bytes.Buffer
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&buf, mf)
		require.NoError(t, err)
	}
	return buf.String()
}
