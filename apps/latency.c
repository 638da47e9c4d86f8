// SPDX-License-Identifier: MIT
// app=latency: latency under load, the figures the field's µs-scale
// schedulers report. tools/bench/latency_go/main.go is the Go peer: the same
// three workloads, parameters, random arrivals and output lines, so
// tools/bench/latbench.py reads both alike.
//
//   wl=timers  golang/go#38860's question: timers among CPU-bound
//              goroutines. gomaxprocs spinners that never block, and
//              4 sleepers per period (1, 10, 100 ms), staggered, each
//              sleeping to its next deadline; a sample is how late the
//              sleeper runs after its deadline (timer delay plus run
//              queue delay behind the spinners).
//   wl=wakeup  schbench's wake-up latency: 2 message goroutines each wake
//              their 4 workers over channels, every 1 ms; a worker
//              records the time from the message's send to its running,
//              computes 50 µs, reports back; the message waits for all
//              four, sleeps, and wakes them again.
//   wl=open    Skyloft's (SOSP'24) synthetic load, open loop: Poisson
//              arrivals, 99.5% requests of 4 µs and 0.5% of 10 ms of
//              computation, one goroutine per request; a sample is a
//              short request's arrival (its scheduled time, so a late
//              dispatcher counts) to completion. One run per offered
//              load, a fraction of gomaxprocs / mean service time.
//              Boot with quantum=30us for Skyloft's quantum.
//
// Arguments: wl=a comma list of timers, wakeup, open, or all; ms=N (per case; default 2000,
// and 1000 per load point) loads=10,30,50,70,80 (percent) seed=N.
// Output, one line per case (times in ns, percentiles nearest-rank):
//   LATCONFIG impl=goro vcpus=V gomaxprocs=P quantum_ns=Q accel=A
//   LAT impl=goro wl=W case=C n=N p50_ns= p99_ns= p999_ns= max_ns= [...]
//   LATDONE impl=goro
#include "goro.h"
#include "bench_util.h"

// ---- samples ---------------------------------------------------------------

struct samples {
    uint64_t *v;
    uint32_t cap;
    uint32_t n;                 // slots taken (atomic); may pass cap: the rest dropped
};

static void samples_init(struct samples *s, uint32_t cap)
{
    s->v = malloc((size_t)cap * sizeof *s->v);
    s->cap = cap;
    s->n = 0;
}

static void samples_add(struct samples *s, uint64_t x)
{
    uint32_t i = __atomic_fetch_add(&s->n, 1, __ATOMIC_RELAXED);   // relaxed: a slot ticket; the reader joins the writers first
    if (i < s->cap)
        s->v[i] = x;
}

static uint32_t samples_len(const struct samples *s)
{
    return s->n < s->cap ? s->n : s->cap;
}

static void sift_down(uint64_t *v, uint32_t i, uint32_t n)
{
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && v[c + 1] > v[c])
            c++;
        if (v[i] >= v[c])
            return;
        uint64_t t = v[i];
        v[i] = v[c];
        v[c] = t;
        i = c;
    }
}

