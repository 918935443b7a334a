// fr_mont.cu: conversions between canonical values and Montgomery form in
// BLS12-381's Fr. Canonical values are the same 32-byte little-endian limbs
// as gnark-crypto's fr.Element.Bits().
#include "cuzk/fr.cuh"
#include "cuzk/vec.cuh"

using cuzk::Fr;

// fr_to_mont sets out[i] = a[i]·R mod r for canonical a[i] < r.
extern "C" __global__ void fr_to_mont(Fr* out, const Fr* a, size_t n) {
  cuzk::vec::map1(out, a, n, [](const Fr& x) { return cuzk::to_mont(x); });
}

// fr_from_mont sets out[i] = a[i]·R^(−1) mod r, the canonical value.
extern "C" __global__ void fr_from_mont(Fr* out, const Fr* a, size_t n) {
  cuzk::vec::map1(out, a, n, [](const Fr& x) { return cuzk::from_mont(x); });
}
