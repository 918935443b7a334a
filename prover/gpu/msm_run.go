package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// msmBufs are one MSM's device buffers, carved from the engine's arena.
type msmBufs struct {
	scalars, digits, counts, segOff, cursor, sorted driver.DevicePtr
	maxv                                            driver.DevicePtr
	tcount, offA, offB, offC, scanTmp, partA, partB driver.DevicePtr
	taskCls, taskOrder, clsHist, clsOff, clsCur     driver.DevicePtr
	winA, winB, winOffA, winOffB                    driver.DevicePtr
}

// layout places the buffers for plan p from base and returns the end
// offset; with base 0 it measures the arena size.
func (p msmPlan) layout(base driver.DevicePtr, xyzzBytes int) (msmBufs, uint64) {
	var b msmBufs
	off := uint64(0)
	take := func(n uint64) driver.DevicePtr {
		ptr := base + driver.DevicePtr(off)
		off += (n + 255) &^ 255
		return ptr
	}
	segWords := uint64(p.nseg) + 1
	b.scalars = take(uint64(p.n) * uint64(elemBytes))
	b.digits = take(4 * p.entries())
	b.counts = take(4 * segWords)
	b.segOff = take(4 * segWords)
	b.cursor = take(4 * segWords)
	b.sorted = take(4 * p.entries())
	b.maxv = take(4 * uint64(p.bands()))
	b.tcount = take(4 * segWords)
	b.offA = take(4 * segWords)
	b.offB = take(4 * segWords)
	b.offC = take(4 * (segWords + 1)) // one more: the levels into partA (msmRun.tasks with from)
	b.scanTmp = take(4 * scanScratch(p.nseg+1))
	b.partA = take(p.partials() * uint64(xyzzBytes))
	b.partB = take(p.partials() * uint64(xyzzBytes))
	b.taskCls = take(4 * p.partials())
	b.taskOrder = take(4 * p.partials())
	b.clsHist = take(4 * msmTaskClasses)
	b.clsOff = take(4 * (msmTaskClasses + 1))
	b.clsCur = take(4 * msmTaskClasses)
	winPoints := uint64(p.mwin) * uint64(p.k) * uint64(xyzzBytes)
	b.winA = take(winPoints)
	b.winB = take(winPoints)
	b.winOffA = take(4 * (uint64(p.mwin) + 1))
	b.winOffB = take(4 * (uint64(p.mwin) + 1))
	return b, off
}

// buffers returns the buffers of plan p, growing the arena to need bytes
// (p's layout size) when it is smaller.
func (st *msmState) buffers(c *driver.Ctx, p msmPlan, cv *msmCurve, need uint64) (msmBufs, error) {
	if err := st.growArena(c, need, int(p.n)); err != nil {
		return msmBufs{}, err
	}
	b, _ := p.layout(st.arena, cv.xyzzBytes)
	return b, nil
}

// growArena makes the arena at least need bytes (for an MSM of n points).
func (st *msmState) growArena(c *driver.Ctx, need uint64, n int) error {
	if need <= st.arenaLen {
		return nil
	}
	if err := st.arenaUsed(c); err != nil {
		return err
	}
	if err := c.Free(st.arena); err != nil {
		return fmt.Errorf("free msm scratch: %w", err)
	}
	st.mem.add(-int64(st.arenaLen))
	st.arena, st.arenaLen = 0, 0
	ptr, err := c.Alloc(int(need))
	if err != nil {
		return fmt.Errorf("msm scratch for %d points: %w", n, err)
	}
	st.arena, st.arenaLen = ptr, need
	st.mem.add(int64(need))
	return nil
}

// serves reports whether r holds raw (n points of cv), or a longer slice
// that raw prefixes.
func (r *residentBases) serves(cv *msmCurve, raw []byte) bool {
	return r.curve == cv && r.n >= len(raw)/cv.pointBytes && bytes.Equal(r.first, raw[:cv.pointBytes])
}

func basesKey(raw []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(raw))) }

// resident returns the resident set serving raw, if any.
func (st *msmState) residentFor(cv *msmCurve, raw []byte) (*residentBases, bool) {
	r, ok := st.resident[basesKey(raw)]
	return r, ok && r.serves(cv, raw)
}

