// SPDX-License-Identifier: MIT
// Physical pages. The early allocator behind page_alloc/page_free: one pool
// over all usable RAM (the NUMA issue replaces the inside with one pool per
// node; this interface stays). Memory is identity-mapped, so a page's
// physical address is its pointer.
#ifndef GORO_PAGE_H
#define GORO_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define PAGE_SIZE 4096ul

struct boot_info;
// Takes every usable range of the boot memory map except [0, 1 MiB), the
// kernel image [image_start, image_end) and the ranges the boot information
// still occupies.
void page_init(const struct boot_info *bi, uint64_t image_start, uint64_t image_end);

// npages contiguous pages, zeroed, aligned to PAGE_SIZE. Panics with the
// pool's usage when RAM is exhausted: callers never see NULL.
void *page_alloc(size_t npages);
void page_free(void *p, size_t npages);
uint64_t page_free_count(void);
uint64_t page_total_count(void);
uint64_t page_max_phys(void);       // end of the highest usable range

#endif
