// SPDX-License-Identifier: MIT
// malloc, calloc, realloc, free (kernel/malloc.c): every size class, from
// many goroutines on every core at once, blocks never overlapping (each is
// filled with a pattern that is checked before it is freed), frees on
// other cores than the allocation, node placement, and the double-free
// fatal error as an app of its own.
#include "kernel/ktest.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "lib/string.h"

// Sizes that hit every class's edges and the large path.
static const size_t sizes[] = {
    0, 1, 8, 15, 16, 17, 31, 33, 48, 63, 64, 65, 100, 127, 128, 129, 200, 255, 256, 257,
    400, 511, 512, 513, 700, 1000, 1024, 1025, 1500, 2048, 2049, 3000, 4095, 4096, 4097,
    6000, 8192, 8193, 12000, 16384, 16385, 24000, 32767, 32768, 32769, 65536, 100000, 300000,
};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fill(uint8_t *p, size_t n, uint32_t tag)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(tag * 31 + i * 7);
}

// The offset of the first byte that differs from fill's pattern, or -1.
static long check(const uint8_t *p, size_t n, uint32_t tag)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(tag * 31 + i * 7))
            return (long)i;
    return -1;
}

KTEST(malloc_every_class_alignment_and_size)
{
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        uint8_t *p = malloc(n);
        KT_ASSERT(p);
        if ((uintptr_t)p % 16)
            KT_FAIL("malloc(%zu) = %p is not 16-byte aligned", n, p);
        if (n > 32768 && (uintptr_t)p % PAGE_SIZE)
            KT_FAIL("malloc(%zu) = %p is not page-aligned", n, p);
        if (malloc_usable_size(p) < n)
            KT_FAIL("malloc(%zu): usable size %zu", n, malloc_usable_size(p));
        fill(p, n, (uint32_t)i);
        KT_ASSERT_EQ(check(p, n, (uint32_t)i), -1);
        free(p);
    }
    free(0);
}

// ---- many goroutines on every core ------------------------------------------------

#define WORKERS 24
#define SLOTS 48
#define ROUNDS 40
static uint64_t stress_rounds;          // rounds finished by all workers: the progress
static uint64_t stress_done;
static uint64_t stress_bad;
static uint64_t stress_cores;           // bit per core that ran a worker

static void stress_worker(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    uint64_t seed = 0x9e3779b97f4a7c15ull * (id + 1);
    uint8_t *blk[SLOTS];
    size_t len[SLOTS];
    uint32_t tag[SLOTS];
    memset(blk, 0, sizeof blk);
    for (uint32_t r = 0; r < ROUNDS; r++) {
        __atomic_fetch_or(&stress_cores, 1ull << core_id(), __ATOMIC_RELAXED);
        for (uint32_t k = 0; k < SLOTS; k++) {
            uint32_t s = (uint32_t)(xorshift(&seed) % 100);
            if (blk[k]) {
                if (check(blk[k], len[k], tag[k]) >= 0)
                    __atomic_fetch_add(&stress_bad, 1, __ATOMIC_RELAXED);
                free(blk[k]);
                blk[k] = 0;
            }
            if (s < 60) {
                // Mostly small, some large; every class gets its turn over the rounds.
                len[k] = s < 57 ? sizes[xorshift(&seed) % (NSIZES - 3)] : sizes[NSIZES - 3 + s % 3];
                tag[k] = id << 16 | r << 8 | k;
                blk[k] = malloc(len[k]);
                fill(blk[k], len[k], tag[k]);
            }
        }
        kt_add(&stress_rounds, 1);
        gosched();
    }
    for (uint32_t k = 0; k < SLOTS; k++) {
        if (blk[k] && check(blk[k], len[k], tag[k]) >= 0)
            __atomic_fetch_add(&stress_bad, 1, __ATOMIC_RELAXED);
        free(blk[k]);
    }
    __atomic_fetch_add(&stress_done, 1, __ATOMIC_RELEASE);
}

