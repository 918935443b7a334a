// msm_sort.cu: curve-independent kernels of cuzk's Pippenger MSM (scalar
// digits, counting sort, prefix sums, task splitting); see msm_sort.cuh.
#include "cuzk/msm_sort.cuh"

using namespace cuzk::ec;

CUZK_KERNEL void msm_digits(const Fr* scalars, uint32_t n, uint32_t c, uint32_t nwin, uint32_t mwin,
                            uint32_t* digits, uint32_t* counts) {
  msm::digits(scalars, n, c, nwin, mwin, digits, counts);
}

CUZK_KERNEL void msm_scan_up(const uint32_t* in, uint32_t m, uint32_t* sums, uint32_t* max_out, uint32_t span) {
  msm::scan_up(in, m, sums, max_out, span);
}

CUZK_KERNEL void msm_scan_down(const uint32_t* in, uint32_t m, const uint32_t* offs, uint32_t* out) {
  msm::scan_down(in, m, offs, out);
}

CUZK_KERNEL void msm_scatter(const uint32_t* digits, uint32_t n, uint32_t nwin, uint32_t mwin, uint32_t stride,
                             uint32_t c, uint32_t* cursor, uint32_t* sorted) {
  msm::scatter(digits, n, nwin, mwin, stride, c, cursor, sorted);
}

CUZK_KERNEL void msm_task_counts(const uint32_t* seg_off, uint32_t nseg, uint32_t T, uint32_t* tasks) {
  msm::task_counts(seg_off, nseg, T, tasks);
}

#if defined(__CUDACC__)
// The block-wise kernels run in blocks of msm::kSortBlock threads; the host
// emulator drives their phases itself.
CUZK_KERNEL void __launch_bounds__(msm::kSortBlock)
    msm_task_classes(const uint32_t* seg_off, const uint32_t* task_off, uint32_t nseg, uint32_t T, uint32_t* cls,
                     uint32_t* hist) {
  __shared__ msm::ClassShared sh;
  run_phases<msm::kClassPhases>(
      [&](uint32_t ph) { msm::class_phase(ph, sh, seg_off, task_off, nseg, T, cls, hist); });
}

CUZK_KERNEL void __launch_bounds__(msm::kSortBlock)
    msm_task_order(const uint32_t* cls, const uint32_t* ntask, uint32_t* cursor, uint32_t* order) {
  __shared__ msm::ClassShared sh;
  msm::ClassThread th;
  run_phases<msm::kOrderPhases>([&](uint32_t ph) { msm::order_phase(ph, sh, th, cls, ntask, cursor, order); });
}
#endif
