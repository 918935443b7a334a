// msm_bucket.cuh: the curve stages of cuzk's Pippenger MSM, generic over the
// coordinate field (Fp for G1, Fp2 for G2): summing sorted points into
// bucket partials, reducing partials per segment, and weighting buckets per
// window. Each function is the body of one kernel thread.
#ifndef CUZK_MSM_BUCKET_CUH
#define CUZK_MSM_BUCKET_CUH

#include "cuzk/ec_xyzz.cuh"
#include "cuzk/msm_sort.cuh"

namespace cuzk {
namespace ec {
namespace msm {

// kCurveBlock is the block size of the curve kernels (prover/gpu:
// msmCurveBlock); accumulate sizes its shared-memory slots by it.
constexpr uint32_t kCurveBlock = 128;

// accumulate: thread j runs task t = order[j] (tasks by length, see
// task_order), summing the affine points its range of sorted entries names
// (negated where the entry's sign bit is set) into out[t]. While the current
// point is added, the next one is fetched and the entry after it is loaded,
// so the two dependent global loads per point overlap the arithmetic. The
// next point waits either in registers (staged = false) or, with staged, in
// the thread's other shared-memory slot, copied there by copy_async without
// passing through registers (two slots, so a copy never writes the slot just
// read). G2 stages: its kernel is at the 255-register limit, and holding the
// next point in shared memory cut its spills from 564 to 224 bytes and its
// accumulate time by 17 % (docs/perf-msm.md, "Next point in shared memory");
// G1 measured 1 % slower staged, so it keeps registers.
template <class F, bool staged>
CUZK_HD void accumulate(const Affine<F>* __restrict__ bases, const uint32_t* __restrict__ sorted,
                        const uint32_t* __restrict__ seg_off, const uint32_t* __restrict__ task_off,
                        const uint32_t* __restrict__ order, uint32_t nseg, uint32_t T,
                        XYZZ<F>* __restrict__ out) {
  CUZK_SHARED Affine<F> slots[staged ? 2 : 1][staged ? kCurveBlock : 1];
  const uint32_t j = thread_id();
  if (j >= task_off[nseg]) return;
  const uint32_t t = order[j];
  Task task;
  task_range(seg_off, task_off, nseg, T, t, task);
  uint32_t entry = sorted[task.begin];
  uint32_t after = task.begin + 1 < task.end ? sorted[task.begin + 1] : 0;
  Affine<F> next;
  if (staged) copy_async(&slots[0][threadIdx.x], &bases[entry & 0x7fffffffu]);
  else next = load16(&bases[entry & 0x7fffffffu]);
  XYZZ<F> acc = XYZZ<F>::inf();
  for (uint32_t e = task.begin; e < task.end; e++) {
    const uint32_t cur = staged ? (e - task.begin) & 1 : 0;
    Affine<F> p;
    if (staged) {
      wait_copies();
      p = slots[cur][threadIdx.x];
    } else {
      p = next;
    }
    const bool neg = entry >> 31;
    if (e + 1 < task.end) {
      entry = after;
      if (staged) copy_async(&slots[cur ^ 1][threadIdx.x], &bases[entry & 0x7fffffffu]);
      else next = load16(&bases[entry & 0x7fffffffu]);
      if (e + 2 < task.end) after = sorted[e + 2];
    }
    if (neg) p.y = -p.y;
    acc = madd(acc, p);
  }
  store16(&out[t], acc);
}

// add_loop is the point addition of the reduce and bucket-sum loops:
// add_inline where inlined is set, else the called add. G1 inlines: a call
// passes both 4-coordinate operands and the result through the stack, and
// inlining cut its window stage by 20 % (docs/perf-msm.md, "Window additions
// inlined"). G2 calls: inlined, its Fp2 temporaries spill, and its window
// stage measured 48 % slower.
template <bool inlined, class F>
CUZK_HD XYZZ<F> add_loop(const XYZZ<F>& p, const XYZZ<F>& q) {
  if (inlined) return add_inline(p, q);
  return add(p, q);
}

// reduce: task t sums its range of XYZZ partials into out[t]. The tasks
// are numbered from task_off[0], not always 0: a reduce level that writes
// into the buffer its first level read (prover/gpu, msmRun.levels) gets
// offsets that start where that buffer's free part does, read on the device,
// so the host launches it without reading that offset back. Threads past
// the last task return, so the grid may be a bound on the task count.
template <class F, bool inlined>
CUZK_HD void reduce(const XYZZ<F>* __restrict__ in, const uint32_t* __restrict__ seg_off,
                    const uint32_t* __restrict__ task_off, uint32_t nseg, uint32_t T,
                    XYZZ<F>* __restrict__ out) {
  Task task;
  const uint32_t t = task_off[0] + thread_id();
  if (!task_range(seg_off, task_off, nseg, T, t, task)) return;
  XYZZ<F> acc = load16(&in[task.begin]);
  for (uint32_t e = task.begin + 1; e < task.end; e++) acc = add_loop<inlined>(acc, load16(&in[e]));
  store16(&out[t], acc);
}

// kBucketPartials is the most partials a bucket may hold when bucket_sum
// runs (prover/gpu: msmBucketPartials). Random scalars leave one or two per
// bucket after accumulate (a bucket longer than the task length T1 splits),
// which bucket_sum adds itself; only a range of segments with longer
// buckets (where the short top digit window lands, or anywhere for skewed
// scalars) goes through reduce levels first.
constexpr uint32_t kBucketPartials = 2;

// kFoldPartials is the most partials a bucket may hold when bucket_fold
// runs (prover/gpu: msmFoldPartials). bucket_fold adds whatever a segment
// holds, one thread a segment, so a chunked MSM's reduce levels need run
// only where a bucket holds more: in a C2 witness's chunks (about 90 % of
// the scalars 0 or 1) that is the bits' few long buckets, where a limit of
// two would send nearly every segment through a level for buckets of three
// to five partials.
constexpr uint32_t kFoldPartials = 8;

// bucket_sum: thread j = w·K + k (K ≤ nb) weights the buckets [lo, hi) of
// window w, lo = ⌊k·nb/K⌋ and hi = ⌊(k+1)·nb/K⌋, where bucket b (digit b + 1)
// holds S_b, the sum of the points of segment s = w·nb + b (at most
// kBucketPartials points, none for an empty bucket). Segments in [s0, s1),
// which reduce levels summed into a buffer of their own, read hi_pts at
// hi_off[s − s0] … hi_off[s − s0 + 1]; the others lo_pts at lo_off[s] …
// lo_off[s + 1]. It writes Σ (b + 1)·S_b = Σ (b − lo + 1)·S_b + lo·Σ S_b, the
// first sum by the running sum from the top bucket down, the second by a
// small scalar multiple.
template <class F, bool inlined>
CUZK_HD void bucket_sum(const XYZZ<F>* __restrict__ lo_pts, const uint32_t* __restrict__ lo_off,
                        const XYZZ<F>* __restrict__ hi_pts, const uint32_t* __restrict__ hi_off, uint32_t s0,
                        uint32_t s1, uint32_t nwin, uint32_t nb, uint32_t K, XYZZ<F>* __restrict__ out) {
  const uint32_t j = thread_id();
  if (j >= nwin * K) return;
  const uint32_t w = j / K, k = j - w * K;
  const uint32_t lo = (uint32_t)((uint64_t)k * nb / K), hi = (uint32_t)((uint64_t)(k + 1) * nb / K);
  XYZZ<F> run = XYZZ<F>::inf(), acc = XYZZ<F>::inf();
  for (uint32_t b = hi; b-- > lo;) {
    const uint32_t s = w * nb + b;
    const bool reduced = s - s0 < s1 - s0;
    const XYZZ<F>* __restrict__ pts = reduced ? hi_pts : lo_pts;
    const uint32_t* __restrict__ off = reduced ? hi_off + (s - s0) : lo_off + s;
    const uint32_t end = off[1];
    for (uint32_t e = off[0]; e < end; e++) run = add_loop<inlined>(run, load16(&pts[e]));
    acc = add_loop<inlined>(acc, run);
  }
  store16(&out[j], add(acc, mul_small(run, lo)));
}

// bucket_fold: thread s adds the points of segment s, read as bucket_sum
// reads them (at most kFoldPartials, none for an empty bucket), to
// carry[s]. A chunked MSM (prover/gpu, msm_chunk.go) runs its bucket stages
// chunk after chunk into one carry, zeroed (the point at infinity) before
// the first; after the last, carry holds S_b for every segment, and
// bucket_sum weights it once, with lo_off = 0, 1, …, nseg.
template <class F, bool inlined>
CUZK_HD void bucket_fold(const XYZZ<F>* __restrict__ lo_pts, const uint32_t* __restrict__ lo_off,
                         const XYZZ<F>* __restrict__ hi_pts, const uint32_t* __restrict__ hi_off, uint32_t s0,
                         uint32_t s1, uint32_t nseg, XYZZ<F>* __restrict__ carry) {
  const uint32_t s = thread_id();
  if (s >= nseg) return;
  const bool reduced = s - s0 < s1 - s0;
  const XYZZ<F>* __restrict__ pts = reduced ? hi_pts : lo_pts;
  const uint32_t* __restrict__ off = reduced ? hi_off + (s - s0) : lo_off + s;
  const uint32_t begin = off[0], end = off[1];
  if (begin == end) return;
  XYZZ<F> acc = load16(&carry[s]);
  for (uint32_t e = begin; e < end; e++) acc = add_loop<inlined>(acc, load16(&pts[e]));
  store16(&carry[s], acc);
}

}  // namespace msm
}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_MSM_BUCKET_CUH
