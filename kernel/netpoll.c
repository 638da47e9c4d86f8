// SPDX-License-Identifier: MIT
// The network poller, after Go's src/runtime/netpoll.go.
//
// Go's netpoller turns readiness of file descriptors into runnable
// goroutines: a G that would block on a socket parks on the socket's poll
// descriptor, holding no M, and whoever learns that the socket is ready
// (an M in epoll_wait, or the scheduler polling epoll) readies it. goro has
// no epoll: what learns of readiness is the network stack itself, lwIP,
// as it processes frames a device received (net/stack.c). So the "poll"
// here is a call into the stack, registered by it (netpoll_register), that
// does the pending work and reports the goroutines it made ready; and the
// "descriptor is ready" event is the stack's own callback (a segment
// arrived, the send window opened), which calls netpoll_ready.
//
// Poll descriptors (struct polldesc, kernel/netpoll.h) are Go's: two
// binary semaphores rg and wg with the states 0, PD_READY, PD_WAIT and a
// G, moved only by CAS, plus deadlines with a timer each, under pd->lock,
// summarized in pd->info for the waiter, which takes no lock. A G waits
// (netpoll_wait) by moving its semaphore 0 -> PD_WAIT, checking pd->info
// again (a close or deadline may have come meanwhile: the other side
// writes info, then reads the semaphore), and parking; gopark's commit,
// on g0 once the G is saved, moves PD_WAIT -> G, and fails (the G runs on)
// if readiness or a wake-up got there first. The readier CASes the G (or
// PD_WAIT) away and readies what it took. Exactly one side wins each CAS,
// so a readiness is never lost and a G is never readied twice.
//
// A G waiting for a device vector (irq_wait, kernel/irqwait.c) is the
// netpoller's as well: the vector's handler hands it here
// (netpoll_ready_irq) instead of readying it, and the poll makes it
// runnable with the stack's, so there is one way interrupts ready Gs.
//
// Where the work comes from, and who does it:
//
//   1. A device interrupts. A vector with irq_wait waiters: its handler
//      takes them off the line and pushes each G on np.irqready, then
//      calls netpoll_wake. A NIC: its driver calls the stack's ready
//      function (drivers/net/netdev.h), which notes the queue and posts
//      the work for the stack lock's holder (net/stack.c); if the lock
//      was held, the holder does the work before it lets go, and nothing
//      else happens here; if it was free, the stack calls netpoll_wake.
//      netpoll_wake marks the work pending (np.work, seq-cst), then
//      calls wakep().
//   2. wakep, if a P is idle and no M spins, hands an idle P to an idle M
//      and sends it an IPI. An idle M halts with interrupts on (stopm), so
//      either the device's own interrupt (its vector aimed at this core)
//      or the IPI wakes it: this is Go's netpoll(delay), an M that has
//      nothing to run waiting until a packet (or its next timer) comes.
//   3. A poll takes np.work by exchange (one M polls per posting), then
//      np.irqready whole (reversed: oldest first), then calls the stack's
//      poll, which appends the Gs of the descriptors it readied. The Gs
//      are marked runnable and injected as Go's injectglist does: onto
//      idle Ps, waking their Ms, the rest to the poller's own queue.
//   4. find_runnable polls (netpoll_find) after the local and global
//      queues and before stealing, and first, with the global queue,
//      every 61st time slice; it runs the oldest G found. An M giving up
//      its P re-checks np.work after its seq-cst pidleput and nmspinning
//      decrement, as it re-checks the run queues (proc.c's step 3): the
//      post in step 1 and that re-check are the two halves of the same
//      Dekker pair as wakep's.
//   5. With every P busy, wakep starts nobody. Pending work counts as
//      work waiting for a time slice (others_runnable), so each P's own
//      quantum check ends its G's slice, and the preemption polls on its
//      way out (netpoll_inject) before its G goes to the global queue:
//      the readied Gs run next. sysmon is the backstop (a P whose timer
//      check did not act): at each look it polls when the work has waited
//      through a whole look, or nobody has polled for 10 ms (Go's rule),
//      and injects with no P: idle Ps, then the global queue. So a G
//      readied by an interrupt runs within two time slices of it, even
//      when every P runs a loop that makes no call.
//
// The stack's poll never waits: it takes the stack lock only if it is free
// (if not, its holder does the work, step 1), which is what lets sysmon
// call it from an interrupt handler and find_runnable from g0.
//
// Deadlines are Go's: a timer per direction, armed while the deadline is
// in the future; when it fires it marks the deadline expired in info and
// wakes the waiter. Go tells a stale timer (the deadline moved while its
// function was starting) by a sequence number; here the function compares
// the deadline it finds with the time it runs: a deadline later than now
// is not this timer's to expire.
//
// Counting: a G parked on a descriptor or a vector counts in
// sched.nexternal (the deadlock detector's "something outside will ready
// it", as Go's checkdead stays quiet while an M waits in the netpoller for
// netpollWaiters) from its commit until it is on a run queue, np.irqready
// included; the count drops after the G is queued, so checkdead never sees
// it on neither. Pending work with no waiter keeps nobody from a deadlock
// report, as in Go: it can ready no G.
//
// np.irqready is a Treiber stack: handlers push with a CAS, a poll takes
// it whole with one exchange and nothing pops singly, so there is no ABA;
// a pushed G stays G_WAITING until the taker marks it runnable.
//
// Locks: pd->lock (LOCK_RANK_POLLDESC) guards closing and the deadlines;
// the deadline timers' function takes it. Changing a timer (timer_modify,
// timer_stop) may wait for that function to finish, so it is never done
// under pd->lock, but under pd->dlock (LOCK_RANK_PDDEADLINE, taken first),
// which serializes every change of pd's timers, so that the last deadline
// set is the one its timer is armed for. Goroutines are readied after
// both are released; the stack lock is never held with either.
#include "kernel/netpoll.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "lib/panic.h"

