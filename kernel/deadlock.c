// SPDX-License-Identifier: MIT
// Deadlock detection: when every P is idle, no G is queued anywhere and
// nothing outside the scheduler (a timer, an interrupt, a G in a blocking
// call) can ready one, no G can ever run again.
#include "kernel/sched.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "kernel/timer.h"

// sched.lock held; called by an M that has just given up its P.
void checkdead(void)
{
    ASSERT(spin_holding(&sched.lock));
    // nexternal before irqready: an interrupt handler pushes on irqready and
    // only then uncounts the G, so one of the two loads sees it.
    if (__atomic_load_n(&sched.nexternal, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&sched.nsyscall, __ATOMIC_ACQUIRE) || timers_pending())
        return;
    if (sched.stw_pending || sched.npidle != sched.gomaxprocs || sched.runq_size ||
        __atomic_load_n(&sched.irqready, __ATOMIC_ACQUIRE))
        return;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++)
        if (!runq_empty(&allp[i]->runq))
            return;
    spin_unlock(&sched.lock);
    arch_stop_others();
    console_panic_mode();
    kprintf("fatal error: all goroutines are asleep - deadlock!\n\n");
    g_dump_all();
    trace_dump();
    arch_exit(ARCH_EXIT_FATAL);
}
