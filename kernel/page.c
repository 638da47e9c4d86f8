// SPDX-License-Identifier: MIT
// The kernel's page allocator: one page_pool (kernel/pagepool.c) per
// NUMA range (kernel/numa.h), grouped by node, one lock per node.
//
// A range becomes a pool covering the usable RAM inside it (a hot-plug
// range with nothing present gets none); the boot map's other ranges, low
// memory, the kernel image and the pools' bitmaps are reserved. The
// bitmaps live together in usable RAM just above the kernel image.
//
// page_alloc takes from the calling core's node; page_alloc_node from the
// node asked for, then from the others nearest first (numa.h's order);
// when every node is out, a fatal error prints each node's usage.
//
// Locks: each node's lock guards its pools and counters. A node lock is a
// leaf: nothing else is taken while one is held, and at most one is held.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/page.h"
#include "kernel/pagepool.h"
#include "arch/arch.h"
#include "boot/bootinfo.h"
#include "kernel/numa.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"

#define LOW_MEMORY_END 0x100000ull     // BIOS, real-mode IVT, the AP trampoline
#define LOW_4G (4ull << 30)
#define PAGE_MAX_POOLS NUMA_MAX_RANGES

struct page_node {
    struct spinlock lock;
    // lock held to write; read without it as a snapshot (relaxed atomics)
    uint64_t nfree;                     // sum of the pools' nfree
    uint64_t fallbacks_in;              // allocations other nodes sent here
    // written once by page_init, before any other core runs
    uint64_t total;                     // pages free after page_init
    uint32_t npools;
    uint16_t pools[PAGE_MAX_POOLS];     // indexes into pools[], by base
} __attribute__((aligned(64)));

static struct page_node nodes[NUMA_MAX_NODES] = {
    [0 ... NUMA_MAX_NODES - 1] = { .lock = SPINLOCK_INIT("page node", LOCK_RANK_PAGE) },
};
// Sorted by base and disjoint (as numa_ranges). Each pool is guarded by
// its node's lock; base, npages and pool_node are read-only after page_init.
static struct page_pool pools[PAGE_MAX_POOLS];
static uint8_t pool_node[PAGE_MAX_POOLS];
static uint32_t npools;
// written once by page_init
static uint64_t max_phys;

static uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) & ~(align - 1);
}

// The lowest page-aligned address at or above floor where bytes fit inside
// one usable range, clear of [kept, kept_end), or 0. Lowest, not first in
// map order: the loader's map need not be sorted, and low memory is mapped
// earliest.
static uint64_t find_bitmap_home(const struct boot_info *bi, uint64_t floor, uint64_t bytes,
                                 uint64_t kept, uint64_t kept_end)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        const struct boot_mmap_entry *e = &bi->mmap[i];
        if (!boot_mmap_usable(e))
            continue;
        uint64_t start = round_up(e->base > floor ? e->base : floor, PAGE_SIZE);
        uint64_t end = e->base + e->len;
        if (start < kept_end && kept < start + bytes)
            start = round_up(kept_end, PAGE_SIZE);     // past the kept range (it lies at a range's top)
        if (start < end && end - start >= bytes && (best == 0 || start < best))
            best = start;
    }
    return best;
}

// The whole pages of usable RAM inside [base, end), as the hull
// [*lo, *hi); false when there are none.
static bool usable_hull(const struct boot_info *bi, uint64_t base, uint64_t end,
                        uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        uint64_t a, b;
        if (!boot_mmap_clip(&bi->mmap[i], base, end, &a, &b))
            continue;
        a = round_up(a, PAGE_SIZE);
        b &= ~(PAGE_SIZE - 1);
        if (a < b) {
            *lo = a < *lo ? a : *lo;
            *hi = b > *hi ? b : *hi;
        }
    }
    return *lo < *hi;
}

// Usable ranges become free; anything the map also calls reserved (some
// firmware reports overlapping entries) stays reserved.
static void add_boot_ranges(struct page_pool *pp, const struct boot_info *bi)
{
    for (uint32_t i = 0; i < bi->mmap_count; i++)
        if (boot_mmap_usable(&bi->mmap[i]))
            page_pool_add_free(pp, bi->mmap[i].base, bi->mmap[i].len);
    for (uint32_t i = 0; i < bi->mmap_count; i++)
        if (bi->mmap[i].type != BOOT_MEM_USABLE)
            page_pool_reserve(pp, bi->mmap[i].base, bi->mmap[i].len);
}

