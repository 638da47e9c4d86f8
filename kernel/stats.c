// SPDX-License-Identifier: MIT
// sched_stats (goro.h): each P's counters, and their sum.
#include "kernel/sched.h"
#include "lib/string.h"

// Adds every counter of s to sum (struct sched_pstats is uint64_t only).
static void pstats_accumulate(struct sched_pstats *sum, const struct sched_pstats *s)
{
    const uint64_t *src = (const uint64_t *)s;
    uint64_t *dst = (uint64_t *)sum;
    for (size_t i = 0; i < sizeof *s / sizeof(uint64_t); i++)
        dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);     // relaxed: counters, a snapshot (goro.h)
}

void sched_stats(struct sched_stats *s)
{
    memset(s, 0, sizeof *s);
    s->gomaxprocs = (int)__atomic_load_n(&sched.gomaxprocs, __ATOMIC_RELAXED);    // relaxed: a snapshot
    s->ncpu = (int)sched.ncpu;
    for (uint32_t i = 0; i < sched.ncpu && i < SCHED_STATS_MAXP; i++) {
        pstats_accumulate(&s->p[i], &allp[i]->stats);
        pstats_accumulate(&s->total, &allp[i]->stats);
    }
}

_Static_assert((int)SCHED_P_IDLE == (int)P_IDLE && (int)SCHED_P_RUNNING == (int)P_RUNNING &&
               (int)SCHED_P_SYSCALL == (int)P_SYSCALL && (int)SCHED_P_STOPPED == (int)P_STOPPED &&
               (int)SCHED_P_DEAD == (int)P_DEAD, "goro.h's P states are the scheduler's");

void sched_state(struct sched_state *s)
{
    memset(s, 0, sizeof *s);
    // racing values (goro.h): each a SNAPSHOT of its own
    s->gomaxprocs = (int)SNAPSHOT(sched.gomaxprocs);
    s->npidle = (int)SNAPSHOT(sched.npidle);
    s->nmspinning = (int)SNAPSHOT(sched.nmspinning);
    s->nmidle = (int)SNAPSHOT(sched.nmidle);
    s->global_runq = (int)SNAPSHOT(sched.runq_size);
    s->stopping = SNAPSHOT(sched.stw_pending) != 0;
    for (uint32_t i = 0; i < MAX_CPUS && i < SCHED_STATS_MAXP; i++) {
        struct p *pp = i < sched.ncpu ? allp[i] : 0;
        if (!pp) {
            s->p[i].status = SCHED_P_DEAD;
            continue;
        }
        uint32_t head = SNAPSHOT(pp->runq.head);
        uint32_t tail = SNAPSHOT(pp->runq.tail);
        s->p[i].status = (uint8_t)SNAPSHOT(pp->status);
        s->p[i].runnext = SNAPSHOT(pp->runq.runnext) != 0;
        s->p[i].runq_head = head;
        s->p[i].runq_len = tail - head <= RUNQ_SIZE ? tail - head : 0;     // a torn pair reads as empty
    }
}

uint64_t sched_seed(void)
{
    return sched.seed;
}
