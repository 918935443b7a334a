package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/testseed"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

var _ groth16.HostAllocator = (*Backend)(nil)

// pinnedCopy returns v copied into memory from b.AllocHost.
func pinnedCopy(t testing.TB, b *Backend, v []fr.Element) []fr.Element {
	t.Helper()
	p, _, err := groth16.AllocVector(b, len(v))
	require.NoError(t, err)
	copy(p, v)
	return p
}

// Vectors in the Backend's pinned host memory skip the staging chunks: the
// quotient (uploads and the download of h) and the MSMs must give the CPU
// backend's results from them, for sizes below and above one staging chunk.
func TestPinnedHostVectors(t *testing.T) {
	dev := testDevice(t)
	b, err := New(dev, WithStagingChunk(1<<20))
	require.NoError(t, err)
	ref, err := cpu.New()
	require.NoError(t, err)
	rng := newTestRand(testseed.Seed(t))
	for _, logN := range []uint32{3, 12, 16} {
		t.Run(fmt.Sprintf("2^%d", logN), func(t *testing.T) {
			n := 1 << logN
			a, bv, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
			want, err := ref.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
			require.NoError(t, err)
			pa, pb, pc := pinnedCopy(t, b, a), pinnedCopy(t, b, bv), pinnedCopy(t, b, c)
			got, err := b.QuotientH(context.Background(), pa, pb, pc)
			require.NoError(t, err)
			requireSameVector(t, want, got, "h from pinned vectors")
			assert.Same(t, &pa[0], &got[0], "h is written into a's storage")

			// The whole pinned vector, and a part of it that starts inside.
			bases := randG1(n, min(n, 64), rng)
			for _, s := range [][]fr.Element{pb, pb[1:]} {
				got1, err := b.MSMG1(context.Background(), bases[:len(s)], s)
				require.NoError(t, err)
				want1, err := ref.MSMG1(context.Background(), bases[:len(s)], clone(s))
				require.NoError(t, err)
				assert.True(t, got1.Equal(&want1), "G1 MSM of %d pinned scalars", len(s))
			}
			g2 := randG2(n, min(n, 16), rng)
			got2, err := b.MSMG2(context.Background(), g2, pc)
			require.NoError(t, err)
			want2, err := ref.MSMG2(context.Background(), g2, clone(pc))
			require.NoError(t, err)
			assert.True(t, got2.Equal(&want2), "G2 MSM of pinned scalars")
			for _, v := range [][]fr.Element{pa, pb} {
				require.NoError(t, b.FreeHost(driver.Bytes(v)))
			}
			// pc is left for Close.
		})
	}
	raw, err := b.AllocHost(4096)
	require.NoError(t, err)
	require.NoError(t, b.FreeHost(raw))
	assert.ErrorIs(t, b.FreeHost(raw), ErrNotHostBuffer, "a second FreeHost")
	assert.ErrorIs(t, b.FreeHost(make([]byte, 64)), ErrNotHostBuffer, "Go memory")
	assert.ErrorIs(t, b.FreeHost(nil), ErrNotHostBuffer, "nil")

	left, err := b.AllocHost(4096)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, dev.Do(func(c *driver.Ctx) error {
		assert.False(t, c.Pinned(left), "Close releases what FreeHost did not")
		return nil
	}))
}

// MSMQuotientLH equals the CPU backend's quotient followed by the L‖H MSM
// over private ‖ h, with private on the Go heap or pinned, empty or not, and
// leaves a, b, c unchanged.
func TestMSMQuotientLHMatchesCPU(t *testing.T) {
	b := testBackend(t)
	ref, err := cpu.New()
	require.NoError(t, err)
	rng := newTestRand(testseed.Seed(t))
	for _, tc := range []struct {
		logN     uint32
		nPrivate int
		pinned   bool
	}{{1, 0, false}, {3, 5, false}, {12, 1000, false}, {12, 1000, true}, {16, 60000, true}, {16, 1, false}} {
		t.Run(fmt.Sprintf("2^%d/%d/pinned=%v", tc.logN, tc.nPrivate, tc.pinned), func(t *testing.T) {
			n := 1 << tc.logN
			a, bv, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
			private := randScalars(tc.nPrivate, rng)
			if tc.pinned && tc.nPrivate > 0 {
				private = pinnedCopy(t, b, private)
				defer func() { require.NoError(t, b.FreeHost(driver.Bytes(private))) }()
			}
			lh := randG1(tc.nPrivate+n-1, min(tc.nPrivate+n-1, 64), rng)
			h, err := ref.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
			require.NoError(t, err)
			want, err := ref.MSMG1(context.Background(), lh, append(clone(private), h[:n-1]...))
			require.NoError(t, err)
			aIn, bIn, cIn := clone(a), clone(bv), clone(c)
			got, err := b.MSMQuotientLH(context.Background(), lh, private, a, bv, c)
			require.NoError(t, err)
			assert.True(t, got.Equal(&want), "quotient and L‖H MSM differ from the CPU backend's")
			assert.Equal(t, aIn, a, "a unchanged")
			assert.Equal(t, bIn, bv, "b unchanged")
			assert.Equal(t, cIn, c, "c unchanged")
		})
	}
}

