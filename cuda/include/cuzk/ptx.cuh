// ptx.cuh: 32-bit extended-precision integer primitives, one PTX instruction
// each, for the Montgomery field code in mont.cuh.
//
// The "cc" variants write the condition-code carry flag; the "c" variants
// read it (PTX ISA, section "Extended-Precision Integer Arithmetic
// Instructions": add.cc, addc, sub.cc, subc, mad.cc, madc). The asm
// statements are volatile so that the compiler keeps their relative order,
// which is what carries the flag from one instruction to the next; a chain
// must not be interrupted by other carry-using code.
//
// Compiled by a plain C++ compiler (no __CUDACC__), the same functions
// emulate the flag with a thread-local variable, so the exact instruction
// sequence of the device code can be run and checked on a host.
#ifndef CUZK_PTX_CUH
#define CUZK_PTX_CUH

#include <stdint.h>

// CUZK_HD marks functions compiled for the device (and, without nvcc, for
// the host).
#if defined(__CUDACC__)
#define CUZK_HD __device__ __forceinline__
#else
#define CUZK_HD inline
#endif

namespace cuzk {
namespace ptx {

#if defined(__CUDACC__)
#define CUZK_PTX2(op)                                                   \
  uint32_t r;                                                           \
  asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));           \
  return r
#define CUZK_PTX3(op)                                                   \
  uint32_t r;                                                           \
  asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); \
  return r

// lo(a*b) and hi(a*b); no flag. Adjacent lo/hi pairs of one product fuse
// into one wide multiply.
__device__ __forceinline__ uint32_t mul_lo(uint32_t a, uint32_t b) { CUZK_PTX2("mul.lo.u32"); }
__device__ __forceinline__ uint32_t mul_hi(uint32_t a, uint32_t b) { CUZK_PTX2("mul.hi.u32"); }
// a + b, carry out.
__device__ __forceinline__ uint32_t add_cc(uint32_t a, uint32_t b) { CUZK_PTX2("add.cc.u32"); }
// a + b + carry in, carry out.
__device__ __forceinline__ uint32_t addc_cc(uint32_t a, uint32_t b) { CUZK_PTX2("addc.cc.u32"); }
// a + b + carry in.
__device__ __forceinline__ uint32_t addc(uint32_t a, uint32_t b) { CUZK_PTX2("addc.u32"); }
// a - b, borrow out.
__device__ __forceinline__ uint32_t sub_cc(uint32_t a, uint32_t b) { CUZK_PTX2("sub.cc.u32"); }
// a - b - borrow in, borrow out.
__device__ __forceinline__ uint32_t subc_cc(uint32_t a, uint32_t b) { CUZK_PTX2("subc.cc.u32"); }
// a - b - borrow in.
__device__ __forceinline__ uint32_t subc(uint32_t a, uint32_t b) { CUZK_PTX2("subc.u32"); }
// lo(a*b) + c, carry out.
__device__ __forceinline__ uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { CUZK_PTX3("mad.lo.cc.u32"); }
// lo(a*b) + c + carry in, carry out.
__device__ __forceinline__ uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { CUZK_PTX3("madc.lo.cc.u32"); }
// hi(a*b) + c, carry out.
__device__ __forceinline__ uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { CUZK_PTX3("mad.hi.cc.u32"); }
// hi(a*b) + c + carry in, carry out.
__device__ __forceinline__ uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { CUZK_PTX3("madc.hi.cc.u32"); }
// hi(a*b) + c + carry in.
__device__ __forceinline__ uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { CUZK_PTX3("madc.hi.u32"); }
#undef CUZK_PTX2
#undef CUZK_PTX3
#else
// Host emulation: one thread-local flag, set and consumed in program order.
inline thread_local uint32_t carry;

inline uint32_t set_carry(uint64_t s) {
  carry = (uint32_t)(s >> 32) & 1;
  return (uint32_t)s;
}
inline uint32_t mul_lo(uint32_t a, uint32_t b) { return a * b; }
inline uint32_t mul_hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
inline uint32_t add_cc(uint32_t a, uint32_t b) { return set_carry((uint64_t)a + b); }
inline uint32_t addc_cc(uint32_t a, uint32_t b) { return set_carry((uint64_t)a + b + carry); }
inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + carry; }
inline uint32_t sub_cc(uint32_t a, uint32_t b) { return set_carry((uint64_t)a - b); }
inline uint32_t subc_cc(uint32_t a, uint32_t b) { return set_carry((uint64_t)a - b - carry); }
inline uint32_t subc(uint32_t a, uint32_t b) { return a - b - carry; }
inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return set_carry((uint64_t)(a * b) + c); }
inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return set_carry((uint64_t)(a * b) + c + carry); }
inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return set_carry((((uint64_t)a * b) >> 32) + c); }
inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
  return set_carry((((uint64_t)a * b) >> 32) + c + carry);
}
inline uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return (uint32_t)(((uint64_t)a * b) >> 32) + c + carry; }
#endif

}  // namespace ptx
}  // namespace cuzk

#endif  // CUZK_PTX_CUH
