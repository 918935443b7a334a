package gpu

import (
	"fmt"
	"math"
)

// Pippenger's bucket method on the GPU (kernels: cuda/kernels/msm_*.cu).
//
// Each scalar k_i (< r < 2^255) is written in nwin signed base-2^c digits
// d_{w,i} ∈ [−(2^(c−1)−1), 2^(c−1)], nwin·c ≥ 256. Then
//
//	Σ_i k_i·P_i = Σ_w 2^(c·w)·W_w,  W_w = Σ_{b=1}^{2^(c−1)} b·S_{w,b},
//	S_{w,b} = Σ_{i: |d_{w,i}| = b} sign(d_{w,i})·P_i.
//
// The device pipeline, all on the default stream:
//
//  1. msm_digits: scalars from Montgomery to standard form, digits, and a
//     count per (window, bucket) "segment";
//  2. exclusive prefix sums of the counts (msm_scan_up/down, recursive) and
//     each band's largest count (msmBands bands per window); msm_scatter
//     sorts (point, sign) entries by segment;
//  3. each segment is cut into tasks of ≤ T1 entries, which
//     msm_task_classes/msm_task_order list by length, longest first (so a
//     warp's lanes run tasks of about equal length); msm_*_accumulate sums
//     a task's affine points (mixed additions) into one XYZZ partial;
//  4. msm_*_reduce sums ≤ T2 partials per task until each segment holds at
//     most msmBucketPartials points, over the bands from the first to the
//     last with longer buckets: skewed scalars (many equal digits) stay
//     parallel, and random ones need it only where the short top digit
//     window lands;
//  5. msm_*_bucket_sum: K threads per window weight a run of nb/K buckets
//     each (running sums, adding a bucket's partials first), msm_*_reduce
//     folds the K results per window (tasks of tw);
//  6. the host combines the mwin window sums: Horner in 2^c with gnark.
//
// Bases may carry a table of multiples (msmTable, msm_table.cuh): copy k of
// base i is 2^(c·mwin·k)·P_i, and digit window w of scalar i adds to bucket
// window w mod mwin the point 2^(c·mwin·⌊w/mwin⌋)·P_i, so
//
//	Σ_i k_i·P_i = Σ_{w'<mwin} 2^(c·w')·W'_{w'}
//
// with the same bucket sums over the folded windows. Without a table mwin =
// nwin and the two forms agree.

// msmPlan fixes the window and work split of one MSM of n points.
type msmPlan struct {
	n      uint32
	c      uint32 // window bits
	nwin   uint32 // digit windows, nwin·c ≥ 256
	mwin   uint32 // bucket windows: digit window w adds to w mod mwin
	stride uint32 // points per copy of the bases table (n without a table)
	nb     uint32 // buckets per bucket window, 2^(c−1)
	nseg   uint32 // mwin·nb segments
	t1     uint32 // most entries one accumulate task sums
	t2     uint32 // most partials one reduce task sums
	tw     uint32 // most window partials one reduce task sums
	k      uint32 // bucket_sum threads per bucket window (≤ nb)
	band   uint32 // segments per band, the unit of the reduced range
}

// sortKey is what the sort of plan p depends on besides the scalars: two
// plans with equal keys sort the same scalars into the same entries, segment
// offsets and band maxima (the buffers holding them are placed before any
// curve-sized one, so the same arena serves both: msmPlan.layout).
func (p msmPlan) sortKey() [6]uint32 { return [6]uint32{p.n, p.c, p.nwin, p.mwin, p.stride, p.band} }

// msmTable is the shape of a bases set on the device: copies copies of
// stride points, copy k holding 2^(c·mwin·k)·P_i, for MSMs with c-bit
// windows folded into mwin bucket windows. copies = 1 is the bases alone,
// whose MSMs pick their window per size.
type msmTable struct{ c, mwin, copies, stride uint32 }

// msm bounds: n·nwin entries are indexed with 32 bits, and a sorted entry
// keeps the point index (k·stride + i) in 31 bits.
const (
	msmMaxPoints   = 1 << 28
	msmMaxIndex    = 1 << 31
	msmMaxWindow   = 24
	msmMaxSegments = 1 << 23 // caps bucket memory at 2^23 XYZZ points
	msmMaxCopies   = 16      // kMaxCopies in cuda/include/cuzk/msm_table.cuh
	msmMinWindow   = 2
	msmBucketRun   = 8  // fewest buckets one bucket_sum thread weights
	msmReduceTask  = 32 // t2
	msmWindowTask  = 8  // tw
	msmBands       = 64 // bands per bucket window
	msmCostBucket  = 4  // weight of a bucket against a point in the window choice
	// msmCostBucketG2Chunk is the bucket's weight for a G2 chunk over bases
	// without a table: every chunk repeats the reduce and the fold over all
	// its buckets, and G2's cost about 8 times G1's a bucket against 1.4
	// times a point (H100, 2^23 chunks at 24 GiB and 2^22 at 16 GiB:
	// docs/perf.md, "G2 chunks take smaller windows"), 28 by those runs.
	msmCostBucketG2Chunk = 24
)