KTEST(malloc_many_goroutines_no_overlap)
{
    stress_rounds = stress_done = stress_bad = stress_cores = 0;
    for (uint32_t i = 0; i < WORKERS; i++)
        go(stress_worker, (void *)(uintptr_t)i);
    // A stall is judged by rounds, not by workers done: the workers take
    // turns round by round, so on one vCPU none is done before nearly all
    // the work is, and a loaded host took 61 s to get there.
    kt_wait_count(&stress_rounds, WORKERS * ROUNDS, KT_STALL_MS);
    kt_wait_count(&stress_done, WORKERS, KT_STALL_MS);
    KT_ASSERT_EQ(__atomic_load_n(&stress_done, __ATOMIC_ACQUIRE), WORKERS);
    KT_ASSERT_EQ(stress_bad, 0);
}

// ---- free on another core --------------------------------------------------------

#define CROSS 2000
static void *cross_blk[CROSS];
static int cross_core[CROSS];
static uint64_t cross_freed, cross_remote;

static void cross_freer(void *arg)
{
    uint32_t part = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = part; i < CROSS; i += 8) {
        if (core_id() != cross_core[i])
            __atomic_fetch_add(&cross_remote, 1, __ATOMIC_RELAXED);
        if (check(cross_blk[i], 40, i) >= 0)
            panic("cross-core block %u overwritten", i);
        free(cross_blk[i]);
    }
    __atomic_fetch_add(&cross_freed, 1, __ATOMIC_RELEASE);
}

// The allocating goroutine spins (does not yield) while others free, so
// on more than one P the frees run on other cores. Then the blocks must
// come back to this core's cache (through its spans' remote lists).
KTEST(malloc_free_from_another_core)
{
    cross_freed = cross_remote = 0;
    for (uint32_t i = 0; i < CROSS; i++) {
        cross_blk[i] = malloc(40);
        cross_core[i] = core_id();
        fill(cross_blk[i], 40, i);
    }
    // Pinned while it spins: preempted, this G would let its own core run
    // the freers.
    preempt_disable();
    for (uint32_t k = 0; k < 8; k++)
        go(cross_freer, (void *)(uintptr_t)k);
    uint64_t end = nanotime() + (gomaxprocs(0) > 1 ? KT_STALL_NS : 0);
    while (__atomic_load_n(&cross_freed, __ATOMIC_ACQUIRE) < 8 && nanotime() < end)
        cpu_relax();
    preempt_enable();
    while (__atomic_load_n(&cross_freed, __ATOMIC_ACQUIRE) < 8 && nanotime() < end + KT_STALL_NS)
        gosched();
    KT_ASSERT_EQ(cross_freed, 8);
    if (gomaxprocs(0) > 1 && cross_remote == 0)
        KT_FAIL("no block was freed on another core than its malloc's");
    for (uint32_t i = 0; i < CROSS; i++) {
        cross_blk[i] = malloc(40);
        fill(cross_blk[i], 40, i);
    }
    for (uint32_t i = 0; i < CROSS; i++) {
        if (check(cross_blk[i], 40, i) >= 0)
            KT_FAIL("block %u at %p overlaps another", i, cross_blk[i]);
    }
    for (uint32_t i = 0; i < CROSS; i++)
        free(cross_blk[i]);
}

KTEST(malloc_realloc_preserves)
{
    size_t n = 1;
    uint8_t *p = malloc(n);
    fill(p, n, 7);
    for (size_t i = 0; i < NSIZES; i++) {
        size_t m = sizes[i] ? sizes[i] : 1;
        if (m < n)
            continue;
        p = realloc(p, m);
        if (check(p, n, 7) >= 0)
            KT_FAIL("realloc from %zu to %zu bytes lost byte %ld", n, m, check(p, n, 7));
        fill(p, m, 7);
        n = m;
    }
    while (n > 1) {                         // and shrinking back keeps the head
        n /= 3;
        p = realloc(p, n ? n : 1);
        n = n ? n : 1;
        if (check(p, n, 7) >= 0)
            KT_FAIL("realloc down to %zu bytes lost byte %ld", n, check(p, n, 7));
    }
    KT_ASSERT(realloc(p, 0) == 0);          // frees
    p = realloc(0, 100);                    // acts as malloc
    KT_ASSERT(p && malloc_usable_size(p) >= 100);
    free(p);
}

