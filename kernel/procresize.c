// SPDX-License-Identifier: MIT
// Stopping the world and changing gomaxprocs.
//
// stop_the_world takes every P: idle ones straight from the idle list, Ps
// whose G is in a blocking call by a CAS of their status (the call's
// exitsyscall then finds no P and queues the G), one sysmon has just
// taken from such a G when handoffp gets the lock (sysmon.c), one whose M
// entered a call just after that look in entersyscall_stw (sysmon.c),
// and running ones when
// their M next enters the scheduler (find_runnable sees sched.stw_pending
// and calls stw_stopm). So that a G that never calls the scheduler cannot
// hold the world up, every running P's core is sent a preemption IPI
// (preemptall, as Go's): its G is preempted to its P's queue, whatever
// else is runnable. The caller keeps its own P, marked stopped, and stays
// pinned until start_the_world, which resizes, hands Ps that have work to
// idle Ms and puts the rest on the idle list. One stop-the-world at a time:
// worldsema (Go's) makes a second caller wait, parked, for the first's
// start.
#include "kernel/sched.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "kernel/timer.h"

static mutex_t worldsema;

// sched.lock held, or not (a re-send: statuses are read racily then).
// Asks the core of every running P but the caller's to preempt its G; the
// core sees sched.stw_pending in its preemption check (preempt.c).
static void preemptall(struct m *self)
{
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        struct p *pp = allp[i];
        struct m *pm = __atomic_load_n(&pp->m, __ATOMIC_RELAXED);     // racy: a stale M only gets a spare IPI
        if (__atomic_load_n(&pp->status, __ATOMIC_RELAXED) == P_RUNNING && pm && pm != self)   // racy: a spare IPI at worst
            arch_send_ipi(pm->id, VEC_PREEMPT);
    }
}

// From a G. Returns with every other P stopped and the caller pinned
// (acquirem) until start_the_world.
void stop_the_world(const char *why)
{
    (void)why;
    struct m *mp = acquirem();
    bool in_call = !mp->p;
    releasem(mp);
    if (in_call)
        sched_fatal_without_p(why, __builtin_return_address(0));
    mutex_lock(&worldsema);         // may park: before the pin
    mp = acquirem();
    spin_lock(&sched.lock);
    ASSERT(!sched.stw_pending);
    // Pending before the look at the Ps in calls (Go sets gcwaiting first):
    // an M whose entersyscall stores P_SYSCALL after that look sees it and
    // stops its P itself (entersyscall_stw), once the counts below are set.
    __atomic_store_n(&sched.stw_pending, 1, __ATOMIC_SEQ_CST);     // pairs with entersyscall's, find_runnable's and preempt_check's loads
    uint32_t wait = sched.gomaxprocs - 1;
    mp->p->status = P_STOPPED;
    struct p *pp;
    while ((pp = pidleget())) {
        pp->status = P_STOPPED;
        wait--;
    }
    // A P handed to an idle M that has not woken to take it yet is taken
    // back, and the M goes back on the idle list: waiting for a halted core
    // to wake (a VM's vCPU thread to be scheduled) would only delay the
    // stop.
    for (uint32_t i = 0; i < sched.ncpu; i++) {
        struct m *om = &allm[i];
        pp = __atomic_exchange_n(&om->nextp, (struct p *)0, __ATOMIC_ACQUIRE);   // pairs with the handing M's release; the woken M's exchange loses
        if (!pp)
            continue;
        pp->status = P_STOPPED;
        wait--;
        if (om->nextspinning)
            __atomic_fetch_sub(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);     // it was counted for the M
        om->nextrelay = false;
        mput(om);
    }
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        uint32_t want = P_SYSCALL;
        pp = allp[i];
        if (__atomic_compare_exchange_n(&pp->status, &want, P_STOPPED, false, __ATOMIC_ACQ_REL,   // one of this, exitsyscall's, retake's and entersyscall_stw's CAS wins
                                        __ATOMIC_RELAXED)) {   // lost: not in a call (or taken)
            pp->syscalltick++;
            wait--;
        }
    }
    __atomic_store_n(&sched.stopwait, wait, __ATOMIC_RELAXED);     // published by sched.lock to the Ms that stop
    preemptall(mp);
    spin_unlock(&sched.lock);
    uint64_t resend = arch_cycles() + arch_ns_to_cycles(1000000);
    while (__atomic_load_n(&sched.stopwait, __ATOMIC_ACQUIRE)) {   // pairs with stw_stopm's release
        cpu_relax();
        if (arch_cycles() > resend) {
            preemptall(mp);         // a backstop: one IPI is enough unless an arch retry dropped it
            resend = arch_cycles() + arch_ns_to_cycles(1000000);
        }
    }
}

