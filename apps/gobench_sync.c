// SPDX-License-Identifier: MIT
// Go 1.19's src/sync mutex, rwmutex, cond, once and waitgroup benchmarks,
// with their workloads.
#include "goro.h"
#include "gobench.h"

// ---- MutexUncontended: a mutex of each G's own ----------------------------

struct padded_mutex {
    mutex_t mu;
    uint8_t pad[128];
};

static void mutex_uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct padded_mutex m = { MUTEX_INIT, { 0 } };
    while (pb_next(pb)) {
        mutex_lock(&m.mu);
        mutex_unlock(&m.mu);
    }
}

static void bench_mutex_uncontended(struct gb *b)
{
    gb_run_parallel(b, mutex_uncontended_body, 0);
}

// ---- Mutex, MutexSlack, MutexWork, MutexWorkSlack: one shared mutex -------

struct shared_mutex {
    mutex_t mu;
    bool work;
};

static void mutex_body(struct gb_pb *pb, void *arg)
{
    struct shared_mutex *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        mutex_lock(&s->mu);
        mutex_unlock(&s->mu);
        if (s->work)
            foo = gb_work100(foo);
    }
}

static void mutex_bench(struct gb *b, bool slack, bool work)
{
    struct shared_mutex s = { MUTEX_INIT, work };
    if (slack)
        b->parallelism = 10;
    gb_run_parallel(b, mutex_body, &s);
}

static void bench_mutex(struct gb *b) { mutex_bench(b, false, false); }
static void bench_mutex_slack(struct gb *b) { mutex_bench(b, true, false); }
static void bench_mutex_work(struct gb *b) { mutex_bench(b, false, true); }
static void bench_mutex_work_slack(struct gb *b) { mutex_bench(b, true, true); }

// ---- MutexNoSpin, MutexSpin -------------------------------------------------

struct spin_mutex {
    mutex_t m;
    uint64_t acc0, acc1;
};

static void send_true(void *arg)
{
    bool t = true;
    chan_send(arg, &t);
}

static void mutex_nospin_body(struct gb_pb *pb, void *arg)
{
    struct spin_mutex *s = arg;
    chan_t *c = chan_make(1, 0);
    uint64_t *data = calloc(4 << 10, sizeof *data);
    for (int i = 0; pb_next(pb); i++) {
        if (i % 4 == 0) {
            mutex_lock(&s->m);
            s->acc0 -= 100;
            s->acc1 += 100;
            mutex_unlock(&s->m);
        } else {
            for (int k = 0; k < 4 << 10; k += 4)
                data[k]++;
            // a Gosched that keeps off the global queue
            go(send_true, c);
            chan_recv(c, 0);
        }
    }
    free(data);
    chan_free(c);
}

static void bench_mutex_nospin(struct gb *b)
{
    struct spin_mutex s = { MUTEX_INIT, 0, 0 };
    b->parallelism = 4;
    gb_run_parallel(b, mutex_nospin_body, &s);
}

static void mutex_spin_body(struct gb_pb *pb, void *arg)
{
    struct spin_mutex *s = arg;
    uint64_t *data = calloc(16 << 10, sizeof *data);
    while (pb_next(pb)) {
        mutex_lock(&s->m);
        s->acc0 -= 100;
        s->acc1 += 100;
        mutex_unlock(&s->m);
        for (int k = 0; k < 16 << 10; k += 4)
            data[k]++;
    }
    free(data);
}

static void bench_mutex_spin(struct gb *b)
{
    struct spin_mutex s = { MUTEX_INIT, 0, 0 };
    gb_run_parallel(b, mutex_spin_body, &s);
}

// ---- RWMutex --------------------------------------------------------------

struct padded_rwmutex {
    rwmutex_t rw;
    uint32_t pad[32];
};

static void rw_uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct padded_rwmutex m = { 0 };
    while (pb_next(pb)) {
        rwmutex_rlock(&m.rw);
        rwmutex_rlock(&m.rw);
        rwmutex_runlock(&m.rw);
        rwmutex_runlock(&m.rw);
        rwmutex_lock(&m.rw);
        rwmutex_unlock(&m.rw);
    }
}

static void bench_rwmutex_uncontended(struct gb *b)
{
    gb_run_parallel(b, rw_uncontended_body, 0);
}

struct shared_rw {
    rwmutex_t rw;
    int local_work, write_ratio;
};

static void rw_body(struct gb_pb *pb, void *arg)
{
    struct shared_rw *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        foo++;
        if (foo % s->write_ratio == 0) {
            rwmutex_lock(&s->rw);
            rwmutex_unlock(&s->rw);
        } else {
            rwmutex_rlock(&s->rw);
            for (int i = 0; i != s->local_work; i++) {
                foo *= 2;
                __asm__("" : "+r"(foo));
                foo /= 2;
                __asm__("" : "+r"(foo));
            }
            rwmutex_runlock(&s->rw);
        }
    }
}

static void rwmutex_bench(struct gb *b, int local_work, int write_ratio)
{
    struct shared_rw s = { .local_work = local_work, .write_ratio = write_ratio };
    gb_run_parallel(b, rw_body, &s);
}

static void bench_rwmutex_write100(struct gb *b) { rwmutex_bench(b, 0, 100); }
static void bench_rwmutex_write10(struct gb *b) { rwmutex_bench(b, 0, 10); }
static void bench_rwmutex_work_write100(struct gb *b) { rwmutex_bench(b, 100, 100); }
static void bench_rwmutex_work_write10(struct gb *b) { rwmutex_bench(b, 100, 10); }

