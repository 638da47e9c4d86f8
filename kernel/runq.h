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
uint32_t runq_push(struct runq *q, struct g *g, bool next, struct g **overflow);

// Owner only. The common case of runq_push, inline on the hand-off paths:
// queues *gp in runnext when next (the G there before moves to the tail),
// else at the tail, and returns true. False when the ring is full: *gp is
// then the G still to queue (g, or the one runnext held), for runq_push
// with next = false, which overflows half the ring. The orderings are
// runq_push's (runq.c explains them).
static inline __attribute__((always_inline)) bool runq_push_fast(struct runq *q, struct g **gp, bool next)
{
    struct g *g = *gp;
    if (next) {
        g = __atomic_exchange_n(&q->runnext, g, __ATOMIC_SEQ_CST); // release: publishes the new G to a thief's CAS; acquire: we may own the old one; seq-cst: wakep_after_rmw's half of its pair
        if (!g)
            return true;
        *gp = g;
    }
    uint32_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE); // load-acquire: pairs with consumers' CAS-release, so their slot reads are done
    uint32_t t = q->tail; // owner's own variable: no other core writes it
    if (t - h >= RUNQ_SIZE)
        return false;
    __atomic_store_n(&q->ring[t & (RUNQ_SIZE - 1)], g, __ATOMIC_RELAXED); // relaxed: published by the tail store-release that follows
    __atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE); // store-release: makes the slot (and g's contents) visible to consumers
    return true;
}

// Owner only. Takes runnext first, then the head. *inherit is set when the
// G came from runnext (it inherits the time slice). NULL when empty.
// Inline: every switch takes its next G here. The orderings are explained
// in runq.c.
static inline __attribute__((always_inline)) struct g *runqget(struct runq *q, bool *inherit)
{
    // Only the owner sets runnext, so if it is NULL here no one else can
    // make it non-NULL; a thief may clear it, which the exchange sees.
    struct g *next = __atomic_load_n(&q->runnext, __ATOMIC_RELAXED); // relaxed: a hint; the exchange below decides
    if (next) {
        next = __atomic_exchange_n(&q->runnext, (struct g *)0, __ATOMIC_ACQUIRE); // acquire: pairs with the exchange-release in runq_push
        if (next) {
            *inherit = true;
            return next;
        }
    }
    *inherit = false;
    for (;;) {
        uint32_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE); // load-acquire: pairs with other consumers' CAS-release
        uint32_t t = q->tail; // owner's own variable
        if (t == h)
            return 0;
        struct g *g = __atomic_load_n(&q->ring[h & (RUNQ_SIZE - 1)], __ATOMIC_RELAXED); // relaxed: ordered by the tail read and head CAS around it
        // cas-release: commits the consume, pairs with the head acquire in
        // runq_push; relaxed on failure: the loop reloads head with acquire
        if (__atomic_compare_exchange_n(&q->head, &h, h + 1, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return g;
    }
}


// Any core but the owner. Moves about half of victim's Gs (n - n/2 of the
// n queued) into thief's ring, which must be empty, and returns one of them
// to run now (NULL when the victim had nothing). With steal_runnext, a G in
// the victim's runnext may be taken when its ring is empty.
struct g *runqsteal(struct runq *thief, struct runq *victim, bool steal_runnext);

// Owner only, or any core once the owner is stopped (thieves may still
// run): moves every queued G, runnext first, then the ring in FIFO order, to
// out (RUNQ_SIZE + 1 pointers) and returns the count. For gomaxprocs shrinking.
uint32_t runqdrain(struct runq *q, struct g **out);

// Any core: a snapshot count (runnext included), for heuristics only.
uint32_t runq_len(const struct runq *q);
bool runqempty(const struct runq *q);

#endif
