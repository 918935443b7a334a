// fp2.cuh: BLS12-381's quadratic extension Fp2 = Fp[u]/(u² + 1).
//
// Fp2 is (c0, c1) meaning c0 + c1·u, the same order and layout as
// gnark-crypto's bls12381.E2 {A0, A1}, so G2 points copy to the device as is.
#ifndef CUZK_FP2_CUH
#define CUZK_FP2_CUH

#include "cuzk/fp.cuh"

namespace cuzk {
namespace ec {

struct Fp2 {
  Fp c0, c1;

  CUZK_HD static Fp2 zero() { return Fp2{Fp::zero(), Fp::zero()}; }
  CUZK_HD static Fp2 one() { return Fp2{Fp::one(), Fp::zero()}; }
  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
};

CUZK_HD Fp2 operator+(const Fp2& a, const Fp2& b) { return Fp2{a.c0 + b.c0, a.c1 + b.c1}; }
CUZK_HD Fp2 operator-(const Fp2& a, const Fp2& b) { return Fp2{a.c0 - b.c0, a.c1 - b.c1}; }
CUZK_HD Fp2 operator-(const Fp2& a) { return Fp2{-a.c0, -a.c1}; }

// karatsuba_sum sets t = (a0 + a1)(b0 + b1) as a plain 768-bit integer,
// the sums unreduced (below 2p < 2^384, so the product is below 4p²).
CUZK_HD void karatsuba_sum(uint32_t (&t)[2 * Fp::N], const Fp2& a, const Fp2& b) {
  constexpr int N = Fp::N;
  uint32_t sa[N], sb[N];
  sa[0] = ptx::add_cc(a.c0.v[0], a.c1.v[0]);
#pragma unroll
  for (int j = 1; j < N; j++) sa[j] = ptx::addc_cc(a.c0.v[j], a.c1.v[j]);
  sb[0] = ptx::add_cc(b.c0.v[0], b.c1.v[0]);
#pragma unroll
  for (int j = 1; j < N; j++) sb[j] = ptx::addc_cc(b.c0.v[j], b.c1.v[j]);
  mont::wide_mul<N>(t, sa, sb);
}

// mul_inline is the Karatsuba product
// (a0 + a1u)(b0 + b1u) = (a0b0 − a1b1) + ((a0 + a1)(b0 + b1) − a0b0 − a1b1)u
// with lazy reduction: the three products are plain 768-bit integers
// (mont::wide_mul) and each coefficient is reduced once (mont::redc_signed),
// two reductions instead of three, 5·12² multiply-adds instead of 6·12².
// The sums a0 + a1, b0 + b1 are left unreduced (below 2p < 2^384), so the
// second coefficient is exactly a0b1 + a1b0 < 2p²; the first lies in
// (−p², p²). It is inlined where it is used. operator* calls it from one
// out-of-line copy per unit; only the hot accumulate loop inlines it (see
// madd in ec_xyzz.cuh).
CUZK_HD Fp2 mul_inline(const Fp2& a, const Fp2& b) {
  constexpr int N = Fp::N;
  uint32_t c0[2 * N], c1[2 * N], x[2 * N];
  mont::wide_mul<N>(c0, a.c0.v, b.c0.v);
  mont::wide_mul<N>(x, a.c1.v, b.c1.v);
  karatsuba_sum(c1, a, b);
  mont::wide_sub<N>(c1, c0);
  mont::wide_sub<N>(c1, x);
  mont::wide_sub<N>(c0, x);
  return Fp2{mont::redc_signed<FpParams>(c0), mont::redc_signed<FpParams>(c1)};
}

// mul_sub returns a·b − c·d with two reductions instead of four (of two
// lazily reduced products): both coefficients of the plain difference lie
// in (−2p², 2p²), inside redc_signed's range. The point additions'
// y3 = R·(Q − X3) − Y·PPP is its one use.
CUZK_HD Fp2 mul_sub(const Fp2& a, const Fp2& b, const Fp2& c, const Fp2& d) {
  constexpr int N = Fp::N;
  uint32_t c0[2 * N], c1[2 * N], x[2 * N];
  // c0 = a0b0 − a1b1 − c0d0 + c1d1,
  // c1 = (a0 + a1)(b0 + b1) − a0b0 − a1b1 − (c0 + c1)(d0 + d1) + c0d0 + c1d1.
  karatsuba_sum(c1, a, b);
  mont::wide_mul<N>(c0, a.c0.v, b.c0.v);
  mont::wide_sub<N>(c1, c0);
  mont::wide_mul<N>(x, a.c1.v, b.c1.v);
  mont::wide_sub<N>(c0, x);
  mont::wide_sub<N>(c1, x);
  mont::wide_mul<N>(x, c.c0.v, d.c0.v);
  mont::wide_sub<N>(c0, x);
  mont::wide_add<N>(c1, x);
  mont::wide_mul<N>(x, c.c1.v, d.c1.v);
  mont::wide_add<N>(c0, x);
  mont::wide_add<N>(c1, x);
  karatsuba_sum(x, c, d);
  mont::wide_sub<N>(c1, x);
  return Fp2{mont::redc_signed<FpParams>(c0), mont::redc_signed<FpParams>(c1)};
}

// sqr_inline is (a0 + a1u)² = (a0 + a1)(a0 − a1) + 2a0a1·u, inlined where it
// is used (see mul_inline).
CUZK_HD Fp2 sqr_inline(const Fp2& a) {
  Fp m = a.c0 * a.c1;
  return Fp2{(a.c0 + a.c1) * (a.c0 - a.c1), m + m};
}

CUZK_CALL Fp2 operator*(const Fp2& a, const Fp2& b) { return mul_inline(a, b); }
CUZK_CALL Fp2 sqr(const Fp2& a) { return sqr_inline(a); }

CUZK_HD Fp2 dbl(const Fp2& a) { return a + a; }

// inverse returns 1/(a0 + a1u) = (a0 − a1u)/(a0² + a1²) (u² = −1), and 0 for
// a = 0.
CUZK_HD Fp2 inverse(const Fp2& a) {
  const Fp t = inverse(sqr(a.c0) + sqr(a.c1));
  return Fp2{a.c0 * t, -(a.c1 * t)};
}

}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_FP2_CUH