// A key plan's lean quotient (two work vectors) gives the same
// MSMQuotientLH as the CPU backend, and prefetches into the one work vector
// the L‖H MSM does not read: of two announced vectors one is sent, and the
// MSM that takes it equals the CPU backend's.
func TestLeanMSMQuotientLHMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	require.NoError(t, b.dev.Do(func(*driver.Ctx) error { b.st.lean = true; return nil }))
	const logN = 12
	n := 1 << logN
	nPriv := n - 7
	wireA, wireB := pinnedCopy(t, b, randScalars(n-5, rng)), pinnedCopy(t, b, randScalars(n/2, rng))
	basesA, lh := randG1(n, 64, rng), randG1(nPriv+n-1, 64, rng)
	private := randScalars(nPriv, rng)
	for run := range 2 {
		a, bv, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
		h, err := ref.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
		require.NoError(t, err)
		want, err := ref.MSMG1(context.Background(), lh, append(clone(private), h[:n-1]...))
		require.NoError(t, err)
		require.NoError(t, b.Prefetch(context.Background(), wireA, wireB))
		got, err := b.MSMQuotientLH(context.Background(), lh, private, a, bv, c)
		require.NoError(t, err)
		require.True(t, got.Equal(&want), "run %d: quotient and L‖H MSM differ from the CPU backend's", run)
		assert.Equal(t, 1, aheadCount(t, b), "run %d: one work vector free for a prefetch", run)
		gotA, err := b.MSMG1(context.Background(), basesA[:len(wireA)], wireA)
		require.NoError(t, err)
		wantA, err := ref.MSMG1(context.Background(), basesA[:len(wireA)], clone(wireA))
		require.NoError(t, err)
		assert.True(t, gotA.Equal(&wantA), "run %d: prefetched A differs from the CPU backend's", run)
		assert.Zero(t, aheadCount(t, b))
	}
	require.NoError(t, b.dev.Do(func(*driver.Ctx) error {
		assert.Equal(t, 2, b.st.nvec, "two work vectors")
		return nil
	}))
}

