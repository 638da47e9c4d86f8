// SPDX-License-Identifier: MIT
// Per-P timer heaps (4-ary, keyed by when), sleep_ns and nanotime's users.
//
// Invariants: a queued timer is in exactly one heap, t->pp names it and
// t->idx is its slot; both change only under that P's timers_lock (t->pp
// is also read without it, with acquire loads, and written with release
// stores). The heap is ordered by when; a timer whose deadline moved later
// (timer_modify) keeps its old when as its key and the real deadline in
// t->later (> when), so the key is never after the deadline: a core wakes
// early at worst, and timers_run, finding such a timer due by its key,
// moves it to its real place instead of running it. Out of a heap, later
// is 0 (heap_remove folds it into when).
//
// The hole: the first timer leaving its heap (stopped, or taken to run)
// while others remain leaves p->timers_hole in its slot with its key, as
// Go 1.23 leaves a zombie, instead of sifting the last timer down from the
// top; the next push fills the hole (the new timer sinks from the top,
// which under a heap of later timers is no walk at all: NewTimer then
// Stop, a ticker stopped and made again, a fired timer's successor).
// Only heap[0] is ever the hole, and only with a timer beside it: before
// any other change of the heap's shape, and when a timer under it comes
// due, heap_settle takes it out for real. It names no timer, so a
// stopped timer may be freed at once.
//
// p->timer0 mirrors the earliest queued deadline key (heap[0]->when, or
// under the hole its children's least; 0 when empty) for lock-free
// peeking: written under the lock with a release store, read with acquire
// loads; p->timer0_fast beside it says whether that timer is a fast
// periodic one (preempt.c's budget).
//
// Running: timers_run takes a due one-shot timer out of its heap (a
// periodic one stays in it, moved to its next time, so that it is always
// in its heap until stopped) and calls its function without the lock.
// A periodic timer's function never runs on two Ms at once: while it runs
// (t->running), an M that finds the timer due again (a core stealing the
// P's overdue timers while the owner's M is descheduled mid-function)
// drops that tick and moves the timer on a period, as a slow receiver
// loses ticks in Go; run twice at once, a ticker could deliver a later
// time before an earlier one (the soak saw it, 32 vCPUs, seed 5005).
// Meanwhile the M running it names it in m->running_timer, set
// under the heap's lock before the timer leaves the heap and cleared
// (release) after the function returns; the function may free a one-shot
// timer, so nothing else of the timer is touched after it. timer_stop
// takes the timer out of its heap, then waits while any other M names it:
// once timer_stop returns, the function is not running and will not run
// again (Go's deltimer waits on timerRunning the same way), so the caller
// may free the timer.
#include "kernel/timer.h"
#include "kernel/sched.h"
#include "kernel/page.h"
#include "kernel/debugdelay.h"
#include "lib/panic.h"
#include "lib/string.h"

// The heap's lock: a word taken with interrupts off, so that its holder is
// never interrupted into code that wants it (as spin_lock), inline and
// without spin_lock's record of the holder because every timer operation
// takes it, and a reset is little else. Ranked LOCK_RANK_TIMERS, checked
// in debug builds.
static __attribute__((noinline)) void heap_lock_slow(uint32_t *l)
{
    do {
        while (__atomic_load_n(l, __ATOMIC_RELAXED))   // relaxed: a hint; the exchange decides
            arch_lock_relax();                          // interrupts off: answers TLB shoot-downs
    } while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE));     // acquire: pairs with heap_give's release
}

// heap_take and heap_give with interrupts already off.
static inline __attribute__((always_inline)) void heap_take(struct p *pp)
{
    lockrank_acquire(&pp->timers_lock, LOCK_RANK_TIMERS, (uintptr_t)__builtin_return_address(0));
    if (__builtin_expect(__atomic_exchange_n(&pp->timers_lock, 1, __ATOMIC_ACQUIRE) != 0, 0))  // acquire: pairs with heap_give's release
        heap_lock_slow(&pp->timers_lock);
}

static inline __attribute__((always_inline)) void heap_give(struct p *pp)
{
    __atomic_store_n(&pp->timers_lock, 0, __ATOMIC_RELEASE);    // release: publishes the critical section
    lockrank_release(&pp->timers_lock);
}

static inline __attribute__((always_inline)) uint64_t heap_lock(struct p *pp)
{
    uint64_t f = irq_save();
    heap_take(pp);
    return f;
}

static inline __attribute__((always_inline)) void heap_unlock(struct p *pp, uint64_t f)
{
    heap_give(pp);
    irq_restore(f);
}

uint64_t timers_lock(struct p *pp)
{
    return heap_lock(pp);
}

void timers_unlock(struct p *pp, uint64_t f)
{
    heap_unlock(pp, f);
}

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

