// fr_add.cu: elementwise addition in BLS12-381's Fr (Montgomery form).
#include "cuzk/fr.cuh"
#include "cuzk/vec.cuh"

using cuzk::Fr;

// fr_add sets out[i] = a[i] + b[i] for i < n; out may alias a or b.
extern "C" __global__ void fr_add(Fr* out, const Fr* a, const Fr* b, size_t n) {
  cuzk::vec::map2(out, a, b, n, [](const Fr& x, const Fr& y) { return x + y; });
}
