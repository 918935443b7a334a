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

// mul_row adds x·y into t[0..N] (t[N] == 0 on entry), as two carry chains:
// the low product halves into t_j, then the high halves into t_(j+1).
template <class P>
CUZK_HD void mul_row(uint32_t (&t)[P::N + 1], const uint32_t (&x)[P::N], uint32_t y) {
  constexpr int N = P::N;
  t[0] = ptx::mad_lo_cc(x[0], y, t[0]);
#pragma unroll
  for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(x[j], y, t[j]);
  t[N] = ptx::addc(t[N], 0);
  t[1] = ptx::mad_hi_cc(x[0], y, t[1]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[j + 1] = ptx::madc_hi_cc(x[j], y, t[j + 1]);
  t[N] = ptx::madc_hi(x[N - 1], y, t[N]);
}

// mod_row adds m·p into t[0..N] the same way, p's limbs as immediates.
template <class P>
CUZK_HD void mod_row(uint32_t (&t)[P::N + 1], uint32_t m) {
  constexpr int N = P::N;
  t[0] = ptx::mad_lo_cc(m, P::mod(0), t[0]);
#pragma unroll
  for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(m, P::mod(j), t[j]);
  t[N] = ptx::addc(t[N], 0);
  t[1] = ptx::mad_hi_cc(m, P::mod(0), t[1]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[j + 1] = ptx::madc_hi_cc(m, P::mod(j), t[j + 1]);
  t[N] = ptx::madc_hi(m, P::mod(N - 1), t[N]);
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
// IEEE Micro 1996): for each limb b_i, t += a·b_i, then t += m·p with
// m = t_0·inv so that the low limb cancels, then t >>= 32. With a, b < p and
// p < 2^(32N − 1), t < 2p at the start of every row, so t[N] is 0 there and
// t + a·b_i + m·p < 2^33·p < 2^(32(N+1)): N + 1 words never overflow, and
// the result needs one conditional subtraction.
template <class P>
CUZK_HD MontField<P> operator*(const MontField<P>& a, const MontField<P>& b) {
  constexpr int N = P::N;
  uint32_t t[N + 1];
#pragma unroll
  for (int j = 0; j <= N; j++) t[j] = 0;
#pragma unroll
  for (int i = 0; i < N; i++) {
    mont::mul_row<P>(t, a.v, b.v[i]);
    mont::mod_row<P>(t, t[0] * P::inv);
#pragma unroll
    for (int j = 0; j < N; j++) t[j] = t[j + 1];  // t[0] is 0 after mod_row
    t[N] = 0;
  }
  uint32_t r[N];
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = t[j];
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
