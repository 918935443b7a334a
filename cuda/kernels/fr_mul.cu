// fr_mul.cu: elementwise Montgomery multiplication in BLS12-381's Fr, and a
// multiplication chain that measures the multiplier's rate.
#include "cuzk/fr.cuh"
#include "cuzk/vec.cuh"

using cuzk::Fr;

// fr_mul sets out[i] = a[i] · b[i] for i < n; out may alias a or b.
extern "C" __global__ void fr_mul(Fr* out, const Fr* a, const Fr* b, size_t n) {
  cuzk::vec::map2(out, a, b, n, [](const Fr& x, const Fr& y) { return x * y; });
}

// fr_mul_chain sets out[i] = mul_chain(a[i], b[i]) (fr.cuh): 32 dependent
// multiplications per 96 bytes moved, so its rate is the multiplier's, not
// the memory's. cuzk-bench's modmul-bound estimates divide by it.
extern "C" __global__ void fr_mul_chain(Fr* out, const Fr* a, const Fr* b, size_t n) {
  cuzk::vec::map2(out, a, b, n, [](const Fr& x, const Fr& y) { return cuzk::mul_chain(x, y); });
}
