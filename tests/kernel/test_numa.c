// SPDX-License-Identifier: MIT
// NUMA topology and per-node pages: whatever layout QEMU was given (see
// tests/matrix.py's numa configurations), the topology must be consistent,
// pages asked of a node must come from it while it has free memory, and an
// exhausted node must fall back to the nearest node that has memory.
#include "kernel/ktest.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/sched.h"

static bool node_has_memory(int n)
{
    return page_node_total(n) > 0;
}

// The first node in n's distance order with memory: where n's pages come
// from while nothing is exhausted.
static int nearest_with_memory(int n)
{
    const uint8_t *order = numa_nodes_by_distance(n);
    for (int i = 0; i < numa_nodes(); i++)
        if (node_has_memory(order[i]))
            return order[i];
    return -1;
}

KTEST(numa_cores_in_exactly_one_node)
{
    int nn = numa_nodes();
    static struct cpuset all;
    memset(&all, 0, sizeof all);
    KT_ASSERT(nn >= 1 && nn <= NUMA_MAX_NODES);
    for (int n = 0; n < nn; n++) {
        const struct cpuset *m = numa_node_cores(n);
        if (!cpuset_disjoint(&all, m))
            KT_FAIL("node %d shares cores with a lower node", n);
        cpuset_union(&all, m);
    }
    KT_ASSERT_EQ(cpuset_count(&all), (uint32_t)num_cpu());
    for (int c = 0; c < num_cpu(); c++)
        if (!cpuset_has(numa_node_cores(numa_core_node((uint32_t)c)), (uint32_t)c))
            KT_FAIL("core %d: numa_core_node says %d, whose set lacks it", c, numa_core_node((uint32_t)c));
}

KTEST(numa_ranges_disjoint_and_memory_somewhere)
{
    uint32_t n;
    const struct numa_range *r = numa_ranges(&n);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        KT_ASSERT(r[i].base < r[i].end);
        KT_ASSERT((int)r[i].node < numa_nodes());
        if (i > 0 && r[i - 1].end > r[i].base)
            KT_FAIL("range %u [0x%lx, 0x%lx) overlaps the one before, ending 0x%lx", i,
                    r[i].base, r[i].end, r[i - 1].end);
        KT_ASSERT_EQ(numa_node_of_phys(r[i].base), r[i].node);
        KT_ASSERT_EQ(numa_node_of_phys(r[i].end - 1), r[i].node);
    }
    for (int k = 0; k < numa_nodes(); k++)
        total += page_node_total(k);
    KT_ASSERT_EQ(total, page_total_count());
    KT_ASSERT(node_has_memory(nearest_with_memory(0)));
}

KTEST(numa_distances_sane)
{
    int nn = numa_nodes();
    for (int a = 0; a < nn; a++) {
        KT_ASSERT_EQ(numa_distance(a, a), 10);
        for (int b = 0; b < nn; b++) {
            if (numa_distance(a, b) != numa_distance(b, a))
                KT_FAIL("distance %d->%d is %d but %d->%d is %d", a, b, numa_distance(a, b), b, a,
                        numa_distance(b, a));
            if (a != b && numa_distance(a, b) <= 10)
                KT_FAIL("distance %d->%d is %d", a, b, numa_distance(a, b));
        }
        const uint8_t *o = numa_nodes_by_distance(a);
        uint32_t seen = 0;
        KT_ASSERT_EQ(o[0], a);
        for (int i = 0; i < nn; i++) {
            seen |= 1u << o[i];
            if (i > 0 && numa_distance(a, o[i - 1]) > numa_distance(a, o[i]))
                KT_FAIL("node %d's order puts %d (distance %d) before %d (distance %d)", a,
                        o[i - 1], numa_distance(a, o[i - 1]), o[i], numa_distance(a, o[i]));
        }
        KT_ASSERT_EQ(seen, (1u << nn) - 1);
    }
}

KTEST(numa_page_alloc_node_is_that_node)
{
    for (int n = 0; n < numa_nodes(); n++) {
        int want = nearest_with_memory(n);
        for (size_t npages = 1; npages <= 16; npages *= 4) {
            void *p = page_alloc_node(npages, n);
            int got = numa_node_of(p);
            page_free(p, npages);
            if (got != want)
                KT_FAIL("page_alloc_node(%zu, %d) gave %p on node %d, expected node %d", npages, n,
                        p, got, want);
        }
    }
    // Goroutine stacks are virtual addresses outside RAM's identity map.
    KT_ASSERT_EQ(numa_node_of((void *)ARCH_STACK_REGION), -1);
}

