package gpu

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// A ring of chunk slots in idle device memory, filled ahead.
//
// A streamed MSM whose bases take longer to cross the link than its chunks
// take to compute (at 16 GiB: A, B1 and B2, about 18.5 ms of link against
// 14 ms of stages a chunk) waits for the link at every chunk, and the two
// stream buffers never let the link run more than one chunk ahead. Device
// memory the Backend leaves idle (its room: work vector 1, as the L‖H
// MSM's H chunks read h from it, until the next quotient or until the next
// quotient's a is sent there) can hold whole chunks. So:
//
//   - Beside the chunks of a streamed MSM whose scalars are on the device
//     (its link carries its bases alone), the engine sends the first
//     chunks of the MSM it learned comes next (firstState.next) into the
//     room's slots, from the room's end down, one beside a chunk, each as
//     soon as the MSM's chunks still to run no longer read the slot
//     (ringAhead). The L‖H MSM runs its H chunks first, and they read h
//     from its end down, 268 MB a chunk at 16 GiB: a slot of 805 MB frees
//     every third H chunk, while the H chunks' long stages (h's scalars are
//     full width) leave the link idle. The L chunks' stages are short (the
//     private wires are mostly small) and their own bases fill the link: a
//     first version that sent during them slowed them by as much as A
//     gained.
//   - That next MSM, when its set, chunks and the room are those sent for,
//     runs its chunks from a ring: the room's slots, then its two stream
//     buffers; chunk i lies in slot i mod slots. Its later chunks go up as
//     soon as their slot's last reader has ended, each on the ring's own
//     copy stream with a fence (an event) of its own, and a chunk waits for
//     its own bases' fence only: copies queued ahead hold up neither its
//     scalars, which stay on the stager's stream, nor the chunk.
//
// What is sent ahead is dropped, after its copies complete, by anything
// that writes the work vectors (state.settleAhead), by a plan dropped for
// its set (forgetFirst), and by the next streamed MSM when it is not the
// one it was sent for. While it lies there, and while an MSM runs from a
// ring, the Backend's beside work (which writes the room) waits for a
// later MSM. Only a G1 MSM is sent for: a G2 MSM's chunks outlast their
// uploads, and its link carries the next quotient's a. In a proof that
// leaves the L‖H MSM sending A's chunks, and A, which runs from the ring,
// chaining B1's into the slots it is done with (ringChain); B2 is G2's.

// ringState is the ring's part of the engine (in msmState).
type ringState struct {
	stream *driver.Stream
	fences []*driver.Event // one a slot, made as needed
	pre    *ringPre        // chunks sent ahead for the next MSM
	inUse  bool            // an MSM runs from a ring that holds the room
}

// ringPre are the first chunks of a streamed set's MSM sent into the room
// during the MSM before it: chunks [0, queued) of its chunks, chunk k in
// slots[k].
type ringPre struct {
	key uintptr
	chunkedSet
	room   deviceSpan
	slots  []driver.DevicePtr
	queued int
	// fence0 is the index of slot 0's fence among the ring's fences:
	// 0, or, for chunks chained behind a ring still running (ringChain),
	// past that ring's fences, which its chunks still wait on.
	fence0 int
}

// ringSlots splits room into as many slots of slot bytes (rounded up to
// 256) as it holds, at most most, from its end down: slot 0 ends at the
// room's end (rounded down to 256), slot 1 where slot 0 starts, and so on,
// so that the slots free in order as an MSM reads the room from its end
// down (the L‖H MSM's H chunks).
func ringSlots(room deviceSpan, slot, most int) []driver.DevicePtr {
	if slot <= 0 || room.ptr == 0 || most <= 0 {
		return nil
	}
	step := uint64(align256(uint64(slot)))
	top := (uint64(room.ptr) + uint64(room.n)) &^ 255
	if top <= uint64(room.ptr) {
		return nil
	}
	n := min(int((top-uint64(room.ptr))/step), most)
	out := make([]driver.DevicePtr, 0, n)
	for k := range n {
		out = append(out, driver.DevicePtr(top-uint64(k+1)*step))
	}
	return out
}

// ringDue is how many of a ring's chunks may have their uploads queued
// once the first done of them have ended: a chunk's slot is free once the
// chunk slots before it has ended.
func ringDue(done, slots, chunks int) int { return min(done+slots, chunks) }

// spanOverlaps reports whether [p, p+n) and s share a byte.
func spanOverlaps(p driver.DevicePtr, n int, s deviceSpan) bool {
	return n > 0 && s.n > 0 && p < s.ptr.Add(s.n) && s.ptr < p.Add(n)
}

