// SPDX-License-Identifier: MIT
// Bit counting without __builtin_popcountll, which is a libgcc call unless
// the target has POPCNT, and the kernel links no libgcc.
#ifndef GORO_LIB_BITS_H
#define GORO_LIB_BITS_H

#include <stdint.h>

static inline uint64_t bits_count64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

#endif