// newMSMPlan picks c minimizing
//
//	nwin·n + msmCostBucket·mwin·2^(c−1)
//
// (mwin = nwin without a table): one mixed addition per (point, window),
// against about two full additions (plus the reduction) per bucket. Before
// accumulate tasks ran in length order, short buckets cost more per entry
// (a warp waited for its longest, Poisson-long lane) and the model carried a
// fitted n·2.5/√m term per window; with length order the H200 sweep
// (docs/perf-msm.md, run 4) measured the per-entry cost flat from m = 32 to
// 512 entries per bucket, and this plain model picks the measured best
// window at 2^20, 2^24 and 2^26 (or one within 1 %).
//
// wave is the number of bucket_sum threads the device runs at once
// (msmCurve.bucketWave).
func newMSMPlan(n int, wave uint32) (msmPlan, error) { return newMSMPlanWindow(n, 0, wave) }

// newMSMPlanWindow is newMSMPlan with the window bits forced to c (0: by
// the cost model).
func newMSMPlanWindow(n int, c, wave uint32) (msmPlan, error) {
	return newMSMPlanTable(n, msmTable{copies: 1, stride: uint32(max(0, n))}, c, wave)
}

// newMSMTable picks the table for bases of n points with at most maxCopies
// copies and c-bit windows (c = 0: the cost model's choice, see newMSMPlan;
// mwin = ⌈nwin/maxCopies⌉). With maxCopies 1 it is the bases alone.
func newMSMTable(n int, maxCopies, c uint32) (msmTable, error) {
	return newMSMTableWeighted(n, maxCopies, c, msmCostBucket)
}

// newMSMTableWeighted is newMSMTable with bucketCost, not msmCostBucket,
// as a bucket's weight against a point in the window choice.
func newMSMTableWeighted(n int, maxCopies, c uint32, bucketCost float64) (msmTable, error) {
	if n < 1 || n > msmMaxPoints {
		return msmTable{}, fmt.Errorf("msm plan: %d points, want 1 … %d", n, msmMaxPoints)
	}
	if maxCopies < 1 || maxCopies > msmMaxCopies {
		return msmTable{}, fmt.Errorf("msm plan: %d copies of the bases, want 1 … %d", maxCopies, msmMaxCopies)
	}
	if c != 0 && (c < msmMinWindow || c > msmMaxWindow) {
		return msmTable{}, fmt.Errorf("msm plan: window of %d bits, want %d … %d", c, msmMinWindow, msmMaxWindow)
	}
	most := min(maxCopies, uint32(msmMaxIndex/n)) // copies·n points indexed in 31 bits
	best, bestCost := msmTable{}, math.Inf(1)
	for w := uint32(msmMinWindow); w <= msmMaxWindow; w++ {
		if c != 0 && w != c {
			continue
		}
		nwin := ceilDiv32(256, w)
		t := msmTable{c: w, mwin: ceilDiv32(nwin, min(most, nwin)), stride: uint32(n)}
		t.copies = ceilDiv32(nwin, t.mwin)
		nb := uint64(1) << (w - 1)
		if uint64(t.mwin)*nb > msmMaxSegments {
			continue
		}
		cost := float64(nwin)*float64(n) + bucketCost*float64(uint64(t.mwin)*nb)
		if cost < bestCost {
			best, bestCost = t, cost
		}
	}
	if bestCost == math.Inf(1) { // only a forced window can miss
		return msmTable{}, fmt.Errorf("msm plan: a %d-bit window over %d copies needs more than %d buckets",
			c, most, msmMaxSegments)
	}
	return best, nil
}

// newMSMPlanTable plans an MSM of the first n points of bases shaped as t.
// Bases without copies take window bits c for n (0: the cost model's).
func newMSMPlanTable(n int, t msmTable, c, wave uint32) (msmPlan, error) {
	return newMSMPlanWeighted(n, t, c, wave, msmCostBucket)
}

