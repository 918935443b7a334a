// msm_scalar.cuh: MSM scalar preparation: BLS12-381 Fr scalars from
// Montgomery to standard form, and their signed base-2^c digits.
#ifndef CUZK_MSM_SCALAR_CUH
#define CUZK_MSM_SCALAR_CUH

#include "cuzk/ec_arch.cuh"
#include "cuzk/fr.cuh"

namespace cuzk {
namespace ec {

// MSM scalars are gnark-crypto fr.Elements: cuzk::Fr (fr.cuh).
using cuzk::Fr;

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