#define NETPOLL_MAX_POLLERS 4

static struct {
    // each slot written once by netpoll_register (release), read by
    // pollers (acquire); npollers only grows
    netpoll_fn poll[NETPOLL_MAX_POLLERS];
    uint32_t npollers;
    // atomic, any core
    uint32_t work;              // work nobody has taken (step 1)
    struct g *irqready;         // Gs handed by interrupts, newest first (step 1)
    uint32_t seen_at_look;      // work was pending at sysmon's previous look
    uint64_t lastpoll;          // TSC of the last poll's start
    uint32_t waiters;           // Gs parked on the netpoller (Go's netpollWaiters)
    uint64_t sysmon_polls;      // sysmon's polls that injected Gs (tests read it)
} np;

// ---- poll descriptors -------------------------------------------------------

enum {
    POLL_INFO_CLOSING = 1,
    POLL_INFO_EXPIRED_READ = 2,
    POLL_INFO_EXPIRED_WRITE = 4,
};

static uintptr_t *sema_of(struct polldesc *pd, int mode)
{
    ASSERT(mode == NETPOLL_READ || mode == NETPOLL_WRITE);
    return mode == NETPOLL_READ ? &pd->rg : &pd->wg;
}

// pd->lock held: info from closing, rd and wd (Go's publishInfo). Called
// after any change to them and before any netpollunblock, which is what
// keeps a waiter from parking anew (it checks info after PD_WAIT).
static void publish_info(struct polldesc *pd)
{
    ASSERT(spin_holding(&pd->lock));
    uint32_t info = (pd->closing ? POLL_INFO_CLOSING : 0) |
                    (pd->rd == PD_EXPIRED ? POLL_INFO_EXPIRED_READ : 0) |
                    (pd->wd == PD_EXPIRED ? POLL_INFO_EXPIRED_WRITE : 0);
    __atomic_store_n(&pd->info, info, __ATOMIC_SEQ_CST);   // then the semaphore's read: pairs with netpollblock's PD_WAIT CAS
}

// Go's netpollcheckerr.
static int check_err(const struct polldesc *pd, int mode)
{
    uint32_t info = __atomic_load_n(&pd->info, __ATOMIC_SEQ_CST);     // after the PD_WAIT CAS: pairs with publish_info
    if (info & POLL_INFO_CLOSING)
        return NETPOLL_ERR_CLOSING;
    if ((mode == NETPOLL_READ && (info & POLL_INFO_EXPIRED_READ)) ||
        (mode == NETPOLL_WRITE && (info & POLL_INFO_EXPIRED_WRITE)))
        return NETPOLL_ERR_TIMEOUT;
    return NETPOLL_OK;
}

int netpoll_check(const struct polldesc *pd, int mode)
{
    return check_err(pd, mode);
}

