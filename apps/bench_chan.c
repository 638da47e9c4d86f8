// SPDX-License-Identifier: MIT
// app=bench_chan [filter=SUBSTR] [reps=N] [quick=1]: channel, select and
// mutex benchmarks, the same workloads and names as tests/peers (Go's
// BenchmarkChanSync, BenchmarkSelectUncontended, ...), in app=bench's
// output format plus spread=min..max (ns per op). Each measured repetition
// is bracketed by insncount's marker NOPs around exactly n operations
// (mark_pairs=, mark_n=, and BENCH_ITERS name=n), so a run under the TCG
// plugin gives instructions per op (tools/bench/insncount_report.py).
// Numbers are measured, never asserted.
#include "goro.h"
#include "bench_util.h"

#define MAX_REPS 101

static int reps = 15;
static uint64_t target_ns = 50000000;      // per repetition
static const char *filter;

// Only the measured repetitions are marked, not the calibration runs, so
// the log holds exactly mark_pairs pairs per benchmark.
static bool marking;
#define MARK_BEGIN()                                                                  \
    do {                                                                              \
        if (marking)                                                                  \
            BENCH_MARK_BEGIN();                                                       \
    } while (0)
#define MARK_END()                                                                    \
    do {                                                                              \
        if (marking)                                                                  \
            BENCH_MARK_END();                                                         \
    } while (0)

// body(n) runs n operations between MARK_BEGIN and MARK_END and returns the
// TSC cycles they took. Calibrates n to about target_ns, then runs reps
// repetitions of exactly that n; prints the median and the spread.
static void throughput(const char *name, const char *op, int procs, uint64_t (*body)(uint64_t n))
{
    int orig = gomaxprocs(procs);
    uint64_t target_cyc = target_ns * cputicks_hz() / 1000000000;
    uint64_t n = bench_calibrate(body, target_cyc);
    n &= ~(uint64_t)3;              // chan_sync and mutex_contended split n
    uint64_t cyc[MAX_REPS];
    marking = true;
    for (int r = 0; r < reps; r++)
        cyc[r] = body(n);
    marking = false;
    sort_u64(cyc, reps);
    double to_ns = 1e9 / (double)cputicks_hz(), per = 1.0 / (double)n;
    printf("BENCH %s impl=goro procs=%d n=%lu reps=%d ns_per_op=%.1f ns_per_op_min=%.1f "
           "ns_per_op_p10=%.1f ns_per_op_p90=%.1f ns_per_op_max=%.1f cycles_per_op=%.1f "
           "spread=%.1f..%.1f op=%s mark_pairs=%d mark_n=%lu\n",
           name, procs, n, reps, cyc[reps / 2] * to_ns * per, cyc[0] * to_ns * per,
           cyc[reps / 10] * to_ns * per, cyc[reps - 1 - reps / 10] * to_ns * per,
           cyc[reps - 1] * to_ns * per, cyc[reps / 2] * per, cyc[0] * to_ns * per,
           cyc[reps - 1] * to_ns * per, op, reps, n);
    printf("BENCH_ITERS name=%s n=%lu\n", name, n);
    gomaxprocs(orig);
}

// ---- chan_sync: Go's BenchmarkChanSync -------------------------------------------

struct sync_arg {
    chan_t *c;
    uint64_t half;
    waitgroup_t *wg;
};

static void sync_recv_first(void *arg)
{
    struct sync_arg *a = arg;
    uint64_t v = 0;
    for (uint64_t i = 0; i < a->half; i++) {
        chan_recv(a->c, &v);
        chan_send(a->c, &v);
    }
    wg_done(a->wg);
}

static void sync_send_first(void *arg)
{
    struct sync_arg *a = arg;
    uint64_t v = 0;
    for (uint64_t i = 0; i < a->half; i++) {
        chan_send(a->c, &v);
        chan_recv(a->c, &v);
    }
    wg_done(a->wg);
}

