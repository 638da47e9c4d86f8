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
    for (uint32_t i = 0; i < MAX_CPUS && i < SCHED_STATS_MAXP; i++) {
        pstats_accumulate(&s->p[i], &allp[i]->stats);
        pstats_accumulate(&s->total, &allp[i]->stats);
    }
}
