// SPDX-License-Identifier: MIT
// app=bench [filter=SUBSTR] [reps=N] [quick=1]: the scheduler benchmarks.
//
// The workloads and output keys are those of tests/peers (Go and pthread),
// so results line up name for name (tests/peers/README.md defines them).
// Throughput benchmarks calibrate one fixed n (about 10 ms of work), then
// run reps repetitions of exactly that n and report the median with min,
// p10, p90 and max. Each measured repetition is bracketed by insncount's
// marker NOPs, so a run under the TCG plugin gives instructions per op
// (tools/bench/insncount_report.py pairs markers with the mark_n= keys).
// Numbers are measured, never asserted.
#include "goro.h"
#include "bench_util.h"

#define MAX_REPS 101

static int reps = 31;
static uint64_t target_ns = 50000000;      // per repetition
static const char *filter;


// Runs body(n) reps times after calibrating n; prints one BENCH line.
static void throughput(const char *name, const char *op, int procs, uint64_t (*body)(uint64_t n))
{
    uint64_t n = bench_calibrate(body, target_ns);
    uint64_t cyc[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = cputicks();
        BENCH_MARK_BEGIN();
        body(n);
        BENCH_MARK_END();
        cyc[r] = cputicks() - c0;
    }
    sort_u64(cyc, reps);
    double to_ns = 1e9 / (double)cputicks_hz();
    double per = 1.0 / (double)n;
    printf("BENCH %s impl=goro procs=%d n=%lu reps=%d ns_per_op=%.1f ns_per_op_min=%.1f "
           "ns_per_op_p10=%.1f ns_per_op_p90=%.1f ns_per_op_max=%.1f cycles_per_op=%.1f "
           "op=%s mark_pairs=%d mark_n=%lu\n",
           name, procs, n, reps, cyc[reps / 2] * to_ns * per, cyc[0] * to_ns * per,
           cyc[reps / 10] * to_ns * per, cyc[reps - 1 - reps / 10] * to_ns * per,
           cyc[reps - 1] * to_ns * per, cyc[reps / 2] * per, op, reps, n);
}

static uint64_t load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static void wait_for(const uint64_t *counter, uint64_t target)
{
    while (load(counter) < target)
        gosched();
}

// ---- yield_switch: two goroutines on one P yield to each other ---------------

static uint64_t yield_left, yield_done;

static void yielder(void *arg)
{
    uint64_t k = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < k; i++)
        gosched();
    __atomic_fetch_add(&yield_done, 1, __ATOMIC_RELEASE);
}

static uint64_t yield_body(uint64_t n)
{
    uint64_t t0 = nanotime();
    yield_done = 0;
    yield_left = n / 2;
    go(yielder, (void *)(uintptr_t)(n / 2));
    for (uint64_t i = 0; i < n / 2; i++)
        gosched();
    wait_for(&yield_done, 1);
    return nanotime() - t0;
}

// ---- spawn_exit: batches of 100 empty goroutines, then wait ----------------

static uint64_t spawned_done;

static void empty_g(void *arg)
{
    (void)arg;
    __atomic_fetch_add(&spawned_done, 1, __ATOMIC_RELEASE);
}

static uint64_t spawn_body(uint64_t n)
{
    uint64_t t0 = nanotime();
    for (uint64_t i = 0; i < n; i += 100) {
        spawned_done = 0;
        for (int k = 0; k < 100; k++)
            go(empty_g, 0);
        wait_for(&spawned_done, 100);
    }
    return nanotime() - t0;
}

// ---- spawn_tree_fib -------------------------------------------------------------

static uint64_t fib_seq(int n)
{
    return n < 2 ? (uint64_t)n : fib_seq(n - 1) + fib_seq(n - 2);
}

// As the Go peer's fibSpawn: a goroutine for fib(n-1) at every node above
// the cutoff, joined through a one-slot channel (the parent parks).
struct fib_job {
    int n;
    chan_t *result;
};

static uint64_t fib_par(int n);

static void fib_go(void *arg)
{
    struct fib_job *j = arg;
    uint64_t v = fib_par(j->n);
    chan_send(j->result, &v);
}

static uint64_t fib_par(int n)
{
    if (n <= 15)
        return fib_seq(n);
    struct fib_job child = { n - 1, chan_make(sizeof(uint64_t), 1) };
    go(fib_go, &child);
    uint64_t b = fib_par(n - 2), a;
    chan_recv(child.result, &a);
    chan_free(child.result);
    return a + b;
}

