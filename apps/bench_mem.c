// SPDX-License-Identifier: MIT
// app=bench_mem [filter=SUBSTR] [reps=N] [mb=N]: memory benchmarks.
//
//   malloc_free      one malloc and one free of a size, back to back: the
//                    per-core cache's fast path (large sizes: the pages')
//   malloc_batch     1000 mallocs then 1000 frees: span refills included
//   page_alloc_free  page_alloc + page_free of 1 and 16 pages (zeroing included)
//   mem_latency      a dependent-load pointer chase through mb MiB on each
//                    node, from a core of each node: local against remote
//
// Each result is the median of reps repetitions with min, p10, p90, max.
// Numbers are measured, never asserted. Under a hypervisor the guest's
// nodes are one host process's memory, so remote latency equals local:
// the output says so; the chase tells the truth on multi-socket hardware.
#include "goro.h"
#include "bench_util.h"

#define MAX_REPS 101

static int reps = 21;
static uint64_t chase_mb = 64;
static const char *filter;

// One BENCH line from reps per-repetition cycle counts of n operations each.
static void report(const char *name, const char *keys, uint64_t *cyc, uint64_t n)
{
    sort_u64(cyc, reps);
    double to_ns = 1e9 / (double)cputicks_hz(), per = 1.0 / (double)n;
    printf("BENCH %s %s n=%lu reps=%d ns_per_op=%.1f ns_per_op_min=%.1f ns_per_op_p10=%.1f "
           "ns_per_op_p90=%.1f ns_per_op_max=%.1f cycles_per_op=%.1f\n",
           name, keys, n, reps, cyc[reps / 2] * to_ns * per, cyc[0] * to_ns * per,
           cyc[reps / 10] * to_ns * per, cyc[reps - 1 - reps / 10] * to_ns * per,
           cyc[reps - 1] * to_ns * per, cyc[reps / 2] * per);
}

// ---- malloc ----------------------------------------------------------------

static void *volatile sink;

static void bench_malloc_free(size_t size, uint64_t n)
{
    uint64_t cyc[MAX_REPS];
    char keys[64];
    for (uint64_t i = 0; i < 64; i++)           // warm: the core's span exists
        free(malloc(size));
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = cputicks();
        for (uint64_t i = 0; i < n; i++) {
            void *p = malloc(size);
            sink = p;
            free(p);
        }
        cyc[r] = cputicks() - c0;
    }
    snprintf(keys, sizeof keys, "size=%zu", size);
    report("malloc_free", keys, cyc, n);
}

#define BATCH 1000
static void *batch[BATCH];

static void bench_malloc_batch(size_t size)
{
    uint64_t cyc[MAX_REPS];
    char keys[64];
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = cputicks();
        for (int i = 0; i < BATCH; i++)
            batch[i] = malloc(size);
        for (int i = 0; i < BATCH; i++)
            free(batch[i]);
        cyc[r] = cputicks() - c0;
    }
    snprintf(keys, sizeof keys, "size=%zu", size);
    report("malloc_batch", keys, cyc, BATCH);
}

static void bench_pages(size_t npages, uint64_t n)
{
    uint64_t cyc[MAX_REPS];
    char keys[64];
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = cputicks();
        for (uint64_t i = 0; i < n; i++)
            page_free(page_alloc(npages), npages);
        cyc[r] = cputicks() - c0;
    }
    snprintf(keys, sizeof keys, "pages=%zu node=%d", npages, numa_node());
    report("page_alloc_free", keys, cyc, n);
}

// ---- memory latency ---------------------------------------------------------------

#define LINE 64

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

// A single random cycle through every cache line of buf, each line's
// word 0 holding the address of the next line: every load depends on the
// one before, and the prefetchers cannot guess the address. Word 1 holds
// the visiting order while it is built (Fisher-Yates).
static void chase_build(uint64_t *buf, uint64_t lines)
{
    const uint64_t w = LINE / 8;
    for (uint64_t i = 0; i < lines; i++)
        buf[i * w + 1] = i;
    for (uint64_t i = lines - 1; i > 0; i--) {
        uint64_t j = next_rand() % (i + 1);
        uint64_t t = buf[i * w + 1];
        buf[i * w + 1] = buf[j * w + 1];
        buf[j * w + 1] = t;
    }
    for (uint64_t i = 0; i < lines; i++) {
        uint64_t from = buf[i * w + 1], to = buf[((i + 1) % lines) * w + 1];
        buf[from * w] = (uint64_t)(uintptr_t)&buf[to * w];
    }
}

static uint64_t chase(const uint64_t *start, uint64_t steps)
{
    const uint64_t *p = start;
    for (uint64_t i = 0; i < steps; i++)
        p = (const uint64_t *)(uintptr_t)*p;
    return (uint64_t)(uintptr_t)p;
}

struct chase_job {
    int from_node;                  // where the chase should run
    const uint64_t *buf;
    uint64_t steps;
    uint32_t claimed;               // atomic: one probe runs the chase
    int ran_on_node;
    uint64_t cyc[MAX_REPS];
    uint64_t done;                  // release: the results above are written
};

// The chase, on the calling core: the caller has pinned it there
// (preempt_disable).
static void chase_pinned(struct chase_job *j)
{
    j->ran_on_node = numa_core_node((uint32_t)core_id());
    chase(j->buf, j->steps);                    // warm the TLB and caches as far as they go
    for (int r = 0; r < reps; r++) {
        uint64_t c0 = cputicks();
        sink = (void *)(uintptr_t)chase(j->buf, j->steps);
        j->cyc[r] = cputicks() - c0;
    }
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);   // pairs with the waiter's acquire
}

