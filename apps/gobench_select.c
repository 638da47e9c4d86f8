// SPDX-License-Identifier: MIT
// Go 1.19's src/runtime/chan_test.go select benchmarks, with its workloads.
#include "goro.h"
#include "gobench.h"

// ---- SelectUncontended: each G bounces a token between its own two
// one-slot channels -----------------------------------------------------------

static void bounce(chan_t *c1, chan_t *c2, struct gb_pb *pb)
{
    int64_t v;
    struct select_case cases[2] = { { c1, SELECT_RECV, &v, false }, { c2, SELECT_RECV, &v, false } };
    while (pb_next(pb)) {
        int64_t zero = 0;
        if (chan_select(cases, 2, true) == 0)
            chan_send(c2, &zero);
        else
            chan_send(c1, &zero);
    }
}

static void uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    chan_t *c1 = chan_make(sizeof(int64_t), 1), *c2 = chan_make(sizeof(int64_t), 1);
    chan_send(c1, 0);
    bounce(c1, c2, pb);
    chan_free(c1);
    chan_free(c2);
}

static void bench_select_uncontended(struct gb *b)
{
    gb_run_parallel(b, uncontended_body, 0);
}

// ---- SelectSyncContended: per P a sender selecting over three unbuffered
// channels and a done channel, and a receiver selecting over the three ------

struct sync_contended {
    chan_t *c[3], *done;
    waitgroup_t senders;        // C frees the channels: wait for the senders Go leaves behind
};

static void sync_sender(void *arg)
{
    struct sync_contended *s = arg;
    int64_t zero = 0;
    struct select_case cases[4] = {
        { s->c[0], SELECT_SEND, &zero, false }, { s->c[1], SELECT_SEND, &zero, false },
        { s->c[2], SELECT_SEND, &zero, false }, { s->done, SELECT_RECV, 0, false },
    };
    while (chan_select(cases, 4, true) != 3)
        ;
    wg_done(&s->senders);
}

static void sync_contended_body(struct gb_pb *pb, void *arg)
{
    struct sync_contended *s = arg;
    wg_add(&s->senders, 1);
    go(sync_sender, s);
    int64_t v;
    struct select_case cases[3] = {
        { s->c[0], SELECT_RECV, &v, false }, { s->c[1], SELECT_RECV, &v, false },
        { s->c[2], SELECT_RECV, &v, false },
    };
    while (pb_next(pb))
        chan_select(cases, 3, true);
}

static void bench_select_sync_contended(struct gb *b)
{
    struct sync_contended s = { { chan_make(sizeof(int64_t), 0), chan_make(sizeof(int64_t), 0),
                                  chan_make(sizeof(int64_t), 0) }, chan_make(sizeof(int64_t), 0), WAITGROUP_INIT };
    gb_run_parallel(b, sync_contended_body, &s);
    chan_close(s.done);
    wg_wait(&s.senders);
    for (int i = 0; i < 3; i++)
        chan_free(s.c[i]);
    chan_free(s.done);
}

// ---- SelectAsyncContended: the bounce on two channels shared by all --------

struct async_contended {
    chan_t *c1, *c2;
};

static void async_contended_body(struct gb_pb *pb, void *arg)
{
    struct async_contended *s = arg;
    chan_send(s->c1, 0);
    bounce(s->c1, s->c2, pb);
}

static void bench_select_async_contended(struct gb *b)
{
    size_t procs = (size_t)gomaxprocs(0);
    struct async_contended s = { chan_make(sizeof(int64_t), procs), chan_make(sizeof(int64_t), procs) };
    gb_run_parallel(b, async_contended_body, &s);
    chan_free(s.c1);
    chan_free(s.c2);
}

// ---- SelectNonblock: four selects with default, none ready to block -------

struct nonblock {
    chan_t *c1, *c2, *c3, *c4;
};

static void nonblock_body(struct gb_pb *pb, void *arg)
{
    struct nonblock *s = arg;
    int64_t zero = 0;
    while (pb_next(pb)) {
        chan_try_recv(s->c1, 0);
        chan_try_send(s->c2, &zero);
        chan_try_recv(s->c3, 0);
        chan_try_send(s->c4, &zero);
    }
}

static void bench_select_nonblock(struct gb *b)
{
    struct nonblock s = { chan_make(sizeof(int64_t), 0), chan_make(sizeof(int64_t), 0),
                          chan_make(sizeof(int64_t), 1), chan_make(sizeof(int64_t), 1) };
    gb_run_parallel(b, nonblock_body, &s);
    chan_free(s.c1);
    chan_free(s.c2);
    chan_free(s.c3);
    chan_free(s.c4);
}

// ---- SelectProdCons: ChanProdConsWork100's producers and consumers, each
// selecting beside an hour-long timer and a close channel -------------------

#define CALLS_PER_SCHED 1000

struct select_prodcons {
    int32_t tickets;
    chan_t *c, *myc, *myclose;
};

static void sp_producer(void *arg)
{
    struct select_prodcons *s = arg;
    int64_t foo = 0, one = 1, zero = 0;
    gtimer_t *timer = gtimer_new(3600000000000ull);    // intended not to fire
    struct select_case cases[3] = {
        { s->myc, SELECT_SEND, &one, false }, { gtimer_chan(timer), SELECT_RECV, 0, false },
        { s->myclose, SELECT_RECV, 0, false },
    };
    while (__atomic_sub_fetch(&s->tickets, 1, __ATOMIC_RELAXED) >= 0)  // relaxed: a ticket counter
        for (int g = 0; g < CALLS_PER_SCHED; g++) {
            foo = gb_work100(foo);
            chan_select(cases, 3, true);
        }
    chan_send(s->myc, &zero);
    gtimer_free(timer);
    bool r = foo == 42;
    chan_send(s->c, &r);
}

static void sp_consumer(void *arg)
{
    struct select_prodcons *s = arg;
    int64_t foo = 0, v = -1;
    gtimer_t *timer = gtimer_new(3600000000000ull);
    struct select_case cases[3] = {
        { s->myc, SELECT_RECV, &v, false }, { gtimer_chan(timer), SELECT_RECV, 0, false },
        { s->myclose, SELECT_RECV, 0, false },
    };
    for (;;) {
        if (chan_select(cases, 3, true) == 0 && v == 0)
            break;
        foo = gb_work100(foo);
    }
    gtimer_free(timer);
    bool r = foo == 42;
    chan_send(s->c, &r);
}

static void bench_select_prod_cons(struct gb *b)
{
    int procs = gomaxprocs(0);
    struct select_prodcons s = { (int32_t)(b->n / CALLS_PER_SCHED), chan_make(1, 2 * (size_t)procs),
                                 chan_make(sizeof(int64_t), 128), chan_make(1, 0) };
    gb_start(b);
    for (int p = 0; p < procs; p++) {
        go(sp_producer, &s);
        go(sp_consumer, &s);
    }
    for (int p = 0; p < 2 * procs; p++)
        chan_recv(s.c, 0);
    gb_stop(b);
    chan_free(s.c);
    chan_free(s.myc);
    chan_free(s.myclose);
}

const struct gobench gobench_select[] = {
    { "SelectUncontended", 10000, bench_select_uncontended },
    { "SelectSyncContended", 2000, bench_select_sync_contended },
    { "SelectAsyncContended", 10000, bench_select_async_contended },
    { "SelectNonblock", 50000, bench_select_nonblock },
    { "SelectProdCons", 5000, bench_select_prod_cons },
    { 0 },
};
