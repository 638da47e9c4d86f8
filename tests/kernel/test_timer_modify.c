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
