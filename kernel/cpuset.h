// SPDX-License-Identifier: MIT
// A set of core indexes (or P ids), one bit each up to MAX_CPUS, and its
// text form, "0-3,8,10-11". Plain memory: whoever shares one says how.
#ifndef GORO_CPUSET_H
#define GORO_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/arch.h"

#define CPUSET_WORDS ((MAX_CPUS + 63) / 64)

struct cpuset {
    uint64_t w[CPUSET_WORDS];
};

static inline void cpuset_add(struct cpuset *s, uint32_t i)
{
    s->w[i / 64] |= 1ull << (i % 64);
}

static inline bool cpuset_has(const struct cpuset *s, uint32_t i)
{
    return i < MAX_CPUS && (s->w[i / 64] >> (i % 64) & 1);
}

uint32_t cpuset_count(const struct cpuset *s);
bool cpuset_disjoint(const struct cpuset *a, const struct cpuset *b);
void cpuset_union(struct cpuset *into, const struct cpuset *s);
// The ranges of s, "0-3,8" ("none" when empty), cut short (ending "...")
// when they do not fit in cap bytes; returns the length written.
size_t cpuset_format(char *buf, size_t cap, const struct cpuset *s);

#endif