// One pool per NUMA range with usable RAM: base and size only; returns
// the bitmap bytes they need together (each rounded to 8 bytes).
static size_t pools_plan(const struct boot_info *bi)
{
    uint32_t n;
    const struct numa_range *r = numa_ranges(&n);
    size_t bytes = 0;
    npools = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lo, hi;
        if (!usable_hull(bi, r[i].base, r[i].end, &lo, &hi))
            continue;
        ASSERT(npools < PAGE_MAX_POOLS);
        pools[npools].base = lo;
        pools[npools].npages = (hi - lo) / PAGE_SIZE;
        pool_node[npools] = (uint8_t)r[i].node;
        bytes += round_up(page_pool_bitmap_bytes(pools[npools].npages), 8);
        npools++;
    }
    return bytes;
}

// Called once on the boot core, after numa_init and before any other core
// runs. bi is a copy inside the kernel image (bootinfo.h), so reserving
// the image keeps it.
void page_init(const struct boot_info *bi, uint64_t image_start, uint64_t image_end, uint64_t kept,
               uint64_t kept_len)
{
    ASSERT(image_start <= image_end);
    max_phys = boot_usable_end(bi);
    if (max_phys == 0)
        panic("page_init: the boot memory map has no usable RAM");
    size_t bytes = pools_plan(bi);
    uint64_t floor = image_end > LOW_MEMORY_END ? image_end : LOW_MEMORY_END;
    uint64_t bitmap = find_bitmap_home(bi, floor, bytes, kept, kept + kept_len);
    if (bitmap == 0)
        panic("page_init: no usable range above 0x%llx holds the %zu-byte page bitmaps",
              (unsigned long long)floor, bytes);

    uint64_t at = bitmap;
    for (uint32_t i = 0; i < npools; i++) {
        struct page_pool *pp = &pools[i];
        page_pool_init(pp, pp->base, pp->npages, (uint64_t *)(uintptr_t)at);
        at += round_up(page_pool_bitmap_bytes(pp->npages), 8);
    }
    for (uint32_t i = 0; i < npools; i++) {
        struct page_pool *pp = &pools[i];
        struct page_node *nd = &nodes[pool_node[i]];
        add_boot_ranges(pp, bi);
        page_pool_reserve(pp, 0, LOW_MEMORY_END);
        page_pool_reserve(pp, image_start, image_end - image_start);
        if (kept_len)
            page_pool_reserve(pp, kept, kept_len);
        page_pool_reserve(pp, bitmap, bytes);
        nd->pools[nd->npools++] = (uint16_t)i;
        nd->nfree += pp->nfree;
        nd->total += pp->nfree;
    }
}

// ---- allocation ----------------------------------------------------------

// n contiguous pages from node k's pools, first fit, pool by pool; below
// limit when limit is not 0. Returns 0 when none fit.
static uint64_t node_take(int k, size_t n, uint64_t limit)
{
    struct page_node *nd = &nodes[k];
    uint64_t addr = 0;
    spin_lock(&nd->lock);
    for (uint32_t i = 0; i < nd->npools && !addr; i++) {
        struct page_pool *pp = &pools[nd->pools[i]];
        if (limit && pp->base >= limit)
            continue;
        addr = page_pool_alloc(pp, n);
        if (addr && limit && addr + n * PAGE_SIZE > limit) {
            // First fit: nothing lower fits in this pool.
            page_pool_free(pp, addr, n);
            addr = 0;
        }
    }
    if (addr)
        __atomic_store_n(&nd->nfree, nd->nfree - n, __ATOMIC_RELAXED);  // relaxed: a counter, read lock-free as a snapshot
    spin_unlock(&nd->lock);
    return addr;
}

__attribute__((noreturn))
static void out_of_memory(size_t n, int node)
{
    char line[512];
    size_t len = 0;
    for (int k = 0; k < numa_nodes() && len < sizeof line; k++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%snode %d: %llu of %llu pages free",
                                k ? ", " : "", k,
                                // relaxed: a counter, for the report
                                (unsigned long long)__atomic_load_n(&nodes[k].nfree, __ATOMIC_RELAXED),
                                (unsigned long long)nodes[k].total);
    panic("out of memory: %zu pages wanted on node %d; %s", n, node, line);
}

// Tries node first, then the others by distance from it.
static uint64_t take_near(size_t n, int node, uint64_t limit)
{
    const uint8_t *order = numa_nodes_by_distance(node);
    for (int i = 0; i < numa_nodes(); i++) {
        uint64_t addr = node_take(order[i], n, limit);
        if (addr) {
            if (i > 0)
                __atomic_fetch_add(&nodes[order[i]].fallbacks_in, 1, __ATOMIC_RELAXED);    // relaxed: a counter
            return addr;
        }
    }
    return 0;
}

static void *alloc_node(size_t npages, int node)
{
    ASSERT(npages > 0);
    ASSERT(node < numa_nodes());
    if (node < 0)
        node = numa_core_node(cpu_index());
    uint64_t addr = take_near(npages, node, 0);
    if (addr == 0)
        out_of_memory(npages, node);
    return (void *)(uintptr_t)addr;
}

