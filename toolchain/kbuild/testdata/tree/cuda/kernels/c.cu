  #  include "fx/bc.cuh" // spaces before and after the hash are legal
extern "C" __global__ void fx_kernel_c(uint32_t* p, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = fx_bc(p[i]) * 3u;
}