// The heap's lock held. pp's ptimer_set bit changes only here, so a plain
// look at it is exact, and the shared word is written (a locked RMW every
// P's heap operations would otherwise make) only when the heap empties or
// stops being empty.
// The heap's lock held, at least two timers queued: the earliest of
// heap[0]'s children.
static inline __attribute__((always_inline)) struct timer *first_child(struct p *pp)
{
    ASSERT(pp->ntimers > 1);
    struct timer *t = pp->timers[1];
    for (uint32_t k = 2; k <= 4 && k < pp->ntimers; k++)
        if (pp->timers[k]->when < t->when)
            t = pp->timers[k];
    return t;
}

static void timer0_update(struct p *pp)
{
    struct timer *t = pp->ntimers ? pp->timers[0] : 0;
    if (t == &pp->timers_hole)
        t = first_child(pp);        // the hole never stands alone
    bool fast = t && t->period && t->period < timer_fast_period_cycles;
    __atomic_store_n(&pp->timer0_fast, fast, __ATOMIC_RELAXED);     // relaxed: preempt_check's hint, read beside timer0
    // relaxed: this bit's writers hold pp's timers_lock, as we do
    bool had = __atomic_load_n(&sched.ptimer_set[pp->id / 64], __ATOMIC_RELAXED) >> (pp->id % 64) & 1;
    if (t && !had && pset_put(sched.ptimer_set, pp->id, true))      // before timer0 (struct sched)
        __atomic_fetch_add(&sched.nptimer, 1, __ATOMIC_SEQ_CST);    // seq-cst: as the bit's
    __atomic_store_n(&pp->timer0, t ? t->when : 0, __ATOMIC_RELEASE);   // pairs with the lock-free peeks' acquire
    if (!t && had && pset_put(sched.ptimer_set, pp->id, false))     // after timer0 (struct sched)
        __atomic_fetch_sub(&sched.nptimer, 1, __ATOMIC_SEQ_CST);    // seq-cst: as the bit's
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
    __atomic_store_n(&t->pp, pp, __ATOMIC_RELEASE);    // pairs with timer_stop's acquire (which then takes the lock)
    if (pp->ntimers && pp->timers[0] == &pp->timers_hole) {
        // t fills the hole: it sinks from the top, every key below being
        // at least the hole's.
        heap_set(pp, 0, t);
        sift_down(pp, 0);
    } else {
        heap_set(pp, pp->ntimers++, t);
        sift_up(pp, t->idx);
    }
    timer0_update(pp);
}

static void heap_remove(struct p *pp, struct timer *t)
{
    uint32_t i = t->idx;
    ASSERT(i < pp->ntimers && pp->timers[i] == t);
    struct timer *last = pp->timers[--pp->ntimers];
    if (t->later) {
        t->when = t->later;         // a move (timers_move) keeps the real deadline
        t->later = 0;
    }
    __atomic_store_n(&t->pp, (struct p *)0, __ATOMIC_RELEASE);    // pairs with timer_stop's acquire: running_timer is set before
    if (last != t) {
        heap_set(pp, i, last);
        sift_up(pp, i);
        sift_down(pp, last->idx);
    }
    timer0_update(pp);
}

// The heap's lock held: takes the hole out of the heap, if there is one
// (the sift its first timer's leaving skipped), before the heap changes
// shape otherwise.
static void heap_settle(struct p *pp)
{
    if (pp->ntimers && pp->timers[0] == &pp->timers_hole)
        heap_remove(pp, &pp->timers_hole);
}

// Takes t out of its heap: the first timer, with others beside it, leaves
// the hole in its slot (no sift); any other goes at once, the hole settled
// first so that it stays the first.
static inline __attribute__((always_inline)) void heap_delete(struct p *pp, struct timer *t)
{
    if (t->idx != 0 || pp->ntimers == 1) {
        heap_settle(pp);
        heap_remove(pp, t);
        return;
    }
    struct timer *hole = &pp->timers_hole;
    hole->when = t->when;           // the key: the heap's order holds
    if (t->later) {
        t->when = t->later;
        t->later = 0;
    }
    __atomic_store_n(&t->pp, (struct p *)0, __ATOMIC_RELEASE);    // pairs with timer_stop's acquire: running_timer is set before
    heap_set(pp, 0, hole);
    timer0_update(pp);
}

// t became its P's earliest timer: this core must watch it, from the end
// of core_rearm_new_timer's grace (the scheduler's passes run it before).
static void rearm_for(struct m *mp)
{
    uint64_t f = irq_save();
    core_rearm_new_timer(mp, arch_cycles());
    irq_restore(f);
}

