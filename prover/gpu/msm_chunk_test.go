package gpu

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// forcePlan makes the engine run MSMs over bases (raw bytes, whose first
// point is the key) in chunks of chunk points, resident or streamed, as
// Backend.PlanKey would.
func forcePlan(t *testing.T, b *Backend, raw []byte, host any, g2 bool, chunk int, resident, pin bool) {
	t.Helper()
	m, err := b.msmEngine()
	require.NoError(t, err)
	require.NoError(t, b.dev.Do(func(c *driver.Ctx) error {
		st := m.st
		cv := st.g1
		if g2 {
			cv = st.g2
		}
		run := &setRun{curve: cv, points: len(raw) / cv.pointBytes, chunk: chunk, resident: resident, host: host}
		if pin {
			run.pin = pinForStreaming(c, st.log, raw)
			require.NotNil(t, run.pin, "the test's bases page-locked")
		}
		st.plans[basesKey(raw)] = run
		return nil
	}))
	t.Cleanup(func() {
		require.NoError(t, b.dev.Do(func(c *driver.Ctx) error {
			return errors.Join(m.st.dropPlan(c, basesKey(raw)), m.st.evict(c))
		}))
	})
}

// An MSM in chunks equals the CPU backend's on fresh random inputs, in G1
// and G2, over resident bases (with and without a table of multiples) and
// over streamed ones (page-locked or pageable), with chunk boundaries at
// every edge: one point a chunk, a chunk that divides n, one that leaves a
// single point, one of n−1 and one of n (a single pass through the
// chunked path's planning).
func TestMSMChunkedMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	type tc struct {
		n, chunk          int
		resident, pin, g2 bool
		table             bool
	}
	var cases []tc
	for _, g2 := range []bool{false, true} {
		cases = append(cases,
			tc{n: 7, chunk: 1, resident: true, g2: g2}, tc{n: 7, chunk: 1, g2: g2},
			tc{n: 1000, chunk: 250, resident: true, g2: g2}, tc{n: 1001, chunk: 250, g2: g2, pin: true},
			tc{n: 1001, chunk: 1000, g2: g2}, tc{n: 4097, chunk: 4096, resident: true, g2: g2},
			tc{n: 4097, chunk: 1 << 10, g2: g2, pin: true}, tc{n: 4096, chunk: 4096, g2: g2},
		)
	}
	cases = append(cases, tc{n: 1 << 16, chunk: 1<<14 + 3, resident: true, table: true}, tc{n: 1<<16 + 5, chunk: 1 << 13, pin: true})
	for _, c := range cases {
		name := fmt.Sprintf("g2=%v/n=%d/chunk=%d/resident=%v/pinned=%v/table=%v", c.g2, c.n, c.chunk, c.resident, c.pin, c.table)
		t.Run(name, func(t *testing.T) {
			scalars := randScalars(c.n, rng)
			var log msmLog
			var wall time.Duration
			if c.g2 {
				bases := randG2(c.n, min(c.n, 32), rng)
				forcePlan(t, b, driver.Bytes(bases), bases, true, c.chunk, c.resident, c.pin)
				t0 := time.Now()
				got, err := b.MSMG2(log.context(), bases, scalars)
				wall = time.Since(t0)
				require.NoError(t, err)
				want, err := ref.MSMG2(context.Background(), bases, clone(scalars))
				require.NoError(t, err)
				require.True(t, got.Equal(&want), "G2 in chunks differs from the CPU backend's")
			} else {
				bases := randG1(c.n, min(c.n, 64), rng)
				if c.table { // resident with a table before the plan cuts its MSMs
					m, err := b.msmEngine()
					require.NoError(t, err)
					require.NoError(t, m.SetTableMemory(1<<30))
					_, err = b.MSMG1(context.Background(), bases, scalars)
					require.NoError(t, err)
					require.NoError(t, m.SetTableMemory(0))
				}
				forcePlan(t, b, driver.Bytes(bases), bases, false, c.chunk, c.resident, c.pin)
				t0 := time.Now()
				got, err := b.MSMG1(log.context(), bases, scalars)
				wall = time.Since(t0)
				require.NoError(t, err)
				want, err := ref.MSMG1(context.Background(), bases, clone(scalars))
				require.NoError(t, err)
				require.True(t, got.Equal(&want), "G1 in chunks differs from the CPU backend's")
			}
			recs := log.take()
			require.Len(t, recs, 1, "one record for the whole MSM")
			assert.Equal(t, len(chunkRanges(c.n, c.chunk)), recs[0].Chunks)
			assert.Equal(t, c.n, recs[0].Points)
			pb := g1PointBytes
			if c.g2 {
				pb = g2PointBytes
			}
			if c.resident {
				assert.Zero(t, recs[0].StreamedBytes)
			} else {
				assert.Equal(t, int64(c.n*pb), recs[0].StreamedBytes)
			}
			if c.table {
				assert.Greater(t, recs[0].Copies, 1, "the chunks read the table")
			}
			// The stages and the idle time between chunks are disjoint spans
			// of the device's stream, inside the call.
			if recs[0].Chunks > 1 {
				assert.GreaterOrEqual(t, recs[0].Idle, time.Duration(0))
				assert.GreaterOrEqual(t, recs[0].Lead, time.Duration(0))
			} else {
				assert.Zero(t, recs[0].Idle, "one pass: no time between chunks")
				assert.Zero(t, recs[0].Lead, "one pass: no lead reported")
			}
			assert.LessOrEqual(t, recs[0].Compute+recs[0].Idle, wall, "stages and idle time within the call")
		})
	}
}

