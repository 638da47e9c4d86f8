// SPDX-License-Identifier: MIT
// Go 1.19's src/runtime/chan_test.go channel benchmarks (the select ones
// are in gobench_select.c), with its workloads. Go's collector frees the
// channels a loop makes; here the loop frees them (chan_free).
#include "goro.h"
#include "gobench.h"

// ---- MakeChan: make(chan T, 8) in a loop ----------------------------------

static void make_chan(struct gb *b, size_t elem)
{
    gb_start(b);
    chan_t *x = 0;
    for (uint64_t i = 0; i < b->n; i++) {
        if (x)
            chan_free(x);
        x = chan_make(elem, 8);
    }
    gb_stop(b);
    chan_close(x);
    chan_free(x);
}

static void bench_make_chan_byte(struct gb *b) { make_chan(b, 1); }
static void bench_make_chan_int(struct gb *b) { make_chan(b, 8); }
static void bench_make_chan_ptr(struct gb *b) { make_chan(b, 8); }
static void bench_make_chan_struct0(struct gb *b) { make_chan(b, 0); }
static void bench_make_chan_struct32(struct gb *b) { make_chan(b, 32); }
static void bench_make_chan_struct40(struct gb *b) { make_chan(b, 40); }

// ---- ChanNonblocking: a receive with default on an idle channel ------------

static void nonblocking_body(struct gb_pb *pb, void *arg)
{
    chan_t *c = arg;
    while (pb_next(pb))
        chan_try_recv(c, 0);
}

static void bench_chan_nonblocking(struct gb *b)
{
    chan_t *c = chan_make(sizeof(int64_t), 0);
    gb_run_parallel(b, nonblocking_body, c);
    chan_free(c);
}

// ---- ChanUncontended / ChanContended: fill 100, drain 100 -----------------

#define FILL 100

static void fill_drain(chan_t *c, struct gb_pb *pb)
{
    int64_t v = 0;
    while (pb_next(pb)) {
        for (int i = 0; i < FILL; i++)
            chan_send(c, &v);
        for (int i = 0; i < FILL; i++)
            chan_recv(c, &v);
    }
}

static void uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    chan_t *c = chan_make(sizeof(int64_t), FILL);
    fill_drain(c, pb);
    chan_free(c);
}

static void bench_chan_uncontended(struct gb *b)
{
    gb_run_parallel(b, uncontended_body, 0);
}

static void contended_body(struct gb_pb *pb, void *arg)
{
    fill_drain(arg, pb);
}

static void bench_chan_contended(struct gb *b)
{
    chan_t *c = chan_make(sizeof(int64_t), FILL * (size_t)gomaxprocs(0));
    gb_run_parallel(b, contended_body, c);
    chan_free(c);
}

// ---- ChanSync(Work): two goroutines hand values over an unbuffered channel,
// 1000 calls per ticket ------------------------------------------------------

#define CALLS_PER_SCHED 1000

struct csync {
    int32_t tickets;
    int work;
    chan_t *c, *myc;
};

static void chan_sync_g(void *arg)
{
    struct csync *s = arg;
    int64_t v = 0;
    for (;;) {
        int32_t i = __atomic_sub_fetch(&s->tickets, 1, __ATOMIC_RELAXED);   // relaxed: a ticket counter
        if (i < 0)
            break;
        for (int g = 0; g < CALLS_PER_SCHED; g++) {
            if (i % 2 == 0) {
                chan_recv(s->myc, &v);
                gb_local_work(s->work);
                chan_send(s->myc, &v);
                gb_local_work(s->work);
            } else {
                chan_send(s->myc, &v);
                gb_local_work(s->work);
                chan_recv(s->myc, &v);
                gb_local_work(s->work);
            }
        }
    }
    chan_send(s->c, 0);
}

