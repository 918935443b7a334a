package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Chunked MSMs. An MSM whose bases, or whose scratch arena, do not fit the
// device memory it may use runs over consecutive ranges of its points
// ("chunks"). Each chunk runs the bucket stages of the pipeline in
// msm_plan.go (sort, accumulate, reduce levels) over its scalars and bases,
// and bucket_fold adds its buckets into a carry of one XYZZ point per
// segment (a chunk's reduce levels stop at msmFoldPartials partials a
// bucket, not msmBucketPartials: bucket_fold adds any number); after the
// last chunk the window stage weights the carry once, so a chunked MSM has
// one window stage and one set of window sums, as a one-pass MSM has.
// Every chunk uses the full chunk's window bits. The
// arena holds one chunk's buffers and the carry, not the whole MSM's, and
// the bases are either resident (a chunk reads its range in place, table
// copies included: copy k of base lo+i sits k·stride+i points after base
// lo) or streamed: the host sends each chunk's bases into one of two
// device buffers while the chunk before runs on the other.
//
//	for chunk i:  scalars(i) up, beside chunk i−1's stages  →  sort(i), accumulate(i) queued
//	              →  wait for chunk i−1  →  bases(i+1) up, asynchronously
//	              →  wait for sort(i)'s band maxima  →  reduce(i), fold(i) queued
//	then:         window stage over the carry
//
// The device goes from one chunk's stages to the next without waiting for
// the host: each wait comes after work is queued behind what it waits for.
// A chunk's scalar buffer is free once its sort has run (the host waits for
// the sort's band maxima), so the next chunk's scalars go up while the
// chunk's accumulate and reduce run. Bases in pinned memory (a key the
// device pinned, Backend.PreloadKey) go up by DMA beside the pipeline;
// bases in pageable memory go through the staging chunks on the device
// thread, before the pipeline is queued, so their copy does not overlap it.

// chunkRange is one chunk's points [lo, hi).
type chunkRange struct{ lo, hi int }

// chunkRanges splits n points into chunks of at most chunk points: all of
// them chunk long but the last. chunk < 1 or ≥ n gives one range.
func chunkRanges(n, chunk int) []chunkRange {
	if chunk < 1 || chunk >= n {
		return []chunkRange{{0, n}}
	}
	out := make([]chunkRange, 0, (n+chunk-1)/chunk)
	for lo := 0; lo < n; lo += chunk {
		out = append(out, chunkRange{lo, min(lo+chunk, n)})
	}
	return out
}

// sub returns scalars [lo, hi) of s: the part of its host elements and of
// its device elements (which follow the host ones) that the range covers.
// The result is never queued: a chunk's scalars go up when it runs.
func (s msmScalars) sub(lo, hi int) msmScalars {
	h := len(s.host)
	out := msmScalars{host: s.host[min(lo, h):min(hi, h)]}
	if s.hdev != 0 && len(out.host) > 0 {
		out.hdev = s.hdev.Add(min(lo, h) * elemBytes)
	}
	if d0 := max(lo, h); hi > d0 {
		out.dev = s.dev.Add((d0 - h) * elemBytes)
		out.ndev = hi - d0
	}
	return out
}

// chunked reports whether j runs in more than one chunk or streams its
// bases (and so may not share its sort, nor take scalars queued ahead
// beyond its first chunk's).
func (j *msmJob) chunked() bool { return j.streamed != nil || j.chunk < j.n }

// deviceSpan is n bytes of device memory at ptr.
type deviceSpan struct {
	ptr driver.DevicePtr
	n   int
}

// idleArena is the MSM engine's whole arena (j's stream buffers, carry
// and scratch, and any room a larger earlier MSM left): nothing in it is
// read or written until j's run queues its first copy there, so that the
// lean quotient may hold c in it meanwhile (Backend.quotient), which waits
// for its copy out of it before it returns. A first chunk sent ahead into
// it is dropped (arenaUsed).
func (j *msmJob) idleArena(c *driver.Ctx, st *msmState) (deviceSpan, error) {
	if err := st.arenaUsed(c); err != nil {
		return deviceSpan{}, err
	}
	return deviceSpan{ptr: st.arena, n: int(st.arenaLen)}, nil
}

