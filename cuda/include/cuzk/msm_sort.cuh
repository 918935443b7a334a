// msm_sort.cuh: the curve-independent stages of cuzk's Pippenger MSM:
// scalars to signed digits, a counting sort of (bucket, point) pairs, and the
// prefix sums and work splitting around it. Most functions here are the body
// of one kernel thread. The block-wise stages (task classes and order) are
// written as phases: phase p of every thread of a block runs
// before phase p+1 of any (run_phases in ec_arch.cuh on the device, the
// emulator's phased launch on the host).
//
// Terms: each scalar has nwin digit windows; digit window w of copy
// k = w / mwin lands in bucket window w' = w mod mwin (mwin = nwin when the
// bases have no table of multiples, so k = 0 and w' = w; msm_table.cuh). A
// bucket window has nb = 2^(c−1) buckets; segment s = w'·nb + (|d| − 1)
// collects the points whose digit is d in a digit window of bucket window
// w'. Segments are laid out one after another in one array of entries
// (point index k·stride + i | sign << 31, stride the table's points per
// copy).
#ifndef CUZK_MSM_SORT_CUH
#define CUZK_MSM_SORT_CUH

#include "cuzk/msm_scalar.cuh"

namespace cuzk {
namespace ec {
namespace msm {

// kScanChunk is how many consecutive elements one scan thread owns.
constexpr uint32_t kScanChunk = 64;

CUZK_HD uint32_t thread_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// bump adds 1 to counters[seg] for the calling thread and returns the value
// before its own increment. A witness of bit-valued wires puts millions of
// digits in one segment, whose atomics would queue on one address. On the
// device, in each of two rounds the active lanes of a warp whose segment is
// the first remaining lane's share one atomic (that lane adds the group's
// size, each lane takes its rank); lanes left after two rounds bump alone.
// Two rounds catch the hot segment also when the first lane holds another
// digit; random digits almost never share a segment within a warp, and pay
// two shuffles and ballots, not a __match_any_sync per digit. On the host
// every thread bumps alone.
CUZK_HD uint32_t bump(uint32_t* __restrict__ counters, uint32_t seg) {
#if defined(__CUDA_ARCH__)
  const uint32_t lane = threadIdx.x & 31;
  uint32_t active = __activemask();
  for (int round = 0; round < 2; round++) {
    const uint32_t leader = __ffs(active) - 1;
    const uint32_t lead_seg = __shfl_sync(active, seg, leader);
    const uint32_t group = __ballot_sync(active, seg == lead_seg);
    if (seg == lead_seg) {
      uint32_t base = 0;
      if (lane == leader) base = atomicAdd(&counters[seg], __popc(group));
      base = __shfl_sync(group, base, leader);
      return base + __popc(group & ((1u << lane) - 1));
    }
    active &= ~group;
  }
#endif
  return atomicAdd(&counters[seg], 1u);
}

// digits: thread i converts scalar i (gnark fr.Element, Montgomery form) to
// standard form and writes its nwin encoded digits to digits[w·n + i],
// counting each non-zero digit in counts[segment].
CUZK_HD void digits(const Fr* __restrict__ scalars, uint32_t n, uint32_t c, uint32_t nwin, uint32_t mwin,
                    uint32_t* __restrict__ digits_out, uint32_t* __restrict__ counts) {
  const uint32_t i = thread_id();
  if (i >= n) return;
  const Fr s = from_mont(scalars[i]);
  uint32_t limbs[8];
  for (int j = 0; j < 8; j++) limbs[j] = s.v[j];
  const uint32_t nb = 1u << (c - 1);
  uint32_t carry = 0;
  for (uint32_t w = 0, wb = 0; w < nwin; w++, wb = wb + 1 == mwin ? 0 : wb + 1) {
    const uint32_t d = encode_digit(window_bits(limbs, w * c, c), carry, c);
    digits_out[(size_t)w * n + i] = d;
    if (d != 0) bump(counts, wb * nb + (d >> 1) - 1);
  }
}

// scan_up: thread j writes the sum of in[64j, 64j+64) to sums[j] and, when
// max_out is set, folds the largest element of each run of span elements
// (span ≥ 1: a window's segments) into max_out[run].
CUZK_HD void scan_up(const uint32_t* __restrict__ in, uint32_t m, uint32_t* __restrict__ sums,
                     uint32_t* __restrict__ max_out, uint32_t span) {
  const uint32_t j = thread_id();
  const uint32_t begin = j * kScanChunk;
  if (begin >= m) return;
  const uint32_t end = begin + kScanChunk < m ? begin + kScanChunk : m;
  uint32_t sum = 0, mx = 0, run = begin / span, run_end = (run + 1) * span;
  for (uint32_t k = begin; k < end; k++) {
    if (k == run_end) {
      if (max_out) atomicMax(&max_out[run], mx);
      mx = 0, run++, run_end += span;
    }
    const uint32_t v = in[k];
    sum += v;
    mx = v > mx ? v : mx;
  }
  sums[j] = sum;
  if (max_out) atomicMax(&max_out[run], mx);
}

// scan_down: thread j writes the exclusive prefix sums of its chunk, starting
// from offs[j] (0 when offs is null), to out; the last chunk's thread also
// writes the grand total to out[m].
CUZK_HD void scan_down(const uint32_t* __restrict__ in, uint32_t m, const uint32_t* __restrict__ offs,
                       uint32_t* __restrict__ out) {
  const uint32_t j = thread_id();
  const uint32_t begin = j * kScanChunk;
  if (begin >= m) return;
  const uint32_t end = begin + kScanChunk < m ? begin + kScanChunk : m;
  uint32_t acc = offs ? offs[j] : 0;
  for (uint32_t k = begin; k < end; k++) {
    out[k] = acc;
    acc += in[k];
  }
  if (end == m) out[m] = acc;
}

// kSortBlock is the block size of the block-wise kernels (task classes
// and order; prover/gpu: msmSortBlock).
constexpr uint32_t kSortBlock = 256;

// scatter: for entry e = w·n + i with a non-zero digit, claims the next free
// slot of its segment (cursor starts as the segments' offsets) and stores
// (k·stride + i) | sign << 31 there, k = w / mwin. Order inside a segment is
// arbitrary: buckets only sum.
CUZK_HD void scatter(const uint32_t* __restrict__ digits_in, uint32_t n, uint32_t nwin, uint32_t mwin,
                     uint32_t stride, uint32_t c, uint32_t* __restrict__ cursor, uint32_t* __restrict__ sorted) {
  const uint32_t e = thread_id();
  if (e >= n * nwin) return;
  const uint32_t d = digits_in[e];
  if (d == 0) return;
  const uint32_t w = e / n, i = e - w * n, k = w / mwin;
  const uint32_t seg = ((w - k * mwin) << (c - 1)) + (d >> 1) - 1;
  const uint32_t pos = bump(cursor, seg);
  sorted[pos] = (k * stride + i) | ((d & 1u) << 31);
}

// task_counts: segment s of length len is split into ceil(len/T) tasks of at
// most T consecutive elements each.
CUZK_HD void task_counts(const uint32_t* __restrict__ seg_off, uint32_t nseg, uint32_t T,
                         uint32_t* __restrict__ tasks) {
  const uint32_t s = thread_id();
  if (s >= nseg) return;
  tasks[s] = (seg_off[s + 1] - seg_off[s] + T - 1) / T;
}

// find_segment returns the largest s ≤ nseg with off[s] ≤ t, given
// off[0] ≤ t < off[nseg]: the non-empty segment that holds element t.
CUZK_HD uint32_t find_segment(const uint32_t* __restrict__ off, uint32_t nseg, uint32_t t) {
  uint32_t lo = 0, hi = nseg;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) >> 1;
    if (off[mid] <= t) lo = mid; else hi = mid;
  }
  return lo;
}

// Task is the range of elements [begin, end) that task t sums.
struct Task {
  uint32_t begin, end;
};

// task_range maps task t to its element range; it returns false past the
// last task.
CUZK_HD bool task_range(const uint32_t* __restrict__ seg_off, const uint32_t* __restrict__ task_off,
                        uint32_t nseg, uint32_t T, uint32_t t, Task& out) {
  if (t >= task_off[nseg]) return false;
  const uint32_t s = find_segment(task_off, nseg, t);
  out.begin = seg_off[s] + (t - task_off[s]) * T;
  const uint32_t seg_end = seg_off[s + 1];
  out.end = out.begin + T < seg_end ? out.begin + T : seg_end;
  return true;
}

// Accumulate tasks run in order of length, longest first, so the lanes of
// a warp walk tasks of about the same length: in segment order, a warp's
// time is that of its longest lane, and bucket lengths of random scalars
// spread like a Poisson count (a mean of 32 entries gives warps about 1.4×
// the mean). kTaskClasses length classes, each T/kTaskClasses wide, bound
// the spread inside a warp without a full sort.
constexpr uint32_t kTaskClasses = 64;

// task_class returns the class of a task of len elements, 1 ≤ len ≤ T:
// class 0 holds the longest tasks.
CUZK_HD uint32_t task_class(uint32_t len, uint32_t T) {
  return (uint32_t)((uint64_t)(T - len) * kTaskClasses / T);
}

// ClassShared counts one block's tasks per length class, so each class
// costs one global atomic per block instead of one per task.
struct ClassShared {
  uint32_t count[kTaskClasses];
  uint32_t base[kTaskClasses];
};

// ClassThread is a task_order thread's task: its class and rank in the
// block's share of that class.
struct ClassThread {
  uint32_t cls, rank;
};

constexpr uint32_t kClassPhases = 3;
constexpr uint32_t kOrderPhases = 4;
static_assert(kTaskClasses <= kSortBlock, "one thread per class");

// class_phase runs phase ph of msm_task_classes: thread t writes the class
// of task t to cls[t], and the block adds its counts to hist (kTaskClasses
// words, zeroed by the caller).
CUZK_HD void class_phase(uint32_t ph, ClassShared& sh, const uint32_t* __restrict__ seg_off,
                         const uint32_t* __restrict__ task_off, uint32_t nseg, uint32_t T,
                         uint32_t* __restrict__ cls, uint32_t* __restrict__ hist) {
  switch (ph) {
    case 0:
      if (threadIdx.x < kTaskClasses) sh.count[threadIdx.x] = 0;
      return;
    case 1: {
      Task task;
      const uint32_t t = thread_id();
      if (!task_range(seg_off, task_off, nseg, T, t, task)) return;
      const uint32_t k = task_class(task.end - task.begin, T);
      cls[t] = k;
      atomicAdd(&sh.count[k], 1u);
      return;
    }
    default:
      if (threadIdx.x < kTaskClasses && sh.count[threadIdx.x] != 0)
        atomicAdd(&hist[threadIdx.x], sh.count[threadIdx.x]);
  }
}

// order_phase runs phase ph of msm_task_order: task t goes to the next free
// slot of its class (cursor starts as the classes' offsets), so order lists
// the *ntask tasks class by class. Order inside a class is arbitrary: each
// task writes its own partial, wherever it runs. The count is read on the
// device (the task offsets' last word), so the grid is a bound on it.
CUZK_HD void order_phase(uint32_t ph, ClassShared& sh, ClassThread& th, const uint32_t* __restrict__ cls,
                         const uint32_t* __restrict__ ntask_p, uint32_t* __restrict__ cursor,
                         uint32_t* __restrict__ order) {
  const uint32_t t = thread_id(), ntask = *ntask_p;
  switch (ph) {
    case 0:
      if (threadIdx.x < kTaskClasses) sh.count[threadIdx.x] = 0;
      return;
    case 1:
      if (t >= ntask) return;
      th.cls = cls[t];
      th.rank = atomicAdd(&sh.count[th.cls], 1u);
      return;
    case 2:
      if (threadIdx.x < kTaskClasses && sh.count[threadIdx.x] != 0)
        sh.base[threadIdx.x] = atomicAdd(&cursor[threadIdx.x], sh.count[threadIdx.x]);
      return;
    default:
      if (t < ntask) order[sh.base[th.cls] + th.rank] = t;
  }
}

}  // namespace msm
}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_MSM_SORT_CUH