KTEST(malloc_calloc_zeroes)
{
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        uint8_t *dirty = malloc(n);
        memset(dirty, 0xa5, n);
        free(dirty);                        // the next block of this class is likely this one
        uint8_t *p = calloc(1, n);
        for (size_t k = 0; k < n; k++)
            if (p[k])
                KT_FAIL("calloc(1, %zu): byte %zu is 0x%x", n, k, p[k]);
        free(p);
    }
    uint32_t *a = calloc(1000, sizeof *a);
    for (int k = 0; k < 1000; k++)
        KT_ASSERT_EQ(a[k], 0);
    free(a);
}

// Blocks asked of a node come from it (or from its nearest node with
// memory, for a node without any), small and large.
KTEST(malloc_node_places_on_node)
{
    static const size_t sz[] = { 24, 3000, 32768, 100000 };
    for (int n = 0; n < numa_nodes(); n++) {
        const uint8_t *order = numa_nodes_by_distance(n);
        int want = -1;
        for (int i = 0; i < numa_nodes() && want < 0; i++)
            if (page_node_total(order[i]) > 0)
                want = order[i];
        for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
            void *p = malloc_node(sz[i], n);
            int got = numa_node_of(p);
            fill(p, sz[i], 3);
            free(p);
            if (got != want)
                KT_FAIL("malloc_node(%zu, %d) = %p on node %d, expected %d", sz[i], n, p, got, want);
        }
    }
}

// malloc on a core gives that core's node's memory (large blocks: fresh
// pages; small: the core's cache, filled from its node).
static uint64_t place_done, place_bad;

static void place_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 16; i++) {
        struct m *mp = acquirem();
        int node = numa_core_node(mp->id);
        void *small = malloc(200), *large = malloc(50000);
        releasem(mp);
        const uint8_t *order = numa_nodes_by_distance(node);
        int want = -1;
        for (int k = 0; k < numa_nodes() && want < 0; k++)
            if (page_node_total(order[k]) > 0)
                want = order[k];
        if (numa_node_of(small) != want || numa_node_of(large) != want)
            __atomic_fetch_add(&place_bad, 1, __ATOMIC_RELAXED);
        free(small);
        free(large);
        gosched();
    }
    __atomic_fetch_add(&place_done, 1, __ATOMIC_RELEASE);
}

KTEST(malloc_is_node_local)
{
    enum { N = 16 };
    place_done = place_bad = 0;
    for (int i = 0; i < N; i++)
        go(place_worker, 0);
    kt_wait_count(&place_done, N, KT_STALL_MS);
    KT_ASSERT_EQ(place_done, N);
    KT_ASSERT_EQ(place_bad, 0);
}

// ---- fatal errors, as apps (tests/matrix.py expects exit 255 and the message) ----

static int double_free_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    void *p = malloc(100);
    free(p);
    free(p);
    return 0;
}
GORO_APP(malloc_double_free, "free a block twice (expect the fatal error, exit 255)", double_free_main);

// A block freed on another core than the one caching its span, then again
// on that core: the first free leaves it on the span's remote list with
// its allocated bit set, so the second must see the remote bit.
static void *remote_blk;
static int remote_core = -1;
static uint32_t remote_claimed;

static void remote_freer(void *arg)
{
    (void)arg;
    // relaxed: picks the one freer; the release below publishes the free
    if (__atomic_exchange_n(&remote_claimed, 1, __ATOMIC_RELAXED))
        return;
    free(remote_blk);
    __atomic_store_n(&remote_core, core_id(), __ATOMIC_RELEASE);   // release: after the free; pairs with main's acquire
}

static int double_free_remote_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    // Pinned: this core keeps caching the block's span, and the freer runs
    // on another.
    preempt_disable();
    remote_blk = malloc(100);
    go(remote_freer, 0);            // two: the one left in this P's runnext is not stolen at once
    go(remote_freer, 0);
    while (__atomic_load_n(&remote_core, __ATOMIC_ACQUIRE) < 0)   // acquire: pairs with the freer's release
        cpu_relax();
    printf("malloc_double_free_remote: freed on %s core\n", remote_core == core_id() ? "the same" : "another");
    free(remote_blk);
    preempt_enable();
    return 0;
}
GORO_APP(malloc_double_free_remote, "free a block on another core, then on its own (expect the fatal error, "
         "exit 255)", double_free_remote_main);
