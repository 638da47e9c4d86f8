// SPDX-License-Identifier: MIT
// malloc, after Go's allocator (src/runtime/malloc.go, mcache.go,
// mcentral.go, mheap.go), without the collector: frees are explicit.
//
//   mcache    one per core: for each size class, the span it allocates
//             from. Allocation pops the span's free list with interrupts
//             off on this core, no lock and no atomic on the list.
//   mcentral  one per (node, size class), under a lock: the spans of that
//             class that have free blocks and no core caching them.
//   mheap     the node's pages (kernel/page.c): spans are runs of pages,
//             blocks above MALLOC_SMALL_MAX are a span of their own.
//   spanmap   page -> span, a two-level table over physical addresses
//             (the heapArena.spans of Go): free() finds a block's span,
//             hence its class and node, from the address alone.
//
// A span's free list has exactly one owner at a time, which alone touches
// freelist, nfree and the allocated bits (allocbits):
//   SPAN_CACHED   the core whose mcache holds it (cached_by), with its
//                 interrupts off;
//   SPAN_PARTIAL  on its mcentral's partial list: that mcentral's lock;
//   SPAN_FULL     no free block, on no list: that mcentral's lock.
// A block freed on another core than the caching one goes to the span's
// remote list under the mcentral lock, its bit left set and its remote
// bit set; the caching core takes the remote list back when its free list
// runs dry (refill), under the same lock, and clears both bits then.
// Invariants:
//  - only core C sets cached_by to C or changes it away from C, so a core
//    that reads cached_by == itself with interrupts off owns the free list
//    for as long as its interrupts stay off;
//  - remote is empty unless the span is SPAN_CACHED (uncaching merges it);
//  - an allocated block's bit in allocbits is 1, a free block's 0; a
//    block on the remote list keeps its 1 and has its bit in remotebits
//    set until the owner takes it back. Only the owner writes allocbits
//    and only remote frees (mcentral lock held) and the owner's take-back
//    write remotebits, so a malloc and a free that own the span make no
//    atomic read-modify-write (Go's allocation makes none either): loads
//    and stores, relaxed, as the other side reads the words meanwhile.
//    A free is a double free when its block's bit is 0 or its remote
//    bit 1; a large block has no owner: its one bit is cleared by an
//    atomic, so of two frees exactly one sees it set.
//
// Lock order: an mcentral lock is taken alone (span_new and span_release
// run outside it); span_lock and spanmap_lock may each take a page node
// lock (page.c's locks are leaves).
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "goro.h"
#include "arch/arch.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "lib/panic.h"
#include "lib/string.h"
#include "kernel/malloc.h"
#include "kernel/sizeclass.h"

#define MALLOC_SMALL_MAX SIZECLASS_MAX
#define MALLOC_ALIGN 16u
#define SPAN_MAX_ELEMS 256u             // 4096 / 16: the smallest class in one page

enum span_state { SPAN_CACHED = 1, SPAN_PARTIAL, SPAN_FULL, SPAN_LARGE };

struct span {
    // read-only while the span lives
    uint64_t base;
    uint32_t npages;
    uint16_t nelems;
    uint8_t cls;                    // 0: one large block
    uint8_t node;                   // whose mcentral (and whose pages, unless they fell back)
    // the owner (see the top of the file)
    void *freelist;
    uint32_t nfree;
    // mcentral lock held to write; cached_by also read racily (atomic)
    uint32_t state;                 // enum span_state
    int32_t cached_by;              // core index, -1 when not cached
    void *remote;                   // blocks freed by other cores while cached
    uint32_t nremote;
    struct span *next, *prev;       // the partial list
    // 1 bit per block, 1 = allocated: the owner writes, remote frees read
    uint64_t allocbits[SPAN_MAX_ELEMS / 64];
    // 1 bit per block, 1 = on the remote list: mcentral lock held to write,
    // the owner reads
    uint64_t remotebits[SPAN_MAX_ELEMS / 64];
};

struct mcentral {
    struct spinlock lock;
    // lock held
    struct span *partial;           // SPAN_PARTIAL spans, doubly linked
    uint32_t npartial;
    uint32_t nempty;                // partial spans with every block free
} __attribute__((aligned(64)));

