// SPDX-License-Identifier: MIT
// Physical pages, one allocator per NUMA node (kernel/page.c). Memory is
// identity-mapped, so a page's physical address is its pointer.
#ifndef GORO_PAGE_H
#define GORO_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define PAGE_SIZE 4096ul

struct boot_info;
// Takes every usable range of the boot memory map except [0, 1 MiB), the
// kernel image [image_start, image_end) and the ranges the boot information
// still occupies, cut into nodes by numa_ranges(): runs after numa_init.
void page_init(const struct boot_info *bi, uint64_t image_start, uint64_t image_end);

// npages contiguous pages, zeroed, aligned to PAGE_SIZE, from the calling
// core's node, else the nearest node that has them. Panics with every
// node's usage when all are exhausted: callers never see NULL.
void *page_alloc(size_t npages);
// The same from node (0..numa_nodes()-1; < 0: the calling core's node).
void *page_alloc_node(size_t npages, int node);
// The same below 4 GiB (page tables the AP trampoline reaches in 32-bit mode).
void *page_alloc_low(size_t npages);
// The same as page_alloc, not cleared: for memory written before it is read
// (the APs' boot stacks; clearing 4 MiB of them took 2 ms under TCG).
void *page_alloc_uncleared(size_t npages);
// Any page from any page_alloc*, to the node it came from. A page freed
// twice, or not from page_alloc, is a fatal error.
void page_free(void *p, size_t npages);
uint64_t page_free_count(void);
// inject=node-full: takes every free page of node (leaked for good);
// returns how many.
uint64_t page_node_take_all(int node);
uint64_t page_total_count(void);
uint64_t page_node_free(int node);          // snapshot
uint64_t page_node_total(int node);         // free after page_init
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
