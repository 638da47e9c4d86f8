// SPDX-License-Identifier: MIT
// A P's local run queue, after Go's src/runtime/proc.go (runqput,
// runqputslow, runqget, runqgrab, runqsteal). The twin of this file is the
// host stress test tests/host/test_runq.c: change one, run the other.
//
// Who writes what:
//   tail     the owner only, with store-release, after filling the slot(s)
//            below it. Thieves load it with acquire; the owner reads its own.
//   head     any core, only by CAS (release) moving it forward: the owner
//            taking one G (runqget) or half the ring (overflow, drain), a
//            thief taking n - n/2 (runqsteal). Never moves backward.
//   ring[i]  the owner only, at index tail, and only while tail - head <
//            RUNQ_SIZE, so it never overwrites a slot in [head, tail).
//            Thieves read slots in [head, tail) and may race with the owner
//            refilling a slot that was consumed after they loaded head; so
//            slots are relaxed atomics, never plain loads and stores.
//   runnext  the owner sets it (exchange, release); the owner or a thief
//            clears it (exchange or CAS to NULL, acquire). Whoever swaps a
//            G pointer out of runnext owns that G.
//
// "Owner" is whatever core currently holds the P. Handing a P to another
// core must itself be a release/acquire (the P lock, or an atomic status
// CAS), so the new owner sees the old owner's plain view of tail.
//
// Invariants, in unwrapped arithmetic: head <= tail <= head + RUNQ_SIZE, and
// the Gs queued are ring[head % RUNQ_SIZE .. tail % RUNQ_SIZE), then runnext.
// head and tail are 32-bit counters that wrap; every comparison is on the
// difference tail - head, which is exact across the wrap since it never
// exceeds RUNQ_SIZE.
//
// Why a consumer's single CAS on head suffices: consumers (the owner's get,
// thieves) read the slots [h, h + n) first, then CAS head from h to h + n.
// The CAS succeeds only if nobody consumed anything in between, so those
// slots were exclusively theirs; a failed CAS throws the copies away. The
// producer side needs no CAS because there is exactly one producer.
//
// Why reading the ring before the CAS is safe: the owner writes a slot only
// at index t with t - head < RUNQ_SIZE, i.e. below the head it has loaded
// plus RUNQ_SIZE. A slot in [h, h + n) can be reused only once head has
// passed it, and then the reader's CAS (expecting h) fails. When the CAS
// succeeds, the values read are the ones published by the tail store the
// reader acquired, not a later reuse: see the next paragraph.
//
// Why the owner's load of head is acquire: it pairs with the consumers'
// release CAS on head. A consumer's slot reads are sequenced before its CAS;
// the owner's acquire of a head at or past that CAS (through the release
// sequence of later CASes) makes those reads happen before the owner's
// rewrite of the same slot. With a relaxed load the owner could reuse a slot
// whose old value the consumer has yet to read.
//
// Why a consumer's load of head is acquire too: it pairs with the previous
// consumer's release CAS, whose own acquire of tail saw tail >= head. So the
// tail this consumer loads afterwards is at least the head it loaded, and
// tail - head is never a wrapped "negative" number. The bound check n <=
// RUNQ_SIZE/2 in runq_grab catches the remaining inconsistency (head and
// tail loaded at different moments) and retries.
//
// ABA: a CAS on head expecting h succeeds if head has returned to h after
// 2^32 consumptions. That requires a consumer to stall between its load and
// its CAS while four billion Gs pass through one queue; like Go, we accept it.
//
// Thieves should not take runnext from a P that is running: the owner likely
// readied that G a moment ago and will run it next. Go sleeps a few
// microseconds before such a steal; here the caller decides through
// steal_runnext (e.g. only on the last stealing round).

#include "kernel/runq.h"

#define RUNQ_MASK (RUNQ_SIZE - 1)

static inline struct g *slot_load(const struct runq *q, uint32_t i)
{
    return __atomic_load_n(&q->ring[i & RUNQ_MASK], __ATOMIC_RELAXED); // relaxed: ordered by the tail acquire / head CAS around it
}

static inline void slot_store(struct runq *q, uint32_t i, struct g *g)
{
    __atomic_store_n(&q->ring[i & RUNQ_MASK], g, __ATOMIC_RELAXED); // relaxed: published by the tail store-release that follows
}

// Owner only, before any other core can see q.
void runq_init(struct runq *q)
{
    q->head = 0;
    q->tail = 0;
    q->runnext = 0;
    for (uint32_t i = 0; i < RUNQ_SIZE; i++)
        q->ring[i] = 0;
}

// Owner only. Moves RUNQ_SIZE/2 Gs from the head of the full ring [h, t),
// then g, to batch. Returns false when a thief moved head first, and then
// nothing was taken.
static bool runq_push_slow(struct runq *q, struct g *g, uint32_t h, uint32_t t, struct g **batch)
{
    uint32_t n = (t - h) / 2;

    if (n != RUNQ_SIZE / 2)
        __builtin_trap(); // the caller saw a full ring: t - h == RUNQ_SIZE
    for (uint32_t i = 0; i < n; i++)
        batch[i] = slot_load(q, h + i);
    // cas-release: commits the consume, pairs with the head acquire in
    // runq_push; relaxed on failure: the caller reloads head with acquire
    if (!__atomic_compare_exchange_n(&q->head, &h, h + n, false, __ATOMIC_RELEASE,
                                     __ATOMIC_RELAXED))
        return false;
    batch[n] = g;
    return true;
}