// shape returns the bases table and plan of an MSM of n points over raw,
// and the scratch arena it needs, checked against free device memory and
// the memory limit (st.mem): the resident set's table, or for bases not
// resident as many copies as the table budget left allows and memory holds,
// down to the bases alone. Only a job that does not fit even so is refused
// (ErrDeviceMemory).
func (st *msmState) shape(cv *msmCurve, raw []byte, n int, free int64) (msmTable, msmPlan, uint64, error) {
	r, resident := st.residentFor(cv, raw)
	most := 1
	if !resident {
		most = int(maxCopies(n, cv.pointBytes, st.tableBudget-st.tableHeld))
	}
	var err error
	for copies := most; copies >= 1; copies-- {
		var t msmTable
		if resident {
			t = r.table
		} else if t, err = newMSMTable(n, uint32(copies), st.window); err != nil {
			return msmTable{}, msmPlan{}, 0, err
		}
		var p msmPlan
		if p, err = newMSMPlanTable(n, t, st.window, cv.bucketWave); err != nil {
			return msmTable{}, msmPlan{}, 0, err
		}
		_, arena := p.layout(0, cv.xyzzBytes)
		if err = st.mem.fits(st.need(cv, raw, t, arena), free); err == nil {
			if int(t.copies) < most {
				st.log.Debug("msm table cut to free memory", slog.String("curve", cv.name), slog.Int("points", n),
					slog.Int("copies", int(t.copies)), slog.Int("budget copies", most))
			}
			return t, p, arena, nil
		}
	}
	return msmTable{}, msmPlan{}, 0, err
}

// maxCopies is how many copies of n points of pointBytes bytes a table
// budget of budget bytes beyond the bases allows (at least 1, the bases).
func maxCopies(n, pointBytes int, budget int64) uint32 {
	return uint32(min(msmMaxCopies, 1+max(0, budget)/(int64(n)*int64(pointBytes))))
}

// need returns the device bytes an MSM over raw with a scratch arena of
// arena bytes would allocate: the bases and their table (t) unless
// resident, and the arena's growth.
func (st *msmState) need(cv *msmCurve, raw []byte, t msmTable, arena uint64) int64 {
	var extra int64
	if _, ok := st.residentFor(cv, raw); !ok {
		extra += int64(t.copies) * int64(len(raw))
	}
	if arena > st.arenaLen {
		extra += int64(arena - st.arenaLen)
	}
	return extra
}

// bases returns the resident set for host (n points of raw bytes),
// uploading it with its table of multiples (shape t) unless a resident copy
// of the same slice, or a longer slice it prefixes, exists.
// It reports the time an upload took, table included (0 when resident).
func (st *msmState) bases(c *driver.Ctx, cv *msmCurve, host any, raw []byte, t msmTable) (
	*residentBases, time.Duration, error) {
	key := basesKey(raw)
	n := len(raw) / cv.pointBytes
	if r, ok := st.resident[key]; ok {
		if r.serves(cv, raw) {
			return r, 0, nil
		}
		if err := st.free(c, key); err != nil {
			return nil, 0, fmt.Errorf("free stale bases: %w", err)
		}
	}
	start := time.Now()
	ptr, err := c.Alloc(int(t.copies) * len(raw))
	if err != nil {
		return nil, 0, fmt.Errorf("resident %s bases (%d points, %d copies): %w", cv.name, n, t.copies, err)
	}
	// Through the stager: its pinned chunks, filled on every core, move
	// pageable bases (a key in the Go heap) several times faster than a
	// plain copy from pageable memory (61 GiB at 2^27: docs/perf.md);
	// pinned bases go straight.
	err = st.stage.upload(c, ptr, raw)
	if err == nil {
		err = st.stage.wait(c)
	}
	if err != nil {
		_ = c.Free(ptr) // the copy error is the one to report
		return nil, 0, fmt.Errorf("upload %s bases: %w", cv.name, err)
	}
	if t.copies > 1 {
		err := launch1D(c, cv.table, uint64(n), msmCurveBlock, ptr, uint32(n), t.copies, t.c*t.mwin)
		if err == nil {
			err = c.Synchronize()
		}
		if err != nil {
			_ = c.Free(ptr) // the table error is the one to report
			return nil, 0, fmt.Errorf("%s bases table (%d copies): %w", cv.name, t.copies, err)
		}
	}
	took := time.Since(start)
	r := &residentBases{host: host, n: n, ptr: ptr, first: bytes.Clone(raw[:cv.pointBytes]), curve: cv, table: t}
	st.resident[key] = r
	st.tableHeld += r.tableBytes()
	st.mem.add(r.bytes())
	st.log.Debug("msm bases resident", slog.String("curve", cv.name), slog.Int("points", n),
		slog.Int("copies", int(t.copies)), slog.Int("window", int(t.c)), slog.Duration("took", took))
	return r, took, nil
}

// bytes is the device memory of r: its bases and their multiples.
func (r *residentBases) bytes() int64 {
	return int64(r.table.copies) * int64(r.n) * int64(r.curve.pointBytes)
}

// tableBytes is the device memory of r's multiples beyond the bases.
func (r *residentBases) tableBytes() int64 { return r.bytes() - int64(r.n)*int64(r.curve.pointBytes) }