// An op is one goroutine's send+receive pair: one hand-off.
static uint64_t chan_sync_body(uint64_t n)
{
    waitgroup_t wg = WAITGROUP_INIT;
    struct sync_arg a = { chan_make(sizeof(uint64_t), 0), n / 2, &wg };
    wg_add(&wg, 2);
    uint64_t c0 = cputicks();
    MARK_BEGIN();
    go(sync_recv_first, &a);
    go(sync_send_first, &a);
    wg_wait(&wg);
    MARK_END();
    uint64_t d = cputicks() - c0;
    chan_free(a.c);
    return d;
}

// ---- pingpong: a round trip over two unbuffered channels ------------------------

struct pp {
    chan_t *ping, *pong;
};

static void ponger(void *arg)
{
    struct pp *p = arg;
    uint64_t v;
    while (chan_recv(p->ping, &v))
        chan_send(p->pong, &v);
}

static uint64_t pingpong_body(uint64_t n)
{
    struct pp p = { chan_make(sizeof(uint64_t), 0), chan_make(sizeof(uint64_t), 0) };
    go(ponger, &p);
    uint64_t c0 = cputicks();
    MARK_BEGIN();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = i;
        chan_send(p.ping, &v);
        chan_recv(p.pong, &v);
    }
    MARK_END();
    uint64_t d = cputicks() - c0;
    chan_close(p.ping);
    // the ponger may still be between its last send and its recv: let it
    // see the close before the channels go
    for (int i = 0; i < 100 && num_goroutine() > 1; i++)
        gosched();
    chan_free(p.pong);
    chan_free(p.ping);
    return d;
}

// ---- chan_buffered: producer to consumer through 128 slots ----------------------

#define BUFFERED_CAP 128

static void buffered_consumer(void *arg)
{
    chan_t **cs = arg;
    uint64_t v, s = 0;
    while (chan_recv(cs[0], &v))
        s += v;
    chan_send(cs[1], &s);
}

static uint64_t buffered_body(uint64_t n)
{
    chan_t *cs[2] = { chan_make(sizeof(uint64_t), BUFFERED_CAP), chan_make(sizeof(uint64_t), 0) };
    uint64_t c0 = cputicks();
    MARK_BEGIN();
    go(buffered_consumer, cs);
    for (uint64_t i = 0; i < n; i++)
        chan_send(cs[0], &i);
    chan_close(cs[0]);
    uint64_t s;
    chan_recv(cs[1], &s);
    MARK_END();
    uint64_t d = cputicks() - c0;
    if (s != n * (n - 1) / 2)
        panic("chan_buffered: sum %lu, want %lu", s, n * (n - 1) / 2);
    chan_free(cs[0]);
    chan_free(cs[1]);
    return d;
}

// ---- select_uncontended: Go's BenchmarkSelectUncontended body, one goroutine -----

static uint64_t select_body(uint64_t n)
{
    chan_t *c1 = chan_make(sizeof(uint64_t), 1), *c2 = chan_make(sizeof(uint64_t), 1);
    uint64_t v = 0;
    chan_send(c1, &v);
    struct select_case cs[2] = {
        { .c = c1, .dir = SELECT_RECV, .elem = &v },
        { .c = c2, .dir = SELECT_RECV, .elem = &v },
    };
    uint64_t c0 = cputicks();
    MARK_BEGIN();
    for (uint64_t i = 0; i < n; i++) {
        if (chan_select(cs, 2, true) == 0)
            chan_send(c2, &v);
        else
            chan_send(c1, &v);
    }
    MARK_END();
    uint64_t d = cputicks() - c0;
    chan_free(c1);
    chan_free(c2);
    return d;
}

// ---- mutex ------------------------------------------------------------------------

static uint64_t mutex_uncontended_body(uint64_t n)
{
    mutex_t mu = MUTEX_INIT;
    uint64_t c0 = cputicks();
    MARK_BEGIN();
    for (uint64_t i = 0; i < n; i++) {
        mutex_lock(&mu);
        mutex_unlock(&mu);
    }
    MARK_END();
    return cputicks() - c0;
}