// With the L‖H bases streamed in chunks, the lean quotient holds c in the
// MSM's idle arena (all of c, or with chunks of 30 points the part its
// smaller arena holds, at 2^14) and the announced vectors go up during the
// MSM, a share beside each chunk: the
// quotient and L‖H MSM, and the MSMs that take the prefetched vectors, equal
// the CPU backend's, with three work vectors and lean, over many chunks and
// over one; vectors never ready are left to their calls.
func TestStreamedLHMatchesCPU(t *testing.T) {
	for _, tc := range []struct {
		name  string
		logN  int
		lean  bool
		chunk int // 0: one chunk
		ready bool
		cPart bool // c larger than the arena: lean, only its first bytes go up early
		holds bool // the A wires are public ‖ private in one vector: the L chunks copy theirs from it
	}{{"three vectors, 9 chunks", 12, false, 1000, true, false, false}, {"lean, 9 chunks", 12, true, 1000, true, false, false},
		{"three vectors, chunks of 3", 12, false, 3, true, false, false}, {"lean, one chunk", 12, true, 0, true, false, false},
		{"lean, c partly in the arena", 14, true, 30, true, true, false},
		{"three vectors, never ready", 12, false, 1000, false, false, false},
		{"lean, 9 chunks, the A wires hold the private ones", 12, true, 1000, true, false, true},
		{"three vectors, chunks of 3, the A wires hold the private ones", 12, false, 3, true, false, true},
		{"lean, 9 chunks, the A wires hold the private ones, never ready", 12, true, 1000, false, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			n := 1 << tc.logN
			nPriv := n - 7
			if tc.chunk == 0 {
				tc.chunk = nPriv + n - 1
			}
			b, ref, rng := chunkedBackend(t)
			require.NoError(t, b.dev.Do(func(*driver.Ctx) error { b.st.lean = tc.lean; return nil }))
			wireA, wireB := pinnedCopy(t, b, edgeScalars("bits", n-5, rng)), pinnedCopy(t, b, randScalars(n/2+1, rng))
			basesA, basesB, lh := randG1(n, 64, rng), randG1(n/2+1, 64, rng), randG1(nPriv+n-1, 64, rng)
			g2B := randG2(n/2+1, 16, rng)
			forcePlan(t, b, driver.Bytes(lh), lh, false, tc.chunk, false, true)
			private := randScalars(nPriv, rng)
			if tc.holds {
				wireA = pinnedCopy(t, b, append(randScalars(n-nPriv, rng), private...))
				private = wireA[n-nPriv:]
			}
			require.NoError(t, b.PrefetchReady(context.Background(), readyIf(tc.ready), wireA, wireB))
			lhRec := checkQuotientLH(t, b, ref, lh, private, nil, n, "quotient and streamed L‖H MSM").last(t)
			assert.True(t, lhRec.FirstAhead, "the first chunk's bases went up during the quotient's last transforms")
			if tc.holds && tc.ready && tc.chunk < nPriv+n-1 {
				assert.Equal(t, int64(len(driver.Bytes(private))), lhRec.AheadBytes,
					"the L chunks copied the private wires from the A wires sent ahead")
			} else {
				assert.Zero(t, lhRec.AheadBytes, "the private wires uploaded")
			}
			if tc.lean {
				m, err := b.msmEngine()
				require.NoError(t, err)
				var arena uint64
				require.NoError(t, b.dev.Do(func(*driver.Ctx) error { arena = m.st.arenaLen; return nil }))
				assert.Equal(t, tc.cPart, arena < uint64(n*elemBytes),
					"the case holds c partly in the arena (%d bytes against c's %d)", arena, n*elemBytes)
			}
			sent := 2
			if tc.lean {
				sent = 1
			}
			if !tc.ready {
				sent = 0
			}
			assert.Equal(t, sent, aheadCount(t, b), "vectors sent ahead")
			gotA, err := b.MSMG1(context.Background(), basesA[:len(wireA)], wireA)
			require.NoError(t, err)
			wantA, err := ref.MSMG1(context.Background(), basesA[:len(wireA)], clone(wireA))
			require.NoError(t, err)
			assert.True(t, gotA.Equal(&wantA), "A (prefetched: %v) differs from the CPU backend's", sent > 0)
			checkMSMB(t, b, ref, basesB, g2B, wireB, "after a prefetch")
			assert.Zero(t, aheadCount(t, b))
		})
	}
}

// checkQuotientLH runs MSMQuotientLH over lh and private with a (nil:
// fresh) and fresh b and c of n elements, requires it to equal the CPU
// backend's, and returns the call's records.
func checkQuotientLH(t *testing.T, b *Backend, ref *cpu.Backend, lh []bls12381.G1Affine, private, a []fr.Element, n int,
	what string) *msmLog {
	t.Helper()
	if a == nil {
		a = newVector(t, n, inputRandom)
	}
	bv, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom)
	h, err := ref.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
	require.NoError(t, err)
	want, err := ref.MSMG1(context.Background(), lh, append(clone(private), h[:n-1]...))
	require.NoError(t, err)
	var log msmLog
	got, err := b.MSMQuotientLH(log.context(), lh, private, a, bv, c)
	require.NoError(t, err)
	require.True(t, got.Equal(&want), "%s differs from the CPU backend's", what)
	return &log
}

// readyIf returns a channel closed when ready is true, and never
// otherwise (PrefetchReady's vectors never ready).
func readyIf(ready bool) chan struct{} {
	c := make(chan struct{})
	if ready {
		close(c)
	}
	return c
}

// chunkedBackend returns a Backend of the test's own with 1 MiB staging
// chunks (closed when the test ends), the CPU backend as the reference and
// a generator of fresh inputs, its seed logged.
func chunkedBackend(t *testing.T) (*Backend, *cpu.Backend, *rand.Rand) {
	t.Helper()
	b, err := New(testDevice(t), WithStagingChunk(1<<20))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	ref, err := cpu.New()
	require.NoError(t, err)
	seed := testseed.Seed(t)
	return b, ref, newTestRand(seed)
}

