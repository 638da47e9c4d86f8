// SPDX-License-Identifier: MIT
// The seeds' reusable task pool: a fixed set of workers takes closures
// (here a function and its argument) from a buffered channel until it is
// closed; closing waits for the workers through a WaitGroup.
// Checks: every submitted task ran exactly once; the pool's goroutines exit.
#include "goro.h"

struct task {
    void (*fn)(void *);
    void *arg;
};

struct task_pool {
    chan_t *tasks;
    waitgroup_t wg;
};

static void pool_worker(void *arg)
{
    struct task_pool *p = arg;
    struct task t;
    while (chan_recv(p->tasks, &t))
        t.fn(t.arg);
    wg_done(&p->wg);
}

static void pool_start(struct task_pool *p, int workers)
{
    p->tasks = chan_make(sizeof(struct task), 100);
    wg_add(&p->wg, workers);
    for (int i = 0; i < workers; i++)
        go(pool_worker, p);
}

static void pool_submit(struct task_pool *p, void (*fn)(void *), void *arg)
{
    struct task t = { fn, arg };
    chan_send(p->tasks, &t);
}

static void pool_close(struct task_pool *p)
{
    chan_close(p->tasks);
    wg_wait(&p->wg);
    chan_free(p->tasks);
}

#define TASKS 2000
static uint32_t ran[TASKS];

static void task_fn(void *arg)
{
    __atomic_fetch_add(&ran[(uintptr_t)arg], 1, __ATOMIC_RELAXED);
}

static int task_pool_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    memset(ran, 0, sizeof ran);             // counts from an earlier run (the shell's)
    int before = num_goroutine();
    static struct task_pool pool;
    uint64_t t0 = nanotime();
    pool_start(&pool, 4);
    for (uintptr_t i = 0; i < TASKS; i++)
        pool_submit(&pool, task_fn, (void *)i);
    pool_close(&pool);
    uint64_t t = nanotime() - t0;
    int bad = 0;
    for (int i = 0; i < TASKS; i++)
        bad += ran[i] != 1;
    // goroutines finish exiting just after their wg_done (on other cores,
    // which an overcommitted host may be slow to run). `before` may count
    // a goroutine of the demo before this one that was still exiting: the
    // count may end below it, never above.
    for (uint64_t end = nanotime() + 10000000000ull; num_goroutine() > before && nanotime() < end;)
        gosched();
    printf("task_pool: %d tasks on 4 workers in %lu us, goroutines %d -> %d\n", TASKS, t / 1000, before,
           num_goroutine());
    if (bad || num_goroutine() > before) {
        printf("task_pool: FAIL: %d tasks did not run exactly once, or workers left behind\n", bad);
        return 1;
    }
    printf("task_pool: ok\n");
    return 0;
}
GORO_APP(demo_task_pool, "seeds: a reusable pool of 4 workers fed through a channel",
         task_pool_main);
