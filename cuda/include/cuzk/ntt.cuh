// ntt.cuh: number-theoretic transform passes over a prime field, generic in
// the field type F, which must offer F + F, F − F, −F and F · F (Montgomery
// multiplication) on values of sizeof(F) = 32 bytes.
//
// A transform of n = 2^L elements runs as a few global passes; a pass owns the
// k butterfly bits [lo, lo+k) of the element index and runs those k radix-2
// stages on blocks of 2^(k+logG) elements (2^logG groups of 2^k elements)
// held in shared memory. prover/gpu/plan.go chooses the passes and documents
// the layout; prover/gpu/plan_test.go holds a CPU model of this code, and
// prover/gpu/ntt_host_test.go runs this very code on the host
// (testdata/ntt_emulate.cc); both are checked against gnark-crypto.
//
// Register stages. The k stages of a pass are cut into chunks of R ≤ 3
// consecutive bits (as even as possible, see chunk_bits). For a chunk, each
// thread copies the 2^R elements of one chunk "item" (the elements that
// differ only in the chunk's bits) from shared memory into registers, runs
// the R radix-2 stages there (a radix-2^R step built from radix-2
// butterflies: the same multiplications, but one shared-memory round trip,
// one address computation and one barrier per R stages instead of per stage)
// and writes them back. A block has 2^(k+logG−3) threads, so a thread runs
// one item of an R = 3 chunk and two (four) of an R = 2 (R = 1) chunk. The
// phases of a pass are: load (global → shared, coalesced, optional scaling),
// the chunks, store (shared → global, coalesced), with a barrier between
// phases; every phase is a loop strided by blockDim.x, so any block size is
// a valid schedule.
//
// Twiddles come from the per-size table w[i] = ω^i, i < n/2. The butterfly on
// bit p between addr0 (bit p clear) and addr0 + 2^p uses ω^e with
// e = (addr0 mod 2^p)·2^(L−1−p). Within a chunk item that is
// e = abase·2^(L−1−p) + jlow·2^(L−1−i) for the stage on chunk bit i
// (p = lo + q0 + i), with abase the item's address below the chunk and jlow
// the register index's bits below i, so a stage on chunk bit i needs only 2^i
// distinct twiddles for its 2^(R−1) butterflies: 7 global loads for the 12
// butterflies of an R = 3 item. In the chunk that starts at absolute bit 0
// (abase = 0) every twiddle with jlow = 0 is ω^0 = 1 and is neither loaded
// nor multiplied. An inverse transform needs ω^−e, which is −w[n/2 − e] for
// e > 0: it loads that entry and negates it once per twiddle.
//
// Shared memory holds each element as two 16-byte halves at swizzled slots
// (see slot) so that the 128-bit accesses of every phase are free of bank
// conflicts.
#ifndef CUZK_NTT_CUH
#define CUZK_NTT_CUH

#include <stdint.h>

// The header compiles for the device (nvcc) and, for checking the kernels
// without a GPU, for the host. There a host driver sets the thread-index
// stand-ins below before running a kernel body, and CUZK_NTT_SYNC() calls
// cuzk_ntt_barrier when set: a driver that runs a block's threads as
// coroutines (testdata/ntt_emulate.cc) switches threads there. Unset, the
// barrier is a no-op, valid for a block run as one thread (blockDim.x = 1).
#if defined(__CUDACC__)
#define CUZK_NTT_HD __device__ __forceinline__
#define CUZK_NTT_SYNC() __syncthreads()
#else
#define CUZK_NTT_HD inline
struct cuzk_ntt_dim3 { uint32_t x, y, z; };
inline thread_local cuzk_ntt_dim3 threadIdx, blockIdx, blockDim;
inline thread_local void (*cuzk_ntt_barrier)() = nullptr;
#define CUZK_NTT_SYNC() (cuzk_ntt_barrier != nullptr ? cuzk_ntt_barrier() : (void)0)
struct uint4 { uint32_t x, y, z, w; };
#endif