static void deadline_fire(struct timer *t, uint64_t now);

void netpoll_open(struct polldesc *pd)
{
    *pd = (struct polldesc){ .closing = false };
    spin_init(&pd->lock, "polldesc", LOCK_RANK_POLLDESC);
    spin_init(&pd->dlock, "polldesc deadline", LOCK_RANK_PDDEADLINE);
    pd->rt.f = pd->wt.f = deadline_fire;
    pd->rt.arg = pd->wt.arg = pd;
}

int netpoll_reset(struct polldesc *pd, int mode)
{
    int err = check_err(pd, mode);
    if (err)
        return err;
    __atomic_store_n(sema_of(pd, mode), 0, __ATOMIC_RELAXED);       // only its one waiter writes 0 here (Go's pollReset)
    return NETPOLL_OK;
}

// On g0, gp saved and G_WAITING (gopark's unlock): commits the park, or
// calls it off when the semaphore moved meanwhile (Go's netpollblockcommit).
static bool block_commit(struct g *gp, void *arg)
{
    uintptr_t *gpp = arg, want = PD_WAIT;
    // Counted before the G is visible, so a readier's decrement cannot
    // come first (undone below if the park is called off).
    netpoll_waiter_add();
    if (__atomic_compare_exchange_n(gpp, &want, (uintptr_t)gp, false, __ATOMIC_RELEASE,   // pairs with netpollunblock's acquire load
                                    __ATOMIC_RELAXED))             // lost: readiness, a deadline or close came first
        return true;
    netpoll_waiter_cancel();
    return false;
}

// Go's netpollblock: true if I/O readiness came, false after a close or
// deadline (or, with waitio, only readiness counts).
static bool netpollblock(struct polldesc *pd, int mode, bool waitio)
{
    uintptr_t *gpp = sema_of(pd, mode);
    for (;;) {
        uintptr_t want = PD_READY;
        if (__atomic_compare_exchange_n(gpp, &want, 0, false, __ATOMIC_ACQUIRE,   // consumes readiness: pairs with netpollunblock's release
                                        __ATOMIC_RELAXED))                         // not ready: try to wait
            return true;
        want = 0;
        if (__atomic_compare_exchange_n(gpp, &want, PD_WAIT, false, __ATOMIC_SEQ_CST,   // then info's read: pairs with publish_info
                                        __ATOMIC_RELAXED))                               // moved: look again
            break;
        uintptr_t v = __atomic_load_n(gpp, __ATOMIC_RELAXED);      // relaxed: only checked for corruption
        if (v != PD_READY && v != 0)
            panic("netpoll: two goroutines wait on one poll descriptor for '%c'", mode);
    }
    if (waitio || check_err(pd, mode) == NETPOLL_OK)
        gopark(block_commit, gpp, mode == NETPOLL_READ ? "IO wait (read)" : "IO wait (write)", pd);
    // Readiness may have come after the park was called off: keep it.
    uintptr_t old = __atomic_exchange_n(gpp, 0, __ATOMIC_ACQUIRE);   // pairs with netpollunblock's release
    if (old > PD_WAIT)
        panic("netpoll: poll descriptor %p corrupted ('%c' is %p after a wait)", (void *)pd, mode, (void *)old);
    return old == PD_READY;
}

// Go's netpollunblock: moves the semaphore to PD_READY (ioready) or 0, and
// returns the G that was parked on it, if any. Any context.
static struct g *netpollunblock(struct polldesc *pd, int mode, bool ioready)
{
    uintptr_t *gpp = sema_of(pd, mode);
    uintptr_t old = __atomic_load_n(gpp, __ATOMIC_ACQUIRE);   // pairs with block_commit's release (the G's record)
    for (;;) {
        if (old == PD_READY)
            return 0;
        if (old == 0 && !ioready)
            return 0;       // a deadline or close with nobody waiting: the waiter checks info
        uintptr_t new = ioready ? PD_READY : 0;
        if (__atomic_compare_exchange_n(gpp, &old, new, false, __ATOMIC_ACQ_REL,   // release: the readiness; acquire: the G
                                        __ATOMIC_ACQUIRE))                          // lost: old reloaded, as above
            return old == PD_WAIT ? 0 : (struct g *)old;
    }
}

