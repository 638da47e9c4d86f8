// SPDX-License-Identifier: MIT
// TLB shoot-down (arch/tlb.c): a core that does not answer is named after
// a second, and the shoot-down still waits for it.
#include "kernel/ktest.h"
#include "kernel/sched.h"

static uint64_t holder_started, holder_done;

// Keeps interrupts off on its core for 1.5 s: a shoot-down meanwhile
// cannot be answered there.
static void irqoff_holder(void *arg)
{
    (void)arg;
    uint64_t f = irq_save();
    kt_store(&holder_started, 1);
    uint64_t end = nanotime() + 1500000000ull;
    while (nanotime() < end)
        cpu_relax();
    kt_store(&holder_done, 1);
    irq_restore(f);
}

KTEST(tlb_shootdown_stall_is_reported_and_waited_out)
{
    if (num_cpu() < 2 || gomaxprocs(0) < 2)
        KT_SKIP("needs two Ps");
    uint64_t before = __atomic_load_n(&arch_tlb_stall_reports, __ATOMIC_RELAXED);   // a counter
    holder_started = holder_done = 0;
    go(irqoff_holder, 0);
    // The holder must run on another core: this G spins without
    // yielding until a thief has taken it (had it run here, we would only
    // get back after it finished).
    uint64_t end = nanotime() + 60000000000ull;
    while (!kt_load(&holder_started) && nanotime() < end)
        cpu_relax();
    KT_ASSERT(kt_load(&holder_started));
    if (kt_load(&holder_done))
        KT_SKIP("the holder ran on this core");
    struct m *mp = acquirem();
    while (!arch_tlb_shootdown())       // the background scavenger's may be under way
        cpu_relax();
    bool waited = kt_load(&holder_done) != 0;
    releasem(mp);
    KT_ASSERT(waited);              // not done before the silent core answered
    KT_ASSERT(__atomic_load_n(&arch_tlb_stall_reports, __ATOMIC_RELAXED) > before);   // a counter
}
