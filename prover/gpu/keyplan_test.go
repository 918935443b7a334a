package gpu

import (
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Chunks cover every point once, in order, all of the chunk's length but
// the last, at every edge: a chunk of 1, of n−1, of n, above n.
func TestChunkRanges(t *testing.T) {
	for _, c := range []struct{ n, chunk, want int }{
		{1, 1, 1}, {10, 1, 10}, {10, 3, 4}, {10, 5, 2}, {10, 9, 2}, {10, 10, 1}, {10, 11, 1}, {10, 0, 1},
		{1 << 20, 1 << 16, 16}, {1<<20 + 1, 1 << 16, 17},
	} {
		rs := chunkRanges(c.n, c.chunk)
		require.Len(t, rs, c.want, "n %d chunk %d", c.n, c.chunk)
		next := 0
		for i, r := range rs {
			require.Equal(t, next, r.lo, "n %d chunk %d: range %d starts where the last ended", c.n, c.chunk, i)
			require.Greater(t, r.hi, r.lo)
			if i < len(rs)-1 {
				require.Equal(t, c.chunk, r.hi-r.lo)
			}
			next = r.hi
		}
		require.Equal(t, c.n, next)
	}
}

// A chunk's scalars are the host part and the device part (which follows
// it) that its range covers: ranges inside the host part, inside the
// device part and across the seam.
func TestScalarsSub(t *testing.T) {
	host := make([]fr.Element, 10)
	s := msmScalars{host: host, dev: driver.DevicePtr(1 << 20), ndev: 6, queued: true}
	for _, c := range []struct {
		lo, hi, nhost, dev, ndev int
	}{
		{0, 4, 4, 0, 0}, {0, 10, 10, 0, 0}, {3, 10, 7, 0, 0},
		{10, 16, 0, 0, 6}, {12, 14, 0, 2, 2}, {15, 16, 0, 5, 1},
		{8, 12, 2, 0, 2}, {9, 16, 1, 0, 6}, {0, 16, 10, 0, 6},
	} {
		sub := s.sub(c.lo, c.hi)
		assert.False(t, sub.queued, "[%d, %d): a chunk's scalars go up when it runs", c.lo, c.hi)
		assert.Equal(t, c.hi-c.lo, sub.n(), "[%d, %d)", c.lo, c.hi)
		assert.Len(t, sub.host, c.nhost, "[%d, %d): host part", c.lo, c.hi)
		if c.nhost > 0 {
			assert.Same(t, &host[c.lo], &sub.host[0], "[%d, %d): host part starts at lo", c.lo, c.hi)
		}
		assert.Equal(t, c.ndev, sub.ndev, "[%d, %d): device part", c.lo, c.hi)
		if c.ndev > 0 {
			assert.Equal(t, s.dev.Add(c.dev*elemBytes), sub.dev, "[%d, %d): device part's start", c.lo, c.hi)
		}
		assert.Zero(t, sub.hdev, "[%d, %d): no copy of the host part on the device", c.lo, c.hi)
		// With a copy of the host part on the device, the chunk's copy
		// starts where its host part does, and there is none without one.
		on := s
		on.hdev = driver.DevicePtr(1 << 30)
		sub = on.sub(c.lo, c.hi)
		if c.nhost > 0 {
			assert.Equal(t, on.hdev.Add(c.lo*elemBytes), sub.hdev, "[%d, %d): the host part's copy", c.lo, c.hi)
		} else {
			assert.Zero(t, sub.hdev, "[%d, %d): no host part, no copy", c.lo, c.hi)
		}
	}
}

// The L‖H MSM's chunks of h alone, which run first when its chunks run
// from the last: those wholly past the private wires, at least one.
func TestHOnlyChunks(t *testing.T) {
	for _, c := range []struct{ n, chunk, nPriv, want int }{
		{16, 4, 8, 2}, {16, 4, 7, 2}, {16, 4, 9, 1}, {16, 4, 12, 1}, {16, 4, 13, 1}, {16, 4, 0, 4},
		{16, 16, 3, 1}, {267_780_827, 1 << 23, 133_565_694 - 1, 16},
	} {
		assert.Equal(t, c.want, hOnlyChunks(c.n, c.chunk, c.nPriv), "n %d chunk %d private %d", c.n, c.chunk, c.nPriv)
	}
}

// c2Sets are the bases sets of a porep-c2 2^27 key (groth16.KeySize's
// sections: A, B in G1, L‖H, then B in G2), and arenaModel a scratch
// model that grows with the points like the engine's.
var c2Sets = []setShape{{false, 134_217_728}, {false, 37_904_949}, {false, 267_387_904}, {true, 37_904_949}}

func arenaModel(g2 bool, points, chunk int) int64 {
	per := int64(140) // bytes a point: scalars, digits and sorted entries over ~13 windows, partials
	if g2 {
		per = 200
	}
	var carry int64
	if chunk < points {
		carry = 192 << 20 // about 2^20 buckets' XYZZ points
	}
	return 256<<20 + per*int64(chunk) + carry
}

const gib = int64(1) << 30

// On a device that holds the whole key, the quotient and the largest
// MSM's scratch, every set is resident and no MSM is cut: nothing changes.
func TestPlanKeyWholeWhereItFits(t *testing.T) {
	kp, err := planKey(c2Sets, quotientNeedOf(27), 139*gib, arenaModel)
	require.NoError(t, err)
	assert.True(t, kp.Whole())
	assert.Zero(t, kp.StreamedBytes())
	assert.Zero(t, kp.Stream)
	assert.Equal(t, arenaModel(false, 267_387_904, 267_387_904), kp.Arena, "scratch for the largest MSM in one pass")
	assert.LessOrEqual(t, kp.Peak(), kp.Budget)
}

// Below that, every budget from an 80 GB card down to a 12 GiB one gets a
// plan whose peak stays within it; the resident part shrinks with the
// budget, G1 before G2 and small before large; a plan streams only what
// does not fit; the chunks are powers of two within the planner's range.
func TestPlanKeyWithinEveryBudget(t *testing.T) {
	quotient := quotientNeedOf(27)
	prev := int64(-1)
	for _, budget := range []int64{78 * gib, 64 * gib, 48 * gib, 32 * gib, 24 * gib, 16 * gib, 12 * gib} {
		kp, err := planKey(c2Sets, quotient, budget, arenaModel)
		require.NoError(t, err, "budget %d GiB", budget/gib)
		assert.False(t, kp.Whole(), "budget %d GiB", budget/gib)
		assert.LessOrEqual(t, kp.Peak(), budget, "budget %d GiB: %s", budget/gib, kp)
		if prev >= 0 {
			assert.LessOrEqual(t, kp.ResidentBytes(), prev, "budget %d GiB: less budget, no more resident", budget/gib)
		}
		prev = kp.ResidentBytes()
		if kp.Lean {
			assert.Equal(t, QuotientHLeanBytes(27), kp.Quotient, "budget %d GiB", budget/gib)
			assert.Contains(t, kp.String(), "quotient in two work vectors", "budget %d GiB", budget/gib)
		} else {
			assert.Equal(t, QuotientHBytes(27), kp.Quotient, "budget %d GiB", budget/gib)
		}
		assert.Equal(t, kp.StreamedBytes() > 0, kp.Stream > 0, "budget %d GiB: stream buffers only when streaming", budget/gib)
		for i, s := range kp.Sets {
			assert.Equal(t, c2Sets[i].points, s.Points)
			assert.True(t, s.Chunk == s.Points || s.Chunk&(s.Chunk-1) == 0, "budget %d GiB: chunk %d", budget/gib, s.Chunk)
			assert.GreaterOrEqual(t, s.Chunk, min(s.Points, 1<<(planMinChunkLog-1)))
		}
		// Priority, smaller sets first within a curve: a set skipped for
		// want of room leaves every larger set of its curve streamed too.
		for _, st := range kp.Sets {
			for _, r := range kp.Sets {
				if !st.Resident && r.Resident && r.Curve == st.Curve {
					assert.Less(t, r.Bytes, st.Bytes, "budget %d GiB: %s", budget/gib, kp)
				}
			}
		}
	}
}

// An 80 GB H100 holds the whole porep-c2 key with the quotient when the
// MSMs run in chunks: nothing is streamed.
func TestPlanKeyH100HoldsTheKeyInChunks(t *testing.T) {
	kp, err := planKey(c2Sets, quotientNeedOf(27), 78*gib, arenaModel)
	require.NoError(t, err)
	assert.Zero(t, kp.StreamedBytes(), "%s", kp)
	assert.Less(t, kp.Sets[2].Chunk, kp.Sets[2].Points, "the L‖H MSM is cut: %s", kp)
}

// The quotient keeps two work vectors where three leave only the smallest
// chunks (a 16 GiB card: three vectors and the tables take 14 GiB) or no
// plan at all (12 GiB), and keeps three where the third vector's room buys
// less than its upload costs (an 80 GB card, and one that holds
// everything).
func TestPlanKeyLeanQuotientWhereItPays(t *testing.T) {
	q := quotientNeedOf(27)
	for _, budget := range []int64{16 * gib, 12 * gib} {
		kp, err := planKey(c2Sets, q, budget, arenaModel)
		require.NoError(t, err, "budget %d GiB", budget/gib)
		assert.True(t, kp.Lean, "budget %d GiB: %s", budget/gib, kp)
	}
	_, ok := planChunked(c2Sets, []int{0, 1, 2, 3}, [2]int{planMinChunkLog, planMinChunkLog - 1}, q, false, 12*gib, arenaModel)
	assert.False(t, ok, "12 GiB: three vectors fit no plan")
	for _, budget := range []int64{139 * gib, 78 * gib} {
		kp, err := planKey(c2Sets, q, budget, arenaModel)
		require.NoError(t, err)
		assert.False(t, kp.Lean, "budget %d GiB: %s", budget/gib, kp)
	}
	// Lean costs its vector's upload: equal plans otherwise, the full one
	// is cheaper by exactly that.
	full := planAllStreamed(c2Sets, [2]int{20, 19}, q, false, 64*gib, arenaModel)
	lean := planAllStreamed(c2Sets, [2]int{20, 19}, q, true, 64*gib, arenaModel)
	assert.InDelta(t, float64(vectorBytes(1, 27))/planLinkRate, lean.cost()-full.cost(), 1e-9)
	assert.Equal(t, vectorBytes(1, 27), full.Quotient-lean.Quotient)
}

// A budget below the lean quotient and the smallest chunks is refused with
// ErrDeviceMemory, naming what it needs.
func TestPlanKeyRefusesWhatCannotFit(t *testing.T) {
	_, err := planKey(c2Sets, quotientNeedOf(27), 10*gib, arenaModel)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrDeviceMemory), "%v", err)
	assert.Contains(t, err.Error(), "budget 10.00 GiB")
	assert.Contains(t, err.Error(), "quotient 10.00 GiB in two work vectors")
}