static void chan_sync(struct gb *b, int work)
{
    const int procs = 2;
    struct csync s = { (int32_t)(b->n / CALLS_PER_SCHED / procs * procs), work,
                       chan_make(1, procs), chan_make(sizeof(int64_t), 0) };
    gb_start(b);
    for (int p = 0; p < procs; p++)
        go(chan_sync_g, &s);
    for (int p = 0; p < procs; p++)
        chan_recv(s.c, 0);
    gb_stop(b);
    chan_free(s.c);
    chan_free(s.myc);
}

static void bench_chan_sync(struct gb *b) { chan_sync(b, 0); }
static void bench_chan_sync_work(struct gb *b) { chan_sync(b, 1000); }

// ---- ChanProdCons: a producer and a consumer per P on one channel ----------

struct prodcons {
    int32_t tickets;
    int work;
    chan_t *c, *myc;
};

static void producer(void *arg)
{
    struct prodcons *s = arg;
    int64_t foo = 0, one = 1, zero = 0;
    while (__atomic_sub_fetch(&s->tickets, 1, __ATOMIC_RELAXED) >= 0)   // relaxed: a ticket counter
        for (int g = 0; g < CALLS_PER_SCHED; g++) {
            if (s->work)
                foo = gb_work100(foo);
            chan_send(s->myc, &one);
        }
    chan_send(s->myc, &zero);
    bool r = foo == 42;
    chan_send(s->c, &r);
}

static void consumer(void *arg)
{
    struct prodcons *s = arg;
    int64_t foo = 0;
    for (;;) {
        int64_t v;
        chan_recv(s->myc, &v);
        if (v == 0)
            break;
        if (s->work)
            foo = gb_work100(foo);
    }
    bool r = foo == 42;
    chan_send(s->c, &r);
}

static void chan_prod_cons(struct gb *b, size_t size, int work)
{
    int procs = gomaxprocs(0);
    struct prodcons s = { (int32_t)(b->n / CALLS_PER_SCHED), work, chan_make(1, 2 * (size_t)procs),
                          chan_make(sizeof(int64_t), size) };
    gb_start(b);
    for (int p = 0; p < procs; p++) {
        go(producer, &s);
        go(consumer, &s);
    }
    for (int p = 0; p < 2 * procs; p++)
        chan_recv(s.c, 0);
    gb_stop(b);
    chan_free(s.c);
    chan_free(s.myc);
}

static void bench_prod_cons0(struct gb *b) { chan_prod_cons(b, 0, 0); }
static void bench_prod_cons10(struct gb *b) { chan_prod_cons(b, 10, 0); }
static void bench_prod_cons100(struct gb *b) { chan_prod_cons(b, 100, 0); }
static void bench_prod_cons_work0(struct gb *b) { chan_prod_cons(b, 0, 100); }
static void bench_prod_cons_work10(struct gb *b) { chan_prod_cons(b, 10, 100); }
static void bench_prod_cons_work100(struct gb *b) { chan_prod_cons(b, 100, 100); }

// ---- ReceiveDataFromClosedChan: drain N values from a closed channel -------

static void bench_receive_closed(struct gb *b)
{
    chan_t *c = chan_make(0, b->n);
    for (uint64_t i = 0; i < b->n; i++)
        chan_send(c, 0);
    chan_close(c);
    gb_start(b);
    while (chan_recv(c, 0))
        ;
    gb_stop(b);
    chan_free(c);
}

// ---- ChanCreation, ChanSem ------------------------------------------------

static void creation_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    int64_t v = 0;
    while (pb_next(pb)) {
        chan_t *c = chan_make(sizeof v, 1);
        chan_send(c, &v);
        chan_recv(c, &v);
        chan_free(c);
    }
}

static void bench_chan_creation(struct gb *b)
{
    gb_run_parallel(b, creation_body, 0);
}

static void sem_body(struct gb_pb *pb, void *arg)
{
    chan_t *c = arg;
    while (pb_next(pb)) {
        chan_send(c, 0);
        chan_recv(c, 0);
    }
}