void *page_alloc_node(size_t npages, int node)
{
    void *p = alloc_node(npages, node);
    memset(p, 0, npages * PAGE_SIZE);
    return p;
}

void *page_try_alloc_uncleared(size_t npages)
{
    ASSERT(npages > 0);
    return (void *)(uintptr_t)take_near(npages, numa_core_node(cpu_index()), 0);
}

void *page_try_alloc(size_t npages)
{
    void *p = page_try_alloc_uncleared(npages);
    if (p)
        memset(p, 0, npages * PAGE_SIZE);
    return p;
}

void *page_alloc_uncleared(size_t npages)
{
    return alloc_node(npages, numa_core_node(cpu_index()));
}

void *page_alloc(size_t npages)
{
    return page_alloc_node(npages, numa_core_node(cpu_index()));
}

void *page_alloc_low(size_t npages)
{
    ASSERT(npages > 0);
    int node = numa_core_node(cpu_index());
    uint64_t addr = take_near(npages, node, LOW_4G);
    if (addr == 0)
        panic("out of memory below 4 GiB: %zu pages wanted", npages);
    void *p = (void *)(uintptr_t)addr;
    memset(p, 0, npages * PAGE_SIZE);
    return p;
}

// The pool holding pa, or -1.
static int pool_of(uint64_t pa)
{
    uint32_t lo = 0, hi = npools;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (pa < pools[mid].base)
            hi = mid;
        else if (pa >= pools[mid].base + pools[mid].npages * PAGE_SIZE)
            lo = mid + 1;
        else
            return (int)mid;
    }
    return -1;
}

void page_free(void *p, size_t npages)
{
    uint64_t pa = (uint64_t)(uintptr_t)p;
    int i = pool_of(pa);
    bool ok = false;
    if (i >= 0) {
        struct page_node *nd = &nodes[pool_node[i]];
        spin_lock(&nd->lock);
        ok = page_pool_free(&pools[i], pa, npages);
        if (ok)
            __atomic_store_n(&nd->nfree, nd->nfree + npages, __ATOMIC_RELAXED);   // relaxed: a counter, as in node_take
        spin_unlock(&nd->lock);
    }
    if (!ok)
        panic("page_free: %p (%zu pages) is already free, or not from page_alloc", p, npages);
}

uint64_t page_node_take_all(int node)
{
    ASSERT(node >= 0 && node < numa_nodes());
    struct page_node *nd = &nodes[node];
    uint64_t taken = 0;
    spin_lock(&nd->lock);
    for (uint32_t i = 0; i < nd->npools; i++) {
        struct page_pool *pp = &pools[nd->pools[i]];
        // the longest runs first, halving when none that long is left
        uint64_t n = pp->nfree;
        while (n && pp->nfree) {
            n = n < pp->nfree ? n : pp->nfree;
            if (page_pool_alloc(pp, n))
                taken += n;
            else
                n /= 2;
        }
    }
    __atomic_store_n(&nd->nfree, nd->nfree - taken, __ATOMIC_RELAXED);    // relaxed: a counter, as in node_take
    spin_unlock(&nd->lock);
    return taken;
}

// ---- counters ----------------------------------------------------------------

uint64_t page_node_free(int node)
{
    if (node < 0 || node >= NUMA_MAX_NODES)
        return 0;
    return __atomic_load_n(&nodes[node].nfree, __ATOMIC_RELAXED);     // relaxed: a snapshot
}

uint64_t page_node_total(int node)
{
    return node >= 0 && node < NUMA_MAX_NODES ? nodes[node].total : 0;
}

uint64_t page_node_fallbacks(int node)
{
    if (node < 0 || node >= NUMA_MAX_NODES)
        return 0;
    return __atomic_load_n(&nodes[node].fallbacks_in, __ATOMIC_RELAXED);  // relaxed: a counter
}

uint64_t page_free_count(void)
{
    uint64_t n = 0;
    for (int k = 0; k < NUMA_MAX_NODES; k++)
        n += page_node_free(k);
    return n;
}

uint64_t page_total_count(void)
{
    uint64_t n = 0;
    for (int k = 0; k < NUMA_MAX_NODES; k++)
        n += nodes[k].total;
    return n;
}

uint64_t page_max_phys(void)
{
    return max_phys;
}

bool page_pool_stat(uint32_t i, struct page_pool_stat *out)
{
    if (i >= npools)
        return false;
    out->base = pools[i].base;
    out->npages = pools[i].npages;
    out->nfree = __atomic_load_n(&pools[i].nfree, __ATOMIC_RELAXED);   // written under the node lock
    out->node = pool_node[i];
    return true;
}
