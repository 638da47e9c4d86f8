// SPDX-License-Identifier: MIT
// timer_modify (kernel/timer.c), Go's modtimer: a queued timer of this P
// moved later keeps its old key in the heap and its real deadline in
// t->later; moved earlier, it is sifted up at once. What must hold: the
// timer fires once, never before its latest deadline, and a stop (or a
// move to another P, which goes through the same heap_remove) keeps the
// real deadline, not the stale key.
#include "kernel/ktest.h"
#include "goro.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "arch/arch.h"

struct fired {
    uint64_t count;
    uint64_t now;                   // the `now` timers_run passed: when it judged the timer due
};

static void record(struct timer *t, uint64_t now)
{
    struct fired *f = t->arg;
    kt_store(&f->now, now);
    kt_add(&f->count, 1);
}

// Waits (yielding) until the timer fired or the deadline passed long ago;
// the stall limit catches a timer that never fires.
static void wait_fired(struct fired *f, uint64_t deadline_cycles)
{
    while (!kt_load(&f->count) || arch_cycles() < deadline_cycles)
        gosched();
}

static uint64_t cycles_in(uint64_t ns)
{
    return arch_cycles() + arch_ns_to_cycles(ns);
}

KTEST(timer_modify_later_is_lazy_and_never_fires_at_the_old_key)
{
    int lazy_rounds = 0;
    for (int round = 0; round < 5; round++) {
        struct fired f = { 0, 0 };
        preempt_disable();          // the modify must find the timer in this P's heap
        struct timer t = { .when = cycles_in(1000000), .f = record, .arg = &f };
        timer_start(&t);
        uint64_t later = cycles_in(20000000);
        bool queued = timer_modify(&t, later, 0);
        // Left at its key, or already moved to its real place by a core
        // that found the key due (a host that held this vCPU that long).
        bool lazy = t.later == later, moved = t.later == 0 && t.when == later;
        uint64_t fired_before = kt_load(&f.count);
        preempt_enable();
        if (!queued) {
            // It fired before the modify could look (the host held this
            // vCPU past the first deadline): the modify queued it again.
            if (fired_before != 1)
                KT_FAIL("round %d: timer_modify returned false for a timer that had not fired", round);
            while (kt_load(&f.count) < 2)
                gosched();
            KT_ASSERT(kt_load(&f.now) >= later);
            continue;
        }
        if (!lazy && !moved) {
            timer_stop(&t);         // on this stack: not left queued
            KT_FAIL("round %d: moved later, the timer is neither at its key nor at its deadline (later %lu)",
                    round, (unsigned long)t.later);
        }
        lazy_rounds += lazy;
        wait_fired(&f, later);
        if (kt_load(&f.now) < later)
            KT_FAIL("round %d: fired %lu cycles before its new deadline", round,
                    (unsigned long)(later - kt_load(&f.now)));
        // a little past the new deadline: still once
        uint64_t until = cycles_in(2000000);
        while (arch_cycles() < until)
            gosched();
        KT_ASSERT_EQ(kt_load(&f.count), 1);
        KT_ASSERT(!timer_stop(&t));     // a one-shot that fired is out of its heap
    }
    if (!lazy_rounds)
        ktest_skip("the host held this vCPU past every first deadline: the lazy path went unseen");
}

KTEST(timer_modify_earlier_fires_at_the_earlier_deadline)
{
    struct fired f = { 0, 0 };
    preempt_disable();
    struct timer t = { .when = cycles_in(3600ull * 1000000000ull), .f = record, .arg = &f };
    timer_start(&t);
    uint64_t soon = cycles_in(2000000);
    bool queued = timer_modify(&t, soon, 0);
    bool sifted = t.later == 0 && t.when == soon;
    preempt_enable();
    KT_ASSERT(queued);
    KT_ASSERT(sifted);
    wait_fired(&f, soon);
    KT_ASSERT(kt_load(&f.now) >= soon);
    KT_ASSERT_EQ(kt_load(&f.count), 1);
    KT_ASSERT(!timer_stop(&t));     // a one-shot that fired is out of its heap
}

