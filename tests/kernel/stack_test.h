// SPDX-License-Identifier: MIT
// What the stack tests share: pages of a goroutine's own slot that nothing
// has mapped yet, used as raw memory far below anything its frames reach.
// A local array would not do: the build probes every page of a large
// frame at the function's entry (-fstack-clash-protection), so its pages
// are mapped before any test could use them fresh.
#ifndef GORO_STACK_TEST_H
#define GORO_STACK_TEST_H

#include "kernel/sched.h"

// The running goroutine's record (pinned only for the read).
static inline struct g *kt_curg(void)
{
    struct m *mp = acquirem();
    struct g *gp = mp->curg;
    releasem(mp);
    return gp;
}

// The lowest address of n consecutive unmapped pages of gp's stack, all at
// least 16 KiB below the caller's frame (room for what it calls), or 0
// when its stack has no such run left (earlier users of the G grew it).
static inline uint64_t kt_unmapped_pages(const struct g *gp, uint32_t n)
{
    uint64_t below = ((uint64_t)__builtin_frame_address(0) & ~(uint64_t)(PAGE_SIZE - 1)) - 16 * 1024;
    uint32_t run = 0;
    for (uint64_t va = gp->stack_lo; va + PAGE_SIZE <= below; va += PAGE_SIZE) {
        run = arch_virt_to_phys(va) ? 0 : run + 1;
        if (run == n)
            return va - (uint64_t)(n - 1) * PAGE_SIZE;
    }
    return 0;
}

// The goroutines this one starts next get stacks with nothing mapped below
// their top page: this P's dead Gs go to the global list, which go()
// refills from, and the scavenger trims them all. Without it a run of
// earlier tests can leave every free G grown, and a test of copies into
// fresh stack pages would find none (it counts them, and fails on none).
static inline void kt_fresh_stacks(void)
{
    struct m *mp = acquirem();
    if (mp->p)
        g_free_list_move(mp->p);
    releasem(mp);
    stack_scavenge_all();
}

#endif
