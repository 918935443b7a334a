// mont.cuh: prime fields in Montgomery form on 32-bit limbs, generic in the
// modulus, for BLS12-381's Fr (fr.cuh, 8 limbs) and equally for Fp
// (12 limbs).
//
// MontField<P> holds x·R mod p, R = 2^(32·N), as P::N little-endian 32-bit
// limbs, fully reduced (< p). On a little-endian machine that is byte for byte
// gnark-crypto's representation (little-endian uint64 words, Montgomery form,
// R = 2^(64·words)), so Go copies []fr.Element or []fp.Element straight to
// the device. The struct is 16-byte aligned so elements move as 16-byte
// vector loads; P::N must therefore be a multiple of 4.
//
// P provides, as constexpr functions usable on host and device:
//   N            limb count
//   inv          −p^(−1) mod 2^32
//   mod(i)       limb i of p, with p odd and p < 2^(32·N − 1)
//   one(i)       limb i of R mod p (1 in Montgomery form)
//   r2(i)        limb i of R^2 mod p (for to_mont)
//   mod_sq(k)    limb k < 2N of p² (only for the lazy-reduction functions
//                wide_add_mod_sq and its users)
// The spare top bit bounds every intermediate below (see operator*), which
// lets add skip the carry out and the multiplication keep N + 1 words.
#ifndef CUZK_MONT_CUH
#define CUZK_MONT_CUH

#include "cuzk/ptx.cuh"

// CUZK_HDC marks constexpr parameter functions callable on host and device.
#if defined(__CUDACC__)
#define CUZK_HDC __host__ __device__
#else
#define CUZK_HDC
#endif

namespace cuzk {

template <class P>
struct alignas(16) MontField {
  static constexpr int N = P::N;
  static_assert(N >= 4 && N % 4 == 0, "limb count must be a multiple of 4 (16-byte vectors)");
  static_assert(P::mod(0) % 2 == 1, "modulus must be odd");
  static_assert(P::mod(N - 1) < 0x80000000u, "modulus needs one spare top bit");
  static_assert(static_cast<uint32_t>(P::inv * P::mod(0)) == 0xffffffffu, "inv must be -p^-1 mod 2^32");

  uint32_t v[N];