static void bench_fib(int depth)
{
    int ncpu = num_cpu(), orig = gomaxprocs(0);
    uint64_t base = 0;
    for (int p = 1; p <= ncpu; p++) {
        gomaxprocs(p);
        uint64_t t[MAX_REPS];
        int r_n = reps < 11 ? reps : 11;
        for (int r = 0; r < r_n; r++) {
            uint64_t t0 = nanotime();
            uint64_t v = fib_par(depth);
            t[r] = nanotime() - t0;
            if (v != fib_seq(depth))
                panic("fib(%d) gave %lu", depth, v);
        }
        sort_u64(t, r_n);
        if (p == 1)
            base = t[r_n / 2];
        printf("BENCH spawn_tree_fib impl=goro procs=%d n=%d reps=%d ms=%.2f ms_min=%.2f ms_max=%.2f "
               "speedup=%.3f speedup_min=%.3f speedup_max=%.3f\n",
               p, depth, r_n, t[r_n / 2] / 1e6, t[0] / 1e6, t[r_n - 1] / 1e6,
               (double)base / (double)t[r_n / 2], (double)base / (double)t[r_n - 1],
               (double)base / (double)t[0]);
    }
    gomaxprocs(orig);
}

// ---- uneven_work: 1000 tasks from one goroutine ---------------------------------

#define UNEVEN_TASKS 1000
static uint64_t uneven_sink;
static waitgroup_t uneven_wg;       // the main G parks, as the Go peer's wg.Wait

static uint32_t units(uint32_t i)
{
    uint32_t u = ((i * 1103515245u + 12345u) >> 16) % 64 + 1;
    return i % 97 == 0 ? u * 20 : u;
}

