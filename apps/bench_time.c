// SPDX-License-Identifier: MIT
// app=bench_time [filter=SUBSTR] [quick=1]: timers, sleeps, preemption,
// interrupts between cores, boot time and the memory of parked goroutines.
//
//   parked_g_bytes       pages taken per goroutine while 100,000 sit in a
//                        receive on one unbuffered channel (first: the free
//                        G lists are still short, so nearly every G is new)
//   boot_time            kernel entry to each core online (one sample a boot)
//   timer_latency        a raw kernel timer's function run minus its
//                        deadline (timer_probe_run): mode=busy (the arming
//                        G spins: the interrupt path) and mode=idle (the
//                        core halts until the timer wakes it)
//   raw_ipi_roundtrip    an IPI to the next core, whose handler answers
//                        with an IPI back; the sender spins on a flag
//                        (ipi_probe)
//   sleep_lateness_*     sleep_ns(1 us, 100 us, 1 ms) minus the request
//   ticker_lateness_hogs a 1 ms ticker beside one call-free hog per P,
//                        lateness as tests/peers/go defines it
//   quantum_tradeoff     a 1 ms sleeper among two call-free hogs per P at
//                        quantum 10 ms, 1 ms, 100 us, 50 us: its lateness,
//                        and the hogs' iterations per second against the
//                        hogs alone at the boot quantum (two per P, so that
//                        the quantum has something to slice: one hog alone
//                        on its P is never preempted)
//
// app=bench_all [quick=1] (shell/shell_run.c) runs app=bench, bench_chan,
// bench_mem and bench_time in one boot, for a real machine's serial capture.
//
// Latencies: BENCH lines with min/p50/p90/p99/max in us (nearest rank, as
// the Go peer), then a CDF line with quantiles in us for plotting
// (tools/bench/bench.py). Benchmarks whose instruction count does not depend on
// how long something spins are bracketed by insncount's marker NOPs
// (mark_pairs=, mark_n=; tools/bench/insncount_report.py). Numbers are measured,
// never asserted.
#include "goro.h"
#include "bench_util.h"

#define MAX_SAMPLES 2000

static const char *filter;
static bool quick;

static uint64_t load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// Shell sort: latency sets are up to a few thousand samples.
static void sort_i64(int64_t *v, int n)
{
    for (int gap = n / 2; gap > 0; gap /= 2)
        for (int i = gap; i < n; i++)
            for (int j = i; j >= gap && v[j - gap] > v[j]; j -= gap) {
                int64_t t = v[j];
                v[j] = v[j - gap];
                v[j - gap] = t;
            }
}

