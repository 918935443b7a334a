// fr_sqr.cu: elementwise squaring in BLS12-381's Fr.
#include "cuzk/fr.cuh"
#include "cuzk/vec.cuh"

using cuzk::Fr;

// fr_sqr sets out[i] = a[i]^2 for i < n; out may alias a.
extern "C" __global__ void fr_sqr(Fr* out, const Fr* a, size_t n) {
  cuzk::vec::map1(out, a, n, [](const Fr& x) { return cuzk::sqr(x); });
}
