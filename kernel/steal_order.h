// SPDX-License-Identifier: MIT
// The order in which a P visits victims when it steals (kernel/proc.c's
// steal_work): pure, so that tests/host/test_steal_order.c checks it on the
// host, as tests/host/test_runq.c checks the run queue.
//
// One round visits every other P exactly once, in a random order: a random
// start and a random stride coprime with nprocs (so the walk covers all
// nprocs positions before repeating). With by_node, the nodes are visited
// nearest first (the SLIT order the caller gives) and, within each node, the
// Ps keep that random order: same-node victims come before remote ones.
#ifndef GORO_STEAL_ORDER_H
#define GORO_STEAL_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#define STEAL_ORDER_MAXP 256

// The strides for nprocs Ps: every value in 1..nprocs coprime with it.
struct steal_strides {
    uint32_t nprocs;
    uint32_t n;
    uint32_t stride[STEAL_ORDER_MAXP];
};

// Fills *s for nprocs (1..STEAL_ORDER_MAXP).
void steal_strides_init(struct steal_strides *s, uint32_t nprocs);

// The victims of one round for P self (0..nprocs-1), as P indexes in visit
// order, written to out (nprocs - 1 entries at most); returns the count.
// r: random bits (the start from its low half, the stride from its high
// half). node_of[i]: P i's node. With by_node, nodes_nearest_first lists
// the nnodes nodes from self's own outward; otherwise both are ignored.
uint32_t steal_order(const struct steal_strides *s, uint32_t self, uint64_t r, bool by_node,
                     const int32_t *node_of, const uint8_t *nodes_nearest_first, int nnodes,
                     uint32_t *out);

#endif
