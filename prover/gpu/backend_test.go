package gpu

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"nil logger", WithLogger(nil)},
		{"zero memory limit", WithMemoryLimit(0)},
		{"negative memory limit", WithMemoryLimit(-1)},
		{"chunk too small", WithStagingChunk(1 << 10)},
		{"chunk too large", WithStagingChunk(2 << 30)},
		{"chunk not whole elements", WithStagingChunk(1<<20 + 1)},
		{"negative MSM table memory", WithMSMTableMemory(-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(nil, tc.opt)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "nil device", "the option is rejected first")
		})
	}
	_, err := New(nil, WithMemoryLimit(1<<30), WithStagingChunk(1<<20))
	require.ErrorContains(t, err, "nil device")
}

func TestBadSizesAreRefusedBeforeDeviceWork(t *testing.T) {
	var b Backend // no device: any device work would panic
	for _, n := range []int{0, 1, 3, 6, 1000} {
		v := make([]fr.Element, n)
		_, err := b.QuotientH(context.Background(), v, v, v)
		assert.Error(t, err, "QuotientH size %d", n)
		assert.Error(t, b.NTT(v, false), "NTT size %d", n)
		assert.Error(t, b.INTT(v, true), "INTT size %d", n)
	}
	for _, n := range []int{0, 3, 1000} {
		_, err := b.TimeNTT(make([]fr.Element, n), false, 1)
		assert.ErrorContains(t, err, "ntt timing", "TimeNTT size %d", n)
	}
	v := make([]fr.Element, 4)
	_, err := b.TimeNTT(v, false, 0)
	assert.ErrorContains(t, err, "0 runs")
	_, err = b.QuotientH(context.Background(), v, v, v[:2])
	assert.ErrorContains(t, err, "differ")
	_, err = logSize(1 << (MaxLogN + 1))
	assert.ErrorContains(t, err, "above the supported")
	lh := make([]bls12381.G1Affine, 6)
	_, err = b.MSMQuotientLH(context.Background(), lh, make([]fr.Element, 2), v, v, v) // 2 + 4 − 1 = 5 ≠ 6
	assert.ErrorIs(t, err, ErrMSMInput)
	_, err = b.MSMQuotientLH(context.Background(), lh[:5], make([]fr.Element, 2), v, v, v[:3])
	assert.ErrorContains(t, err, "differ")
}

func TestMSMEmptySumIsInfinity(t *testing.T) {
	var b Backend // no device: the empty sum needs none
	p1, err := b.MSMG1(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.True(t, p1.Z.IsZero(), "G1 infinity")
	p2, err := b.MSMG2(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.True(t, p2.Z.IsZero(), "G2 infinity")
}

func TestMemoryTable(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		logN uint32
		mib  int64
	}{{16, 7}, {20, 112}, {24, 1792}, {27, 14336}} {
		got := QuotientHBytes(tc.logN)
		assert.InDelta(t, tc.mib*mib, got, float64(5*mib), "2^%d", tc.logN)
	}
}

// The MSM memory table in memory.go, to 0.1 GiB.
func TestMSMMemoryTable(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		log                  int
		g1Scratch, g2Scratch float64
		g1Bases, g2Bases     float64
	}{
		{20, 0.5, 0.8, 96.0 / 1024, 192.0 / 1024},
		{24, 6.3, 10.3, 1.5, 3}, {26, 12.7, 16.7, 6, 12}, {27, 21.2, 25.2, 12, 24},
	} {
		b1, s1, err := MSMBytes(1<<tc.log, false, 0)
		require.NoError(t, err)
		b2, s2, err := MSMBytes(1<<tc.log, true, 0)
		require.NoError(t, err)
		assert.InDelta(t, tc.g1Bases, float64(b1)/gib, 0.01, "2^%d G1 bases", tc.log)
		assert.InDelta(t, tc.g2Bases, float64(b2)/gib, 0.01, "2^%d G2 bases", tc.log)
		assert.InDelta(t, tc.g1Scratch, float64(s1)/gib, 0.1, "2^%d G1 scratch", tc.log)
		assert.InDelta(t, tc.g2Scratch, float64(s2)/gib, 0.1, "2^%d G2 scratch", tc.log)
	}
	for _, tc := range []struct {
		log                  int
		g1Scratch, g2Scratch float64
		g1Table, g2Table     float64
	}{
		{20, 0.3, 0.5, 1.3, 2.6}, {24, 3.3, 4.5, 18, 36}, {26, 12.7, 17.6, 66, 132},
	} {
		b1, s1, err := MSMBytes(1<<tc.log, false, 1<<50)
		require.NoError(t, err)
		b2, s2, err := MSMBytes(1<<tc.log, true, 1<<50)
		require.NoError(t, err)
		assert.InDelta(t, tc.g1Table, float64(b1)/gib, 0.1, "2^%d G1 table", tc.log)
		assert.InDelta(t, tc.g2Table, float64(b2)/gib, 0.1, "2^%d G2 table", tc.log)
		assert.InDelta(t, tc.g1Scratch, float64(s1)/gib, 0.1, "2^%d G1 scratch with a table", tc.log)
		assert.InDelta(t, tc.g2Scratch, float64(s2)/gib, 0.1, "2^%d G2 scratch with a table", tc.log)
	}
	// A budget of 4 copies of 2^24 G1 points: the bases and 4 copies.
	b, _, err := MSMBytes(1<<24, false, 4*(1<<24)*96)
	require.NoError(t, err)
	assert.Equal(t, int64(5)*(1<<24)*96, b)
	_, _, err = MSMBytes(0, false, 0)
	require.Error(t, err)
}