// ---- page_alloc from every core comes from that core's node -------------------

static uint64_t local_done, local_bad;

static void local_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 32; i++) {
        struct m *mp = acquirem();          // stay on this core while we look
        int node = numa_core_node(mp->id);
        void *p = page_alloc(1);
        releasem(mp);
        if (numa_node_of(p) != nearest_with_memory(node))
            __atomic_fetch_add(&local_bad, 1, __ATOMIC_RELAXED);
        page_free(p, 1);
        gosched();
    }
    __atomic_fetch_add(&local_done, 1, __ATOMIC_RELEASE);
}

KTEST(numa_page_alloc_is_local)
{
    enum { WORKERS = 32 };
    local_done = local_bad = 0;
    for (int i = 0; i < WORKERS; i++)
        go(local_worker, 0);
    kt_wait_count(&local_done, WORKERS, KT_STALL_MS);
    KT_ASSERT_EQ(__atomic_load_n(&local_done, __ATOMIC_ACQUIRE), WORKERS);
    KT_ASSERT_EQ(local_bad, 0);
}

// ---- exhaustion falls back to the nearest node ----------------------------------

#define CHUNK 64

// Takes chunks of node n (each linked to the last through its first word)
// until one comes from elsewhere; returns that one's node, the chain in *chain.
static int exhaust(int n, size_t npages, void **chain, uint64_t *count)
{
    for (;;) {
        void **p = page_alloc_node(npages, n);
        *p = *chain;
        *chain = p;
        ++*count;
        int got = numa_node_of(p);
        if (got != n)
            return got;
    }
}

static void release(void *chain, size_t npages)
{
    while (chain) {
        void *next = *(void **)chain;
        page_free(chain, npages);
        chain = next;
    }
}

// The smallest node with memory, other than node 0 (the kernel's): its
// exhaustion must send allocations to its nearest neighbour with memory.
KTEST(numa_exhausted_node_falls_back_to_nearest)
{
    int n = -1;
    for (int k = 1; k < numa_nodes(); k++)
        if (node_has_memory(k) && (n < 0 || page_node_total(k) < page_node_total(n)))
            n = k;
    if (n < 0)
        KT_SKIP("needs a node other than 0 with memory");
    const uint8_t *order = numa_nodes_by_distance(n);
    int want = -1;
    for (int i = 1; i < numa_nodes() && want < 0; i++)
        if (node_has_memory(order[i]))
            want = order[i];
    void *big = 0, *small = 0;
    uint64_t nbig = 0, nsmall = 0, fallbacks = page_node_fallbacks(want);
    int got_big = exhaust(n, CHUNK, &big, &nbig);
    int got_small = exhaust(n, 1, &small, &nsmall);    // the last scraps too
    uint64_t left = page_node_free(n);
    release(small, 1);
    release(big, CHUNK);
    if (got_big != want || got_small != want)
        KT_FAIL("node %d exhausted after %lu+%lu allocations: fell back to nodes %d and %d, "
                "expected %d", n, nbig, nsmall, got_big, got_small, want);
    KT_ASSERT(left <= 8);               // other cores may free a page meanwhile
    KT_ASSERT(page_node_fallbacks(want) >= fallbacks + 2);
    KT_ASSERT(nbig * CHUNK + nsmall >= page_node_total(n) / 2);
}

// ---- the NUMA steal order as the kernel wires it (the order itself is
// tested on the host: tests/host/test_steal_order.c) ------------------------

KTEST(steal_order_same_node_first)
{
    if (numa_nodes() < 2)
        KT_SKIP("one NUMA node");
    static struct steal_scratch s;     // 8 KiB: not on a goroutine's stack
    const uint32_t *victims = s.victims;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        for (uint64_t r = 1; r < 50; r++) {
            uint64_t rr = r * 0x9E3779B97F4A7C15ull;
            uint32_t n = steal_victims(allp[i], rr, true, &s);
            KT_ASSERT_EQ(n, sched.gomaxprocs - 1);
            int last_dist = 0;
            for (uint32_t k = 0; k < n; k++) {
                int d = numa_distance(allp[i]->node, allp[victims[k]]->node);
                if (d < last_dist)
                    KT_FAIL("P%u's steal order visits node %d (distance %d) after distance %d", i,
                            allp[victims[k]]->node, d, last_dist);
                last_dist = d;
                for (uint32_t j = 0; j < k; j++)
                    if (victims[j] == victims[k])
                        KT_FAIL("P%u's steal order visits P%u twice", i, victims[k]);
            }
        }
    }
}
