// SPDX-License-Identifier: MIT
// app=soak's time programs: sleeps, timers, AfterFunc, tickers and
// time_after, many stopped or reset early. Each fires once, never early,
// and never after a stop that kept it from firing.
#include "soak.h"

struct timeprog {
    rng_t r;
};

static void spawn_timeprogs(rng_t *r, uint32_t n, void (*fn)(void *))
{
    for (uint32_t i = 0; i < n; i++) {
        struct timeprog *t = round_alloc(sizeof *t);
        t->r = rng_split(r);
        soak_go(fn, t);
    }
}

// Waits past a deadline that a stopped timer would have had, so that a
// delivery the stop failed to prevent has had its chance.
static void sleep_past(uint64_t d)
{
    sleep_ns(d + 500000);
}

// ---- sleep ------------------------------------------------------------------

static void sleeper(void *p)
{
    struct timeprog *t = p;
    for (uint32_t i = 1 + rng_below(&t->r, 3); i > 0; i--) {
        uint64_t d = soak_duration(&t->r), start = nanotime();
        sleep_ns(d);
        check_not_early("sleep", start, d, nanotime());
        soak_op(1);
    }
}

void prog_sleep(rng_t *r)
{
    spawn_timeprogs(r, 1 + rng_below(r, 8), sleeper);
}

// ---- gtimer: receive, stop early, reset ---------------------------------------

static void timer_user(void *p)
{
    struct timeprog *t = p;
    uint64_t d = soak_duration(&t->r), start = nanotime(), fired;
    gtimer_t *tm = gtimer_new(d);
    chan_t *c = gtimer_chan(tm);
    switch (rng_below(&t->r, 3)) {
    case 0:                                     // let it fire
        chan_recv(c, &fired);
        check_not_early("timer", start, d, fired);
        break;
    case 1:                                     // stop it early
        if (gtimer_stop(tm)) {
            sleep_past(d);
            if (chan_try_recv(c, &fired) != CHAN_WOULD_BLOCK)
                soak_fail("timer: fired after a stop that returned true");
        } else {
            chan_recv(c, &fired);               // it had fired: its value is there
            check_not_early("timer (stopped late)", start, d, fired);
        }
        break;
    default: {                                  // stop, drain, reset
        if (!gtimer_stop(tm))
            chan_recv(c, &fired);
        uint64_t d2 = soak_duration(&t->r), restart = nanotime();
        if (gtimer_reset(tm, d2))
            soak_fail("timer: reset of a stopped timer returned true");
        chan_recv(c, &fired);
        check_not_early("timer (reset)", restart, d2, fired);
        break;
    }
    }
    if (rng_below(&t->r, 2) && chan_try_recv(c, &fired) != CHAN_WOULD_BLOCK)
        soak_fail("timer: fired twice");
    gtimer_free(tm);
    soak_op(2);
}

void prog_timer(rng_t *r)
{
    spawn_timeprogs(r, 1 + rng_below(r, 6), timer_user);
}

// ---- time_afterfunc -----------------------------------------------------------

struct afterfunc {
    uint32_t fired;                     // atomic
    uint64_t when;                      // nanotime() in fn
};

static void afterfunc_fn(void *p)
{
    struct afterfunc *a = p;
    a->when = nanotime();
    __atomic_fetch_add(&a->fired, 1, __ATOMIC_RELEASE);    // publishes when; pairs with wait_fired
}

static uint32_t wait_fired(struct afterfunc *a, uint32_t n)
{
    uint32_t f;
    while ((f = __atomic_load_n(&a->fired, __ATOMIC_ACQUIRE)) < n)
        sleep_ns(20000);                // a lost fire: the watchdog names it
    return f;
}