void timer_start(struct timer *t)
{
    struct m *mp = acquirem();
    struct p *pp = mp->p;
    if (__builtin_expect(!pp, 0))
        sched_fatal_without_p("a timer start", __builtin_return_address(0));
    ASSERT(t->pp == 0);
    t->later = 0;
    uint64_t f = heap_lock(pp);
    heap_push(pp, t);
    bool first = pp->timers[0] == t;
    heap_unlock(pp, f);
    if (first)
        rearm_for(mp);
    releasem(mp);
}

bool timer_stop(struct timer *t)
{
    bool removed = false;
    for (;;) {
        struct p *pp = __atomic_load_n(&t->pp, __ATOMIC_ACQUIRE);    // pairs with heap_push's and heap_remove's release
        if (!pp)
            break;
        uint64_t f = heap_lock(pp);
        if (t->pp == pp) {
            heap_delete(pp, t);
            removed = true;
            heap_unlock(pp, f);
            break;
        }
        heap_unlock(pp, f);                 // it moved or fired meanwhile: look again
    }
    // Its function may still be running on another M (taken out of the
    // heap before we looked); never wait for this M: that would be a
    // timer function stopping its own timer.
    struct m *self = getm();
    for (uint32_t i = 0; i < sched.ncpu; i++) {
        struct m *mp = &allm[i];
        if (mp == self)
            continue;
        while (__atomic_load_n(&mp->running_timer, __ATOMIC_ACQUIRE) == t)   // pairs with timers_run's release
            cpu_relax();
    }
    return removed;
}

// timer_modify_here's rarer part, t's heap's lock held, interrupts off
// (f: their state before): t moves earlier (a sift up, and this core
// re-armed if t is now the first), or its period changes while it is the
// first (timer0_fast). Gives the lock back and puts interrupts back.
static __attribute__((noinline)) bool modify_resift(struct timer *t, uint64_t when, uint64_t period, uint64_t f)
{
    struct p *pp = t->pp;
    heap_settle(pp);
    t->period = period;
    bool first = false;
    if (when >= t->when) {
        t->later = when > t->when ? when : 0;
    } else {
        t->when = when;
        t->later = 0;
        sift_up(pp, t->idx);
        first = pp->timers[0] == t;
    }
    timer0_update(pp);
    heap_give(pp);
    if (first)
        core_rearm_new_timer(getm(), arch_cycles());
    irq_restore(f);
    return true;
}

bool timer_modify_here(struct timer *t, uint64_t when, uint64_t period)
{
    // Interrupts off: nothing preempts this G, so it keeps its M and the M
    // its P (acquirem's job, for less), and the heap's lock wants them off.
    uint64_t f = irq_save();
    struct p *pp = getm()->p;
    if (__builtin_expect(!pp, 0))
        sched_fatal_without_p("a timer reset", __builtin_return_address(0));
    // Only this P's heap is changed in place: a deadline moved earlier in
    // another P's heap would need that P's core re-armed.
    if (__atomic_load_n(&t->pp, __ATOMIC_ACQUIRE) != pp) {     // a hint, pairs with heap_push's release; the lock decides
        irq_restore(f);
        return false;
    }
    heap_take(pp);
    if (t->pp != pp) {
        heap_give(pp);
        irq_restore(f);
        return false;
    }
    if (when < t->when || (period != t->period && (pp->timers[0] == t || pp->timers[0] == &pp->timers_hole)))
        return modify_resift(t, when, period, f);
    // Later, or the same: lazily (t->later); nothing else changes.
    t->period = period;
    t->later = when > t->when ? when : 0;
    heap_give(pp);
    irq_restore(f);
    return true;
}

bool timer_modify(struct timer *t, uint64_t when, uint64_t period)
{
    if (timer_modify_here(t, when, period))
        return true;
    bool active = timer_stop(t);
    t->when = when;
    t->period = period;
    timer_start(t);
    return active;
}

