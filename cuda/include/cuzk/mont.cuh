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

// mad_pairs adds Σ x[j]·y·2^(32j) (even j ≥ from, from even; the limbs of
// x below from are zero) into acc on one carry chain that starts at limb
// from, and leaves the chain's carry out in the flag.
template <int N>
CUZK_HD void mad_pairs(uint32_t (&acc)[N], const uint32_t* x, uint32_t y, int from = 0) {
  acc[from] = ptx::mad_lo_cc(x[from], y, acc[from]);
  acc[from + 1] = ptx::madc_hi_cc(x[from], y, acc[from + 1]);
#pragma unroll
  for (int j = from + 2; j < N; j += 2) {
    acc[j] = ptx::madc_lo_cc(x[j], y, acc[j]);
    acc[j + 1] = ptx::madc_hi_cc(x[j], y, acc[j + 1]);
  }
}

// mad_pairs_shift2 sets acc = acc/2^64 + Σ x[j]·y·2^(32j) (even j), taking
// the carry flag in at limb 0; the sum fits (see operator*), so the top limb
// has no carry out. Pairs whose x[j] lies below from (zero) become carry
// additions.
template <int N>
CUZK_HD void mad_pairs_shift2(uint32_t (&acc)[N], const uint32_t* x, uint32_t y, int from = 0) {
#pragma unroll
  for (int j = 0; j < N - 2; j += 2) {
    if (j >= from) {
      acc[j] = ptx::madc_lo_cc(x[j], y, acc[j + 2]);
      acc[j + 1] = ptx::madc_hi_cc(x[j], y, acc[j + 3]);
    } else {
      acc[j] = ptx::addc_cc(acc[j + 2], 0);
      acc[j + 1] = ptx::addc_cc(acc[j + 3], 0);
    }
  }
  acc[N - 2] = ptx::madc_lo_cc(x[N - 2], y, 0);
  acc[N - 1] = ptx::madc_hi(x[N - 2], y, 0);
}

// inv_operand returns P::inv for the row's m = t_0·inv. When inv is
// 2^32 − 1 (r ≡ 1 mod 2^32, as for Fr), ptxas rewrites m as −t_0 and then
// no longer fuses the m·p products into IMAD.WIDE.U32.X: an Fr
// multiplication came out as 48 IMAD.X + IMAD.HI.U32.X pairs more (296 SASS
// instructions against 248, sm_90, nvcc 11.8; docs/perf-ntt.md). Read from
// constant memory, the value is opaque to ptxas, costs nothing as an IMAD
// operand, and every product stays fused. The variable is declared in both
// of nvcc's passes (a runtime-API program registers it from the host pass)
// and read only in device code.
#if defined(__CUDACC__)
static __constant__ uint32_t kAllOnes = 0xffffffffu;
#endif

template <class P>
CUZK_HD uint32_t inv_operand() {
#if defined(__CUDA_ARCH__)
  if (P::inv == 0xffffffffu) return kAllOnes;
#endif
  return P::inv;
}

// row is one row of the multiplication: t += x·y, then t += m·p with
// m = t_0·inv so that the low word cancels. Between rows the running value
// is t = lo + 2^32·hi in the caller's arrays; after a row lo_0 is 0, and the
// division by 2^32 is done by swapping roles: the next row is called with
// (hi, lo), reading the old lo shifted down by two limbs into its hi (and
// lo_1 folded into the new lo_0). first marks row 0, where t = 0 and the
// arrays' contents are ignored. The limbs of x below from are zero (the
// squaring's rows, see sqr; 0 for operator*, from 0 on the first row): their
// products are left out, carry additions in the shifted chain of hi, and
// the chain of lo starts at the first even limb ≥ from. A non-null z adds
// a second product z·w to the row before its reduction (mul_sub).
template <class P>
CUZK_HD void row(uint32_t (&lo)[P::N], uint32_t (&hi)[P::N], const uint32_t (&x)[P::N],
                 const uint32_t (&p)[P::N], uint32_t y, bool first, int from, const uint32_t* z = nullptr,
                 uint32_t w = 0) {
  constexpr int N = P::N;
  if (first) {
    prod_pairs<N>(hi, x + 1, y);
    prod_pairs<N>(lo, x, y);
  } else {
    lo[0] = ptx::add_cc(lo[0], hi[1]);
    mad_pairs_shift2<N>(hi, x + 1, y, from - 1);  // from ≤ N − 1: the top pair is always a product
    const int even = (from + 1) & ~1;
    if (even < N) {
      mad_pairs<N>(lo, x, y, even);
      hi[N - 1] = ptx::addc(hi[N - 1], 0);
    }
  }
  if (z) {
    mad_pairs<N>(hi, z + 1, w);
    mad_pairs<N>(lo, z, w);
    hi[N - 1] = ptx::addc(hi[N - 1], 0);
  }
  const uint32_t m = lo[0] * inv_operand<P>();
  mad_pairs<N>(hi, p + 1, m);
  mad_pairs<N>(lo, p, m);
  hi[N - 1] = ptx::addc(hi[N - 1], 0);
}