// readsRoom reports whether chunks [from, …) of ranges over the scalars s
// read room, or a keep copy of s into keep (msmJob.keep) writes it.
func readsRoom(s msmScalars, ranges []chunkRange, from int, keep driver.DevicePtr, room deviceSpan) bool {
	if keep != 0 && spanOverlaps(keep, s.n()*elemBytes, room) {
		return true
	}
	for _, r := range ranges[from:] {
		part := s.sub(r.lo, r.hi)
		if spanOverlaps(part.dev, part.ndev*elemBytes, room) ||
			(s.hdev != 0 && spanOverlaps(part.hdev, len(part.host)*elemBytes, room)) {
			return true
		}
	}
	return false
}

// ringFence returns slot k's fence, making it and the ring's copy stream
// on first use.
func (st *msmState) ringFence(c *driver.Ctx, k int) (*driver.Event, error) {
	r := &st.ring
	if r.stream == nil {
		s, err := c.NewStream()
		if err != nil {
			return nil, fmt.Errorf("ring stream: %w", err)
		}
		r.stream = s
	}
	for len(r.fences) <= k {
		e, err := c.NewEvent()
		if err != nil {
			return nil, fmt.Errorf("ring fence: %w", err)
		}
		r.fences = append(r.fences, e)
	}
	return r.fences[k], nil
}

// ringSend queues the copy of src to dst on the ring's stream, fenced by
// fence f (a slot's: its ring's fence0 plus the slot's index).
func (st *msmState) ringSend(c *driver.Ctx, f int, dst driver.DevicePtr, src []byte) error {
	fence, err := st.ringFence(c, f)
	if err != nil {
		return err
	}
	if err := c.HtoDAsync(dst, src, st.ring.stream); err != nil {
		return err
	}
	return c.Record(fence, st.ring.stream)
}

// ringEnd is called as an MSM that ran from a ring returns (ok: all its
// chunks ran). The room is the Backend's again, unless the MSM chained the
// next MSM's chunks into it (ringChain), which then lie there as if sent
// ahead. Otherwise it waits for copies still on the ring's stream (there
// are none unless it stopped early); an MSM that stopped early drops what
// it chained.
func (st *msmState) ringEnd(c *driver.Ctx, ok bool) error {
	st.ring.inUse = false
	if st.ring.pre != nil && ok {
		// Every chunk of the MSM waited for its own copy; the chained
		// copies, into slots it no longer reads, may still run.
		return nil
	}
	st.ring.pre = nil
	return st.ringSettle(c)
}

// ringSettle waits for every copy queued on the ring's stream.
func (st *msmState) ringSettle(c *driver.Ctx) error {
	if st.ring.stream == nil {
		return nil
	}
	if err := c.SyncStream(st.ring.stream); err != nil {
		return fmt.Errorf("ring: %w", err)
	}
	return nil
}

// dropRing forgets the chunks sent ahead, once their copies have
// completed, so that the room may be written.
func (st *msmState) dropRing(c *driver.Ctx) error {
	if st.ring.pre == nil {
		return nil
	}
	st.ring.pre = nil
	return st.ringSettle(c)
}

// ringHolds reports whether chunks sent ahead lie in the room, or an MSM
// runs from a ring that holds it.
func (st *msmState) ringHolds() bool { return st.ring.pre != nil || st.ring.inUse }

// scalarsOnDevice reports whether the scalars of j's chunk r (of s) are
// on the device already (h, or a vector sent ahead), so that the chunk's
// link carries its bases alone: the L‖H MSM's chunks, and A's.
func scalarsOnDevice(j *msmJob, s msmScalars, r chunkRange) bool {
	part := s.sub(r.lo, r.hi)
	if len(part.host) == 0 || part.hdev != 0 {
		return true
	}
	return j.place != nil && j.place(part).hdev != 0
}