struct mcache {
    // owner core only, interrupts off
    struct span *alloc[NCLASS];
    // counters (Go's mcache keeps the same): written by the owner with
    // interrupts off, read by malloc_stats from any core without a lock
    uint64_t nmalloc[NCLASS];       // blocks handed out on this core (class 0: large)
    uint64_t nfree[NCLASS];         // blocks freed on this core
    uint64_t large_alloc_bytes, large_free_bytes;
} __attribute__((aligned(64)));

// The boot core's until malloc_init_cores gives each core one (copying
// the boot core's in as the first): a MAX_CPUS array in the image would be
// 1 MiB. Set by the boot core before any other core runs malloc.
static struct mcache boot_mcache;
static struct mcache *mcache = &boot_mcache;
static uint32_t nmcache = 1;
static struct mcentral central[NUMA_MAX_NODES][NCLASS] = {
    [0 ... NUMA_MAX_NODES - 1] = { [0 ... NCLASS - 1] = { .lock = SPINLOCK_INIT("mcentral", LOCK_RANK_MCENTRAL) } },
};

// ---- size classes ---------------------------------------------------------
// The classes and size_class(): kernel/sizeclass.h.

// Pages per span of a class: room for at least 8 blocks, so a span is
// refilled every 8 allocations at worst.
static uint32_t class_pages(uint32_t cls)
{
    return (uint32_t)((8u * class_size[cls] + PAGE_SIZE - 1) / PAGE_SIZE);
}

// Empty spans an mcentral keeps rather than return to the pages: about
// 256 KiB a class, at least one span, so a burst of frees followed by
// mallocs of the same class does not churn (and re-zero) pages.
static uint32_t keep_empty(uint32_t cls)
{
    uint32_t n = 64 / class_pages(cls);
    return n ? n : 1;
}

// ---- spanmap: physical page -> span ------------------------------------------

#define SPANMAP_LEAF_SHIFT 30                       // one leaf per GiB
#define SPANMAP_LEAF_ENTRIES (1u << (SPANMAP_LEAF_SHIFT - 12))
#define SPANMAP_TOP 4096                            // 4 TiB of physical memory
#define SPANMAP_LEAF_PAGES (SPANMAP_LEAF_ENTRIES * sizeof(struct span *) / PAGE_SIZE)

// Leaves are set once (release) under spanmap_lock and never freed;
// entries are written by the span's creator before the span is reachable
// and cleared by its releaser, both with release stores; readers acquire.
static struct span **spanmap[SPANMAP_TOP];
static struct spinlock spanmap_lock = SPINLOCK_INIT("spanmap", LOCK_RANK_SPAN);

static struct span **spanmap_slot(uint64_t pa, bool create)
{
    uint64_t top = pa >> SPANMAP_LEAF_SHIFT;
    if (top >= SPANMAP_TOP) {
        if (create)
            panic("malloc: memory at 0x%llx is above the span map's 4 TiB", (unsigned long long)pa);
        return 0;
    }
    struct span **leaf = __atomic_load_n(&spanmap[top], __ATOMIC_ACQUIRE);   // pairs with the release below
    if (!leaf && create) {
        spin_lock(&spanmap_lock);
        leaf = spanmap[top];
        if (!leaf) {
            leaf = page_alloc_node(SPANMAP_LEAF_PAGES, numa_node_of_phys(pa) >= 0 ?
                                   numa_node_of_phys(pa) : -1);
            __atomic_store_n(&spanmap[top], leaf, __ATOMIC_RELEASE);   // release: the zeroed leaf, to the acquire above
        }
        spin_unlock(&spanmap_lock);
    }
    return leaf ? &leaf[(pa >> 12) & (SPANMAP_LEAF_ENTRIES - 1)] : 0;
}

static void spanmap_set(struct span *s, uint32_t npages, struct span *v)
{
    for (uint32_t i = 0; i < npages; i++)
        __atomic_store_n(spanmap_slot(s->base + i * PAGE_SIZE, true), v, __ATOMIC_RELEASE);   // release: s's fields, to span_of's acquire
}