// sqr_operand sets x to row i's multiplicand in the squaring (see sqr):
// 0 below limb i, a_i at i, a_(i+1) << 1 at i + 1 and b_j (limb j of 2a)
// above.
template <int N>
CUZK_HD void sqr_operand(uint32_t (&x)[N], const uint32_t (&a)[N], const uint32_t (&b)[N], int i) {
#pragma unroll
  for (int j = 0; j < N; j++) x[j] = j < i ? 0 : j == i ? a[i] : j == i + 1 ? a[i + 1] << 1 : b[j];
}

// finish ends operator* and sqr: after the last row t = od + 2^32·ev with
// od_0 = 0, so t/2^32 = ev + od/2^32 < 2p, reduced once.
template <class P>
CUZK_HD MontField<P> finish(const uint32_t (&ev)[P::N], const uint32_t (&od)[P::N]) {
  constexpr int N = P::N;
  uint32_t r[N];
  r[0] = ptx::add_cc(ev[0], od[1]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r[j] = ptx::addc_cc(ev[j], od[j + 1]);
  r[N - 1] = ptx::addc(ev[N - 1], 0);
  return reduce_once<P>(r);
}

// wide_mul sets t = a·b as a plain 2N-limb integer, for products that are
// combined before one Montgomery reduction (redc). It runs operator*'s rows
// without their m·p half: each row adds a·b_i to the running value, whose
// low limb is then final (limb i of t) and is dropped by the rows' shift,
// so N² products against operator*'s 2N², the other half being redc's.
// The running value stays below 2^(32N), so a row fits N + 1 limbs.
template <int N>
CUZK_HD void wide_mul(uint32_t (&t)[2 * N], const uint32_t (&a)[N], const uint32_t (&b)[N]) {
  uint32_t ev[N], od[N];
  prod_pairs<N>(od, a + 1, b[0]);
  prod_pairs<N>(ev, a, b[0]);
  t[0] = ev[0];
#pragma unroll
  for (int i = 1; i < N; i++) {
    uint32_t(&lo)[N] = i % 2 ? od : ev;
    uint32_t(&hi)[N] = i % 2 ? ev : od;
    lo[0] = ptx::add_cc(lo[0], hi[1]);
    mad_pairs_shift2<N>(hi, a + 1, b[i]);
    mad_pairs<N>(lo, a, b[i]);
    hi[N - 1] = ptx::addc(hi[N - 1], 0);
    t[i] = lo[0];
  }
  // N is even: the last row ran with (od, ev), so the rest is ev + od/2^32.
  t[N] = ptx::add_cc(ev[0], od[1]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[N + j] = ptx::addc_cc(ev[j], od[j + 1]);
  t[2 * N - 1] = ptx::addc(ev[N - 1], 0);
}

// reduce_row is row without the x·y products: m = t_0·inv, t += m·p, t /=
// 2^32, with the division folded into hi's chain as in row (lo_1 goes into
// the new lo_0, hi reads the old lo two limbs down).
template <class P>
CUZK_HD void reduce_row(uint32_t (&lo)[P::N], uint32_t (&hi)[P::N], const uint32_t (&p)[P::N]) {
  constexpr int N = P::N;
  const uint32_t m = (lo[0] + hi[1]) * inv_operand<P>();
  lo[0] = ptx::add_cc(lo[0], hi[1]);
  mad_pairs_shift2<N>(hi, p + 1, m);
  mad_pairs<N>(lo, p, m);
  hi[N - 1] = ptx::addc(hi[N - 1], 0);
}

// redc returns t·R^(−1) mod p for a 2N-limb t < p·R (Montgomery reduction
// on its own; Montgomery, "Modular multiplication without trial division",
// Math. Comp. 44, 1985). With t = lo + R·hi it reduces lo by N rows of
// reduce_row, giving (lo + M·p)/R ≤ p, and adds hi < p: the sum is below 2p
// and is reduced once. A row adds below 2^32·p to a running value that
// starts below R < 2^32·p, so it fits N + 1 limbs as in operator*.
template <class P>
CUZK_HD MontField<P> redc(const uint32_t (&t)[2 * P::N]) {
  constexpr int N = P::N;
  uint32_t p[N];
#pragma unroll
  for (int j = 0; j < N; j++) p[j] = P::mod(j);
  uint32_t ev[N], od[N];
#pragma unroll
  for (int j = 0; j < N; j++) ev[j] = t[j];
  const uint32_t m = ev[0] * inv_operand<P>();
  prod_pairs<N>(od, p + 1, m);
  mad_pairs<N>(ev, p, m);
  od[N - 1] = ptx::addc(od[N - 1], 0);
#pragma unroll
  for (int i = 1; i < N; i += 2) {
    reduce_row<P>(od, ev, p);
    if (i + 1 < N) reduce_row<P>(ev, od, p);
  }
  // N is even: the last row ran with (od, ev), so the value is ev + od/2^32.
  uint32_t r[N];
  r[0] = ptx::add_cc(ev[0], od[1]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r[j] = ptx::addc_cc(ev[j], od[j + 1]);
  r[N - 1] = ptx::addc(ev[N - 1], 0);
  r[0] = ptx::add_cc(r[0], t[N]);
#pragma unroll
  for (int j = 1; j < N - 1; j++) r[j] = ptx::addc_cc(r[j], t[N + j]);
  r[N - 1] = ptx::addc(r[N - 1], t[2 * N - 1]);
  return reduce_once<P>(r);
}

// wide_add and wide_sub set acc = acc ± x modulo 2^(64N): sums and
// differences of products kept as wrapped 2N-limb integers until
// redc_signed.
template <int N>
CUZK_HD void wide_add(uint32_t (&acc)[2 * N], const uint32_t (&x)[2 * N]) {
  acc[0] = ptx::add_cc(acc[0], x[0]);
#pragma unroll
  for (int j = 1; j < 2 * N - 1; j++) acc[j] = ptx::addc_cc(acc[j], x[j]);
  acc[2 * N - 1] = ptx::addc(acc[2 * N - 1], x[2 * N - 1]);
}
template <int N>
CUZK_HD void wide_sub(uint32_t (&acc)[2 * N], const uint32_t (&x)[2 * N]) {
  acc[0] = ptx::sub_cc(acc[0], x[0]);
#pragma unroll
  for (int j = 1; j < 2 * N - 1; j++) acc[j] = ptx::subc_cc(acc[j], x[j]);
  acc[2 * N - 1] = ptx::subc(acc[2 * N - 1], x[2 * N - 1]);
}

// redc_signed returns v·R^(−1) mod p for a signed v with −p·R < v < p·R,
// given wrapped modulo 2^(64N) in t. p·R < 2^(64N − 1) (both fields keep a
// spare top bit), so t's top bit is v's sign; a negative v gets p·R added,
// which lands it in [0, p·R) for redc.
template <class P>
CUZK_HD MontField<P> redc_signed(uint32_t (&t)[2 * P::N]) {
  constexpr int N = P::N;
  const uint32_t neg = 0u - (t[2 * N - 1] >> 31);
  t[N] = ptx::add_cc(t[N], P::mod(0) & neg);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[N + j] = ptx::addc_cc(t[N + j], P::mod(j) & neg);
  t[2 * N - 1] = ptx::addc(t[2 * N - 1], P::mod(N - 1) & neg);
  return redc<P>(t);
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
    mont::row<P>(ev, od, a.v, p, b.v[i], i == 0, 0);
    mont::row<P>(od, ev, a.v, p, b.v[i + 1], false, 0);
  }
  return mont::finish<P>(ev, od);
}

// mul_sub returns a·b − c·d as REDC(a·b + c·(p − d)): the rows of
// operator* with the second product added to each row before its reduction,
// 3N² products instead of 4N² for two multiplications and a subtraction. A
// row adds below 3·2^32·p, so t stays below 3p between rows and every row
// fits N + 1 limbs when p < 2^(32N − 2); the result is below
// 2p²/R + p < 2p. The point additions' y3 = R·(Q − X3) − Y·PPP is its use.
template <class P>
CUZK_HD MontField<P> mul_sub(const MontField<P>& a, const MontField<P>& b, const MontField<P>& c,
                             const MontField<P>& d) {
  constexpr int N = P::N;
  static_assert(P::mod(N - 1) < 0x40000000u, "mul_sub needs p < 2^(32N - 2)");
  const MontField<P> e = -d;
  uint32_t p[N];
#pragma unroll
  for (int j = 0; j < N; j++) p[j] = P::mod(j);
  uint32_t ev[N], od[N];
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    mont::row<P>(ev, od, a.v, p, b.v[i], i == 0, 0, c.v, e.v[i]);
    mont::row<P>(od, ev, a.v, p, b.v[i + 1], false, 0, c.v, e.v[i + 1]);
  }
  return mont::finish<P>(ev, od);
}

// sqr is a·a·R^(−1) mod p using a² = Σ_i a_i·2^(32i)·(a_i·2^(32i) +
// 2·Σ_{j>i} a_j·2^(32j)): the rows of operator* with row i's multiplicand
// cut to its limbs ≥ i, N(N+1)/2 products of a by a instead of N² (78
// against 144 for Fp), the N² of the reduction unchanged. The doubled
// limbs come from 2a = Σ b_j·2^(32j), b_j = a_j << 1 | a_(j−1) >> 31, except
// at limb i + 1, whose bit from a_i belongs to the row's own a_i·a_i. A row
// then adds up to 2^32·2p instead of 2^32·p, so t stays below 3p between
// rows (2p in operator*) and t + y·x + m·p below 3p + 3·2^32·p, which fits
// N + 1 limbs when p < 2^(32N − 2): fields without the two spare top bits
// (Fr) square by operator*. The result is REDC(a²) < 2p as before.
template <class P>
CUZK_HD MontField<P> sqr(const MontField<P>& a) {
  constexpr int N = P::N;
  if (P::mod(N - 1) >= 0x40000000u) return a * a;
  uint32_t p[N], b[N];
#pragma unroll
  for (int j = 0; j < N; j++) p[j] = P::mod(j);
  b[0] = a.v[0] << 1;
#pragma unroll
  for (int j = 1; j < N; j++) b[j] = (a.v[j] << 1) | (a.v[j - 1] >> 31);
  uint32_t ev[N], od[N];
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    uint32_t x[N];
    mont::sqr_operand<N>(x, a.v, b, i);
    mont::row<P>(ev, od, x, p, a.v[i], i == 0, i);
    mont::sqr_operand<N>(x, a.v, b, i + 1);
    mont::row<P>(od, ev, x, p, a.v[i + 1], false, i + 1);
  }
  return mont::finish<P>(ev, od);
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

// inverse returns a^(p−2), which is a^(−1) for a ≠ 0 (Fermat) and 0 for
// a = 0: square-and-multiply over the bits of p − 2 from the top, about
// 32·N squarings and half as many products. It serves one-time work (the
// MSM's tables of base multiples), not hot loops.
template <class P>
CUZK_HD MontField<P> inverse(const MontField<P>& a) {
  MontField<P> r = MontField<P>::one();
  for (int i = P::N - 1; i >= 0; i--) {
    const uint32_t e = i == 0 ? P::mod(0) - 2 : P::mod(i);  // p odd and > 2: no borrow
    for (int b = 31; b >= 0; b--) {
      r = sqr(r);
      if ((e >> b) & 1) r = r * a;
    }
  }
  return r;
}

}  // namespace cuzk

#endif  // CUZK_MONT_CUH
