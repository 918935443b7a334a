// vec.cuh: elementwise kernels over arrays of field elements.
//
// map1 and map2 run a grid-stride loop (each thread handles indices
// i, i + gridDim·blockDim, ...), so any launch shape covers any n; the host
// typically launches 256-thread blocks, a few per multiprocessor. Elements
// move as 16-byte vector loads and stores (sizeof(F) a multiple of 16,
// 16-byte aligned, as cuMemAlloc's 256-byte alignment guarantees for arrays).
// Each element is read before it is written by the same thread, so out may
// alias an input.
#ifndef CUZK_VEC_CUH
#define CUZK_VEC_CUH

#include <stddef.h>

#include "cuzk/ptx.cuh"

namespace cuzk {
namespace vec {

struct alignas(16) U128 {
  uint32_t w[4];
};

template <class F>
CUZK_HD F load(const F* p) {
  static_assert(sizeof(F) % 16 == 0, "element size must be a multiple of 16 bytes");
  F r;
  const U128* q = reinterpret_cast<const U128*>(p);
  U128* d = reinterpret_cast<U128*>(&r);
#pragma unroll
  for (int k = 0; k < (int)(sizeof(F) / 16); k++) d[k] = q[k];
  return r;
}

template <class F>
CUZK_HD void store(F* p, const F& v) {
  U128* q = reinterpret_cast<U128*>(p);
  const U128* s = reinterpret_cast<const U128*>(&v);
#pragma unroll
  for (int k = 0; k < (int)(sizeof(F) / 16); k++) q[k] = s[k];
}

#if defined(__CUDACC__)
__device__ __forceinline__ size_t first() { return (size_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t stride() { return (size_t)gridDim.x * blockDim.x; }

// map1 sets out[i] = op(a[i]) for i < n.
template <class F, class Op>
__device__ __forceinline__ void map1(F* out, const F* a, size_t n, Op op) {
  for (size_t i = first(); i < n; i += stride()) store(out + i, op(load(a + i)));
}

// map2 sets out[i] = op(a[i], b[i]) for i < n.
template <class F, class Op>
__device__ __forceinline__ void map2(F* out, const F* a, const F* b, size_t n, Op op) {
  for (size_t i = first(); i < n; i += stride()) store(out + i, op(load(a + i), load(b + i)));
}
#endif

}  // namespace vec
}  // namespace cuzk

#endif  // CUZK_VEC_CUH
