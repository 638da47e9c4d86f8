// SPDX-License-Identifier: MIT
// irq_wait: a goroutine parks until an interrupt fires, and the interrupt
// readies it. Such a G is the network poller's (kernel/netpoll.c): it
// waits on a device vector as a G in Go's netpoller waits on a file
// descriptor, and its interrupt hands it to the netpoller, whose poll
// makes it runnable, as it does a G whose socket became ready. So there
// is one way interrupts ready goroutines, with the netpoller's
// guarantees (who polls, and a G readied while every P is busy runs
// within two time slices).
//
// One line per device vector. A parked G is described by a waiter record
// on its own stack (Go's sudog): it lives until the G resumes, and the G
// resumes only after whoever ended the wait is done with the record.
//
// Invariants, under line->lock:
//   - waiters != NULL implies pending == 0. An interrupt either hands
//     every waiter to the netpoller or, when there is none, is counted in
//     pending; a G never parks while pending > 0.
//   - every waiter's G is G_WAITING with its context saved, and counted
//     as the netpoller's waiter (sched.nexternal: the deadlock detector
//     knows that something outside the scheduler will ready it) from
//     before it is on the list until a poll has queued it.
//
// The protocol:
//   1. irq_wait takes pending if it is non-zero and returns at once: an
//      interrupt that fired with nobody waiting is not lost.
//   2. Otherwise it parks (gopark). On g0, after the G's context is saved
//      and it is G_WAITING, irqwait_park takes the lock and looks at
//      pending again (an interrupt may have come after step 1); if there
//      is one the park is called off and the G runs on. If not, it counts
//      the G as a netpoller waiter and publishes the record on the list.
//   3. The handler, on whatever core the interrupt reaches, runs the
//      driver's hook (which quiets the device), then under the lock takes
//      the whole list, or counts pending when it is empty. Outside the
//      lock it hands each G to the netpoller (netpoll_ready_irq), in the
//      order they parked, then wakes it once (netpoll_wake). The
//      netpoller's poll marks them runnable, queues them and uncounts
//      them (netpoll.c's steps 3-5), so the count never drops while a G
//      is on no list.
//
// irq_wait_timeout adds a timer to the record, started before the G
// parks. Whoever takes the record off the list under line->lock ends the
// wait: the handler (n = 1) or the timer (timeout_fire, n = 0). A timer
// that fires before the G is on the list marks the record timed out, and
// irqwait_park then calls the park off. The G stops the timer once it
// runs again; timer_stop waits for a timer function still running, so the
// record (on the G's stack) outlives every use of it.
//
// Lock order: line->lock is a leaf. The hook runs with no line lock held;
// the timer function takes line->lock with no timer lock held.
#include <limits.h>
#include "kernel/irqwait.h"
#include "lib/panic.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "kernel/netpoll.h"

struct irqwaiter {
    struct timer t;             // irq_wait_timeout's; first: its function gets the record
    struct irqline *line;       // set by the G before it parks
    // line->lock held
    struct g *gp;               // set by irqwait_park
    struct irqwaiter *next;
    bool timed_out;             // the timer ended the wait (or came before the park)
    uint32_t n;                 // interrupts consumed: written by whoever ends the wait
};

struct irqline {
    struct spinlock lock;
    // line->lock held
    struct irqwaiter *waiters;
    uint32_t nwaiting;
    uint32_t pending;           // interrupts that found no waiter, saturating
    bool attached;              // also read atomically by irq_wait (acquire)
    // written once by irq_attach (release), read by the handler (acquire)
    irq_hook_fn hook;
    // atomic, relaxed: statistics only
    uint64_t count;
};

static struct irqline lines[IRQ_NVEC] = {
    [0 ... IRQ_NVEC - 1] = { .lock = SPINLOCK_INIT("irqline", LOCK_RANK_IRQLINE) },
};

static struct irqline *line_of(uint8_t vector)
{
    if (vector < IRQ_VEC_BASE || vector > IRQ_VEC_LAST)
        return 0;
    return &lines[vector - IRQ_VEC_BASE];
}

// Interrupt context, interrupts off. Step 3.
static void irqline_intr(uint8_t vector)
{
    ASSERT(!irqs_enabled());
    struct irqline *l = line_of(vector);
    irq_hook_fn hook = __atomic_load_n(&l->hook, __ATOMIC_ACQUIRE);  // pairs with irq_attach's release
    if (hook)
        hook(vector);
    spin_lock(&l->lock);
    struct irqwaiter *w = l->waiters;
    l->waiters = 0;
    l->nwaiting = 0;
    if (!w && l->pending != UINT32_MAX)
        l->pending++;
    // Counted once it is a waiter's or pending, never before: whoever sees
    // the count move can take the interrupt at once (the tests wait on it).
    __atomic_fetch_add(&l->count, 1, __ATOMIC_RELEASE);    // pairs with irq_count's acquire
    spin_unlock(&l->lock);
    if (!w)
        return;
    // The list is newest first: reversed, the Gs are handed over in the
    // order they parked, which is the order the netpoller queues them in.
    struct irqwaiter *fifo = 0;
    while (w) {
        struct irqwaiter *next = w->next;
        w->next = fifo;
        fifo = w;
        w = next;
    }
    while (fifo) {
        struct irqwaiter *next = fifo->next;
        struct g *gp = fifo->gp;
        fifo->n = 1;
        netpoll_ready_irq(gp);  // fifo may be gone from here on: gp can run and return
        fifo = next;
    }
    netpoll_wake();
}