// ringAhead runs beside chunk i of streamed job j (one vector of scalars
// s, its chunks ranges in the order they run), once chunk i−1 has ended
// and chunk i+1's bases are queued. Where the engine learned which planned
// streamed set's MSM comes after j's, its bases are pinned, the room holds
// a chunk of it, chunk i's scalars are on the device already (so that its
// link has room), and j's chunks from i on neither read nor write the next
// slot, it sends that MSM's next chunk there. j itself does not run from a
// ring (its link has none).
func (st *msmState) ringAhead(c *driver.Ctx, j *msmJob, s msmScalars, ranges []chunkRange, i int) error {
	if st.room == nil || j.streamed == nil {
		return nil
	}
	key := basesKey(j.streamed)
	nx, ok := st.first.next[key]
	if !ok || nx.set == nil || nx.spare {
		// A G2 MSM's chunks outlast their uploads: it has no need of a
		// ring, and its link carries the next quotient's a.
		return nil
	}
	_, planned := st.plans[key]
	_, nextPlanned := st.plans[nx.key]
	if !planned || !nextPlanned {
		return nil
	}
	pre := st.ring.pre
	if pre != nil && pre.key != nx.key {
		return nil // sent for another MSM, not yet dropped
	}
	if pre == nil {
		room := st.room(c)
		if room.n == 0 || !c.Pinned(nx.set) {
			return nil
		}
		slots := ringSlots(room, (nx.ranges[0].hi-nx.ranges[0].lo)*nx.pb, len(nx.ranges))
		if len(slots) == 0 {
			return nil
		}
		pre = &ringPre{key: nx.key, chunkedSet: nx.chunkedSet, room: room, slots: slots}
	}
	if pre.queued == len(pre.slots) || !scalarsOnDevice(j, s, ranges[i]) {
		return nil
	}
	k := pre.queued
	r := pre.ranges[k]
	if readsRoom(s, ranges, i, j.keep, deviceSpan{ptr: pre.slots[k], n: (r.hi - r.lo) * pre.pb}) {
		return nil
	}
	if err := st.ringSend(c, pre.fence0+k, pre.slots[k], pre.chunk(k)); err != nil {
		return fmt.Errorf("send the next MSM's chunk %d ahead: %w", k, err)
	}
	pre.queued++
	st.ring.pre = pre
	return nil
}

// ringLastUse is the last of chunks chunks that lies in slot k of a ring
// of slots slots (chunk i lies in slot i mod slots), or −1 where none does.
func ringLastUse(k, slots, chunks int) int {
	if k >= chunks {
		return -1
	}
	return k + (chunks-1-k)/slots*slots
}

// ringChainOrder is the order in which a ring's room slots (the first
// slots−2 of its slots; the last two are its stream buffers) hold no more
// of its chunks: by the last chunk each holds, the soonest first.
func ringChainOrder(slots, chunks int) []int {
	order := make([]int, max(slots-2, 0))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return ringLastUse(a, slots, chunks) - ringLastUse(b, slots, chunks)
	})
	return order
}

// ringChain runs beside chunk i of streamed job j, which runs from ring g
// (scalars s, chunks [0, i) ended). Where the engine learned which planned
// streamed set's MSM comes after j's, it sends that MSM's chunks into g's
// room slots, each as soon as the slot holds no more of j's chunks
// (ringChainOrder) and j's chunks still to run do not read it. They go on
// the ring's stream behind j's own last uploads, so they take the link
// only once j's bases are all up: in A's tail, when its last chunks are
// computed from bases already there, B1's chunks go up. The next MSM
// finds them as chunks sent ahead (ringTake), the slots in the order
// they freed, each with a fence of its own past g's.
func (st *msmState) ringChain(c *driver.Ctx, j *msmJob, g *ring, s msmScalars, i int) error {
	nx, ok := st.first.next[basesKey(j.streamed)]
	if !ok || nx.set == nil || nx.spare {
		return nil // a G2 MSM needs no ring (ringAhead)
	}
	if _, planned := st.plans[nx.key]; !planned {
		return nil
	}
	pre := st.ring.pre
	if pre != nil && pre.key != nx.key {
		return nil
	}
	nslots := len(g.slots)
	if pre == nil {
		step := align256(uint64((g.ranges[0].hi - g.ranges[0].lo) * g.pb))
		if uint64((nx.ranges[0].hi-nx.ranges[0].lo)*nx.pb) > step || !c.Pinned(nx.set) {
			return nil
		}
		order := ringChainOrder(nslots, len(g.ranges))
		pre = &ringPre{key: nx.key, chunkedSet: nx.chunkedSet, room: g.room, fence0: g.fence0 + nslots}
		for _, k := range order[:min(len(order), len(nx.ranges))] {
			pre.slots = append(pre.slots, g.slots[k])
		}
	}
	for ; pre.queued < len(pre.slots); pre.queued++ {
		q := pre.queued
		// The slot's index in g: chained slots keep g's free order.
		k := slices.Index(g.slots, pre.slots[q])
		r := pre.ranges[q]
		if ringLastUse(k, nslots, len(g.ranges)) >= i ||
			readsRoom(s, g.ranges, i, j.keep, deviceSpan{ptr: pre.slots[q], n: (r.hi - r.lo) * pre.pb}) {
			break
		}
		if err := st.ringSend(c, pre.fence0+q, pre.slots[q], pre.chunk(q)); err != nil {
			return fmt.Errorf("chain the next MSM's chunk %d: %w", q, err)
		}
	}
	if pre.queued > 0 {
		st.ring.pre = pre
	}
	return nil
}

