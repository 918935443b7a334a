// fp.cuh: BLS12-381's base field Fp on the device.
//
// Fp is MontField<FpParams> (mont.cuh, the same Montgomery code as Fr):
// twelve little-endian 32-bit limbs of x·2^384 mod p, 48 bytes, which is
// exactly gnark-crypto's fp.Element (six little-endian uint64 words,
// Montgomery form, R = 2^384), so gnark points copy to the device byte for
// byte. G1 coordinates are Fp, G2 coordinates Fp2 (fp2.cuh).
#ifndef CUZK_FP_CUH
#define CUZK_FP_CUH

#include "cuzk/ec_arch.cuh"
#include "cuzk/mont.cuh"

namespace cuzk {
namespace ec {

// FpParams: BLS12-381 base field,
// p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
// (draft-irtf-cfrg-pairing-friendly-curves, BLS12_381 section; the same
// constant as gnark-crypto ecc/bls12-381/fp). inv = −p^(−1) mod 2^32,
// one = 2^384 mod p and r2 = 2^768 mod p were derived from p.
struct FpParams {
  static constexpr int N = 12;
  static constexpr uint32_t inv = 0xfffcfffdu;
  CUZK_HDC static constexpr uint32_t mod(int i) {
    constexpr uint32_t p[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    return p[i];
  }
  CUZK_HDC static constexpr uint32_t one(int i) {
    constexpr uint32_t r[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                                0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    return r[i];
  }
  CUZK_HDC static constexpr uint32_t r2(int i) {
    constexpr uint32_t r[12] = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c,
                                0x939d83c0, 0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
    return r[i];
  }
};

using Fp = MontField<FpParams>;

static_assert(sizeof(Fp) == 48, "Fp must match gnark-crypto's fp.Element (48 bytes)");

}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_FP_CUH
