// SPDX-License-Identifier: MIT
// TLB shoot-down (arch/tlb.c): a core that does not answer is named after
// arch_tlb_stall_report_ns, and the shoot-down still waits for it. (An interrupt that could
// never be answered: stack_interrupt_at_an_unmapped_page_is_delivered.)
#include "kernel/ktest.h"
#include "kernel/sched.h"

static uint64_t holder_started, holder_done, reports_before, shooter_core;

// The report's threshold while the test runs: 20 ms instead of a second.
// Under -icount a second of guest time is 10^9 instructions of two cores
// spinning, minutes of a loaded host; the report is the same at any wait.
#define STALL_NS 20000000ull

// Keeps interrupts off on its core, so that a shoot-down cannot be
// answered there, until the shoot-down has reported the stall (STALL_NS
// into its wait, however slowly the host runs this vCPU; a minute at most,
// should the report never come). On the shooter's own core it does
// nothing: the shooter could not run until it finished.
static void irqoff_holder(void *arg)
{
    (void)arg;
    uint64_t f = irq_save();
    if ((uint64_t)core_id() == kt_load(&shooter_core)) {
        irq_restore(f);
        kt_store(&holder_started, 2);
        return;
    }
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
    // The holder must run on another core. This G spins pinned until a
    // thief has taken it; a thief may miss it (it sits in runnext), so
    // after a while this G yields its core and, if the holder ran here
    // and stood down, tries again.
    struct m *mp = 0;
    bool started = false;
    for (int tries = 0; tries < 20 && !started; tries++) {
        mp = acquirem();
        kt_store(&shooter_core, (uint64_t)core_id());
        holder_started = holder_done = 0;
        go(irqoff_holder, 0);
        uint64_t end = nanotime() + 1000000000ull;
        while (!kt_load(&holder_started) && nanotime() < end)
            cpu_relax();
        started = kt_load(&holder_started) == 1;
        if (started)
            break;
        releasem(mp);
        while (!kt_load(&holder_started))
            gosched();          // it runs (here, standing down, or elsewhere, holding)
        started = kt_load(&holder_started) == 1;
        if (started)
            mp = acquirem();    // it holds another core: shoot from wherever this G is now
    }
    KT_ASSERT(started);
    uint64_t threshold = __atomic_exchange_n(&arch_tlb_stall_report_ns, STALL_NS, __ATOMIC_RELAXED);   // a setting
    while (!arch_tlb_shootdown())       // the background scavenger's may be under way
        cpu_relax();
    __atomic_store_n(&arch_tlb_stall_report_ns, threshold, __ATOMIC_RELAXED);     // a setting
    bool waited = kt_load(&holder_done) != 0;
    releasem(mp);
    KT_ASSERT(waited);              // not done before the silent core answered
    KT_ASSERT(__atomic_load_n(&arch_tlb_stall_reports, __ATOMIC_RELAXED) > before);   // a counter
}

// A core waiting for a spinlock has interrupts off, so a shoot-down's IPI
// waits there; the shooter counts the waiter as flushed (it flushes when
// its wait ends), or the waiter acknowledges from its wait (arch_lock_relax).
// The shooter holds the lock throughout: its shoot-down ends while the
// waiter still waits, or never (the run's stall limit names the hang).
static struct spinlock waited_lock = SPINLOCK_INIT("ktest tlb", LOCK_RANK_GTIMER);
// The waiter's steps: 1 running, 2 taking the lock, 3 took it.
static uint64_t lock_held, waiter_state;

static void lock_waiter(void *arg)
{
    (void)arg;
    kt_store(&waiter_state, 1);
    while (!kt_load(&lock_held))
        cpu_relax();                    // stays on its core, so it is not queued behind the holder
    kt_store(&waiter_state, 2);
    spin_lock(&waited_lock);
    kt_store(&waiter_state, 3);
    spin_unlock(&waited_lock);
}

KTEST(tlb_shootdown_answered_by_a_core_waiting_for_a_spinlock)
{
    if (num_cpu() < 2 || gomaxprocs(0) < 2)
        KT_SKIP("needs two Ps");
    // The waiter must wait on another core: a preemption may queue it on
    // this one, which keeps interrupts off while it holds the lock; then
    // the lock is let go and the round tried again.
    bool waiting = false;
    for (int tries = 0; tries < 20 && !waiting; tries++) {
        kt_store(&waiter_state, 0);
        kt_store(&lock_held, 0);
        go(lock_waiter, 0);
        KT_ASSERT(kt_wait_count(&waiter_state, 1, KT_STALL_MS));
        spin_lock(&waited_lock);        // interrupts off: this G stays on this core
        kt_store(&lock_held, 1);
        for (uint64_t until = nanotime() + 1000000000ull; kt_load(&waiter_state) < 2 && nanotime() < until;)
            cpu_relax();
        waiting = kt_load(&waiter_state) == 2;
        if (waiting)
            break;
        spin_unlock(&waited_lock);
        KT_ASSERT(kt_wait_count(&waiter_state, 3, KT_STALL_MS));
    }
    KT_ASSERT(waiting);
    for (uint64_t until = nanotime() + 1000000; nanotime() < until;)
        cpu_relax();                    // 1 ms for it to be spinning (either way it must answer)
    while (!arch_tlb_shootdown())       // the background scavenger's may be under way: answer it
        arch_lock_relax();
    bool still_waiting = kt_load(&waiter_state) == 2;
    spin_unlock(&waited_lock);
    KT_ASSERT(still_waiting);
    KT_ASSERT(kt_wait_count(&waiter_state, 3, KT_STALL_MS));
}