// carryBytes is the arena space of a chunked MSM's carry (one XYZZ point
// per segment of plan p) and of the segment offsets 0, 1, …, nseg the
// window stage reads it with; 0 for one chunk.
func carryBytes(p msmPlan, xyzzBytes int, chunks int) uint64 {
	if chunks < 2 {
		return 0
	}
	return align256(uint64(p.nseg)*uint64(xyzzBytes)) + align256(4*(uint64(p.nseg)+1))
}

func align256(n uint64) uint64 { return (n + 255) &^ 255 }

// msmChunked runs the MSM j over scalars chunk by chunk (see above) and
// returns its result, with one record for the whole MSM: its stages summed
// over the chunks (the window stage's time includes the folds), Chunks and
// StreamedBytes set. A queued scalars means that the host part of the
// first chunk's scalars is already on its way (MSMQuotientLH).
func msmChunked[W, R any](ctx context.Context, st *msmState, c *driver.Ctx, j *msmJob, scalars msmScalars,
	combine func([]W, uint32) R) (R, error) {
	out, err := msmChunkedBatch(ctx, st, c, j, []msmScalars{scalars}, deviceSpan{}, combine)
	if err != nil {
		var zero R
		return zero, err
	}
	return out[0], nil
}

// batchCarries returns the bucket carries of a batch of nvec scalar
// vectors over j's chunks: the first in the arena, where j's plan put it,
// the others in spare (device memory idle during the call: the quotient's
// work vectors, Backend.batchSpare). ErrBatchRoom where spare is short.
func (j *msmJob) batchCarries(st *msmState, nvec, chunks int, spare deviceSpan) ([]driver.DevicePtr, error) {
	cb := int(carryBytes(j.p, j.cv.xyzzBytes, chunks))
	carries := []driver.DevicePtr{st.arena.Add(j.streamBytes)}
	if cb == 0 {
		return carries, nil // one chunk: no carry, each vector's window sums are read before the next runs
	}
	if need := (nvec - 1) * cb; spare.n < need {
		return nil, fmt.Errorf("%w: %d more carries of %d bytes, %d bytes spare", ErrBatchRoom, nvec-1, cb, spare.n)
	}
	for v := 1; v < nvec; v++ {
		carries = append(carries, spare.ptr.Add((v-1)*cb))
	}
	return carries, nil
}

// ErrBatchRoom means a batch of MSMs over the same bases found no device
// memory for the bucket carries of its vectors beyond the first: the
// caller runs them one at a time instead.
var ErrBatchRoom = errors.New("gpu: no room for a batch's carries")