// Destroys P pp (id >= the new gomaxprocs): its Gs go to the global queue.
static void p_destroy(struct p *pp, struct p *heir)
{
    timers_move(pp, heir);
    struct g *gs[RUNQ_SIZE + 1];
    uint32_t n = runqdrain(&pp->runq, gs);
    globrunqputbatch(gs, n);
    g_free_list_move(pp);
    pp->status = P_DEAD;
    pp->m = 0;
}

// From the G that stopped the world (still pinned by stop_the_world).
void start_the_world(uint32_t nprocs)
{
    struct m *mp = getm();
    ASSERT(preempt_count() > 0 && __atomic_load_n(&sched.stw_pending, __ATOMIC_RELAXED));   // our own store
    static struct p *want[MAX_CPUS];    // one start_the_world at a time (worldsema)
    uint32_t nwant = 0;
    spin_lock(&sched.lock);
    uint32_t old = sched.gomaxprocs;
    for (uint32_t i = old; i < nprocs; i++) {
        allp[i]->id = i;
        allp[i]->globcheck = GLOBAL_CHECK_PERIOD;
        runq_init(&allp[i]->runq);
        allp[i]->status = P_STOPPED;
    }
    for (uint32_t i = nprocs; i < old; i++)
        p_destroy(allp[i], allp[0]);
    if (mp->p->id >= nprocs) {
        // Our own P is gone; continue with P0, whose M is parked.
        trace_event(TR_PROC_STOP, 0, mp->p->id);
        mp->p = 0;
        acquirep(mp, allp[0]);
    }
    mp->p->status = P_RUNNING;
    sched.gomaxprocs = nprocs;
    trace_event(TR_GOMAXPROCS, 0, nprocs);
    steal_order_reset(nprocs);
    for (uint32_t i = 0; i < nprocs; i++) {
        struct p *pp = allp[i];
        if (pp == mp->p)
            continue;
        pp->m = 0;
        if (runqempty(&pp->runq))
            pidleput(pp);
        else
            want[nwant++] = pp;
    }
    __atomic_store_n(&sched.stw_pending, 0, __ATOMIC_RELEASE);     // pairs with find_runnable's acquire
    // Ps with work wait on the idle list too until an M takes them, so
    // that startm may put them back there when no M is free.
    spin_unlock(&sched.lock);
    for (uint32_t i = 0; i < nwant; i++) {
        spin_lock(&sched.lock);
        struct m *nmp = mget();
        if (!nmp) {
            want[i]->status = P_IDLE;
            // cannot pidleput a P with work; leave it for stealing by making
            // its Gs global
            struct g *gs[RUNQ_SIZE + 1];
            uint32_t n = runqdrain(&want[i]->runq, gs);
            globrunqputbatch(gs, n);
            pidleput(want[i]);
            spin_unlock(&sched.lock);
            continue;
        }
        nmp->nextspinning = false;
        __atomic_store_n(&nmp->nextp, want[i], __ATOMIC_RELEASE);  // pairs with stopm's acquire
        spin_unlock(&sched.lock);
        arch_send_ipi(nmp->id, VEC_WAKE);
    }
    wakep();
    releasem(mp);               // stop_the_world's pin
    mutex_unlock(&worldsema);
}

int gomaxprocs(int n)
{
    int old = (int)__atomic_load_n(&sched.gomaxprocs, __ATOMIC_RELAXED);   // racy, as Go's: worldsema orders the changes
    if (n <= 0 || n == old)
        return old;
    if ((uint32_t)n > sched.ncpu)
        n = (int)sched.ncpu;
    stop_the_world("gomaxprocs");
    start_the_world((uint32_t)n);
    return old;
}