namespace cuzk {
namespace ntt {

// kRegLog is log2 of the elements one thread holds in registers; a pass
// block has 2^(k+logG−kRegLog) threads (prover/gpu/plan.go: pass.threads).
constexpr uint32_t kRegLog = 3;

// Pass describes one global pass (see prover/gpu/plan.go).
struct Pass {
  uint32_t logN, lo, k, logG, sh;
};

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

// slot returns the 16-byte shared-memory slot of half h of element e. Four
// elements (eight slots, 128 bytes: one sweep of the 32 banks) form a row,
// and the slot inside the row is (e0 ⊕ e3 ⊕ e4) + 2·(e1 ⊕ e3 ⊕ e5) +
// 4·(h ⊕ e2 ⊕ e3 ⊕ e4 ⊕ e5) in the bits e_i of e. A 128-bit access is served
// by quarter warps of 8 threads; every phase's quarter warp varies three
// bits of e among {0, …, 5} (the three lowest bits outside the chunk), and
// for each such triple this map is one-to-one, so the 8 threads hit 8
// different bank quads.
CUZK_NTT_HD uint32_t slot(uint32_t e, uint32_t h) {
  const uint32_t x = e ^ (e >> 3) ^ (e >> 4);              // bit 0: e0 ⊕ e3 ⊕ e4
  const uint32_t y = (e >> 1) ^ (e >> 3) ^ (e >> 5);       // bit 0: e1 ⊕ e3 ⊕ e5
  const uint32_t z = h ^ (e >> 2) ^ (e >> 3) ^ (e >> 4) ^ (e >> 5);
  return ((e >> 2) << 3) | (x & 1u) | ((y & 1u) << 1) | ((z & 1u) << 2);
}

template <class F>
CUZK_NTT_HD F smem_load(const uint4* s, uint32_t e) {
  static_assert(sizeof(F) == 2 * sizeof(uint4), "an element is two 16-byte halves");
  F x;
  uint4* v = reinterpret_cast<uint4*>(&x);
  v[0] = s[slot(e, 0)];
  v[1] = s[slot(e, 1)];
  return x;
}

template <class F>
CUZK_NTT_HD void smem_store(uint4* s, uint32_t e, const F& x) {
  const uint4* v = reinterpret_cast<const uint4*>(&x);
  s[slot(e, 0)] = v[0];
  s[slot(e, 1)] = v[1];
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

// twiddle returns ω^ex, or ω^−ex = −w[n/2 − ex] (ex > 0) when inverse.
template <class F>
CUZK_NTT_HD F twiddle(const F* w, uint32_t logN, uint32_t ex, bool inverse) {
  const bool neg = inverse && ex != 0;
  const F t = w[neg ? (1u << (logN - 1)) - ex : ex];
  return neg ? -t : t;
}

// bfly runs the radix-2 butterfly on (x, y): DIF (x + y, (x − y)·tw) or DIT
// (x + y·tw, x − y·tw); one is true when tw = 1 is known, skipping the
// multiplication.
template <class F, bool dif>
CUZK_NTT_HD void bfly(F& x, F& y, const F& tw, bool one) {
  if (dif) {
    const F d = x - y;
    x = x + y;
    y = one ? d : d * tw;
  } else {
    const F t = one ? y : y * tw;
    y = x - t;
    x = x + t;
  }
}

// chunk_bits returns the size of chunk c (from bit 0 up) of a pass of k
// bits, cut into ⌈k/3⌉ chunks as evenly as possible, larger ones on top.
CUZK_NTT_HD uint32_t chunk_bits(uint32_t k, uint32_t c) {
  const uint32_t nc = (k + 2) / 3;
  return k / nc + (c >= nc - k % nc ? 1u : 0u);
}

// run_chunk runs the R stages on the pass's relative bits [q0, q0+R) (DIF:
// highest first) on every item of block blk; base0 is lo + q0 == 0.
template <class F, bool dif, uint32_t R, bool base0>
CUZK_NTT_HD void run_chunk(uint4* smem, const F* w, const Pass& p, uint32_t blk, uint32_t q0, bool inverse) {
  constexpr uint32_t M = 1u << R;
  const uint32_t b = p.sh + q0;                        // shared-memory index bit of chunk bit 0
  const uint32_t items = 1u << (p.k + p.logG - R);
  const uint32_t s0 = p.logN - 1 - p.lo - q0;          // twiddle shift of chunk bit 0
  for (uint32_t v = threadIdx.x; v < items; v += blockDim.x) {
    const uint32_t e0 = ((v >> b) << (b + R)) | (v & ((1u << b) - 1));
    // The item's address below the chunk (the chunk's own bits are zero in e0).
    const uint32_t abase = addr(p, blk, e0) & ((1u << (p.lo + q0)) - 1);
    F x[M];
#pragma unroll
    for (uint32_t j = 0; j < M; j++) x[j] = smem_load<F>(smem, e0 | (j << b));
#pragma unroll
    for (uint32_t st = 0; st < R; st++) {
      const uint32_t i = dif ? R - 1 - st : st;        // chunk bit of this stage
      const uint32_t half = 1u << i;
#pragma unroll
      for (uint32_t jlow = 0; jlow < half; jlow++) {
        const bool one = base0 && jlow == 0;
        F tw{};  // unused when one
        if (!one) tw = twiddle(w, p.logN, (abase << (s0 - i)) | (jlow << (p.logN - 1 - i)), inverse);
#pragma unroll
        for (uint32_t j = jlow; j < M; j += 2 * half) bfly<F, dif>(x[j], x[j + half], tw, one);
      }
    }
#pragma unroll
    for (uint32_t j = 0; j < M; j++) smem_store(smem, e0 | (j << b), x[j]);
  }
}

// chunk runs chunk [q0, q0+R) through the instance of run_chunk for R.
template <class F, bool dif>
CUZK_NTT_HD void chunk(uint4* smem, const F* w, const Pass& p, uint32_t blk, uint32_t q0, uint32_t R,
                       bool inverse) {
  const bool base0 = p.lo + q0 == 0;
  if (R == 3) {
    if (base0) run_chunk<F, dif, 3, true>(smem, w, p, blk, q0, inverse);
    else run_chunk<F, dif, 3, false>(smem, w, p, blk, q0, inverse);
  } else if (R == 2) {
    if (base0) run_chunk<F, dif, 2, true>(smem, w, p, blk, q0, inverse);
    else run_chunk<F, dif, 2, false>(smem, w, p, blk, q0, inverse);
  } else {
    if (base0) run_chunk<F, dif, 1, true>(smem, w, p, blk, q0, inverse);
    else run_chunk<F, dif, 1, false>(smem, w, p, blk, q0, inverse);
  }
}

// gather_addr is addr for the gathering first pass of a DIT transform
// (lo = 0, sh = 0), which reads its input from a second vector at
// bit-reversed indices: its block blk holds the groups g whose reversed index
// (over the logN − k group bits) is blk·2^logG + j, j < 2^logG, so that the
// sources of a block's element t, rev(g·2^k + t) = rev(t)·2^(logN−k) +
// blk·2^logG + j, form runs of 2^logG consecutive elements. The chunks'
// twiddles depend only on the low lo + q0 ≤ k bits of an address, t's bits,
// so the group order does not change them.
CUZK_NTT_HD uint32_t gather_addr(const Pass& p, uint32_t blk, uint32_t e) {
  const uint32_t t = e & ((1u << p.k) - 1), j = e >> p.k;
  const uint32_t gbits = p.logN - p.k;
  const uint32_t g = gbits == 0 ? 0 : bitrev((blk << p.logG) | j, gbits);
  return (g << p.k) | t;
}

// gather_elem returns the shared-memory element that the gathering pass
// loads f-th: the group index j (f's low logG bits) runs fastest, so that a
// warp reads runs of 2^logG consecutive sources.
CUZK_NTT_HD uint32_t gather_elem(const Pass& p, uint32_t f) {
  return ((f & ((1u << p.logG) - 1)) << p.k) | (f >> p.logG);
}

// run_pass executes pass p of a DIF (dif = true, bits from high to low) or DIT
// transform on data, block blockIdx.x, with smem holding 2^(k+logG) elements
// (2^(k+logG+1) slots). With src non-null (DIT, lo = 0: the first pass) the
// pass gathers: element a of data is loaded from src[rev(a)], so a DIT
// transform reads natural order from src and writes natural order to data
// with no separate bit reversal; src is not written. Loads are multiplied by
// scale.factor(rev(a)) when scale is on (the factor of the source index).
template <class F, bool dif>
CUZK_NTT_HD void run_pass(F* data, const F* src, const F* w, const Pass& p, bool inverse, const Scale<F>& scale,
                          uint4* smem) {
  constexpr uint32_t M = 1u << kRegLog;
  const uint32_t blk = blockIdx.x;
  const uint32_t elems = 1u << (p.k + p.logG), step = blockDim.x;
  const bool gather = src != nullptr;
  // Load: M elements per thread and round, all loads issued before the
  // first store so that their latencies overlap; a gathering pass walks the
  // block's elements in gather_elem order.
  for (uint32_t f0 = threadIdx.x; f0 < elems; f0 += M * step) {
    F x[M];
    uint32_t a[M];
#pragma unroll
    for (uint32_t j = 0; j < M; j++) {
      const uint32_t f = f0 + j * step;
      if (f >= elems) continue;
      if (gather) {
        a[j] = bitrev(gather_addr(p, blk, gather_elem(p, f)), p.logN);
        x[j] = src[a[j]];
      } else {
        a[j] = addr(p, blk, f);
        x[j] = data[a[j]];
      }
    }
#pragma unroll
    for (uint32_t j = 0; j < M; j++) {
      const uint32_t f = f0 + j * step;
      if (f >= elems) continue;
      const uint32_t e = gather ? gather_elem(p, f) : f;
      if (scale.on()) x[j] = x[j] * scale.factor(gather ? a[j] : bitrev(a[j], p.logN));
      smem_store(smem, e, x[j]);
    }
  }
  CUZK_NTT_SYNC();
  const uint32_t nc = (p.k + 2) / 3;
  uint32_t q0 = dif ? p.k : 0;
  for (uint32_t c = 0; c < nc; c++) {
    const uint32_t R = chunk_bits(p.k, dif ? nc - 1 - c : c);
    if (dif) q0 -= R;
    chunk<F, dif>(smem, w, p, blk, q0, R, inverse);
    if (!dif) q0 += R;
    CUZK_NTT_SYNC();
  }
  for (uint32_t e0 = threadIdx.x; e0 < elems; e0 += M * step) {
#pragma unroll
    for (uint32_t j = 0; j < M; j++) {
      const uint32_t e = e0 + j * step;
      if (e >= elems) continue;
      data[gather ? gather_addr(p, blk, e) : addr(p, blk, e)] = smem_load<F>(smem, e);
    }
  }
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
