#pragma once
#include "fx/common.cuh"
/* #include "never.cuh" is in a comment and must be ignored */
__device__ __forceinline__ uint32_t fx_bc(uint32_t x) { return fx_mix(x) + 7u; }
