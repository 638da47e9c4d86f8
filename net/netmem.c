// SPDX-License-Identifier: MIT
// lwIP's memory: size classes over whole pages, under a budget.
//
// lwIP allocates everything through mem_malloc (lwipopts.h: its pools
// too), so this is every byte the stack holds: connections, segments,
// received and unsent data. Three things decide its shape:
//  - lwIP allocates only under the stack lock (net/stack.c), in any of
//    the contexts that take it (a goroutine, g0, sysmon's interrupt), so
//    this needs no lock of its own and must not park or call malloc
//    (whose per-P caches want a P, and which never fails);
//  - a network stack must survive a peer that sends more than it can
//    hold: past the budget an allocation fails and lwIP drops the packet
//    or refuses the connection, where running out of kernel memory would
//    be fatal;
//  - the steady state allocates and frees the same sizes over and over
//    (a segment, a pool-sized buffer per frame), so a free list per class
//    makes each an O(1) pop and push.
// Freed blocks stay on their class's list; pages are never given back, as
// Go's poll descriptors are never freed: the high-water mark of a busy
// moment stays ready for the next one, within the budget.
//
// Each block starts with a 16-byte header naming its class (or, above
// the largest class, its page count), so free needs no size; a magic word
// in it catches a double free or a stray pointer as a fatal error.
#include "net/netmem.h"
#include "net/stack.h"
#include "goro.h"
#include "lib/panic.h"
#include "lib/string.h"

#define HDR 16u
#define NCLASS 7                        // 64 .. 4096 bytes, headers included
#define MAGIC_LIVE 0x6e65746d656d4c56ull   // "netmemLV"
#define MAGIC_FREE 0x6e65746d656d4652ull   // "netmemFR"
#define CLASS_PAGES UINT32_MAX          // hdr.cls of a block of whole pages

struct hdr {
    uint64_t magic;
    uint32_t cls;                       // class index, or CLASS_PAGES
    uint32_t npages;                    // with CLASS_PAGES
};
_Static_assert(sizeof(struct hdr) == HDR, "the header keeps blocks 16-byte aligned");

// A figure for netmem_stats, read without the lock: a snapshot.
#define SNAPSHOT_NET(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)   // relaxed: a value to show, nothing behind it

struct freeblk {
    struct hdr h;
    struct freeblk *next;
};

// Stack lock held (net_assert_locked), except stats' racy reads.
static struct {
    struct freeblk *free[NCLASS];
    uint64_t pages, limit_pages;
    uint64_t in_use, allocs, frees, failures;
} nm;

static uint32_t class_size(uint32_t c)
{
    return 64u << c;
}

static int class_of(size_t total)
{
    for (uint32_t c = 0; c < NCLASS; c++)
        if (total <= class_size(c))
            return (int)c;
    return -1;
}

static uint64_t limit(void)
{
    if (!nm.limit_pages)
        nm.limit_pages = page_total_count() / 4;
    return nm.limit_pages;
}

static bool take_pages(uint64_t n)
{
    if (nm.pages + n > limit()) {
        nm.failures++;
        return false;
    }
    nm.pages += n;
    return true;
}

// A page cut into blocks of class c, onto its free list.
static bool refill(uint32_t c)
{
    if (!take_pages(1))
        return false;
    char *page = page_alloc(1);
    uint32_t size = class_size(c);
    for (uint32_t off = 0; off + size <= PAGE_SIZE; off += size) {
        struct freeblk *b = (struct freeblk *)(page + off);
        b->h.magic = MAGIC_FREE;
        b->h.cls = c;
        b->next = nm.free[c];
        nm.free[c] = b;
    }
    return true;
}

void *netmem_alloc(size_t size)
{
    net_assert_locked();
    if (size > (1ull << 32))
        return 0;
    size_t total = size + HDR;
    int c = class_of(total);
    struct hdr *h;
    if (c < 0) {
        uint32_t n = (uint32_t)((total + PAGE_SIZE - 1) / PAGE_SIZE);
        if (!take_pages(n))
            return 0;
        h = page_alloc(n);
        h->cls = CLASS_PAGES;
        h->npages = n;
        nm.in_use += (uint64_t)n * PAGE_SIZE;
    } else {
        if (!nm.free[c] && !refill((uint32_t)c))
            return 0;
        struct freeblk *b = nm.free[c];
        ASSERT(b->h.magic == MAGIC_FREE && b->h.cls == (uint32_t)c);
        nm.free[c] = b->next;
        h = &b->h;
        nm.in_use += class_size((uint32_t)c);
    }
    h->magic = MAGIC_LIVE;
    nm.allocs++;
    return (char *)h + HDR;
}

void *netmem_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return 0;
    void *p = netmem_alloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void netmem_free(void *p)
{
    net_assert_locked();
    if (!p)
        return;
    struct hdr *h = (struct hdr *)((char *)p - HDR);
    if (h->magic != MAGIC_LIVE)
        panic("netmem_free: %p is not a live block of lwIP's memory (%s)", p,
              h->magic == MAGIC_FREE ? "freed twice" : "never allocated here");
    nm.frees++;
    if (h->cls == CLASS_PAGES) {
        uint32_t n = h->npages;
        h->magic = 0;
        nm.in_use -= (uint64_t)n * PAGE_SIZE;
        nm.pages -= n;
        page_free(h, n);
        return;
    }
    ASSERT(h->cls < NCLASS);
    struct freeblk *b = (struct freeblk *)h;
    b->h.magic = MAGIC_FREE;
    b->next = nm.free[h->cls];
    nm.free[h->cls] = b;
    nm.in_use -= class_size(h->cls);
}

void netmem_stats(struct netmem_stats *s)
{
    s->pages = SNAPSHOT_NET(nm.pages);
    s->limit_pages = SNAPSHOT_NET(nm.limit_pages);
    s->in_use = SNAPSHOT_NET(nm.in_use);
    s->allocs = SNAPSHOT_NET(nm.allocs);
    s->frees = SNAPSHOT_NET(nm.frees);
    s->failures = SNAPSHOT_NET(nm.failures);
}

void netmem_set_limit(uint64_t pages)
{
    net_lock();
    nm.limit_pages = pages;
    net_unlock();
}