// msmChunkedBatch runs the MSM j over each of several scalar vectors
// (vecs, all of j's length) and returns their results in order. The chunk
// loop visits chunk i of every vector before chunk i+1, so that streamed
// bases go up once for the whole batch, not once per vector: for chunk i,
// vector v
//
//	scalars(i, v) up, beside the sub-chunk before  →  sort and accumulate(i, v)
//	queued  →  wait for the sub-chunk before  →  (v last) bases(i+1) up,
//	then the work beside chunk i (besideChunk)  →  reduce(i, v) queued,
//	fold into carry v
//
// and after the last chunk one window stage per vector over its carry.
// Each vector has a carry of its own (batchCarries); with one chunk there
// is none, and each vector's window sums are read before the next vector
// runs. The record covers the whole batch (Points: every vector's).
func msmChunkedBatch[W, R any](ctx context.Context, st *msmState, c *driver.Ctx, j *msmJob, vecs []msmScalars,
	spare deviceSpan, combine func([]W, uint32) R) (_ []R, err error) {
	n := vecs[0].n()
	for _, v := range vecs[1:] {
		if v.n() != n || v.queued {
			return nil, fmt.Errorf("msm %s batch: vectors of %d and %d scalars (or queued ahead)", j.cv.name, n, v.n())
		}
	}
	ranges := chunkRanges(n, j.chunk)
	if j.reverse {
		slices.Reverse(ranges)
	}
	pb := j.cv.pointBytes
	carried := len(ranges) > 1
	carries, err := j.batchCarries(st, len(vecs), len(ranges), spare)
	if err != nil {
		return nil, err
	}
	// The first chunk's bases may be on the device already, sent during
	// the MSM before (msm_first.go): the chunks then start on that buffer.
	// Or its first chunks lie in the room, sent during the MSM before
	// (msm_ring.go): the chunks then run from a ring of slots.
	firstThere := false
	var g *ring
	if j.streamed != nil {
		if k := st.firstStart(j, ranges); k >= 0 {
			firstThere = true
			if k == 1 {
				j.streamBufs[0], j.streamBufs[1] = j.streamBufs[1], j.streamBufs[0]
			}
			err = st.dropRing(c)
		} else {
			g, err = st.ringTake(c, j, vecs, ranges)
		}
		if err != nil {
			return nil, err
		}
	} else if err := st.arenaUsed(c); err != nil {
		return nil, err
	}
	if g != nil {
		// Copies still on the ring's stream when the call ends early
		// land before anything else uses the slots.
		defer func() {
			if e := st.ringEnd(c, err == nil); err == nil {
				err = e
			}
		}()
	}
	work := carries[0].Add(int(carryBytes(j.p, j.cv.xyzzBytes, len(ranges))))
	upload := func(i int) error {
		r := ranges[i]
		if err := st.stage.upload(c, j.streamBufs[i%2], j.streamed[r.lo*pb:r.hi*pb]); err != nil {
			return fmt.Errorf("stream %s bases [%d, %d): %w", j.cv.name, r.lo, r.hi, err)
		}
		return nil
	}
	at := msmStarts{bases: j.basesStart, upload: time.Now()}
	var rec MSMTimings
	// done waits for a sub-chunk queued earlier (its stage events are ev;
	// not for the stager's stream, where Prefetch's uploads may run on) and
	// adds its stage times, and the device's idle time since the sub-chunk
	// before it ended (prevDone: that one's last event, which the sets'
	// turns leave unrecorded until after this call).
	var prevDone *driver.Event
	done := func(ev *[numMSMEvents]*driver.Event) error {
		if err := c.SyncEvent(ev[evDone]); err != nil {
			return err
		}
		d, err := stageTimes(c, ev)
		if err != nil {
			return err
		}
		rec.Sort += d[evSorted]
		rec.Accumulate += d[evAccumulated]
		rec.Reduce += d[evReduced]
		rec.Window += d[evDone]
		switch {
		case prevDone == nil && carried:
			// The MSM's first sub-chunk: its lead, from the device's work
			// before (the mark moves only at this MSM's end).
			lead, _, err := st.end.since(c, ev[evStart])
			if err != nil {
				return err
			}
			rec.Lead = lead
		case carried:
			idle, err := c.Elapsed(prevDone, ev[evStart])
			if err != nil {
				return err
			}
			rec.Idle += idle
		}
		prevDone = ev[evDone]
		return nil
	}
	if carried {
		for _, cr := range carries {
			if err := c.Memset(cr, 0, int(j.p.nseg)*j.cv.xyzzBytes); err != nil { // the point at infinity
				return nil, fmt.Errorf("clear the bucket carry: %w", err)
			}
		}
	}
	if j.streamed != nil {
		switch {
		case g != nil:
			if err := st.ringFill(c, g, 0); err != nil {
				return nil, err
			}
		case !firstThere:
			if err := upload(0); err != nil {
				return nil, err
			}
		}
		rec.StreamedBytes = int64(len(j.streamed))
	}
	results := make([]R, len(vecs))
	var r msmRun
	// Sub-chunks take turns with the two sets of stage events, so that one
	// is queued while the times of the one before are still to be read.
	sets := [2]*[numMSMEvents]*driver.Event{&st.ev, &st.evNext}
	sub := 0
	// read takes the window sums at win of the run r just queued, once
	// it is done.
	read := func(win driver.DevicePtr) (R, error) {
		wins := make([]W, r.p.mwin)
		if err := c.DtoH(driver.Bytes(wins), win); err != nil {
			var zero R
			return zero, fmt.Errorf("read window sums: %w", err)
		}
		return combine(wins, r.p.c), nil
	}
	var queued *[numMSMEvents]*driver.Event // a sub-chunk's events whose times done has not read
	for i, rg := range ranges {
		p, err := j.chunkPlan(rg.hi - rg.lo)
		if err != nil {
			return nil, err
		}
		b, _ := p.layout(work, j.cv.xyzzBytes)
		bases := j.streamBufs[i%2]
		switch {
		case j.streamed == nil:
			bases = j.res.ptr.Add(rg.lo * pb)
		case g != nil:
			if bases, err = st.ringWait(c, g, i); err != nil {
				return nil, err
			}
		}
		for v, vec := range vecs {
			r = msmRun{ctx: ctx, c: c, k: st.sort, cv: j.cv, p: p, b: b, ev: sets[sub%2], maxv: st.maxv.Bytes(),
				folded: carried}
			sub++
			if err := r.interrupted("msm scalars"); err != nil {
				return nil, err
			}
			t0 := time.Now()
			part := vec.sub(rg.lo, rg.hi)
			part.queued = i == 0 && vec.queued
			if j.place != nil {
				if part = j.place(part); part.hdev != 0 {
					rec.AheadBytes += int64(len(part.host) * elemBytes)
				}
			}
			if err := part.load(c, st.stage, b.scalars); err != nil {
				return nil, fmt.Errorf("scalars [%d, %d): %w", rg.lo, rg.hi, err)
			}
			if j.keep != 0 && len(vecs) == 1 {
				// Before the sort on the same stream, which reads them; the
				// next chunk's scalars come once the host saw that sort end.
				if err := c.DtoDAsync(j.keep.Add(rg.lo*elemBytes), b.scalars, (rg.hi-rg.lo)*elemBytes, nil); err != nil {
					return nil, fmt.Errorf("keep scalars [%d, %d): %w", rg.lo, rg.hi, err)
				}
			}
			rec.Upload += time.Since(t0)
			if i == 0 && v == 0 {
				at.pipeline = time.Now()
			}
			// This sub-chunk's sort and accumulate queue behind the one
			// before (same stream), before the host waits for that one: the
			// device goes from one to the other without waiting for the host.
			if err := r.mark(evStart); err != nil {
				return nil, err
			}
			var maxima []uint32
			fresh, err := r.accumulate(bases, &maxima)
			if err != nil {
				return nil, err
			}
			if queued != nil {
				// The sub-chunk before ends: by the last vector of chunk i,
				// chunk i−1 has, so its stream buffer, the next chunk's, is
				// free.
				if err := done(queued); err != nil {
					return nil, err
				}
				queued = nil
			}
			// The next chunk's bases go up beside this chunk's last stages:
			// queued earlier, they would hold up the scalars of this chunk's
			// other vectors, which follow them on the stager's stream.
			if v == len(vecs)-1 && j.streamed != nil {
				switch {
				case g != nil:
					// Chunks [0, i) have ended: their slots take the
					// chunks due, and at the last chunk the stream buffers
					// that hold none are free for the next MSM's first.
					if err := st.ringFill(c, g, i); err != nil {
						return nil, err
					}
					if len(vecs) == 1 {
						if err := st.ringChain(c, j, g, vecs[0], i); err != nil {
							return nil, err
						}
					}
					if i+1 == len(ranges) {
						free, n := g.freeBuffers(j, i)
						if err := st.sendFirst(c, j, free, n); err != nil {
							return nil, err
						}
					}
				case i+1 < len(ranges):
					if err := upload(i + 1); err != nil {
						return nil, err
					}
				default:
					// The last chunk: its other buffer is free for the
					// next MSM's first chunk.
					if err := st.sendFirst(c, j, j.streamBufs[(i+1)%2], j.streamBytes/2); err != nil {
						return nil, err
					}
				}
				if g == nil && len(vecs) == 1 {
					if err := st.ringAhead(c, j, vecs[0], ranges, i); err != nil {
						return nil, err
					}
				}
			}
			if v == len(vecs)-1 {
				if err := st.besideChunk(c, j, i, len(ranges)); err != nil {
					return nil, err
				}
			}
			bs, err := r.reduce(fresh, &maxima)
			if err != nil {
				return nil, err
			}
			var win driver.DevicePtr
			if carried {
				err = r.fold(bs, carries[v])
			} else {
				win, err = r.windows(bs)
			}
			if err != nil {
				return nil, err
			}
			if err := r.mark(evDone); err != nil {
				return nil, err
			}
			if !carried { // one chunk: no lead to read; each vector's end is the device's last
				if err := st.end.mark(c, nil); err != nil {
					return nil, err
				}
			}
			queued = r.ev
			rec.Bits, rec.Copies, rec.Windows = int(p.c), int(p.copies()), int(p.mwin)
			if !carried {
				// One chunk: the next vector's stages write over these sums.
				if err := done(queued); err != nil {
					return nil, err
				}
				queued = nil
				if results[v], err = read(win); err != nil {
					return nil, err
				}
			}
		}
	}
	if queued != nil {
		if err := done(queued); err != nil {
			return nil, err
		}
	}
	if carried {
		// One window stage over each carry: segment s holds one point.
		nseg := int(j.p.nseg)
		for v, cr := range carries {
			offs := cr.Add(int(align256(uint64(nseg) * uint64(j.cv.xyzzBytes))))
			if err := r.fillSteps(offs, uint32(nseg), 1); err != nil { // 0, 1, …, nseg
				return nil, fmt.Errorf("carry offsets: %w", err)
			}
			if err := r.mark(evReduced); err != nil {
				return nil, err
			}
			win, err := r.windows(bucketSet{lo: cr, loOff: offs, hi: cr, hiOff: offs, s0: j.p.nseg, s1: j.p.nseg})
			if err != nil {
				return nil, err
			}
			if err := r.mark(evDone); err != nil {
				return nil, err
			}
			if err := st.end.mark(c, nil); err != nil { // the lead was read with the first sub-chunk's times
				return nil, err
			}
			if err := c.SyncEvent(r.ev[evDone]); err != nil {
				return nil, err
			}
			d, err := c.Elapsed(r.ev[evReduced], r.ev[evDone])
			if err != nil {
				return nil, err
			}
			rec.Window += d
			if results[v], err = read(win); err != nil {
				return nil, err
			}
		}
	}
	if j.streamed != nil {
		st.firstEnd(j)
	}
	rec.Compute = rec.Sort + rec.Accumulate + rec.Reduce + rec.Window
	rec.Points, rec.Chunks, rec.Bases = n*len(vecs), len(ranges), j.basesTime
	rec.FirstAhead = firstThere
	if g != nil {
		rec.RingFound = g.found
	}
	reportMSM(ctx, st.device, at, rec)
	return results, nil
}