// free releases the resident set at key.
func (st *msmState) free(c *driver.Ctx, key uintptr) error {
	r := st.resident[key]
	delete(st.resident, key)
	st.tableHeld -= r.tableBytes()
	st.mem.add(-r.bytes())
	return c.Free(r.ptr)
}

// msmScalars are an MSM's scalars: host elements, then ndev elements that
// are already in device memory at dev (the quotient's h, which
// Backend.MSMQuotientLH leaves there). queued says that the host part's
// upload was started early (msmState.queueHost) and need not be sent again.
type msmScalars struct {
	host []fr.Element
	// hdev, when not 0, is where a copy of host already lies on the device
	// (a vector sent ahead that holds host's memory: Backend.placeAhead);
	// load then copies it there instead of uploading host.
	hdev   driver.DevicePtr
	dev    driver.DevicePtr
	ndev   int
	queued bool
}

func hostScalars(s []fr.Element) msmScalars { return msmScalars{host: s} }

func (s msmScalars) n() int { return len(s.host) + s.ndev }

// hostOnly reports whether s are host elements alone, neither queued nor
// with a copy on the device.
func (s msmScalars) hostOnly() bool { return s.ndev == 0 && s.hdev == 0 && !s.queued }

// load puts the scalars at dst: the host part through the stager (directly
// when pinned) unless its upload is already queued there or a copy of it
// lies on the device (hdev), the device parts by device-to-device copies
// once every copy on the stager's stream is done (a device part may be a
// prefetched vector still arriving: Prefetch).
func (s msmScalars) load(c *driver.Ctx, stage *stager, dst driver.DevicePtr) error {
	if !s.queued && s.hdev == 0 {
		if err := stage.upload(c, dst, driver.Bytes(s.host)); err != nil {
			return err
		}
	}
	if err := stage.wait(c); err != nil {
		return err
	}
	if s.hdev != 0 && len(s.host) > 0 {
		if err := c.DtoD(dst, s.hdev, len(s.host)*elemBytes); err != nil {
			return err
		}
	}
	if s.ndev > 0 {
		return c.DtoD(dst.Add(len(s.host)*elemBytes), s.dev, s.ndev*elemBytes)
	}
	return nil
}

// msmJob is one MSM made ready for its scalars: its plan, its bases
// resident (with their table) and its buffers placed.
type msmJob struct {
	cv         *msmCurve
	p          msmPlan
	res        *residentBases
	b          msmBufs
	basesTime  time.Duration // the bases' upload, when this job made them resident
	basesStart time.Time     // and when it began
	// maxima are the band maxima of the job's sort once it has run. A job
	// given them before its run skips its sort: its scalars are already
	// sorted into its buffers by a job with the same sortKey (MSMB).
	maxima []uint32
	// beside, when not nil, runs once for each chunk i of chunks (one
	// pass: i 0 of 1; i counts the chunks in the order they run), once the
	// chunk's scalars are on the device and the next chunk's bases are
	// queued, just before its last stages are queued: MSMQuotientLH sends
	// a share of the prefetched vectors there.
	beside func(i, chunks int) error
	// reverse runs a chunked job's chunks from the last to the first (the
	// carried buckets add up the same): MSMQuotientLH's H chunks, whose
	// scalars are on the device already, then go first.
	reverse bool
	// place, when not nil, may redirect a chunk's host scalars to a copy
	// on the device (msmScalars.hdev) before they are loaded.
	place func(msmScalars) msmScalars
	// keep, when not 0, is device memory where each chunk of a one-vector
	// chunked job copies its scalars once loaded (at the chunk's first
	// point's place), for a later MSM over the same scalars (sumG1G2).
	keep driver.DevicePtr
	// n is the MSM's points and chunk the points of one pass
	// (msm_chunk.go; n: one pass). A chunked job's p is the plan of a full
	// chunk and table the bases' shape its chunks plan over.
	n, chunk int
	table    msmTable
	// streamed, when not nil, are the bases' bytes on the host, sent chunk
	// by chunk into streamBufs (the arena's first streamBytes bytes); res
	// is nil then.
	streamed    []byte
	streamBufs  [2]driver.DevicePtr
	streamBytes int
}

