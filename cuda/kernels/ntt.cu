// ntt.cu: number-theoretic transforms over the BLS12-381 scalar field Fr,
// and the pointwise steps of the Groth16 quotient h = (a·b − c)/Z.
//
// Elements are 8 little-endian 32-bit limbs in Montgomery form (R = 2^256),
// the memory layout of gnark-crypto's fr.Element, so host vectors copy to the
// device byte for byte. prover/gpu drives these kernels: it plans the passes
// (plan.go), builds the twiddle and scale tables with ntt_powers and checks
// every result against gnark-crypto. The pass kernels run their stages in
// registers, up to three per shared-memory round trip (ntt.cuh describes the
// design); prover/gpu/testdata/ntt_emulate.cc compiles this file for the host
// and runs it in ntt.go's launch order.
#include "cuzk/fr.cuh"
#include "cuzk/ntt.cuh"

using F = cuzk::Fr;
using cuzk::ntt::Pass;
using cuzk::ntt::Scale;

#if defined(__CUDACC__)
#define NTT_KERNEL(...) extern "C" __global__ void __launch_bounds__(__VA_ARGS__)
#define NTT_SHARED __shared__
#else
#define NTT_KERNEL(...) inline void
#define NTT_SHARED static
#endif

// kBlockElems is the shared-memory capacity of a pass block in elements
// (prover/gpu/plan.go: logBlockElems); kPassThreads its largest block size
// (plan.go: maxThreads), one thread per 2^kRegLog = 8 elements, each thread
// running its stages in registers (see ntt.cuh).
constexpr uint32_t kBlockElems = 1u << 10;
constexpr uint32_t kPassThreads = kBlockElems >> cuzk::ntt::kRegLog;
// kPassBlocks is the number of pass blocks per SM the register budget is
// sized for: 4 × 128 threads caps a thread at 128 registers (65536 per SM),
// 16 warps per SM, and 4 × 32 KiB of shared memory.
constexpr uint32_t kPassBlocks = 4;

// ntt_dif_pass runs the DIF stages on bits [lo, lo+k), highest first, in
// place.
NTT_KERNEL(kPassThreads, kPassBlocks)
ntt_dif_pass(F* __restrict__ data, const F* __restrict__ w, uint32_t logN, uint32_t lo, uint32_t k,
             uint32_t logG, uint32_t sh, uint32_t inverse) {
  NTT_SHARED uint4 raw[kBlockElems * sizeof(F) / sizeof(uint4)];
  const Pass p{logN, lo, k, logG, sh};
  const Scale<F> none{nullptr, nullptr, 0};
  cuzk::ntt::run_pass<F, true>(data, nullptr, w, p, inverse != 0, none, raw);
}

// ntt_dit_pass runs the DIT stages on bits [lo, lo+k), lowest first. With
// src non-null (the first pass, lo = 0) it reads src in bit-reversed order
// and writes data; otherwise it works on data in place. When slo is
// non-null, each element is multiplied on load by the scale factor of its
// source index (a coset shift).
NTT_KERNEL(kPassThreads, kPassBlocks)
ntt_dit_pass(F* __restrict__ data, const F* __restrict__ src, const F* __restrict__ w, uint32_t logN,
             uint32_t lo, uint32_t k, uint32_t logG, uint32_t sh, uint32_t inverse, const F* __restrict__ slo,
             const F* __restrict__ shi, uint32_t s) {
  NTT_SHARED uint4 raw[kBlockElems * sizeof(F) / sizeof(uint4)];
  const Pass p{logN, lo, k, logG, sh};
  const Scale<F> scale{slo, shi, s};
  cuzk::ntt::run_pass<F, false>(data, src, w, p, inverse != 0, scale, raw);
}

// ntt_powers writes t[i] = c·base^i for i < count; thread j writes the chunk
// [j·chunk, (j+1)·chunk).
NTT_KERNEL(128)
ntt_powers(F* __restrict__ t, F base, F c, uint32_t count, uint32_t chunk) {
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t i0 = j * chunk;
  if (i0 >= count) return;
  cuzk::ntt::pow_chunk(t, base, c, i0, count - i0 < chunk ? count - i0 : chunk);
}

// ntt_bitrev writes dst[j] = src[rev(j)] (2^logN elements, dst ≠ src),
// multiplied by the scale factor of j when slo is non-null: the stores are
// coalesced, the loads 32-byte sectors.
NTT_KERNEL(256)
ntt_bitrev(F* __restrict__ dst, const F* __restrict__ src, uint32_t logN, const F* __restrict__ slo,
           const F* __restrict__ shi, uint32_t s) {
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= (1u << logN)) return;
  const Scale<F> scale{slo, shi, s};
  const F x = src[cuzk::ntt::bitrev(j, logN)];
  dst[j] = scale.on() ? x * scale.factor(j) : x;
}

// ntt_quotient sets a[i] = (a[i]·b[i] − c[i])·den for i < n: the division by
// the vanishing polynomial, constant (den = 1/(g^n − 1)) on the coset g·H.
NTT_KERNEL(256)
ntt_quotient(F* __restrict__ a, const F* __restrict__ b, const F* __restrict__ c, F den, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] * b[i] - c[i]) * den;
}

// ntt_mul and ntt_sub_scale are ntt_quotient in two steps, for a quotient
// that holds two vectors at a time (prover/gpu's lean quotient): a = a·b
// while b's storage is then refilled with c, and a = (a − c)·den.
NTT_KERNEL(256)
ntt_mul(F* __restrict__ a, const F* __restrict__ b, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = a[i] * b[i];
}

NTT_KERNEL(256)
ntt_sub_scale(F* __restrict__ a, const F* __restrict__ c, F den, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] - c[i]) * den;
}
