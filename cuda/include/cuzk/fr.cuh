// fr.cuh: BLS12-381's scalar field Fr on the device.
//
// Fr is MontField<FrParams> (mont.cuh): eight little-endian 32-bit limbs of
// x·2^256 mod r, 32 bytes, which is exactly gnark-crypto's fr.Element
// ([4]uint64, little-endian words, Montgomery form with R = 2^256) on a
// little-endian host. A []fr.Element therefore copies to device memory as is,
// and results copy back into one.
//
// Operations: a + b, a − b, −a, a · b, sqr(a), dbl(a), to_mont(a) for a
// canonical value, from_mont(a) back to one, Fr::zero(), Fr::one(), and
// mul_chain(x, y), a multiplication chain for measuring the multiplier.
#ifndef CUZK_FR_CUH
#define CUZK_FR_CUH

#include "cuzk/mont.cuh"

namespace cuzk {

// FrParams holds the constants of BLS12-381's scalar field,
// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
// (draft-irtf-cfrg-pairing-friendly-curves-11, section 4.2.1, BLS12_381;
// gnark-crypto ecc/bls12-381/fr has the same modulus). inv, R mod r and
// R^2 mod r (R = 2^256) were derived from r; selftest checks them against
// gnark-crypto on every run.
struct FrParams {
  static constexpr int N = 8;
  static constexpr uint32_t inv = 0xffffffffu;  // −r^(−1) mod 2^32 (r ≡ 1 mod 2^32)
  CUZK_HDC static constexpr uint32_t mod(int i) {
    constexpr uint32_t r[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                               0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
    return r[i];
  }
  CUZK_HDC static constexpr uint32_t one(int i) {
    constexpr uint32_t r[8] = {0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau,
                               0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u};
    return r[i];
  }
  CUZK_HDC static constexpr uint32_t r2(int i) {
    constexpr uint32_t r[8] = {0xf3f29c6du, 0xc999e990u, 0x87925c23u, 0x2b6cedcbu,
                               0x7254398fu, 0x05d31496u, 0x9f59ff11u, 0x0748d9d9u};
    return r[i];
  }
};

using Fr = MontField<FrParams>;

static_assert(sizeof(Fr) == 32, "Fr must match gnark-crypto's fr.Element (32 bytes)");
static_assert(alignof(Fr) == 16, "Fr moves as two 16-byte vectors");

// kMulChain is the number of rounds of mul_chain (cuda/selftest: mulChain).
constexpr int kMulChain = 16;

// mul_chain returns x + y after kMulChain rounds of x ← x·y, y ← y·x:
// 2·kMulChain dependent multiplications, the body of the fr_mul_chain rate
// kernel (cuda/kernels/fr_mul.cu) and of its host check.
CUZK_HD Fr mul_chain(Fr x, Fr y) {
#pragma unroll 1
  for (int k = 0; k < kMulChain; k++) {
    x = x * y;
    y = y * x;
  }
  return x + y;
}

}  // namespace cuzk

#endif  // CUZK_FR_CUH
