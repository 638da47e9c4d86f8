// SPDX-License-Identifier: MIT
// app=schedlat [filter=SUBSTR] [reps=N] (needs metrics=1): goro's scheduling
// latency (runnable to running, /sched/latencies:seconds) on three
// workloads, read with metrics_read() before and after each. The Go side,
// tools/bench/schedlat_go/main.go, runs the same workloads with the same parameters
// and reads Go's own runtime/metrics; tools/bench/bench.py sets them side by side.
//
//   pool      the worker-pool demo's shape, POOLS times: ITEMS jobs in a
//             buffered channel, num_cpu() workers ranging over it, a WaitGroup
//   pingpong  two goroutines, ROUNDS round trips over two unbuffered channels
//   yield     YIELDERS goroutines, each yielding YIELDS times
//
// Prints per workload, all reps together:
//   BENCH schedlat_NAME impl=goro procs=P reps=R count=C schedules=S p50_us=X p99_us=Y mean_us=Z
// count is the latency samples of the window, schedules the goroutine
// starts; goro takes one sample per start, so they must be equal (checked
// here and by tests/matrix.py). Quantiles interpolate linearly inside the
// histogram bucket that holds them, the rule tools/bench/schedlat_go/main.go uses.
#include "goro.h"
#include "bench_util.h"

// The parameters of both sides: keep tools/bench/schedlat_go/main.go's in step.
#define ITEMS 1000
#define POOLS 20            // pools per rep: each starts only num_cpu() + 1 goroutines
#define ROUNDS 5000
#define YIELDERS 100
#define YIELDS 100

static int reps = 3;

// ---- the workloads -----------------------------------------------------------

struct pool {
    chan_t *jobs;
    waitgroup_t wg;
    uint64_t sum;
};

static void pool_worker(void *arg)
{
    struct pool *p = arg;
    int job;
    while (chan_recv(p->jobs, &job)) {      // `for job := range jobs`
        __atomic_fetch_add(&p->sum, (uint64_t)job * (uint64_t)job, __ATOMIC_RELAXED);
        wg_done(&p->wg);
    }
    wg_done(&p->wg);                        // the worker itself: gone before the window closes
}

static void run_pool(void)
{
    static struct pool p;
    int nworkers = num_cpu();
    for (int k = 0; k < POOLS; k++) {
        p.jobs = chan_make(sizeof(int), ITEMS);
        wg_add(&p.wg, ITEMS + nworkers);
        for (int w = 0; w < nworkers; w++)
            go(pool_worker, &p);
        for (int i = 0; i < ITEMS; i++)
            chan_send(p.jobs, &i);
        chan_close(p.jobs);
        wg_wait(&p.wg);
        chan_free(p.jobs);
    }
}

struct pingpong {
    chan_t *ping, *pong;
    waitgroup_t wg;
};

static void pong_side(void *arg)
{
    struct pingpong *pp = arg;
    int v;
    for (int i = 0; i < ROUNDS; i++) {
        chan_recv(pp->ping, &v);
        chan_send(pp->pong, &v);
    }
    wg_done(&pp->wg);
}

static void ping_side(void *arg)
{
    struct pingpong *pp = arg;
    for (int i = 0; i < ROUNDS; i++) {
        int v = i;
        chan_send(pp->ping, &v);
        chan_recv(pp->pong, &v);
    }
    wg_done(&pp->wg);
}

static void run_pingpong(void)
{
    static struct pingpong pp;
    pp.ping = chan_make(sizeof(int), 0);
    pp.pong = chan_make(sizeof(int), 0);
    wg_add(&pp.wg, 2);
    go(pong_side, &pp);
    go(ping_side, &pp);
    wg_wait(&pp.wg);
}

static waitgroup_t yield_wg;

static void yielder(void *arg)
{
    (void)arg;
    for (int i = 0; i < YIELDS; i++)
        gosched();
    wg_done(&yield_wg);
}

static void run_yield(void)
{
    wg_add(&yield_wg, YIELDERS);
    for (int i = 0; i < YIELDERS; i++)
        go(yielder, 0);
    wg_wait(&yield_wg);
}

// ---- measuring ----------------------------------------------------------------------

// The q-quantile (0..1) in ns: linear inside the bucket that holds it.
static double quantile_ns(const struct metrics_histogram *h, double q)
{
    double want = q * (double)h->count, seen = 0;
    for (int i = 0; i < METRICS_HIST_BUCKETS; i++) {
        double n = (double)h->counts[i];
        if (n == 0 || seen + n < want) {
            seen += n;
            continue;
        }
        double lo = (double)metrics_bucket_lo_ns(i);
        if (i == METRICS_HIST_BUCKETS - 1)
            return lo;                      // open-ended
        double hi = (double)metrics_bucket_lo_ns(i + 1);
        return lo + (hi - lo) * (want - seen) / n;
    }
    return 0;
}

// after -= before, field by field: the window's own histogram.
static void hist_sub(struct metrics_histogram *after, const struct metrics_histogram *before)
{
    after->count -= before->count;
    after->sum_ns -= before->sum_ns;
    for (int i = 0; i < METRICS_HIST_BUCKETS; i++)
        after->counts[i] -= before->counts[i];
}

// Runs one workload reps times between two metrics reads; false when the
// window's latency samples and schedules disagree.
static bool measure(const char *name, void (*run)(void))
{
    static struct goro_metrics before, after;
    metrics_read(&before);
    for (int r = 0; r < reps; r++)
        run();
    metrics_read(&after);
    hist_sub(&after.sched_latency, &before.sched_latency);
    const struct metrics_histogram *h = &after.sched_latency;
    uint64_t schedules = after.schedules - before.schedules;
    printf("BENCH schedlat_%s impl=goro procs=%d reps=%d count=%lu schedules=%lu p50_us=%.2f "
           "p99_us=%.2f mean_us=%.2f\n", name, num_cpu(), reps, h->count, schedules,
           quantile_ns(h, 0.5) / 1000, quantile_ns(h, 0.99) / 1000,
           h->count ? (double)h->sum_ns / (double)h->count / 1000 : 0.0);
    if (h->count != schedules) {
        printf("schedlat: FAIL: %s: %lu latency samples, %lu schedules\n", name, h->count, schedules);
        return false;
    }
    return true;
}

static int schedlat_main(int argc, char **argv)
{
    const char *filter = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0) {
            filter = argv[i] + 7;
        } else if (strncmp(argv[i], "reps=", 5) == 0 && argv[i][5] >= '1' && argv[i][5] <= '9') {
            reps = 0;
            for (const char *d = argv[i] + 5; *d >= '0' && *d <= '9' && reps < 1000; d++)
                reps = reps * 10 + (*d - '0');
        } else {
            printf("schedlat: unknown argument \"%s\" (filter=SUBSTR reps=N)\n", argv[i]);
            return 1;
        }
    }
    static struct goro_metrics probe;
    if (!metrics_read(&probe)) {
        printf("schedlat: needs metrics=1 on the command line\n");
        return 1;
    }
    static const struct {
        const char *name;
        void (*run)(void);
    } workloads[] = { { "pool", run_pool }, { "pingpong", run_pingpong }, { "yield", run_yield } };
    bool ok = true;
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (bench_wanted(filter, workloads[i].name))
            ok = measure(workloads[i].name, workloads[i].run) && ok;
    printf("schedlat: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
GORO_APP(schedlat, "scheduling latency (metrics=1) on the pool, ping-pong and yield workloads",
         schedlat_main);
