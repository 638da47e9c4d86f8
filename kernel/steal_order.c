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

void steal_strides_init(struct steal_strides *s, uint32_t nprocs)
{
    s->nprocs = nprocs;
    s->n = 0;
    for (uint32_t i = 1; i <= nprocs; i++)
        if (gcd(i, nprocs) == 1)
            s->stride[s->n++] = i;
}

uint32_t steal_order(const struct steal_strides *s, uint32_t self, uint64_t r, bool by_node,
                     const int32_t *node_of, const uint8_t *nodes_nearest_first, int nnodes,
                     uint32_t *out)
{
    uint32_t n = s->nprocs, k = 0;
    uint32_t start = (uint32_t)(r % n), inc = s->stride[(r >> 32) % s->n];
    int passes = by_node ? nnodes : 1;
    for (int j = 0; j < passes; j++) {
        uint32_t pos = start;
        for (uint32_t i = 0; i < n; i++, pos = (pos + inc) % n)
            if (pos != self && (!by_node || node_of[pos] == nodes_nearest_first[j]))
                out[k++] = pos;
    }
    return k;
}
