// SPDX-License-Identifier: MIT
// The global run queue and the idle P and M lists. Every function here
// requires sched.lock.
#include "kernel/sched.h"
#include "lib/panic.h"

#define NEED_LOCK() ASSERT(spin_holding(&sched.lock))

void globrunqput(struct g *gp)
{
    NEED_LOCK();
    gp->schedlink = 0;
    if (sched.runq_tail)
        sched.runq_tail->schedlink = gp;
    else
        sched.runq_head = gp;
    sched.runq_tail = gp;
    __atomic_store_n(&sched.runq_size, sched.runq_size + 1, __ATOMIC_RELAXED);   // lock-free readers take it as a hint
}

void globrunqputbatch(struct g **gs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        globrunqput(gs[i]);
}

static struct g *globrunqpop(void)
{
    struct g *gp = sched.runq_head;
    sched.runq_head = gp->schedlink;
    if (!sched.runq_head)
        sched.runq_tail = 0;
    __atomic_store_n(&sched.runq_size, sched.runq_size - 1, __ATOMIC_RELAXED);   // lock-free readers take it as a hint
    return gp;
}

// Takes a fair share of the global queue for pp (at most max when max > 0,
// never more than half a ring): returns one G and puts the rest on pp's
// local queue. pp must be the caller's P.
struct g *globrunqget(struct p *pp, uint32_t max)
{
    NEED_LOCK();
    if (sched.runq_size == 0)
        return 0;
    uint32_t n = sched.runq_size / sched.gomaxprocs + 1;
    if (n > sched.runq_size)
        n = sched.runq_size;
    if (max > 0 && n > max)
        n = max;
    if (n > RUNQ_SIZE / 2)
        n = RUNQ_SIZE / 2;
    struct g *gp = globrunqpop();
    pp->stats.global_gets += n;
    for (uint32_t i = 1; i < n; i++) {
        struct g *overflow[RUNQ_SIZE / 2 + 1];
        // Fits: the ring has room for RUNQ_SIZE/2 more only if it was at
        // most half full; when it is fuller, overflow goes straight back.
        uint32_t k = runq_push(&pp->runq, globrunqpop(), false, overflow);
        for (uint32_t j = 0; j < k; j++)
            globrunqput(overflow[j]);
    }
    return gp;
}

void pidleput(struct p *pp)
{
    NEED_LOCK();
    ASSERT(runqempty(&pp->runq));
    pp->status = P_IDLE;
    pp->m = 0;
    pp->link = sched.pidle;
    sched.pidle = pp;
    pset_put(sched.pidle_set, pp->id, true);
    __atomic_store_n(&sched.npidle, sched.npidle + 1, __ATOMIC_SEQ_CST);   // step 3's store: pairs with wakep's fence and load
}

struct p *pidleget(void)
{
    NEED_LOCK();
    struct p *pp = sched.pidle;
    if (pp) {
        sched.pidle = pp->link;
        pset_put(sched.pidle_set, pp->id, false);
        __atomic_store_n(&sched.npidle, sched.npidle - 1, __ATOMIC_SEQ_CST);   // seq-cst, as pidleput's
        __atomic_store_n(&sched.pidle_gets, sched.pidle_gets + 1, __ATOMIC_RELAXED);  // relaxed: a progress count sysmon reads
    }
    return pp;
}

void mput(struct m *mp)
{
    NEED_LOCK();
    ASSERT(!mp->idle);
    mp->idle = true;
    mp->schedlink = sched.midle;
    sched.midle = mp;
    sched.nmidle++;
}

struct m *mget(void)
{
    NEED_LOCK();
    struct m *mp = sched.midle;
    if (mp) {
        sched.midle = mp->schedlink;
        sched.nmidle--;
        mp->idle = false;
    }
    return mp;
}
