// SPDX-License-Identifier: MIT
// What every benchmark app shares: insncount's marker NOPs (see
// tools/insncount: nopl 0xFEED00xx(%rax)), which bracket one measured
// repetition, the filter= test and the number arguments.
#ifndef GORO_BENCH_UTIL_H
#define GORO_BENCH_UTIL_H
#include <stdbool.h>
#include <stdint.h>

#define BENCH_MARK_BEGIN() __asm__ volatile(".byte 0x0f,0x1f,0x80,0x01,0x00,0xed,0xfe" ::: "memory")
#define BENCH_MARK_END() __asm__ volatile(".byte 0x0f,0x1f,0x80,0x02,0x00,0xed,0xfe" ::: "memory")

// The n for which body(n) takes about target (in body's unit: ns or
// cycles): doubled from 64 until a run takes a quarter of target, then
// scaled to it; at least 16.
static inline uint64_t bench_calibrate(uint64_t (*body)(uint64_t n), uint64_t target)
{
    uint64_t n = 64;
    while (body(n) < target / 4 && n < (1ull << 30))
        n *= 2;
    uint64_t t = body(n);
    if (t)
        n = n * target / t;
    return n < 16 ? 16 : n;
}

// filter=SUBSTR picks benchmarks by name; no filter picks all.
static inline bool bench_wanted(const char *filter, const char *name)
{
    return !filter || strstr(name, filter);
}

// A command-line number: decimal digits only, at most about 10^10; false
// for anything else, out untouched.
static inline bool bench_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 1000000000)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

#endif
