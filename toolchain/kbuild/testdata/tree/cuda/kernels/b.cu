#include <fx/bc.cuh>
extern "C" __global__ void fx_kernel_b(uint32_t* p, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = fx_bc(p[i]);
}