// Nearest rank, as the Go peer's summarize: the value at or below which
// permille/1000 of the sorted samples fall.
static int64_t rank(const int64_t *v, int n, int permille)
{
    int i = (int)(((int64_t)permille * n + 999) / 1000) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static const int cdf_permille[] = { 0,   10,  50,  100, 200, 300, 400, 500, 600, 700,
                                    800, 900, 950, 980, 990, 995, 999, 1000 };

// Extra keys after a latency line's own (printf formats %f; snprintf
// does not).
struct kv {
    const char *key;
    double val;
};

// Sorts ns[0..n) and prints the latency keys of one BENCH line (after
// head, then the nkv extra keys, then the tail words) and a CDF line
// (quantiles in us) for tools/bench/bench.py's plots.
static void latency_report(const char *name, const char *head, int64_t *ns, int n,
                           const struct kv *extra, int nkv, const char *tail)
{
    sort_i64(ns, n);
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += ns[i];
    printf("BENCH %s impl=goro %s samples=%d min_us=%.2f p50_us=%.2f p90_us=%.2f p99_us=%.2f "
           "max_us=%.2f mean_us=%.2f",
           name, head, n, ns[0] / 1e3, rank(ns, n, 500) / 1e3, rank(ns, n, 900) / 1e3,
           rank(ns, n, 990) / 1e3, ns[n - 1] / 1e3, (double)sum / n / 1e3);
    for (int i = 0; i < nkv; i++)
        printf(" %s=%.2f", extra[i].key, extra[i].val);
    printf("%s%s\n", tail ? " " : "", tail ? tail : "");
    printf("CDF %s impl=goro %s permille=", name, head);
    for (size_t i = 0; i < sizeof cdf_permille / sizeof cdf_permille[0]; i++)
        printf("%s%d", i ? "," : "", cdf_permille[i]);
    printf(" us=");
    for (size_t i = 0; i < sizeof cdf_permille / sizeof cdf_permille[0]; i++)
        printf("%s%.2f", i ? "," : "", rank(ns, n, cdf_permille[i]) / 1e3);
    printf("\n");
}

// ---- parked_g_bytes ----------------------------------------------------------

#define PARKED_GS 100000

static uint64_t parked_started;
static chan_t *parked_chan;

static void parked_g(void *arg)
{
    waitgroup_t *exited = arg;
    __atomic_fetch_add(&parked_started, 1, __ATOMIC_RELEASE);
    chan_recv(parked_chan, 0);
    wg_done(exited);
}

static void bench_parked(void)
{
    int n = quick ? PARKED_GS / 4 : PARKED_GS;
    waitgroup_t exited = WAITGROUP_INIT;
    parked_chan = chan_make(0, 0);
    parked_started = 0;
    uint64_t free0 = page_free_count();
    wg_add(&exited, n);
    for (int i = 0; i < n; i++)
        go(parked_g, &exited);
    while (load(&parked_started) < (uint64_t)n)
        sleep_ns(1000000);
    // started comes just before the receive: let the last ones park.
    sleep_ns(20000000);
    uint64_t free1 = page_free_count();
    int live = num_goroutine();
    chan_close(parked_chan);
    wg_wait(&exited);
    chan_free(parked_chan);
    double per = (double)(free0 - free1) * PAGE_SIZE / n;
    // Every page a G takes (its record's share, its first stack page, page
    // tables, any malloc span) comes out of the page allocator, so the
    // free-page delta is the whole cost.
    printf("BENCH parked_g_bytes impl=goro procs=%d goroutines=%d live=%d bytes_per_g=%.0f "
           "sys_bytes_per_g=%.0f pages_used=%lu page_total_mb=%lu\n",
           gomaxprocs(0), n, live, per, per, free0 - free1,
           page_total_count() * PAGE_SIZE >> 20);
}

// ---- boot_time -----------------------------------------------------------------

static void bench_boot(void)
{
    static uint64_t online_ns[SCHED_STATS_MAXP];
    const char *loader;
    int n = boot_times(online_ns, SCHED_STATS_MAXP, &loader);
    if (n > SCHED_STATS_MAXP)
        n = SCHED_STATS_MAXP;
    if (n == 0) {
        printf("SKIP boot_time impl=goro reason=no_entry_tsc\n");
        return;
    }
    uint64_t last = 0;
    for (int i = 0; i < n; i++)
        if (online_ns[i] > last)
            last = online_ns[i];
    printf("BENCH boot_time impl=goro cores=%d loader=%s ms=%.3f cpu_online_ms=", n, loader,
           last / 1e6);
    for (int i = 0; i < n; i++)
        printf("%s%.3f", i ? "," : "", online_ns[i] / 1e6);
    printf("\n");
}

// ---- timer_latency ---------------------------------------------------------------

static void bench_timer(bool idle)
{
    int n = quick ? 300 : 1000;
    static int64_t lat[MAX_SAMPLES];
    timer_probe_t *pr = timer_probe_new(idle);
    if (idle)
        BENCH_MARK_BEGIN();
    for (int i = 0; i < n; i++) {
        // 50..177 us ahead, varied so the deadline does not ride in phase
        // with anything periodic.
        lat[i] = (int64_t)timer_probe_run(pr, 50000 + (uint64_t)(i * 7919 % 128) * 1000);
    }
    if (idle)
        BENCH_MARK_END();
    char head[64], tail[48];
    snprintf(head, sizeof head, "procs=%d mode=%s", gomaxprocs(0), idle ? "idle" : "busy");
    snprintf(tail, sizeof tail, "mark_pairs=1 mark_n=%d", n);
    latency_report("timer_latency", head, lat, n, 0, 0, idle ? tail : 0);
    timer_probe_free(pr);
}

// ---- raw_ipi_roundtrip -----------------------------------------------------------

static void bench_ipi(void)
{
    if (num_cpu() < 2) {
        printf("SKIP raw_ipi_roundtrip impl=goro reason=needs_2_cores\n");
        return;
    }
    int n = quick ? 300 : 1000;
    static int64_t rt[MAX_SAMPLES], one[MAX_SAMPLES];
    for (int i = 0; i < n; i++) {
        // 200 us apart, so the other core is back in its halt, as a
        // wake-up IPI would find it.
        for (uint64_t gap = nanotime() + 200000; nanotime() < gap;)
            procyield(1);
        uint64_t roundtrip, oneway;
        ipi_probe(&roundtrip, &oneway);
        rt[i] = (int64_t)roundtrip;
        one[i] = (int64_t)oneway;
    }
    sort_i64(one, n);
    struct kv oneway[] = { { "oneway_p50_us", rank(one, n, 500) / 1e3 },
                           { "oneway_p99_us", rank(one, n, 990) / 1e3 } };
    latency_report("raw_ipi_roundtrip", "cores=2 target=halted", rt, n, oneway, 2, 0);
}

// ---- sleep_lateness -------------------------------------------------------------

static void bench_sleep(const char *name, uint64_t ns)
{
    int n = quick ? 100 : 500;
    if (ns < 100000)
        n *= 2;
    static int64_t lat[MAX_SAMPLES];
    for (int i = 0; i < 3; i++)
        sleep_ns(ns);
    BENCH_MARK_BEGIN();
    for (int i = 0; i < n; i++) {
        uint64_t t0 = nanotime();
        sleep_ns(ns);
        lat[i] = (int64_t)(nanotime() - t0 - ns);
    }
    BENCH_MARK_END();
    char head[64], tail[48];
    snprintf(head, sizeof head, "procs=%d sleep_us=%lu", gomaxprocs(0), ns / 1000);
    snprintf(tail, sizeof tail, "mark_pairs=1 mark_n=%d", n);
    latency_report(name, head, lat, n, 0, 0, tail);
}

// ---- CPU hogs: loops without calls, which only preemption interrupts -----------

static uint64_t hog_stop, hog_iters, hog_running;

static void hog(void *arg)
{
    waitgroup_t *wg = arg;
    uint64_t x = 0;
    __atomic_fetch_add(&hog_running, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&hog_stop, __ATOMIC_RELAXED))
        x++;
    __atomic_fetch_add(&hog_iters, x, __ATOMIC_RELAXED);
    wg_done(wg);
}

