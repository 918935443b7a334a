package gpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// The next job's stream buffer goes where it lies wholly inside the free
// buffer of the job before: with equal buffers, the one of the same index;
// with a smaller one, only its buffer 0 inside the first job's buffer 0;
// with a larger one, nowhere.
func TestFirstSlot(t *testing.T) {
	const arena = driver.DevicePtr(1 << 30)
	const half = 805306368
	for _, c := range []struct {
		name           string
		free           driver.DevicePtr
		freeHalf, next int
		k              int
		ok             bool
	}{
		{"equal, buffer 0 free", arena, half, half, 0, true},
		{"equal, buffer 1 free", arena + half, half, half, 1, true},
		{"smaller, buffer 0 free", arena, half, half / 2, 0, true},
		{"smaller, buffer 1 free", arena + half, half, half / 2, 0, false},
		{"larger, buffer 0 free", arena, half, 2 * half, 0, false},
		{"larger, buffer 1 free", arena + half, half, 2 * half, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst, k, ok := firstSlot(arena, c.free, c.freeHalf, c.next)
			require.Equal(t, c.ok, ok)
			if ok {
				assert.Equal(t, c.k, k)
				assert.Equal(t, arena.Add(k*c.next), dst)
				assert.GreaterOrEqual(t, dst, c.free)
				assert.LessOrEqual(t, dst.Add(c.next), c.free.Add(c.freeHalf))
			}
		})
	}
}

// firstJob is a streamed job over n points of 96 bytes in chunks of chunk
// points, its stream buffers at the start of st's arena, planned in st.
func firstJob(st *msmState, n, chunk int) *msmJob {
	cv := &msmCurve{name: "g1", pointBytes: g1PointBytes}
	raw := make([]byte, n*cv.pointBytes)
	half := int(align256(uint64(chunk * cv.pointBytes)))
	j := &msmJob{cv: cv, n: n, chunk: chunk, streamed: raw, streamBytes: 2 * half,
		streamBufs: [2]driver.DevicePtr{st.arena, st.arena.Add(half)}}
	st.plans[basesKey(raw)] = &setRun{curve: cv, points: n, chunk: chunk}
	return j
}

// The engine learns which streamed set's MSM follows which, and a job
// starts on a first chunk sent ahead only where it is its own chunk, in
// this arena, at one of its buffers; anything else that uses the arena in
// between unlearns the pair, and a dropped plan forgets what involves it.
func TestFirstChunkLearnedAndTaken(t *testing.T) {
	st := &msmState{plans: map[uintptr]*setRun{}, arena: 1 << 30}
	x, y := firstJob(st, 1000, 256), firstJob(st, 1000, 256)
	xRanges, yRanges := chunkRanges(1000, 256), chunkRanges(1000, 256)
	yFirst := yRanges[0]
	kx, ky := basesKey(x.streamed), basesKey(y.streamed)

	// Nothing ran before x: nothing learned, nothing there.
	assert.Equal(t, -1, st.firstStart(x, xRanges))
	st.firstEnd(x)
	assert.Equal(t, -1, st.firstStart(y, yRanges))
	require.Contains(t, st.first.next, kx, "y's MSM came after x's")
	nx := st.first.next[kx]
	assert.Equal(t, ky, nx.key)
	assert.Equal(t, yFirst, nx.ranges[0])
	assert.Equal(t, y.streamBytes/2, nx.half)
	assert.Len(t, nx.chunk(0), (yFirst.hi-yFirst.lo)*g1PointBytes)
	assert.Same(t, &y.streamed[0], &nx.chunk(0)[0])
	assert.Equal(t, yRanges, nx.ranges, "the ring's chunks (msm_ring.go)")
	assert.Equal(t, g1PointBytes, nx.pb)
	assert.Same(t, &y.streamed[0], &nx.set[0])
	assert.Len(t, nx.set, len(y.streamed))
	st.firstEnd(y)

	// y's first chunk sent into buffer 1: y starts there.
	sent := func(key uintptr, r chunkRange, ptr driver.DevicePtr) {
		st.first.sent = &firstSent{key: key, r: r, ptr: ptr, arena: st.arena}
	}
	sent(ky, yFirst, y.streamBufs[1])
	assert.Equal(t, 1, st.firstStart(y, yRanges))
	assert.Nil(t, st.first.sent, "taken once")
	assert.Equal(t, 1, st.first.uses)
	assert.Equal(t, -1, st.firstStart(y, yRanges), "not twice")

	// Not its own: another set's, another range, another arena, a place
	// that is none of its buffers.
	for _, s := range []firstSent{
		{key: kx, r: yFirst, ptr: y.streamBufs[0], arena: st.arena},
		{key: ky, r: chunkRange{256, 512}, ptr: y.streamBufs[0], arena: st.arena},
		{key: ky, r: yFirst, ptr: y.streamBufs[0], arena: st.arena + 4096},
		{key: ky, r: yFirst, ptr: y.streamBufs[0] + 256, arena: st.arena},
	} {
		st.first.sent = &s
		assert.Equal(t, -1, st.firstStart(y, yRanges))
		assert.Nil(t, st.first.sent)
	}
	assert.Equal(t, 1, st.first.uses)

	// The arena used between x's MSM and y's: the pair is unlearned.
	st.firstEnd(x)
	require.NoError(t, st.arenaUsed(nil)) // nothing sent: no wait
	assert.Equal(t, -1, st.firstStart(y, yRanges))
	assert.NotContains(t, st.first.next, kx)

	// An unplanned set is not learned.
	st.firstEnd(x)
	delete(st.plans, ky)
	st.firstStart(y, yRanges)
	assert.NotContains(t, st.first.next, kx)
	st.plans[ky] = &setRun{}

	// A plan dropped: the pairs from it and to it go.
	st.firstEnd(x)
	st.firstStart(y, yRanges)
	st.firstEnd(y)
	st.firstStart(x, xRanges)
	require.Contains(t, st.first.next, kx)
	require.Contains(t, st.first.next, ky)
	st.firstEnd(x)
	require.NoError(t, st.forgetFirst(nil, ky)) // nothing of y's sent: no wait
	assert.NotContains(t, st.first.next, kx, "x's successor was y")
	assert.NotContains(t, st.first.next, ky)
	assert.Equal(t, kx, st.first.after, "x's end still tells its successor")
	require.NoError(t, st.forgetFirst(nil, kx))
	assert.Zero(t, st.first.after)
}