// MSMB equals the CPU backend's two MSMs over the same scalars, at awkward
// sizes, for random and bit-valued scalars, from the Go heap or pinned
// memory: with one sort for both curves (plain plans), and with a sort each
// where a table on the G1 bases gives G1 another window shape.
func TestMSMBMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	for _, tc := range []struct {
		n      int
		kind   string
		pinned bool
		table  bool
	}{{1, "random", false, false}, {2, "random", false, false}, {3, "bits", false, false},
		{1023, "random", true, false}, {4097, "bits", false, false}, {65537, "random", true, false},
		{1 << 16, "bits", true, true}, {1<<16 - 1, "random", false, true}} {
		t.Run(fmt.Sprintf("%d/%s/pinned=%v/table=%v", tc.n, tc.kind, tc.pinned, tc.table), func(t *testing.T) {
			scalars := edgeScalars(tc.kind, tc.n, rng)
			if tc.pinned {
				scalars = pinnedCopy(t, b, scalars)
				defer func() { require.NoError(t, b.FreeHost(driver.Bytes(scalars))) }()
			}
			g1 := randG1(tc.n, min(tc.n, 64), rng)
			g2 := randG2(tc.n, min(tc.n, 16), rng)
			m, err := b.msmEngine()
			require.NoError(t, err)
			if tc.table { // the G1 bases resident with a table, the G2 bases without
				require.NoError(t, m.SetTableMemory(1<<30))
				_, err := b.MSMG1(context.Background(), g1, scalars)
				require.NoError(t, err)
				require.NoError(t, m.SetTableMemory(0))
			}
			tm := checkMSMB(t, b, ref, g1, g2, scalars, "")
			require.Len(t, tm, 2, "the pair reports two MSMs")
			assert.Equal(t, groth16.PhaseMSMB1, tm[0].Call)
			assert.Equal(t, groth16.PhaseMSMB2, tm[1].Call)
			assert.Equal(t, tc.n, tm[0].Points)
			assert.Equal(t, tc.n, tm[1].Points)
			assert.Equal(t, tc.table, tm[0].Copies > 1, "G1 copies %d", tm[0].Copies)
			assert.Equal(t, 1, tm[1].Copies)
			require.NoError(t, m.EvictBases())
		})
	}
	_, _, err := b.MSMB(context.Background(), randG1(3, 3, rng), randG2(2, 2, rng), randScalars(3, rng))
	assert.ErrorIs(t, err, ErrMSMInput, "G2 bases shorter than the scalars")
}

// checkMSMB checks b.MSMB against the CPU backend's two MSMs and returns
// the call's MSM records.
func checkMSMB(t *testing.T, b *Backend, ref *cpu.Backend, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine,
	s []fr.Element, what string) []MSMTimings {
	t.Helper()
	var log msmLog
	got1, got2, err := b.MSMB(log.context(), g1, g2, s)
	require.NoError(t, err)
	want1, err := ref.MSMG1(context.Background(), g1, clone(s))
	require.NoError(t, err)
	want2, err := ref.MSMG2(context.Background(), g2, clone(s))
	require.NoError(t, err)
	assert.True(t, got1.Equal(&want1), "%s: B in G1 differs from the CPU backend's", what)
	assert.True(t, got2.Equal(&want2), "%s: B in G2 differs from the CPU backend's", what)
	return log.take()
}

// aheadCount returns how many prefetched vectors wait on the device.
func aheadCount(t *testing.T, b *Backend) int {
	t.Helper()
	var n int
	require.NoError(t, b.dev.Do(func(*driver.Ctx) error { n = len(b.st.ahead); return nil }))
	return n
}

