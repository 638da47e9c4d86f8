// SPDX-License-Identifier: MIT
// The kernel's page tables: an identity ("direct") map of all RAM and of
// the 3-4 GiB MMIO hole, with 2 MiB pages (1 GiB pages need not exist on
// every CPU we boot), except the first 2 MiB, which use 4 KiB pages so that
// page 0 stays unmapped and a NULL dereference faults. The MMIO hole is
// mapped uncached. Tables come from the allocator arch/ is given, below 4 GiB, because the
// AP trampoline loads CR3 in 32-bit mode.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "arch/arch.h"

#define PTE_P   (1ull << 0)
#define PTE_W   (1ull << 1)
#define PTE_PWT (1ull << 3)
#define PTE_PCD (1ull << 4)
#define PTE_PS  (1ull << 7)
#define PTE_ADDR 0x000FFFFFFFFFF000ull

static uint64_t *pml4;

// Until the full direct map is live only the first 4 GiB are mapped, so
// tables must come from there; after it, from anywhere (goroutine stacks'
// tables would otherwise use up low memory: a million of them need 500 MiB).
// The PML4 itself stays low: the AP trampoline loads CR3 in 32-bit mode.
static bool direct_map_live;

static uint64_t *table_alloc(void)
{
    if (direct_map_live)
        return arch_pages.alloc(1);
    uint64_t *t = arch_pages.alloc_low(1);
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

// Page-table edits after boot (goroutine stacks) are serialized here.
// Only new mappings are added (never changed), and x86 does not cache
// not-present entries, so no other core needs a TLB flush.
static struct spinlock pt_lock = SPINLOCK_INIT("pagetables", LOCK_RANK_PAGETABLES);

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

// Creates (under the lock) every table above va's PTE, so that a later
// paging_set_pte for va needs no lock and no allocation: the page-fault
// handler maps goroutine stack pages that way.
void paging_ensure_tables(uint64_t va)
{
    spin_lock(&pt_lock);
    uint64_t *pdpt = table_next(&pml4[(va >> 39) & 511]);
    uint64_t *pd = table_next(&pdpt[(va >> 30) & 511]);
    ASSERT(!(pd[(va >> 21) & 511] & PTE_PS));
    table_next(&pd[(va >> 21) & 511]);
    spin_unlock(&pt_lock);
}

// The PTE slot of va, whose tables exist (paging_ensure_tables); NULL if not.
static uint64_t *pte_of(uint64_t va)
{
    uint64_t e = pml4[(va >> 39) & 511];
    if (!(e & PTE_P))
        return 0;
    e = ((uint64_t *)(e & PTE_ADDR))[(va >> 30) & 511];
    if (!(e & PTE_P))
        return 0;
    e = ((uint64_t *)(e & PTE_ADDR))[(va >> 21) & 511];
    if (!(e & PTE_P) || (e & PTE_PS))
        return 0;
    return &((uint64_t *)(e & PTE_ADDR))[(va >> 12) & 511];
}

// Any context, lock-free (fatal dumps call it): walks the tables for va.
// Tables are only ever added, and a stack PTE is cleared only by the
// scavenger, so a racing change yields a stale answer, never a fault.
bool paging_mapped(uint64_t va)
{
    if (!pml4 || va >= (1ull << 47))
        return false;
    // relaxed, each level: a racing change gives a stale answer (above); the
    // tables an entry points to are never freed, so any value read is safe
    uint64_t e = __atomic_load_n(&pml4[(va >> 39) & 511], __ATOMIC_RELAXED);
    if (!(e & PTE_P))
        return false;
    e = __atomic_load_n(&((uint64_t *)(e & PTE_ADDR))[(va >> 30) & 511], __ATOMIC_RELAXED);  // relaxed: as the PML4's
    if (!(e & PTE_P))
        return false;
    if (e & PTE_PS)
        return true;
    e = __atomic_load_n(&((uint64_t *)(e & PTE_ADDR))[(va >> 21) & 511], __ATOMIC_RELAXED);  // relaxed: as the PML4's
    if (!(e & PTE_P))
        return false;
    if (e & PTE_PS)
        return true;
    e = __atomic_load_n(&((uint64_t *)(e & PTE_ADDR))[(va >> 12) & 511], __ATOMIC_RELAXED);  // relaxed: as the PML4's
    return e & PTE_P;
}

// Lock-free: installs pa at va's PTE if the entry is empty, by one
// compare-and-swap, so that of two cores that fault on one new stack page
// at once exactly one page goes in; the other core finds the winner's
// page when its access is retried. A not-present entry is never cached by
// the TLB, so no flush is needed.
enum arch_stack_map paging_install_pte(uint64_t va, uint64_t pa)
{
    uint64_t *pte = pte_of(va);
    if (!pte)
        return ARCH_STACK_NO_TABLE;
    uint64_t empty = 0;
    // release: the page's contents (zeroed, or the G record) before the
    // mapping, for whoever touches the page next; acquire on failure: the
    // winner's contents before the loser's retried access reads them
    if (__atomic_compare_exchange_n(pte, &empty, pa | PTE_P | PTE_W, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return ARCH_STACK_MAPPED;
    return ARCH_STACK_TAKEN;
}

// Unmaps one stack page (tables stay) and returns its physical page, or 0
// if it was not mapped. The caller flushes TLBs (arch_tlb_shootdown) before
// the page is reused.
uint64_t arch_stack_unmap_page(uint64_t va)
{
    uint64_t *pte = pte_of(va & ~0xFFFull);
    if (!pte || !(*pte & PTE_P))
        return 0;
    uint64_t pa = *pte & PTE_ADDR;
    __atomic_store_n(pte, 0, __ATOMIC_RELEASE);    // release: before the shoot-down that lets the page go
    return pa;
}

// Device memory (PCI BARs, ECAM) gets virtual addresses of its own, in a
// region above the direct map, mapped 4 KiB at a time with caching off
// (PCD|PWT): the direct map covers RAM write-back and only the 3-4 GiB
// hole uncached, while BARs can lie anywhere (OVMF puts 64-bit ones far
// above RAM) and ECAM below 3 GiB (q35's is at 2.75 GiB). Mappings are
// only ever added, so no TLB needs a flush; the region's next free
// address moves up under pt_lock.
static uint64_t mmio_next = ARCH_MMIO_REGION;

void *arch_map_mmio(uint64_t phys, uint64_t len)
{
    if (len == 0 || phys + len < phys || phys + len > (1ull << 52))
        return 0;
    uint64_t first = phys & ~0xFFFull, end = (phys + len + 0xFFF) & ~0xFFFull;
    spin_lock(&pt_lock);
    uint64_t va = mmio_next;
    if (end - first > ARCH_MMIO_REGION + ARCH_MMIO_REGION_SIZE - va) {
        spin_unlock(&pt_lock);
        return 0;
    }
    mmio_next += end - first;
    for (uint64_t off = 0; off < end - first; off += 0x1000) {
        uint64_t v = va + off;
        uint64_t *pdpt = table_next(&pml4[(v >> 39) & 511]);
        uint64_t *pd = table_next(&pdpt[(v >> 30) & 511]);
        uint64_t *pt = table_next(&pd[(v >> 21) & 511]);
        pt[(v >> 12) & 511] = (first + off) | PTE_P | PTE_W | PTE_PCD | PTE_PWT;
    }
    spin_unlock(&pt_lock);
    return (void *)(uintptr_t)(va + (phys - first));
}

uint64_t arch_virt_to_phys(uint64_t va)
{
    if (va >= ARCH_MMIO_REGION && va < ARCH_MMIO_REGION + ARCH_MMIO_REGION_SIZE) {
        uint64_t *pte = pte_of(va);
        return pte && (*pte & PTE_P) ? (*pte & PTE_ADDR) | (va & 0xFFF) : 0;
    }
    if (va < ARCH_STACK_REGION || va >= ARCH_STACK_REGION + ARCH_STACK_REGION_SIZE)
        return va;      // the direct map is the identity
    uint64_t *pte = pte_of(va);
    if (!pte || !(*pte & PTE_P))
        return 0;
    return (*pte & PTE_ADDR) | (va & 0xFFF);
}

void paging_init(void)
{
    pml4 = table_alloc();
    uint64_t top = arch_pages.max_phys;
    if (top < (4ull << 30))
        top = 4ull << 30;
    top = (top + (2ull << 20) - 1) & ~((2ull << 20) - 1);

    uint64_t *pdpt = table_next(&pml4[0]);
    uint64_t *pd = table_next(&pdpt[0]);
    uint64_t *pt = table_alloc();
    for (uint64_t i = 1; i < 512; i++)
        pt[i] = (i << 12) | PTE_P | PTE_W;
    pd[0] = (uint64_t)pt | PTE_P | PTE_W;

    // A directory at a time (one table walk per GiB, not per entry: 2048
    // walks were 60 k instructions, a tenth of the boot before the APs).
    for (uint64_t gib = 0; gib < top; gib += 1ull << 30) {
        uint64_t *dir = table_next(&table_next(&pml4[(gib >> 39) & 511])[(gib >> 30) & 511]);
        uint64_t flags = PTE_P | PTE_W | PTE_PS;
        if (gib == (3ull << 30))
            flags |= PTE_PCD | PTE_PWT;     // the MMIO hole
        uint64_t end = top - gib < (1ull << 30) ? top - gib : 1ull << 30;
        for (uint64_t off = gib ? 0 : 2ull << 20; off < end; off += 2ull << 20)
            dir[off >> 21] = (gib + off) | flags;
    }
    write_cr3((uint64_t)pml4);
    direct_map_live = true;
    kprintf("paging: direct map of %lu MiB, page 0 unmapped\n", top >> 20);
}
