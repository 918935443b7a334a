package gpu

import (
	"context"
	"fmt"
	"time"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Chunked MSMs. An MSM whose bases, or whose scratch arena, do not fit the
// device memory it may use runs over consecutive ranges of its points
// ("chunks"): each chunk is a whole MSM of the pipeline in msm_plan.go over
// its scalars and bases, and the host adds the chunks' combined sums. The
// arena is sized for one chunk, not for the whole MSM, and the bases are
// either resident (a chunk reads its range in place, table copies
// included: copy k of base lo+i sits k·stride+i points after base lo) or
// streamed: the host sends each chunk's bases into one of two device
// buffers while the pipeline of the chunk before runs on the other.
//
//	for chunk i:  scalars(i) up (waits for bases(i))  →  bases(i+1) up, asynchronously  →  pipeline(i)
//
// Bases in pinned memory (a key the device pinned, Backend.PreloadKey) go up
// by DMA beside the pipeline; bases in pageable memory go through the
// staging chunks on the device thread, before the pipeline is queued, so
// their copy does not overlap it.

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
	if d0 := max(lo, h); hi > d0 {
		out.dev = s.dev.Add((d0 - h) * elemBytes)
		out.ndev = hi - d0
	}
	return out
}

// chunked reports whether j runs in more than one chunk or streams its
// bases (and so may not share its sort, nor take scalars queued ahead).
func (j *msmJob) chunked() bool { return j.streamed != nil || j.chunk < j.n }

// msmChunked runs the MSM j over scalars chunk by chunk (see above) and
// returns the sum of the chunks' results, with one record for the whole
// MSM: its stages summed over the chunks, Chunks and StreamedBytes set.
func msmChunked[W, R any](ctx context.Context, st *msmState, c *driver.Ctx, j *msmJob, scalars msmScalars,
	combine func([]W, uint32) R, add func(acc *R, x *R)) (R, error) {
	var acc R
	ranges := chunkRanges(scalars.n(), j.chunk)
	pb := j.cv.pointBytes
	upload := func(i int) error {
		r := ranges[i]
		if err := st.stage.upload(c, j.streamBufs[i%2], j.streamed[r.lo*pb:r.hi*pb]); err != nil {
			return fmt.Errorf("stream %s bases [%d, %d): %w", j.cv.name, r.lo, r.hi, err)
		}
		return nil
	}
	at := msmStarts{bases: j.basesStart, upload: time.Now()}
	var rec MSMTimings
	if j.streamed != nil {
		if err := upload(0); err != nil {
			return acc, err
		}
		rec.StreamedBytes = int64(len(j.streamed))
	}
	wins := make([]W, 0, 256)
	for i, rg := range ranges {
		p, err := j.chunkPlan(rg.hi - rg.lo)
		if err != nil {
			return acc, err
		}
		b, _ := p.layout(st.arena.Add(j.streamBytes), j.cv.xyzzBytes)
		bases := j.streamBufs[i%2]
		if j.streamed == nil {
			bases = j.res.ptr.Add(rg.lo * pb)
		}
		r := msmRun{ctx: ctx, c: c, k: st.sort, cv: j.cv, p: p, b: b, ev: &st.ev}
		if err := r.interrupted("msm scalars"); err != nil {
			return acc, err
		}
		t0 := time.Now()
		if err := scalars.sub(rg.lo, rg.hi).load(c, st.stage, b.scalars); err != nil {
			return acc, fmt.Errorf("scalars [%d, %d): %w", rg.lo, rg.hi, err)
		}
		if j.streamed != nil && i+1 < len(ranges) {
			if err := upload(i + 1); err != nil {
				return acc, err
			}
		}
		rec.Upload += time.Since(t0)
		if i == len(ranges)-1 && j.loaded != nil {
			if err := j.loaded(); err != nil {
				return acc, err
			}
		}
		if i == 0 {
			at.pipeline = time.Now()
		}
		if err := r.mark(evStart); err != nil {
			return acc, err
		}
		var maxima []uint32
		win, err := r.pipeline(bases, &maxima)
		if err != nil {
			return acc, err
		}
		if err := r.mark(evDone); err != nil {
			return acc, err
		}
		wins = wins[:p.mwin]
		if err := c.DtoH(driver.Bytes(wins), win); err != nil {
			return acc, fmt.Errorf("read window sums: %w", err)
		}
		sum := combine(wins, p.c)
		if i == 0 {
			acc = sum
		} else {
			add(&acc, &sum)
		}
		d, err := st.stageTimes(c)
		if err != nil {
			return acc, err
		}
		rec.Sort += d[evSorted]
		rec.Accumulate += d[evAccumulated]
		rec.Reduce += d[evReduced]
		rec.Window += d[evDone]
		rec.Bits, rec.Copies, rec.Windows = int(p.c), int(p.copies()), int(p.mwin)
	}
	rec.Compute = rec.Sort + rec.Accumulate + rec.Reduce + rec.Window
	rec.Points, rec.Chunks, rec.Bases = scalars.n(), len(ranges), j.basesTime
	reportMSM(ctx, st.device, at, rec)
	return acc, nil
}

// chunkPlan returns the plan of one of j's chunks of n points: j's own
// plan for a full chunk, else a plan over the same bases shape.
func (j *msmJob) chunkPlan(n int) (msmPlan, error) {
	if n == int(j.p.n) {
		return j.p, nil
	}
	return newMSMPlanTable(n, j.table, 0, j.cv.bucketWave)
}

// stageTimes reads the event times of the MSM stages just run.
func (st *msmState) stageTimes(c *driver.Ctx) ([numMSMEvents]time.Duration, error) {
	var d [numMSMEvents]time.Duration
	for i := evSorted; i < numMSMEvents; i++ {
		var err error
		if d[i], err = c.Elapsed(st.ev[i-1], st.ev[i]); err != nil {
			return d, err
		}
	}
	return d, nil
}
