// SPDX-License-Identifier: MIT
// Deadlock detection: when every M is idle (no core runs a G, a blocking
// call or the scheduler: Go's checkdead counts running Ms the same way),
// every P is idle, no G is queued anywhere and nothing outside the
// scheduler (a timer, an interrupt) can ready one, no G can ever run again.
//
// Counting running Ms, not only the Gs in blocking calls, matters at the
// edges: a G leaving a call (exitsyscall) stops counting as in one before
// it holds a P or sits on a queue, and its M is the only trace of it then.
//
// The netpoller's waiters: a G parked on a socket or in irq_wait counts
// (sched.nexternal) as something outside the scheduler will ready, as Go
// stays quiet while an M waits in the network poller: while one waits,
// there is no deadlock report, and the machine halts until the interrupt
// comes. The count drops only once the poll has queued the G. A driver
// that cannot count on its device answering bounds the wait with
// irq_wait_timeout.
#include "kernel/sched.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "kernel/timer.h"

// sched.lock held; called by an M that has just given up its P.
void checkdead(void)
{
    ASSERT(spin_holding(&sched.lock));
    // The caller is on the idle list already; any other M off it is running.
    if (sched.nmidle < sched.ncpu)
        return;
    // A poll queues a G before it uncounts it, so one of the two looks
    // (this count, the queues below) sees it.
    if (__atomic_load_n(&sched.nexternal, __ATOMIC_ACQUIRE) ||     // pairs with the netpoller's release decrement
        timers_pending())
        return;
    if (sched.stw_pending || sched.npidle != sched.gomaxprocs || sched.runq_size)
        return;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++)
        if (!runqempty(&allp[i]->runq))
            return;
    spin_unlock(&sched.lock);
    arch_stop_others();
    console_panic_mode();
    kprintf("fatal error: all goroutines are asleep - deadlock!\n\n");
    g_dump_all();
    trace_dump();
    arch_exit(ARCH_EXIT_FATAL);
}