int irq_attach(uint8_t vector, irq_hook_fn hook)
{
    struct irqline *l = line_of(vector);
    if (!l)
        return -1;
    spin_lock(&l->lock);
    bool ok = !l->attached || l->hook == hook;
    if (ok && !l->attached) {
        __atomic_store_n(&l->hook, hook, __ATOMIC_RELEASE);    // pairs with irqline_intr's acquire
        arch_set_irq_handler(vector, irqline_intr);
        __atomic_store_n(&l->attached, true, __ATOMIC_RELEASE); // pairs with irq_wait's acquire
    }
    spin_unlock(&l->lock);
    return ok ? 0 : -1;
}

static uint32_t take_pending(struct irqline *l)
{
    spin_lock(&l->lock);
    uint32_t n = l->pending;
    l->pending = 0;
    spin_unlock(&l->lock);
    return n;
}

// g0, interrupts off, gp saved and G_WAITING (park_m). Step 2.
static bool irqwait_park(struct g *gp, void *arg)
{
    ASSERT(!irqs_enabled());
    struct irqwaiter *w = arg;
    struct irqline *l = w->line;
    spin_lock(&l->lock);
    if (l->pending) {
        w->n = l->pending;
        l->pending = 0;
        spin_unlock(&l->lock);
        return false;
    }
    if (w->timed_out) {         // the timeout came first: n stays 0
        spin_unlock(&l->lock);
        return false;
    }
    w->gp = gp;
    netpoll_waiter_add();       // before the record is visible: the poll's uncount comes after
    w->next = l->waiters;
    l->waiters = w;
    l->nwaiting++;
    spin_unlock(&l->lock);
    return true;
}

// g0 with a P (a timer function): irq_wait_timeout's time is up. The
// record leaves the line's list here, if the handler has not taken it
// already; before the park it is only marked.
static void timeout_fire(struct timer *t, uint64_t now)
{
    (void)now;
    struct irqwaiter *w = (struct irqwaiter *)t;
    struct irqline *l = w->line;
    struct g *gp = 0;
    spin_lock(&l->lock);
    struct irqwaiter **link = &l->waiters;
    while (*link && *link != w)
        link = &(*link)->next;
    if (*link) {
        *link = w->next;
        l->nwaiting--;
        gp = w->gp;
    }
    if (*link || !w->gp)
        w->timed_out = true;
    spin_unlock(&l->lock);
    if (gp) {
        gp->schedlink = 0;
        struct netpoll_list ready = { .head = gp, .tail = gp, .n = 1 };
        netpoll_ready_list(&ready, true);   // queued, then uncounted as a waiter
    }
}

static int wait(struct irqline *l, bool timed, uint64_t ns)
{
    uint32_t n = take_pending(l);
    if (n)
        return n > INT_MAX ? INT_MAX : (int)n;
    struct irqwaiter w = { .line = l };
    if (timed) {
        w.t.when = timer_deadline_ns(ns);
        w.t.f = timeout_fire;
        timer_start(&w.t);
    }
    gopark(irqwait_park, &w, timed ? "irq wait (timed)" : "irq wait", l);
    if (timed)
        timer_stop(&w.t);       // returns once timeout_fire is done with w
    n = w.n;
    return n > INT_MAX ? INT_MAX : (int)n;
}

int irq_wait(uint8_t vector)
{
    struct irqline *l = line_of(vector);
    if (!l || !__atomic_load_n(&l->attached, __ATOMIC_ACQUIRE))    // pairs with irq_attach's release
        return -1;
    return wait(l, false, 0);
}

int irq_wait_timeout(uint8_t vector, uint64_t ns)
{
    struct irqline *l = line_of(vector);
    if (!l || !__atomic_load_n(&l->attached, __ATOMIC_ACQUIRE))    // pairs with irq_attach's release
        return -1;
    return wait(l, true, ns);
}

uint32_t irq_take_pending(uint8_t vector)
{
    struct irqline *l = line_of(vector);
    return l ? take_pending(l) : 0;
}

uint64_t irq_count(uint8_t vector)
{
    struct irqline *l = line_of(vector);
    return l ? __atomic_load_n(&l->count, __ATOMIC_ACQUIRE) : 0;    // pairs with irqline_intr
}

uint32_t irq_nwaiting(uint8_t vector)
{
    struct irqline *l = line_of(vector);
    if (!l)
        return 0;
    spin_lock(&l->lock);
    uint32_t n = l->nwaiting;
    spin_unlock(&l->lock);
    return n;
}

int irq_raise(uint8_t vector, int core)
{
    if (vector < IRQ_VEC_SOFT_FIRST || vector > IRQ_VEC_SOFT_LAST || core < 0 ||
        core >= num_cpu())
        return -1;
    if (irq_attach(vector, 0) != 0)
        return -1;
    arch_send_ipi((uint32_t)core, vector);
    return 0;
}

uint64_t irq_raised(uint8_t vector)
{
    return irq_count(vector);
}
