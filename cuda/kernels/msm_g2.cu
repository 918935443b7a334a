// msm_g2.cu: BLS12-381 G2 (coordinates in Fp2) bucket kernels of cuzk's
// Pippenger MSM, and an Fp2 self-test kernel; see msm_bucket.cuh.
#include "cuzk/fp2.cuh"
#include "cuzk/msm_bucket.cuh"

using namespace cuzk::ec;
using G2Affine = Affine<Fp2>;
using G2XYZZ = XYZZ<Fp2>;

CUZK_KERNEL void msm_g2_accumulate(const G2Affine* bases, const uint32_t* sorted, const uint32_t* seg_off,
                                   const uint32_t* task_off, const uint32_t* order, uint32_t nseg, uint32_t T,
                                   G2XYZZ* out) {
  msm::accumulate<Fp2, true>(bases, sorted, seg_off, task_off, order, nseg, T, out);
}

CUZK_KERNEL void msm_g2_reduce(const G2XYZZ* in, const uint32_t* seg_off, const uint32_t* task_off,
                               uint32_t nseg, uint32_t T, G2XYZZ* out) {
  msm::reduce<Fp2, false>(in, seg_off, task_off, nseg, T, out);
}

CUZK_KERNEL void msm_g2_bucket_sum(const G2XYZZ* lo_pts, const uint32_t* lo_off,
    const G2XYZZ* hi_pts, const uint32_t* hi_off, uint32_t s0, uint32_t s1, uint32_t nwin, uint32_t nb, uint32_t K, G2XYZZ* out) {
  msm::bucket_sum<Fp2, false>(lo_pts, lo_off, hi_pts, hi_off, s0, s1, nwin, nb, K, out);
}

CUZK_KERNEL void msm_g2_bucket_fold(const G2XYZZ* lo_pts, const uint32_t* lo_off,
    const G2XYZZ* hi_pts, const uint32_t* hi_off, uint32_t s0, uint32_t s1, uint32_t nseg, G2XYZZ* carry) {
  msm::bucket_fold<Fp2, false>(lo_pts, lo_off, hi_pts, hi_off, s0, s1, nseg, carry);
}

// msm_g2_fp2_selftest writes a·b, a + b, a − b, −a and a·b − b·(a + b)
// (mul_sub) for n pairs, so tests can check the device field arithmetic
// against gnark-crypto directly.
CUZK_KERNEL void msm_g2_fp2_selftest(const Fp2* a, const Fp2* b, uint32_t n, Fp2* out) {
  const uint32_t i = msm::thread_id();
  if (i >= n) return;
  out[5 * i + 0] = a[i] * b[i];
  out[5 * i + 1] = a[i] + b[i];
  out[5 * i + 2] = a[i] - b[i];
  out[5 * i + 3] = -a[i];
  out[5 * i + 4] = mul_sub(a[i], b[i], b[i], a[i] + b[i]);
}