static struct span *span_of(const void *p)
{
    struct span **slot = spanmap_slot((uint64_t)(uintptr_t)p, false);
    return slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : 0;     // acquire: pairs with spanmap_set's release
}

// ---- span records -----------------------------------------------------------

static struct spinlock span_lock = SPINLOCK_INIT("span records", LOCK_RANK_SPAN);
static struct span *span_records;           // span_lock held: free records, linked by next

static struct span *span_record_get(void)
{
    spin_lock(&span_lock);
    if (!span_records) {
        struct span *page = page_alloc(1);
        for (size_t i = 0; i < PAGE_SIZE / sizeof *page; i++) {
            page[i].next = span_records;
            span_records = &page[i];
        }
    }
    struct span *s = span_records;
    span_records = s->next;
    spin_unlock(&span_lock);
    memset(s, 0, sizeof *s);
    return s;
}

static void span_record_put(struct span *s)
{
    spin_lock(&span_lock);
    s->next = span_records;
    span_records = s;
    spin_unlock(&span_lock);
}

// A span of class cls for node's mcentral, its blocks on its free list in
// address order. The caller sets its state before publishing it (the span
// map entries are set last).
static struct span *span_new(int node, uint32_t cls, uint32_t state, int32_t cached_by)
{
    uint32_t npages = class_pages(cls), size = class_size[cls];
    struct span *s = span_record_get();
    s->base = (uint64_t)(uintptr_t)page_alloc_node(npages, node);
    s->npages = npages;
    s->cls = (uint8_t)cls;
    s->node = (uint8_t)node;
    s->nelems = (uint16_t)(npages * PAGE_SIZE / size);
    s->state = state;
    s->cached_by = cached_by;
    void **link = &s->freelist;
    for (uint32_t i = 0; i < s->nelems; i++) {
        void *b = (void *)(uintptr_t)(s->base + (uint64_t)i * size);
        *link = b;
        link = (void **)b;
    }
    *link = 0;
    s->nfree = s->nelems;
    spanmap_set(s, npages, s);
    return s;
}

static void span_release(struct span *s)
{
    spanmap_set(s, s->cls ? s->npages : 1, 0);
    page_free((void *)(uintptr_t)s->base, s->npages);
    span_record_put(s);
}

// ---- the allocated and remote bits -----------------------------------

static uint32_t block_index(const struct span *s, const void *p)
{
    return (uint32_t)(((uint64_t)(uintptr_t)p - s->base) / class_size[s->cls]);
}

// Block i's bit in allocbits set (alloc) or cleared; false if it was
// already so. The span's owner only (see the top): a remote free reads the
// word meanwhile, so a relaxed load and store, no read-modify-write.
static bool owner_flip(struct span *s, uint32_t i, bool alloc)
{
    uint64_t bit = 1ull << (i % 64);
    uint64_t *w = &s->allocbits[i / 64];
    uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);    // relaxed: only this owner writes the word
    if (!(old & bit) == !alloc)
        return false;
    __atomic_store_n(w, old ^ bit, __ATOMIC_RELAXED);       // relaxed: a check, not a publication (see the top)
    return true;
}

// The block's bit in remotebits: 1 while it waits on the remote list.
static bool remote_bit(const struct span *s, uint32_t i)
{
    // relaxed: written under the mcentral lock, read by the owner without
    // it; a free racing another free of the same block may miss it
    return __atomic_load_n(&s->remotebits[i / 64], __ATOMIC_RELAXED) >> (i % 64) & 1;
}

// Sets (mcentral lock held, a remote free) or clears (lock held, the
// owner taking the block back) the block's remote bit.
static void remote_bit_set(struct span *s, uint32_t i, bool on)
{
    uint64_t bit = 1ull << (i % 64);
    uint64_t old = __atomic_load_n(&s->remotebits[i / 64], __ATOMIC_RELAXED);   // relaxed: writers hold the lock
    __atomic_store_n(&s->remotebits[i / 64], on ? old | bit : old & ~bit, __ATOMIC_RELAXED);  // relaxed: read as a check only
}

static void mark_allocated(struct span *s, void *b)
{
    if (!owner_flip(s, block_index(s, b), true))
        panic("malloc: block %p of %u bytes handed out twice: a free list was overwritten "
              "(use after free?)", b, class_size[s->cls]);
}