// Heapsort: goro.h's sort_u64, an insertion sort, is for a few hundred values.
static void sort_samples(uint64_t *v, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(v, i, n);
    for (uint32_t end = n; end-- > 1;) {
        uint64_t t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

// The nearest-rank percentile (per mille) of sorted v.
static uint64_t rank(const uint64_t *v, uint32_t n, uint32_t permille)
{
    uint64_t k = ((uint64_t)n * permille + 999) / 1000;
    return v[k ? k - 1 : 0];
}

// Prints the LAT line's distribution fields; the caller ends the line.
static void print_dist(struct samples *s)
{
    uint32_t n = samples_len(s);
    printf(" n=%u", n);
    if (n == 0)
        return;
    sort_samples(s->v, n);
    printf(" p50_ns=%lu p99_ns=%lu p999_ns=%lu max_ns=%lu", rank(s->v, n, 500), rank(s->v, n, 990),
           rank(s->v, n, 999), s->v[n - 1]);
}

// ---- work ------------------------------------------------------------------

// Computes for d ns of this goroutine's running time: gaps between clock
// reads longer than WORK_GAP are time spent preempted or descheduled, and
// do not count (a 10 ms request preempted by short ones still computes
// 10 ms). The Go peer's work is the same loop.
#define WORK_GAP 5000
static void work(uint64_t d)
{
    uint64_t done = 0, last = nanotime();
    while (done < d) {
        uint64_t t = nanotime();
        if (t - last < WORK_GAP)
            done += t - last;
        last = t;
    }
}

static uint64_t rng_state;

// splitmix64, as the Go peer's: both draw the same arrivals from one seed.
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// ln x for x > 0: x = m 2^e with m in [1, 2), ln m = 2 atanh((m-1)/(m+1)).
static double ln(double x)
{
    union { double d; uint64_t u; } b = { .d = x };
    int e = (int)((b.u >> 52) & 0x7ff) - 1023;
    b.u = (b.u & ~(0x7ffull << 52)) | (1023ull << 52);
    double s = (b.d - 1) / (b.d + 1), s2 = s * s, term = s, sum = 0;
    for (int k = 1; k < 40; k += 2) {
        sum += term / k;
        term *= s2;
    }
    return e * 0.6931471805599453 + 2 * sum;
}

// An exponential draw of the given mean (ns): -mean ln u, u in (0, 1].
static uint64_t exp_draw(double mean)
{
    double u = (double)((rng_next() >> 11) + 1) / 9007199254740992.0;
    return (uint64_t)(-mean * ln(u));
}

// ---- wl=timers: golang/go#38860 ----------------------------------------------

#define TIMER_PERIODS 3
#define SLEEPERS_PER_PERIOD 4
static const uint64_t timer_period[TIMER_PERIODS] = { 1000000, 10000000, 100000000 };
static const char *const timer_name[TIMER_PERIODS] = { "1ms", "10ms", "100ms" };

struct timers_run {
    uint64_t start, end;
    int stop;                   // set by main once end has passed (atomic)
    struct samples late[TIMER_PERIODS];
    uint64_t skipped[TIMER_PERIODS];    // deadlines passed over, already late by a period (atomic)
    waitgroup_t wg;
};

struct sleeper {
    struct timers_run *r;
    int period;                 // index into timer_period
    int k;                      // 0..SLEEPERS_PER_PERIOD-1: its stagger
};

static void spinner(void *arg)
{
    struct timers_run *r = arg;
    uint64_t x = 1;
    while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {     // relaxed: a flag; wg orders the rest
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ull + 1;
        __asm__ volatile("" : "+r"(x));
    }
    wg_done(&r->wg);
}

static void sleeper(void *arg)
{
    struct sleeper *s = arg;
    struct timers_run *r = s->r;
    uint64_t period = timer_period[s->period];
    uint64_t next = r->start + period * (uint64_t)(s->k + 1) / SLEEPERS_PER_PERIOD;
    while (next < r->end) {
        uint64_t now = nanotime();
        if (next > now)
            sleep_ns(next - now);
        uint64_t t = nanotime();
        samples_add(&r->late[s->period], t - next);
        next += period;
        for (; next <= t; next += period)
            __atomic_fetch_add(&r->skipped[s->period], 1, __ATOMIC_RELAXED);  // relaxed: a count read after wg_wait
    }
    wg_done(&r->wg);
}

static void run_timers(uint64_t ms)
{
    static struct timers_run r;
    static struct sleeper sl[TIMER_PERIODS][SLEEPERS_PER_PERIOD];
    int procs = gomaxprocs(0);
    r = (struct timers_run){ 0 };
    for (int p = 0; p < TIMER_PERIODS; p++)
        samples_init(&r.late[p], (uint32_t)(ms * 1000000 / timer_period[p] + 2) * SLEEPERS_PER_PERIOD);
    r.start = nanotime();
    r.end = r.start + ms * 1000000;
    wg_add(&r.wg, procs + TIMER_PERIODS * SLEEPERS_PER_PERIOD);
    for (int i = 0; i < procs; i++)
        go(spinner, &r);
    for (int p = 0; p < TIMER_PERIODS; p++)
        for (int k = 0; k < SLEEPERS_PER_PERIOD; k++) {
            sl[p][k] = (struct sleeper){ &r, p, k };
            go(sleeper, &sl[p][k]);
        }
    sleep_ns(r.end - r.start);
    // The sleepers' last deadline is before end; stop the spinners once
    // every sleeper is past it (they finish their last sample first).
    while (nanotime() < r.end + timer_period[TIMER_PERIODS - 1])
        sleep_ns(timer_period[0]);
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);            // relaxed: a flag; wg orders the rest
    wg_wait(&r.wg);
    for (int p = 0; p < TIMER_PERIODS; p++) {
        printf("LAT impl=goro wl=timers case=%s spinners=%d sleepers=%d", timer_name[p], procs,
               SLEEPERS_PER_PERIOD);
        print_dist(&r.late[p]);
        printf(" skipped=%lu\n", r.skipped[p]);
        free(r.late[p].v);
    }
}

// ---- wl=wakeup: schbench ---------------------------------------------------

#define MESSAGES 2
#define WORKERS 4
#define WAKE_SLEEP_NS 1000000
#define WAKE_WORK_NS 50000

struct wake_group {
    chan_t *wake[WORKERS];      // uint64_t: the send's time; 0 ends the worker
    chan_t *done;               // the workers' replies
    struct samples *lat;
    uint64_t end;
    waitgroup_t *wg;
};

struct wake_worker {
    struct wake_group *g;
    chan_t *wake;               // its group's wake[] entry
};

static void wake_worker(void *arg)
{
    struct wake_worker *w = arg;
    struct wake_group *g = w->g;
    uint64_t t0;
    while (chan_recv(w->wake, &t0) && t0) {
        samples_add(g->lat, nanotime() - t0);
        work(WAKE_WORK_NS);
        chan_send(g->done, 0);
    }
    wg_done(g->wg);
}

static void wake_message(void *arg)
{
    struct wake_group *g = arg;
    while (nanotime() < g->end) {
        for (int w = 0; w < WORKERS; w++) {
            uint64_t t0 = nanotime();
            chan_send(g->wake[w], &t0);
        }
        for (int w = 0; w < WORKERS; w++)
            chan_recv(g->done, 0);
        sleep_ns(WAKE_SLEEP_NS);
    }
    uint64_t zero = 0;
    for (int w = 0; w < WORKERS; w++)
        chan_send(g->wake[w], &zero);
    wg_done(g->wg);
}

static void run_wakeup(uint64_t ms)
{
    static struct wake_group g[MESSAGES];
    static struct wake_worker wargs[MESSAGES][WORKERS];
    struct samples lat;
    waitgroup_t wg = WAITGROUP_INIT;
    samples_init(&lat, (uint32_t)(ms * 1000000 / WAKE_SLEEP_NS + 2) * MESSAGES * WORKERS);
    uint64_t end = nanotime() + ms * 1000000;
    wg_add(&wg, MESSAGES * (WORKERS + 1));
    for (int m = 0; m < MESSAGES; m++) {
        g[m] = (struct wake_group){ .done = chan_make(0, WORKERS), .lat = &lat, .end = end, .wg = &wg };
        for (int w = 0; w < WORKERS; w++) {
            g[m].wake[w] = chan_make(sizeof(uint64_t), 1);
            wargs[m][w] = (struct wake_worker){ &g[m], g[m].wake[w] };
            go(wake_worker, &wargs[m][w]);
        }
        go(wake_message, &g[m]);
    }
    wg_wait(&wg);
    printf("LAT impl=goro wl=wakeup case=m%dw%d messages=%d workers=%d work_ns=%d sleep_ns=%d",
           MESSAGES, WORKERS, MESSAGES, WORKERS, WAKE_WORK_NS, WAKE_SLEEP_NS);
    print_dist(&lat);
    printf("\n");
    for (int m = 0; m < MESSAGES; m++) {
        for (int w = 0; w < WORKERS; w++)
            chan_free(g[m].wake[w]);
        chan_free(g[m].done);
    }
    free(lat.v);
}

// ---- wl=open: Skyloft's synthetic load ---------------------------------------

#define SHORT_NS 4000
#define LONG_NS 10000000
#define LONG_PER_MILLE 5
// Below this the dispatcher yields instead of sleeping to the next arrival.
#define DISPATCH_SLEEP_MIN 50000

struct open_run {
    struct samples short_lat, long_lat;
    waitgroup_t wg;
    uint64_t last_done;         // the latest completion (atomic max)
};

struct request {
    struct open_run *r;
    uint64_t arrival, service;
};

static void request_g(void *arg)
{
    struct request *q = arg;
    work(q->service);
    uint64_t t = nanotime(), prev = __atomic_load_n(&q->r->last_done, __ATOMIC_RELAXED);
    while (t > prev && !__atomic_compare_exchange_n(&q->r->last_done, &prev, t, true, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED))     // relaxed: a statistic read after wg_wait
        ;
    samples_add(q->service == SHORT_NS ? &q->r->short_lat : &q->r->long_lat, t - q->arrival);
    waitgroup_t *wg = &q->r->wg;
    free(q);
    wg_done(wg);
}

static void run_open(uint64_t ms, int load_pct)
{
    static struct open_run r;
    int procs = gomaxprocs(0);
    double mean_service = (SHORT_NS * (1000.0 - LONG_PER_MILLE) + (double)LONG_NS * LONG_PER_MILLE) / 1000.0;
    double interarrival = mean_service / (procs * load_pct / 100.0);
    uint32_t expect = (uint32_t)(ms * 1e6 / interarrival * 1.5) + 64;
    r = (struct open_run){ 0 };
    samples_init(&r.short_lat, expect);
    samples_init(&r.long_lat, expect / 50 + 64);
    uint64_t start = nanotime(), end = start + ms * 1000000, next = start + exp_draw(interarrival);
    uint64_t sent = 0, longs = 0;
    struct sched_stats *st0 = malloc(sizeof *st0), *st1 = malloc(sizeof *st1);    // 100 KiB each
    sched_stats(st0);
    while (next < end) {
        uint64_t now = nanotime();
        for (; next <= now && next < end; next += exp_draw(interarrival)) {
            struct request *q = malloc(sizeof *q);
            bool is_long = rng_next() % 1000 < LONG_PER_MILLE;
            *q = (struct request){ &r, next, is_long ? LONG_NS : SHORT_NS };
            wg_add(&r.wg, 1);
            go(request_g, q);
            sent++;
            longs += is_long;
        }
        if (next >= end)
            break;
        now = nanotime();
        if (next > now + DISPATCH_SLEEP_MIN)
            sleep_ns(next - now);
        else
            gosched();
    }
    wg_wait(&r.wg);
    sched_stats(st1);
    uint64_t span = r.last_done > start ? r.last_done - start : 1;
    printf("LAT impl=goro wl=open case=load%d offered_pct=%d rate_per_s=%lu sent=%lu long=%lu "
           "achieved_per_s=%lu",
           load_pct, load_pct, (uint64_t)(1e9 / interarrival), sent, longs, sent * (uint64_t)1000000000 / span);
    print_dist(&r.short_lat);
    uint32_t nl = samples_len(&r.long_lat);
    if (nl) {
        sort_samples(r.long_lat.v, nl);
        printf(" long_p50_ns=%lu long_max_ns=%lu", rank(r.long_lat.v, nl, 500), r.long_lat.v[nl - 1]);
    }
    // goro only: what the time slice cost (preemptions of a run out quantum).
    printf(" preempt_quantum=%lu runs=%lu", st1->total.preemptions_quantum - st0->total.preemptions_quantum,
           st1->total.runs - st0->total.runs);
    printf("\n");
    free(st0);
    free(st1);
    free(r.short_lat.v);
    free(r.long_lat.v);
}

// ---- main ------------------------------------------------------------------

// The length of w's first comma-separated word.
static size_t word_len(const char *w)
{
    size_t n = 0;
    while (w[n] && w[n] != ',')
        n++;
    return n;
}

static const char *const workloads[] = { "timers", "wakeup", "open" };

// The workload named by the n bytes at w, or NULL.
static const char *wl_word(const char *w, size_t n)
{
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (strlen(workloads[i]) == n && strncmp(w, workloads[i], n) == 0)
            return workloads[i];
    return 0;
}

// Whether the comma list wl (checked by main) asks for name; "all" asks for every one.
static bool wl_has(const char *wl, const char *name)
{
    for (const char *w = wl; *w;) {
        size_t n = word_len(w);
        if ((n == 3 && strncmp(w, "all", 3) == 0) || (strlen(name) == n && strncmp(w, name, n) == 0))
            return true;
        w += n + (w[n] == ',');
    }
    return false;
}

static int usage(const char *arg)
{
    printf("latency: bad argument \"%s\" (wl=timers,wakeup,open|all ms=N loads=P,P,... seed=N)\n", arg);
    return 2;
}

static int latency_main(int argc, char **argv)
{
    const char *wl = "all";
    uint64_t ms = 0, seed = 1;
    int loads[16] = { 10, 30, 50, 70, 80 }, nloads = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "wl=", 3) == 0)
            wl = a + 3;
        else if (strncmp(a, "ms=", 3) == 0) {
            if (!bench_parse_u64(a + 3, &ms) || ms == 0)
                return usage(a);
        } else if (strncmp(a, "seed=", 5) == 0) {
            if (!bench_parse_u64(a + 5, &seed))
                return usage(a);
        } else if (strncmp(a, "loads=", 6) == 0) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", a + 6);
            nloads = 0;
            for (char *p = buf; *p && nloads < 16;) {
                char *q = p;
                while (*q && *q != ',')
                    q++;
                bool more = *q == ',';
                *q = 0;
                uint64_t v;
                if (!bench_parse_u64(p, &v) || v == 0 || v > 100)
                    return usage(a);
                loads[nloads++] = (int)v;
                p = more ? q + 1 : q;
            }
            if (nloads == 0)
                return usage(a);
        } else
            return usage(a);
    }
    for (const char *w = wl; *w;) {
        size_t n = word_len(w);
        if (!(n == 3 && strncmp(w, "all", 3) == 0) && !wl_word(w, n))
            return usage(wl);
        w += n + (w[n] == ',');
    }
    rng_state = seed;
    printf("LATCONFIG impl=goro vcpus=%d gomaxprocs=%d quantum_ns=%lu accel=%s seed=%lu\n", num_cpu(),
           gomaxprocs(0), sched_quantum_ns(), cpu_accel(), seed);
    if (wl_has(wl, "timers"))
        run_timers(ms ? ms : 2000);
    if (wl_has(wl, "wakeup"))
        run_wakeup(ms ? ms : 2000);
    if (wl_has(wl, "open"))
        for (int i = 0; i < nloads; i++)
            run_open(ms ? ms : 1000, loads[i]);
    printf("LATDONE impl=goro\n");
    return 0;
}
GORO_APP(latency, "latency under load: #38860's timers, schbench's wake-ups, Skyloft's open loop "
         "(wl=timers|wakeup|open|all ms=N loads=P,P seed=N)", latency_main);
