// SPDX-License-Identifier: MIT
// malloc's size classes (kernel/malloc.c): 16-byte steps to 128, then four
// per power of two to 32768, so a block wastes at most a quarter of itself
// (Go's classes are finer; these keep the table readable). Index 0 is the
// large-object "class".
//
// class_size[] is the table of record. size_class() finds the first class
// at least size from the table's shape rather than by searching it, in a
// handful of instructions with no loads: malloc calls it on every small
// allocation. Its host twin, tests/host/test_sizeclass.c, checks it against
// a search of the table for every size from 0 to SIZECLASS_MAX.
#ifndef GORO_SIZECLASS_H
#define GORO_SIZECLASS_H

#include <stddef.h>
#include <stdint.h>

#define SIZECLASS_MAX 32768u            // the largest small block
#define SIZECLASS_STEP_MAX 128u         // the 16-byte steps end here: class 8

static const uint16_t class_size[] = {
    0, 16, 32, 48, 64, 80, 96, 112, 128,
    160, 192, 224, 256, 320, 384, 448, 512,
    640, 768, 896, 1024, 1280, 1536, 1792, 2048,
    2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
    10240, 12288, 14336, 16384, 20480, 24576, 28672, 32768,
};
#define NCLASS (sizeof class_size / sizeof class_size[0])
_Static_assert(NCLASS < 256, "class fits a byte");
// The shape size_class() assumes: 8 steps of 16 to 128, then 4 classes
// for each of the 8 powers of two from 2^7 < size to size <= 2^15.
_Static_assert(NCLASS == 1 + SIZECLASS_STEP_MAX / 16 + 4 * 8, "the classes size_class() computes");
_Static_assert(SIZECLASS_MAX == SIZECLASS_STEP_MAX << 8, "eight powers of two above the steps");

// The first class whose blocks hold size bytes, for size <= SIZECLASS_MAX;
// size 0 gets class 1. Above 128, with s = size - 1 and e the index of s's
// top bit (7..14), the classes for 2^e < size <= 2^(e+1) start at
// 9 + 4 (e - 7), and the one that holds size is k further on, k being s's
// two bits below its top one: that class's blocks are (5 + k) << (e - 2).
static inline uint32_t size_class(size_t size)
{
    if (size <= SIZECLASS_STEP_MAX)
        return (uint32_t)((size + 15) >> 4) | (size == 0);
    uint64_t s = size - 1;
    uint32_t e = 63 - (uint32_t)__builtin_clzll(s);
    return 9 + (e - 7) * 4 + (uint32_t)((s >> (e - 2)) & 3);
}

#endif