static void list_push(struct netpoll_list *l, struct g *gp)
{
    gp->schedlink = 0;
    if (l->tail)
        l->tail->schedlink = gp;
    else
        l->head = gp;
    l->tail = gp;
    l->n++;
}

static struct g *list_pop(struct netpoll_list *l)
{
    struct g *gp = l->head;
    if (gp) {
        l->head = gp->schedlink;
        if (!l->head)
            l->tail = 0;
        l->n--;
    }
    return gp;
}

// gp, taken from a descriptor, is runnable now. A goroutine or g0 with a
// P. Uncounted after it is queued (see the essay).
static void uncount(uint32_t n);

static void ready_one(struct g *gp, bool next)
{
    goready(gp, next);
    uncount(1);
}

int netpoll_wait(struct polldesc *pd, int mode)
{
    int err = check_err(pd, mode);
    if (err)
        return err;
    while (!netpollblock(pd, mode, false)) {
        err = check_err(pd, mode);
        if (err)
            return err;
        // A deadline fired and was reset before this G ran: as Go, try again.
    }
    return NETPOLL_OK;
}

// A nanotime() deadline as pd holds it: 0 (none), PD_EXPIRED (not in
// the future), PD_NEVER (beyond the TSC's range) or a TSC value.
static uint64_t deadline_tsc(uint64_t deadline)
{
    if (!deadline)
        return 0;
    uint64_t now = nanotime();
    if (deadline <= now)
        return PD_EXPIRED;
    uint64_t when = timer_deadline_ns(deadline - now);
    return when >= PD_NEVER ? PD_NEVER : when;
}

// pd->dlock held: the timer of one direction follows its deadline d.
static void arm(struct timer *t, uint64_t d)
{
    if (d && d < PD_NEVER)
        timer_modify(t, d, 0);
    else
        timer_stop(t);
}

void netpoll_set_deadline(struct polldesc *pd, uint64_t deadline, int mode)
{
    ASSERT(mode == NETPOLL_READ || mode == NETPOLL_WRITE || mode == NETPOLL_READ + NETPOLL_WRITE);
    uint64_t d = deadline_tsc(deadline);
    spin_lock(&pd->dlock);
    spin_lock(&pd->lock);
    if (pd->closing) {
        spin_unlock(&pd->lock);
        spin_unlock(&pd->dlock);
        return;
    }
    bool rchange = mode != NETPOLL_WRITE && pd->rd != d;
    bool wchange = mode != NETPOLL_READ && pd->wd != d;
    if (rchange)
        pd->rd = d;
    if (wchange)
        pd->wd = d;
    publish_info(pd);
    // A deadline already past wakes the waiter now.
    struct g *rg = pd->rd == PD_EXPIRED ? netpollunblock(pd, NETPOLL_READ, false) : 0;
    struct g *wg = pd->wd == PD_EXPIRED ? netpollunblock(pd, NETPOLL_WRITE, false) : 0;
    spin_unlock(&pd->lock);
    if (rchange)
        arm(&pd->rt, d);
    if (wchange)
        arm(&pd->wt, d);
    spin_unlock(&pd->dlock);
    if (rg)
        ready_one(rg, true);
    if (wg)
        ready_one(wg, true);
}

// A deadline's timer (g0 with a P, interrupts off). Stale when the
// deadline it finds is not due by now: it moved (see the essay).
static void deadline_fire(struct timer *t, uint64_t now)
{
    struct polldesc *pd = t->arg;
    bool read = t == &pd->rt;
    struct g *gp = 0;
    spin_lock(&pd->lock);
    uint64_t *d = read ? &pd->rd : &pd->wd;
    if (!pd->closing && *d && *d < PD_NEVER && *d <= now) {
        *d = PD_EXPIRED;
        publish_info(pd);
        gp = netpollunblock(pd, read ? NETPOLL_READ : NETPOLL_WRITE, false);
    }
    spin_unlock(&pd->lock);
    if (gp)
        ready_one(gp, false);
}

void netpoll_unblock(struct polldesc *pd)
{
    spin_lock(&pd->lock);
    ASSERT(!pd->closing);
    pd->closing = true;
    publish_info(pd);
    struct g *rg = netpollunblock(pd, NETPOLL_READ, false);
    struct g *wg = netpollunblock(pd, NETPOLL_WRITE, false);
    spin_unlock(&pd->lock);
    if (rg)
        ready_one(rg, true);
    if (wg)
        ready_one(wg, true);
}

