// SPDX-License-Identifier: MIT
// The pure part of the page allocator: a pool over [base, base + npages *
// PAGE_SIZE) whose state lives in caller-provided memory. No locking: the
// caller (kernel/page.c) serializes. Host unit tests drive it directly.
#ifndef GORO_PAGEPOOL_H
#define GORO_PAGEPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct page_pool {
    uint64_t base;          // physical address of page 0
    uint64_t npages;        // pages covered (free or not)
    uint64_t nfree;
    uint64_t *bitmap;       // 1 bit per page, 1 = free; caller-provided
    uint64_t hint;          // first page index worth searching from
};

// Bytes of bitmap needed for npages.
size_t page_pool_bitmap_bytes(uint64_t npages);
// Everything starts allocated (not usable); page_pool_add_free frees ranges.
void page_pool_init(struct page_pool *pp, uint64_t base, uint64_t npages, uint64_t *bitmap);
// Marks [addr, addr+len) free, trimmed inward to whole pages and to the pool.
void page_pool_add_free(struct page_pool *pp, uint64_t addr, uint64_t len);
// Marks [addr, addr+len) allocated (reserve), widened outward to whole pages.
void page_pool_reserve(struct page_pool *pp, uint64_t addr, uint64_t len);
// First fit of n contiguous free pages; returns the physical address or 0.
uint64_t page_pool_alloc(struct page_pool *pp, uint64_t n);
// Frees n pages at addr. Returns false (and changes nothing) when any of
// them is already free or outside the pool: a double free is caught.
bool page_pool_free(struct page_pool *pp, uint64_t addr, uint64_t n);

#endif