// A chunked MSM's lead counts from the end of the device's work before
// it: with the host asleep between two MSMs, the second's lead covers the
// sleep, and no more than the time from the first's end to the second's.
func TestMSMLeadCountsFromTheWorkBefore(t *testing.T) {
	b, _, rng := chunkedBackend(t)
	const n, chunk = 1 << 12, 1 << 10
	bases := randG1(n, 64, rng)
	forcePlan(t, b, driver.Bytes(bases), bases, false, chunk, false, true)
	_, err := b.MSMG1(context.Background(), bases, randScalars(n, rng))
	require.NoError(t, err)
	first := time.Now()
	const sleep = 50 * time.Millisecond
	time.Sleep(sleep)
	var log msmLog
	_, err = b.MSMG1(log.context(), bases, randScalars(n, rng))
	since := time.Since(first)
	require.NoError(t, err)
	recs := log.take()
	require.Len(t, recs, 1)
	require.Greater(t, recs[0].Chunks, 1)
	assert.GreaterOrEqual(t, recs[0].Lead, sleep, "the device was idle while the host slept")
	assert.LessOrEqual(t, recs[0].Lead, since, "from the first MSM's end, not before")
}

// A streamed MSM's first chunk, sent during the MSM before it (its set
// learned as the one that follows), gives the CPU backend's result, on
// fresh random scalars each time: G1 then G2 chunks of equal bytes (as at
// 16 GiB: A, B1, B2), the B pair's two MSMs in one call, the same set
// twice, and after a wrong guess or a one-pass MSM between them (both drop
// what was sent, and the job uploads its first chunk itself).
func TestMSMFirstChunkSentAheadMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	const chunk1, chunk2 = 1 << 10, 1 << 9 // 96 KiB of bases a chunk either way
	x, y, z := randG1(4097, 64, rng), randG1(3000, 64, rng), randG1(2500, 64, rng)
	w := randG2(3000, 32, rng)
	forcePlan(t, b, driver.Bytes(x), x, false, chunk1, false, true)
	forcePlan(t, b, driver.Bytes(y), y, false, chunk1, false, false) // pageable: through the staging chunks
	forcePlan(t, b, driver.Bytes(z), z, false, chunk1, false, true)
	forcePlan(t, b, driver.Bytes(w), w, true, chunk2, false, true)
	small := randG1(300, 64, rng) // one pass, unplanned
	m, err := b.msmEngine()
	require.NoError(t, err)
	uses := func() int {
		var n int
		require.NoError(t, b.dev.Do(func(*driver.Ctx) error { n = m.st.first.uses; return nil }))
		return n
	}
	g1 := func(name string, bases []bls12381.G1Affine) MSMTimings {
		t.Helper()
		var log msmLog
		s := randScalars(len(bases), rng)
		got, err := b.MSMG1(log.context(), bases, s)
		require.NoError(t, err)
		want, err := ref.MSMG1(context.Background(), bases, clone(s))
		require.NoError(t, err)
		require.True(t, got.Equal(&want), "%s differs from the CPU backend's", name)
		return log.last(t)
	}
	pair := func(name string) (MSMTimings, MSMTimings) {
		t.Helper()
		recs := checkMSMB(t, b, ref, y, w, randScalars(len(y), rng), name)
		require.Len(t, recs, 2)
		return recs[0], recs[1]
	}
	// Round one learns x → (y, w) → x; rounds two and three use it.
	for round := range 3 {
		rx := g1(fmt.Sprintf("x, round %d", round), x)
		ry, rw := pair(fmt.Sprintf("round %d", round))
		assert.Equal(t, round > 1, rx.FirstAhead, "x's first chunk sent during w's MSM, round %d", round)
		assert.Equal(t, round > 0, ry.FirstAhead, "y's first chunk sent during x's MSM, round %d", round)
		assert.Equal(t, round > 0, rw.FirstAhead, "w's first chunk sent during y's MSM, round %d", round)
		assert.Equal(t, int64(len(x)*g1PointBytes), rx.StreamedBytes)
	}
	before := uses()
	// A wrong guess: after w, x is expected, z comes.
	assert.False(t, g1("z after w", z).FirstAhead)
	// The same set twice: learned once, then taken.
	g1("z again", z)
	assert.True(t, g1("z a third time", z).FirstAhead)
	// A one-pass MSM between z and z: what was sent is dropped.
	g1("one pass", small)
	assert.False(t, g1("z after a one-pass MSM", z).FirstAhead)
	assert.Equal(t, before+1, uses())
}