static void double_free(struct span *s, const void *p)
{
    panic("free(%p): double free of a block of %u bytes", p,
          s->cls ? class_size[s->cls] : s->npages * (uint32_t)PAGE_SIZE);
}

// ---- the partial list (mcentral lock held) --------------------------------------

static void partial_push(struct mcentral *c, struct span *s)
{
    s->state = SPAN_PARTIAL;
    s->prev = 0;
    s->next = c->partial;
    if (c->partial)
        c->partial->prev = s;
    c->partial = s;
    c->npartial++;
}

static void partial_remove(struct mcentral *c, struct span *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->partial = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = 0;
    c->npartial--;
}

// Moves the remote list onto the free list, clearing the blocks' bits (a
// block there twice was freed twice). mcentral lock held, by the span's
// caching core.
static void span_take_remote(struct span *s)
{
    while (s->remote) {
        void *b = s->remote;
        uint32_t i = block_index(s, b);
        remote_bit_set(s, i, false);
        if (!owner_flip(s, i, false))
            double_free(s, b);
        s->remote = *(void **)b;
        *(void **)b = s->freelist;
        s->freelist = b;
    }
    s->nfree += s->nremote;
    s->nremote = 0;
}

// Counts an allocation or a free on this core (class 0: large, bytes given).
static void count(bool is_free, uint32_t cls, uint64_t bytes)
{
    uint64_t flags = irq_save();
    struct mcache *mc = &mcache[cpu_index()];
    if (is_free) {
        mc->nfree[cls]++;
        mc->large_free_bytes += bytes;
    } else {
        mc->nmalloc[cls]++;
        mc->large_alloc_bytes += bytes;
    }
    irq_restore(flags);
}

// ---- allocation --------------------------------------------------------------

static void *span_pop(struct span *s)
{
    void *b = s->freelist;
    s->freelist = *(void **)b;
    s->nfree--;
    mark_allocated(s, b);
    return b;
}

// The core's span for cls with a free block. Interrupts off, on core.
// Takes back its span's remote frees, else parks the full span and takes a
// partial one from the node's mcentral, else makes a new span.
static struct span *mcache_refill(struct mcache *mc, uint32_t cls, uint32_t core)
{
    int node = numa_core_node(core);
    struct mcentral *c = &central[node][cls];
    struct span *s = mc->alloc[cls];

    spin_lock(&c->lock);
    if (s) {
        span_take_remote(s);
        if (s->nfree) {
            spin_unlock(&c->lock);
            return s;
        }
        s->state = SPAN_FULL;
        __atomic_store_n(&s->cached_by, -1, __ATOMIC_RELAXED);     // relaxed: only this core compares it with itself
        mc->alloc[cls] = 0;
    }
    s = c->partial;
    if (s) {
        partial_remove(c, s);
        if (s->nfree == s->nelems)
            c->nempty--;
        s->state = SPAN_CACHED;
        __atomic_store_n(&s->cached_by, (int32_t)core, __ATOMIC_RELAXED);  // relaxed: only this core compares it with itself
    }
    spin_unlock(&c->lock);
    if (!s)
        s = span_new(node, cls, SPAN_CACHED, (int32_t)core);
    mc->alloc[cls] = s;
    return s;
}

// A block of class cls from the calling core's mcache, when its node is
// node (< 0: any); false when it is not (the caller goes to node's
// mcentral). The check and the allocation happen with interrupts off, on
// one core, so the block is node's even if the goroutine moves right after.
static bool malloc_small(uint32_t cls, int node, void **out)
{
    uint64_t flags = irq_save();
    uint32_t core = cpu_index();
    if (node >= 0 && numa_core_node(core) != node) {
        irq_restore(flags);
        return false;
    }
    struct mcache *mc = &mcache[core];
    struct span *s = mc->alloc[cls];
    if (!s || !s->freelist)
        s = mcache_refill(mc, cls, core);
    *out = span_pop(s);
    mc->nmalloc[cls]++;
    irq_restore(flags);
    return true;
}

