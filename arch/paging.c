// SPDX-License-Identifier: MIT
// The kernel's page tables: an identity ("direct") map of all RAM and of
// the 3-4 GiB MMIO hole, with 2 MiB pages (1 GiB pages need not exist on
// every CPU we boot), except the first 2 MiB, which use 4 KiB pages so that
// page 0 stays unmapped and a NULL dereference faults. The MMIO hole is
// mapped uncached. Tables come from page_alloc, below 4 GiB, because the
// AP trampoline loads CR3 in 32-bit mode.
#include "arch_private.h"
#include "x86.h"
#include "page.h"
#include "panic.h"
#include "printf.h"
#include "spinlock.h"

#define PTE_P   (1ull << 0)
#define PTE_W   (1ull << 1)
#define PTE_PWT (1ull << 3)
#define PTE_PCD (1ull << 4)
#define PTE_PS  (1ull << 7)
#define PTE_ADDR 0x000FFFFFFFFFF000ull

static uint64_t *pml4;

static uint64_t *table_alloc(void)
{
    uint64_t *t = page_alloc_low(1);
    ASSERT((uint64_t)t < (4ull << 30));
    return t;
}

// The table under entry e, created when absent.
static uint64_t *table_next(uint64_t *e)
{
    if (!(*e & PTE_P))
        *e = (uint64_t)table_alloc() | PTE_P | PTE_W;
    return (uint64_t *)(*e & PTE_ADDR);
}

static void map_2m(uint64_t addr, uint64_t flags)
{
    uint64_t *pdpt = table_next(&pml4[(addr >> 39) & 511]);
    uint64_t *pd = table_next(&pdpt[(addr >> 30) & 511]);
    pd[(addr >> 21) & 511] = addr | PTE_P | PTE_W | PTE_PS | flags;
}

// Page-table edits after boot (goroutine stacks) are serialized here.
// Only new mappings are added (never changed), and x86 does not cache
// not-present entries, so no other core needs a TLB flush.
static struct spinlock pt_lock = SPINLOCK_INIT("pagetables");

void paging_map_4k(uint64_t va, uint64_t pa)
{
    spin_lock(&pt_lock);
    uint64_t *pdpt = table_next(&pml4[(va >> 39) & 511]);
    uint64_t *pd = table_next(&pdpt[(va >> 30) & 511]);
    ASSERT(!(pd[(va >> 21) & 511] & PTE_PS));
    uint64_t *pt = table_next(&pd[(va >> 21) & 511]);
    ASSERT(!(pt[(va >> 12) & 511] & PTE_P));
    pt[(va >> 12) & 511] = pa | PTE_P | PTE_W;
    spin_unlock(&pt_lock);
}

void paging_init(void)
{
    pml4 = table_alloc();
    uint64_t top = page_max_phys();
    if (top < (4ull << 30))
        top = 4ull << 30;
    top = (top + (2ull << 20) - 1) & ~((2ull << 20) - 1);

    uint64_t *pdpt = table_next(&pml4[0]);
    uint64_t *pd = table_next(&pdpt[0]);
    uint64_t *pt = table_alloc();
    for (uint64_t i = 1; i < 512; i++)
        pt[i] = (i << 12) | PTE_P | PTE_W;
    pd[0] = (uint64_t)pt | PTE_P | PTE_W;

    for (uint64_t a = 2ull << 20; a < top; a += 2ull << 20) {
        bool mmio = a >= (3ull << 30) && a < (4ull << 30);
        map_2m(a, mmio ? (PTE_PCD | PTE_PWT) : 0);
    }
    write_cr3((uint64_t)pml4);
    kprintf("paging: direct map of %lu MiB, page 0 unmapped\n", top >> 20);
}
