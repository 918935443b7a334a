// ec_xyzz.cuh: short-Weierstrass (a = 0) point arithmetic in extended
// Jacobian ("XYZZ") coordinates, generic over the coordinate field.
//
// An XYZZ point (X, Y, ZZ, ZZZ) stands for the affine point (X/ZZ, Y/ZZZ)
// with ZZ³ = ZZZ²; ZZ = 0 is the point at infinity. Formulas are from the
// Explicit-Formulas Database, "XYZZ coordinates for short Weierstrass curves"
// (add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1), with the a = 0
// terms dropped. gnark-crypto's g1JacExtended/g2JacExtended use the same
// representation. Affine points use gnark's convention: (0, 0) is infinity.
#ifndef CUZK_EC_XYZZ_CUH
#define CUZK_EC_XYZZ_CUH

#include "cuzk/ec_arch.cuh"

namespace cuzk {
namespace ec {

template <class F>
struct Affine {
  F x, y;
  CUZK_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct XYZZ {
  F x, y, zz, zzz;

  CUZK_HD static XYZZ inf() { return XYZZ{F::zero(), F::zero(), F::zero(), F::zero()}; }
  CUZK_HD static XYZZ from_affine(const Affine<F>& a) {
    if (a.is_inf()) return inf();
    return XYZZ{a.x, a.y, F::one(), F::one()};
  }
  CUZK_HD bool is_inf() const { return zz.is_zero(); }
};

// mdbl returns 2·a for affine a ≠ infinity (mdbl-2008-s-1).
template <class F>
CUZK_CALL XYZZ<F> mdbl(const Affine<F>& a) {
  F u = dbl(a.y);
  F v = sqr(u);
  F w = u * v;
  F s = a.x * v;
  F x2 = sqr(a.x);
  F m = dbl(x2) + x2;
  F x3 = sqr(m) - dbl(s);
  F y3 = m * (s - x3) - w * a.y;
  return XYZZ<F>{x3, y3, v, w};
}

// dbl returns 2·p (dbl-2008-s-1).
template <class F>
CUZK_CALL XYZZ<F> dbl(const XYZZ<F>& p) {
  if (p.is_inf()) return p;
  F u = dbl(p.y);
  F v = sqr(u);
  F w = u * v;
  F s = p.x * v;
  F x2 = sqr(p.x);
  F m = dbl(x2) + x2;
  F x3 = sqr(m) - dbl(s);
  F y3 = m * (s - x3) - w * p.y;
  return XYZZ<F>{x3, y3, v * p.zz, w * p.zzz};
}

// mul_inline and sqr_inline are a·b and a² inlined at the call site; a field
// whose operator* is an out-of-line call (Fp2) overloads them (fp2.cuh), and
// overload resolution prefers its exact match to these templates.
template <class F>
CUZK_HD F mul_inline(const F& a, const F& b) {
  return a * b;
}
template <class F>
CUZK_HD F sqr_inline(const F& a) {
  return sqr(a);
}

// madd returns p + a for affine a (madd-2008-s), handling infinity on either
// side, a = p (doubling) and a = −p (infinity). It is the accumulate loop's
// body, so its products are inlined even where the field's are calls: for G2
// that measured about 10 % faster accumulation (docs/perf-msm.md).
template <class F>
CUZK_HD XYZZ<F> madd(const XYZZ<F>& p, const Affine<F>& a) {
  if (a.is_inf()) return p;
  if (p.is_inf()) return XYZZ<F>::from_affine(a);
  F u2 = mul_inline(a.x, p.zz);
  F s2 = mul_inline(a.y, p.zzz);
  F P = u2 - p.x;
  F R = s2 - p.y;
  if (P.is_zero()) {
    if (R.is_zero()) return mdbl(a);
    return XYZZ<F>::inf();
  }
  F pp = sqr_inline(P);
  F ppp = mul_inline(P, pp);
  F q = mul_inline(p.x, pp);
  F x3 = sqr_inline(R) - ppp - dbl(q);
  F y3 = mul_sub(R, q - x3, p.y, ppp);
  return XYZZ<F>{x3, y3, mul_inline(p.zz, pp), mul_inline(p.zzz, ppp)};
}

// add_body returns p + q (add-2008-s), handling infinity, p = q and
// p = −q; with inl its products are inlined (mul_inline), else they are the
// field's own (a call for Fp2).
template <bool inl, class F>
CUZK_HD F mul_by(const F& a, const F& b) {
  if (inl) return mul_inline(a, b);
  return a * b;
}
template <bool inl, class F>
CUZK_HD F sqr_by(const F& a) {
  if (inl) return sqr_inline(a);
  return sqr(a);
}
template <bool inl, class F>
CUZK_HD XYZZ<F> add_body(const XYZZ<F>& p, const XYZZ<F>& q) {
  if (q.is_inf()) return p;
  if (p.is_inf()) return q;
  F u1 = mul_by<inl>(p.x, q.zz);
  F u2 = mul_by<inl>(q.x, p.zz);
  F s1 = mul_by<inl>(p.y, q.zzz);
  F s2 = mul_by<inl>(q.y, p.zzz);
  F P = u2 - u1;
  F R = s2 - s1;
  if (P.is_zero()) {
    if (R.is_zero()) return dbl(p);
    return XYZZ<F>::inf();
  }
  F pp = sqr_by<inl>(P);
  F ppp = mul_by<inl>(P, pp);
  F q1 = mul_by<inl>(u1, pp);
  F x3 = sqr_by<inl>(R) - ppp - dbl(q1);
  F y3 = mul_sub(R, q1 - x3, s1, ppp);
  return XYZZ<F>{x3, y3, mul_by<inl>(mul_by<inl>(p.zz, q.zz), pp), mul_by<inl>(mul_by<inl>(p.zzz, q.zzz), ppp)};
}

// add_inline is p + q inlined at the call site, products included: G1's
// reduce and bucket-sum loops use it (msm_bucket.cuh, add_loop).
template <class F>
CUZK_HD XYZZ<F> add_inline(const XYZZ<F>& p, const XYZZ<F>& q) {
  return add_body<true>(p, q);
}

// add is p + q as a call.
template <class F>
CUZK_CALL XYZZ<F> add(const XYZZ<F>& p, const XYZZ<F>& q) {
  return add_body<false>(p, q);
}

// mul_small returns k·p for a small non-negative k, by double-and-add from
// the top bit.
template <class F>
CUZK_CALL XYZZ<F> mul_small(const XYZZ<F>& p, uint32_t k) {
  XYZZ<F> r = XYZZ<F>::inf();
  for (int bit = 31; bit >= 0; bit--) {
    r = dbl(r);
    if ((k >> bit) & 1) r = add(r, p);
  }
  return r;
}

}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_EC_XYZZ_CUH