void netpoll_close(struct polldesc *pd)
{
    ASSERT(pd->closing);
    // timer_stop waits for a function still running: after it, no timer
    // of pd's runs, and none is started again (closing stops deadlines).
    spin_lock(&pd->dlock);
    timer_stop(&pd->rt);
    timer_stop(&pd->wt);
    spin_unlock(&pd->dlock);
    uintptr_t rg = __atomic_load_n(&pd->rg, __ATOMIC_RELAXED);     // relaxed: a check; nobody may wait any more
    uintptr_t wg = __atomic_load_n(&pd->wg, __ATOMIC_RELAXED);     // relaxed: as rg
    if (rg > PD_READY || wg > PD_READY)
        panic("netpoll: closing poll descriptor %p with a goroutine still blocked on it", (void *)pd);
}

void netpoll_ready(struct netpoll_list *ready, struct polldesc *pd, int mode)
{
    struct g *rg = mode != NETPOLL_WRITE ? netpollunblock(pd, NETPOLL_READ, true) : 0;
    struct g *wg = mode != NETPOLL_READ ? netpollunblock(pd, NETPOLL_WRITE, true) : 0;
    if (rg)
        list_push(ready, rg);
    if (wg)
        list_push(ready, wg);
}

void netpoll_list_move(struct netpoll_list *dst, struct netpoll_list *src)
{
    if (!src->head)
        return;
    if (dst->tail)
        dst->tail->schedlink = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    dst->n += src->n;
    *src = (struct netpoll_list){ 0 };
}

void netpoll_ready_list(struct netpoll_list *l, bool next)
{
    struct g *gp;
    while ((gp = list_pop(l)))
        ready_one(gp, next && !l->head);    // the last one readied takes runnext
}

uint32_t netpoll_waiters(void)
{
    return __atomic_load_n(&np.waiters, __ATOMIC_RELAXED);         // a snapshot
}

// ---- the poll ---------------------------------------------------------------

void netpoll_register(netpoll_fn poll)
{
    static struct spinlock lock = SPINLOCK_INIT("netpoll register", LOCK_RANK_POLLDESC);
    spin_lock(&lock);
    uint32_t n = np.npollers;
    ASSERT(n < NETPOLL_MAX_POLLERS);
    np.poll[n] = poll;
    __atomic_store_n(&np.npollers, n + 1, __ATOMIC_RELEASE);       // publishes the slot: pairs with poll_now's acquire
    spin_unlock(&lock);
}

void netpoll_wake(void)
{
    __atomic_store_n(&np.work, 1, __ATOMIC_SEQ_CST);               // step 1: after the hand-over, before wakep's fence and reads
    wakep();
}

bool netpoll_pending(void)
{
    return __atomic_load_n(&np.work, __ATOMIC_SEQ_CST);             // after the caller's pidleput and nmspinning decrement: step 4's re-check
}

void netpoll_waiter_add(void)
{
    // Relaxed: the M reaches checkdead only after giving its P back under
    // sched.lock, which publishes the increment.
    __atomic_fetch_add(&sched.nexternal, 1, __ATOMIC_RELAXED);     // relaxed: see above
    __atomic_fetch_add(&np.waiters, 1, __ATOMIC_RELAXED);          // a count for netpoll_waiters only
}

void netpoll_waiter_cancel(void)
{
    __atomic_fetch_sub(&sched.nexternal, 1, __ATOMIC_RELAXED);     // relaxed: never published
    __atomic_fetch_sub(&np.waiters, 1, __ATOMIC_RELAXED);          // a count for netpoll_waiters only
}

void netpoll_ready_irq(struct g *gp)
{
    ASSERT(__atomic_load_n(&gp->status, __ATOMIC_ACQUIRE) == G_WAITING);   // pairs with park_m's release
    struct g *head = __atomic_load_n(&np.irqready, __ATOMIC_RELAXED);     // a first guess; the CAS checks it
    do
        gp->schedlink = head;
    while (!__atomic_compare_exchange_n(&np.irqready, &head, gp, true, __ATOMIC_RELEASE,   // publishes schedlink: pairs with take_irqready's acquire
                                        __ATOMIC_RELAXED));                                 // lost: head reloaded, push again
}