// ring is a streamed MSM's chunks run from a ring of slots (the room's,
// then its two stream buffers).
type ring struct {
	slots []driver.DevicePtr
	chunkedSet
	queued int // chunks whose uploads are queued
	found  int // of them, those sent ahead
	fence0 int // slot 0's fence (ringPre.fence0)
	room   deviceSpan
}

// ringTake is called as streamed job j's chunk loop starts (ranges in the
// order they run; scalars vecs): it returns the ring j's chunks run from
// where chunks were sent ahead for exactly this MSM, and nil otherwise;
// what was sent ahead is dropped either way.
func (st *msmState) ringTake(c *driver.Ctx, j *msmJob, vecs []msmScalars, ranges []chunkRange) (*ring, error) {
	pre := st.ring.pre
	if pre == nil {
		return nil, nil
	}
	st.ring.pre = nil
	ok := j.streamed != nil && len(vecs) == 1 && pre.key == basesKey(j.streamed) && pre.queued > 0 &&
		slices.Equal(pre.ranges, ranges) && st.room != nil && st.room(c) == pre.room &&
		!readsRoom(vecs[0], ranges, 0, j.keep, pre.room) &&
		!spanOverlaps(j.streamBufs[0], j.streamBytes, pre.room)
	if !ok {
		return nil, st.ringSettle(c)
	}
	// The ring's uploads into the stream buffers go on its own stream: a
	// copy still on the stager's (a first chunk sent for another MSM,
	// dropped) must land first.
	if err := st.stage.wait(c); err != nil {
		return nil, errors.Join(err, st.ringSettle(c))
	}
	slots := append(slices.Clip(pre.slots), j.streamBufs[0], j.streamBufs[1])
	st.ring.inUse = true
	set := chunkedSet{set: j.streamed, pb: j.cv.pointBytes, ranges: ranges}
	return &ring{slots: slots, chunkedSet: set, queued: pre.queued, found: pre.queued, fence0: pre.fence0, room: pre.room}, nil
}

// ringFill queues the uploads of the chunks whose slots are free once done
// chunks have ended.
func (st *msmState) ringFill(c *driver.Ctx, g *ring, done int) error {
	for due := ringDue(done, len(g.slots), len(g.ranges)); g.queued < due; g.queued++ {
		k := g.queued % len(g.slots)
		r := g.ranges[g.queued]
		if err := st.ringSend(c, g.fence0+k, g.slots[k], g.chunk(g.queued)); err != nil {
			return fmt.Errorf("stream bases [%d, %d) into the ring: %w", r.lo, r.hi, err)
		}
	}
	return nil
}

// ringWait waits for chunk i's bases and returns where they lie.
func (st *msmState) ringWait(c *driver.Ctx, g *ring, i int) (driver.DevicePtr, error) {
	if i >= g.queued {
		return 0, fmt.Errorf("ring: chunk %d of %d not queued", i, len(g.ranges))
	}
	k := i % len(g.slots)
	if err := c.SyncEvent(st.ring.fences[g.fence0+k]); err != nil {
		return 0, fmt.Errorf("ring: chunk %d's bases: %w", i, err)
	}
	return g.slots[k], nil
}

// freeBuffers is the span of j's stream buffers that holds no chunk of
// the ring after chunk last (j's last) has been queued: both buffers, or
// the one chunk last does not lie in.
func (g *ring) freeBuffers(j *msmJob, last int) (driver.DevicePtr, int) {
	half := j.streamBytes / 2
	switch k := last % len(g.slots); k {
	case len(g.slots) - 2:
		return j.streamBufs[1], half
	case len(g.slots) - 1:
		return j.streamBufs[0], half
	}
	if j.streamBufs[1] == j.streamBufs[0].Add(half) {
		return j.streamBufs[0], 2 * half
	}
	return j.streamBufs[0], half
}

// ringClose releases the ring's stream and fences.
func (st *msmState) ringClose(c *driver.Ctx) error {
	var errs []error
	if st.ring.stream != nil {
		errs = append(errs, c.SyncStream(st.ring.stream))
	}
	for _, e := range st.ring.fences {
		errs = append(errs, c.DestroyEvent(e))
	}
	if st.ring.stream != nil {
		errs = append(errs, c.DestroyStream(st.ring.stream))
	}
	st.ring = ringState{}
	return errors.Join(errs...)
}
