// fr_sub.cu: elementwise subtraction and negation in BLS12-381's Fr.
#include "cuzk/fr.cuh"
#include "cuzk/vec.cuh"

using cuzk::Fr;

// fr_sub sets out[i] = a[i] − b[i] for i < n; out may alias a or b.
extern "C" __global__ void fr_sub(Fr* out, const Fr* a, const Fr* b, size_t n) {
  cuzk::vec::map2(out, a, b, n, [](const Fr& x, const Fr& y) { return x - y; });
}

// fr_neg sets out[i] = −a[i] for i < n; out may alias a.
extern "C" __global__ void fr_neg(Fr* out, const Fr* a, size_t n) {
  cuzk::vec::map1(out, a, n, [](const Fr& x) { return -x; });
}