// A block from node's mcentral directly, for malloc_node on another node.
static void *malloc_small_central(uint32_t cls, int node)
{
    struct mcentral *c = &central[node][cls];
    spin_lock(&c->lock);
    while (!c->partial) {
        spin_unlock(&c->lock);
        struct span *s = span_new(node, cls, SPAN_PARTIAL, -1);
        spin_lock(&c->lock);
        partial_push(c, s);
        c->nempty++;
    }
    struct span *s = c->partial;
    if (s->nfree == s->nelems)
        c->nempty--;
    void *b = span_pop(s);
    if (s->nfree == 0) {
        partial_remove(c, s);
        s->state = SPAN_FULL;
    }
    spin_unlock(&c->lock);
    count(false, cls, 0);
    return b;
}

static void *malloc_large(size_t size, int node)
{
    if (size > (uint64_t)UINT32_MAX * PAGE_SIZE)
        panic("malloc: %zu bytes is more than any machine has", size);
    uint32_t npages = (uint32_t)((size + PAGE_SIZE - 1) / PAGE_SIZE);
    struct span *s = span_record_get();
    s->base = (uint64_t)(uintptr_t)page_alloc_node(npages, node);
    s->npages = npages;
    s->nelems = 1;
    s->node = (uint8_t)(node < 0 ? numa_core_node(cpu_index()) : node);
    s->state = SPAN_LARGE;
    s->cached_by = -1;
    s->allocbits[0] = 1;
    spanmap_set(s, 1, s);
    count(false, 0, (uint64_t)npages * PAGE_SIZE);
    return (void *)(uintptr_t)s->base;
}

void *malloc(size_t size)
{
    void *b;
    if (size > MALLOC_SMALL_MAX)
        return malloc_large(size, -1);
    malloc_small(size_class(size), -1, &b);
    return b;
}

void *malloc_node(size_t size, int node)
{
    void *b;
    if (node < 0 || node >= numa_nodes())
        panic("malloc_node: node %d, outside 0..%d", node, numa_nodes() - 1);
    if (size > MALLOC_SMALL_MAX)
        return malloc_large(size, node);
    if (malloc_small(size_class(size), node, &b))
        return b;
    return malloc_small_central(size_class(size), node);
}

void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes))
        panic("calloc: %zu blocks of %zu bytes overflow", n, size);
    void *p = malloc(bytes);
    memset(p, 0, bytes);
    return p;
}

// ---- free --------------------------------------------------------------------

static struct span *span_checked(void *p, const char *who)
{
    struct span *s = span_of(p);
    if (!s)
        panic("%s(%p): not a block from malloc, or freed already", who, p);
    uint64_t off = (uint64_t)(uintptr_t)p - s->base;
    if (s->cls ? off % class_size[s->cls] != 0 : off != 0)
        panic("%s(%p): points inside a block of %u bytes, not at its start", who, p,
              s->cls ? class_size[s->cls] : s->npages * (uint32_t)PAGE_SIZE);
    return s;
}

// A block whose span this core does not cache: to the span under its
// mcentral's lock. An empty span goes back to the pages once its mcentral
// keeps enough empty ones.
static void free_central(struct span *s, void *p)
{
    struct mcentral *c = &central[s->node][s->cls];
    bool release = false;
    spin_lock(&c->lock);
    if (s->state == SPAN_CACHED) {
        // Another core owns allocbits: this free only reads its bit.
        uint32_t i = block_index(s, p);
        // relaxed: the bit's 1 was stored before the block reached this caller
        uint64_t bits = __atomic_load_n(&s->allocbits[i / 64], __ATOMIC_RELAXED);
        if (!(bits >> (i % 64) & 1) || remote_bit(s, i))
            double_free(s, p);
        remote_bit_set(s, i, true);
        *(void **)p = s->remote;
        s->remote = p;
        s->nremote++;
    } else {
        if (!owner_flip(s, block_index(s, p), false))
            double_free(s, p);
        *(void **)p = s->freelist;
        s->freelist = p;
        s->nfree++;
        if (s->state == SPAN_FULL)
            partial_push(c, s);
        if (s->nfree == s->nelems) {
            if (c->nempty < keep_empty(s->cls)) {
                c->nempty++;
            } else {
                partial_remove(c, s);
                release = true;
            }
        }
    }
    spin_unlock(&c->lock);
    if (release)
        span_release(s);
}

