// msm_g1.cu: BLS12-381 G1 (coordinates in Fp) bucket kernels of cuzk's
// Pippenger MSM, and an Fp self-test kernel; see msm_bucket.cuh.
#include "cuzk/fp.cuh"
#include "cuzk/msm_bucket.cuh"

using namespace cuzk::ec;
using G1Affine = Affine<Fp>;
using G1XYZZ = XYZZ<Fp>;

// The accumulate kernel's register cap allows 3 blocks of 128 threads per SM
// (≤ 170 registers); a cap of 128 (4 blocks, some spills) measured slower
// (docs/perf-msm.md).
CUZK_KERNEL __launch_bounds__(128, 3) void msm_g1_accumulate(const G1Affine* bases, const uint32_t* sorted,
                                                              const uint32_t* seg_off, const uint32_t* task_off,
                                                              const uint32_t* order, uint32_t nseg, uint32_t T,
                                                              G1XYZZ* out) {
  msm::accumulate<Fp, false>(bases, sorted, seg_off, task_off, order, nseg, T, out);
}

CUZK_KERNEL void msm_g1_reduce(const G1XYZZ* in, const uint32_t* seg_off, const uint32_t* task_off,
                               uint32_t nseg, uint32_t T, G1XYZZ* out) {
  msm::reduce<Fp, true>(in, seg_off, task_off, nseg, T, out);
}

// bucket_sum, its additions inlined, is capped like accumulate: at 182
// registers it would run 2 blocks per SM.
CUZK_KERNEL __launch_bounds__(128, 3) void msm_g1_bucket_sum(const G1XYZZ* lo_pts, const uint32_t* lo_off,
    const G1XYZZ* hi_pts, const uint32_t* hi_off, uint32_t s0, uint32_t s1, uint32_t nwin, uint32_t nb, uint32_t K, G1XYZZ* out) {
  msm::bucket_sum<Fp, true>(lo_pts, lo_off, hi_pts, hi_off, s0, s1, nwin, nb, K, out);
}

CUZK_KERNEL __launch_bounds__(128, 3) void msm_g1_bucket_fold(const G1XYZZ* lo_pts, const uint32_t* lo_off,
    const G1XYZZ* hi_pts, const uint32_t* hi_off, uint32_t s0, uint32_t s1, uint32_t nseg, G1XYZZ* carry) {
  msm::bucket_fold<Fp, true>(lo_pts, lo_off, hi_pts, hi_off, s0, s1, nseg, carry);
}

// msm_g1_fp_selftest writes a·b, a + b, a − b, −a, a² and a·b − b·(a + b)
// (mul_sub) for n pairs, so
// tests can check the device field arithmetic against gnark-crypto directly.
CUZK_KERNEL void msm_g1_fp_selftest(const Fp* a, const Fp* b, uint32_t n, Fp* out) {
  const uint32_t i = msm::thread_id();
  if (i >= n) return;
  out[6 * i + 0] = a[i] * b[i];
  out[6 * i + 1] = a[i] + b[i];
  out[6 * i + 2] = a[i] - b[i];
  out[6 * i + 3] = -a[i];
  out[6 * i + 4] = sqr(a[i]);
  out[6 * i + 5] = mul_sub(a[i], b[i], b[i], a[i] + b[i]);
}
