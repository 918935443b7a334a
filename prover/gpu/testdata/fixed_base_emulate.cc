// fixed_base_emulate.cc runs cuzk's fixed-base kernels
// (cuda/kernels/fixed_base_g1.cu, fixed_base_g2.cu) on the CPU, thread after
// thread, with the launch shape of prover/gpu's fixedBase, and writes the
// affine results. TestFixedBaseKernelsOnHost compiles it with a host C++
// compiler, so the kernels' digits, additions and batch inversion run
// exactly as written (PTX carry instructions emulated, see ec_arch.cuh) on
// machines without a GPU.
//
// Usage: fixed_base_emulate IN OUT. IN: five little-endian uint32 (curve
// 1|2, c, nwin, n, threads), nwin·2^(c−1) affine table points (gnark
// layout), n scalars (gnark fr.Element). OUT: n affine points.
#include <cstdio>
#include <vector>

#include "fixed_base_g1.cu"
#include "fixed_base_g2.cu"

template <class F, class Kernel>
static int run(FILE* in, FILE* out, const uint32_t* h, Kernel kernel) {
  const uint32_t c = h[1], nwin = h[2], n = h[3], threads = h[4];
  const size_t rows = (size_t)nwin << (c - 1);
  std::vector<Affine<F>> table(rows), res(n);
  std::vector<Fr> scalars(n);
  if (fread(table.data(), sizeof(Affine<F>), rows, in) != rows || fread(scalars.data(), sizeof(Fr), n, in) != n)
    return 2;
  blockDim.x = 128;
  for (uint32_t t = 0; t < ((threads + 127) / 128) * 128; t++) {
    blockIdx.x = t / 128;
    threadIdx.x = t % 128;
    kernel(table.data(), c, nwin, scalars.data(), n, threads, res.data());
  }
  return fwrite(res.data(), sizeof(Affine<F>), n, out) == n ? 0 : 3;
}

int main(int argc, char** argv) {
  if (argc != 3) return 1;
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  uint32_t h[5];
  if (!in || !out || fread(h, 4, 5, in) != 5) return 1;
  const int rc = h[0] == 1 ? run<Fp>(in, out, h, fixed_base_g1) : run<Fp2>(in, out, h, fixed_base_g2);
  return fclose(out) != 0 ? 4 : rc;
}
