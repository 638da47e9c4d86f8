// SPDX-License-Identifier: MIT
// app=gobench [bench=REGEX] [benchtime=Nx] [count=C]: Go 1.19's runtime,
// sync and time benchmarks with Go's workloads, printed as `go test
// -bench` prints them, so Go's tools (benchstat) read goro's results and
// Go's side by side. docs/performance.md lists them.
//
// Each package prints Go's header (goos, goarch, pkg, cpu) and goro's own
// configuration keys, one line per run, then PASS and `ok pkg secs`. A
// result line is
//     BenchmarkChanSync-2   	   20000	       310.0 ns/op
// (-P: gomaxprocs when not 1, as Go). The measured interval of every line
// is bracketed by one pair of instruction-count markers (bench_util.h), in
// output order, so a host tool reading the plugin's counts can add the
// insn/op column: (count at marker 2 - count at marker 1) / N.
//
// bench= is Go's -test.bench: a pattern per '/'-separated level of the
// name (Go matches each level separately), with '|' alternatives, '^',
// '$', '.' and '*'; a pattern matches anywhere unless anchored. benchtime=
// Nx runs every benchmark with N iterations (Go's fixed count); without it
// each has its own N, sized for about 0.1 s under TCG. As in Go, every
// benchmark first runs once with N=1 (unmeasured: no markers, no line),
// which also sizes RunParallel's grain.
#include "goro.h"
#include "bench_util.h"
#include "gobench.h"

static const struct gobench_pkg pkgs[] = {
    { "runtime", gobench_proc },
    { "runtime", gobench_chan },
    { "runtime", gobench_select },
    { "sync", gobench_sync },
    { "sync", gobench_sema },
    { "time", gobench_time },
    { "goro", gobench_goro },
    { "floor", gobench_floor },
};
#define NPKGS (sizeof pkgs / sizeof pkgs[0])

// ---- the timer: Go's ResetTimer/StopTimer, once each -----------------------

void gb_start(struct gb *b)
{
    b->starts++;
    if (b->mark)
        BENCH_MARK_BEGIN();
    b->t0 = nanotime();
}

void gb_stop(struct gb *b)
{
    b->ns = nanotime() - b->t0;
    if (b->mark)
        BENCH_MARK_END();
    b->stops++;
}

void gb_skip(struct gb *b, const char *reason)
{
    b->skipped = true;
    b->reason = reason;
}

// ---- RunParallel ----------------------------------------------------------

struct par {
    struct gb_pb pb_proto;
    void (*body)(struct gb_pb *pb, void *arg);
    void *arg;
    waitgroup_t wg;
};

static void par_worker(void *arg)
{
    struct par *p = arg;
    struct gb_pb pb = p->pb_proto;
    p->body(&pb, p->arg);
    wg_done(&p->wg);
}

void gb_run_parallel(struct gb *b, void (*body)(struct gb_pb *pb, void *arg), void *arg)
{
    // Go's grain: the iterations of about 100 us by the previous run's
    // speed, 1 to 10000.
    uint64_t grain = 0;
    if (b->prev_n > 0 && b->prev_ns > 0)
        grain = 100000 * b->prev_n / b->prev_ns;
    if (grain < 1)
        grain = 1;
    if (grain > 10000)
        grain = 10000;
    uint64_t counter = 0;
    struct par p = { .pb_proto = { &counter, grain, b->n, 0 }, .body = body, .arg = arg };
    int procs = (b->parallelism > 0 ? b->parallelism : 1) * gomaxprocs(0);
    bool own_timer = b->starts == 0;
    if (own_timer)
        gb_start(b);
    wg_add(&p.wg, procs);
    for (int i = 0; i < procs; i++)
        go(par_worker, &p);
    wg_wait(&p.wg);
    if (own_timer)
        gb_stop(b);
}

// ---- bench=: Go's per-level pattern ---------------------------------------

// Rob Pike's matcher: c, '.', '*' after either, '^' (pattern start), '$'.
static bool match_here(const char *re, const char *re_end, const char *s, const char *s_end);