// Vectors announced by Prefetch go to the device during MSMQuotientLH's
// L‖H MSM when pinned and no longer than the quotient's domain; the MSM
// calls over them (MSMG1, MSMB) take them from there, each once, and every
// result equals the CPU backend's, prefetched or not. A quotient in between
// drops them.
func TestPrefetchMatchesCPU(t *testing.T) {
	b, ref, rng := chunkedBackend(t)
	const logN = 12
	n := 1 << logN
	nA, nB, nPriv := n-5, n/2+1, n-7
	wireA := pinnedCopy(t, b, edgeScalars("bits", nA, rng))
	wireB := pinnedCopy(t, b, randScalars(nB, rng))
	long := pinnedCopy(t, b, randScalars(n+1, rng)) // longer than a work vector
	heap := randScalars(nA, rng)                    // not pinned
	basesA, basesB, lh := randG1(n+1, 64, rng), randG1(nB, 64, rng), randG1(nPriv+n-1, 64, rng)
	g2B := randG2(nB, 16, rng)
	private := randScalars(nPriv, rng)

	fused := func() {
		t.Helper()
		checkQuotientLH(t, b, ref, lh, private, nil, n, "quotient and L‖H MSM")
	}
	g1 := func(bases []bls12381.G1Affine, s []fr.Element, what string) {
		t.Helper()
		got, err := b.MSMG1(context.Background(), bases[:len(s)], s)
		require.NoError(t, err)
		want, err := ref.MSMG1(context.Background(), bases[:len(s)], clone(s))
		require.NoError(t, err)
		assert.True(t, got.Equal(&want), "%s: G1 MSM differs from the CPU backend's", what)
	}

	require.NoError(t, b.Prefetch(context.Background(), wireA, long, heap, wireB))
	fused()
	assert.Equal(t, 2, aheadCount(t, b), "the pinned vectors that fit are sent")
	g1(basesA, wireA, "A, prefetched")
	assert.Equal(t, 1, aheadCount(t, b), "a prefetched vector serves one call")
	g1(basesA, wireA, "A again, uploaded")
	checkMSMB(t, b, ref, basesB, g2B, wireB, "prefetched")
	assert.Zero(t, aheadCount(t, b))
	g1(basesA, heap, "heap scalars, not prefetched")
	g1(basesA, long, "longer than a work vector, not prefetched")

	// A quotient overwrites the work vectors: what was sent is dropped.
	require.NoError(t, b.Prefetch(context.Background(), wireA))
	fused()
	require.Equal(t, 1, aheadCount(t, b))
	x, y, z := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
	_, err := b.QuotientH(context.Background(), x, y, z)
	require.NoError(t, err)
	assert.Zero(t, aheadCount(t, b), "dropped by the quotient")
	g1(basesA, wireA, "A after a quotient, uploaded")
}

func TestDeviceMemoryRecordsThePeak(t *testing.T) {
	var m deviceMemory
	m.add(100)
	m.add(50)
	m.add(-120)
	m.add(10)
	assert.Equal(t, int64(40), m.held)
	assert.Equal(t, int64(40), m.now.Load())
	assert.Equal(t, int64(150), m.peak.Load())
}

