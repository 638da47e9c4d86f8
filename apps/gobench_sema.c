// SPDX-License-Identifier: MIT
// Go 1.19's src/sync/runtime_sema_test.go benchmarks: the runtime
// semaphore under sync's feet (goro's sema_t), with their workloads.
#include "goro.h"
#include "gobench.h"

// ---- SemaUncontended: a semaphore of each G's own -------------------------

struct padded_sema {
    sema_t sem;
    uint32_t pad[32];
};

static void uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct padded_sema *s = calloc(1, sizeof *s);      // Go's new(PaddedSem)
    while (pb_next(pb)) {
        sema_release(&s->sem);
        sema_acquire(&s->sem);
    }
    free(s);
}

static void bench_sema_uncontended(struct gb *b)
{
    gb_run_parallel(b, uncontended_body, 0);
}

// ---- SemaSynt/Work, Nonblock/Block: one shared semaphore; Block adds a
// goroutine that takes gomaxprocs/2 of the releases for itself -------------

struct shared_sema {
    sema_t sem;
    bool work;
    chan_t *done;
};

static void shared_body(struct gb_pb *pb, void *arg)
{
    struct shared_sema *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        sema_release(&s->sem);
        if (s->work)
            foo = gb_work100(foo);
        sema_acquire(&s->sem);
    }
    sema_release(&s->sem);
}

static void blocker(void *arg)
{
    struct shared_sema *s = arg;
    for (int p = 0; p < gomaxprocs(0) / 2; p++)
        sema_acquire(&s->sem);
    bool t = true;
    chan_send(s->done, &t);
}

static void sema_bench(struct gb *b, bool block, bool work)
{
    struct shared_sema s = { SEMA_INIT, work, 0 };
    if (block) {
        s.done = chan_make(1, 0);
        go(blocker, &s);
    }
    gb_run_parallel(b, shared_body, &s);
    if (block) {
        chan_recv(s.done, 0);
        chan_free(s.done);
    }
}

static void bench_synt_nonblock(struct gb *b) { sema_bench(b, false, false); }
static void bench_synt_block(struct gb *b) { sema_bench(b, true, false); }
static void bench_work_nonblock(struct gb *b) { sema_bench(b, false, true); }
static void bench_work_block(struct gb *b) { sema_bench(b, true, true); }

const struct gobench gobench_sema[] = {
    { "SemaUncontended", 50000, bench_sema_uncontended },
    { "SemaSyntNonblock", 50000, bench_synt_nonblock },
    { "SemaSyntBlock", 50000, bench_synt_block },
    { "SemaWorkNonblock", 20000, bench_work_nonblock },
    { "SemaWorkBlock", 20000, bench_work_block },
    { 0 },
};