void free(void *p)
{
    if (!p)
        return;
    struct span *s = span_checked(p, "free");
    if (s->cls == 0) {
        // relaxed: a check, not a publication; of two frees of the block
        // exactly one finds the bit set
        if (!(__atomic_fetch_and(&s->allocbits[0], ~1ull, __ATOMIC_RELAXED) & 1))
            double_free(s, p);
        count(true, 0, (uint64_t)s->npages * PAGE_SIZE);
        span_release(s);
        return;
    }
    uint64_t flags = irq_save();
    mcache[cpu_index()].nfree[s->cls]++;
    // Relaxed: only this core sets cached_by to itself or away from itself
    // (see the top), so the answer "this core" cannot be stale.
    if (__atomic_load_n(&s->cached_by, __ATOMIC_RELAXED) == (int32_t)cpu_index()) {
        uint32_t i = block_index(s, p);
        if (remote_bit(s, i) || !owner_flip(s, i, false))
            double_free(s, p);
        *(void **)p = s->freelist;
        s->freelist = p;
        s->nfree++;
        irq_restore(flags);
        return;
    }
    irq_restore(flags);
    free_central(s, p);
}

size_t malloc_usable_size(void *p)
{
    struct span *s = span_checked(p, "malloc_usable_size");
    return s->cls ? class_size[s->cls] : (size_t)s->npages * PAGE_SIZE;
}

void *realloc(void *p, size_t size)
{
    if (!p)
        return malloc(size);
    if (size == 0) {
        free(p);
        return 0;
    }
    struct span *s = span_checked(p, "realloc");
    size_t have = s->cls ? class_size[s->cls] : (size_t)s->npages * PAGE_SIZE;
    // Same class, or a large block of the same page count: keep it.
    if (s->cls ? size <= MALLOC_SMALL_MAX && size_class(size) == s->cls
               : size > MALLOC_SMALL_MAX && (size + PAGE_SIZE - 1) / PAGE_SIZE == s->npages)
        return p;
    void *q = malloc(size);
    memcpy(q, p, have < size ? have : size);
    free(p);
    return q;
}

void malloc_init_cores(uint32_t ncpu)
{
    ASSERT(mcache == &boot_mcache && ncpu >= 1 && cpu_index() == 0);
    size_t bytes = ncpu * sizeof(struct mcache);
    struct mcache *all = page_alloc((bytes + PAGE_SIZE - 1) / PAGE_SIZE);
    all[0] = boot_mcache;
    mcache = all;
    nmcache = ncpu;
}

// ---- counters ------------------------------------------------------------------

_Static_assert(NCLASS <= MALLOC_STATS_CLASSES, "malloc_stats has a slot per class");

void malloc_stats(struct malloc_stats *st)
{
    memset(st, 0, sizeof *st);
    st->nclass = NCLASS;
    uint64_t large_in = 0, large_out = 0;
    for (uint32_t core = 0; core < nmcache; core++) {
        const struct mcache *mc = &mcache[core];
        for (uint32_t c = 0; c < NCLASS; c++) {
            // relaxed: counts the owner core writes; a snapshot
            st->cls[c].mallocs += __atomic_load_n(&mc->nmalloc[c], __ATOMIC_RELAXED);  // relaxed: as above
            st->cls[c].frees += __atomic_load_n(&mc->nfree[c], __ATOMIC_RELAXED);      // relaxed: as above
        }
        large_in += __atomic_load_n(&mc->large_alloc_bytes, __ATOMIC_RELAXED);    // relaxed: a snapshot
        large_out += __atomic_load_n(&mc->large_free_bytes, __ATOMIC_RELAXED);    // relaxed: a snapshot
    }
    st->large_bytes = large_in > large_out ? large_in - large_out : 0;
    for (uint32_t c = 0; c < NCLASS; c++) {
        struct malloc_class_stats *k = &st->cls[c];
        k->size = class_size[c];
        uint64_t live = k->mallocs > k->frees ? k->mallocs - k->frees : 0;
        st->blocks_in_use += live;
        st->bytes_in_use += c ? live * k->size : 0;
    }
    st->bytes_in_use += st->large_bytes;
}