KTEST(timer_modify_then_stop_keeps_the_real_deadline)
{
    // heap_remove folds t->later into when: timers_move (a P going away)
    // re-queues the timer by when, so the stale key must not survive it.
    struct fired f = { 0, 0 };
    preempt_disable();
    // seconds out: no host delay brings either deadline within reach
    struct timer t = { .when = cycles_in(10000000000ull), .f = record, .arg = &f };
    timer_start(&t);
    uint64_t later = cycles_in(20000000000ull);
    timer_modify(&t, later, 0);
    bool removed = timer_stop(&t);
    uint64_t when = t.when, left = t.later;
    preempt_enable();
    KT_ASSERT(removed);
    KT_ASSERT_EQ(when, later);
    KT_ASSERT_EQ(left, 0);
    KT_ASSERT_EQ(kt_load(&f.count), 0);
}

KTEST(timer_modify_resets_a_period_many_times_without_a_stale_fire)
{
    // TickerReset's pattern: a 1-cycle ticker reset over and over to a
    // longer period; every fire it makes is at or after a deadline it was
    // given, and it keeps ticking at the last period.
    struct fired f = { 0, 0 };
    preempt_disable();
    struct timer t = { .when = cycles_in(1000), .period = 1, .f = record, .arg = &f };
    timer_start(&t);
    preempt_enable();
    uint64_t period = arch_ns_to_cycles(1000000), last = 0;
    for (int i = 0; i < 1000; i++) {
        preempt_disable();
        last = cycles_in(1000000);
        timer_modify(&t, last, period);
        preempt_enable();
    }
    // It ticks on after the resets. Waited for by count, not by periods: a
    // tick due while another core's vCPU is held mid-function is dropped.
    // Two ticks: one another core judged due before the last reset may
    // still be on its way (usb-uefi saw it land after the loop, with a
    // `now` before the last deadline); the one after is the new period's.
    uint64_t base = kt_load(&f.count), limit = cycles_in(10000000000ull);
    while (kt_load(&f.count) < base + 2 && arch_cycles() < limit)
        gosched();
    bool ticked = kt_load(&f.count) >= base + 2, late_enough = kt_load(&f.now) >= last;
    bool queued = timer_stop(&t);   // before any verdict: t is on this stack
    KT_ASSERT(ticked);
    KT_ASSERT(late_enough);
    KT_ASSERT(queued);              // periodic: still queued until stopped
}

// ---- timers and the running G (kernel/preempt.c: core_rearm_new_timer,
// preempt_check's budget) -----------------------------------------------------

static uint64_t timer_preemptions(void)
{
    static struct sched_stats s;
    sched_stats(&s);
    return s.total.preemptions_timers;
}

KTEST(a_fast_ticker_preempts_a_running_g_once_a_window)
{
    // A 1-cycle ticker on this P while its G runs without scheduling: a
    // periodic timer faster than the budget takes the G off at most once a
    // TIMER_PREEMPT_WINDOW_NS, however long the host keeps the vCPU away (a
    // count over a TSC span, not a time).
    struct fired f = { 0, 0 };
    preempt_disable();
    struct timer t = { .when = cycles_in(1000), .period = 1, .f = record, .arg = &f };
    timer_start(&t);
    preempt_enable();
    uint64_t before = timer_preemptions(), start = arch_cycles();
    uint64_t span = arch_ns_to_cycles(20 * (uint64_t)TIMER_PREEMPT_WINDOW_NS);
    uint64_t limit = arch_ns_to_cycles(10000000000ull);
    // the span, and at least one tick (a vCPU the host resumes late may see
    // the span end before its pending interrupt is taken)
    while (arch_cycles() - start < span ||
           (!kt_load(&f.count) && arch_cycles() - start < limit))
        cpu_relax();
    uint64_t elapsed = arch_cycles() - start, n = timer_preemptions() - before;
    timer_stop(&t);
    uint64_t most = elapsed / arch_ns_to_cycles(TIMER_PREEMPT_WINDOW_NS) + 2;
    if (n > most)
        KT_FAIL("%lu timer preemptions in %lu windows: a storm, not one a window",
                (unsigned long)n, (unsigned long)(most - 2));
    // It ticked: on 1 vCPU only by preempting this G; with more, an idle
    // core may run our P's overdue timers instead (efi-smp2 saw no
    // preemption at all in 10 s, every tick served that way).
    KT_ASSERT(kt_load(&f.count) >= 1);
    if (num_cpu() == 1)
        KT_ASSERT(n >= 1);
}