// A B pair in chunks whose scalars are on the host leaves them, as its G1
// MSM's chunks load them, in work vector 0 (idle between A's MSM and the
// next quotient), and its G2 MSM reads them there: both equal the CPU
// backend's on fresh scalars. Without work vectors, with scalars longer than
// they are, or with a vector sent ahead into vector 0, each MSM sends its
// own, and the results are the same.
func TestMSMBKeepsItsScalarsMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	const n = 3000
	y, w := randG1(n, 64, rng), randG2(n, 32, rng)
	forcePlan(t, b, driver.Bytes(y), y, false, 1<<10, false, true)
	forcePlan(t, b, driver.Bytes(w), w, true, 1<<9, false, true)
	m, err := b.msmEngine()
	require.NoError(t, err)
	kept := func() int {
		var k int
		require.NoError(t, b.dev.Do(func(*driver.Ctx) error { k = m.st.keptPairs; return nil }))
		return k
	}
	checkMSMB(t, b, ref, y, w, randScalars(n, rng), "no work vectors yet")
	assert.Zero(t, kept(), "no work vectors: nothing kept")

	// Work vectors of 2^10 elements: shorter than the scalars.
	_, err = b.QuotientH(context.Background(), newVector(t, 1<<10, inputRandom), newVector(t, 1<<10, inputRandom),
		newVector(t, 1<<10, inputRandom))
	require.NoError(t, err)
	checkMSMB(t, b, ref, y, w, randScalars(n, rng), "work vectors shorter than the scalars")
	assert.Zero(t, kept())

	// Work vectors of 2^12: the scalars kept in vector 0, twice in a row.
	_, err = b.QuotientH(context.Background(), newVector(t, 1<<12, inputRandom), newVector(t, 1<<12, inputRandom),
		newVector(t, 1<<12, inputRandom))
	require.NoError(t, err)
	for round := range 2 {
		recs := checkMSMB(t, b, ref, y, w, randScalars(n, rng), fmt.Sprintf("kept, round %d", round))
		require.Len(t, recs, 2)
		assert.Equal(t, round+1, kept())
	}

	// A vector sent ahead into vector 0 (announced, then sent beside a
	// quotient and L‖H call's chunks) stays: the pair sends its own.
	require.NoError(t, b.dev.Do(func(*driver.Ctx) error {
		b.st.ahead = append(b.st.ahead, aheadVec{host: &randScalars(1, rng)[0], n: 1, dev: b.st.vecs[0]})
		return nil
	}))
	checkMSMB(t, b, ref, y, w, randScalars(n, rng), "vector 0 holds a vector sent ahead")
	assert.Equal(t, 2, kept())
	require.NoError(t, b.dev.Do(func(*driver.Ctx) error { b.st.ahead = nil; return nil }))

	// Scalars sent ahead themselves: the pair reads them from the device.
	s := pinnedCopy(t, b, randScalars(n, rng))
	require.NoError(t, b.Prefetch(context.Background(), s))
	checkMSMB(t, b, ref, y, w, s, "scalars announced, not sent (no L‖H call)")
	assert.Equal(t, 3, kept(), "announced but never sent: host scalars, kept")
}

