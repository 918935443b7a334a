#pragma once
#include "common.cuh"
__device__ __forceinline__ uint32_t fx_a(uint32_t x) { return fx_mix(x) ^ 0xA5A5A5A5u; }