// Owner only. See runq.h. overflow must hold RUNQ_SIZE/2 + 1 pointers.
uint32_t runq_push(struct runq *q, struct g *g, bool next, struct g **overflow)
{
    if (runq_push_fast(q, &g, next))
        return 0;
    for (;;) {
        uint32_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE); // load-acquire: pairs with consumers' CAS-release, so their slot reads are done
        uint32_t t = q->tail; // owner's own variable: no other core writes it
        if (t - h < RUNQ_SIZE) {
            slot_store(q, t, g);
            __atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE); // store-release: makes the slot (and g's contents) visible to consumers
            return 0;
        }
        if (runq_push_slow(q, g, h, t, overflow))
            return RUNQ_SIZE / 2 + 1;
        // A thief took some: the ring has room now.
    }
}

// Any core. Copies n - n/2 of q's queued Gs to batch[bh ..] (indexes taken
// modulo RUNQ_SIZE: batch is the thief's ring) and takes them with one CAS on
// q's head. With steal_runnext and an empty ring, takes runnext instead.
// Returns the number taken.
static uint32_t runq_grab(struct runq *q, struct runq *batch, uint32_t bh, bool steal_runnext)
{
    for (;;) {
        uint32_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE); // load-acquire: pairs with other consumers' CAS-release (tail >= h below)
        uint32_t t = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE); // load-acquire: pairs with the owner's store-release, slots below t are visible
        uint32_t n = t - h;
        n -= n / 2;
        if (n == 0) {
            if (!steal_runnext)
                return 0;
            struct g *next = __atomic_load_n(&q->runnext, __ATOMIC_RELAXED); // relaxed: a hint; the CAS below decides and acquires
            if (!next)
                return 0;
            // acquire: pairs with the owner's exchange-release, g's contents
            // are visible; relaxed on failure: the owner changed it, start over
            if (!__atomic_compare_exchange_n(&q->runnext, &next, (struct g *)0, false,
                                             __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                continue;
            slot_store(batch, bh, next);
            return 1;
        }
        if (n > RUNQ_SIZE / 2)
            continue; // h and t loaded at different moments: inconsistent
        for (uint32_t i = 0; i < n; i++)
            slot_store(batch, bh + i, slot_load(q, h + i));
        // cas-release: commits the consume, pairs with the head acquire in
        // runq_push; relaxed on failure: the loop reloads head with acquire
        if (__atomic_compare_exchange_n(&q->head, &h, h + n, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return n;
    }
}

// Any core but victim's owner; the caller owns thief. See runq.h.
struct g *runqsteal(struct runq *thief, struct runq *victim, bool steal_runnext)
{
    uint32_t t = thief->tail; // thief's owner is the caller
    uint32_t h = __atomic_load_n(&thief->head, __ATOMIC_ACQUIRE); // load-acquire: as in runq_push, consumers of thief are done with the slots the grab rewrites

    // The grab writes up to RUNQ_SIZE/2 slots from t on; they must not reach
    // a G still queued in [h, t).
    if (t - h > RUNQ_SIZE / 2)
        __builtin_trap();
    uint32_t n = runq_grab(victim, thief, t, steal_runnext);
    if (n == 0)
        return 0;
    n--;
    struct g *g = slot_load(thief, t + n);
    if (n)
        __atomic_store_n(&thief->tail, t + n, __ATOMIC_RELEASE); // store-release: publishes the stolen Gs to thief's consumers
    return g;
}

// Owner only, or any core once the owner is stopped (synchronized with it);
// thieves may still run. Moves runnext, then the ring in FIFO order, to out
// (RUNQ_SIZE + 1 pointers). Returns the count.
uint32_t runqdrain(struct runq *q, struct g **out)
{
    uint32_t n = 0;
    struct g *next = __atomic_exchange_n(&q->runnext, (struct g *)0, __ATOMIC_ACQUIRE); // acquire: pairs with the exchange-release in runq_push

    if (next)
        out[n++] = next;
    for (;;) {
        uint32_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE); // load-acquire: pairs with thieves' CAS-release
        uint32_t t = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE); // load-acquire: the caller may not be the core that stored it
        if (t == h)
            return n;
        for (uint32_t i = 0; i < t - h; i++)
            out[n + i] = slot_load(q, h + i);
        // cas-release: commits the consume, pairs with the head acquire in
        // runq_push; relaxed on failure: the loop reloads head with acquire
        if (__atomic_compare_exchange_n(&q->head, &h, t, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return n + (t - h);
    }
}

// Any core. A G moving from runnext to the ring (runq_push with next) can be
// missed by loading head, tail and runnext once each: head == tail seen
// before the kick, runnext == NULL seen after a get emptied it. Re-reading
// tail closes that window: if it did not move, the three loads saw one state.
static void runq_snapshot(const struct runq *q, uint32_t *n, bool *has_next)
{
    for (;;) {
        uint32_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE); // load-acquire: pairs with consumers' CAS-release (tail >= h below)
        uint32_t t = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE); // load-acquire: pairs with the owner's store-release
        struct g *next = __atomic_load_n(&q->runnext, __ATOMIC_ACQUIRE); // load-acquire: ordered before the tail re-read
        if (t == __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE)) { // load-acquire: tail unchanged, so no kick in between
            uint32_t len = t - h;
            *n = len > RUNQ_SIZE ? RUNQ_SIZE : len;
            *has_next = next != 0;
            return;
        }
    }
}

// Any core. A snapshot, for heuristics only.
uint32_t runq_len(const struct runq *q)
{
    uint32_t n;
    bool next;

    runq_snapshot(q, &n, &next);
    return n + next;
}

// Any core. A snapshot: true means the queue was empty at one instant.
bool runqempty(const struct runq *q)
{
    uint32_t n;
    bool next;

    runq_snapshot(q, &n, &next);
    return n == 0 && !next;
}