// An MSM that does not fit whole under the Backend's memory limit, with
// no plan, runs in chunks as large as fit and equals the CPU backend's;
// the device memory held stays within the limit by the Backend's account
// and by the driver's free memory around the run.
func TestMSMFitsTheLimitInChunks(t *testing.T) {
	dev := testDevice(t)
	n := 1 << 18
	_, scratch, err := MSMBytes(n, false, 0)
	require.NoError(t, err)
	limit := int64(n)*g1PointBytes + scratch/3 // the bases resident, a third of one pass's scratch
	b, err := New(dev, WithMemoryLimit(limit))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	_, ref, rng := chunkedBackend(t)
	driverUsed := driverUsage(t, b, dev)
	bases, scalars := randG1(n, 256, rng), randScalars(n, rng)
	var log msmLog
	got, err := b.MSMG1(log.context(), bases, scalars)
	require.NoError(t, err)
	want, err := ref.MSMG1(context.Background(), bases, clone(scalars))
	require.NoError(t, err)
	require.True(t, got.Equal(&want), "MSM in chunks under the limit differs from the CPU backend's")
	recs := log.take()
	require.Len(t, recs, 1)
	assert.Greater(t, recs[0].Chunks, 1, "cut to fit")
	_, peak := b.MemoryHeld()
	assert.LessOrEqual(t, peak, limit, "the Backend's account")
	assert.LessOrEqual(t, driverUsed(), limit+driverSlack, "the driver's free memory around the run")
}

// driverSlack is what the driver's free memory may drop beyond what the
// Backend allocates once its kernels ran (the allocator's rounding).
const driverSlack = 16 << 20

// driverUsage warms b (its kernels loaded and launched once, so that the
// driver's code and local memory for them are in place) and returns a
// function that gives the device memory b holds by the driver's count: what
// b held after the warm-up plus the drop in free memory since.
func driverUsage(t *testing.T, b *Backend, dev *driver.Device) func() int64 {
	t.Helper()
	require.NoError(t, b.warm(context.Background()))
	held0, _ := b.MemoryHeld()
	free0 := freeMemory(t, dev)
	return func() int64 { return held0 + free0 - freeMemory(t, dev) }
}

func freeMemory(t *testing.T, dev *driver.Device) int64 {
	t.Helper()
	var free int64
	require.NoError(t, dev.Do(func(c *driver.Ctx) (err error) {
		free, _, err = c.MemInfo()
		return err
	}))
	return free
}