func TestFits(t *testing.T) {
	const gib = 1 << 30
	require.NoError(t, fits(0, 0, 0, 1))
	require.NoError(t, fits(gib, gib, 4*gib, 0))
	require.ErrorIs(t, fits(gib, gib, 4*gib, gib), ErrDeviceMemory)
	require.ErrorIs(t, fits(0, 4*gib, 4*gib, 0), ErrDeviceMemory, "headroom")
}

// An MSM's memory check counts the bases and their table copies unless they
// are resident for the same curve (the same slice or a longer one it
// prefixes), and the arena's growth only.
func TestMSMNeed(t *testing.T) {
	g1 := &msmCurve{name: "g1", pointBytes: 96, xyzzBytes: 192}
	g2 := &msmCurve{name: "g2", pointBytes: 192, xyzzBytes: 384}
	raw := make([]byte, 1000*g1.pointBytes)
	raw[0] = 7
	p, err := newMSMPlan(1000, 300)
	require.NoError(t, err)
	_, arena := p.layout(0, g1.xyzzBytes)
	plain, table := msmTable{copies: 1, stride: 1000}, msmTable{c: 8, mwin: 3, copies: 11, stride: 1000}
	st := &msmState{resident: map[uintptr]*residentBases{}}
	assert.Equal(t, int64(len(raw))+int64(arena), st.need(g1, raw, plain, arena), "nothing resident")
	assert.Equal(t, 11*int64(len(raw))+int64(arena), st.need(g1, raw, table, arena), "nothing resident, a table")
	st.resident[basesKey(raw)] = &residentBases{n: 1000, first: bytes.Clone(raw[:96]), curve: g1, table: table}
	assert.Equal(t, int64(arena), st.need(g1, raw, table, arena), "bases resident")
	assert.Equal(t, int64(arena), st.need(g1, raw[:500*96], table, arena), "a prefix of resident bases")
	st.arenaLen = arena
	assert.Zero(t, st.need(g1, raw, table, arena), "arena large enough")
	st.arenaLen = arena / 2
	assert.Equal(t, int64(arena-arena/2), st.need(g1, raw, table, arena), "arena grows")
	raw[0] = 8
	assert.Equal(t, int64(len(raw))+int64(arena-arena/2), st.need(g1, raw, plain, arena), "bases changed since upload")
	_, arena2 := p.layout(0, g2.xyzzBytes)
	assert.Equal(t, int64(len(raw))+int64(arena2-arena/2), st.need(g2, raw, plain, arena2), "other curve")
}

