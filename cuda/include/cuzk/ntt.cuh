// ntt.cuh: radix-2 number-theoretic transform passes over a prime field,
// generic in the field type F, which must offer F + F, F − F and F · F
// (Montgomery multiplication) on values of sizeof(F) = 32 bytes.
//
// A transform of n = 2^L elements runs as a few global passes; a pass owns the
// k butterfly bits [lo, lo+k) of the element index and runs those k radix-2
// stages in shared memory on blocks of 2^(k+logG) elements (2^logG groups of
// 2^k elements). prover/gpu/plan.go chooses the passes and documents the
// layout; prover/gpu/plan_test.go holds a CPU model of exactly this code,
// checked against gnark-crypto.
//
// Twiddles come from the per-size table w[i] = ω^i, i < n/2. The butterfly on
// bit p between addr0 (bit p clear) and addr0 + 2^p uses ω^e with
// e = (addr0 mod 2^p)·2^(L−1−p); an inverse transform needs ω^−e, which is
// −w[n/2 − e] for e > 0, so it reads that entry and swaps add and subtract
// instead of negating.
#ifndef CUZK_NTT_CUH
#define CUZK_NTT_CUH

#include <stdint.h>

// The header compiles for the device (nvcc) and, for checking the kernels'
// arithmetic without a GPU, for the host, where a block runs as one thread
// (every loop below strides by blockDim.x, so that is a valid schedule) and
// the barrier is a no-op.
#if defined(__CUDACC__)
#define CUZK_NTT_HD __device__ __forceinline__
#define CUZK_NTT_SYNC() __syncthreads()
#else
#define CUZK_NTT_HD inline
#define CUZK_NTT_SYNC() ((void)0)
// Host stand-ins for the thread-index built-ins; a host driver sets them
// before running a kernel body.
struct cuzk_ntt_dim3 { uint32_t x, y, z; };
inline thread_local cuzk_ntt_dim3 threadIdx, blockIdx, blockDim;
#endif

namespace cuzk {
namespace ntt {

// Pass describes one global pass (see prover/gpu/plan.go).
struct Pass {
  uint32_t logN, lo, k, logG, sh;
};

// insert_zero returns u with a zero bit inserted at position b.
CUZK_NTT_HD uint32_t insert_zero(uint32_t u, uint32_t b) {
  return ((u >> b) << (b + 1)) | (u & ((1u << b) - 1));
}

// addr returns the global index of shared-memory element e of block blk.
CUZK_NTT_HD uint32_t addr(const Pass& p, uint32_t blk, uint32_t e) {
  uint32_t t = (e >> p.sh) & ((1u << p.k) - 1);
  uint32_t gl = (e & ((1u << p.sh) - 1)) | ((e >> (p.sh + p.k)) << p.sh);
  uint32_t g = (blk << p.logG) | gl;
  return ((g >> p.lo) << (p.lo + p.k)) | (t << p.lo) | (g & ((1u << p.lo) - 1));
}

// bitrev returns i with its low logN bits reversed (logN ≥ 1).
CUZK_NTT_HD uint32_t bitrev(uint32_t i, uint32_t logN) {
#if defined(__CUDACC__)
  return __brev(i) >> (32 - logN);
#else
  uint32_t r = 0;
  for (int b = 0; b < 32; b++) r |= ((i >> b) & 1u) << (31 - b);
  return r >> (32 - logN);
#endif
}

// Scale is a factor table pair: factor(j) = lo[j mod 2^s] · hi[j >> s]. A
// null lo means no scaling. Both tables are small (about 2^(L/2) entries), so
// they stay in cache.
template <class F>
struct Scale {
  const F* lo;
  const F* hi;
  uint32_t s;