// A proof under a device-memory budget too small for its key and working
// memory together follows PlanKey's plan (some sets streamed, the quotient
// lean) and equals the CPU backend's proof, at every budget down to the
// smallest the planner takes (in steps of 2 % of the whole key's peak, so
// that every plan between is met); memory stays within the budget by both
// measures. At each plan a batch of two proofs (groth16.ProveBatch) equals
// the CPU backend's two proofs made in turn.
func TestProveWithinMemoryLimit(t *testing.T) {
	dev := testDevice(t)
	f := newProvingFixture(t)
	g1, g2 := f.pk.Bases()
	logN := uint32(0)
	for 1<<logN < f.pk.DomainSize {
		logN++
	}
	whole := func() KeyPlan {
		b, err := New(dev)
		require.NoError(t, err)
		defer func() { require.NoError(t, b.Close()) }()
		kp, err := b.PlanKey(g1, g2, logN)
		require.NoError(t, err)
		require.True(t, kp.Whole(), "an unlimited GPU holds the test key whole: %s", kp)
		return kp
	}()
	streamedOnce, leanOnce, refused := false, false, false
	seen := map[string]bool{}
	// A batch of two proofs draws r and s for each in turn: the CPU
	// backend's proofs from one blinding stream, one after the other.
	inTurn := func() [][]byte {
		ref, err := cpu.New()
		require.NoError(t, err)
		rnd := blinding()
		var out [][]byte
		for range 2 {
			p, err := groth16.Prove(context.Background(), f.pk, f.solve(), ref, rnd)
			require.NoError(t, err)
			out = append(out, proofBytes(t, p))
		}
		require.Equal(t, f.want, out[0])
		return out
	}()
	for step := 0; step <= 50 && !refused; step++ {
		limit := whole.Peak() * int64(100-2*step) / 100
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			b, err := New(dev, WithMemoryLimit(limit))
			require.NoError(t, err)
			defer func() { require.NoError(t, b.Close()) }()
			driverUsed := driverUsage(t, b, dev)
			kp, err := b.PlanKey(g1, g2, logN)
			if err != nil {
				require.ErrorIs(t, err, ErrDeviceMemory)
				t.Logf("below the smallest plan: %v", err)
				refused = true
				return
			}
			plan := fmt.Sprint(kp.Lean, kp.Sets)
			if seen[plan] {
				return // proved at a larger budget already
			}
			seen[plan] = true
			streamedOnce = streamedOnce || kp.StreamedBytes() > 0
			leanOnce = leanOnce || kp.Lean
			ws := groth16.NewWorkspace(b)
			defer func() { require.NoError(t, ws.Close()) }()
			for range 2 { // the second proof runs on what the first left resident
				proof, err := groth16.Prove(context.Background(), f.pk, f.solve(), b, blinding(), groth16.WithWorkspace(ws))
				require.NoError(t, err, "plan %s", kp)
				require.Equal(t, f.want, proofBytes(t, proof), "plan %s", kp)
			}
			// The same key's proofs as a batch (ProveBatch): its shared
			// A and B calls take the work vectors for their carries.
			ws2 := groth16.NewWorkspace(b)
			defer func() { require.NoError(t, ws2.Close()) }()
			// The second proof joins once the first has done its own part.
			joined := false
			join := func() (groth16.BatchProof, bool) {
				if joined {
					return groth16.BatchProof{}, false
				}
				joined = true
				return groth16.BatchProof{Asg: f.solve(), Workspace: ws2}, true
			}
			batch := groth16.Batch{Proofs: []groth16.BatchProof{{Asg: f.solve(), Workspace: ws}}, Join: join, Max: 2}
			proofs, errs := groth16.ProveBatch(context.Background(), f.pk, batch, b, blinding())
			require.Len(t, proofs, 2, "plan %s", kp)
			for i := range proofs {
				require.NoError(t, errs[i], "batch proof %d, plan %s", i, kp)
				require.Equal(t, inTurn[i], proofBytes(t, proofs[i]), "batch proof %d, plan %s", i, kp)
			}
			_, peak := b.MemoryHeld()
			assert.LessOrEqual(t, peak, limit, "the Backend's account; plan %s", kp)
			assert.LessOrEqual(t, driverUsed(), limit+driverSlack, "the driver's free memory; plan %s", kp)
		})
	}
	assert.True(t, refused, "the budgets went down to one no plan fits")
	assert.True(t, streamedOnce, "some budget streamed a set")
	assert.True(t, leanOnce, "some budget ran the quotient lean")
	assert.GreaterOrEqual(t, len(seen), 2, "plans met: %v", seen)
}

