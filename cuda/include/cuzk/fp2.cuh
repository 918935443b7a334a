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

// mul_inline is the Karatsuba product
// (a0 + a1u)(b0 + b1u) = (a0b0 − a1b1) + ((a0 + a1)(b0 + b1) − a0b0 − a1b1)u,
// inlined where it is used. operator* calls it from one out-of-line copy per
// unit; only the hot accumulate loop inlines it (see madd in ec_xyzz.cuh).
CUZK_HD Fp2 mul_inline(const Fp2& a, const Fp2& b) {
  Fp v0 = a.c0 * b.c0;
  Fp v1 = a.c1 * b.c1;
  Fp s = (a.c0 + a.c1) * (b.c0 + b.c1);
  return Fp2{v0 - v1, s - v0 - v1};
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