static void hogs_start(waitgroup_t *wg, int n)
{
    hog_stop = hog_iters = hog_running = 0;
    wg_add(wg, n);
    for (int i = 0; i < n; i++)
        go(hog, wg);
    while (load(&hog_running) < (uint64_t)n)
        sleep_ns(100000);
}

// Returns the hogs' total iterations.
static uint64_t hogs_stop(waitgroup_t *wg)
{
    __atomic_store_n(&hog_stop, 1, __ATOMIC_RELAXED);
    wg_wait(wg);
    return hog_iters;
}

// ---- ticker_lateness_hogs ---------------------------------------------------------

static void bench_ticker(void)
{
    int procs = gomaxprocs(0), n = quick ? 200 : 1000;
    const int64_t period = 1000000;
    static int64_t lat[MAX_SAMPLES];
    waitgroup_t wg = WAITGROUP_INIT;
    hogs_start(&wg, procs);
    sleep_ns(5000000);
    // A throwaway ticker first: the first ticker_new on a core sets up its
    // malloc caches (milliseconds of page zeroing under TCG), which would
    // otherwise shift every due time below by that much.
    ticker_free(ticker_new((uint64_t)period));
    // Before the ticker's own start: due times are never later than its.
    int64_t start = (int64_t)nanotime();
    ticker_t *tk = ticker_new((uint64_t)period);
    int64_t next = period;          // due offset of the next tick if on time
    for (int i = 0; i < n; i++) {
        uint64_t fired_ns;
        chan_recv(ticker_chan(tk), &fired_ns);
        int64_t received = (int64_t)nanotime() - start;
        int64_t f = (int64_t)fired_ns - start;
        // Go's re-arm rule (tests/peers/README.md): due at the first period
        // multiple after the previous firing, or at the last multiple at or
        // before this firing, whichever is earlier.
        int64_t due = next, floor = f / period * period;
        if (floor < due)
            due = floor;
        lat[i] = received - due;
        next = (f / period + 1) * period;
    }
    ticker_free(tk);
    hogs_stop(&wg);
    char head[64];
    snprintf(head, sizeof head, "procs=%d hogs=%d period_us=%ld", procs, procs, period / 1000);
    latency_report("ticker_lateness_hogs", head, lat, n, 0, 0, 0);
}

// ---- quantum_tradeoff --------------------------------------------------------------

// Hogs alone for dur_ns: iterations per second, no sleeper.
static double hogs_alone(int nhogs, uint64_t dur_ns)
{
    waitgroup_t wg = WAITGROUP_INIT;
    hogs_start(&wg, nhogs);
    uint64_t t0 = nanotime();
    sleep_ns(dur_ns);
    uint64_t it = hogs_stop(&wg);
    return (double)it * 1e9 / (double)(nanotime() - t0);
}