// An MSM over bases not yet resident takes as many table copies as the
// budget allows and free memory holds, down to the bases alone, and is
// refused only when those do not fit; resident bases keep their table.
func TestMSMShape(t *testing.T) {
	g1 := &msmCurve{name: "g1", pointBytes: 96, xyzzBytes: 192, bucketWave: 300}
	const n = 1 << 12
	raw := make([]byte, n*g1.pointBytes)
	st := &msmState{resident: map[uintptr]*residentBases{}, tableBudget: 1 << 40, mem: &deviceMemory{},
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	const plenty = 1 << 40
	full, p, arena, err := st.shape(g1, raw, n, plenty)
	require.NoError(t, err)
	require.Greater(t, full.copies, uint32(8), "a full table")
	require.Equal(t, full.copies, p.copies())
	need := st.need(g1, raw, full, arena)
	require.Equal(t, int64(full.copies)*int64(len(raw))+int64(arena), need)

	// Free memory one copy short of the full table: fewer copies.
	cut, _, _, err := st.shape(g1, raw, n, need+fitHeadroom-int64(len(raw)))
	require.NoError(t, err)
	require.Less(t, cut.copies, full.copies)
	require.Greater(t, cut.copies, uint32(1))

	// Room for the bases and a plain plan's scratch only.
	plainPlan, err := newMSMPlan(n, g1.bucketWave)
	require.NoError(t, err)
	_, plainArena := plainPlan.layout(0, g1.xyzzBytes)
	plain, _, _, err := st.shape(g1, raw, n, int64(len(raw))+int64(plainArena)+fitHeadroom)
	require.NoError(t, err)
	require.Equal(t, uint32(1), plain.copies)

	_, _, _, err = st.shape(g1, raw, n, int64(len(raw))+fitHeadroom)
	require.ErrorIs(t, err, ErrDeviceMemory, "not even the bases fit")

	// A memory limit (WithMemoryLimit) cuts the table as free memory does,
	// counting what the Backend already holds, and refuses a job whose bases
	// do not fit under it.
	st.mem = &deviceMemory{limit: 1 << 30, held: 1<<30 - need + int64(len(raw))}
	capped, _, _, err := st.shape(g1, raw, n, plenty)
	require.NoError(t, err)
	require.Less(t, capped.copies, full.copies)
	require.Greater(t, capped.copies, uint32(1))
	st.mem.held = 1<<30 - int64(len(raw))
	_, _, _, err = st.shape(g1, raw, n, plenty)
	require.ErrorIs(t, err, ErrDeviceMemory, "not even the bases fit under the limit")
	st.mem = &deviceMemory{}

	st.tableBudget = 0
	none, _, _, err := st.shape(g1, raw, n, plenty)
	require.NoError(t, err)
	require.Equal(t, uint32(1), none.copies, "no budget, no table")

	st.resident[basesKey(raw)] = &residentBases{n: n, first: bytes.Clone(raw[:96]), curve: g1, table: full}
	kept, _, _, err := st.shape(g1, raw, n, plenty)
	require.NoError(t, err)
	require.Equal(t, full, kept, "resident bases keep their table")
}

// The shares of the prefetched vectors sendAhead queues beside each chunk
// sum to all of them, the last chunk taking the rest, and none is more than
// an even part rounded up to whole pages: the uploads spread over the
// chunks instead of one chunk carrying them all.
func TestAheadShareSpreadsOverTheChunks(t *testing.T) {
	for _, left := range []int{0, 1, 4095, 4096, 128 << 10, 4<<30 + 12345} {
		for _, chunks := range []int{1, 2, 3, 9, 32} {
			even := (left + chunks - 1) / chunks
			bound := (even + aheadShareAlign - 1) / aheadShareAlign * aheadShareAlign
			rest, nonzero := left, 0
			for i := 0; i < chunks; i++ {
				share := aheadShare(rest, i, chunks)
				require.GreaterOrEqual(t, share, 0)
				require.LessOrEqual(t, share, rest, "left %d, chunk %d of %d", left, i, chunks)
				require.LessOrEqual(t, share, bound, "left %d, chunk %d of %d: more than an even part", left, i, chunks)
				if share > 0 {
					nonzero++
				}
				rest -= share
			}
			require.Zero(t, rest, "left %d over %d chunks: not all sent", left, chunks)
			if left >= chunks*aheadShareAlign {
				require.Equal(t, chunks, nonzero, "left %d over %d chunks: a share beside each chunk", left, chunks)
			}
		}
	}
}