static void afterfunc_user(void *p)
{
    struct timeprog *t = p;
    struct afterfunc *a = round_alloc(sizeof *a);
    uint64_t d = soak_duration(&t->r), start = nanotime();
    gtimer_t *tm = time_afterfunc(d, afterfunc_fn, a);
    if (gtimer_chan(tm))
        soak_fail("afterfunc: a channel");
    switch (rng_below(&t->r, 3)) {
    case 0:
        wait_fired(a, 1);
        check_not_early("afterfunc", start, d, a->when);
        break;
    case 1:
        if (gtimer_stop(tm)) {
            sleep_past(d);
            if (__atomic_load_n(&a->fired, __ATOMIC_ACQUIRE))
                soak_fail("afterfunc: ran after a stop that returned true");
        } else {
            wait_fired(a, 1);
        }
        break;
    default: {
        uint32_t before = gtimer_stop(tm) ? 0 : 1;
        if (before)
            wait_fired(a, 1);           // its fn may still be running: let it end first
        uint64_t d2 = soak_duration(&t->r), restart = nanotime();
        gtimer_reset(tm, d2);
        wait_fired(a, before + 1);
        check_not_early("afterfunc (reset)", restart, d2, a->when);
        break;
    }
    }
    gtimer_free(tm);
    uint32_t f = __atomic_load_n(&a->fired, __ATOMIC_ACQUIRE);
    sleep_ns(50000);
    if (__atomic_load_n(&a->fired, __ATOMIC_ACQUIRE) != f)
        soak_fail("afterfunc: ran again after gtimer_free");
    soak_op(2);
}

void prog_afterfunc(rng_t *r)
{
    spawn_timeprogs(r, 1 + rng_below(r, 4), afterfunc_user);
}

// ---- tickers ------------------------------------------------------------------

static void ticker_user(void *p)
{
    struct timeprog *t = p;
    uint64_t period = 50000 + rng_below(&t->r, 2000000), start = nanotime(), v, prev = 0;
    ticker_t *tk = ticker_new(period);
    chan_t *c = ticker_chan(tk);
    for (uint32_t i = 1 + rng_below(&t->r, 4); i > 0; i--) {
        chan_recv(c, &v);
        if (prev == 0)
            check_not_early("ticker", start, period, v);
        else if (v + SOAK_SKEW_NS <= prev)
            soak_fail("ticker: tick %lu before the previous %lu", v, prev);
        prev = v;
        soak_op(1);
    }
    ticker_stop(tk);
    chan_try_recv(c, &v);               // one tick may have been buffered before the stop
    sleep_past(2 * period);
    if (chan_try_recv(c, &v) != CHAN_WOULD_BLOCK)
        soak_fail("ticker: ticked after ticker_stop returned");
    if (rng_below(&t->r, 2)) {
        uint64_t p2 = 50000 + rng_below(&t->r, 1000000), restart = nanotime();
        ticker_reset(tk, p2);
        chan_recv(c, &v);
        check_not_early("ticker (reset)", restart, p2, v);
        soak_op(1);
    }
    ticker_free(tk);
}

void prog_ticker(rng_t *r)
{
    spawn_timeprogs(r, 1 + rng_below(r, 3), ticker_user);
}

// ---- time_after, alone and as a select's timeout -------------------------------

static void after_user(void *p)
{
    struct timeprog *t = p;
    uint64_t d = soak_duration(&t->r), start = nanotime(), fired;
    chan_t *c = time_after(d);
    if (rng_below(&t->r, 2)) {
        chan_recv(c, &fired);
    } else {
        chan_t *never = chan_make(sizeof(uint64_t), 0);
        uint64_t x;
        struct select_case cs[2] = {
            { .c = never, .dir = SELECT_RECV, .elem = &x },
            { .c = c, .dir = SELECT_RECV, .elem = &fired },
        };
        int k = chan_select(cs, 2, true);
        if (k != 1)
            soak_fail("after: select chose case %d", k);
        chan_free(never);
    }
    check_not_early("time_after", start, d, fired);
    chan_free(c);
    soak_op(1);
}

void prog_after(rng_t *r)
{
    spawn_timeprogs(r, 1 + rng_below(r, 6), after_user);
}
