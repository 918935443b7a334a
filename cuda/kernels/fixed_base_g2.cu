// fixed_base_g2.cu: batched fixed-base scalar multiplication in BLS12-381
// G2 (the development setup's G2 key points); see fixed_base.cuh.
#include "cuzk/fixed_base.cuh"
#include "cuzk/fp2.cuh"

using namespace cuzk::ec;

CUZK_KERNEL __launch_bounds__(128) void fixed_base_g2(const Affine<Fp2>* table, uint32_t c, uint32_t nwin,
                                                      const Fr* scalars, uint32_t n, uint32_t threads,
                                                      Affine<Fp2>* out) {
  fb::fixed_base<Fp2>(table, c, nwin, scalars, n, threads, out);
}