// newMSMPlanWeighted is newMSMPlanTable with bucketCost as a bucket's
// weight in the window choice of bases without copies (a chunk's:
// msmCurve.chunkBucketCost).
func newMSMPlanWeighted(n int, t msmTable, c, wave uint32, bucketCost float64) (msmPlan, error) {
	if n < 1 || n > int(t.stride) {
		return msmPlan{}, fmt.Errorf("msm plan: %d points over bases of %d", n, t.stride)
	}
	if t.copies == 1 {
		var err error
		if t, err = newMSMTableWeighted(n, 1, c, bucketCost); err != nil {
			return msmPlan{}, err
		}
	}
	p := msmPlan{n: uint32(n), c: t.c, nwin: ceilDiv32(256, t.c), mwin: t.mwin, stride: t.stride, nb: 1 << (t.c - 1)}
	p.nseg = p.mwin * p.nb
	// Tasks of twice the mean segment length: random scalars give one task
	// per bucket (at 2^24 points, a Poisson(32) bucket passes 64 entries
	// with probability 2·10⁻⁷: about one of the 6.8 M) and so one partial,
	// which bucket_sum takes as it is; skewed scalars split. At 1.5× the
	// mean, 0.3 % of the buckets split in two, and bucket_sum, whose warps
	// then had a lane adding a second partial one step in ten, measured
	// 40 % slower (docs/perf-msm.md, "Reduce levels for long windows only").
	mean := uint32(p.entries() / uint64(p.nseg))
	p.t1 = max(8, 2*mean)
	p.t2 = msmReduceTask
	// The window stage's k partials per window are few and their reduce
	// levels run a few hundred to a few thousand threads: short tasks keep
	// each level's serial chain of additions short.
	p.tw = msmWindowTask
	// bucket_sum threads are one wave: a thread's time is about 2 additions
	// per bucket plus a scalar multiple by its first bucket (about 1.5·c
	// operations), so more threads add overhead, and fewer leave the device
	// part idle. On the H200 at c = 20 (docs/perf-msm.md, "One wave of bucket
	// sums") this cut G2's window stage by 16 % against the earlier fixed
	// 2^16 threads (1.6 waves) and two waves measured slower for both curves;
	// G1's stage, whose 2^16 threads were 1.05 waves, lost 5 % (0.8 ms),
	// which the proof's G2 gain outweighs. Runs of at least msmBucketRun
	// buckets.
	p.k = max(1, min(p.nb/msmBucketRun, wave/p.mwin))
	p.band = p.nb / min(p.nb, msmBands)
	return p, nil
}

// copies returns the copies of the bases table p reads (1 without a table).
func (p msmPlan) copies() uint32 { return ceilDiv32(p.nwin, p.mwin) }

// entries is the bound on sorted (point, window) entries: one per non-zero
// digit.
func (p msmPlan) entries() uint64 { return uint64(p.n) * uint64(p.nwin) }

// partials bounds the XYZZ points of the bucket stage: accumulate writes
// Σ ceil(len_s/t1) ≤ entries/t1 + nseg, later levels fewer. The window
// stage has buffers of its own (mwin·k points).
func (p msmPlan) partials() uint64 { return p.entries()/uint64(p.t1) + uint64(p.nseg) }

// bands is the number of bands of band segments each: msmBands per bucket
// window (fewer for small windows).
func (p msmPlan) bands() uint32 { return p.nseg / p.band }

// reducedRange returns the segments [s0, s1) that go through reduce levels
// before the buckets are read, from the first to the last band whose
// buckets may hold more than most partials after accumulate (maxima: each
// band's longest bucket; s0 = s1 = nseg if none), and the most partials a
// bucket there holds. most is msmBucketPartials where bucket_sum reads the
// buckets and msmFoldPartials where bucket_fold does (a chunked MSM's
// chunks). Random scalars leave long buckets only where the short top digit
// window lands: its buckets, the lowest of its bucket window.
func (p msmPlan) reducedRange(maxima []uint32, most uint32) (s0, s1, maxLen uint32) {
	first, last := p.bands(), uint32(0)
	for i := range p.bands() {
		if l := ceilDiv32(maxima[i], p.t1); l > most {
			first, last = min(first, i), i
			maxLen = max(maxLen, l)
		}
	}
	if maxLen == 0 {
		return p.nseg, p.nseg, 0
	}
	return first * p.band, (last + 1) * p.band, maxLen
}

// scanScratch bounds the temporary words of a prefix sum over m elements:
// each recursion level keeps ceil(m/64) sums and as many offsets plus one.
func scanScratch(m uint32) uint64 {
	var words uint64
	for m > 1 {
		m = (m + msmScanChunk - 1) / msmScanChunk
		words += 2*uint64(m) + 1
	}
	return words + 2
}

// msmScanChunk and msmTaskClasses match kScanChunk and kTaskClasses in
// cuda/include/cuzk/msm_sort.cuh, and msmBucketPartials and msmFoldPartials
// match kBucketPartials and kFoldPartials in msm_bucket.cuh: the most
// partials a bucket holds when bucket_sum, or bucket_fold, reads it.
// bucket_sum adds a bucket's partials inside its running sum, so it keeps
// them few; bucket_fold adds any number, one thread a segment, so a chunk's
// levels run only over its few long buckets (BenchmarkReduceRangePoRep:
// in a C2 witness's chunks the range falls from 95–99 % of the segments to
// 0.1 %).
const (
	msmBucketPartials = 2
	msmFoldPartials   = 8
	msmScanChunk      = 64
	msmTaskClasses    = 64
)

func ceilDiv32(a, b uint32) uint32 { return (a + b - 1) / b }