KTEST(timer_started_by_a_running_g_fires_while_it_runs)
{
    // time_after from a G that then spins: the timer is watched from the
    // end of the grace (no interrupt at its deadline), so it fires while
    // the G still runs, never before its deadline.
    struct fired f = { 0, 0 };
    preempt_disable();
    uint64_t when = cycles_in(50000);
    struct timer t = { .when = when, .f = record, .arg = &f };
    timer_start(&t);
    preempt_enable();
    // bounded by seconds, not graces: a loaded host may hold this vCPU
    // for many of them
    uint64_t start = arch_cycles(), span = arch_ns_to_cycles(10000000000ull);
    while (!kt_load(&f.count) && arch_cycles() - start < span)
        cpu_relax();
    if (!kt_load(&f.count))
        KT_FAIL("a timer 50 us out had not fired after 10 s of its G running");
    KT_ASSERT(kt_load(&f.now) >= when);
}

// ---- stop and reset of one timer from goroutines on every P at once
// (kernel/timechan.c: a stop, and a reset in place, take the heap's lock
// alone; a reset that stops and starts the timer takes the timer's lock
// too). What must hold: the timer is never queued twice, and once stopped
// it is in no heap. --------------------------------------------------------

#define RACE_GS 8
#define RACE_OPS 3000
#define RACE_HOUR 3600000000000ull

struct race {
    gtimer_t *tm;
    uint64_t done;
};

struct racer {
    struct race *r;
    uint64_t seed;
};

static void timer_racer(void *arg)
{
    struct racer *a = arg;
    uint64_t x = a->seed;
    for (int i = 0; i < RACE_OPS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        switch (x % 8) {
        case 0: case 1: case 2:
            gtimer_stop(a->r->tm);
            break;
        case 7:                     // due at once: it fires into the channel's one slot
            gtimer_reset(a->r->tm, (x >> 8) % 50000);
            break;
        default:
            gtimer_reset(a->r->tm, RACE_HOUR);
        }
        if (i % 64 == 0)
            gosched();              // other goroutines onto this P, this one onto others
    }
    kt_add(&a->r->done, 1);
}

// How many Ps' heaps hold t.
static int heaps_holding(struct timer *t)
{
    int n = 0;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        struct p *pp = allp[i];
        uint64_t f = timers_lock(pp);
        for (uint32_t k = 0; k < pp->ntimers; k++)
            n += pp->timers[k] == t;
        timers_unlock(pp, f);
    }
    return n;
}

KTEST(timer_stop_and_reset_race_from_every_p)
{
    static struct race r;
    static struct racer a[RACE_GS];
    r.tm = gtimer_new(RACE_HOUR);
    r.done = 0;
    for (int i = 0; i < RACE_GS; i++) {
        a[i] = (struct racer){ &r, (arch_cycles() | 1) * (uint64_t)(2 * i + 1) };
        go(timer_racer, &a[i]);
    }
    KT_ASSERT(kt_wait_count(&r.done, RACE_GS, KT_STALL_MS));
    struct timer *t = (struct timer *)r.tm;     // a gtimer starts with its timer
    gtimer_stop(r.tm);
    int after_stop = heaps_holding(t);
    bool again = gtimer_stop(r.tm);
    bool reset = gtimer_reset(r.tm, RACE_HOUR);
    int after_reset = heaps_holding(t);
    bool stopped = gtimer_stop(r.tm);
    gtimer_free(r.tm);
    KT_ASSERT_EQ(after_stop, 0);
    KT_ASSERT(!again);
    KT_ASSERT(!reset);
    KT_ASSERT_EQ(after_reset, 1);
    KT_ASSERT(stopped);
}

// ---- the hole a stop of the first timer leaves -------------------------------
//
// A stop (or a fire) of heap[0] with other timers queued leaves
// p->timers_hole in its slot; the next start fills it, anything else
// settles it first. What must hold on every P whenever its lock is free:
// the heap's order and slots, the hole only at 0 and never alone, and
// timer0 the earliest queued key (under the hole, its children's least).

