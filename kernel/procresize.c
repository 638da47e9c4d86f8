// SPDX-License-Identifier: MIT
// Stopping the world and changing gomaxprocs.
//
// stop_the_world takes every P: idle ones straight from the idle list,
// busy ones when their M next enters the scheduler (find_runnable sees
// sched.stw_pending and calls stw_stopm). The caller keeps its own P, marked
// stopped. start_the_world resizes, hands Ps that have work to idle Ms and
// puts the rest on the idle list.
#include "kernel/sched.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "kernel/timer.h"

void stop_the_world(const char *why)
{
    (void)why;
    struct m *mp = acquirem();
    spin_lock(&sched.lock);
    ASSERT(!sched.stw_pending);
    uint32_t wait = sched.gomaxprocs - 1;
    mp->p->status = P_STOPPED;
    struct p *pp;
    while ((pp = pidleget())) {
        pp->status = P_STOPPED;
        wait--;
    }
    __atomic_store_n(&sched.stopwait, wait, __ATOMIC_RELAXED);
    __atomic_store_n(&sched.stw_pending, 1, __ATOMIC_RELEASE);   // pairs with find_runnable's acquire
    spin_unlock(&sched.lock);
    while (__atomic_load_n(&sched.stopwait, __ATOMIC_ACQUIRE))  // pairs with stw_stopm's release
        cpu_relax();
    releasem(mp);
}

// Destroys P pp (id >= the new gomaxprocs): its Gs go to the global queue.
static void p_destroy(struct p *pp, struct p *heir)
{
    timers_move(pp, heir);
    struct g *gs[RUNQ_SIZE + 1];
    uint32_t n = runq_drain(&pp->runq, gs);
    globrunq_putbatch(gs, n);
    g_free_list_move(pp);
    pp->status = P_DEAD;
    pp->m = 0;
}

void start_the_world(uint32_t nprocs)
{
    struct m *mp = acquirem();
    struct p *want[MAX_CPUS];
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
        mp->p = 0;
        acquirep(mp, allp[0]);
    }
    mp->p->status = P_RUNNING;
    sched.gomaxprocs = nprocs;
    steal_order_reset(nprocs);
    for (uint32_t i = 0; i < nprocs; i++) {
        struct p *pp = allp[i];
        if (pp == mp->p)
            continue;
        pp->m = 0;
        if (runq_empty(&pp->runq))
            pidleput(pp);
        else
            want[nwant++] = pp;
    }
    __atomic_store_n(&sched.stw_pending, 0, __ATOMIC_RELEASE);
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
            uint32_t n = runq_drain(&want[i]->runq, gs);
            globrunq_putbatch(gs, n);
            pidleput(want[i]);
            spin_unlock(&sched.lock);
            continue;
        }
        nmp->nextspinning = false;
        __atomic_store_n(&nmp->nextp, want[i], __ATOMIC_RELEASE);  // pairs with stopm's acquire
        spin_unlock(&sched.lock);
        arch_send_ipi(nmp->id, VEC_WAKE);
    }
    releasem(mp);
    wakep();
}

int gomaxprocs(int n)
{
    int old = (int)__atomic_load_n(&sched.gomaxprocs, __ATOMIC_RELAXED);
    if (n <= 0 || n == old)
        return old;
    if ((uint32_t)n > sched.ncpu)
        n = (int)sched.ncpu;
    // Pinned from stop to start: preempted in between, the caller would sit
    // on the global queue of a stopped world.
    struct m *mp = acquirem();
    stop_the_world("gomaxprocs");
    start_the_world((uint32_t)n);
    releasem(mp);
    return old;
}
