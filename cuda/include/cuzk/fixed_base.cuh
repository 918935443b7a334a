// fixed_base.cuh: batched fixed-base scalar multiplication s_i·G for one
// base G, generic over the coordinate field (Fp for G1, Fp2 for G2): the
// development setup's key points (prover/groth16 Setup through prover/gpu
// FixedBaseG1/G2).
//
// The host builds a table of the base's multiples, T[w·2^(c−1) + d − 1] =
// d·2^(c·w)·G for w < nwin and 1 ≤ d ≤ 2^(c−1), affine, with nwin·c ≥ 256
// (prover/gpu fixedBaseTable). A scalar, in signed base-2^c digits
// (encode_digit, msm_scalar.cuh), is then Σ_w ±T[w][|d_w|]: at most nwin
// mixed additions in XYZZ and no doublings. Each thread computes
// kFixedBaseStrip results, at indices t, t + T, t + 2T, … (T threads in
// all, so neighbouring threads touch neighbouring scalars), and converts
// them to affine with one inversion (Montgomery's trick): the products
// X·ZZZ and Y·ZZ wait in their output slots, the denominators ZZ·ZZZ and
// their running products in per-thread arrays, and one backward pass turns
// 1/Π into each 1/(ZZ·ZZZ): x = X·ZZZ/(ZZ·ZZZ) = X/ZZ, y = Y·ZZ/(ZZ·ZZZ) =
// Y/ZZZ. Infinity is written as (0, 0), gnark-crypto's convention, so the
// output equals gnark-crypto's BatchScalarMultiplicationG1/G2 byte for byte.
#ifndef CUZK_FIXED_BASE_CUH
#define CUZK_FIXED_BASE_CUH

#include "cuzk/ec_xyzz.cuh"
#include "cuzk/msm_scalar.cuh"

namespace cuzk {
namespace ec {
namespace fb {

// kFixedBaseStrip is how many results one thread computes and converts
// with one inversion (prover/gpu: fixedBaseStrip). An inversion costs about
// 570 products; shared by 16 results it adds about 36 to each result's
// ~170 (16 additions of 10–11 products at c = 16) and 7 of conversion.
constexpr uint32_t kFixedBaseStrip = 16;

CUZK_HD uint32_t thread_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// scalar_mul returns s·G in XYZZ for the gnark fr.Element s (Montgomery
// form) from the table of G's multiples with c-bit windows.
template <class F>
CUZK_HD XYZZ<F> scalar_mul(const Affine<F>* __restrict__ table, uint32_t c, uint32_t nwin, const Fr& s) {
  const Fr k = from_mont(s);
  uint32_t limbs[8];
  for (int j = 0; j < 8; j++) limbs[j] = k.v[j];
  const uint32_t half = 1u << (c - 1);
  XYZZ<F> acc = XYZZ<F>::inf();
  uint32_t carry = 0;
  for (uint32_t w = 0; w < nwin; w++) {
    const uint32_t d = encode_digit(window_bits(limbs, w * c, c), carry, c);
    if (d == 0) continue;
    Affine<F> a = load16(table + (size_t)w * half + (d >> 1) - 1);
    if (d & 1) a.y = -a.y;
    acc = madd(acc, a);
  }
  return acc;
}

// fixed_base: thread t < threads sets out[i] = scalars[i]·G (affine) for
// i = t + j·threads < n, j < kFixedBaseStrip; threads ≥ ⌈n/kFixedBaseStrip⌉.
template <class F>
CUZK_HD void fixed_base(const Affine<F>* __restrict__ table, uint32_t c, uint32_t nwin, const Fr* __restrict__ scalars,
                        uint32_t n, uint32_t threads, Affine<F>* __restrict__ out) {
  const uint32_t t = thread_id();
  if (t >= threads) return;
  F den[kFixedBaseStrip], before[kFixedBaseStrip];
  F run = F::one();
  uint32_t m = 0;
  for (uint32_t j = 0; j < kFixedBaseStrip; j++) {
    const size_t i = t + (size_t)j * threads;
    if (i >= n) break;
    m = j + 1;
    const XYZZ<F> q = scalar_mul(table, c, nwin, load16(scalars + i));
    if (q.is_inf()) {
      den[j] = F::zero();
      out[i] = Affine<F>{F::zero(), F::zero()};
      continue;
    }
    den[j] = q.zz * q.zzz;
    before[j] = run;
    run = run * den[j];
    out[i] = Affine<F>{q.x * q.zzz, q.y * q.zz};
  }
  F inv = inverse(run);  // 1 / Π of the thread's denominators
  for (uint32_t j = m; j-- > 0;) {
    if (den[j].is_zero()) continue;
    const size_t i = t + (size_t)j * threads;
    const F d = inv * before[j];  // 1/(ZZ·ZZZ) of result j
    inv = inv * den[j];
    const Affine<F> a = out[i];
    out[i] = Affine<F>{a.x * d, a.y * d};
  }
}

}  // namespace fb
}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_FIXED_BASE_CUH