static void bench_chan_sem(struct gb *b)
{
    chan_t *c = chan_make(0, (size_t)gomaxprocs(0));
    gb_run_parallel(b, sem_body, c);
    chan_free(c);
}

// ---- ChanPopular: 1000 goroutines each select on a shared channel and
// their own; the main goroutine sends to each in turn ------------------------

#define POPULAR 1000

struct popular {
    uint64_t n;
    chan_t *c;
    chan_t *d[POPULAR];
    waitgroup_t wg;
};

struct popular_arg {
    struct popular *s;
    int j;
};

static void popular_g(void *arg)
{
    struct popular_arg *a = arg;
    struct popular *s = a->s;
    struct select_case cases[2] = { { s->c, SELECT_RECV, 0, false }, { s->d[a->j], SELECT_RECV, 0, false } };
    for (uint64_t i = 0; i < s->n; i++)
        chan_select(cases, 2, true);
    wg_done(&s->wg);
}

static void bench_chan_popular(struct gb *b)
{
    struct popular *s = calloc(1, sizeof *s);
    struct popular_arg *args = malloc(POPULAR * sizeof *args);
    s->n = b->n;
    s->c = chan_make(1, 0);
    gb_start(b);
    wg_add(&s->wg, POPULAR);
    for (int j = 0; j < POPULAR; j++) {
        s->d[j] = chan_make(1, 0);
        args[j] = (struct popular_arg){ s, j };
        go(popular_g, &args[j]);
    }
    bool t = true;
    for (uint64_t i = 0; i < b->n; i++)
        for (int j = 0; j < POPULAR; j++)
            chan_send(s->d[j], &t);
    wg_wait(&s->wg);
    gb_stop(b);
    for (int j = 0; j < POPULAR; j++)
        chan_free(s->d[j]);
    chan_free(s->c);
    free(args);
    free(s);
}

// ---- ChanClosed: a receive with default on a closed channel ---------------

static void closed_body(struct gb_pb *pb, void *arg)
{
    chan_t *c = arg;
    while (pb_next(pb))
        if (chan_try_recv(c, 0) != CHAN_CLOSED)
            panic("gobench: ChanClosed: unreachable");
}

static void bench_chan_closed(struct gb *b)
{
    chan_t *c = chan_make(0, 0);
    chan_close(c);
    gb_run_parallel(b, closed_body, c);
    chan_free(c);
}

const struct gobench gobench_chan[] = {
    { "MakeChan/Byte", 10000, bench_make_chan_byte },
    { "MakeChan/Int", 10000, bench_make_chan_int },
    { "MakeChan/Ptr", 10000, bench_make_chan_ptr },
    { "MakeChan/Struct/0", 10000, bench_make_chan_struct0 },
    { "MakeChan/Struct/32", 10000, bench_make_chan_struct32 },
    { "MakeChan/Struct/40", 10000, bench_make_chan_struct40 },
    { "ChanNonblocking", 50000, bench_chan_nonblocking },
    { "ChanUncontended", 500, bench_chan_uncontended },
    { "ChanContended", 500, bench_chan_contended },
    { "ChanSync", 20000, bench_chan_sync },
    { "ChanSyncWork", 2000, bench_chan_sync_work },
    { "ChanProdCons0", 20000, bench_prod_cons0 },
    { "ChanProdCons10", 50000, bench_prod_cons10 },
    { "ChanProdCons100", 50000, bench_prod_cons100 },
    { "ChanProdConsWork0", 5000, bench_prod_cons_work0 },
    { "ChanProdConsWork10", 5000, bench_prod_cons_work10 },
    { "ChanProdConsWork100", 5000, bench_prod_cons_work100 },
    { "ReceiveDataFromClosedChan", 100000, bench_receive_closed },
    { "ChanCreation", 10000, bench_chan_creation },
    { "ChanSem", 50000, bench_chan_sem },
    { "ChanPopular", 5, bench_chan_popular },
    { "ChanClosed", 100000, bench_chan_closed },
    { 0 },
};