  CUZK_NTT_HD bool on() const { return lo != nullptr; }
  CUZK_NTT_HD F factor(uint32_t j) const {
    return lo[j & ((1u << s) - 1)] * hi[j >> s];
  }
};

// twiddle returns the factor of the butterfly on bit pos whose lower element
// has global index a0, and whether it must be negated (inverse transforms).
template <class F>
CUZK_NTT_HD F twiddle(const F* w, uint32_t logN, uint32_t pos, uint32_t a0,
                                     bool inverse, bool& neg) {
  uint32_t ex = (a0 & ((1u << pos) - 1)) << (logN - 1 - pos);
  neg = inverse && ex != 0;
  return w[neg ? (1u << (logN - 1)) - ex : ex];
}

// dif_butterfly: (x, y) ← (x + y, (x − y)·tw), or (x + y, (y − x)·tw) when
// neg (the twiddle is −tw).
template <class F>
CUZK_NTT_HD void dif_butterfly(F& x, F& y, const F& tw, bool neg) {
  F u = x, v = y;
  x = u + v;
  y = (neg ? v - u : u - v) * tw;
}

// dit_butterfly: t = y·tw; (x, y) ← (x + t, x − t), or (x − t, x + t) when neg.
template <class F>
CUZK_NTT_HD void dit_butterfly(F& x, F& y, const F& tw, bool neg) {
  F t = y * tw;
  F u = x;
  x = neg ? u - t : u + t;
  y = neg ? u + t : u - t;
}

// butterfly runs butterfly number u of the stage on relative bit q. On bit 0
// every twiddle is ω^0 = 1, so the multiplication is skipped there.
template <class F, bool dif>
CUZK_NTT_HD void butterfly(F* smem, const F* w, const Pass& p, uint32_t blk, uint32_t q, uint32_t u,
                           bool inverse) {
  const uint32_t bit = p.sh + q, pos = p.lo + q;
  const uint32_t e0 = insert_zero(u, bit), e1 = e0 | (1u << bit);
  F x = smem[e0], y = smem[e1];
  if (pos == 0) {
    F a = x;
    x = a + y;
    y = a - y;
  } else {
    bool neg;
    F tw = twiddle(w, p.logN, pos, addr(p, blk, e0), inverse, neg);
    if (dif) {
      dif_butterfly(x, y, tw, neg);
    } else {
      dit_butterfly(x, y, tw, neg);
    }
  }
  smem[e0] = x;
  smem[e1] = y;
}

// run_pass executes pass p of a DIF (dif = true, bits from high to low) or DIT
// transform on data, block blockIdx.x, with smem holding 2^(k+logG) elements.
// Loads are multiplied by scale.factor(bitrev(addr)) when scale is on.
template <class F, bool dif>
CUZK_NTT_HD void run_pass(F* data, const F* w, const Pass& p, bool inverse, const Scale<F>& scale, F* smem) {
  const uint32_t blk = blockIdx.x;
  const uint32_t elems = 1u << (p.k + p.logG), step = blockDim.x;
  for (uint32_t e = threadIdx.x; e < elems; e += step) {
    uint32_t a = addr(p, blk, e);
    F x = data[a];
    if (scale.on()) x = x * scale.factor(bitrev(a, p.logN));
    smem[e] = x;
  }
  CUZK_NTT_SYNC();
  for (uint32_t st = 0; st < p.k; st++) {
    const uint32_t q = dif ? p.k - 1 - st : st;
    for (uint32_t u = threadIdx.x; u < elems / 2; u += step) butterfly<F, dif>(smem, w, p, blk, q, u, inverse);
    CUZK_NTT_SYNC();
  }
  for (uint32_t e = threadIdx.x; e < elems; e += step) data[addr(p, blk, e)] = smem[e];
}

// pow_chunk writes t[i] = c·base^i for i in [i0, i0+cnt), starting from one
// exponentiation by squaring.
template <class F>
CUZK_NTT_HD void pow_chunk(F* t, const F& base, const F& c, uint32_t i0, uint32_t cnt) {
  F acc = c, sq = base;
  for (uint32_t e = i0; e != 0; e >>= 1) {
    if (e & 1) acc = acc * sq;
    sq = sq * sq;
  }
  for (uint32_t i = 0; i < cnt; i++) {
    t[i0 + i] = acc;
    acc = acc * base;
  }
}

}  // namespace ntt
}  // namespace cuzk

#endif  // CUZK_NTT_CUH