// The next quotient's a, given by the source PrefetchQuotient was handed
// after a fused call, goes up into work vector 1 beside the chunks of the A
// and B MSMs that leave the link room (resident bases, or G2's: beside a
// streamed chunk at most two thirds of its bases' bytes), and the next fused
// call over that
// same slice transforms it there, uploading only the part not sent: every
// result equals the CPU backend's, with three work vectors and lean, bases
// resident and streamed, a source that answers late, and a sent in part.
// A quotient over another vector, a QuotientH in between, a drop, the work
// vectors reallocated, a source that never answers, or only streamed G1
// MSMs in between leave a to be uploaded by its quotient, again with every
// result equal.
func TestQuotientSentAheadMatchesCPU(t *testing.T) {
	const logN = 12
	n := 1 << logN
	nA, nB, nPriv := n-5, n/2+1, n-7
	for _, tc := range []struct {
		name     string
		lean     bool
		chunk    int  // the L‖H, A and B1 bases streamed in chunks of this many points (0: resident)
		g2Chunk  int  // B2's, with chunk (0: chunk/8, so more than eight chunks)
		onlyG1   bool // only the A MSM between the quotients
		answerAt int  // the source answers when asked for the answerAt-th time (0: first); -1: never
		between  string
		sent     string // "all", "part" or "" (none)
	}{
		{name: "three vectors, resident", sent: "all"},
		{name: "lean, resident", lean: true, sent: "all"},
		{name: "lean, resident, the source answers beside B2", lean: true, answerAt: 2, sent: "all"},
		{name: "lean, streamed: sent beside B2", lean: true, chunk: 1000, sent: "all"},
		{name: "three vectors, streamed: sent beside B2", chunk: 700, sent: "all"},
		{name: "lean, streamed, answered beside B2's last chunk: a sent in part", lean: true, chunk: 1000, g2Chunk: 30,
			answerAt: (nB+29)/30 - 1, sent: "part"},
		{name: "lean, streamed G1 only: not sent", lean: true, chunk: 1000, onlyG1: true},
		{name: "the source never answers", answerAt: -1},
		{name: "another a", between: "another a"},
		{name: "a QuotientH in between", between: "quotient"},
		{name: "dropped", between: "drop"},
		{name: "vectors reallocated", between: "realloc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ref, rng := chunkedBackend(t)
			require.NoError(t, b.dev.Do(func(*driver.Ctx) error { b.st.lean = tc.lean; return nil }))
			basesA, basesB, lh := randG1(nA, 64, rng), randG1(nB, 64, rng), randG1(nPriv+n-1, 64, rng)
			g2B := randG2(nB, 16, rng)
			if tc.chunk > 0 {
				forcePlan(t, b, driver.Bytes(lh), lh, false, tc.chunk, false, true)
				forcePlan(t, b, driver.Bytes(basesA), basesA, false, tc.chunk, false, true)
				forcePlan(t, b, driver.Bytes(basesB), basesB, false, tc.chunk, false, true)
				g2Chunk := tc.g2Chunk
				if g2Chunk == 0 {
					g2Chunk = tc.chunk / 8
				}
				forcePlan(t, b, driver.Bytes(g2B), g2B, true, g2Chunk, false, true)
			}
			fused := func(a []fr.Element, what string) QuotientTimings {
				t.Helper()
				log := checkQuotientLH(t, b, ref, lh, randScalars(nPriv, rng), a, n, what+": quotient and L‖H MSM")
				require.Len(t, log.quots, 1)
				return log.quots[0]
			}
			msmAB := func(what string) {
				t.Helper()
				wireA := pinnedCopy(t, b, randScalars(nA, rng))
				got, err := b.MSMG1(context.Background(), basesA, wireA)
				require.NoError(t, err)
				want, err := ref.MSMG1(context.Background(), basesA, clone(wireA))
				require.NoError(t, err)
				assert.True(t, got.Equal(&want), "%s: A differs from the CPU backend's", what)
				if !tc.onlyG1 {
					checkMSMB(t, b, ref, basesB, g2B, pinnedCopy(t, b, randScalars(nB, rng)), what)
				}
			}
			first := fused(pinnedCopy(t, b, newVector(t, n, inputRandom)), "the first proof")
			assert.Zero(t, first.AheadBytes, "nothing was announced before the first quotient")
			next := pinnedCopy(t, b, newVector(t, n, inputRandom))
			asked := 0
			require.NoError(t, b.PrefetchQuotient(context.Background(), func() []fr.Element {
				asked++
				if tc.answerAt < 0 || asked <= tc.answerAt {
					return nil
				}
				return next
			}))
			msmAB("between the quotients")
			a := next
			switch tc.between {
			case "another a":
				a = pinnedCopy(t, b, newVector(t, n, inputRandom))
			case "quotient":
				x, y, z := newVector(t, n, inputRandom), newVector(t, n, inputRandom), newVector(t, n, inputRandom)
				want, err := ref.QuotientH(context.Background(), clone(x), clone(y), clone(z))
				require.NoError(t, err)
				got, err := b.QuotientH(context.Background(), x, y, z)
				require.NoError(t, err)
				assert.Equal(t, want, got, "the QuotientH in between")
			case "drop":
				require.NoError(t, b.PrefetchQuotient(context.Background(), nil))
			case "realloc":
				require.NoError(t, b.dev.Do(func(*driver.Ctx) error { b.st.lean = !tc.lean; return nil }))
			}
			second := fused(a, "the proof after")
			switch all := int64(len(driver.Bytes(a))); tc.sent {
			case "all":
				assert.Equal(t, all, second.AheadBytes, "a sent ahead and used")
			case "part":
				room := int64(2*30*len(driver.Bytes(g2B[:1]))/3+aheadShareAlign-1) / aheadShareAlign * aheadShareAlign
				assert.Equal(t, room, second.AheadBytes,
					"two thirds of a B2 chunk's bases beside its last chunk, the rest uploaded by its quotient")
			default:
				assert.Zero(t, second.AheadBytes, "a uploaded by its quotient")
			}
			if tc.answerAt > 0 {
				assert.Greater(t, asked, tc.answerAt, "the source asked again until it answered")
			}
			// A third quotient, announced by nobody, uploads its own.
			third := fused(pinnedCopy(t, b, newVector(t, n, inputRandom)), "the third proof")
			assert.Zero(t, third.AheadBytes)
		})
	}
}