// ---- Cond: waiters+1 goroutines; the last to arrive broadcasts ------------

struct condb {
    mutex_t m;
    cond_t c;
    int id, waiters;
    uint64_t n;
    chan_t *done;
};

static void cond_g(void *arg)
{
    struct condb *s = arg;
    for (uint64_t i = 0; i < s->n; i++) {
        mutex_lock(&s->m);
        if (s->id == -1) {
            mutex_unlock(&s->m);
            break;
        }
        s->id++;
        if (s->id == s->waiters + 1) {
            s->id = 0;
            cond_broadcast(&s->c);
        } else
            cond_wait(&s->c, &s->m);
        mutex_unlock(&s->m);
    }
    mutex_lock(&s->m);
    s->id = -1;
    cond_broadcast(&s->c);
    mutex_unlock(&s->m);
    bool t = true;
    chan_send(s->done, &t);
}

static void cond_bench(struct gb *b, int waiters)
{
    struct condb s = { MUTEX_INIT, COND_INIT, 0, waiters, b->n, chan_make(1, 0) };
    gb_start(b);
    for (int r = 0; r < waiters + 1; r++)
        go(cond_g, &s);
    for (int r = 0; r < waiters + 1; r++)
        chan_recv(s.done, 0);
    gb_stop(b);
    chan_free(s.done);
}

static void bench_cond1(struct gb *b) { cond_bench(b, 1); }
static void bench_cond2(struct gb *b) { cond_bench(b, 2); }
static void bench_cond4(struct gb *b) { cond_bench(b, 4); }
static void bench_cond8(struct gb *b) { cond_bench(b, 8); }
static void bench_cond16(struct gb *b) { cond_bench(b, 16); }
static void bench_cond32(struct gb *b) { cond_bench(b, 32); }

// ---- Once ------------------------------------------------------------------

static void nothing(void *arg)
{
    (void)arg;
}

static void once_body(struct gb_pb *pb, void *arg)
{
    while (pb_next(pb))
        once_do(arg, nothing, 0);
}

static void bench_once(struct gb *b)
{
    once_t once = ONCE_INIT;
    gb_run_parallel(b, once_body, &once);
}

// ---- WaitGroup ----------------------------------------------------------------

struct padded_wg {
    waitgroup_t wg;
    uint8_t pad[128];
};

static void wg_uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct padded_wg w = { WAITGROUP_INIT, { 0 } };
    while (pb_next(pb)) {
        wg_add(&w.wg, 1);
        wg_done(&w.wg);
        wg_wait(&w.wg);
    }
}

static void bench_wg_uncontended(struct gb *b)
{
    gb_run_parallel(b, wg_uncontended_body, 0);
}

struct shared_wg {
    waitgroup_t wg;
    bool work;
};

static void wg_add_done_body(struct gb_pb *pb, void *arg)
{
    struct shared_wg *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        wg_add(&s->wg, 1);
        if (s->work)
            foo = gb_work100(foo);
        wg_done(&s->wg);
    }
}

static void wg_wait_body(struct gb_pb *pb, void *arg)
{
    struct shared_wg *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        wg_wait(&s->wg);
        if (s->work)
            foo = gb_work100(foo);
    }
}

static void bench_wg_add_done(struct gb *b)
{
    struct shared_wg s = { WAITGROUP_INIT, false };
    gb_run_parallel(b, wg_add_done_body, &s);
}

static void bench_wg_add_done_work(struct gb *b)
{
    struct shared_wg s = { WAITGROUP_INIT, true };
    gb_run_parallel(b, wg_add_done_body, &s);
}

static void bench_wg_wait(struct gb *b)
{
    struct shared_wg s = { WAITGROUP_INIT, false };
    gb_run_parallel(b, wg_wait_body, &s);
}

static void bench_wg_wait_work(struct gb *b)
{
    struct shared_wg s = { WAITGROUP_INIT, true };
    gb_run_parallel(b, wg_wait_body, &s);
}

const struct gobench gobench_sync[] = {
    { "Cond1", 20000, bench_cond1 },
    { "Cond2", 10000, bench_cond2 },
    { "Cond4", 5000, bench_cond4 },
    { "Cond8", 2000, bench_cond8 },
    { "Cond16", 2000, bench_cond16 },
    { "Cond32", 500, bench_cond32 },
    { "MutexUncontended", 200000, bench_mutex_uncontended },
    { "Mutex", 200000, bench_mutex },
    { "MutexSlack", 100000, bench_mutex_slack },
    { "MutexWork", 20000, bench_mutex_work },
    { "MutexWorkSlack", 20000, bench_mutex_work_slack },
    { "MutexNoSpin", 1000, bench_mutex_nospin },
    { "MutexSpin", 200, bench_mutex_spin },
    { "Once", 200000, bench_once },
    { "RWMutexUncontended", 50000, bench_rwmutex_uncontended },
    { "RWMutexWrite100", 100000, bench_rwmutex_write100 },
    { "RWMutexWrite10", 200000, bench_rwmutex_write10 },
    { "RWMutexWorkWrite100", 5000, bench_rwmutex_work_write100 },
    { "RWMutexWorkWrite10", 5000, bench_rwmutex_work_write10 },
    { "WaitGroupUncontended", 50000, bench_wg_uncontended },
    { "WaitGroupAddDone", 50000, bench_wg_add_done },
    { "WaitGroupAddDoneWork", 20000, bench_wg_add_done_work },
    { "WaitGroupWait", 200000, bench_wg_wait },
    { "WaitGroupWaitWork", 20000, bench_wg_wait_work },
    { 0 },
};