// The plan's line says what is resident, what streams and the peak.
func TestKeyPlanString(t *testing.T) {
	kp, err := planKey(c2Sets, quotientNeedOf(27), 48*gib, arenaModel)
	require.NoError(t, err)
	s := kp.String()
	assert.Contains(t, s, "bases sets resident")
	assert.Contains(t, s, "streamed a proof")
	assert.Contains(t, s, "in chunks of")
}

// within places a slice inside a vector by its memory: at its start, its
// end and inside; not across either edge, not an empty slice, not another
// vector.
func TestWithin(t *testing.T) {
	v := make([]fr.Element, 10)
	other := make([]fr.Element, 10)
	for _, c := range []struct {
		s    []fr.Element
		ok   bool
		off  int
		what string
	}{
		{v, true, 0, "all of it"}, {v[:3], true, 0, "its start"}, {v[7:], true, 7 * elemBytes, "its end"},
		{v[2:5], true, 2 * elemBytes, "inside"}, {v[:0], false, 0, "empty"}, {other[:3], false, 0, "another vector"},
	} {
		off, ok := within(c.s, &v[0], len(v))
		assert.Equal(t, c.ok, ok, c.what)
		assert.Equal(t, c.off, off, c.what)
	}
	off, ok := within(v[5:], &v[0], 9)
	assert.False(t, ok, "across the end (the vector is 9 of the 10)")
	assert.Zero(t, off)
	_, ok = within(v[:4], &v[1], 9)
	assert.False(t, ok, "across the start")
}
