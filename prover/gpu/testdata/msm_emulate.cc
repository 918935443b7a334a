// msm_emulate.cc runs cuzk's MSM kernels (cuda/kernels/msm_*.cu) on the CPU,
// thread after thread (block-wise kernels phase by phase), in the launch
// order of prover/gpu's msmRun (and msmState.bases for a table of
// multiples), and writes the mwin window sums.
// TestMSMKernelsOnHost compiles it with a host C++ compiler: the kernels'
// arithmetic, digit, sort and reduction code then runs exactly as written
// (PTX carry instructions emulated, see ec_arch.cuh) on machines without a
// GPU.
//
// Usage: msm_emulate IN OUT. IN: twelve little-endian uint32 (curve 1|2, n,
// c, nwin, mwin, stride, copies, t1, t2, tw, k, chunk), n scalars (gnark
// fr.Element), stride affine points (gnark layout; the table's copy 0).
// OUT: mwin XYZZ points. With chunk ≥ 1 and < n the scalars run in chunks of
// chunk points over the bases in place, their bucket sums carried from
// chunk to chunk (bucket_fold) and weighted once, as msmChunked does; t1 is
// then each chunk's own (msmPlan: twice its mean bucket length). With curve 0 it runs the Fp self-test kernel instead: IN holds n
// (the second word) and n pairs a, b of gnark fp.Elements after the header,
// OUT the kernel's 6n results; with curve 3 the Fp2 self-test kernel, n
// pairs of gnark E2s in, 5n out.
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "msm_g1.cu"
#include "msm_g2.cu"
#include "msm_sort.cu"
#include "msm_table.cu"

typedef std::vector<uint32_t> Words;

template <class Fn>
static void launch(uint64_t threads, Fn fn) {
  blockDim.x = 128;
  for (uint64_t t = 0; t < threads; t++) {
    blockIdx.x = (unsigned)(t / 128);
    threadIdx.x = (unsigned)(t % 128);
    fn();
  }
}

// launch_phased runs a block-wise kernel body (phases separated by block
// barriers on the device) over blocks of block threads: each phase for
// every thread of the block before the next phase. Shared and per-thread
// state start as garbage, as on the device.
template <class Shared, class Thread, class Fn>
static void launch_phased(uint64_t blocks, uint32_t block, uint32_t phases, Fn fn) {
  blockDim.x = block;
  std::vector<Thread> th(block);
  static Shared sh;
  for (uint64_t b = 0; b < blocks; b++) {
    blockIdx.x = (unsigned)b;
    memset(&sh, 0xa5, sizeof sh);
    memset(th.data(), 0x5a, th.size() * sizeof(Thread));
    for (uint32_t p = 0; p < phases; p++)
      for (uint32_t t = 0; t < block; t++) {
        threadIdx.x = t;
        fn(p, sh, th[t]);
      }
  }
}

struct NoThread {};

