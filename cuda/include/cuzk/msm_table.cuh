// msm_table.cuh: tables of base multiples for cuzk's Pippenger MSM, generic
// over the coordinate field (Fp for G1, Fp2 for G2).
//
// A table of m copies of n bases holds 2^(shift·k)·P_i at k·n + i (k < m),
// all affine. An MSM over it folds digit window w of every scalar into
// bucket window w mod (shift/c) of copy w / (shift/c), so its windows share
// buckets: fewer buckets to weight, and room for wider windows, which take
// fewer additions per point (prover/gpu, msmTable).
#ifndef CUZK_MSM_TABLE_CUH
#define CUZK_MSM_TABLE_CUH

#include "cuzk/ec_xyzz.cuh"
#include "cuzk/msm_sort.cuh"

namespace cuzk {
namespace ec {
namespace msm {

// kMaxCopies bounds a table's copies (prover/gpu: msmMaxCopies).
constexpr uint32_t kMaxCopies = 16;

// precompute: copy 0 of the table holds the bases; thread i writes copies
// 1 … m−1 of base i. Copy k comes from
// copy k−1 by shift doublings in XYZZ; the m−1 affine conversions share one
// inversion (Montgomery's trick): the raw X, Y wait in their table slots and
// ZZ, ZZZ and the running product of the denominators ZZ·ZZZ in per-thread
// arrays, then one backward pass turns 1/Π into each 1/(ZZ·ZZZ), and
// x = X·ZZZ/(ZZ·ZZZ), y = Y·ZZ/(ZZ·ZZZ). A base at infinity, or one of small
// order that doublings take to infinity, stays (0, 0) and out of the
// product.
template <class F>
CUZK_HD void precompute(Affine<F>* __restrict__ table, uint32_t n, uint32_t m, uint32_t shift) {
  const uint32_t i = thread_id();
  if (i >= n) return;
  const Affine<F> a = table[i];
  F zz[kMaxCopies], zzz[kMaxCopies], before[kMaxCopies];
  XYZZ<F> q = XYZZ<F>::from_affine(a);
  F run = F::one();
  for (uint32_t k = 1; k < m; k++) {
    for (uint32_t s = 0; s < shift; s++) q = dbl(q);
    zz[k] = q.zz;
    zzz[k] = q.zzz;
    before[k] = run;
    table[(size_t)k * n + i] = Affine<F>{q.x, q.y};
    if (!q.is_inf()) run = run * (q.zz * q.zzz);
  }
  F inv = inverse(run);  // 1 / Π of the denominators of copies 1 … m−1
  for (uint32_t k = m; k-- > 1;) {
    Affine<F>& slot = table[(size_t)k * n + i];
    if (zz[k].is_zero()) {
      slot = Affine<F>{F::zero(), F::zero()};
      continue;
    }
    const F d = inv * before[k];  // 1/(ZZ·ZZZ) of copy k
    inv = inv * (zz[k] * zzz[k]);
    slot = Affine<F>{slot.x * (d * zzz[k]), slot.y * (d * zz[k])};
  }
}

}  // namespace msm
}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_MSM_TABLE_CUH
