// Fixture: shared by every unit.
#pragma once
#include <stdint.h>
__device__ __forceinline__ uint32_t fx_mix(uint32_t x) { return x * 2654435761u + 1u; }
