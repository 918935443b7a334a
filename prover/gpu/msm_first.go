package gpu

import (
	"fmt"
	"slices"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// A streamed MSM's first chunk, sent during the MSM before it.
//
// The chunk loop sends chunk i+1's bases while chunk i runs, but a streamed
// MSM's first chunk goes up only once its call starts, and the device waits
// for it: about 15 ms for a chunk of 805 MB at 54 GB/s, at each of a proof's
// streamed MSMs. Prove runs them in the same order every proof (L‖H, A, B1,
// B2), so the engine learns, for each planned streamed set, the planned
// streamed set whose MSM came next with nothing else using the arena in
// between (msmState.next). During the last chunk of one, it sends the next
// one's first chunk into the stream buffer that chunk left free, at the
// place where the next job's own stream buffer will lie (sendFirst); the
// next job then starts on that buffer and does not upload it again
// (firstStart). Nothing else changes: the copy goes on the stager's stream,
// whose wait before the job's first scalars covers it, and it takes no
// device memory of its own.
//
// A wrong guess costs link time only. Every other use of the arena (a
// one-pass MSM, a chunked MSM over resident bases, the quotient's c, a
// larger arena) drops what was sent after its copy completes (arenaUsed),
// and a plan dropped forgets what involves its set (forgetFirst), so that
// no copy reads host memory that is about to go.

// chunkedSet is a streamed set's bytes on the host (pb bytes a point) and
// the chunks its MSM ran in, in their order.
type chunkedSet struct {
	set    []byte
	pb     int
	ranges []chunkRange
}

// chunk returns the bases of chunk k.
func (s chunkedSet) chunk(k int) []byte {
	r := s.ranges[k]
	return s.set[r.lo*s.pb : r.hi*s.pb]
}

// firstChunk is a streamed set's MSM as the engine saw it run: its chunks
// (the first of which sendFirst sends; the ring sends more, msm_ring.go),
// the size of each of its job's stream buffers, and whether its link had
// room.
type firstChunk struct {
	key uintptr // basesKey of the set
	chunkedSet
	half  int  // msmJob.streamBytes / 2
	spare bool // msmJob.linkSpare
}

// firstSent is a first chunk sent during the MSM before: where it lies,
// and the arena it lies in.
type firstSent struct {
	key   uintptr
	r     chunkRange
	ptr   driver.DevicePtr
	arena driver.DevicePtr
}

// firstState is the engine's part of it (in msmState).
type firstState struct {
	// next maps a planned streamed set to the first chunk of the planned
	// streamed set whose MSM ran after its last one.
	next map[uintptr]firstChunk
	// after is the set whose streamed MSM ended last (0: none), and
	// afterUsed whether anything else used the arena since.
	after     uintptr
	afterUsed bool
	sent      *firstSent
	// sends and uses count the first chunks sent, and those a job started
	// on (tests and the debug log).
	sends, uses int
}

// firstSlot returns where, in free (a stream buffer of freeHalf bytes at
// free, in the arena at arena), the next job's stream buffer k of half
// bytes lies (its buffers are at arena and arena+half), and k; ok false
// where neither lies wholly inside free.
func firstSlot(arena, free driver.DevicePtr, freeHalf, half int) (dst driver.DevicePtr, k int, ok bool) {
	for k := range 2 {
		dst := arena.Add(k * half)
		if dst >= free && dst.Add(half) <= free.Add(freeHalf) {
			return dst, k, true
		}
	}
	return 0, 0, false
}

// firstStart is called as streamed job j's chunk loop starts, its first
// chunk first: it learns j's set as the one after the set whose streamed
// MSM ended last (where nothing else used the arena since, and both are
// planned), and returns the index of j's stream buffer that holds the
// first chunk already, sent during the MSM before, or −1. What was sent is
// dropped either way.
func (st *msmState) firstStart(j *msmJob, ranges []chunkRange) int {
	f := &st.first
	first := ranges[0]
	key := basesKey(j.streamed)
	if f.after != 0 {
		_, planned := st.plans[key]
		if f.afterUsed || !planned {
			delete(f.next, f.after)
		} else {
			if f.next == nil {
				f.next = map[uintptr]firstChunk{}
			}
			f.next[f.after] = firstChunk{key: key, half: j.streamBytes / 2, spare: j.linkSpare(),
				chunkedSet: chunkedSet{set: j.streamed, pb: j.cv.pointBytes, ranges: slices.Clone(ranges)}}
		}
		f.after, f.afterUsed = 0, false
	}
	s := f.sent
	f.sent = nil
	if s == nil || s.key != key || s.r != first || s.arena != st.arena {
		// A copy still on its way into j's buffers lands before j's own
		// uploads, which follow it on the stager's stream.
		return -1
	}
	for k, p := range j.streamBufs {
		if p == s.ptr {
			f.uses++
			return k
		}
	}
	return -1
}

// firstEnd is called once streamed job j's MSM has ended: its set, where
// planned, is the one whose successor the next streamed MSM tells.
func (st *msmState) firstEnd(j *msmJob) {
	key := basesKey(j.streamed)
	st.first.after, st.first.afterUsed = 0, false
	if _, planned := st.plans[key]; planned {
		st.first.after = key
	}
}

// sendFirst runs during streamed job j's last chunk, once the chunk before
// it has ended: the freeLen bytes at free (j's other stream buffer, or
// both where j ran from a ring) are idle until j's call returns. Where the
// engine learned which set's MSM comes after j's, that MSM's chunks were
// not sent ahead into the room already (msm_ring.go), and that job's
// stream buffer fits inside free, it sends that MSM's first chunk there.
func (st *msmState) sendFirst(c *driver.Ctx, j *msmJob, free driver.DevicePtr, freeLen int) error {
	f := &st.first
	key := basesKey(j.streamed)
	nx, ok := f.next[key]
	if !ok {
		return nil
	}
	_, planned := st.plans[key]
	_, nextPlanned := st.plans[nx.key]
	if !planned || !nextPlanned || (st.ring.pre != nil && st.ring.pre.key == nx.key) {
		return nil
	}
	dst, _, ok := firstSlot(st.arena, free, freeLen, nx.half)
	if !ok {
		return nil
	}
	if err := st.stage.upload(c, dst, nx.chunk(0)); err != nil {
		return fmt.Errorf("the next MSM's first chunk: %w", err)
	}
	f.sent = &firstSent{key: nx.key, r: nx.ranges[0], ptr: dst, arena: st.arena}
	f.sends++
	return nil
}

// sendOwnFirst sends streamed job j's own first chunk (first, in the order
// its chunks run) into its stream buffer 0, before its call's chunk loop
// starts: the quotient's tail does, once c has left the arena, so that the
// upload overlaps the quotient's last transforms (MSMQuotientLH, whose L‖H
// MSM follows the quotient's use of the arena and so has no MSM before it
// to send it). No other use of the arena may come between it and j's run.
func (st *msmState) sendOwnFirst(c *driver.Ctx, j *msmJob, first chunkRange) error {
	if j.streamed == nil {
		return nil
	}
	pb := j.cv.pointBytes
	if err := st.stage.upload(c, j.streamBufs[0], j.streamed[first.lo*pb:first.hi*pb]); err != nil {
		return fmt.Errorf("stream %s bases [%d, %d) early: %w", j.cv.name, first.lo, first.hi, err)
	}
	st.first.sent = &firstSent{key: basesKey(j.streamed), r: first, ptr: j.streamBufs[0], arena: st.arena}
	return nil
}

// arenaUsed is called before any use of the arena other than a streamed
// MSM's chunk loop: it drops a first chunk sent ahead, once its copy has
// completed, and notes that the arena was used since the last streamed
// MSM.
func (st *msmState) arenaUsed(c *driver.Ctx) error {
	f := &st.first
	f.afterUsed = true
	if f.sent == nil {
		return nil
	}
	f.sent = nil
	if err := st.stage.wait(c); err != nil {
		return fmt.Errorf("the first chunk sent ahead: %w", err)
	}
	return nil
}

// forgetFirst forgets what involves the set at key, before its plan goes
// (and with it, maybe, its host memory): the successors learned from or
// to it, and a first chunk of it sent ahead, or chunks sent into the room
// (msm_ring.go), once their copies have completed.
func (st *msmState) forgetFirst(c *driver.Ctx, key uintptr) error {
	f := &st.first
	delete(f.next, key)
	for k, nx := range f.next {
		if nx.key == key {
			delete(f.next, k)
		}
	}
	if f.after == key {
		f.after, f.afterUsed = 0, false
	}
	if st.ring.pre != nil && st.ring.pre.key == key {
		if err := st.dropRing(c); err != nil {
			return fmt.Errorf("the chunks sent ahead: %w", err)
		}
	}
	if f.sent == nil || f.sent.key != key {
		return nil
	}
	f.sent = nil
	if err := st.stage.wait(c); err != nil {
		return fmt.Errorf("the first chunk sent ahead: %w", err)
	}
	return nil
}