static bool match_star(char c, const char *re, const char *re_end, const char *s, const char *s_end)
{
    do {
        if (match_here(re, re_end, s, s_end))
            return true;
    } while (s < s_end && (*s++ == c || c == '.'));
    return false;
}

static bool match_here(const char *re, const char *re_end, const char *s, const char *s_end)
{
    if (re == re_end)
        return true;
    if (re + 1 < re_end && re[1] == '*')
        return match_star(re[0], re + 2, re_end, s, s_end);
    if (re[0] == '$' && re + 1 == re_end)
        return s == s_end;
    if (s < s_end && (re[0] == '.' || re[0] == *s))
        return match_here(re + 1, re_end, s + 1, s_end);
    return false;
}

static bool match_alt(const char *re, const char *re_end, const char *s, const char *s_end)
{
    if (re < re_end && *re == '^')
        return match_here(re + 1, re_end, s, s_end);
    do {
        if (match_here(re, re_end, s, s_end))
            return true;
    } while (s++ < s_end);
    return false;
}

static bool match_level(const char *re, const char *re_end, const char *s, const char *s_end)
{
    for (;;) {
        const char *bar = re;
        while (bar < re_end && *bar != '|')
            bar++;
        if (match_alt(re, bar, s, s_end))
            return true;
        if (bar == re_end)
            return false;
        re = bar + 1;
    }
}

// name: "BenchmarkMakeChan/Struct/0". Levels the pattern lacks match.
static bool wanted(const char *pattern, const char *name)
{
    if (!pattern)
        return true;
    const char *re = pattern, *s = name;
    while (*re && *s) {
        const char *re_end = strchr(re, '/'), *s_end = strchr(s, '/');
        if (!re_end)
            re_end = re + strlen(re);
        if (!s_end)
            s_end = s + strlen(s);
        if (!match_level(re, re_end, s, s_end))
            return false;
        re = *re_end ? re_end + 1 : re_end;
        s = *s_end ? s_end + 1 : s_end;
    }
    return true;
}

// ---- output in go test's format -------------------------------------------

// Go's prettyPrint: ten places before the point, four significant
// figures for small numbers.
static void print_value(double x, const char *unit)
{
    double y = x < 0 ? -x : x;
    if (y == 0 || y >= 999.95)
        printf("%10.0f %s", x, unit);
    else if (y >= 99.995)
        printf("%12.1f %s", x, unit);
    else if (y >= 9.9995)
        printf("%13.2f %s", x, unit);
    else if (y >= 0.99995)
        printf("%14.3f %s", x, unit);
    else if (y >= 0.099995)
        printf("%15.4f %s", x, unit);
    else if (y >= 0.0099995)
        printf("%16.5f %s", x, unit);
    else if (y >= 0.00099995)
        printf("%17.6f %s", x, unit);
    else
        printf("%18.7f %s", x, unit);
}

static void full_name(char *buf, size_t n, const char *name, int procs)
{
    if (procs == 1)
        snprintf(buf, n, "Benchmark%s", name);
    else
        snprintf(buf, n, "Benchmark%s-%d", name, procs);
}

static void header(const char *pkg)
{
    char model[64];
    cpu_model(model, sizeof model);
    printf("goos: goro\ngoarch: amd64\npkg: %s\ncpu: %s\n", pkg, model);
    printf("goro-vcpus: %d\ngoro-accel: %s\ngoro-quantum: %luus\n", num_cpu(), cpu_accel(),
           (sched_quantum_ns() + 500) / 1000);
}

// ---- running one benchmark ------------------------------------------------

static bool run_once(const struct gobench *bm, struct gb *b, uint64_t n, bool mark)
{
    b->n = n;
    b->mark = mark;
    b->starts = b->stops = 0;
    b->skipped = false;
    b->parallelism = 1;
    b->ns = 0;
    bm->fn(b);
    if (b->skipped)
        return false;
    if (b->starts != 1 || b->stops != 1)
        panic("gobench: Benchmark%s started its timer %d times and stopped it %d times (once each)",
              bm->name, b->starts, b->stops);
    b->prev_n = n;
    b->prev_ns = b->ns;
    return true;
}

