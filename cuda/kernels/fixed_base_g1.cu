// fixed_base_g1.cu: batched fixed-base scalar multiplication in BLS12-381
// G1 (the development setup's G1 key points); see fixed_base.cuh.
#include "cuzk/fixed_base.cuh"
#include "cuzk/fp.cuh"

using namespace cuzk::ec;

CUZK_KERNEL __launch_bounds__(128) void fixed_base_g1(const Affine<Fp>* table, uint32_t c, uint32_t nwin,
                                                      const Fr* scalars, uint32_t n, uint32_t threads,
                                                      Affine<Fp>* out) {
  fb::fixed_base<Fp>(table, c, nwin, scalars, n, threads, out);
}