// prepare shapes an MSM of n points of curve cv over raw (host is the
// slice raw views, kept while resident), makes its bases resident and
// places its buffers.
//
// A set that Backend.PlanKey planned in chunks, or streamed, runs as
// planned. An unplanned MSM that does not fit in one pass runs in chunks,
// as large as fit: over its bases in place where they are resident, else
// streamed.
func (st *msmState) prepare(c *driver.Ctx, cv *msmCurve, host any, raw []byte, n int) (*msmJob, error) {
	free, _, err := c.MemInfo()
	if err != nil {
		return nil, err
	}
	if sp, ok := st.plans[basesKey(raw)]; ok && sp.curve == cv && sp.points >= n {
		return st.prepareChunked(c, cv, host, raw, n, min(n, sp.chunk), sp.resident, free)
	}
	t, p, arena, err := st.shape(cv, raw, n, free)
	if errors.Is(err, ErrDeviceMemory) {
		// Resident bases (already, or uploaded whole) in chunks, else
		// streamed ones; the largest chunk that fits either way.
		ways := []bool{true, false}
		if _, ok := st.residentFor(cv, raw); ok {
			ways = ways[:1]
		}
		for _, resident := range ways {
			for chunk := n / 2; chunk >= msmMinChunk; chunk /= 2 {
				if _, _, fitErr := st.chunkShape(cv, raw, n, chunk, resident, free); fitErr == nil {
					st.log.Debug("msm in chunks to fit device memory", slog.String("curve", cv.name), slog.Int("points", n),
						slog.Int("chunk", chunk), slog.Bool("resident", resident))
					return st.prepareChunked(c, cv, host, raw, n, chunk, resident, free)
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	basesStart := time.Now()
	res, basesTime, err := st.bases(c, cv, host, raw, t)
	if err != nil {
		return nil, err
	}
	b, err := st.buffers(c, p, cv, arena)
	if err != nil {
		return nil, err
	}
	return &msmJob{cv: cv, p: p, res: res, b: b, basesTime: basesTime, basesStart: basesStart, n: n, chunk: n, table: t}, nil
}

// msmMinChunk is the smallest chunk an unplanned MSM is cut into. A chunk's
// scratch does not shrink with its points alone: its bucket carry and
// partials keep about 2^(c−1) points per window, c about log2 of the chunk
// less 4, so at 2^16 points a G1 chunk's scratch is still 52 MB (43.6 MB of
// buffers, 8.8 MB of carry), at 2^14 15 MB.
const msmMinChunk = 1 << 14

// chunkShape returns the bases shape and full-chunk plan of an MSM of n
// points over raw in chunks of chunk points, with the bases resident
// (uploaded whole, without a table, unless they are) or streamed, and the
// device bytes it would add; it fails with ErrDeviceMemory where they do
// not fit (st.mem, free).
func (st *msmState) chunkShape(cv *msmCurve, raw []byte, n, chunk int, resident bool, free int64) (msmTable, msmPlan, error) {
	var t msmTable
	if r, ok := st.residentFor(cv, raw); ok {
		t = r.table
	} else if resident {
		t = msmTable{copies: 1, stride: uint32(len(raw) / cv.pointBytes)}
	} else {
		t = msmTable{copies: 1, stride: uint32(chunk)}
	}
	p, err := newMSMPlanWeighted(chunk, t, st.window, cv.bucketWave, cv.chunkBucketCost)
	if err != nil {
		return t, p, err
	}
	var extra int64
	if _, ok := st.residentFor(cv, raw); !ok && resident {
		extra += int64(len(raw))
	}
	if need := st.chunkArena(cv, p, n, chunk, !resident); need > st.arenaLen {
		extra += int64(need - st.arenaLen)
	}
	return t, p, st.mem.fits(extra, free)
}

// chunkArena is the arena a chunked MSM needs: the stream buffers when
// streamed, the bucket carry when in more than one chunk, then the buffers
// of a full chunk (a shorter last chunk, with the same window bits, needs
// no more).
func (st *msmState) chunkArena(cv *msmCurve, p msmPlan, n, chunk int, streamed bool) uint64 {
	_, need := p.layout(0, cv.xyzzBytes)
	return need + carryBytes(p, cv.xyzzBytes, len(chunkRanges(n, chunk))) + streamBytes(cv, chunk, streamed)
}

// streamBytes is the arena space of the two stream buffers of a chunk.
func streamBytes(cv *msmCurve, chunk int, streamed bool) uint64 {
	if !streamed {
		return 0
	}
	return 2 * align256(uint64(chunk)*uint64(cv.pointBytes))
}

// prepareChunked makes the job of an MSM of n points in chunks of chunk
// points over bases that are (made) resident or streamed.
func (st *msmState) prepareChunked(c *driver.Ctx, cv *msmCurve, host any, raw []byte, n, chunk int, resident bool, free int64) (
	*msmJob, error) {
	t, p, err := st.chunkShape(cv, raw, n, chunk, resident, free)
	if err != nil {
		return nil, err
	}
	j := &msmJob{cv: cv, p: p, n: n, chunk: chunk, table: t, basesStart: time.Now()}
	if resident {
		if j.res, j.basesTime, err = st.bases(c, cv, host, raw, t); err != nil {
			return nil, err
		}
	} else {
		j.streamed = raw[:n*cv.pointBytes]
		j.streamBytes = int(streamBytes(cv, chunk, true))
	}
	if err := st.growArena(c, st.chunkArena(cv, p, n, chunk, !resident), n); err != nil {
		return nil, err
	}
	half := driver.DevicePtr(j.streamBytes / 2)
	j.streamBufs = [2]driver.DevicePtr{st.arena, st.arena + half}
	j.b, _ = p.layout(st.arena.Add(j.streamBytes+int(carryBytes(p, cv.xyzzBytes, len(chunkRanges(n, chunk))))), cv.xyzzBytes)
	return j, nil
}

// queueHost starts the upload of host, the host part of j's scalars, into
// j's scalar buffer on the stager's stream and returns without waiting for
// it (for a slice that is not pinned, once its last chunk is queued), so
// that it overlaps device work queued on other streams. No other use of the
// engine may come between it and j's run.
func (st *msmState) queueHost(c *driver.Ctx, j *msmJob, host []fr.Element) error {
	if err := st.arenaUsed(c); err != nil {
		return err
	}
	if err := st.stage.upload(c, j.b.scalars, driver.Bytes(host)); err != nil {
		return fmt.Errorf("scalars: %w", err)
	}
	return nil
}

// run computes j's window sums of Σ scalars[i]·bases[i] into the bytes that
// out(nwin) returns and reports the window bits.
func (st *msmState) run(ctx context.Context, c *driver.Ctx, j *msmJob, scalars msmScalars, out func(nwin uint32) []byte) (uint32, error) {
	p, b := j.p, j.b
	r := msmRun{ctx: ctx, c: c, k: st.sort, cv: j.cv, p: p, b: b, ev: &st.ev, maxv: st.maxv.Bytes()}
	if err := r.interrupted("msm scalars"); err != nil {
		return 0, err
	}
	if err := st.arenaUsed(c); err != nil {
		return 0, err
	}
	at := msmStarts{bases: j.basesStart, upload: time.Now()}
	if err := scalars.load(c, st.stage, b.scalars); err != nil {
		return 0, fmt.Errorf("scalars: %w", err)
	}
	upload := time.Since(at.upload)
	if err := r.interrupted("msm pipeline"); err != nil {
		return 0, err
	}
	if err := st.besideChunk(c, j, 0, 1); err != nil {
		return 0, err
	}
	at.pipeline = time.Now()
	if err := r.mark(evStart); err != nil {
		return 0, err
	}
	win, err := r.pipeline(j.res.ptr, &j.maxima)
	if err != nil {
		return 0, err
	}
	if err := r.mark(evDone); err != nil {
		return 0, err
	}
	if err := st.end.mark(c, nil); err != nil {
		return 0, err
	}
	if err := c.DtoH(out(p.mwin), win); err != nil {
		return 0, fmt.Errorf("read window sums: %w", err)
	}
	return p.c, st.time(ctx, c, p, at, upload, j.basesTime)
}

// besideChunk runs the work that goes beside chunk i of j's chunks: j's
// own (msmJob.beside), else the engine's (msmState.beside).
func (st *msmState) besideChunk(c *driver.Ctx, j *msmJob, i, chunks int) error {
	if j.beside != nil {
		return j.beside(i, chunks)
	}
	// The Backend's beside writes work vector 1: not while chunks sent
	// ahead lie there (msm_ring.go).
	if st.beside != nil && !st.ringHolds() {
		return st.beside(c, st.stage, j, i, chunks)
	}
	return nil
}

// time reads the MSM's event times and reports them with the host-timed
// parts (starting at at) to the traces in ctx.
func (st *msmState) time(ctx context.Context, c *driver.Ctx, p msmPlan, at msmStarts, upload, bases time.Duration) error {
	d, err := stageTimes(c, &st.ev)
	if err != nil {
		return err
	}
	reportMSM(ctx, st.device, at, MSMTimings{
		Upload: upload, Bases: bases, Sort: d[evSorted], Accumulate: d[evAccumulated], Reduce: d[evReduced],
		Window: d[evDone], Compute: d[evSorted] + d[evAccumulated] + d[evReduced] + d[evDone],
		Points: int(p.n), Bits: int(p.c), Copies: int(p.copies()), Windows: int(p.mwin), Chunks: 1,
	})
	return nil
}

// msmRun is one MSM's launch sequence; it stops between stages once ctx
// is done (interrupted).
type msmRun struct {
	ctx context.Context
	c   *driver.Ctx
	k   *msmSortKernels
	cv  *msmCurve
	p   msmPlan
	b   msmBufs
	ev  *[numMSMEvents]*driver.Event
	// maxv is pinned host memory (msmState.maxv) the sort's band maxima
	// come up into while accumulate runs.
	maxv []byte
	// folded is set where bucket_fold, not bucket_sum, reads the buckets
	// (a chunked MSM's chunks): they may keep more partials (most).
	folded bool
}

// most is the most partials a bucket may keep after the reduce levels.
func (r *msmRun) most() uint32 {
	if r.folded {
		return msmFoldPartials
	}
	return msmBucketPartials
}

// mark records stage event i on the default stream.
func (r *msmRun) mark(i int) error { return r.c.Record(r.ev[i], nil) }

// interrupted is interrupted(r.ctx, r.c, step): nil unless the call's
// context is done.
func (r *msmRun) interrupted(step string) error { return interrupted(r.ctx, r.c, step) }

// pipeline runs the stages after the scalar upload and returns the device
// address of the mwin window sums (XYZZ, one per bucket window, in order).
// It sorts the entries and sets *sorted to the band maxima, unless *sorted
// already holds those of the same sort, whose entries are in r's buffers.
func (r *msmRun) pipeline(bases driver.DevicePtr, sorted *[]uint32) (driver.DevicePtr, error) {
	bs, err := r.buckets(bases, sorted)
	if err != nil {
		return 0, err
	}
	return r.windows(bs)
}

// bucketSet is where the bucket stages leave each segment's points for the
// window stage (bucket_sum) or for bucket_fold: at lo and loOff[s], and for
// the segments [s0, s1) that went through reduce levels at hi and
// hiOff[s−s0].
type bucketSet struct {
	lo, loOff, hi, hiOff driver.DevicePtr
	s0, s1               uint32
}

// buckets runs the stages from the sort to the reduce levels (see
// pipeline) and records evSorted, evAccumulated and evReduced: accumulate,
// then reduce.
func (r *msmRun) buckets(bases driver.DevicePtr, sorted *[]uint32) (bucketSet, error) {
	fresh, err := r.accumulate(bases, sorted)
	if err != nil {
		return bucketSet{}, err
	}
	return r.reduce(fresh, sorted)
}

// accumulate queues the sort (unless *sorted holds its maxima already, see
// pipeline; fresh reports that it ran) and the accumulate stage, and
// records evSorted and evAccumulated. It waits on nothing: the task counts
// stay on the device, and the band maxima come up into r.maxv for reduce.
func (r *msmRun) accumulate(bases driver.DevicePtr, sorted *[]uint32) (fresh bool, err error) {
	p, b := r.p, r.b
	fresh = *sorted == nil
	if fresh {
		if err := r.sortEntries(); err != nil {
			return false, err
		}
	}
	if err := r.mark(evSorted); err != nil {
		return false, err
	}
	if err := r.interrupted("msm accumulate"); err != nil {
		return false, err
	}
	// The task count stays on the device (offA's last word): the task
	// kernels run over a bound on it, and their threads past it return.
	if _, err := r.tasks(b.segOff, p.nseg, p.t1, b.offA, 0); err != nil {
		return false, err
	}
	ntask := p.partials()
	if err := r.orderTasks(ntask); err != nil {
		return false, err
	}
	if err := launch1D(r.c, r.cv.accumulate, ntask, msmCurveBlock,
		bases, b.sorted, b.segOff, b.offA, b.taskOrder, p.nseg, p.t1, b.partA); err != nil {
		return false, err
	}
	return fresh, r.mark(evAccumulated)
}

// reduce queues the reduce levels after accumulate and records evReduced.
// Where the sort was fresh it first waits for it (not for accumulate) and
// sets *sorted to the band maxima that came up.
func (r *msmRun) reduce(fresh bool, sorted *[]uint32) (bucketSet, error) {
	p, b := r.p, r.b
	if fresh {
		// The maxima's copy was queued before evSorted.
		if err := r.c.SyncEvent(r.ev[evSorted]); err != nil {
			return bucketSet{}, err
		}
		m := make([]uint32, p.bands())
		copy(driver.Bytes(m), r.maxv)
		*sorted = m
	}
	if err := r.interrupted("msm reduce"); err != nil {
		return bucketSet{}, err
	}
	s0, s1, maxLen := p.reducedRange(*sorted, r.most())
	hiPts, hiOff := b.partA, b.offA
	if s0 < s1 {
		// Segments [s0, s1) first sum their partials in reduce levels, into
		// partB and then into their own part of partA, which the first level
		// has read: no level writes more points than it read. That part
		// starts at offA[s0], which stays on the device: the levels into
		// partA number their tasks and offsets from it.
		first := b.offA.Add(4 * int(s0))
		var err error
		hiPts, hiOff, err = r.levels(b.partA, first, s1-s0, maxLen, r.most(), p.t2, p.partials(),
			[2]levelOut{{pts: b.partB, off: b.offB}, {pts: b.partA, off: b.offC, from: first}})
		if err != nil {
			return bucketSet{}, err
		}
	}
	if err := r.mark(evReduced); err != nil {
		return bucketSet{}, err
	}
	return bucketSet{lo: b.partA, loOff: b.offA, hi: hiPts, hiOff: hiOff, s0: s0, s1: s1}, nil
}

// windows weights the buckets of bs per bucket window (bucket_sum, then
// reduce levels over its K results per window) and returns the address of
// the mwin window sums.
func (r *msmRun) windows(bs bucketSet) (driver.DevicePtr, error) {
	p, b := r.p, r.b
	if err := r.interrupted("msm window sums"); err != nil {
		return 0, err
	}
	if err := launch1D(r.c, r.cv.bucketSum, uint64(p.mwin)*uint64(p.k), msmCurveBlock,
		bs.lo, bs.loOff, bs.hi, bs.hiOff, bs.s0, bs.s1, p.mwin, p.nb, p.k, b.winA); err != nil {
		return 0, err
	}
	// The window stage's segments: w·k (w ≤ mwin).
	if err := r.fillSteps(b.winOffA, p.mwin, p.k); err != nil {
		return 0, err
	}
	win, _, err := r.levels(b.winA, b.winOffA, p.mwin, p.k, 1, p.tw, uint64(p.mwin)*uint64(p.k),
		[2]levelOut{{pts: b.winB, off: b.winOffB}, {pts: b.winA, off: b.winOffA}})
	return win, err
}

// fold adds the buckets of bs to carry, one XYZZ point per segment
// (bucket_fold): a chunk's part of a chunked MSM's buckets.
func (r *msmRun) fold(bs bucketSet, carry driver.DevicePtr) error {
	return launch1D(r.c, r.cv.fold, uint64(r.p.nseg), msmCurveBlock,
		bs.lo, bs.loOff, bs.hi, bs.hiOff, bs.s0, bs.s1, r.p.nseg, carry)
}

// sortEntries computes the digits, the segment offsets and the sorted
// entries, and queues the copy of each band's longest segment length into
// r.maxv (read once the copy is done: buckets).
func (r *msmRun) sortEntries() error {
	p, b, k := r.p, r.b, r.k
	if err := r.c.Memset(b.counts, 0, 4*int(p.nseg)); err != nil {
		return err
	}
	if err := r.c.Memset(b.maxv, 0, 4*int(p.bands())); err != nil {
		return err
	}
	if err := launch1D(r.c, k.digits, uint64(p.n), msmSortBlock, b.scalars, p.n, p.c, p.nwin, p.mwin,
		b.digits, b.counts); err != nil {
		return err
	}
	if err := r.scan(b.counts, p.nseg, b.segOff, b.maxv, p.band, b.scanTmp); err != nil {
		return err
	}
	if err := r.c.DtoD(b.cursor, b.segOff, 4*int(p.nseg)); err != nil {
		return err
	}
	if err := launch1D(r.c, k.scatter, p.entries(), msmSortBlock, b.digits, p.n, p.nwin, p.mwin, p.stride, p.c,
		b.cursor, b.sorted); err != nil {
		return err
	}
	n := 4 * int(p.bands())
	if n > len(r.maxv) {
		return fmt.Errorf("msm: %d band maxima, room for %d", p.bands(), len(r.maxv)/4)
	}
	return r.c.DtoHAsync(r.maxv[:n], b.maxv, nil)
}

// tasks splits the nseg segments at off into tasks of at most t elements
// and writes the task offsets (nseg+1 words; the last is the task count,
// left on the device) to taskOff, or, where from is not 0, to taskOff+4,
// numbered from the device word at from: then taskOff holds nseg+2 words.
// It returns the offsets' address.
func (r *msmRun) tasks(off driver.DevicePtr, nseg, t uint32, taskOff, from driver.DevicePtr) (driver.DevicePtr, error) {
	counts, m := r.b.tcount, nseg
	if from != 0 {
		// The scan of (x, counts…) writes 0, x, x + counts[0], …: the
		// offsets from x start at its second word.
		if err := r.c.DtoD(counts, from, 4); err != nil {
			return 0, err
		}
		counts, m = counts.Add(4), nseg+1
	}
	if err := launch1D(r.c, r.k.taskCnts, uint64(nseg), msmSortBlock, off, nseg, t, counts); err != nil {
		return 0, err
	}
	if err := r.scan(r.b.tcount, m, taskOff, 0, 1, r.b.scanTmp); err != nil {
		return 0, err
	}
	if from != 0 {
		return taskOff.Add(4), nil
	}
	return taskOff, nil
}

// taskBound bounds the tasks of at most t elements that nseg segments of
// pts elements in all, none longer than maxLen, split into:
// Σ ceil(len/t) ≤ ⌊pts/t⌋ + nseg, and ≤ nseg·ceil(maxLen/t).
func taskBound(pts uint64, nseg, maxLen, t uint32) uint64 {
	return min(pts/uint64(t)+uint64(nseg), uint64(nseg)*uint64(ceilDiv32(maxLen, t)))
}

// orderTasks lists the accumulate tasks (offsets at offA, their count in
// its last word) by length, longest first, in taskOrder: a counting sort on
// msmTaskClasses classes. Its kernels run over ntask threads, a bound on
// the count.
func (r *msmRun) orderTasks(ntask uint64) error {
	p, b, k := r.p, r.b, r.k
	if err := r.c.Memset(b.clsHist, 0, 4*msmTaskClasses); err != nil {
		return err
	}
	if err := launch1D(r.c, k.taskClasses, ntask, msmSortBlock,
		b.segOff, b.offA, p.nseg, p.t1, b.taskCls, b.clsHist); err != nil {
		return err
	}
	if err := r.scan(b.clsHist, msmTaskClasses, b.clsOff, 0, 1, b.scanTmp); err != nil {
		return err
	}
	if err := r.c.DtoD(b.clsCur, b.clsOff, 4*msmTaskClasses); err != nil {
		return err
	}
	return launch1D(r.c, k.taskOrder, ntask, msmSortBlock, b.taskCls, b.offA.Add(4*int(p.nseg)), b.clsCur,
		b.taskOrder)
}

// levelOut is where a reduce level writes: its points at pts, indexed by
// offsets written to off, or, where from is not 0, numbered from the device
// word at from (off then holds one word more; see tasks).
type levelOut struct {
	pts, off, from driver.DevicePtr
}

// levels sums the points of each of nseg segments (cur, offsets off; pts
// points in all at most) with reduce tasks of t until no segment holds more
// than most; maxLen bounds the longest segment. Level i writes to out[i%2],
// so out[1] may be where cur is, read only by the first level. It returns
// the result's points and offsets. Nothing is read back: each level's task
// count stays on the device, and its grid is taskBound.
func (r *msmRun) levels(cur, off driver.DevicePtr, nseg, maxLen, most, t uint32, pts uint64, out [2]levelOut) (
	driver.DevicePtr, driver.DevicePtr, error) {
	for i := 0; maxLen > most; i++ {
		if err := r.interrupted("msm reduce level"); err != nil {
			return 0, 0, err
		}
		o := out[i%2]
		taskOff, err := r.tasks(off, nseg, t, o.off, o.from)
		if err != nil {
			return 0, 0, err
		}
		pts = taskBound(pts, nseg, maxLen, t)
		if err := launch1D(r.c, r.cv.reduce, pts, msmCurveBlock, cur, off, taskOff, nseg, t, o.pts); err != nil {
			return 0, 0, err
		}
		cur, off = o.pts, taskOff
		maxLen = ceilDiv32(maxLen, t)
	}
	return cur, off, nil
}

// scan writes the exclusive prefix sums of the m words at in to out (m+1
// words, out[m] the total), folding the largest word of each run of span
// words into maxOut[run] when maxOut is not 0. tmp holds the per-level
// chunk sums (scanScratch words).
func (r *msmRun) scan(in driver.DevicePtr, m uint32, out, maxOut driver.DevicePtr, span uint32, tmp driver.DevicePtr) error {
	k := r.k
	nch := ceilDiv32(m, msmScanChunk)
	sums := tmp
	if err := launch1D(r.c, k.scanUp, uint64(nch), msmSortBlock, in, m, sums, maxOut, span); err != nil {
		return err
	}
	offs := driver.DevicePtr(0)
	if nch > 1 {
		offs = sums.Add(4 * int(nch))
		if err := r.scan(sums, nch, offs, 0, 1, offs.Add(4*int(nch+1))); err != nil {
			return err
		}
	}
	return launch1D(r.c, k.scanDown, uint64(nch), msmSortBlock, in, m, offs, out)
}

// fillSteps writes the n+1 offsets 0, step, 2·step, …, n·step to dst on
// the device (the prefix sums of n words of step, in r's tcount and
// scanTmp, which hold nseg+1 words), not by a host copy: a copy from
// pageable memory waits for the stream first.
func (r *msmRun) fillSteps(dst driver.DevicePtr, n, step uint32) error {
	if n > r.p.nseg+1 {
		return fmt.Errorf("msm: %d offsets, room for %d", n, r.p.nseg+1)
	}
	if err := r.c.Memset32(r.b.tcount, step, int(n)); err != nil {
		return err
	}
	return r.scan(r.b.tcount, n, dst, 0, 1, r.b.scanTmp)
}
