// SPDX-License-Identifier: MIT
// Go 1.19's src/time sleep_test.go and tick_test.go benchmarks, with their
// workloads: each op is 1000 timer operations, run in parallel on every P
// while each P's timer heap holds 32768 hour-long timers. Go makes those
// timers before each benchmark and stops them after; here they are made
// once, before the first, and kept for all (the heaps hold the same).
// Go's collector frees the timers an op makes; here the op frees them.
#include "goro.h"
#include "gobench.h"

#define HOUR 3600000000000ull
#define GARBAGE (1 << 15)
#define OP 1000

static void nothing(void *arg)
{
    (void)arg;
}

static int garbage_made;

static void make_garbage_g(void *arg)
{
    for (int j = 0; j < GARBAGE; j++)
        time_afterfunc(HOUR, nothing, 0);
    wg_done(arg);
}

static void run_timers(struct gb *b, void (*body)(struct gb_pb *pb, void *arg))
{
    int procs = gomaxprocs(0);
    if (garbage_made < procs) {
        waitgroup_t wg = WAITGROUP_INIT;
        wg_add(&wg, procs - garbage_made);
        for (; garbage_made < procs; garbage_made++)
            go(make_garbage_g, &wg);
        wg_wait(&wg);
    }
    gb_run_parallel(b, body, 0);
}

// ---- AfterFunc: a chain of 1000 AfterFunc(0), each starting the next ----

struct chain {
    int n;
    chan_t *c;
    gtimer_t *timers[OP + 1];
    int stored;                 // timers[] slots written (atomic)
};

static void chain_f(void *arg)
{
    struct chain *s = arg;
    int n = --s->n;             // one fn at a time: each starts the next
    if (n >= 0) {
        gtimer_t *t = time_afterfunc(0, chain_f, s);
        s->timers[n] = t;
        __atomic_add_fetch(&s->stored, 1, __ATOMIC_RELEASE);    // release: the slot; pairs with the waiter's acquire
    } else {
        bool t = true;
        chan_send(s->c, &t);
    }
}

static void afterfunc_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct chain *s = malloc(sizeof *s);
    while (pb_next(pb)) {
        s->n = OP;
        s->c = chan_make(1, 0);
        s->stored = 0;
        s->timers[OP] = time_afterfunc(0, chain_f, s);
        chan_recv(s->c, 0);
        while (__atomic_load_n(&s->stored, __ATOMIC_ACQUIRE) < OP)  // the last fn's caller may not have stored its timer yet
            gosched();
        for (int i = 0; i <= OP; i++)
            gtimer_free(s->timers[i]);
        chan_free(s->c);
    }
    free(s);
}

static void bench_afterfunc(struct gb *b) { run_timers(b, afterfunc_body); }

// ---- After: <-After(1), 1000 times ----------------------------------------

static void after_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb))
        for (int i = 0; i < OP; i++) {
            chan_t *c = time_after(1);
            chan_recv(c, 0);
            chan_free(c);
        }
}

static void bench_after(struct gb *b) { run_timers(b, after_body); }

// ---- Stop: NewTimer(1 s).Stop(), 1000 times -------------------------------

static void stop_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb))
        for (int i = 0; i < OP; i++) {
            gtimer_t *t = gtimer_new(1000000000);
            gtimer_stop(t);
            gtimer_free(t);
        }
}

static void bench_stop(struct gb *b) { run_timers(b, stop_body); }

// ---- SimultaneousAfterFunc: 1000 AfterFunc(0, wg.Done), then Wait --------

static void done_fn(void *arg)
{
    wg_done(arg);
}

static void simultaneous_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    gtimer_t **timers = malloc(OP * sizeof *timers);
    while (pb_next(pb)) {
        waitgroup_t wg = WAITGROUP_INIT;
        wg_add(&wg, OP);
        for (int i = 0; i < OP; i++)
            timers[i] = time_afterfunc(0, done_fn, &wg);
        wg_wait(&wg);
        for (int i = 0; i < OP; i++)
            gtimer_free(timers[i]);
    }
    free(timers);
}

static void bench_simultaneous_afterfunc(struct gb *b) { run_timers(b, simultaneous_body); }

// ---- StartStop: 1000 hour-long AfterFuncs, then stop them all -------------

static void start_stop_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    gtimer_t **timers = malloc(OP * sizeof *timers);
    while (pb_next(pb)) {
        for (int i = 0; i < OP; i++)
            timers[i] = time_afterfunc(HOUR, nothing, 0);
        for (int i = 0; i < OP; i++)
            gtimer_stop(timers[i]);
        for (int i = 0; i < OP; i++)
            gtimer_free(timers[i]);
    }
    free(timers);
}

static void bench_start_stop(struct gb *b) { run_timers(b, start_stop_body); }

// ---- Reset: one timer reset 1000 times ------------------------------------

static void reset_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        gtimer_t *t = gtimer_new(HOUR);
        for (int i = 0; i < OP; i++)
            gtimer_reset(t, HOUR);
        gtimer_stop(t);
        gtimer_free(t);
    }
}

static void bench_reset(struct gb *b) { run_timers(b, reset_body); }

// ---- Sleep: 1000 goroutines sleep 1 ns each ----------------------------

static void sleeper(void *arg)
{
    sleep_ns(1);
    wg_done(arg);
}

static void sleep_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        waitgroup_t wg = WAITGROUP_INIT;
        wg_add(&wg, OP);
        for (int i = 0; i < OP; i++)
            go(sleeper, &wg);
        wg_wait(&wg);
    }
}

static void bench_sleep(struct gb *b) { run_timers(b, sleep_body); }

// ---- Ticker, TickerReset, TickerResetNaive ---------------------------------

static void ticker_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        ticker_t *t = ticker_new(1);
        for (int i = 0; i < OP; i++)
            chan_recv(ticker_chan(t), 0);
        ticker_stop(t);
        ticker_free(t);
    }
}

static void bench_ticker(struct gb *b) { run_timers(b, ticker_body); }

static void ticker_reset_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        ticker_t *t = ticker_new(1);
        for (int i = 0; i < OP; i++)
            ticker_reset(t, 2);
        ticker_stop(t);
        ticker_free(t);
    }
}

static void bench_ticker_reset(struct gb *b) { run_timers(b, ticker_reset_body); }

static void ticker_reset_naive_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        ticker_t *t = ticker_new(1);
        for (int i = 0; i < OP; i++) {
            ticker_stop(t);
            ticker_free(t);
            t = ticker_new(2);
        }
        ticker_stop(t);
        ticker_free(t);
    }
}

static void bench_ticker_reset_naive(struct gb *b) { run_timers(b, ticker_reset_naive_body); }

const struct gobench gobench_time[] = {
    { "AfterFunc", 5, bench_afterfunc },
    { "After", 5, bench_after },
    { "Stop", 5, bench_stop },
    { "SimultaneousAfterFunc", 5, bench_simultaneous_afterfunc },
    { "StartStop", 10, bench_start_stop },
    { "Reset", 20, bench_reset },
    { "Sleep", 5, bench_sleep },
    { "Ticker", 5, bench_ticker },
    { "TickerReset", 10, bench_ticker_reset },
    { "TickerResetNaive", 5, bench_ticker_reset_naive },
    { 0 },
};
