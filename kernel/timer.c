// SPDX-License-Identifier: MIT
// Per-P timer heaps (4-ary, keyed by when), sleep_ns and nanotime's users.
//
// Invariants: a queued timer is in exactly one heap, t->pp names it and
// t->idx is its slot; both change only under that P's timers_lock.
// p->timer0 mirrors heap[0]->when (0 when empty) for lock-free peeking:
// written under the lock with a release store, read with acquire loads.
#include "kernel/timer.h"
#include "kernel/sched.h"
#include "kernel/page.h"
#include "lib/panic.h"
#include "lib/string.h"

void core_rearm(struct m *mp, uint64_t now);

static void heap_set(struct p *pp, uint32_t i, struct timer *t)
{
    pp->timers[i] = t;
    t->idx = i;
}

static void sift_up(struct p *pp, uint32_t i)
{
    struct timer *t = pp->timers[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 4;
        if (pp->timers[parent]->when <= t->when)
            break;
        heap_set(pp, i, pp->timers[parent]);
        i = parent;
    }
    heap_set(pp, i, t);
}

static void sift_down(struct p *pp, uint32_t i)
{
    struct timer *t = pp->timers[i];
    uint32_t n = pp->ntimers;
    for (;;) {
        uint32_t c = 4 * i + 1, best = i;
        uint64_t w = t->when;
        for (uint32_t k = c; k < c + 4 && k < n; k++)
            if (pp->timers[k]->when < w) {
                best = k;
                w = pp->timers[k]->when;
            }
        if (best == i)
            break;
        heap_set(pp, i, pp->timers[best]);
        i = best;
    }
    heap_set(pp, i, t);
}

static void timer0_update(struct p *pp)
{
    __atomic_store_n(&pp->timer0, pp->ntimers ? pp->timers[0]->when : 0, __ATOMIC_RELEASE);
}

static void heap_push(struct p *pp, struct timer *t)
{
    if (pp->ntimers == pp->timers_cap) {
        uint32_t cap = pp->timers_cap ? pp->timers_cap * 2 : 512;
        size_t pages = (cap * sizeof(struct timer *) + PAGE_SIZE - 1) / PAGE_SIZE;
        struct timer **n = page_alloc(pages);
        if (pp->timers) {
            memcpy(n, pp->timers, pp->ntimers * sizeof(struct timer *));
            page_free(pp->timers, (pp->timers_cap * sizeof(struct timer *) + PAGE_SIZE - 1) / PAGE_SIZE);
        }
        pp->timers = n;
        pp->timers_cap = (uint32_t)(pages * PAGE_SIZE / sizeof(struct timer *));
    }
    t->pp = pp;
    heap_set(pp, pp->ntimers++, t);
    sift_up(pp, t->idx);
    timer0_update(pp);
}

static void heap_remove(struct p *pp, struct timer *t)
{
    uint32_t i = t->idx;
    ASSERT(i < pp->ntimers && pp->timers[i] == t);
    struct timer *last = pp->timers[--pp->ntimers];
    t->pp = 0;
    if (last != t) {
        heap_set(pp, i, last);
        sift_up(pp, i);
        sift_down(pp, last->idx);
    }
    timer0_update(pp);
}

void timer_start(struct timer *t)
{
    struct m *mp = acquirem();
    struct p *pp = mp->p;
    ASSERT(t->pp == 0);
    spin_lock(&pp->timers_lock);
    heap_push(pp, t);
    bool first = pp->timers[0] == t;
    spin_unlock(&pp->timers_lock);
    if (first) {
        uint64_t f = irq_save();
        core_rearm(mp, arch_cycles());
        irq_restore(f);
    }
    releasem(mp);
}

bool timer_stop(struct timer *t)
{
    for (;;) {
        struct p *pp = __atomic_load_n(&t->pp, __ATOMIC_ACQUIRE);
        if (!pp)
            return false;
        spin_lock(&pp->timers_lock);
        if (t->pp == pp) {
            heap_remove(pp, t);
            spin_unlock(&pp->timers_lock);
            return true;
        }
        spin_unlock(&pp->timers_lock);      // it moved or fired meanwhile: look again
    }
}

uint32_t timers_run(struct p *pp, uint64_t now)
{
    uint32_t ran = 0;
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);
    if (!t0 || t0 > now)
        return 0;
    spin_lock(&pp->timers_lock);
    while (pp->ntimers && pp->timers[0]->when <= now) {
        struct timer *t = pp->timers[0];
        heap_remove(pp, t);
        if (t->period) {
            // the next due time after now, skipping missed periods; never
            // (UINT64_MAX) when that is beyond 64 bits
            uint64_t k = (now - t->when) / t->period + 1;
            uint64_t step = k > UINT64_MAX / t->period ? UINT64_MAX : k * t->period;
            t->when = step > UINT64_MAX - t->when ? UINT64_MAX : t->when + step;
            heap_push(pp, t);
        }
        // f runs without the lock: it readies Gs and may start timers.
        spin_unlock(&pp->timers_lock);
        t->f(t, now);
        ran++;
        spin_lock(&pp->timers_lock);
    }
    spin_unlock(&pp->timers_lock);
    // A periodic timer went back in the heap: this core must watch it if
    // the P is its own (an idle core re-arms on its way to halt anyway).
    struct m *mp = getm();
    if (ran && mp->p == pp) {
        uint64_t f = irq_save();
        core_rearm(mp, arch_cycles());
        irq_restore(f);
    }
    return ran;
}

uint64_t timers_next(void)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        uint64_t w = __atomic_load_n(&allp[i]->timer0, __ATOMIC_ACQUIRE);
        if (w && (!best || w < best))
            best = w;
    }
    return best;
}

bool timers_pending(void)
{
    return timers_next() != 0;
}

void timers_move(struct p *from, struct p *to)
{
    spin_lock(&from->timers_lock);
    while (from->ntimers) {
        struct timer *t = from->timers[from->ntimers - 1];
        heap_remove(from, t);
        spin_lock(&to->timers_lock);
        heap_push(to, t);
        spin_unlock(&to->timers_lock);
    }
    spin_unlock(&from->timers_lock);
}

uint64_t timer_deadline_ns(uint64_t ns)
{
    uint64_t now = arch_cycles(), room = UINT64_MAX - now;
    // Below arch_cycles_to_ns(room) the conversion cannot overflow either,
    // whether or not arch_ns_to_cycles saturates.
    if (ns >= arch_cycles_to_ns(room))
        return UINT64_MAX;
    uint64_t c = arch_ns_to_cycles(ns);
    return c >= room ? UINT64_MAX : now + c;
}

// ---- sleep_ns -------------------------------------------------------------

static void sleep_fire(struct timer *t, uint64_t now)
{
    (void)now;
    gready(t->arg, true);
}

static bool sleep_arm(struct g *gp, void *arg)
{
    struct timer *t = arg;
    t->arg = gp;
    timer_start(t);
    return true;
}

void sleep_ns(uint64_t ns)
{
    if (ns == 0)
        return;
    struct timer t = { .when = timer_deadline_ns(ns), .f = sleep_fire };
    gopark(sleep_arm, &t, "sleep", 0);
}
