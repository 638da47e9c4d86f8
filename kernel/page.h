// SPDX-License-Identifier: MIT
// Physical pages, one allocator per NUMA node (kernel/page.c). Memory is
// identity-mapped, so a page's physical address is its pointer.
#ifndef GORO_PAGE_H
#define GORO_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include "goro.h"

// The public calls (PAGE_SIZE, page_alloc, page_alloc_node, page_free and
// the page counts) are in goro.h.

struct boot_info;
// Takes every usable range of the boot memory map except [0, 1 MiB), the
// kernel image [image_start, image_end), the memory the boot took before
// this (kept: the APs' early stacks, kept_len 0 if none) and the ranges
// the boot information still occupies, cut into nodes by numa_ranges():
// runs after numa_init.
void page_init(const struct boot_info *bi, uint64_t image_start, uint64_t image_end, uint64_t kept,
               uint64_t kept_len);

// As page_alloc, but NULL when no node has npages contiguous pages free:
// for callers that report running out as an error of their own (the
// profiler's and the trace's buffers), where page_alloc's is fatal.
void *page_try_alloc(size_t npages);
// The same, not cleared: for memory written before it is read (the flight
// recorder's snapshots), or only held (a test making the machine small).
void *page_try_alloc_uncleared(size_t npages);
// As page_alloc, below 4 GiB (page tables the AP trampoline reaches in 32-bit mode).
void *page_alloc_low(size_t npages);
// As page_alloc, not cleared: for memory written before it is read
// (the APs' boot stacks; clearing 4 MiB of them took 2 ms under TCG).
void *page_alloc_uncleared(size_t npages);
// inject=node-full: takes every free page of node (leaked for good);
// returns how many.
uint64_t page_node_take_all(int node);
uint64_t page_node_fallbacks(int node);     // allocations that came here from a nearer node
uint64_t page_max_phys(void);       // end of the highest usable range

// One pool (a NUMA range's usable RAM), for the shell's mem: pools i =
// 0.. in address order; false past the last. nfree is a snapshot.
struct page_pool_stat {
    uint64_t base, npages, nfree;
    int node;
};
bool page_pool_stat(uint32_t i, struct page_pool_stat *out);

#endif
