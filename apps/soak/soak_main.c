// SPDX-License-Identifier: MIT
// app=soak: its arguments, the rounds, the report and the replay command.
#include "soak.h"

struct soak_args soak_args;
uint64_t soak_nops;                     // operations completed (atomic, relaxed)
static uint32_t nfailures;              // broken invariants (atomic)
static char **saved_argv;
static int saved_argc;

uint64_t soak_ops_done(void)
{
    return __atomic_load_n(&soak_nops, __ATOMIC_RELAXED);
}

uint32_t soak_failures(void)
{
    return __atomic_load_n(&nfailures, __ATOMIC_RELAXED);
}

void soak_fail(const char *fmt, ...)
{
    uint32_t n = __atomic_add_fetch(&nfailures, 1, __ATOMIC_RELAXED);
    if (n > 10)
        return;                         // the first ones say it
    va_list ap;
    va_start(ap, fmt);
    printf("soak: FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

// The one command that replays this run: the scheduler's seed (which
// also seeds the programs), the machine's shape, the time slice and the
// app's own arguments.
static void print_replay(void)
{
    uint64_t q = (sched_quantum_ns() + 500) / 1000;
    printf("soak: replay: make run APP=soak SMP=%d", num_cpu());
    if (numa_nodes() > 1)
        printf(" NUMA=%d", numa_nodes());
    printf(" ARGS=\"seed=%lu quantum=%luus", soak_args.seed, q);
    for (int i = 1; i < saved_argc; i++)
        printf(" %s", saved_argv[i]);
    printf("\"\n");
}

void soak_give_up(void)
{
    printf("soak: %lu ops, %u failures (seed=%lu)\n", soak_ops_done(), soak_failures(),
           soak_args.seed);
    print_replay();
    exit(1);
}

static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

static bool parse_args(int argc, char **argv)
{
    soak_args = (struct soak_args){ .seed = sched_seed(), .ops = 200000, .width = 16 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;
        if (!strncmp(a, "ops=", 4) && parse_u64(a + 4, &v))
            soak_args.ops = v;
        else if (!strncmp(a, "ms=", 3) && parse_u64(a + 3, &v))
            soak_args.guest_ms = v;
        else if (!strncmp(a, "width=", 6) && parse_u64(a + 6, &v) && v >= 1 && v <= 64)
            soak_args.width = (uint32_t)v;
        else if (!strncmp(a, "only=", 5))
            soak_args.only = a + 5;
        else if (!strcmp(a, "break=msg") || !strcmp(a, "break=g"))
            soak_args.breakage = a + 6;
        else if (!strcmp(a, "v=1"))
            soak_args.verbose = true;
        else {
            printf("soak: unknown argument '%s' (ops=N ms=N width=1..64 only=KIND,... break=msg|g v=1; seed= and "
                   "quantum= are the kernel's)\n", a);
            return false;
        }
    }
    if (soak_args.only && !soak_only_valid()) {
        printf("soak: only=%s names no program kind\n", soak_args.only);
        return false;
    }
    return true;
}

// Rounds until ops= operations or ms= of guest time; each round's
// programs are drawn from a stream split off the run's seed.
static void run_rounds(void)
{
    rng_t run = { soak_args.seed };
    uint64_t t0 = nanotime(), next_report = t0 + 5000000000ull;
    uint64_t round = 0;
    while (soak_failures() == 0) {
        uint64_t now = nanotime();
        if (soak_args.guest_ms ? now - t0 >= soak_args.guest_ms * 1000000ull
                               : soak_ops_done() >= soak_args.ops)
            break;
        rng_t r = rng_split(&run);
        if (soak_args.verbose)
            printf("soak: round %lu:", round);
        for (uint32_t i = 0; i < soak_args.width; i++) {
            const struct soak_op_kind *k = soak_pick(&r);
            if (soak_args.verbose)
                printf(" %s", k->name);
            rng_t pr = rng_split(&r);
            k->start(&pr);
        }
        if (soak_args.verbose)
            printf("\n");
        soak_join();
        msg_check_round();
        round_cleanup();
        ledger_reset();
        round++;
        if (now >= next_report) {
            uint64_t ms = (now - t0) / 1000000 + 1;
            printf("soak: %lu ops in %lu rounds, %lu ops/s\n", soak_ops_done(), round,
                   soak_ops_done() * 1000 / ms);
            next_report = now + 5000000000ull;
        }
    }
    uint64_t ms = (nanotime() - t0) / 1000000 + 1;
    printf("soak: %lu rounds in %lu ms of guest time, %lu ops/s\n", round, ms,
           soak_ops_done() * 1000 / ms);
}

// Every goroutine the run started has exited: the count is back where it
// began. AfterFunc goroutines may still be on their way out, so this waits
// (a stall limit: only a goroutine that never ends reaches it; in looks as
// well as in time, as the watchdog's, so a host that starves QEMU cannot).
static void check_left_behind(int baseline)
{
    uint64_t start = nanotime(), looks = 0;
    int n;
    while ((n = num_goroutine()) != baseline && (nanotime() - start < 120000000000ull || looks < 120000)) {
        sleep_ns(1000000);
        looks++;
    }
    if (n != baseline)
        soak_fail("%d goroutines at the start, %d at the end", baseline, n);
}

static int soak_main(int argc, char **argv)
{
    saved_argc = argc;
    saved_argv = argv;
    if (!parse_args(argc, argv))
        return 2;
    printf("soak: seed=%lu, %d cores, %d NUMA node(s), quantum %lu us, %s %lu, width %u\n",
           soak_args.seed, num_cpu(), numa_nodes(), (sched_quantum_ns() + 500) / 1000,
           soak_args.guest_ms ? "ms" : "ops",
           soak_args.guest_ms ? soak_args.guest_ms : soak_args.ops, soak_args.width);
    int procs = gomaxprocs(0), baseline = num_goroutine();
    irq_setup();
    watch_start();
    run_rounds();
    watch_stop();
    gomaxprocs(procs);
    irq_finish();
    check_left_behind(baseline);
    watch_report();
    printf("soak: %lu ops, %u failures\n", soak_ops_done(), soak_failures());
    if (soak_failures()) {
        printf("soak: FAILED with seed=%lu\n", soak_args.seed);
        print_replay();
        return 1;
    }
    return 0;
}
GORO_APP(soak, "random programs over every primitive, invariants checked (ops=N ms=N width=N v=1)",
         soak_main);