// A's MSM after the L‖H MSM, as Prove runs them: once the engine has
// learned that A's streamed set comes after L‖H's, the L‖H chunks whose
// scalars are on the device send A's first chunks into work vector 1, each
// into a slot the chunks still to run no longer read (h, from its end
// down), and A's chunks run from a ring of those slots and its stream
// buffers. A, in turn, sends B1's chunks into the room: chained into the
// slots its ring is done with, or, where it runs without a ring, beside its
// chunks as the L‖H MSM does. Every result equals the CPU backend's on
// fresh inputs, with room for one chunk, for two, for none; with the A
// wires not sent ahead (the chunks with host scalars send nothing); and,
// in the last round, after a wrong guess (another streamed MSM comes
// first, and finds what was sent is not its own) and after a quotient that
// writes the room between.
func TestMSMRingSentAheadMatchesCPU(t *testing.T) {
	const logN = 12
	n := 1 << logN
	nPriv := n - 7
	// L‖H: 8184 points in 9 chunks of 1000, run from the last: the H chunks
	// [8000, 8184) … [5000, 6000) at run indices 0 to 3, reading h's bytes
	// [125152, 131040), [93152, 125152), [61152, 93152) and [29152, 61152);
	// the chunk [4000, 5000) at 4, which reads h's first 911 (bytes
	// [0, 29152)) and 89 private wires; then the L chunks. Work vector 1
	// holds 2^12 elements: 128 KiB. With A's chunks of 512 points (48 KiB),
	// slot 0 is [80 KiB, 128 KiB), free from index 3, and slot 1 [32 KiB,
	// 80 KiB), free from index 4; with chunks of 1024 (96 KiB), the one slot
	// [32 KiB, 128 KiB) is free from index 4.
	for _, tc := range []struct {
		name   string
		aChunk int // A's 4091 points in chunks of aChunk
		ready  bool
		// between runs between L‖H and A in the last round: "" (nothing),
		// "other" (another streamed MSM), "quotient" (a quotient writes
		// the work vectors).
		between string
		found   int // chunks A finds sent ahead in round 1 (round 0 learns)
		// bFound is the chunks B1 (2049 points in chunks of 512: 48 KiB,
		// five chunks) finds in the room in rounds 1 and 2. Where A runs
		// from a ring of two room slots and its two stream buffers (four
		// slots, eight chunks), its room slots hold their last chunks at
		// 4 and 5, so A chains B1's chunks into them beside its chunks 5
		// and 6 (ringChain): two. With one room slot (three slots, four
		// chunks) the slot holds A's last chunk: none. Where A does not
		// run from a ring, it sends B1's chunks into the room's two slots
		// beside its first chunks (ringAhead): two.
		bFound int
	}{
		{"two slots", 512, true, "", 2, 2},                   // 48 KiB a chunk: two slots, two sent
		{"one slot", 1024, true, "", 1, 0},                   // 96 KiB: one slot
		{"no slot", 2048, true, "", 0, 2},                    // 192 KiB: the room holds none
		{"the A wires not sent ahead", 512, false, "", 1, 2}, // index 4's private wires are on the host
		{"a wrong guess", 512, true, "other", 2, 2},
		{"a quotient between", 512, true, "quotient", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ref, rng := chunkedBackend(t)
			require.NoError(t, b.dev.Do(func(*driver.Ctx) error { b.st.lean = true; return nil }))
			basesA, basesB, lh := randG1(n, 64, rng), randG1(n/2+1, 64, rng), randG1(nPriv+n-1, 64, rng)
			g2B := randG2(n/2+1, 16, rng)
			other := randG1(3000, 64, rng)
			forcePlan(t, b, driver.Bytes(lh), lh, false, 1000, false, true)
			forcePlan(t, b, driver.Bytes(basesA[:n-5]), basesA, false, tc.aChunk, false, true)
			forcePlan(t, b, driver.Bytes(other), other, false, 1024, false, true)
			forcePlan(t, b, driver.Bytes(basesB), basesB, false, 512, false, true)
			forcePlan(t, b, driver.Bytes(g2B), g2B, true, 256, false, true) // B2 streamed, as at 16 GiB
			m, err := b.msmEngine()
			require.NoError(t, err)
			for round := range 3 {
				what := fmt.Sprintf("round %d", round)
				wireA := pinnedCopy(t, b, randScalars(n-5, rng))
				private := wireA[n-5-nPriv:]
				wireB := pinnedCopy(t, b, randScalars(n/2+1, rng))
				require.NoError(t, b.PrefetchReady(context.Background(), readyIf(tc.ready), wireA, wireB))
				checkQuotientLH(t, b, ref, lh, private, nil, n, what+": quotient and L‖H")
				between := ""
				if round == 2 {
					between = tc.between
				}
				switch between {
				case "other":
					s := randScalars(len(other), rng)
					var logO msmLog
					gotO, err := b.MSMG1(logO.context(), other, s)
					require.NoError(t, err)
					wantO, err := ref.MSMG1(context.Background(), other, clone(s))
					require.NoError(t, err)
					require.True(t, gotO.Equal(&wantO), "%s: the MSM between differs from the CPU backend's", what)
					assert.Zero(t, logO.last(t).RingFound, "%s: A's chunks are not the other MSM's", what)
				case "quotient":
					x, y, z := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
					gotQ, err := b.QuotientH(context.Background(), clone(x), clone(y), clone(z))
					require.NoError(t, err)
					wantQ, err := ref.QuotientH(context.Background(), x, y, z)
					require.NoError(t, err)
					require.Equal(t, wantQ, gotQ, "%s: the quotient between differs from the CPU backend's", what)
				}
				var log msmLog
				gotA, err := b.MSMG1(log.context(), basesA[:n-5], wireA)
				require.NoError(t, err)
				wantA, err := ref.MSMG1(context.Background(), basesA[:n-5], clone(wireA))
				require.NoError(t, err)
				require.True(t, gotA.Equal(&wantA), "%s: A differs from the CPU backend's", what)
				rec := log.last(t)
				if round == 0 || between != "" {
					// Round 0 learns L‖H → A; what was sent in round 2 is
					// dropped by what came between.
					assert.Zero(t, rec.RingFound, what)
				} else {
					assert.Equal(t, tc.found, rec.RingFound, "%s: A's chunks found sent ahead", what)
				}
				assert.Equal(t, int64((n-5)*g1PointBytes), rec.StreamedBytes, what)
				recB := checkMSMB(t, b, ref, basesB, g2B, wireB, what)
				require.NotEmpty(t, recB, what)
				require.Equal(t, int64((n/2+1)*g1PointBytes), recB[0].StreamedBytes, "%s: B1 streamed", what)
				switch {
				case round == 0:
					assert.Zero(t, recB[0].RingFound, "%s: round 0 learns A → B1", what)
				case between == "quotient":
					// The quotient dropped the A wires sent ahead: A's chunks
					// carry their scalars, and send nothing beside them.
					assert.Zero(t, recB[0].RingFound, "%s: B1's chunks found in the room", what)
				default:
					assert.Equal(t, tc.bFound, recB[0].RingFound, "%s: B1's chunks found in the room", what)
				}
			}
			var holds bool
			require.NoError(t, b.dev.Do(func(*driver.Ctx) error { holds = m.st.ringHolds(); return nil }))
			assert.False(t, holds, "nothing left in the room")
		})
	}
}
