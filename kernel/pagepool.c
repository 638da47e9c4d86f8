// SPDX-License-Identifier: MIT
// The pure page pool (interface in pagepool.h): one bit per page, 1 = free.
// Freestanding and lock-free by design: kernel/page.c holds its lock around
// every call, and the host tests call it directly.
//
// What must hold between calls:
//  - nfree is the number of 1 bits among the first npages bits; bits past
//    npages in the last word are 0, so word scans never see them as free.
//  - no page below hint is free: an n == 1 allocation starts its scan
//    there, which makes it first-fit by address without rescanning the
//    full words at the bottom of RAM.
#include "lib/bits.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/pagepool.h"
#include "kernel/page.h"

#define WORD_BITS 64

static uint64_t words_for(uint64_t npages)
{
    return (npages + WORD_BITS - 1) / WORD_BITS;
}

size_t page_pool_bitmap_bytes(uint64_t npages)
{
    return (size_t)(words_for(npages) * sizeof(uint64_t));
}

void page_pool_init(struct page_pool *pp, uint64_t base, uint64_t npages, uint64_t *bitmap)
{
    pp->base = base;
    pp->npages = npages;
    pp->nfree = 0;
    pp->bitmap = bitmap;
    pp->hint = npages;
    for (uint64_t w = 0; w < words_for(npages); w++)
        bitmap[w] = 0;
}

// ---- bit ranges ----------------------------------------------------------

// The bits [lo, hi) of one word, 0 <= lo < hi <= 64.
static uint64_t word_mask(uint64_t lo, uint64_t hi)
{
    uint64_t upto_hi = hi == WORD_BITS ? ~0ull : (1ull << hi) - 1;
    return upto_hi & ~((1ull << lo) - 1);
}

// Sets (free) or clears (allocated) pages [first, end) and returns how many
// bits changed, so nfree follows without a second pass.
static uint64_t mark_range(struct page_pool *pp, uint64_t first, uint64_t end, bool free)
{
    uint64_t changed = 0;
    while (first < end) {
        uint64_t w = first / WORD_BITS, lo = first % WORD_BITS;
        uint64_t hi = end - w * WORD_BITS < WORD_BITS ? end - w * WORD_BITS : WORD_BITS;
        uint64_t mask = word_mask(lo, hi);
        uint64_t old = pp->bitmap[w];
        pp->bitmap[w] = free ? old | mask : old & ~mask;
        changed += bits_count64((old ^ pp->bitmap[w]) & mask);
        first = w * WORD_BITS + hi;
    }
    return changed;
}

// The first page >= i and < end whose bit equals free, or end. Whole words
// that cannot match are skipped at once.
static uint64_t find_bit(const struct page_pool *pp, uint64_t i, uint64_t end, bool free)
{
    while (i < end) {
        uint64_t w = i / WORD_BITS;
        uint64_t bits = free ? pp->bitmap[w] : ~pp->bitmap[w];
        bits &= ~0ull << (i % WORD_BITS);
        if (bits) {
            uint64_t found = w * WORD_BITS + (uint64_t)__builtin_ctzll(bits);
            return found < end ? found : end;
        }
        i = (w + 1) * WORD_BITS;
    }
    return end;
}

// The first run of n free pages starting in [from, start_end), or npages.
static uint64_t find_run(const struct page_pool *pp, uint64_t from, uint64_t start_end, uint64_t n)
{
    uint64_t i = from;
    for (;;) {
        i = find_bit(pp, i, start_end, true);
        if (i >= start_end || n > pp->npages - i)
            return pp->npages;
        uint64_t used = find_bit(pp, i, i + n, false);
        if (used == i + n)
            return i;
        i = used;
    }
}

// ---- address ranges ------------------------------------------------------

static uint64_t pool_end(const struct page_pool *pp)
{
    return pp->base + pp->npages * PAGE_SIZE;
}

// [addr, addr + len) clipped to the pool, as page indices; inward rounds
// to whole pages inside the range, outward to every page it touches.
// Returns false when nothing is left.
static bool clip(const struct page_pool *pp, uint64_t addr, uint64_t len, bool inward,
                 uint64_t *first, uint64_t *end)
{
    uint64_t lo = addr, hi = len > UINT64_MAX - addr ? UINT64_MAX : addr + len;
    if (lo < pp->base)
        lo = pp->base;
    if (hi > pool_end(pp))
        hi = pool_end(pp);
    if (lo >= hi)
        return false;
    lo -= pp->base;
    hi -= pp->base;
    if (inward) {
        *first = (lo + PAGE_SIZE - 1) / PAGE_SIZE;
        *end = hi / PAGE_SIZE;
    } else {
        *first = lo / PAGE_SIZE;
        *end = (hi + PAGE_SIZE - 1) / PAGE_SIZE;
    }
    return *first < *end;
}

void page_pool_add_free(struct page_pool *pp, uint64_t addr, uint64_t len)
{
    uint64_t first, end;
    if (!clip(pp, addr, len, true, &first, &end))
        return;
    pp->nfree += mark_range(pp, first, end, true);
    if (first < pp->hint)
        pp->hint = first;
}

void page_pool_reserve(struct page_pool *pp, uint64_t addr, uint64_t len)
{
    uint64_t first, end;
    if (!clip(pp, addr, len, false, &first, &end))
        return;
    pp->nfree -= mark_range(pp, first, end, false);
}

// First fit from the hint, wrapping once to the bottom: with the invariant
// held nothing below the hint is free, but the wrap keeps a hint set from
// outside (or a broken invariant) from losing memory.
uint64_t page_pool_alloc(struct page_pool *pp, uint64_t n)
{
    if (n == 0 || n > pp->nfree)
        return 0;
    uint64_t hint = pp->hint < pp->npages ? pp->hint : 0;
    uint64_t lowest = find_bit(pp, hint, pp->npages, true);
    uint64_t i = find_run(pp, lowest, pp->npages, n);
    if (i < pp->npages) {
        pp->hint = i == lowest ? i + n : lowest;
    } else {
        i = find_run(pp, 0, hint, n);
        if (i == pp->npages)
            return 0;
        pp->hint = 0;   // a free page sat below the hint: start over
    }
    pp->nfree -= mark_range(pp, i, i + n, false);
    return pp->base + i * PAGE_SIZE;
}

bool page_pool_free(struct page_pool *pp, uint64_t addr, uint64_t n)
{
    if (n == 0 || addr < pp->base || (addr - pp->base) % PAGE_SIZE)
        return false;
    uint64_t first = (addr - pp->base) / PAGE_SIZE;
    if (first >= pp->npages || n > pp->npages - first)
        return false;
    if (find_bit(pp, first, first + n, true) != first + n)
        return false;
    pp->nfree += mark_range(pp, first, first + n, true);
    if (first < pp->hint)
        pp->hint = first;
    return true;
}
