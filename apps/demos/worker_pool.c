// SPDX-License-Identifier: MIT
// The seeds' worker pool: jobs go into a buffered channel sized for all of
// them, num_cpu() workers range over it, a WaitGroup counts the items done.
// Checks: every item processed exactly once, by some worker, sum of squares.
#include "goro.h"

#define ITEMS 1000

struct pool {
    chan_t *jobs;
    waitgroup_t wg;
    uint8_t done[ITEMS];
    uint64_t sum;
    uint64_t per_worker[64];
};

struct worker_arg {
    struct pool *p;
    int id;
};

static void worker(void *arg)
{
    struct worker_arg *w = arg;
    struct pool *p = w->p;
    int job;
    while (chan_recv(p->jobs, &job)) {      // `for job := range jobs`
        __atomic_fetch_add(&p->done[job], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&p->sum, (uint64_t)job * (uint64_t)job, __ATOMIC_RELAXED);
        p->per_worker[w->id % 64]++;
        wg_done(&p->wg);
    }
}

static int worker_pool_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    static struct pool p;
    static struct worker_arg args[64];
    int nworkers = num_cpu() < 64 ? num_cpu() : 64;
    p.jobs = chan_make(sizeof(int), ITEMS);
    wg_add(&p.wg, ITEMS);
    uint64_t t0 = nanotime();
    for (int w = 0; w < nworkers; w++) {
        args[w] = (struct worker_arg){ &p, w };
        go(worker, &args[w]);
    }
    for (int i = 0; i < ITEMS; i++)
        chan_send(p.jobs, &i);
    chan_close(p.jobs);
    wg_wait(&p.wg);
    uint64_t t = nanotime() - t0;
    uint64_t want = 0;
    int bad = 0;
    for (int i = 0; i < ITEMS; i++) {
        want += (uint64_t)i * (uint64_t)i;
        bad += p.done[i] != 1;
    }
    printf("worker_pool: %d items by %d workers in %lu us:", ITEMS, nworkers, t / 1000);
    for (int w = 0; w < nworkers; w++)
        printf(" %lu", p.per_worker[w]);
    printf("\n");
    if (bad || __atomic_load_n(&p.sum, __ATOMIC_RELAXED) != want) {
        printf("worker_pool: FAIL: %d items not processed exactly once, sum %lu want %lu\n", bad, p.sum, want);
        return 1;
    }
    printf("worker_pool: ok\n");
    return 0;
}
GORO_APP(demo_worker_pool, "seeds: a pool of num_cpu workers ranging over a jobs channel",
         worker_pool_main);
