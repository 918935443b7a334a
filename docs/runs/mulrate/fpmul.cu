// Throughput of cuzk's Fp and Fr multiplication alone (docs/perf.md, "Multiplier throughput"). From the
// repository root: nvcc -O3 -arch=sm_90 -I cuda/include -o /tmp/fpmul docs/runs/mulrate/fpmul.cu && /tmp/fpmul
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include "cuzk/fp.cuh"
#include "cuzk/fr.cuh"
// Throughput of cuzk's Montgomery multiplication: every thread runs two interleaved dependent chains.
template <class F>
__global__ void k(F* out, int iters) {
  F a, b;
  for (int i = 0; i < F::N; i++) { a.v[i] = threadIdx.x * 2654435761u + i; b.v[i] = blockIdx.x * 40503u + i; }
  a.v[F::N - 1] &= 0x0fffffffu; b.v[F::N - 1] &= 0x0fffffffu;
  for (int it = 0; it < iters; it++) { a = a * b; b = b * a; }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}
template <class F>
void run(const char* name, int sms, int clk, int blocksPerSM, int threads) {
  const int blocks = sms * blocksPerSM, iters = 4096;
  F* out; cudaMalloc(&out, sizeof(F) * blocks * threads);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int rep = 0; rep < 3; rep++) {
    cudaEventRecord(e0);
    k<F><<<blocks, threads>>>(out, iters);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    double muls = 2.0 * blocks * threads * iters;
    printf("%s %d blocks/SM x %d: %.2f ms, %.1f Gmul/s, %.3f mul/clk/SM (at the %d MHz attribute) err=%s\n", name, blocksPerSM, threads, ms,
           muls / ms / 1e6, muls / (ms * 1e-3) / sms / (clk * 1e3), clk / 1000, cudaGetErrorString(cudaGetLastError()));
  }
  cudaFree(out);
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  run<cuzk::ec::Fp>("Fp", sms, clk, 8, 256);
  run<cuzk::ec::Fp>("Fp", sms, clk, 4, 256);
  run<cuzk::Fr>("Fr", sms, clk, 8, 256);
  return 0;
}
