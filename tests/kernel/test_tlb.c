// SPDX-License-Identifier: MIT
// TLB shoot-down (arch/tlb.c): a core that does not answer is named after
// a second, and the shoot-down still waits for it. (An interrupt that could
// never be answered: stack_interrupt_at_an_unmapped_page_is_delivered.)
#include "kernel/ktest.h"
#include "kernel/sched.h"

static uint64_t holder_started, holder_done, reports_before;

// Keeps interrupts off on its core, so that a shoot-down cannot be
// answered there, until the shoot-down has reported the stall (a second
// into its wait, however slowly the host runs this vCPU; a minute at most,
// should the report never come).
static void irqoff_holder(void *arg)
{
    (void)arg;
    uint64_t f = irq_save();
    kt_store(&holder_started, 1);
    uint64_t end = nanotime() + 60000000000ull;
    while (__atomic_load_n(&arch_tlb_stall_reports, __ATOMIC_RELAXED) == kt_load(&reports_before) &&   // a counter
           nanotime() < end)
        cpu_relax();
    kt_store(&holder_done, 1);
    irq_restore(f);
}

KTEST(tlb_shootdown_stall_is_reported_and_waited_out)
{
    if (num_cpu() < 2 || gomaxprocs(0) < 2)
        KT_SKIP("needs two Ps");
    uint64_t before = __atomic_load_n(&arch_tlb_stall_reports, __ATOMIC_RELAXED);   // a counter
    kt_store(&reports_before, before);
    holder_started = holder_done = 0;
    // The holder runs on another core: this G stays pinned here, spinning,
    // until a thief has taken it.
    struct m *mp = acquirem();
    go(irqoff_holder, 0);
    uint64_t end = nanotime() + 60000000000ull;
    while (!kt_load(&holder_started) && nanotime() < end)
        cpu_relax();
    bool started = kt_load(&holder_started) != 0;
    while (started && !arch_tlb_shootdown())    // the background scavenger's may be under way
        cpu_relax();
    bool waited = kt_load(&holder_done) != 0;
    releasem(mp);
    KT_ASSERT(started);
    KT_ASSERT(waited);              // not done before the silent core answered
    KT_ASSERT(__atomic_load_n(&arch_tlb_stall_reports, __ATOMIC_RELAXED) > before);   // a counter
}
