// axpy.cu is the source of axpy.ptx, the driver package's test kernel. It
// mixes 8- and 4-byte parameters so that tests exercise parameter packing.
// Regenerate: nvcc -ptx -arch=compute_80 -o axpy.ptx axpy.cu
extern "C" __global__ void axpy_u64(unsigned long long *out, const unsigned long long *x,
                                    unsigned long long a, unsigned int n, float add) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = a * x[i] + i + (unsigned long long)add;
  }
}
