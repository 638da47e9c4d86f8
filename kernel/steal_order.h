// SPDX-License-Identifier: MIT
// The order in which a P visits victims when it steals (kernel/proc.c's
// steal_work): pure, so that tests/host/test_steal_order.c checks it on the
// host, as tests/host/test_runq.c checks the run queue.
//
// A round looks only at the Ps worth a look, the candidates: those not on
// the idle list, or with timers (an idle P's run queue is empty; its
// timers may be overdue). They come from two sets of P ids, one bit per
// P, so finding them costs a word per 64 Ps and nothing per idle P: on an
// idle machine a failed round costs the same at 1024 Ps as at 8.
//
// One round visits every candidate but the thief exactly once, in a random
// order: a random start and a random stride coprime with their count (so
// the walk covers them all before repeating), Go's randomOrder over the
// candidates. With by_node, the nodes are visited nearest first (the SLIT
// order the caller gives) and, within each node, the Ps keep that random
// order: same-node victims come before remote ones.
#ifndef GORO_STEAL_ORDER_H
#define GORO_STEAL_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#define STEAL_ORDER_MAXP 1024     // MAX_CPUS (arch/arch.h; kernel/proc.c checks)
#define STEAL_ORDER_WORDS (STEAL_ORDER_MAXP / 64)

// The candidates among Ps 0..nprocs-1 but self, in increasing order, into
// out: those whose bit is clear in idle or set in timers (word k holds Ps
// 64k..64k+63; words are read once each, with relaxed loads: both sets
// change under other cores' feet, and a round is a look, not a decision).
// Returns how many.
uint32_t steal_candidates(const uint64_t *idle, const uint64_t *timers, uint32_t nprocs, uint32_t self,
                          uint32_t *out);

// A start (r's low half) and a stride (from r's high half) for a round
// over n candidates: the stride is coprime with n, 1..n.
void steal_pick(uint32_t n, uint64_t r, uint32_t *start, uint32_t *inc);

// The victims of one round over the n candidates cand[], in visit order,
// written to out; returns the count (n). start and inc: steal_pick's.
// node_of[i]: P i's node. With by_node, nodes_nearest_first lists the
// nnodes nodes from the thief's own outward; otherwise both are ignored.
uint32_t steal_order(const uint32_t *cand, uint32_t n, uint32_t start, uint32_t inc, bool by_node,
                     const int32_t *node_of, const uint8_t *nodes_nearest_first, int nnodes, uint32_t *out);

#endif
