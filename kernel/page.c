// SPDX-License-Identifier: MIT
// The kernel's page allocator: one page_pool (kernel/pagepool.c) over
// [0, page_max_phys), behind one lock. The pool's bitmap lives in usable RAM
// just above the kernel image and is reserved in the pool it describes.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "page.h"
#include "pagepool.h"
#include "bootinfo.h"
#include "panic.h"
#include "spinlock.h"
#include "string.h"

#define LOW_MEMORY_END 0x100000ull     // BIOS, real-mode IVT, the AP trampoline

static struct spinlock page_lock = SPINLOCK_INIT("page");
// page_lock held, after page_init
static struct page_pool pool;
// written once by page_init, before any other core runs
static uint64_t total_pages;
static uint64_t max_phys;

static uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) & ~(align - 1);
}

static bool usable(const struct boot_mmap_entry *e)
{
    return e->type == BOOT_MEM_USABLE && e->len > 0;
}

static uint64_t highest_usable_end(const struct boot_info *bi)
{
    uint64_t end = 0;
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        const struct boot_mmap_entry *e = &bi->mmap[i];
        if (usable(e) && e->base + e->len > end)
            end = e->base + e->len;
    }
    return end;
}

// The lowest page-aligned address at or above floor where bytes fit inside
// one usable range, or 0. Lowest, not first in map order: the loader's
// map need not be sorted, and low memory is mapped earliest.
static uint64_t find_bitmap_home(const struct boot_info *bi, uint64_t floor, uint64_t bytes)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        const struct boot_mmap_entry *e = &bi->mmap[i];
        if (!usable(e))
            continue;
        uint64_t start = round_up(e->base > floor ? e->base : floor, PAGE_SIZE);
        uint64_t end = e->base + e->len;
        if (start < end && end - start >= bytes && (best == 0 || start < best))
            best = start;
    }
    return best;
}

// Usable ranges become free; anything the map also calls reserved (some
// firmware reports overlapping entries) stays reserved.
static void add_boot_ranges(const struct boot_info *bi)
{
    for (uint32_t i = 0; i < bi->mmap_count; i++)
        if (usable(&bi->mmap[i]))
            page_pool_add_free(&pool, bi->mmap[i].base, bi->mmap[i].len);
    for (uint32_t i = 0; i < bi->mmap_count; i++)
        if (bi->mmap[i].type != BOOT_MEM_USABLE)
            page_pool_reserve(&pool, bi->mmap[i].base, bi->mmap[i].len);
}

// Called once on the boot core before any other core runs. bi is a copy
// inside the kernel image (bootinfo.h), so reserving the image keeps it.
void page_init(const struct boot_info *bi, uint64_t image_start, uint64_t image_end)
{
    ASSERT(image_start <= image_end);
    max_phys = highest_usable_end(bi);
    if (max_phys == 0)
        panic("page_init: the boot memory map has no usable RAM");
    uint64_t npages = round_up(max_phys, PAGE_SIZE) / PAGE_SIZE;
    size_t bytes = page_pool_bitmap_bytes(npages);
    uint64_t floor = image_end > LOW_MEMORY_END ? image_end : LOW_MEMORY_END;
    uint64_t bitmap = find_bitmap_home(bi, floor, bytes);
    if (bitmap == 0)
        panic("page_init: no usable range above 0x%llx holds the %zu-byte page bitmap",
              (unsigned long long)floor, bytes);

    spin_lock(&page_lock);
    page_pool_init(&pool, 0, npages, (uint64_t *)(uintptr_t)bitmap);
    add_boot_ranges(bi);
    page_pool_reserve(&pool, 0, LOW_MEMORY_END);
    page_pool_reserve(&pool, image_start, image_end - image_start);
    page_pool_reserve(&pool, bitmap, bytes);
    total_pages = pool.nfree;
    spin_unlock(&page_lock);
}

void *page_alloc(size_t npages)
{
    ASSERT(npages > 0);
    spin_lock(&page_lock);
    uint64_t addr = page_pool_alloc(&pool, npages);
    uint64_t nfree = pool.nfree;
    spin_unlock(&page_lock);
    if (addr == 0)
        panic("out of memory: %zu pages wanted, %llu of %llu free", npages,
              (unsigned long long)nfree, (unsigned long long)total_pages);
    void *p = (void *)(uintptr_t)addr;
    memset(p, 0, npages * PAGE_SIZE);
    return p;
}

void page_free(void *p, size_t npages)
{
    spin_lock(&page_lock);
    bool ok = page_pool_free(&pool, (uint64_t)(uintptr_t)p, npages);
    spin_unlock(&page_lock);
    if (!ok)
        panic("page_free: %p (%zu pages) is already free, or not from page_alloc", p, npages);
}

uint64_t page_free_count(void)
{
    spin_lock(&page_lock);
    uint64_t n = pool.nfree;
    spin_unlock(&page_lock);
    return n;
}

uint64_t page_total_count(void)
{
    return total_pages;
}

uint64_t page_max_phys(void)
{
    return max_phys;
}
