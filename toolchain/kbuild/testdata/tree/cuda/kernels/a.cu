#include "fx/only_a.cuh"
extern "C" __global__ void fx_kernel_a(uint32_t* p, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = fx_a(p[i]);
}
