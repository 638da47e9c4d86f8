// SPDX-License-Identifier: MIT
// app=soak's sync programs: mutex, rwmutex, waitgroup and cond, each with
// the count it must end on, checked by the last goroutine out.
#include "soak.h"

struct syncprog {
    mutex_t mu;
    rwmutex_t rw;
    cond_t cv;
    waitgroup_t wg;
    uint64_t counter;                   // under mu, or rw held for writing
    uint64_t expect;
    uint32_t iters;
    uint32_t left;                      // goroutines still running (atomic)
    int32_t readers_in, writers_in;     // rwmutex: who is inside (atomic)
    int32_t items;                      // cond: produced, not yet taken (under mu)
    int32_t unclaimed;                  // cond: items not yet claimed (atomic)
    uint8_t *flags;                     // waitgroup: each worker's mark
    rng_t seedr;
};

struct worker {
    struct syncprog *sp;
    rng_t r;
    uint32_t id;
};

static void spawn_workers(struct syncprog *sp, rng_t *r, uint32_t n, void (*fn)(void *))
{
    for (uint32_t i = 0; i < n; i++) {
        struct worker *w = round_alloc(sizeof *w);
        *w = (struct worker){ sp, rng_split(r), i };
        soak_go(fn, w);
    }
}

static void last_out_checks(struct syncprog *sp, const char *what)
{
    if (__atomic_sub_fetch(&sp->left, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (sp->counter != sp->expect)
        soak_fail("%s: counter %lu, expected %lu", what, sp->counter, sp->expect);
}

// ---- mutex ------------------------------------------------------------------

static void mutex_worker(void *p)
{
    struct worker *w = p;
    struct syncprog *sp = w->sp;
    for (uint32_t i = 0; i < sp->iters; i++) {
        if (rng_below(&w->r, 4) == 0) {
            while (!mutex_trylock(&sp->mu))
                gosched();
        } else {
            mutex_lock(&sp->mu);
        }
        uint64_t v = sp->counter;
        if (rng_below(&w->r, 8) == 0)
            gosched();                  // hold it across a yield
        sp->counter = v + 1;
        mutex_unlock(&sp->mu);
        soak_op(1);
    }
    last_out_checks(sp, "mutex");
}

void prog_mutex(rng_t *r)
{
    struct syncprog *sp = round_alloc(sizeof *sp);
    uint32_t n = 2 + rng_below(r, 6);
    sp->iters = 1 + rng_below(r, 200);
    sp->expect = (uint64_t)n * sp->iters;
    sp->left = n;
    spawn_workers(sp, r, n, mutex_worker);
}

// ---- rwmutex ------------------------------------------------------------------

static void rw_writer(void *p)
{
    struct worker *w = p;
    struct syncprog *sp = w->sp;
    for (uint32_t i = 0; i < sp->iters; i++) {
        if (rng_below(&w->r, 4) == 0) {
            while (!rwmutex_trylock(&sp->rw))
                gosched();
        } else {
            rwmutex_lock(&sp->rw);
        }
        if (__atomic_add_fetch(&sp->writers_in, 1, __ATOMIC_RELAXED) != 1 ||
            __atomic_load_n(&sp->readers_in, __ATOMIC_RELAXED) != 0)
            soak_fail("rwmutex: a writer inside with %d writers and %d readers",
                      sp->writers_in, sp->readers_in);
        sp->counter++;
        if (rng_below(&w->r, 8) == 0)
            gosched();
        __atomic_sub_fetch(&sp->writers_in, 1, __ATOMIC_RELAXED);
        rwmutex_unlock(&sp->rw);
        soak_op(1);
    }
    last_out_checks(sp, "rwmutex");
}

static void rw_reader(void *p)
{
    struct worker *w = p;
    struct syncprog *sp = w->sp;
    for (uint32_t i = 0; i < sp->iters; i++) {
        if (rng_below(&w->r, 4) == 0) {
            while (!rwmutex_tryrlock(&sp->rw))
                gosched();
        } else {
            rwmutex_rlock(&sp->rw);
        }
        __atomic_add_fetch(&sp->readers_in, 1, __ATOMIC_RELAXED);
        uint64_t v = __atomic_load_n(&sp->counter, __ATOMIC_RELAXED);
        if (__atomic_load_n(&sp->writers_in, __ATOMIC_RELAXED) != 0)
            soak_fail("rwmutex: a reader inside with a writer");
        if (rng_below(&w->r, 8) == 0)
            gosched();
        if (__atomic_load_n(&sp->counter, __ATOMIC_RELAXED) != v)
            soak_fail("rwmutex: the value changed under a read lock");
        __atomic_sub_fetch(&sp->readers_in, 1, __ATOMIC_RELAXED);
        rwmutex_runlock(&sp->rw);
        soak_op(1);
    }
    last_out_checks(sp, "rwmutex");
}

void prog_rwmutex(rng_t *r)
{
    struct syncprog *sp = round_alloc(sizeof *sp);
    uint32_t nw = 1 + rng_below(r, 3), nr = 1 + rng_below(r, 5);
    sp->iters = 1 + rng_below(r, 100);
    sp->expect = (uint64_t)nw * sp->iters;
    sp->left = nw + nr;
    spawn_workers(sp, r, nw, rw_writer);
    spawn_workers(sp, r, nr, rw_reader);
}

// ---- waitgroup: waiters see every worker's mark ------------------------------

struct wgworker {
    struct syncprog *sp;
    uint32_t id;
};

static void wg_worker(void *p)
{
    struct wgworker *w = p;
    if (w->id & 1)
        gosched();
    w->sp->flags[w->id] = 1;            // published by wg_done
    wg_done(&w->sp->wg);
    soak_op(1);
}

static void wg_waiter(void *p)
{
    struct worker *w = p;
    struct syncprog *sp = w->sp;
    wg_wait(&sp->wg);
    for (uint32_t i = 0; i < sp->iters; i++)
        if (!sp->flags[i])
            soak_fail("waitgroup: wait returned before worker %u was done", i);
    soak_op(1);
}

void prog_waitgroup(rng_t *r)
{
    struct syncprog *sp = round_alloc(sizeof *sp);
    sp->iters = 1 + rng_below(r, 32);           // workers
    sp->flags = round_alloc(sp->iters);
    wg_add(&sp->wg, (int)sp->iters);
    spawn_workers(sp, r, 1 + rng_below(r, 3), wg_waiter);
    for (uint32_t i = 0; i < sp->iters; i++) {
        struct wgworker *w = round_alloc(sizeof *w);
        *w = (struct wgworker){ sp, i };
        soak_go(wg_worker, w);
    }
}

// ---- cond: producers and consumers of a counted stock ------------------------

static void cond_producer(void *p)
{
    struct worker *w = p;
    struct syncprog *sp = w->sp;
    for (uint32_t i = 0; i < sp->iters; i++) {
        mutex_lock(&sp->mu);
        sp->items++;
        sp->counter++;
        if (rng_below(&w->r, 4) == 0)
            cond_broadcast(&sp->cv);
        else
            cond_signal(&sp->cv);
        mutex_unlock(&sp->mu);
        soak_op(1);
        if (rng_below(&w->r, 4) == 0)
            gosched();
    }
}

static void cond_consumer(void *p)
{
    struct worker *w = p;
    struct syncprog *sp = w->sp;
    while (__atomic_sub_fetch(&sp->unclaimed, 1, __ATOMIC_RELAXED) >= 0) {
        mutex_lock(&sp->mu);
        while (sp->items == 0)
            cond_wait(&sp->cv, &sp->mu);
        if (sp->items < 0)
            soak_fail("cond: stock below zero");
        sp->items--;
        mutex_unlock(&sp->mu);
        soak_op(1);
    }
    mutex_lock(&sp->mu);
    uint32_t left = --sp->left;
    if (left == 0 && sp->items != 0)
        soak_fail("cond: %d items left over", sp->items);
    mutex_unlock(&sp->mu);
}

void prog_cond(rng_t *r)
{
    struct syncprog *sp = round_alloc(sizeof *sp);
    uint32_t np = 1 + rng_below(r, 3), nc = 1 + rng_below(r, 4);
    sp->iters = 1 + rng_below(r, 100);
    sp->unclaimed = (int32_t)(np * sp->iters);
    sp->left = nc;
    spawn_workers(sp, r, nc, cond_consumer);
    spawn_workers(sp, r, np, cond_producer);
}