// chunkPlan returns the plan of one of j's chunks of n points: j's own
// plan for a full chunk, else a plan over the same bases shape with the
// same window bits (its buckets are carried into the same segments).
func (j *msmJob) chunkPlan(n int) (msmPlan, error) {
	if n == int(j.p.n) {
		return j.p, nil
	}
	return newMSMPlanTable(n, j.table, j.p.c, j.cv.bucketWave)
}

// stageTimes reads the times between the stage events ev of an MSM run.
func stageTimes(c *driver.Ctx, ev *[numMSMEvents]*driver.Event) ([numMSMEvents]time.Duration, error) {
	var d [numMSMEvents]time.Duration
	for i := evSorted; i < numMSMEvents; i++ {
		var err error
		if d[i], err = c.Elapsed(ev[i-1], ev[i]); err != nil {
			return d, err
		}
	}
	return d, nil
}

// linkSpare reports whether j leaves the link room beside its chunks for
// other uploads (Backend.PrefetchQuotient): its bases are resident, or
// G2's, whose device work a chunk outlasts the chunk's upload (at 16 GiB
// on the H100, 27 ms against 15 ms for 805 MB); a streamed G1 MSM's chunks
// are bound by the link (A's: 14 ms of work against 15 ms of upload).
func (j *msmJob) linkSpare() bool {
	return j.streamed == nil || j.cv.pointBytes == int(unsafe.Sizeof(bls12381.G2Affine{}))
}

// roomBeside is the most bytes sent beside one chunk of j, whose bases are
// streamed and so take the link (Backend.PrefetchQuotient): two thirds of a
// chunk's bases, rounded up to whole pages. A G2 chunk's work outlasts its
// bases' upload by about 80 % (at 16 GiB on the H100, 27 ms against 15 ms
// for 805 MB), so two thirds more keeps the link within the chunk's work.
// What does not go beside one MSM's chunks goes beside the next MSM's, or
// up with the quotient.
func (j *msmJob) roomBeside() int {
	room := 2 * j.chunk * j.cv.pointBytes / 3
	return (room + aheadShareAlign - 1) / aheadShareAlign * aheadShareAlign
}
