package gpu

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// The room splits into whole slots of a chunk's bytes rounded up to 256,
// no more than the chunks, from its end down: each slot ends where the one
// before starts, and none passes either end of the room.
func TestRingSlots(t *testing.T) {
	room := deviceSpan{ptr: 1 << 20, n: 4 << 30}
	chunk := (1 << 23) * g1PointBytes // 805 MB: five fit in 4 GiB
	end := room.ptr.Add(room.n)
	slots := ringSlots(room, chunk, 16)
	require.Len(t, slots, 5)
	for k, p := range slots {
		assert.Equal(t, end.Add(-(k+1)*chunk), p, "slot %d", k)
		assert.GreaterOrEqual(t, uint64(p), uint64(room.ptr))
	}
	three := ringSlots(room, chunk, 3)
	assert.Equal(t, slots[:3], three, "no more slots than chunks, the top ones")
	// 300 bytes round up to 512; the room's end (4096 + 1300) rounds down
	// to 5376: two slots fit, at 4864 and 4352.
	assert.Equal(t, []driver.DevicePtr{4864, 4352}, ringSlots(deviceSpan{ptr: 4096, n: 1300}, 300, 8))
	assert.Empty(t, ringSlots(deviceSpan{ptr: 4096, n: 500}, 300, 8), "4096 + 500 rounds down to 4352: no slot of 512")
	assert.Empty(t, ringSlots(deviceSpan{ptr: 4096 + 64, n: 200}, 300, 8), "the room rounds down to nothing")
	assert.Empty(t, ringSlots(deviceSpan{}, 300, 8), "no room")
	assert.Empty(t, ringSlots(room, chunk, 0))
}

// A chunk's upload is due once the chunk that held its slot before it has
// ended: with s slots, chunk k waits for chunk k−s.
func TestRingDue(t *testing.T) {
	const slots, chunks = 7, 16
	assert.Equal(t, 7, ringDue(0, slots, chunks), "all slots free at the start")
	assert.Equal(t, 8, ringDue(1, slots, chunks), "chunk 0 ended: chunk 7 takes its slot")
	assert.Equal(t, 16, ringDue(9, slots, chunks))
	assert.Equal(t, 16, ringDue(15, slots, chunks), "never past the last chunk")
	for done := range chunks {
		due := ringDue(done, slots, chunks)
		for k := done; k < due; k++ {
			// Chunk k's slot held chunk k−slots, which has ended.
			assert.Less(t, k-slots, done, "chunk %d due after %d ended", k, done)
		}
	}
}

// Whether an MSM's chunks from some index on touch the room: by their
// device scalars, by a host part's copy on the device, or by a keep copy.
func TestReadsRoom(t *testing.T) {
	room := deviceSpan{ptr: 1 << 30, n: 1 << 20}
	ranges := chunkRanges(1000, 256)
	// 600 host scalars, then 400 in the room: chunks [512, 768) and
	// [768, 1000) read it; [0, 256) and [256, 512) do not.
	s := msmScalars{host: make([]fr.Element, 600), dev: room.ptr, ndev: 400}
	assert.True(t, readsRoom(s, ranges, 0, 0, room))
	assert.True(t, readsRoom(s, ranges, 2, 0, room))
	reversed := []chunkRange{ranges[3], ranges[2], ranges[1], ranges[0]}
	assert.True(t, readsRoom(s, reversed, 1, 0, room), "the chunk [512, 768) still to run")
	assert.False(t, readsRoom(s, reversed, 2, 0, room), "only host chunks left")
	elsewhere := msmScalars{host: make([]fr.Element, 600), dev: room.ptr.Add(room.n), ndev: 400}
	assert.False(t, readsRoom(elsewhere, ranges, 0, 0, room), "device scalars just past the room")
	copied := msmScalars{host: make([]fr.Element, 1000), hdev: room.ptr.Add(-1000 * elemBytes)}
	assert.False(t, readsRoom(copied, ranges, 0, 0, room), "a copy that ends where the room starts")
	copied.hdev += 32
	assert.True(t, readsRoom(copied, ranges, 3, 0, room), "its last chunk's copy enters the room")
	host := msmScalars{host: make([]fr.Element, 1000)}
	assert.False(t, readsRoom(host, ranges, 0, 0, room))
	assert.True(t, readsRoom(host, ranges, 0, room.ptr.Add(room.n-32), room), "a keep copy into the room")
}

// The stream buffers free at a ring's last chunk: the one it does not lie
// in, or both (contiguous) when it lies in the room.
func TestRingFreeBuffers(t *testing.T) {
	const half = 1 << 20
	j := &msmJob{streamBytes: 2 * half, streamBufs: [2]driver.DevicePtr{1 << 30, 1<<30 + half}}
	g := &ring{slots: []driver.DevicePtr{1 << 40, 1<<40 + half, j.streamBufs[0], j.streamBufs[1]}}
	for last, want := range []struct {
		p driver.DevicePtr
		n int
	}{{j.streamBufs[0], 2 * half}, {j.streamBufs[0], 2 * half}, {j.streamBufs[1], half}, {j.streamBufs[0], half}} {
		p, n := g.freeBuffers(j, last+4) // the same slots one turn later
		assert.Equal(t, want.p, p, "last chunk %d", last+4)
		assert.Equal(t, want.n, n, "last chunk %d", last+4)
	}
	j.streamBufs[0], j.streamBufs[1] = j.streamBufs[1], j.streamBufs[0]
	p, n := g.freeBuffers(j, 0)
	assert.Equal(t, j.streamBufs[0], p, "swapped buffers are not one span")
	assert.Equal(t, half, n)
}

// A ring's room slots free in the order of the last chunk each holds: at
// 16 GiB, A's 16 chunks in 5 room slots and 2 stream buffers hold their
// last chunks at 14, 15, 9, 10 and 11, so B1's chunks take slots 2, 3, 4,
// 0 and 1 in that order, each once the chunk named has ended.
func TestRingChainOrder(t *testing.T) {
	last := make([]int, 7)
	for k := range last {
		last[k] = ringLastUse(k, 7, 16)
	}
	assert.Equal(t, []int{14, 15, 9, 10, 11, 12, 13}, last)
	assert.Equal(t, []int{2, 3, 4, 0, 1}, ringChainOrder(7, 16))
	for chunks := 1; chunks <= 20; chunks++ {
		for slots := 3; slots <= 8; slots++ {
			order := ringChainOrder(slots, chunks)
			require.Len(t, order, slots-2)
			for q, k := range order {
				l := ringLastUse(k, slots, chunks)
				if k >= chunks {
					assert.Equal(t, -1, l, "slot %d of %d, %d chunks: never used", k, slots, chunks)
				} else {
					assert.Equal(t, k, l%slots, "slot %d of %d, %d chunks", k, slots, chunks)
					assert.Greater(t, l+slots, chunks-1, "slot %d of %d, %d chunks: no later chunk in it", k, slots, chunks)
				}
				if q > 0 {
					assert.LessOrEqual(t, ringLastUse(order[q-1], slots, chunks), l, "slots %d, chunks %d: soonest first", slots, chunks)
				}
			}
		}
	}
	assert.Empty(t, ringChainOrder(2, 5), "stream buffers only: no room slots")
}
