// msm_scalar.cuh: MSM scalar preparation: BLS12-381 Fr scalars from
// Montgomery to standard form, and their signed base-2^c digits.
#ifndef CUZK_MSM_SCALAR_CUH
#define CUZK_MSM_SCALAR_CUH

#include "cuzk/fp.cuh"

namespace cuzk {
namespace ec {

// FrParams: BLS12-381 scalar field,
// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
// (draft-irtf-cfrg-pairing-friendly-curves; gnark-crypto ecc/bls12-381/fr),
// in gnark's Montgomery form with R = 2^256. inv = −r^(−1) mod 2^32 =
// 0xffffffff because r ≡ 1 (mod 2^32); one = 2^256 mod r.
struct FrParams {
  static constexpr int N = 8;
  static constexpr uint32_t inv = 0xffffffffu;
  CUZK_HD static constexpr uint32_t mod(int i) {
    constexpr uint32_t r[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                               0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
    return r[i];
  }
  CUZK_HD static constexpr uint32_t one(int i) {
    constexpr uint32_t r[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                               0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
    return r[i];
  }
};

using Fr = MontField<FrParams>;

// window_bits returns bits [pos, pos+c) of the 256-bit little-endian s
// (c ≤ 31); bits past 255 read as zero.
CUZK_HD uint32_t window_bits(const uint32_t (&s)[8], uint32_t pos, uint32_t c) {
  const uint32_t lo = pos >> 5, sh = pos & 31;
  uint32_t v = lo < 8 ? s[lo] >> sh : 0;
  if (sh != 0 && lo + 1 < 8) v |= s[lo + 1] << (32 - sh);
  return v & ((1u << c) - 1);
}

// Signed digits: the scalar is rewritten as Σ d_w·2^(c·w) with
// d_w ∈ [−(2^(c−1) − 1), 2^(c−1)]; a window value above 2^(c−1) becomes
// value − 2^c and carries one into the next window. With nwin·c ≥ 256 and
// scalars < r < 2^255, the top window never carries out.
//
// A digit is encoded as (|d| << 1) | (d < 0), and 0 for d = 0.
CUZK_HD uint32_t encode_digit(uint32_t bits, uint32_t& carry, uint32_t c) {
  uint32_t d = bits + carry;
  const uint32_t half = 1u << (c - 1);
  if (d > half) {
    carry = 1;
    const uint32_t mag = (1u << c) - d;  // 0 when d = 2^c: the carry alone
    return mag ? (mag << 1) | 1u : 0;
  }
  carry = 0;
  return d << 1;
}

}  // namespace ec
}  // namespace cuzk

#endif  // CUZK_MSM_SCALAR_CUH