static uint64_t work(uint32_t u)
{
    uint64_t x = 88172645463325252ull + u;
    for (uint32_t k = 0; k < u * 256; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static void uneven_task(void *arg)
{
    __atomic_fetch_add(&uneven_sink, work((uint32_t)(uintptr_t)arg), __ATOMIC_RELAXED);
    wg_done(&uneven_wg);
}

// Runs the 1000 tasks r_n times, each run from one goroutine that waits
// for all of them; t[0..r_n) gets each run's makespan in ns, sorted, and
// a and b the scheduler's counters before and after.
static void uneven_runs(uint64_t *t, int r_n, struct sched_stats *a, struct sched_stats *b)
{
    sched_stats(a);
    for (int r = 0; r < r_n; r++) {
        uint64_t s = nanotime();
        wg_add(&uneven_wg, UNEVEN_TASKS);
        for (uint32_t i = 0; i < UNEVEN_TASKS; i++)
            go(uneven_task, (void *)(uintptr_t)units(i));
        wg_wait(&uneven_wg);
        t[r] = nanotime() - s;
    }
    sched_stats(b);
    sort_u64(t, r_n);
}

static void bench_uneven(void)
{
    uint64_t t0 = nanotime(), longest = 0;
    for (uint32_t i = 0; i < UNEVEN_TASKS; i++) {
        uint64_t s = nanotime();
        uneven_sink += work(units(i));
        uint64_t d = nanotime() - s;
        if (d > longest)
            longest = d;
    }
    uint64_t serial = nanotime() - t0;
    int procs = gomaxprocs(0);
    uint64_t ideal = serial / (uint64_t)procs > longest ? serial / (uint64_t)procs : longest;
    uint64_t t[MAX_REPS];
    struct sched_stats *a = malloc(sizeof *a), *b = malloc(sizeof *b);    // 100 KiB each
    int r_n = reps < 11 ? reps : 11;
    uneven_runs(t, r_n, a, b);
    printf("BENCH uneven_work impl=goro procs=%d reps=%d makespan_ms=%.2f makespan_ms_min=%.2f "
           "makespan_ms_max=%.2f ideal_ms=%.2f ratio=%.3f steals_per_run=%lu stolen_per_run=%lu\n",
           procs, r_n, t[r_n / 2] / 1e6, t[0] / 1e6, t[r_n - 1] / 1e6, ideal / 1e6,
           (double)t[r_n / 2] / (double)ideal, (b->total.steals - a->total.steals) / (uint64_t)r_n,
           (b->total.stolen - a->total.stolen) / (uint64_t)r_n);
    free(a);
    free(b);
}

// ---- wake_latency: ready a parked G, spin until another core runs it --------

// The wakee parks on the semaphore; a release readies it into this P's
// runnext slot, as Go's channel send readies a receiver.
static sema_t wake_sema;
static uint64_t wake_ran_ns, wake_exit;

static void wakee(void *arg)
{
    (void)arg;
    for (;;) {
        sema_acquire(&wake_sema);
        __atomic_store_n(&wake_ran_ns, nanotime(), __ATOMIC_RELEASE);
        if (load(&wake_exit))
            return;
    }
}

static void decoy(void *arg)
{
    (void)arg;
}

static void bench_wake(bool via_runq)
{
    if (gomaxprocs(0) < 2) {
        printf("SKIP wake_latency impl=goro reason=needs_2_cores\n");
        return;
    }
    enum { SAMPLES = 200 };
    uint64_t lat[SAMPLES];
    wake_exit = 0;
    go(wakee, 0);
    for (int s = 0; s < SAMPLES; s++) {
        while (sema_waiters(&wake_sema) == 0)
            gosched();
        uint64_t gap = nanotime() + 1000000;         // 1 ms: the other core halts
        while (nanotime() < gap)
            procyield(1);
        wake_ran_ns = 0;
        if (s == SAMPLES - 1)
            wake_exit = 1;
        uint64_t t0 = nanotime();
        sema_release(&wake_sema);
        if (via_runq)
            go(decoy, 0);       // takes runnext: the wakee moves to the ring
        while (!load(&wake_ran_ns))
            procyield(1);
        lat[s] = wake_ran_ns - t0;
    }
    sort_u64(lat, SAMPLES);
    printf("BENCH wake_latency impl=goro procs=%d mode=%s samples=%d min_us=%.2f p50_us=%.2f "
           "p90_us=%.2f p99_us=%.2f max_us=%.2f\n",
           gomaxprocs(0), via_runq ? "runq" : "runnext", SAMPLES, lat[0] / 1e3,
           lat[SAMPLES / 2] / 1e3, lat[SAMPLES * 9 / 10] / 1e3, lat[SAMPLES * 99 / 100] / 1e3,
           lat[SAMPLES - 1] / 1e3);
}

// steal=numa against steal=flat: uneven work spawned on one P, with the
// steal order switched at run time; reports makespan and where the steals
// went. QEMU has no remote-memory cost, so the makespans say little here;
// the same-node/remote split shows the policy working, and real
// multi-socket hardware shows what it is worth.
static void bench_steal_policy(void)
{
    if (numa_nodes() < 2) {
        printf("SKIP steal_policy impl=goro reason=one_numa_node\n");
        return;
    }
    bool orig = sched_set_steal_by_node(false);
    struct sched_stats *a = malloc(sizeof *a), *b = malloc(sizeof *b);    // 100 KiB each
    for (int k = 0; k < 2; k++) {
        sched_set_steal_by_node(k);
        uint64_t t[MAX_REPS];
        int r_n = reps < 11 ? reps : 11;
        uneven_runs(t, r_n, a, b);
        printf("BENCH steal_policy impl=goro policy=%s procs=%d nodes=%d reps=%d makespan_ms=%.2f "
               "makespan_ms_min=%.2f makespan_ms_max=%.2f steals_local=%lu steals_remote=%lu\n",
               k ? "numa" : "flat", gomaxprocs(0), numa_nodes(), r_n, t[r_n / 2] / 1e6, t[0] / 1e6,
               t[r_n - 1] / 1e6, b->total.steals_local - a->total.steals_local,
               b->total.steals_remote - a->total.steals_remote);
    }
    free(a);
    free(b);
    sched_set_steal_by_node(orig);
}

static void config_line(void)
{
    char model[64];
    cpu_model(model, sizeof model);
    printf("CONFIG impl=goro cores=%d gomaxprocs=%d accel=%s cpu=\"%s\" tsc_mhz=%lu reps=%d\n",
           num_cpu(), gomaxprocs(0), cpu_accel(), model, cputicks_hz() / 1000000, reps);
}

static int bench_main(int argc, char **argv)
{
    bool quick = false;
    // Options start from their defaults on every run: the shell runs apps
    // again in the same boot.
    reps = 31;
    target_ns = 50000000;
    filter = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0)
            filter = argv[i] + 7;
        else if (strncmp(argv[i], "reps=", 5) == 0) {
            reps = 0;
            for (const char *p = argv[i] + 5; *p >= '0' && *p <= '9'; p++)
                reps = reps * 10 + (*p - '0');
            if (reps < 3 || reps > MAX_REPS) {
                printf("bench: reps must be 3..%d\n", MAX_REPS);
                return 2;
            }
        } else if (strcmp(argv[i], "quick=1") == 0)
            quick = true;
        else {
            printf("bench: unknown argument \"%s\" (filter=SUBSTR reps=N quick=1)\n", argv[i]);
            return 2;
        }
    }
    if (quick) {
        if (reps == 31)
            reps = 11;
        target_ns = 10000000;
    }
    config_line();
    int orig = gomaxprocs(0);
    if (bench_wanted(filter, "yield_switch")) {
        gomaxprocs(1);
        throughput("yield_switch", "switch", 1, yield_body);
        gomaxprocs(orig);
    }
    if (bench_wanted(filter, "spawn_exit")) {
        gomaxprocs(1);
        throughput("spawn_exit", "spawn+run+exit", 1, spawn_body);
        gomaxprocs(orig);
    }
    if (bench_wanted(filter, "spawn_tree_fib"))
        bench_fib(quick ? 30 : 32);
    if (bench_wanted(filter, "uneven_work"))
        bench_uneven();
    if (bench_wanted(filter, "steal_policy"))
        bench_steal_policy();
    if (bench_wanted(filter, "wake_latency")) {
        bench_wake(false);
        bench_wake(true);
    }
    printf("DONE impl=goro\n");
    return 0;
}
GORO_APP(bench, "the scheduler benchmarks (filter=SUBSTR reps=N quick=1)", bench_main);
