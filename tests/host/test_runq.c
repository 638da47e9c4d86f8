// SPDX-License-Identifier: MIT
// Host tests for kernel/runq.c, built with ThreadSanitizer. Single-threaded
// checks pin the exact semantics (FIFO, runnext kicking, overflow of half,
// a steal of n taking n - n/2, drain, the 32-bit wrap); the stress test runs
// an owner and several thieves on real threads and checks that every G put
// is obtained exactly once. The Gs carry plain (non-atomic) counters written
// by whoever holds them, so a missing release/acquire in runq.c shows up as
// a TSan data race. Usage: test_runq [seed]; the seed is printed first.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "kernel/runq.h"

// A fake G. queued is the only atomic: set before a put, swapped to 0 by
// whoever obtains the G, so a duplicate is caught at once, TSan or not.
// The rest is plain and owned by the holder of the G.
struct g {
    int queued;
    uint32_t id;
    uint32_t puts, takes; // onto and off a run queue
    uint32_t runs, hops0;
    uint32_t hops; // how many more times the holder re-puts it
    uint64_t payload; // tag(id, puts), written at each put, checked at each get
};

static uint64_t seed;

static uint64_t rnd(uint64_t *s)
{
    // xorshift64*: any nonzero state.
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t tag(const struct g *g)
{
    return ((uint64_t)g->id << 32) ^ g->puts ^ 0x9e3779b97f4a7c15ULL;
}

static struct g *gs_new(uint32_t n)
{
    struct g *gs = calloc(n, sizeof *gs);
    for (uint32_t i = 0; i < n; i++)
        gs[i].id = i;
    return gs;
}

static struct runq *runq_new(void)
{
    struct runq *q = aligned_alloc(64, sizeof *q);
    runq_init(q);
    return q;
}

// Puts n Gs and checks none overflowed.
static void put_n(struct runq *q, struct g *gs, uint32_t n)
{
    struct g *ov[RUNQ_SIZE / 2 + 1];
    for (uint32_t i = 0; i < n; i++)
        CHECK(runq_push(q, &gs[i], false, ov) == 0);
}

static void test_fifo(void)
{
    struct runq *q = runq_new();
    struct g *gs = gs_new(RUNQ_SIZE);
    bool inherit;

    CHECK(runqempty(q) && runq_len(q) == 0);
    CHECK(runqget(q, &inherit) == NULL);
    put_n(q, gs, RUNQ_SIZE);
    CHECK(runq_len(q) == RUNQ_SIZE && !runqempty(q));
    for (uint32_t i = 0; i < RUNQ_SIZE; i++) {
        struct g *g = runqget(q, &inherit);
        CHECKF(g == &gs[i] && !inherit, "get %u: got %p", i, (void *)g);
        CHECK(runq_len(q) == RUNQ_SIZE - 1 - i);
    }
    CHECK(runqget(q, &inherit) == NULL && runqempty(q));
    free(gs);
    free(q);
}

static void test_runnext(void)
{
    struct runq *q = runq_new();
    struct g *gs = gs_new(4), *ov[RUNQ_SIZE / 2 + 1];
    bool inherit;

    CHECK(runq_push(q, &gs[0], false, ov) == 0);
    CHECK(runq_push(q, &gs[1], true, ov) == 0);
    CHECK(runq_len(q) == 2 && !runqempty(q));
    CHECK(runq_push(q, &gs[2], true, ov) == 0); // kicks gs[1] behind gs[0]
    CHECK(runq_len(q) == 3);
    CHECK(runqget(q, &inherit) == &gs[2] && inherit);
    CHECK(runqget(q, &inherit) == &gs[0] && !inherit);
    CHECK(runqget(q, &inherit) == &gs[1] && !inherit);
    CHECK(runqget(q, &inherit) == NULL && !inherit);

    // runnext alone counts, and is not empty.
    CHECK(runq_push(q, &gs[3], true, ov) == 0);
    CHECK(runq_len(q) == 1 && !runqempty(q));
    CHECK(runqget(q, &inherit) == &gs[3] && inherit);
    CHECK(runqempty(q));
    free(gs);
    free(q);
}

static void test_overflow(void)
{
    struct runq *q = runq_new();
    struct g *gs = gs_new(RUNQ_SIZE + 2), *ov[RUNQ_SIZE / 2 + 1];
    bool inherit;

    put_n(q, gs, RUNQ_SIZE);
    CHECK(runq_push(q, &gs[RUNQ_SIZE], false, ov) == RUNQ_SIZE / 2 + 1);
    for (uint32_t i = 0; i < RUNQ_SIZE / 2; i++)
        CHECKF(ov[i] == &gs[i], "overflow[%u] is G %u", i, ov[i]->id);
    CHECK(ov[RUNQ_SIZE / 2] == &gs[RUNQ_SIZE]);
    CHECK(runq_len(q) == RUNQ_SIZE / 2);
    for (uint32_t i = RUNQ_SIZE / 2; i < RUNQ_SIZE; i++)
        CHECK(runqget(q, &inherit) == &gs[i]);
    CHECK(runqempty(q));

    // A runnext kicked into a full ring overflows as the last entry.
    put_n(q, gs, RUNQ_SIZE);
    CHECK(runq_push(q, &gs[RUNQ_SIZE], true, ov) == 0);
    CHECK(runq_push(q, &gs[RUNQ_SIZE + 1], true, ov) == RUNQ_SIZE / 2 + 1);
    CHECK(ov[0] == &gs[0] && ov[RUNQ_SIZE / 2] == &gs[RUNQ_SIZE]);
    CHECK(runq_len(q) == RUNQ_SIZE / 2 + 1);
    CHECK(runqget(q, &inherit) == &gs[RUNQ_SIZE + 1] && inherit);
    CHECK(runqget(q, &inherit) == &gs[RUNQ_SIZE / 2] && !inherit);
    free(gs);
    free(q);
}

static void test_steal_half(void)
{
    struct g *gs = gs_new(RUNQ_SIZE);
    bool inherit;

    for (uint32_t n = 0; n <= RUNQ_SIZE; n++) {
        struct runq *v = runq_new(), *t = runq_new();
        uint32_t want = n - n / 2;

        put_n(v, gs, n);
        struct g *g = runqsteal(t, v, true);
        if (n == 0) {
            CHECK(g == NULL);
        } else {
            // The thief runs the last G grabbed and queues the others in order.
            CHECKF(g == &gs[want - 1], "n=%u: ran G %d", n, g ? (int)g->id : -1);
            CHECKF(runq_len(t) == want - 1 && runq_len(v) == n - want,
                   "n=%u: thief %u victim %u", n, runq_len(t), runq_len(v));
            for (uint32_t i = 0; i + 1 < want; i++)
                CHECK(runqget(t, &inherit) == &gs[i]);
            for (uint32_t i = want; i < n; i++)
                CHECK(runqget(v, &inherit) == &gs[i]);
        }
        CHECK(runqempty(t) && runqempty(v));
        free(v);
        free(t);
    }
    free(gs);
}

static void test_steal_runnext(void)
{
    struct runq *v = runq_new(), *t = runq_new();
    struct g *gs = gs_new(3), *ov[RUNQ_SIZE / 2 + 1];
    bool inherit;

    CHECK(runq_push(v, &gs[0], true, ov) == 0);
    CHECK(runqsteal(t, v, false) == NULL);
    CHECK(runq_len(v) == 1);
    CHECK(runqsteal(t, v, true) == &gs[0]);
    CHECK(runqempty(v) && runqempty(t));
    CHECK(runqget(v, &inherit) == NULL);

    // With a non-empty ring, runnext stays with its owner.
    CHECK(runq_push(v, &gs[1], false, ov) == 0);
    CHECK(runq_push(v, &gs[2], true, ov) == 0);
    CHECK(runqsteal(t, v, true) == &gs[1]);
    CHECK(runqget(v, &inherit) == &gs[2] && inherit);
    CHECK(runqempty(v) && runqempty(t));
    free(gs);
    free(v);
    free(t);
}

static void test_drain(void)
{
    struct runq *q = runq_new();
    struct g *gs = gs_new(RUNQ_SIZE + 1), *out[RUNQ_SIZE + 1], *ov[RUNQ_SIZE / 2 + 1];

    CHECK(runqdrain(q, out) == 0);
    put_n(q, gs, RUNQ_SIZE);
    CHECK(runq_push(q, &gs[RUNQ_SIZE], true, ov) == 0);
    CHECK(runqdrain(q, out) == RUNQ_SIZE + 1);
    CHECK(out[0] == &gs[RUNQ_SIZE]);
    for (uint32_t i = 0; i < RUNQ_SIZE; i++)
        CHECK(out[i + 1] == &gs[i]);
    CHECK(runqempty(q) && runqdrain(q, out) == 0);

    // Ring only, after the head has moved.
    put_n(q, gs, 10);
    bool inherit;
    CHECK(runqget(q, &inherit) == &gs[0]);
    CHECK(runqdrain(q, out) == 9 && out[0] == &gs[1] && out[8] == &gs[9]);
    CHECK(runqempty(q));
    free(gs);
    free(q);
}

// head and tail wrap at 2^32; every operation must work across it.
static void test_wrap(void)
{
    struct g *gs = gs_new(RUNQ_SIZE + 1), *ov[RUNQ_SIZE / 2 + 1];
    bool inherit;

    for (uint32_t back = 0; back <= RUNQ_SIZE + 1; back += 37) {
        struct runq *q = runq_new(), *t = runq_new();
        q->head = q->tail = UINT32_MAX - back;
        t->head = t->tail = UINT32_MAX - back / 2;

        put_n(q, gs, RUNQ_SIZE);
        CHECK(runq_len(q) == RUNQ_SIZE);
        CHECK(runq_push(q, &gs[RUNQ_SIZE], false, ov) == RUNQ_SIZE / 2 + 1);
        CHECK(ov[0] == &gs[0] && ov[RUNQ_SIZE / 2] == &gs[RUNQ_SIZE]);
        CHECK(runq_len(q) == RUNQ_SIZE / 2);
        CHECK(runqsteal(t, q, false) == &gs[RUNQ_SIZE * 3 / 4 - 1]);
        CHECK(runq_len(t) == RUNQ_SIZE / 4 - 1 && runq_len(q) == RUNQ_SIZE / 4);
        CHECK(runqget(t, &inherit) == &gs[RUNQ_SIZE / 2]);
        CHECK(runqget(q, &inherit) == &gs[RUNQ_SIZE * 3 / 4]);
        struct g *out[RUNQ_SIZE + 1];
        CHECK(runqdrain(q, out) == RUNQ_SIZE / 4 - 1 && out[0] == &gs[RUNQ_SIZE * 3 / 4 + 1]);
        CHECK(runqdrain(t, out) == RUNQ_SIZE / 4 - 2);
        CHECK(runqempty(q) && runqempty(t));
        free(q);
        free(t);
    }
    free(gs);
}

// ---- the stress test --------------------------------------------------------
//
// One owner P and NTHIEVES thief Ps. The owner introduces NG fresh Gs, puts
// (a quarter with next) and gets in phases that alternately fill its ring
// (overflowing it) and empty it (so thieves take runnext), and now and then
// drains it all, as gomaxprocs shrinking would; then it turns thief. A thief
// runs the Gs of its own ring and, when that is empty, steals from the owner
// or another thief. Every G is re-put hops times by whoever holds it, then
// retired. Overflowed or drained Gs go to the holder's private list (the
// global queue stand-in) and are put again later. Nothing but runq orders the
// threads (queued, retired and timed_out are relaxed), so TSan checks runq's
// orderings alone.

#define NTHIEVES 3
#define NG (1u << 19)
#define NROUNDS 8
#define MINROUNDS 2
#define BUDGET_SECS 10.0
#define ROUND_STALL_SECS 30      // no G retired for this long: one was lost
#define MAXHOPS 3

struct p {
    struct runq *q;
    uint64_t rnd;
    struct g **priv; // Gs taken off q by overflow or drain, to put again
    uint32_t npriv;
    uint64_t puts, runs, steals, stolen, overflows, drains;
    uint32_t dups, bad_payload;
    uint32_t misses, yield_every; // failed steals; yield the CPU every so many
    uint32_t seen_retired; // retired at this P's last look, and when it last moved
    struct timespec moved;
};

static struct p ps[1 + NTHIEVES];
static struct g *stress_gs;
static uint32_t retired; // atomic
static int timed_out; // atomic

// p keeps g to put it again later.
static void keep(struct p *p, struct g *g)
{
    if (p->npriv < NG)
        p->priv[p->npriv++] = g;
    else
        p->dups++; // more Gs than exist: some were duplicated
}

// p has taken g off a run queue.
static void took(struct p *p, struct g *g)
{
    if (__atomic_exchange_n(&g->queued, 0, __ATOMIC_RELAXED) != 1) // relaxed: ordering comes from runq alone
        p->dups++;
    if (g->payload != tag(g))
        p->bad_payload++;
    g->takes++;
}

static void put(struct p *p, struct g *g)
{
    struct g *ov[RUNQ_SIZE / 2 + 1];

    g->puts++;
    g->payload = tag(g);
    __atomic_store_n(&g->queued, 1, __ATOMIC_RELAXED); // relaxed: published by runq_push
    p->puts++;
    uint32_t n = runq_push(p->q, g, rnd(&p->rnd) % 4 == 0, ov);
    if (n) {
        p->overflows++;
        for (uint32_t i = 0; i < n; i++) {
            took(p, ov[i]);
            keep(p, ov[i]);
        }
    }
}

// p now holds g: runs it, then re-puts or retires it.
static void run(struct p *p, struct g *g)
{
    took(p, g);
    p->runs++;
    g->runs++;
    if (g->hops) {
        g->hops--;
        put(p, g);
    } else {
        __atomic_fetch_add(&retired, 1, __ATOMIC_RELAXED); // relaxed: only ends the loops; join orders the final check
    }
}

// p's ring is empty: steals from another P, the owner or a thief.
static void steal(struct p *p)
{
    uint32_t v = rnd(&p->rnd) % 2 ? 0 : 1 + rnd(&p->rnd) % NTHIEVES;

    if (&ps[v] == p)
        return;
    p->steals++;
    struct g *g = runqsteal(p->q, ps[v].q, rnd(&p->rnd) % 2);
    if (g) {
        p->stolen++;
        run(p, g);
    } else if (++p->misses % p->yield_every == 0) {
        sched_yield(); // 2 cores, 4 threads: let the Ps with work run
    }
}

// Checked now and then by a P with nothing to do: a lost G would hang the
// round, so it ends once no G has retired for ROUND_STALL_SECS. A stall, not
// a deadline: a loaded host (make test-stress) makes the round slower, never
// stalled.
static bool past_deadline(struct p *p)
{
    struct timespec now;

    if (p->misses % 1024)
        return false;
    if (__atomic_load_n(&timed_out, __ATOMIC_RELAXED)) // relaxed: only ends the loops
        return true;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint32_t r = __atomic_load_n(&retired, __ATOMIC_RELAXED); // relaxed: only ends the loops
    if (r != p->seen_retired || p->moved.tv_sec == 0) {
        p->seen_retired = r;
        p->moved = now;
        return false;
    }
    if (now.tv_sec - p->moved.tv_sec < ROUND_STALL_SECS)
        return false;
    __atomic_store_n(&timed_out, 1, __ATOMIC_RELAXED); // relaxed: only ends the loops
    return true;
}

// A P with no fresh Gs: runs its own Gs, re-puts its overflow, steals.
static void *thief_main(void *arg)
{
    struct p *p = arg;
    bool inherit;

    for (;;) {
        struct g *g = runqget(p->q, &inherit);
        if (g)
            run(p, g);
        else if (p->npriv)
            put(p, p->priv[--p->npriv]);
        else if (__atomic_load_n(&retired, __ATOMIC_RELAXED) >= NG || past_deadline(p)) // relaxed: see run()
            break;
        else
            steal(p);
    }
    return NULL;
}

// The owner: introduces the fresh Gs in phases of 1024 steps, put-heavy
// (filling the ring until it overflows) then get-heavy (emptying it, so
// thieves find only runnext), and sometimes drains everything. Once all Gs
// are out it behaves as a thief.
static void *owner_main(void *arg)
{
    struct p *p = arg;
    struct g *out[RUNQ_SIZE + 1];
    uint32_t fresh = 0;
    bool inherit;

    for (uint64_t i = 0; fresh < NG; i++) {
        bool putting = (i >> 10) & 1 ? rnd(&p->rnd) % 8 < 2 : rnd(&p->rnd) % 8 < 6;
        if (putting) {
            put(p, p->npriv ? p->priv[--p->npriv] : &stress_gs[fresh++]);
        } else if (rnd(&p->rnd) % 4096 == 0) {
            uint32_t n = runqdrain(p->q, out);
            p->drains++;
            for (uint32_t j = 0; j < n; j++) {
                took(p, out[j]);
                keep(p, out[j]);
            }
        } else {
            struct g *g = runqget(p->q, &inherit);
            if (g)
                run(p, g);
        }
    }
    return thief_main(p);
}

// One round: fresh Gs, fresh Ps, threads started and joined, every G
// accounted for. Adds the round's counts to *sum.
static void stress_round(uint32_t round, struct p *sum)
{
    pthread_t th[1 + NTHIEVES];
    uint64_t r = (seed + round) * 2 + 1, want_runs = 0;

    stress_gs = gs_new(NG);
    for (uint32_t i = 0; i < NG; i++) {
        stress_gs[i].hops = stress_gs[i].hops0 = rnd(&r) % (MAXHOPS + 1);
        want_runs += stress_gs[i].hops + 1;
    }
    retired = 0;
    timed_out = 0;
    for (uint32_t i = 0; i <= NTHIEVES; i++) {
        ps[i] = (struct p){ .q = runq_new(), .rnd = rnd(&r) | 1, .yield_every = round % 2 ? 4 : 64 };
        ps[i].priv = calloc(NG, sizeof *ps[i].priv);
        // Start near the wrap so the counters cross 2^32 under contention.
        ps[i].q->head = ps[i].q->tail = UINT32_MAX - (uint32_t)(rnd(&r) % (NG * 4));
    }

    pthread_create(&th[0], NULL, owner_main, &ps[0]);
    for (uint32_t i = 1; i <= NTHIEVES; i++)
        pthread_create(&th[i], NULL, thief_main, &ps[i]);
    for (uint32_t i = 0; i <= NTHIEVES; i++)
        pthread_join(th[i], NULL);

    uint64_t runs = 0;
    for (uint32_t i = 0; i <= NTHIEVES; i++) {
        struct p *p = &ps[i];
        CHECKF(runqempty(p->q) && p->npriv == 0, "round %u: P %u not empty at the end", round, i);
        CHECKF(p->dups == 0, "round %u: %u Gs taken twice", round, p->dups);
        CHECKF(p->bad_payload == 0, "round %u: %u Gs with a stale payload", round, p->bad_payload);
        runs += p->runs;
        sum->puts += p->puts;
        sum->runs += p->runs;
        sum->steals += p->steals;
        sum->stolen += p->stolen;
        sum->overflows += p->overflows;
        sum->drains += p->drains;
        free(p->q);
        free(p->priv);
    }
    CHECKF(!timed_out, "round %u: no G retired for %d s: Gs lost", round, ROUND_STALL_SECS);
    CHECKF(runs == want_runs, "round %u: %llu runs, want %llu", round, (unsigned long long)runs,
           (unsigned long long)want_runs);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < NG; i++) {
        struct g *g = &stress_gs[i];
        if (g->takes != g->puts || g->runs != g->hops0 + 1 || g->hops || g->queued)
            bad++;
    }
    CHECKF(bad == 0, "round %u: %u Gs lost or duplicated", round, bad);
    CHECK(retired == NG);
    free(stress_gs);
}

static void test_stress(void)
{
    struct p sum = { 0 };
    struct timespec t0, t1;

    double secs = 0;
    uint32_t round = 0;

    // A loaded machine gets fewer rounds, not a time-out.
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (round < NROUNDS && !check_failed_now && (round < MINROUNDS || secs < BUDGET_SECS)) {
        stress_round(round++, &sum);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    }
    printf("stress: %u rounds, %llu puts, %llu runs, %llu steals (%llu hit), %llu overflows, "
           "%llu drains, %.1f s\n",
           round, (unsigned long long)sum.puts, (unsigned long long)sum.runs,
           (unsigned long long)sum.steals, (unsigned long long)sum.stolen,
           (unsigned long long)sum.overflows, (unsigned long long)sum.drains, secs);
}

int main(int argc, char **argv)
{
    seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    printf("seed=%llu\n", (unsigned long long)seed);
    RUN(test_fifo);
    RUN(test_runnext);
    RUN(test_overflow);
    RUN(test_steal_half);
    RUN(test_steal_runnext);
    RUN(test_drain);
    RUN(test_wrap);
    RUN(test_stress);
    return CHECK_DONE();
}
