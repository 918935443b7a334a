// ec_arch.cuh: compilation-target glue for cuzk's elliptic-curve and MSM code.
//
// The field, curve and MSM headers are written once and compiled two ways:
// by nvcc for the device (the fatbins cuzk ships), and by a plain C++
// compiler for the host, where ptx.cuh emulates the carry-chain
// instructions and the CUDA built-ins used by the MSM kernels (thread
// indices, atomics) are replaced by sequential stand-ins below. The host
// build runs the exact instruction sequence of the device code, so the
// arithmetic can be checked without a GPU.
#ifndef CUZK_EC_ARCH_CUH
#define CUZK_EC_ARCH_CUH

#include <stdint.h>

#include "cuzk/ptx.cuh"

#if defined(__CUDACC__)
#include <cuda_pipeline_primitives.h>
#endif

#if defined(__CUDACC__)
// CUZK_CALL marks a function compiled once per kernel and called, not
// inlined: a point addition or Fp2 product inlined at every use makes the
// units many times larger and slower to compile for little speed.
#define CUZK_CALL __device__ __noinline__
#define CUZK_KERNEL extern "C" __global__
// CUZK_SHARED declares a block's shared memory; on the host, where a
// block's threads run one after another, a static array stands in.
#define CUZK_SHARED __shared__
#else
#define CUZK_CALL inline
#define CUZK_KERNEL inline
#define CUZK_SHARED static
#define __restrict__
#define __launch_bounds__(...)
#endif

namespace cuzk {
namespace ec {

// load16 reads *p (16-byte aligned, a multiple of 16 bytes) with 16-byte
// read-only loads instead of one load per 32-bit limb.
template <class T>
CUZK_HD T load16(const T* __restrict__ p) {
  static_assert(sizeof(T) % 16 == 0, "load16 needs a multiple of 16 bytes");
#if defined(__CUDACC__)
  T r;
  const uint4* s = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = __ldg(s + i);
  return r;
#else
  return *p;
#endif
}

// store16 writes v to *p (16-byte aligned) with 16-byte stores.
template <class T>
CUZK_HD void store16(T* __restrict__ p, const T& v) {
  static_assert(sizeof(T) % 16 == 0, "store16 needs a multiple of 16 bytes");
#if defined(__CUDACC__)
  const uint4* s = reinterpret_cast<const uint4*>(&v);
  uint4* d = reinterpret_cast<uint4*>(p);
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
#else
  *p = v;
#endif
}

// copy_async starts copying *src (16-byte aligned, a multiple of 16 bytes)
// to *dst in shared memory with cp.async (sm_80 and later): the data does not
// pass through registers, so a thread can fetch its next operand while its
// registers hold the current one. wait_copies waits for the thread's
// started copies. On the host the copy is immediate.
template <class T>
CUZK_HD void copy_async(T* dst, const T* __restrict__ src) {
  static_assert(sizeof(T) % 16 == 0, "copy_async needs a multiple of 16 bytes");
#if defined(__CUDACC__)
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 16); i++)
    __pipeline_memcpy_async(reinterpret_cast<uint4*>(dst) + i, reinterpret_cast<const uint4*>(src) + i, 16);
  __pipeline_commit();
#else
  *dst = *src;
#endif
}

CUZK_HD void wait_copies() {
#if defined(__CUDACC__)
  __pipeline_wait_prior(0);
#endif
}

#if defined(__CUDACC__)
// run_phases runs a block-wise kernel body: phase(p) for p < P, with a
// block barrier between phases. The host runs such bodies with a phased
// launch instead (every thread's phase p, then phase p+1), which is the
// same schedule.
template <uint32_t P, class F>
__device__ __forceinline__ void run_phases(F&& phase) {
#pragma unroll
  for (uint32_t p = 0; p < P; p++) {
    if (p != 0) __syncthreads();
    phase(p);
  }
}
#endif

}  // namespace ec
}  // namespace cuzk

#if !defined(__CUDACC__)
// Sequential stand-ins for the CUDA built-ins the MSM kernels use. A host
// driver sets blockIdx/threadIdx/blockDim before calling a kernel body once
// per thread; kernels without block barriers then run their threads one
// after another, a valid schedule, and block-wise ones phase by phase.
struct cuzk_dim3 { unsigned x, y, z; };
inline thread_local cuzk_dim3 threadIdx, blockIdx, blockDim, gridDim;
inline uint32_t atomicAdd(uint32_t* p, uint32_t v) { uint32_t o = *p; *p = o + v; return o; }
inline uint32_t atomicMax(uint32_t* p, uint32_t v) { uint32_t o = *p; if (v > o) *p = v; return o; }
#endif

#endif  // CUZK_EC_ARCH_CUH