static uint32_t ceil_div(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

// scan mirrors msmRun.scan.
static void scan(const uint32_t* in, uint32_t m, uint32_t* out, uint32_t* max_out, uint32_t span) {
  const uint32_t nch = ceil_div(m, 64);
  Words sums(nch), offs(nch + 1);
  launch(nch, [&] { msm_scan_up(in, m, sums.data(), max_out, span); });
  if (nch > 1) scan(sums.data(), nch, offs.data(), nullptr, 1);
  launch(nch, [&] { msm_scan_down(in, m, nch > 1 ? offs.data() : nullptr, out); });
}

template <class F>
struct Curve {
  void (*table)(Affine<F>*, uint32_t, uint32_t, uint32_t);
  void (*accumulate)(const Affine<F>*, const uint32_t*, const uint32_t*, const uint32_t*, const uint32_t*,
                     uint32_t, uint32_t, XYZZ<F>*);
  void (*reduce)(const XYZZ<F>*, const uint32_t*, const uint32_t*, uint32_t, uint32_t, XYZZ<F>*);
  void (*bucket_sum)(const XYZZ<F>*, const uint32_t*, const XYZZ<F>*, const uint32_t*, uint32_t, uint32_t,
                     uint32_t, uint32_t, uint32_t, XYZZ<F>*);
  void (*bucket_fold)(const XYZZ<F>*, const uint32_t*, const XYZZ<F>*, const uint32_t*, uint32_t, uint32_t,
                      uint32_t, XYZZ<F>*);
};

// tasks mirrors msmRun.tasks: the task offsets of nseg segments at off
// into task_off, numbered from *from where from is not null (task_off then
// holds one word more, and the offsets start at its second). It returns
// where the offsets are; their count stays in their last word.
static const uint32_t* tasks(const uint32_t* off, uint32_t nseg, uint32_t t, Words& task_off,
                             const uint32_t* from) {
  Words counts(nseg + 1);
  const uint32_t lead = from ? 1 : 0;
  if (from) counts[0] = *from;
  task_off.assign(nseg + 1 + lead, 0);
  launch(nseg, [&] { msm_task_counts(off, nseg, t, counts.data() + lead); });
  scan(counts.data(), nseg + lead, task_off.data(), nullptr, 1);
  return task_off.data() + lead;
}

// fill_steps mirrors msmRun.fillSteps: 0, step, …, n·step, as prefix sums
// of n words of step.
static Words fill_steps(uint32_t n, uint32_t step) {
  Words words(n, step), out(n + 1);
  scan(words.data(), n, out.data(), nullptr, 1);
  return out;
}

// task_bound mirrors taskBound (msm_run.go).
static uint64_t task_bound(uint64_t pts, uint32_t nseg, uint32_t max_len, uint32_t t) {
  const uint64_t a = pts / t + nseg, b = (uint64_t)nseg * ceil_div(max_len, t);
  return a < b ? a : b;
}

// task_order mirrors msmRun.orderTasks: the tasks at task_off, by length
// class, its kernels over bound threads (the count read where the device
// reads it).
static Words task_order(const Words& seg_off, const Words& task_off, uint32_t nseg, uint32_t t, uint64_t bound) {
  Words cls(bound), hist(msm::kTaskClasses, 0), class_off(msm::kTaskClasses + 1), order(bound);
  const uint32_t blocks = ceil_div(bound, msm::kSortBlock);
  launch_phased<msm::ClassShared, NoThread>(
      blocks, msm::kSortBlock, msm::kClassPhases, [&](uint32_t ph, msm::ClassShared& sh, NoThread&) {
        msm::class_phase(ph, sh, seg_off.data(), task_off.data(), nseg, t, cls.data(), hist.data());
      });
  scan(hist.data(), msm::kTaskClasses, class_off.data(), nullptr, 1);
  Words cursor(class_off.begin(), class_off.end() - 1);
  launch_phased<msm::ClassShared, msm::ClassThread>(
      blocks, msm::kSortBlock, msm::kOrderPhases, [&](uint32_t ph, msm::ClassShared& sh, msm::ClassThread& th) {
        msm::order_phase(ph, sh, th, cls.data(), &task_off[nseg], cursor.data(), order.data());
      });
  return order;
}

// LevelOut mirrors levelOut: where a reduce level writes its points, and
// the word its task numbers start from (null: 0).
template <class F>
struct LevelOut {
  XYZZ<F>* pts;
  Words* off;
  const uint32_t* from;
};

// levels mirrors msmRun.levels: each level over a bound on its tasks, its
// offsets left in out[i%2].off. It returns the result's points and offsets.
template <class F>
static std::pair<const XYZZ<F>*, const uint32_t*> levels(const Curve<F>& cv, const XYZZ<F>* cur, const uint32_t* off,
                                                        uint32_t nseg, uint32_t max_len, uint32_t t, uint32_t most,
                                                        uint64_t pts, LevelOut<F> out[2]) {
  for (int i = 0; max_len > most; i++) {
    const LevelOut<F>& o = out[i % 2];
    const uint32_t* task_off = tasks(off, nseg, t, *o.off, o.from);
    pts = task_bound(pts, nseg, max_len, t);
    launch(pts, [&] { cv.reduce(cur, off, task_off, nseg, t, o.pts); });
    cur = o.pts;
    off = task_off;
    max_len = ceil_div(max_len, t);
  }
  return {cur, off};
}

// Buckets is what the bucket stages leave for bucket_sum (or bucket_fold):
// the partials (part_a) at off, and the reduced segments [s0, s1) at hi and
// hi_off, in part_a or part_b as the device leaves them.
template <class F>
struct Buckets {
  std::vector<XYZZ<F>> part_a, part_b;
  Words off, off_b, off_c;
  const XYZZ<F>* hi;
  const uint32_t* hi_off;
  uint32_t s0, s1;
};

// buckets mirrors msmRun.buckets: digits, sort, accumulate and reduce
// levels of n scalars over bases (a table of copies of stride points).
template <class F>
static Buckets<F> buckets(const Curve<F>& cv, const Fr* scalars, const Affine<F>* bases, uint32_t n, uint32_t c,
                          uint32_t nwin, uint32_t mwin, uint32_t stride, uint32_t t1, uint32_t t2,
                          uint32_t most) {
  const uint32_t nb = 1u << (c - 1), nseg = mwin * nb;
  Words digits((size_t)n * nwin), counts(nseg, 0), seg_off(nseg + 1);
  const uint32_t band = nb / (nb < 64 ? nb : 64), bands = nseg / band;  // msmPlan.band, bands
  Words maxima(bands, 0);
  launch(n, [&] { msm_digits(scalars, n, c, nwin, mwin, digits.data(), counts.data()); });
  scan(counts.data(), nseg, seg_off.data(), maxima.data(), band);
  Words cursor(seg_off.begin(), seg_off.end() - 1), sorted(seg_off[nseg]);
  launch((uint64_t)n * nwin,
         [&] { msm_scatter(digits.data(), n, nwin, mwin, stride, c, cursor.data(), sorted.data()); });
  Buckets<F> out;
  const uint64_t partials = (uint64_t)n * nwin / t1 + nseg;  // msmPlan.partials: the bound the kernels run over
  tasks(seg_off.data(), nseg, t1, out.off, nullptr);
  out.part_a.resize(partials);
  out.part_b.resize(partials);
  const Words order = task_order(seg_off, out.off, nseg, t1, partials);
  launch(partials, [&] {
    cv.accumulate(bases, sorted.data(), seg_off.data(), out.off.data(), order.data(), nseg, t1, out.part_a.data());
  });
  // Segments [s0, s1) go through reduce levels first (msmPlan.reducedRange),
  // until each bucket holds at most `most` partials (kBucketPartials where
  // bucket_sum reads them, kFoldPartials where bucket_fold does), their
  // first level reading cur at its offsets, as the device does.
  uint32_t first = bands, last = 0, max_len = 0;
  for (uint32_t i = 0; i < bands; i++) {
    const uint32_t l = ceil_div(maxima[i], t1);
    if (l > most) {
      first = i < first ? i : first;
      last = i;
      max_len = l > max_len ? l : max_len;
    }
  }
  out.s0 = max_len ? first * band : nseg;
  out.s1 = max_len ? (last + 1) * band : nseg;
  // As on the device: into part_b, then into part_a from the first reduced
  // segment's partials on, numbered from that offset.
  const uint32_t* from = out.off.data() + out.s0;
  LevelOut<F> lv[2] = {{out.part_b.data(), &out.off_b, nullptr}, {out.part_a.data(), &out.off_c, from}};
  std::tie(out.hi, out.hi_off) = levels(cv, (const XYZZ<F>*)out.part_a.data(), from, out.s1 - out.s0, max_len, t2,
                                        most, partials, lv);
  return out;
}

// windows mirrors msmRun.windows: bucket_sum, then the window levels.
template <class F>
static std::vector<XYZZ<F>> windows(const Curve<F>& cv, const XYZZ<F>* lo, const uint32_t* lo_off,
                                    const XYZZ<F>* hi, const uint32_t* hi_off, uint32_t s0, uint32_t s1,
                                    uint32_t mwin, uint32_t nb, uint32_t k, uint32_t tw) {
  std::vector<XYZZ<F>> win_a((size_t)mwin * k), win_b(win_a.size());
  launch(win_a.size(), [&] { cv.bucket_sum(lo, lo_off, hi, hi_off, s0, s1, mwin, nb, k, win_a.data()); });
  Words win_off_a = fill_steps(mwin, k), win_off_b;
  LevelOut<F> lv[2] = {{win_b.data(), &win_off_b, nullptr}, {win_a.data(), &win_off_a, nullptr}};
  const XYZZ<F>* res = levels(cv, (const XYZZ<F>*)win_a.data(), win_off_a.data(), mwin, k, tw, 1,
                              (uint64_t)mwin * k, lv).first;
  return std::vector<XYZZ<F>>(res, res + mwin);
}

// chunk_t1 is msmPlan's t1 for a chunk of n points: twice the mean segment
// length, at least 8.
static uint32_t chunk_t1(uint32_t n, uint32_t nwin, uint32_t nseg) {
  const uint32_t mean = (uint32_t)((uint64_t)n * nwin / nseg);
  return 2 * mean > 8 ? 2 * mean : 8;
}

template <class F>
static int run(FILE* in, FILE* out, const uint32_t* h, const Curve<F>& cv) {
  const uint32_t n = h[1], c = h[2], nwin = h[3], mwin = h[4], stride = h[5], copies = h[6];
  const uint32_t t1 = h[7], t2 = h[8], tw = h[9], k = h[10], chunk = h[11];
  const uint32_t nb = 1u << (c - 1), nseg = mwin * nb;
  std::vector<Fr> scalars(n);
  std::vector<Affine<F>> bases((size_t)copies * stride);
  if (fread(scalars.data(), sizeof(Fr), n, in) != n || fread(bases.data(), sizeof(Affine<F>), stride, in) != stride)
    return 2;
  if (copies > 1) launch(stride, [&] { cv.table(bases.data(), stride, copies, c * mwin); });
  std::vector<XYZZ<F>> wins;
  if (chunk == 0 || chunk >= n) {
    Buckets<F> b = buckets(cv, scalars.data(), bases.data(), n, c, nwin, mwin, stride, t1, t2, msm::kBucketPartials);
    wins = windows(cv, b.part_a.data(), b.off.data(), b.hi, b.hi_off, b.s0, b.s1, mwin, nb, k, tw);
  } else {
    std::vector<XYZZ<F>> carry(nseg);
    memset(carry.data(), 0, carry.size() * sizeof(XYZZ<F>));  // the point at infinity
    for (uint32_t lo = 0; lo < n; lo += chunk) {
      const uint32_t m = n - lo < chunk ? n - lo : chunk;
      Buckets<F> b = buckets(cv, scalars.data() + lo, bases.data() + lo, m, c, nwin, mwin, stride,
                             chunk_t1(m, nwin, nseg), t2, msm::kFoldPartials);
      launch(nseg, [&] {
        cv.bucket_fold(b.part_a.data(), b.off.data(), b.hi, b.hi_off, b.s0, b.s1, nseg, carry.data());
      });
    }
    const Words iota = fill_steps(nseg, 1);
    wins = windows(cv, carry.data(), iota.data(), carry.data(), iota.data(), nseg, nseg, mwin, nb, k, tw);
  }
  return fwrite(wins.data(), sizeof(XYZZ<F>), mwin, out) == mwin ? 0 : 3;
}

static int fp_selftest(FILE* in, FILE* out, uint32_t n) {
  std::vector<Fp> a(n), b(n), res((size_t)6 * n);
  if (fread(a.data(), sizeof(Fp), n, in) != n || fread(b.data(), sizeof(Fp), n, in) != n) return 2;
  launch(n, [&] { msm_g1_fp_selftest(a.data(), b.data(), n, res.data()); });
  return fwrite(res.data(), sizeof(Fp), res.size(), out) == res.size() ? 0 : 3;
}

static int fp2_selftest(FILE* in, FILE* out, uint32_t n) {
  std::vector<Fp2> a(n), b(n), res((size_t)5 * n);
  if (fread(a.data(), sizeof(Fp2), n, in) != n || fread(b.data(), sizeof(Fp2), n, in) != n) return 2;
  launch(n, [&] { msm_g2_fp2_selftest(a.data(), b.data(), n, res.data()); });
  return fwrite(res.data(), sizeof(Fp2), res.size(), out) == res.size() ? 0 : 3;
}

int main(int argc, char** argv) {
  if (argc != 3) return 1;
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  uint32_t h[12];
  if (!in || !out || fread(h, 4, 12, in) != 12) return 1;
  int rc = h[0] == 0   ? fp_selftest(in, out, h[1])
           : h[0] == 3 ? fp2_selftest(in, out, h[1])
           : h[0] == 1
               ? run(in, out, h, Curve<Fp>{msm_g1_table, msm_g1_accumulate, msm_g1_reduce, msm_g1_bucket_sum, msm_g1_bucket_fold})
               : run(in, out, h, Curve<Fp2>{msm_g2_table, msm_g2_accumulate, msm_g2_reduce, msm_g2_bucket_sum,
                                                        msm_g2_bucket_fold});
  return fclose(out) != 0 ? 4 : rc;
}