// Step 3: the Gs interrupts handed over, appended to l oldest first.
static void take_irqready(struct netpoll_list *l)
{
    if (!__atomic_load_n(&np.irqready, __ATOMIC_RELAXED))          // a hint; the exchange decides
        return;
    struct g *gp = __atomic_exchange_n(&np.irqready, 0, __ATOMIC_ACQUIRE);   // pairs with netpoll_ready_irq's release CAS
    struct netpoll_list fifo = { .tail = gp };
    while (gp) {                    // newest first -> oldest first
        struct g *next = gp->schedlink;
        gp->schedlink = fifo.head;
        fifo.head = gp;
        fifo.n++;
        gp = next;
    }
    netpoll_list_move(l, &fifo);
}

// Step 3: takes the pending work (one poller per posting) and polls.
static bool poll_now(struct netpoll_list *l)
{
    if (!__atomic_load_n(&np.work, __ATOMIC_RELAXED) ||            // a hint; the exchange decides
        !__atomic_exchange_n(&np.work, 0, __ATOMIC_ACQUIRE))       // pairs with netpoll_wake's seq-cst store
        return false;
    __atomic_store_n(&np.lastpoll, arch_cycles(), __ATOMIC_RELAXED);   // sysmon's 10 ms rule only
    take_irqready(l);
    uint32_t n = __atomic_load_n(&np.npollers, __ATOMIC_ACQUIRE);  // pairs with netpoll_register's release
    for (uint32_t i = 0; i < n; i++)
        np.poll[i](l);
    return l->head != 0;
}

// The Gs of l marked runnable (each G_WAITING, taken from its descriptor
// or np.irqready by this M); returns its head, linked by schedlink as
// injectglist takes it, and empties l.
static struct g *make_runnable(struct netpoll_list *l)
{
    for (struct g *gp = l->head; gp; gp = gp->schedlink) {
        ASSERT(__atomic_load_n(&gp->status, __ATOMIC_ACQUIRE) == G_WAITING);   // pairs with park_m's release
        trace_g(TR_GO_UNPARK, gp);
        __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);      // published by the queue's release
    }
    struct g *head = l->head;
    *l = (struct netpoll_list){ 0 };
    return head;
}

// n Gs a poll took are queued (the one a poller runs is in its hand).
static void uncount(uint32_t n)
{
    __atomic_fetch_sub(&np.waiters, n, __ATOMIC_RELAXED);           // a count for netpoll_waiters only
    __atomic_fetch_sub(&sched.nexternal, n, __ATOMIC_RELEASE);      // after they are queued: pairs with checkdead's acquire
}

struct g *netpoll_find(struct p *pp)
{
    struct netpoll_list l = { 0 };
    if (!poll_now(&l))
        return 0;
    uint32_t n = l.n;
    struct g *first = make_runnable(&l);
    struct g *rest = first->schedlink;
    first->schedlink = 0;
    if (rest)
        injectglist(rest, pp);
    uncount(n);
    return first;
}

bool netpoll_inject(struct p *pp)
{
    ASSERT(pp && getm()->p == pp);
    struct netpoll_list l = { 0 };
    if (!poll_now(&l))
        return false;
    uint32_t n = l.n;
    injectglist(make_runnable(&l), pp);
    uncount(n);
    return true;
}

bool netpoll_sysmon(uint64_t now)
{
    bool pending = __atomic_load_n(&np.work, __ATOMIC_RELAXED);     // a hint: poll_now's exchange decides
    bool waited = __atomic_exchange_n(&np.seen_at_look, pending, __ATOMIC_RELAXED);   // sysmon's own memory: only sysmon writes it
    if (!pending)
        return false;
    uint64_t last = __atomic_load_n(&np.lastpoll, __ATOMIC_RELAXED);  // a time, nothing behind it
    if (!waited && now - last < arch_ns_to_cycles(10000000))
        return false;
    struct netpoll_list l = { 0 };
    if (!poll_now(&l))
        return false;
    uint32_t n = l.n;
    injectglist(make_runnable(&l), 0);
    uncount(n);
    __atomic_fetch_add(&np.sysmon_polls, 1, __ATOMIC_RELAXED);     // a count tests read
    return true;
}

uint64_t netpoll_sysmon_polls(void)
{
    return __atomic_load_n(&np.sysmon_polls, __ATOMIC_RELAXED);    // a snapshot
}
