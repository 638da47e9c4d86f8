// SPDX-License-Identifier: MIT
// Sets of core indexes (kernel/cpuset.h).
#include "kernel/cpuset.h"
#include "lib/bits.h"
#include "lib/printf.h"

uint32_t cpuset_count(const struct cpuset *s)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < CPUSET_WORDS; k++)
        n += (uint32_t)bits_count64(s->w[k]);
    return n;
}

bool cpuset_disjoint(const struct cpuset *a, const struct cpuset *b)
{
    for (uint32_t k = 0; k < CPUSET_WORDS; k++)
        if (a->w[k] & b->w[k])
            return false;
    return true;
}

void cpuset_union(struct cpuset *into, const struct cpuset *s)
{
    for (uint32_t k = 0; k < CPUSET_WORDS; k++)
        into->w[k] |= s->w[k];
}

size_t cpuset_format(char *buf, size_t cap, const struct cpuset *s)
{
    size_t n = 0;
    if (!cap)
        return 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < MAX_CPUS; i++) {
        if (!cpuset_has(s, i) || (i > 0 && cpuset_has(s, i - 1)))
            continue;
        uint32_t j = i;
        while (cpuset_has(s, j + 1))
            j++;
        char part[24];
        size_t len = (size_t)snprintf(part, sizeof part, j > i ? "%s%u-%u" : "%s%u", n ? "," : "", i, j);
        if (n + len + 4 > cap) {        // room for "...": the rest is cut
            n += (size_t)snprintf(buf + n, cap - n, "...");
            return n < cap ? n : cap - 1;
        }
        n += (size_t)snprintf(buf + n, cap - n, "%s", part);
    }
    if (!n)
        n = (size_t)snprintf(buf, cap, "none");
    return n < cap ? n : cap - 1;
}