// Each quantum's run sits between two runs of the hogs alone, and its loss
// is against their mean: the host's share of the CPU drifts (other QEMUs,
// builds), and neighbours drift least. base_spread_pct says how far the
// two disagreed.
static void bench_quantum(void)
{
    static const uint64_t quanta_ns[] = { 10000000, 1000000, 100000, 50000 };
    enum { NQ = sizeof quanta_ns / sizeof quanta_ns[0] };
    int procs = gomaxprocs(0), nhogs = 2 * procs, n = quick ? 150 : 500;
    uint64_t dur = (uint64_t)n * 1000000;
    static int64_t lat[MAX_SAMPLES];
    double rate[NQ], p50[NQ], p99[NQ], base[NQ + 1];
    base[0] = hogs_alone(nhogs, dur);
    for (size_t q = 0; q < NQ; q++) {
        waitgroup_t wg = WAITGROUP_INIT;
        uint64_t orig = sched_set_quantum_ns(quanta_ns[q]);
        hogs_start(&wg, nhogs);
        uint64_t t0 = nanotime();
        for (int i = 0; i < n; i++) {
            uint64_t s = nanotime();
            sleep_ns(1000000);
            lat[i] = (int64_t)(nanotime() - s - 1000000);
        }
        uint64_t it = hogs_stop(&wg);
        rate[q] = (double)it * 1e9 / (double)(nanotime() - t0);
        sched_set_quantum_ns(orig);
        char head[96];
        snprintf(head, sizeof head, "procs=%d hogs=%d quantum_us=%lu", procs, nhogs,
                 quanta_ns[q] / 1000);
        latency_report("quantum_sleeper", head, lat, n, 0, 0, 0);
        p50[q] = rank(lat, n, 500) / 1e3;
        p99[q] = rank(lat, n, 990) / 1e3;
        base[q + 1] = hogs_alone(nhogs, dur);
    }
    for (size_t q = 0; q < NQ; q++) {
        double b = (base[q] + base[q + 1]) / 2;
        double d = base[q] > base[q + 1] ? base[q] - base[q + 1] : base[q + 1] - base[q];
        printf("BENCH quantum_tradeoff impl=goro procs=%d hogs=%d quantum_us=%lu sleeper_p50_us=%.2f "
               "sleeper_p99_us=%.2f hog_loss_pct=%.2f hog_iters_per_s=%.0f base_iters_per_s=%.0f "
               "base_spread_pct=%.2f\n",
               procs, nhogs, quanta_ns[q] / 1000, p50[q], p99[q],
               b > 0 ? 100.0 * (1.0 - rate[q] / b) : 0.0, rate[q], b, b > 0 ? 100.0 * d / b : 0.0);
    }
}

// ---- main --------------------------------------------------------------------------

static int bench_time_main(int argc, char **argv)
{
    filter = 0;                     // the defaults again: the shell may run this twice
    quick = false;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0)
            filter = argv[i] + 7;
        else if (strcmp(argv[i], "quick=1") == 0)
            quick = true;
        else {
            printf("bench_time: unknown argument \"%s\" (filter=SUBSTR quick=1)\n", argv[i]);
            return 2;
        }
    }
    char model[64];
    cpu_model(model, sizeof model);
    printf("CONFIG impl=goro app=bench_time cores=%d gomaxprocs=%d accel=%s cpu=\"%s\" tsc_mhz=%lu "
           "timer=%s quantum_us=%lu quick=%d\n",
           num_cpu(), gomaxprocs(0), cpu_accel(), model, cputicks_hz() / 1000000, cpu_timer_mode(),
           (sched_quantum_ns() + 500) / 1000, quick);
    // First, while the free G lists are short (see parked_g_bytes).
    if (bench_wanted(filter, "parked_g_bytes"))
        bench_parked();
    if (bench_wanted(filter, "boot_time"))
        bench_boot();
    if (bench_wanted(filter, "timer_latency")) {
        bench_timer(false);
        bench_timer(true);
    }
    if (bench_wanted(filter, "raw_ipi_roundtrip"))
        bench_ipi();
    if (bench_wanted(filter, "sleep_lateness_1us"))
        bench_sleep("sleep_lateness_1us", 1000);
    if (bench_wanted(filter, "sleep_lateness_100us"))
        bench_sleep("sleep_lateness_100us", 100000);
    if (bench_wanted(filter, "sleep_lateness_1ms"))
        bench_sleep("sleep_lateness_1ms", 1000000);
    if (bench_wanted(filter, "ticker_lateness_hogs"))
        bench_ticker();
    if (bench_wanted(filter, "quantum_tradeoff"))
        bench_quantum();
    printf("DONE impl=goro\n");
    return 0;
}
GORO_APP(bench_time, "timer, sleep, preemption, IPI, boot-time and parked-G benchmarks "
                     "(filter=SUBSTR quick=1)", bench_time_main);