#define MUTEX_WORKERS 4

struct contended {
    mutex_t mu;
    uint64_t counter;               // mu held
    uint64_t per;
    waitgroup_t wg;
};

static void contended_worker(void *arg)
{
    struct contended *c = arg;
    for (uint64_t i = 0; i < c->per; i++) {
        mutex_lock(&c->mu);
        c->counter++;
        mutex_unlock(&c->mu);
    }
    wg_done(&c->wg);
}

static uint64_t mutex_contended_body(uint64_t n)
{
    struct contended c = { .per = n / MUTEX_WORKERS };
    wg_add(&c.wg, MUTEX_WORKERS);
    uint64_t c0 = cputicks();
    MARK_BEGIN();
    for (int w = 0; w < MUTEX_WORKERS; w++)
        go(contended_worker, &c);
    wg_wait(&c.wg);
    MARK_END();
    uint64_t d = cputicks() - c0;
    if (c.counter != c.per * MUTEX_WORKERS)
        panic("mutex_contended: lost update (%lu of %lu)", c.counter, c.per * MUTEX_WORKERS);
    return d;
}

static int bench_chan_main(int argc, char **argv)
{
    bool quick = false;
    reps = 15;                      // the defaults again: the shell may run this twice
    target_ns = 50000000;
    filter = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0) {
            filter = argv[i] + 7;
        } else if (strncmp(argv[i], "reps=", 5) == 0) {
            reps = 0;
            for (const char *p = argv[i] + 5; *p >= '0' && *p <= '9'; p++)
                reps = reps * 10 + (*p - '0');
            if (reps < 9 || reps > MAX_REPS) {
                printf("bench_chan: reps must be 9..%d\n", MAX_REPS);
                return 2;
            }
        } else if (strcmp(argv[i], "quick=1") == 0) {
            quick = true;
        } else {
            printf("bench_chan: unknown argument \"%s\" (filter=SUBSTR reps=N quick=1)\n", argv[i]);
            return 2;
        }
    }
    if (quick) {
        if (reps == 15)
            reps = 9;
        target_ns = 10000000;
    }
    char model[64];
    cpu_model(model, sizeof model);
    int ncpu = num_cpu();
    printf("CONFIG impl=goro cores=%d gomaxprocs=%d accel=%s cpu=\"%s\" tsc_mhz=%lu reps=%d\n", ncpu,
           gomaxprocs(0), cpu_accel(), model, cputicks_hz() / 1000000, reps);
    if (bench_wanted(filter, "chan_sync"))
        throughput("chan_sync", "handoff", ncpu, chan_sync_body);
    if (bench_wanted(filter, "pingpong_1p"))
        throughput("pingpong_1p", "roundtrip", 1, pingpong_body);
    if (bench_wanted(filter, "pingpong_2p")) {
        if (ncpu < 2)
            printf("SKIP pingpong_2p impl=goro reason=needs_2_cores\n");
        else
            throughput("pingpong_2p", "roundtrip", 2, pingpong_body);
    }
    if (bench_wanted(filter, "chan_buffered"))
        throughput("chan_buffered", "item cap=128", ncpu, buffered_body);
    if (bench_wanted(filter, "select_uncontended"))
        throughput("select_uncontended", "select", 1, select_body);
    if (bench_wanted(filter, "mutex_uncontended"))
        throughput("mutex_uncontended", "lock_unlock", 1, mutex_uncontended_body);
    if (bench_wanted(filter, "mutex_contended"))
        throughput("mutex_contended", "lock_unlock goroutines=4", ncpu, mutex_contended_body);
    printf("DONE impl=goro\n");
    return 0;
}
GORO_APP(bench_chan, "channel, select and mutex benchmarks (filter=SUBSTR reps=N quick=1)",
         bench_chan_main);