// One of many probes: the first to land on a core of from_node runs it.
static void chase_probe(void *arg)
{
    struct chase_job *j = arg;
    preempt_disable();
    if (numa_core_node((uint32_t)core_id()) == j->from_node &&
        !__atomic_exchange_n(&j->claimed, 1, __ATOMIC_ACQ_REL))
        chase_pinned(j);
    preempt_enable();
}

// Runs j on a core of its node: here if this core is one, else through
// probes that thieves take while this goroutine spins without yielding
// (goro has no placement call yet). Returns false when no probe got there.
static bool chase_on_node(struct chase_job *j)
{
    preempt_disable();
    if (numa_core_node((uint32_t)core_id()) == j->from_node) {
        chase_pinned(j);
        preempt_enable();
        return true;
    }
    preempt_enable();
    uint64_t end = nanotime() + 20000000000ull;
    while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE) && nanotime() < end) {
        if (!__atomic_load_n(&j->claimed, __ATOMIC_ACQUIRE))
            for (int i = 0; i < 2 * num_cpu(); i++)
                go(chase_probe, j);
        uint64_t spin = nanotime() + 2000000;
        while (nanotime() < spin && !__atomic_load_n(&j->claimed, __ATOMIC_ACQUIRE))
            procyield(1);
        gosched();
    }
    return __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
}

static bool node_has_cores(int node)
{
    for (int c = 0; c < num_cpu(); c++)
        if (numa_core_node((uint32_t)c) == node)
            return true;
    return false;
}

// For every node with memory: a buffer there, chased from a core of every
// node with cores.
static void bench_latency(void)
{
    static struct chase_job j;
    int nn = numa_nodes();
    for (int to = 0; to < nn; to++) {
        if (page_node_total(to) == 0)
            continue;
        uint64_t room = page_node_free(to) * PAGE_SIZE / 2;
        uint64_t b = chase_mb << 20;
        if (b > room)
            b = room & ~(uint64_t)(PAGE_SIZE - 1);
        uint64_t *buf = page_alloc_node(b / PAGE_SIZE, to);
        chase_build(buf, b / LINE);
        for (int from = 0; from < nn; from++) {
            if (!node_has_cores(from))
                continue;
            memset(&j, 0, sizeof j);
            j.from_node = from;
            j.buf = buf;
            j.steps = 1u << 20;
            if (!chase_on_node(&j)) {
                printf("NOTE mem_latency from node %d: no goroutine reached its cores\n", from);
                continue;
            }
            char keys[160];
            snprintf(keys, sizeof keys, "from_node=%d to_node=%d distance=%d mem_node=%d bytes=%lu",
                     j.ran_on_node, to, numa_distance(j.ran_on_node, to), numa_node_of(buf), b);
            report("mem_latency", keys, j.cyc, j.steps);
        }
        page_free(buf, b / PAGE_SIZE);
    }
}

static void config_line(void)
{
    char model[64];
    cpu_model(model, sizeof model);
    printf("CONFIG impl=goro cores=%d gomaxprocs=%d numa_nodes=%d accel=%s cpu=\"%s\" "
           "tsc_mhz=%lu reps=%d\n", num_cpu(), gomaxprocs(0), numa_nodes(), cpu_accel(), model,
           cputicks_hz() / 1000000, reps);
    if (strcmp(cpu_accel(), "native") != 0)
        printf("NOTE mem_latency under a hypervisor (%s): every guest node is the same host "
               "memory, so remote latency here equals local; run on multi-socket hardware for "
               "the real difference\n", cpu_accel());
}

static uint64_t parse_num(const char *s)
{
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    return v;
}

static int bench_mem_main(int argc, char **argv)
{
    static const size_t sizes[] = { 16, 64, 256, 1024, 4096, 16384, 32768, 65536 };
    reps = 21;                      // the defaults again: the shell may run this twice
    chase_mb = 64;
    filter = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "filter=", 7) == 0)
            filter = argv[i] + 7;
        else if (strncmp(argv[i], "reps=", 5) == 0)
            reps = (int)parse_num(argv[i] + 5);
        else if (strncmp(argv[i], "mb=", 3) == 0)
            chase_mb = parse_num(argv[i] + 3);
        else {
            printf("bench_mem: unknown argument \"%s\" (accepted: filter=SUBSTR reps=N mb=N)\n", argv[i]);
            return 2;
        }
    }
    if (reps < 3 || reps > MAX_REPS)
        reps = reps < 3 ? 3 : MAX_REPS;
    if (chase_mb == 0)
        chase_mb = 1;
    config_line();
    if (bench_wanted(filter, "malloc_free"))
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            bench_malloc_free(sizes[i], sizes[i] > 32768 ? 2000 : 20000);
    if (bench_wanted(filter, "malloc_batch"))
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            bench_malloc_batch(sizes[i]);
    if (bench_wanted(filter, "page_alloc_free")) {
        bench_pages(1, 2000);
        bench_pages(16, 200);
    }
    if (bench_wanted(filter, "mem_latency"))
        bench_latency();
    return 0;
}
GORO_APP(bench_mem, "memory benchmarks: malloc, pages, local/remote latency (filter= reps= mb=)",
         bench_mem_main);
