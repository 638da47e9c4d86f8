// SPDX-License-Identifier: MIT
// A P's local run queue: Go's runq (src/runtime/proc.go runqput, runqget,
// runqgrab, runqsteal), in C11 atomics. See runq.c for the invariants.
#ifndef GORO_RUNQ_H
#define GORO_RUNQ_H

#include <stdbool.h>
#include <stdint.h>

#define RUNQ_SIZE 256
_Static_assert((RUNQ_SIZE & (RUNQ_SIZE - 1)) == 0, "RUNQ_SIZE is a power of two");

struct g;

struct runq {
    // head: atomic, any core (thieves CAS it forward; the owner too)
    uint32_t head;
    uint8_t pad0[60];
    // tail: written by the owner only (store-release); read by thieves (load-acquire)
    uint32_t tail;
    uint8_t pad1[60];
    // runnext: atomic, any core; the owner sets it, thieves CAS it to NULL
    struct g *runnext;
    uint8_t pad2[56];
    // ring slots: written by the owner only between tail and head+RUNQ_SIZE
    struct g *ring[RUNQ_SIZE];
};

void runq_init(struct runq *q);

// Owner only. Puts g at the tail (or in runnext when next, kicking the old
// runnext to the tail). When the ring is full, moves half of it plus g to
// *overflow (up to RUNQ_SIZE/2 + 1 entries) and returns how many it moved;
// the caller then puts them on the global queue. Returns 0 otherwise.
uint32_t runq_put(struct runq *q, struct g *g, bool next, struct g **overflow);

// Owner only. Takes runnext first, then the head. *inherit is set when the
// G came from runnext (it inherits the time slice). NULL when empty.
struct g *runq_get(struct runq *q, bool *inherit);

// Any core but the owner. Moves about half of victim's Gs (n - n/2 of the
// n queued) into thief's ring, which must be empty, and returns one of them
// to run now (NULL when the victim had nothing). With steal_runnext, a G in
// the victim's runnext may be taken when its ring is empty.
struct g *runq_steal(struct runq *thief, struct runq *victim, bool steal_runnext);

// Owner only, or any core once the owner is stopped (thieves may still
// run): moves every queued G, runnext first, then the ring in FIFO order, to
// out (RUNQ_SIZE + 1 pointers) and returns the count. For gomaxprocs shrinking.
uint32_t runq_drain(struct runq *q, struct g **out);

// Any core: a snapshot count (runnext included), for heuristics only.
uint32_t runq_len(const struct runq *q);
bool runq_empty(const struct runq *q);

#endif
