// SPDX-License-Identifier: MIT
// The steal order (kernel/steal_order.h). Its twin test is
// tests/host/test_steal_order.c: change one, run the other.
#include "kernel/steal_order.h"

static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint32_t steal_candidates(const uint64_t *idle, const uint64_t *timers, uint32_t nprocs, uint32_t self,
                          uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k * 64 < nprocs; k++) {
        uint64_t w = ~__atomic_load_n(&idle[k], __ATOMIC_RELAXED) |       // relaxed: a look (above)
                     __atomic_load_n(&timers[k], __ATOMIC_RELAXED);       // relaxed: as idle's
        if (nprocs - k * 64 < 64)
            w &= (1ull << (nprocs - k * 64)) - 1;
        if (self / 64 == k)
            w &= ~(1ull << (self % 64));
        while (w) {
            out[n++] = k * 64 + (uint32_t)__builtin_ctzll(w);
            w &= w - 1;
        }
    }
    return n;
}

void steal_pick(uint32_t n, uint64_t r, uint32_t *start, uint32_t *inc)
{
    *start = n ? (uint32_t)(r % n) : 0;
    uint32_t s = n ? 1 + (uint32_t)((r >> 32) % n) : 1;
    while (gcd(s, n) != 1)      // gcd(n, n) == 1 only for n == 1: the loop ends below n
        s = s % n + 1;
    *inc = s;
}

uint32_t steal_order(const uint32_t *cand, uint32_t n, uint32_t start, uint32_t inc, bool by_node,
                     const int32_t *node_of, const uint8_t *nodes_nearest_first, int nnodes, uint32_t *out)
{
    uint32_t k = 0;
    int passes = by_node ? nnodes : 1;
    for (int j = 0; j < passes; j++) {
        uint32_t pos = start;
        for (uint32_t i = 0; i < n; i++, pos = (pos + inc) % n)
            if (!by_node || node_of[cand[pos]] == nodes_nearest_first[j])
                out[k++] = cand[pos];
    }
    return k;
}
