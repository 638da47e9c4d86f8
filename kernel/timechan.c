// SPDX-License-Identifier: MIT
// Timers for goroutines, after Go's src/time/sleep.go and tick.go:
// time_after, gtimer (time.Timer), time_afterfunc (time.AfterFunc) and
// tickers, over the per-P timer heaps of kernel/timer.h.
//
// A gtimer is a struct timer plus what its firing does (fire below): send
// the time on its channel with chan_try_send, which never blocks, so a
// full slot drops the value, as Go's sendTime does; or start fn(arg) in a
// goroutine of its own, as Go's goFunc does. Timer functions run on g0
// with a P held, where both are allowed.
//
// Stop and reset: timer_stop says whether it took the timer out of its
// heap before it fired, which is Go's Stop result, and once it returns the
// timer function is not running and will not run again (kernel/timer.h),
// so gtimer_free may free the timer at once. Go allows stops and resets of
// one timer from several goroutines at once. A stop, and a reset of a
// timer queued on the caller's P (timer_modify_here: the common one), are
// safe beside anything under the heap's lock alone; tm->lock serializes
// only the resets that stop and start the timer again, since timer_start
// must not find it queued. fire never takes it, so a reset that waits for
// a running fire cannot deadlock with it. Its rank, LOCK_RANK_GTIMER,
// comes before the P's timers_lock.
//
// Deadlines saturate (timer_deadline_ns): ns so large that now + ns
// overflows means never.
// time_after has no handle: its one-shot gtimer frees itself in fire,
// the last use, and only the channel is the caller's.
#include "goro.h"
#include "arch/arch.h"
#include "kernel/timer.h"
#include "lib/panic.h"

struct gtimer {
    struct timer t;                 // first: the timer function gets the gtimer
    // read-only after creation
    chan_t *c;                      // NULL: a time_afterfunc
    void (*fn)(void *);
    void *arg;
    bool self_free;                 // time_after's: freed by its own fire
    struct spinlock lock;           // the resets that stop and start; see the top
};

struct ticker {
    struct gtimer tm;
};

// A period in cycles: at least one, so a 1 ns ticker on a slow TSC still
// moves forward.
static uint64_t period_cycles(uint64_t ns)
{
    uint64_t c = arch_ns_to_cycles(ns);
    return c ? c : 1;
}

// Reads tm before it delivers, and touches it after only if it frees
// itself: a receiver may free a gtimer as soon as the value arrives.
static void fire(struct timer *t, uint64_t now)
{
    struct gtimer *tm = (struct gtimer *)t;
    bool self_free = tm->self_free;
    if (tm->c) {
        // The time of the delivery, read now, as Go's sendTime does, not
        // the run's `now`: a periodic timer is back in its heap before
        // this runs, so another core may deliver the next tick first, and
        // a value read at the start of a run that the host then delayed
        // went out after a later one (a ticker's ticks out of order: the
        // soak, seed=4003 quantum=500us on 8 vCPUs).
        (void)now;
        uint64_t ns = arch_tsc_to_nanotime(arch_cycles());
        chan_try_send(tm->c, &ns);
    } else {
        go(tm->fn, tm->arg);
    }
    if (self_free)
        free(tm);                   // nothing refers to it any more
}

static void gtimer_init(struct gtimer *tm, chan_t *c, void (*fn)(void *), void *arg)
{
    tm->c = c;
    tm->fn = fn;
    tm->arg = arg;
    tm->t.f = fire;
    spin_init(&tm->lock, "gtimer", LOCK_RANK_GTIMER);
}

static struct gtimer *gtimer_alloc(chan_t *c, void (*fn)(void *), void *arg)
{
    struct gtimer *tm = calloc(1, sizeof *tm);
    gtimer_init(tm, c, fn, arg);
    return tm;
}

chan_t *time_after(uint64_t ns)
{
    chan_t *c = chan_make(sizeof(uint64_t), 1);
    struct gtimer *tm = gtimer_alloc(c, 0, 0);
    tm->self_free = true;
    tm->t.when = timer_deadline_ns(ns);
    timer_start(&tm->t);            // tm may be freed from here on
    return c;
}

gtimer_t *gtimer_new(uint64_t ns)
{
    struct gtimer *tm = gtimer_alloc(chan_make(sizeof(uint64_t), 1), 0, 0);
    tm->t.when = timer_deadline_ns(ns);
    timer_start(&tm->t);
    return tm;
}

gtimer_t *time_afterfunc(uint64_t ns, void (*fn)(void *), void *arg)
{
    struct gtimer *tm = gtimer_alloc(0, fn, arg);
    tm->t.when = timer_deadline_ns(ns);
    timer_start(&tm->t);
    return tm;
}

chan_t *gtimer_chan(gtimer_t *tm)
{
    return tm->c;
}

bool gtimer_stop(gtimer_t *tm)
{
    return timer_stop(&tm->t);
}

static __attribute__((noinline)) bool restart_elsewhere(struct gtimer *tm, uint64_t when, uint64_t period)
{
    spin_lock(&tm->lock);
    bool active = timer_modify(&tm->t, when, period);
    spin_unlock(&tm->lock);
    return active;
}

// period: 0 for a one-shot timer. Inline: a reset in place (the common
// one) is little more than the heap's lock.
static inline __attribute__((always_inline)) bool restart(struct gtimer *tm, uint64_t ns, uint64_t period)
{
    uint64_t when = timer_deadline_ns(ns);
    if (timer_modify_here(&tm->t, when, period))
        return true;
    return restart_elsewhere(tm, when, period);
}

bool gtimer_reset(gtimer_t *tm, uint64_t ns)
{
    return restart(tm, ns, 0);
}

void gtimer_free(gtimer_t *tm)
{
    gtimer_stop(tm);
    chan_free(tm->c);
    free(tm);
}

ticker_t *ticker_new(uint64_t period_ns)
{
    if (period_ns == 0)
        panic("fatal error: non-positive interval for ticker_new");
    struct ticker *tk = calloc(1, sizeof *tk);
    struct gtimer *tm = &tk->tm;
    gtimer_init(tm, chan_make(sizeof(uint64_t), 1), 0, 0);
    tm->t.when = timer_deadline_ns(period_ns);
    tm->t.period = period_cycles(period_ns);
    timer_start(&tm->t);
    return tk;
}

chan_t *ticker_chan(ticker_t *tk)
{
    return tk->tm.c;
}

void ticker_stop(ticker_t *tk)
{
    gtimer_stop(&tk->tm);
}

void ticker_reset(ticker_t *tk, uint64_t period_ns)
{
    if (period_ns == 0)
        panic("fatal error: non-positive interval for ticker_reset");
    restart(&tk->tm, period_ns, period_cycles(period_ns));
}

void ticker_free(ticker_t *tk)
{
    ticker_stop(tk);
    chan_free(tk->tm.c);
    free(tk);
}