// pp's heap as above; false with what is wrong in why.
static bool heap_ok(struct p *pp, char *why, size_t n)
{
    uint64_t f = timers_lock(pp);
    const char *bad = 0;
    uint32_t at = 0;
    uint64_t least = 0;
    for (uint32_t k = 0; k < pp->ntimers && !bad; k++) {
        struct timer *t = pp->timers[k];
        at = k;
        if (t->idx != k)
            bad = "a slot whose timer names another slot";
        else if (k && pp->timers[(k - 1) / 4]->when > t->when)
            bad = "a slot earlier than its parent";
        else if (t == &pp->timers_hole && (k || pp->ntimers < 2))
            bad = "the hole other than first, or alone";
        else if (t != &pp->timers_hole && (!least || t->when < least))
            least = t->when;
    }
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_RELAXED);     // relaxed: its writers hold the lock, as we do
    if (!bad && t0 != least)
        bad = "timer0 other than the earliest queued key";
    uint32_t ntimers = pp->ntimers;
    timers_unlock(pp, f);
    if (bad)
        snprintf(why, n, "%s (slot %u of %u)", bad, at, ntimers);
    return !bad;
}

static bool heaps_ok(char *why, size_t n)
{
    for (uint32_t i = 0; i < sched.gomaxprocs; i++)
        if (!heap_ok(allp[i], why, n))
            return false;
    return true;
}

KTEST(timer_stop_of_the_first_leaves_a_hole_the_next_start_fills)
{
    // Seconds ahead: the first of this P's heap unless an earlier timer of
    // something else is queued there, and then the round shows nothing.
    char why[96] = "";
    bool ok = true;
    int seen = 0;
    for (int round = 0; round < 5 && ok; round++) {
        struct fired fa = { 0, 0 }, fb = { 0, 0 }, fc = { 0, 0 };
        preempt_disable();
        struct p *pp = getm()->p;
        uint64_t base = cycles_in(5000000000ull);
        struct timer b = { .when = base + 2, .f = record, .arg = &fb };
        struct timer a = { .when = base + 1, .f = record, .arg = &fa };
        timer_start(&b);
        timer_start(&a);
        uint64_t f = timers_lock(pp);
        bool first = pp->timers[0] == &a;
        timers_unlock(pp, f);
        bool stopped_a = timer_stop(&a);
        f = timers_lock(pp);
        bool hole = pp->timers[0] == &pp->timers_hole, held = false;
        for (uint32_t k = 0; k < pp->ntimers; k++)
            held |= pp->timers[k] == &a;
        timers_unlock(pp, f);
        ok = heaps_ok(why, sizeof why);
        struct timer c = { .when = base + 3, .f = record, .arg = &fc };
        timer_start(&c);            // fills the hole: later than its key, it sinks
        f = timers_lock(pp);
        bool filled = pp->timers[0] != &pp->timers_hole;
        timers_unlock(pp, f);
        ok = ok && heaps_ok(why, sizeof why);
        bool stopped_b = timer_stop(&b), stopped_c = timer_stop(&c);
        preempt_enable();
        if (!ok)
            KT_FAIL("round %d: %s", round, why);
        KT_ASSERT(stopped_a && stopped_b && stopped_c);
        KT_ASSERT(!held);
        KT_ASSERT(!kt_load(&fa.count) && !kt_load(&fb.count) && !kt_load(&fc.count));
        if (first) {
            seen++;
            KT_ASSERT(hole);
            KT_ASSERT(filled);
        }
    }
    if (!heaps_ok(why, sizeof why))
        KT_FAIL("%s", why);
    if (!seen)
        ktest_skip("an earlier timer stayed first on this P every round: the hole went unseen");
}

// Each timer that fires from the top leaves the hole; those under it still
// fire, once each, never early, and the heaps stay whole.
KTEST(timers_fired_from_a_holed_heap_fire_once_each)
{
    enum { N = 6 };
    static struct fired f[N];
    static struct timer t[N];
    static uint64_t when[N];
    preempt_disable();
    uint64_t base = cycles_in(2000000), step = arch_ns_to_cycles(500000);
    for (int i = N - 1; i >= 0; i--) {
        f[i] = (struct fired){ 0, 0 };
        when[i] = base + (uint64_t)i * step;
        t[i] = (struct timer){ .when = when[i], .f = record, .arg = &f[i] };
        timer_start(&t[i]);
    }
    preempt_enable();
    for (int i = 0; i < N; i++)
        wait_fired(&f[i], when[i]);
    char why[96] = "";
    bool ok = heaps_ok(why, sizeof why);
    for (int i = 0; i < N; i++) {
        KT_ASSERT_EQ(kt_load(&f[i].count), 1);
        KT_ASSERT(kt_load(&f[i].now) >= when[i]);
    }
    if (!ok)
        KT_FAIL("%s", why);
}
