// Multiplier throughput on one GPU (docs/perf.md, "Multiplier throughput"). Build and run from the
// repository root: nvcc -O3 -arch=sm_90 -o /tmp/imad docs/runs/mulrate/imad.cu && /tmp/imad
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
// Throughput of IMAD (32-bit mad.lo) and IMAD.WIDE (mad.wide.u32) with 8 independent chains per thread.
template <int W>
__global__ void k(uint32_t* out, uint32_t a, uint32_t b, int iters) {
  uint32_t x[8]; uint64_t y[8];
  for (int i = 0; i < 8; i++) { x[i] = threadIdx.x + i; y[i] = threadIdx.x * 3 + i; }
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int r = 0; r < 16; r++) {
#pragma unroll
      for (int i = 0; i < 8; i++) {
        if (W) asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(y[i]) : "r"((uint32_t)(y[i] >> 32)), "r"(a + i));  // IMAD.WIDE.U32
        else x[i] = x[i] * (a + i) + b;                                      // IMAD
      }
    }
  }
  uint32_t s = 0;
  for (int i = 0; i < 8; i++) s += x[i] + (uint32_t)y[i] + (uint32_t)(y[i] >> 32);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  const int threads = 256, blocks = sms * 8, iters = 2048;
  uint32_t* out; cudaMalloc(&out, blocks * threads * 4);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int w = 0; w < 2; w++) {
    for (int rep = 0; rep < 3; rep++) {
      cudaEventRecord(e0);
      if (w) k<1><<<blocks, threads>>>(out, 0x9e3779b9u, 7, iters); else k<0><<<blocks, threads>>>(out, 0x9e3779b9u, 7, iters);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      double ops = (double)blocks * threads * iters * 16 * 8;
      printf("%s rep %d: %.3f ms, %.1f G ops/s, %.1f lanes/clk/SM at %d MHz (max clock attribute)\n", w ? "IMAD.WIDE" : "IMAD", rep, ms, ops / ms / 1e6,
             ops / (ms * 1e-3) / sms / (clk * 1e3), clk / 1000);
    }
  }
  return 0;
}
