// SPDX-License-Identifier: MIT
// Goroutine stacks: mapping and the first frame.
#include "arch/arch_private.h"
#include "lib/panic.h"

void arch_stack_reserve(uint64_t lo, uint64_t hi)
{
    ASSERT(lo >= ARCH_STACK_REGION && hi <= ARCH_STACK_REGION + ARCH_STACK_REGION_SIZE);
    ASSERT(!(lo & (ARCH_PAGE_SIZE - 1)) && !(hi & (ARCH_PAGE_SIZE - 1)));
    for (uint64_t va = lo; va < hi; va += 2ull << 20)
        paging_ensure_tables(va);
    paging_ensure_tables(hi - 1);
}

enum arch_stack_map arch_stack_map_page(uint64_t va, void *page)
{
    ASSERT(va >= ARCH_STACK_REGION && va < ARCH_STACK_REGION + ARCH_STACK_REGION_SIZE);
    return paging_install_pte(va & ~(ARCH_PAGE_SIZE - 1), (uint64_t)page);
}

void arch_gstart(void);

// The frame arch_gogo pops (see arch/switch.asm): control words, rbx, rbp,
// r12 = fn, r13 = arg, r14 = exit_fn, r15, then arch_gstart as the return
// address.
uint64_t arch_stack_init(uint64_t hi, void (*fn)(void *), void *arg, void (*exit_fn)(void))
{
    uint64_t *sp = (uint64_t *)(hi & ~15ull);
    *--sp = 0;                              // keeps arch_gstart's frame aligned
    *--sp = (uint64_t)arch_gstart;
    *--sp = 0;                              // r15
    *--sp = (uint64_t)exit_fn;              // r14
    *--sp = (uint64_t)arg;                  // r13
    *--sp = (uint64_t)fn;                   // r12
    *--sp = 0;                              // rbp: ends backtraces
    *--sp = 0;                              // rbx
    *--sp = 0x037Full << 32 | 0x1F80;       // x87 cw (defaults), mxcsr (all masked)
    return (uint64_t)sp;
}