uint32_t timers_run(struct p *pp, uint64_t now)
{
    uint32_t ran = 0, moved = 0;
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);     // a hint, pairs with timer0_update; the lock decides
    if (!t0 || t0 > now)
        return 0;
    struct m *mp = getm();
    uint64_t f = heap_lock(pp);
    for (;;) {
        // timer0 is exact under the lock: the earliest key, the hole's
        // children's under a hole
        if (!pp->ntimers || __atomic_load_n(&pp->timer0, __ATOMIC_RELAXED) > now) {   // relaxed: its writers hold the lock, as we do
            heap_unlock(pp, f);
            break;
        }
        struct timer *t = pp->timers[0];
        if (t == &pp->timers_hole) {
            heap_settle(pp);        // a timer under it is due
            continue;
        }
        if (t->later) {
            // Its deadline moved later (timer_modify): to its real place.
            t->when = t->later;
            t->later = 0;
            sift_down(pp, 0);
            timer0_update(pp);
            moved++;
            continue;
        }
        bool periodic = t->period != 0;    // read under the lock: f may free a one-shot timer
        if (periodic) {
            // Stays in the heap, at the next due time after now (skipping
            // missed periods; never, UINT64_MAX, beyond 64 bits): out of it
            // even under the lock, timer_stop would find it nowhere, return,
            // and see it tick on once it went back in.
            uint64_t k = (now - t->when) / t->period + 1;
            uint64_t step = k > UINT64_MAX / t->period ? UINT64_MAX : k * t->period;
            t->when = step > UINT64_MAX - t->when ? UINT64_MAX : t->when + step;
            sift_down(pp, 0);
            timer0_update(pp);
            if (__atomic_load_n(&t->running, __ATOMIC_ACQUIRE))   // pairs with the clearing release below
                continue;           // its function still runs elsewhere: this tick is dropped
            __atomic_store_n(&t->running, 1, __ATOMIC_RELAXED);    // under the lock; published by the unlock
        }
        // Named before it leaves the heap: timer_stop, seeing t->pp NULL
        // (acquire), must see it running.
        __atomic_store_n(&mp->running_timer, t, __ATOMIC_RELAXED);   // published by heap_remove's release and the unlock
        // The hole only where nothing under it is due: with the next one
        // due too, this run would settle it at once.
        if (!periodic && pp->ntimers > 1 && first_child(pp)->when <= now)
            heap_remove(pp, t);
        else if (!periodic)
            heap_delete(pp, t);
        DEBUG_DELAY(timers_run_taken);
        // Its function runs without the lock: it readies Gs and may start timers.
        heap_unlock(pp, f);
        // how late it runs (a periodic timer's when has moved on by a
        // period: exact while it runs less than a period late)
        trace_event(TR_TIMER, t->period ? now + t->period - t->when : now - t->when, (uint64_t)t->f);
        t->f(t, now);
        if (periodic)
            __atomic_store_n(&t->running, 0, __ATOMIC_RELEASE);   // before running_timer: timer_stop's waiter may free t
        __atomic_store_n(&mp->running_timer, (struct timer *)0, __ATOMIC_RELEASE);    // f is done: pairs with timer_stop's acquire
        ran++;
        // The next one due? The same look as at the entry, so that a timer
        // firing alone costs one lock, not two.
        uint64_t next = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);    // a hint, pairs with timer0_update; the lock decides
        if (!next || next > now)
            break;
        f = heap_lock(pp);
    }
    // A periodic timer went back in the heap, or a modified one moved: this
    // core must watch the new earliest if the P is its own (an idle core re-arms on its way to halt anyway).
    if ((ran || moved) && mp->p == pp) {
        uint64_t f = irq_save();
        core_rearm(mp, arch_cycles());
        irq_restore(f);
    }
    return ran;
}

// Looks only at the Ps whose ptimer_set bit is on: a word per 64 Ps and
// one load per P with timers (struct sched says why a clear bit is safe).
uint64_t timers_next_after(uint64_t after)
{
    uint64_t best = 0;
    uint32_t nprocs = sched.gomaxprocs;
    if (!__atomic_load_n(&sched.nptimer, __ATOMIC_ACQUIRE))      // pairs with timer0_update's seq-cst add
        return 0;
    for (uint32_t k = 0; k * 64 < nprocs; k++) {
        uint64_t has = __atomic_load_n(&sched.ptimer_set[k], __ATOMIC_ACQUIRE);     // pairs with timer0_update's seq-cst set
        if (nprocs - k * 64 < 64)
            has &= (1ull << (nprocs - k * 64)) - 1;
        for (; has; has &= has - 1) {
            struct p *pp = allp[k * 64 + (uint32_t)__builtin_ctzll(has)];
            uint64_t w = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);   // pairs with timer0_update's release
            if (w > after && (!best || w < best))
                best = w;
        }
    }
    return best;
}

uint64_t timers_next(void)
{
    return timers_next_after(0);
}

bool timers_pending(void)
{
    return timers_next() != 0;
}

void timers_move(struct p *from, struct p *to)
{
    uint64_t f = heap_lock(from);
    heap_settle(from);
    while (from->ntimers) {
        struct timer *t = from->timers[from->ntimers - 1];
        heap_remove(from, t);
        uint64_t g = heap_lock(to);
        heap_push(to, t);
        heap_unlock(to, g);
    }
    heap_unlock(from, f);
}


// arch_ns_to_cycles saturates, so one comparison catches every overflow.
uint64_t timer_deadline_ns(uint64_t ns)
{
    uint64_t now = arch_cycles(), c = arch_ns_to_cycles(ns);
    return c >= UINT64_MAX - now ? UINT64_MAX : now + c;
}

// ---- sleep_ns -------------------------------------------------------------

static void sleep_fire(struct timer *t, uint64_t now)
{
    (void)now;
    goready(t->arg, true);
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