  CUZK_HD static MontField zero() {
    MontField r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = 0;
    return r;
  }
  // one returns 1 in Montgomery form (R mod p).
  CUZK_HD static MontField one() {
    MontField r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = P::one(i);
    return r;
  }
  CUZK_HD bool is_zero() const {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= v[i];
    return acc == 0;
  }
  CUZK_HD bool operator==(const MontField& o) const {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  CUZK_HD bool operator!=(const MontField& o) const { return !(*this == o); }
};

namespace mont {

// reduce_once returns t − p when t ≥ p, else t, for t < 2p in N limbs.
template <class P>
CUZK_HD MontField<P> reduce_once(const uint32_t (&t)[P::N]) {
  constexpr int N = P::N;
  uint32_t s[N];
  s[0] = ptx::sub_cc(t[0], P::mod(0));
#pragma unroll
  for (int j = 1; j < N; j++) s[j] = ptx::subc_cc(t[j], P::mod(j));
  const uint32_t keep = ptx::subc(0, 0);  // all ones when t < p
  MontField<P> r;
#pragma unroll
  for (int j = 0; j < N; j++) r.v[j] = (t[j] & keep) | (s[j] & ~keep);
  return r;
}

// The multiplication keeps its running sum t as two N-limb arrays, ev and
// od, with t = ev + 2^32·od: ev collects the products of the even-indexed
// limbs (x_0, x_2, …) and od those of the odd-indexed ones, so in each array
// the low and high halves of one product land on adjacent limbs. Every
// product then becomes one madc.lo.cc/madc.hi.cc pair on one carry chain,
// which ptxas (sm_70 and later) turns into a single IMAD.WIDE.U32.X; a row
// costs N such instructions instead of a multiply plus a carry add per
// half. (Measured on sm_90 SASS: 12-limb multiplication 301 IMAD + 57 IADD3
// against 600 + 585 for 32×32+32+32-bit products in 64-bit words.)

// prod_pairs sets acc[j], acc[j+1] to the low and high halves of x[j]·y for
// even j < N (x is read at stride 2).
template <int N>
CUZK_HD void prod_pairs(uint32_t (&acc)[N], const uint32_t* x, uint32_t y) {
#pragma unroll
  for (int j = 0; j < N; j += 2) {
    acc[j] = ptx::mul_lo(x[j], y);
    acc[j + 1] = ptx::mul_hi(x[j], y);
  }
}

// mad_pairs adds Σ x[j]·y·2^(32j) (even j) into acc on one carry chain and
// leaves the chain's carry out in the flag.
template <int N>
CUZK_HD void mad_pairs(uint32_t (&acc)[N], const uint32_t* x, uint32_t y) {
  acc[0] = ptx::mad_lo_cc(x[0], y, acc[0]);
  acc[1] = ptx::madc_hi_cc(x[0], y, acc[1]);
#pragma unroll
  for (int j = 2; j < N; j += 2) {
    acc[j] = ptx::madc_lo_cc(x[j], y, acc[j]);
    acc[j + 1] = ptx::madc_hi_cc(x[j], y, acc[j + 1]);
  }
}

// mad_pairs_shift2 sets acc = acc/2^64 + Σ x[j]·y·2^(32j) (even j), taking
// the carry flag in at limb 0; the sum fits (see operator*), so the top limb
// has no carry out.
template <int N>
CUZK_HD void mad_pairs_shift2(uint32_t (&acc)[N], const uint32_t* x, uint32_t y) {
#pragma unroll
  for (int j = 0; j < N - 2; j += 2) {
    acc[j] = ptx::madc_lo_cc(x[j], y, acc[j + 2]);
    acc[j + 1] = ptx::madc_hi_cc(x[j], y, acc[j + 3]);
  }
  acc[N - 2] = ptx::madc_lo_cc(x[N - 2], y, 0);
  acc[N - 1] = ptx::madc_hi(x[N - 2], y, 0);
}

// row is one row of the multiplication: t += x·y, then t += m·p with
// m = t_0·inv so that the low word cancels. Between rows the running value
// is t = lo + 2^32·hi in the caller's arrays; after a row lo_0 is 0, and the
// division by 2^32 is done by swapping roles: the next row is called with
// (hi, lo), reading the old lo shifted down by two limbs into its hi (and
// lo_1 folded into the new lo_0). first marks row 0, where t = 0 and the
// arrays' contents are ignored.
template <int N>
CUZK_HD void row_products(uint32_t (&lo)[N], uint32_t (&hi)[N], const uint32_t (&x)[N], uint32_t y, bool first) {
  if (first) {
    prod_pairs<N>(hi, x + 1, y);
    prod_pairs<N>(lo, x, y);
  } else {
    lo[0] = ptx::add_cc(lo[0], hi[1]);
    mad_pairs_shift2<N>(hi, x + 1, y);
    mad_pairs<N>(lo, x, y);
    hi[N - 1] = ptx::addc(hi[N - 1], 0);
  }
}

// row_reduce is the second half of a row: t += m·p with m = t_0·inv, which
// clears lo_0.
template <class P>
CUZK_HD void row_reduce(uint32_t (&lo)[P::N], uint32_t (&hi)[P::N], const uint32_t (&p)[P::N]) {
  constexpr int N = P::N;
  const uint32_t m = lo[0] * P::inv;
  mad_pairs<N>(hi, p + 1, m);
  mad_pairs<N>(lo, p, m);
  hi[N - 1] = ptx::addc(hi[N - 1], 0);
}

template <class P>
CUZK_HD void row(uint32_t (&lo)[P::N], uint32_t (&hi)[P::N], const uint32_t (&x)[P::N],
                 const uint32_t (&p)[P::N], uint32_t y, bool first) {
  row_products<P::N>(lo, hi, x, y, first);
  row_reduce<P>(lo, hi, p);
}

// shift_row divides t = lo + 2^32·hi, whose lo_0 is 0, by 2^32 in place of
// a row's products (REDC's rows add none): the caller's next row reads
// (hi, lo), as after row_products.
template <int N>
CUZK_HD void shift_row(uint32_t (&lo)[N], uint32_t (&hi)[N]) {
  lo[0] = ptx::add_cc(lo[0], hi[1]);
#pragma unroll
  for (int j = 0; j < N - 2; j++) hi[j] = ptx::addc_cc(hi[j + 2], 0);
  hi[N - 2] = ptx::addc(0, 0);
  hi[N - 1] = 0;
}

// combine returns t/2^32 = ev + od/2^32 for t = od + 2^32·ev with od_0 = 0
// (the state after an odd number of rows), given that it fits N limbs.
template <int N>
CUZK_HD void combine(uint32_t (&r)[N], const uint32_t (&ev)[N], const uint32_t (&od)[N]) {
  r[0] = ptx::add_cc(ev[0], od[1]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r[j] = ptx::addc_cc(ev[j], od[j + 1]);
  r[N - 1] = ptx::addc(ev[N - 1], 0);
}

}  // namespace mont

template <class P>
CUZK_HD MontField<P> operator+(const MontField<P>& a, const MontField<P>& b) {
  constexpr int N = P::N;
  uint32_t t[N];
  t[0] = ptx::add_cc(a.v[0], b.v[0]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[j] = ptx::addc_cc(a.v[j], b.v[j]);
  t[N - 1] = ptx::addc(a.v[N - 1], b.v[N - 1]);  // a + b < 2p < 2^(32N): no carry out
  return mont::reduce_once<P>(t);
}

template <class P>
CUZK_HD MontField<P> operator-(const MontField<P>& a, const MontField<P>& b) {
  constexpr int N = P::N;
  uint32_t t[N];
  t[0] = ptx::sub_cc(a.v[0], b.v[0]);
#pragma unroll
  for (int j = 1; j < N; j++) t[j] = ptx::subc_cc(a.v[j], b.v[j]);
  const uint32_t mask = ptx::subc(0, 0);  // all ones when a < b: add p back
  MontField<P> r;
  r.v[0] = ptx::add_cc(t[0], P::mod(0) & mask);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r.v[j] = ptx::addc_cc(t[j], P::mod(j) & mask);
  r.v[N - 1] = ptx::addc(t[N - 1], P::mod(N - 1) & mask);
  return r;
}

// Unary minus: p − a, and 0 for a = 0.
template <class P>
CUZK_HD MontField<P> operator-(const MontField<P>& a) {
  constexpr int N = P::N;
  const uint32_t mask = a.is_zero() ? 0u : 0xffffffffu;
  MontField<P> r;
  r.v[0] = ptx::sub_cc(P::mod(0), a.v[0]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r.v[j] = ptx::subc_cc(P::mod(j), a.v[j]);
  r.v[N - 1] = ptx::subc(P::mod(N - 1), a.v[N - 1]);
#pragma unroll
  for (int j = 0; j < N; j++) r.v[j] &= mask;
  return r;
}

// operator* is CIOS Montgomery multiplication, a·b·R^(−1) mod p (Koç, Acar,
// Kaliski, "Analyzing and Comparing Montgomery Multiplication Algorithms",
// IEEE Micro 1996), with the running sum split into even and odd products
// (mont::row). For each limb b_i: t += a·b_i, then t += m·p with
// m = t_0·inv so that the low limb cancels, then t /= 2^32. With a, b < p
// and p < 2^(32N − 1), t < 2p at the start of every row, so
// t + a·b_i + m·p < 2p + 2^33·p < 2^(32(N+1)): hi's top limb (weight
// 2^(32N)) never carries out, which is why its chains may drop the flag;
// every partial sum is below the row's total. The result t < 2p needs one
// conditional subtraction.
template <class P>
CUZK_HD MontField<P> operator*(const MontField<P>& a, const MontField<P>& b) {
  constexpr int N = P::N;
  uint32_t p[N];
#pragma unroll
  for (int j = 0; j < N; j++) p[j] = P::mod(j);
  uint32_t ev[N], od[N];
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    mont::row<P>(ev, od, a.v, p, b.v[i], i == 0);
    mont::row<P>(od, ev, a.v, p, b.v[i + 1], false);
  }
  uint32_t r[N];
  mont::combine<N>(r, ev, od);
  return mont::reduce_once<P>(r);
}

// Wide<P> is an unreduced 2N-limb value (little-endian), the product of two
// N-limb values or a sum of such products: lazy reduction computes several
// products, adds and subtracts them, and pays one Montgomery reduction
// (redc) for the result (Fp2's Karatsuba product in fp2.cuh).
template <class P>
struct Wide {
  uint32_t v[2 * P::N];
};

// mul_wide returns the plain product a·b of a, b < 2^(32N) (no reduction),
// by the rows of operator* without their m·p halves: each row's low limb is
// final and leaves the running sum, which after N rows is the high half.
template <class P>
CUZK_HD Wide<P> mul_wide(const uint32_t (&a)[P::N], const uint32_t (&b)[P::N]) {
  constexpr int N = P::N;
  Wide<P> w;
  uint32_t ev[N], od[N], hi[N];
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    mont::row_products<N>(ev, od, a, b[i], i == 0);
    w.v[i] = ev[0];
    mont::row_products<N>(od, ev, a, b[i + 1], false);
    w.v[i + 1] = od[0];
  }
  mont::combine<N>(hi, ev, od);
#pragma unroll
  for (int j = 0; j < N; j++) w.v[N + j] = hi[j];
  return w;
}

// sum_unreduced sets r = a + b for a, b < p, without the conditional
// subtraction: r < 2p < 2^(32N), an input mul_wide accepts.
template <class P>
CUZK_HD void sum_unreduced(uint32_t (&r)[P::N], const MontField<P>& a, const MontField<P>& b) {
  constexpr int N = P::N;
  r[0] = ptx::add_cc(a.v[0], b.v[0]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r[j] = ptx::addc_cc(a.v[j], b.v[j]);
  r[N - 1] = ptx::addc(a.v[N - 1], b.v[N - 1]);
}

// wide_add returns x + y; wide_sub returns x − y and, in borrow, all ones
// when x < y (then the result is x − y + 2^(64N)). Callers keep results in
// range; see redc.
template <class P>
CUZK_HD Wide<P> wide_add(const Wide<P>& x, const Wide<P>& y) {
  constexpr int M = 2 * P::N;
  Wide<P> r;
  r.v[0] = ptx::add_cc(x.v[0], y.v[0]);
#pragma unroll
  for (int j = 1; j < M - 1; j++) r.v[j] = ptx::addc_cc(x.v[j], y.v[j]);
  r.v[M - 1] = ptx::addc(x.v[M - 1], y.v[M - 1]);
  return r;
}
template <class P>
CUZK_HD Wide<P> wide_sub(const Wide<P>& x, const Wide<P>& y, uint32_t& borrow) {
  constexpr int M = 2 * P::N;
  Wide<P> r;
  r.v[0] = ptx::sub_cc(x.v[0], y.v[0]);
#pragma unroll
  for (int j = 1; j < M; j++) r.v[j] = ptx::subc_cc(x.v[j], y.v[j]);
  borrow = ptx::subc(0, 0);
  return r;
}

// wide_add_mod_sq returns x + p² where mask is all ones, else x (P provides
// mod_sq(k), limb k of p²): it brings a difference of products that went
// negative back into [0, p²).
template <class P>
CUZK_HD Wide<P> wide_add_mod_sq(const Wide<P>& x, uint32_t mask) {
  constexpr int M = 2 * P::N;
  Wide<P> r;
  r.v[0] = ptx::add_cc(x.v[0], P::mod_sq(0) & mask);
#pragma unroll
  for (int j = 1; j < M - 1; j++) r.v[j] = ptx::addc_cc(x.v[j], P::mod_sq(j) & mask);
  r.v[M - 1] = ptx::addc(x.v[M - 1], P::mod_sq(M - 1) & mask);
  return r;
}

// redc returns T·R^(−1) mod p, fully reduced, for T < p·R (R = 2^(32N)):
// Montgomery's REDC on the low half, then the high half added. After N
// rows of t += m·p, t /= 2^32 starting from t = T mod R, t ≤ p (the sum is
// below R·(p + 1) and divisible by R); adding T/R < p gives < 2p, which one
// conditional subtraction reduces.
template <class P>
CUZK_HD MontField<P> redc(const Wide<P>& T) {
  constexpr int N = P::N;
  uint32_t p[N];
#pragma unroll
  for (int j = 0; j < N; j++) p[j] = P::mod(j);
  uint32_t ev[N], od[N];
#pragma unroll
  for (int j = 0; j < N; j++) {
    ev[j] = T.v[j];
    od[j] = 0;
  }
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    if (i != 0) mont::shift_row<N>(ev, od);
    mont::row_reduce<P>(ev, od, p);
    mont::shift_row<N>(od, ev);
    mont::row_reduce<P>(od, ev, p);
  }
  uint32_t r[N];
  mont::combine<N>(r, ev, od);
  r[0] = ptx::add_cc(r[0], T.v[N]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r[j] = ptx::addc_cc(r[j], T.v[N + j]);
  r[N - 1] = ptx::addc(r[N - 1], T.v[2 * N - 1]);
  return mont::reduce_once<P>(r);
}

template <class P>
CUZK_HD MontField<P> sqr(const MontField<P>& a) {
  return a * a;
}

template <class P>
CUZK_HD MontField<P> dbl(const MontField<P>& a) {
  return a + a;
}

// to_mont maps a canonical value a < p (plain little-endian limbs) to
// Montgomery form: a·R^2·R^(−1) = a·R mod p.
template <class P>
CUZK_HD MontField<P> to_mont(const MontField<P>& a) {
  MontField<P> r2;
#pragma unroll
  for (int i = 0; i < P::N; i++) r2.v[i] = P::r2(i);
  return a * r2;
}

// from_mont maps a Montgomery form element to its canonical value:
// a·1·R^(−1) mod p, as plain little-endian limbs.
template <class P>
CUZK_HD MontField<P> from_mont(const MontField<P>& a) {
  MontField<P> one = MontField<P>::zero();
  one.v[0] = 1;
  return a * one;
}

}  // namespace cuzk

#endif  // CUZK_MONT_CUH