// Returns false when the benchmark skipped.
static bool run(const struct gobench *bm, uint64_t benchtime, int count, int width)
{
    char name[96];
    int procs = gomaxprocs(0);
    full_name(name, sizeof name, bm->name, procs);
    uint64_t n = benchtime ? benchtime : bm->n;
    for (int c = 0; c < count; c++) {
        struct gb b = { 0 };
        if (!run_once(bm, &b, 1, false)) {
            printf("--- SKIP: Benchmark%s\n    gobench: %s\n", bm->name, b.reason);
            return false;
        }
        if (n > 1)
            run_once(bm, &b, n, true);
        else {
            // Go reports the N=1 run itself; it needs its markers too.
            run_once(bm, &b, 1, true);
        }
        printf("%-*s\t%8lu\t", width, name, b.n);
        print_value((double)b.ns / (double)b.n, "ns/op");
        printf("\n");
    }
    return true;
}

static uint64_t parse_u64(const char *s, const char **end)
{
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (uint64_t)(*s++ - '0');
    *end = s;
    return v;
}

static int usage(const char *arg)
{
    printf("gobench: bad argument \"%s\" (bench=REGEX benchtime=Nx count=C list=1)\n", arg);
    return 2;
}

static int gobench_main(int argc, char **argv)
{
    const char *pattern = 0;
    uint64_t benchtime = 0;
    int count = 1;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        const char *end;
        if (strncmp(argv[i], "bench=", 6) == 0)
            pattern = argv[i] + 6;
        else if (strncmp(argv[i], "benchtime=", 10) == 0) {
            benchtime = parse_u64(argv[i] + 10, &end);
            if (benchtime == 0 || strcmp(end, "x") != 0)
                return usage(argv[i]);
        } else if (strncmp(argv[i], "count=", 6) == 0) {
            count = (int)parse_u64(argv[i] + 6, &end);
            if (count < 1 || *end)
                return usage(argv[i]);
        } else if (strcmp(argv[i], "list=1") == 0)
            list = true;
        else
            return usage(argv[i]);
    }
    if (pattern && strcmp(pattern, ".") == 0)
        pattern = 0;

    // Go's name column: the longest selected name with the procs suffix.
    int width = 0;
    char name[96];
    for (size_t k = 0; k < NPKGS; k++)
        for (const struct gobench *bm = pkgs[k].list; bm->name; bm++) {
            snprintf(name, sizeof name, "Benchmark%s", bm->name);
            if (!wanted(pattern, name))
                continue;
            full_name(name, sizeof name, bm->name, gomaxprocs(0));
            if ((int)strlen(name) > width)
                width = (int)strlen(name);
        }
    if (list) {
        for (size_t k = 0; k < NPKGS; k++)
            for (const struct gobench *bm = pkgs[k].list; bm->name; bm++) {
                snprintf(name, sizeof name, "Benchmark%s", bm->name);
                if (wanted(pattern, name))
                    printf("%s %s\n", pkgs[k].pkg, name);
            }
        return 0;
    }

    // One block per package, as go test prints one per test binary.
    for (size_t k = 0; k < NPKGS;) {
        const char *pkg = pkgs[k].pkg;
        uint64_t t0 = nanotime();
        bool any = false;
        for (; k < NPKGS && strcmp(pkgs[k].pkg, pkg) == 0; k++)
            for (const struct gobench *bm = pkgs[k].list; bm->name; bm++) {
                snprintf(name, sizeof name, "Benchmark%s", bm->name);
                if (!wanted(pattern, name))
                    continue;
                if (!any)
                    header(pkg);
                any = true;
                run(bm, benchtime, count, width);
            }
        if (any)
            printf("PASS\nok  \t%s\t%.3fs\n", pkg, (double)(nanotime() - t0) / 1e9);
    }
    return 0;
}
GORO_APP(gobench,
         "Go's runtime, sync and time benchmarks in go test's format "
         "(bench=REGEX benchtime=Nx count=C)",
         gobench_main);
