// msm_table.cu: the kernels that build the MSM's tables of base multiples
// for G1 and G2 (see msm_table.cuh). They run once per resident bases set,
// in a unit of their own so that the hot bucket kernels of msm_g1 and
// msm_g2 compile and place as before.
#include "cuzk/fp2.cuh"
#include "cuzk/msm_table.cuh"

using namespace cuzk::ec;

CUZK_KERNEL void msm_g1_table(Affine<Fp>* table, uint32_t n, uint32_t m, uint32_t shift) {
  msm::precompute<Fp>(table, n, m, shift);
}

CUZK_KERNEL void msm_g2_table(Affine<Fp2>* table, uint32_t n, uint32_t m, uint32_t shift) {
  msm::precompute<Fp2>(table, n, m, shift);
}
