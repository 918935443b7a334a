// msm_sort.cuh: the curve-independent stages of cuzk's Pippenger MSM:
// scalars to signed digits, a counting sort of (bucket, point) pairs, and the
// prefix sums and work splitting around it. Most functions here are the body
// of one kernel thread. The block-wise stages (binning, task classes and
// order) are written as phases: phase p of every thread of a block runs
// before phase p+1 of any (run_phases in ec_arch.cuh on the device, the
// emulator's phased launch on the host).
//
// Terms: a window w has nb = 2^(c−1) buckets; segment s = w·nb + (|d| − 1)
// collects the points whose digit in window w is d. Segments are laid out
// one after another in one array of entries (point index | sign << 31).
#ifndef CUZK_MSM_SORT_CUH
#define CUZK_MSM_SORT_CUH

#include "cuzk/msm_scalar.cuh"

namespace cuzk {
namespace ec {
namespace msm {

// kScanChunk is how many consecutive elements one scan thread owns.
constexpr uint32_t kScanChunk = 64;

CUZK_HD uint32_t thread_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// digits: thread i converts scalar i (gnark fr.Element, Montgomery form) to
// standard form and writes its nwin encoded digits to digits[w·n + i],
// counting each non-zero digit in counts[segment].
CUZK_HD void digits(const Fr* __restrict__ scalars, uint32_t n, uint32_t c, uint32_t nwin,
                    uint32_t* __restrict__ digits_out, uint32_t* __restrict__ counts) {
  const uint32_t i = thread_id();
  if (i >= n) return;
  const Fr s = from_mont(scalars[i]);
  uint32_t limbs[8];
  for (int j = 0; j < 8; j++) limbs[j] = s.v[j];
  const uint32_t nb = 1u << (c - 1);
  uint32_t carry = 0;
  for (uint32_t w = 0; w < nwin; w++) {
    const uint32_t d = encode_digit(window_bits(limbs, w * c, c), carry, c);
    digits_out[(size_t)w * n + i] = d;
    if (d != 0) atomicAdd(&counts[w * nb + (d >> 1) - 1], 1u);
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

// Entries are sorted into segments in two passes per window, each with its
// counting in shared memory, so global memory sees no contended atomics
// and stores that land in runs:
//  - bin: a block takes kBinTile digits of one window, counts them by bin
//    (the top bits of the bucket, kBins bins), claims one run per bin in
//    the window's binned array with one global atomic, orders its entries
//    by bin in shared memory and writes them, with their segments, run by
//    run;
//  - place: a block takes one bin, starts a shared cursor per segment of
//    the bin at the segment's offset, and moves each entry to the next free
//    slot of its segment; the bin's slots are one range of the sorted array.
constexpr uint32_t kSortBlock = 256;   // threads of the block-wise kernels but place
constexpr uint32_t kPlaceBlock = 1024; // threads of place: a window's kBins blocks fill the device
constexpr uint32_t kBinPer = 16;       // digits one bin thread reads
constexpr uint32_t kBinTile = kSortBlock * kBinPer;
constexpr uint32_t kBinBits = 8;
constexpr uint32_t kBins = 1u << kBinBits;
constexpr uint32_t kScanSteps = kBinBits;  // steps of the block's prefix sum over kBins counts
constexpr uint32_t kBinPhases = 4 + kScanSteps;
constexpr uint32_t kPlacePhases = 2;
static_assert(kBins == kSortBlock, "one bin thread per bin");

// BinEntry is a binned entry: the sorted entry (point | sign << 31) and the
// segment it belongs to.
struct alignas(8) BinEntry {
  uint32_t entry, seg;
};

struct BinShared {
  uint32_t count[kBins];    // the block's entries per bin
  uint32_t base[kBins];     // where the block's run of each bin starts in binned_w
  uint32_t scan[2][kBins];  // inclusive prefix sums of count, by doubling steps
  BinEntry staged[kBinTile];  // the block's entries, bin by bin
};

struct BinThread {
  uint32_t digit[kBinPer], rank[kBinPer];
};

// bin_shift maps a bucket to its bin (bucket >> shift): at most kBins bins
// of a window's nb = 2^(c−1) buckets, so a bin holds at most 2^(c−1−kBinBits)
// buckets (2048 at the largest window, c = 20).
CUZK_HD uint32_t bin_shift(uint32_t c) { return c - 1 > kBinBits ? c - 1 - kBinBits : 0; }

// bin_phase runs phase ph of msm_bin for window w: digits_w are the
// window's n digits, fill_w its kBins run counters (zeroed by the caller),
// binned_w the window's binned entries, bin after bin in segment order.
CUZK_HD void bin_phase(uint32_t ph, BinShared& sh, BinThread& th, const uint32_t* __restrict__ digits_w,
                       uint32_t n, uint32_t c, uint32_t w, const uint32_t* __restrict__ seg_off,
                       uint32_t* __restrict__ fill_w, BinEntry* __restrict__ binned_w) {
  const uint32_t shift = bin_shift(c), s0 = w << (c - 1), t = threadIdx.x;
  const uint32_t first = blockIdx.x * kBinTile + t;
  const uint32_t* incl = sh.scan[(kScanSteps - 1) & 1];
  if (ph == 0) {
    sh.count[t] = 0;
  } else if (ph == 1) {
    for (uint32_t k = 0; k < kBinPer; k++) {
      const uint32_t i = first + k * kSortBlock;
      const uint32_t d = i < n ? digits_w[i] : 0;
      th.digit[k] = d;
      if (d != 0) th.rank[k] = atomicAdd(&sh.count[((d >> 1) - 1) >> shift], 1u);
    }
  } else if (ph < 2 + kScanSteps) {
    // Step j of the prefix sum (Hillis–Steele): add the value 2^j bins down.
    const uint32_t j = ph - 2, d = 1u << j;
    const uint32_t* src = j == 0 ? sh.count : sh.scan[(j - 1) & 1];
    sh.scan[j & 1][t] = src[t] + (t >= d ? src[t - d] : 0);
    if (j == 0 && sh.count[t] != 0)
      sh.base[t] = seg_off[s0 + (t << shift)] - seg_off[s0] + atomicAdd(&fill_w[t], sh.count[t]);
  } else if (ph == 2 + kScanSteps) {
    for (uint32_t k = 0; k < kBinPer; k++) {
      const uint32_t d = th.digit[k];
      if (d == 0) continue;
      const uint32_t bucket = (d >> 1) - 1, b = bucket >> shift;
      const BinEntry e = {(first + k * kSortBlock) | ((d & 1u) << 31), s0 + bucket};
      sh.staged[incl[b] - sh.count[b] + th.rank[k]] = e;
    }
  } else {
    // Consecutive staged entries of one bin go to consecutive slots.
    for (uint32_t p = t; p < incl[kBins - 1]; p += kSortBlock) {
      const BinEntry e = sh.staged[p];
      const uint32_t b = (e.seg - s0) >> shift;
      binned_w[sh.base[b] + p - (incl[b] - sh.count[b])] = e;
    }
  }
}

struct PlaceShared {
  uint32_t cursor[1u << (20 - 1 - kBinBits)];  // one per segment of the bin (c ≤ 20)
};

// place_phase runs phase ph of msm_place: block b sorts bin b of window w
// (its entries are binned_w[off(b) … off(b+1)) with off(b) the window-relative
// offset of the bin's first segment) into sorted.
CUZK_HD void place_phase(uint32_t ph, PlaceShared& sh, const BinEntry* __restrict__ binned_w, uint32_t c,
                         uint32_t w, const uint32_t* __restrict__ seg_off, uint32_t* __restrict__ sorted) {
  const uint32_t shift = bin_shift(c), s0 = w << (c - 1), b = blockIdx.x;
  const uint32_t first = s0 + (b << shift), per = 1u << shift;
  if (ph == 0) {
    for (uint32_t j = threadIdx.x; j < per; j += blockDim.x) sh.cursor[j] = seg_off[first + j];
    return;
  }
  const uint32_t begin = seg_off[first] - seg_off[s0], end = seg_off[first + per] - seg_off[s0];
  for (uint32_t p = begin + threadIdx.x; p < end; p += blockDim.x) {
    const BinEntry e = binned_w[p];
    sorted[atomicAdd(&sh.cursor[e.seg - first], 1u)] = e.entry;
  }
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
// the ntask tasks class by class. Order inside a class is arbitrary: each
// task writes its own partial, wherever it runs.
CUZK_HD void order_phase(uint32_t ph, ClassShared& sh, ClassThread& th, const uint32_t* __restrict__ cls,
                         uint32_t ntask, uint32_t* __restrict__ cursor, uint32_t* __restrict__ order) {
  const uint32_t t = thread_id();
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
