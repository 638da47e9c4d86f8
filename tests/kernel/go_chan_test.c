// SPDX-License-Identifier: MIT
// Go 1.19's channel tests (runtime/chan_test.go, chanbarrier_test.go, and
// test/chan/fifo.go and goroutines.go), written again for goro's channels.
// The select tests of chan_test.go are in go_select_test.c; docs/testing.md
// lists the ones that do not apply (stack shrinking by the GC).
//
// C has no collector: a channel is freed only once every goroutine that
// used it is done with it, which the tests wait for explicitly where Go
// just lets go.
#include "tests/kernel/go_test.h"

// ---- TestChan --------------------------------------------------------------

// For each capacity 0..19 (Go's short mode; 0..199 otherwise), with
// gomaxprocs 4: receives from an empty channel and sends to a full one
// block; closed channels give zeros after their values; close unblocks a
// receiver; 100 values arrive in FIFO order; 4 senders and 4 receivers of
// 1000 values each lose and duplicate nothing; len and cap. Go's "blocks"
// checks look 1 ms later, as here: a lower bound, safe on any host.
static struct {
    chan_t *c;
    uint64_t recv1, recv2, sent, finished;
    chan_t *done;
} tc;

static void tc_recv1(void *arg)
{
    (void)arg;
    int64_t v;
    chan_recv(tc.c, &v);
    kt_store(&tc.recv1, 1);
    kt_add(&tc.finished, 1);
}

static void tc_recv2(void *arg)
{
    (void)arg;
    int64_t v;
    chan_recv(tc.c, &v);            // Go's `_, _ = <-c`: the same receive, with ok
    kt_store(&tc.recv2, 1);
    kt_add(&tc.finished, 1);
}

static void tc_send0(void *arg)
{
    (void)arg;
    int64_t zero = 0;
    chan_send(tc.c, &zero);
    kt_store(&tc.sent, 1);
    kt_add(&tc.finished, 1);
}

static void tc_recv_closed(void *arg)
{
    (void)arg;
    int64_t v = 1;
    bool ok = chan_recv(tc.c, &v);
    bool good = v == 0 && !ok;
    chan_send(tc.done, &good);
}

static void tc_send100(void *arg)
{
    (void)arg;
    for (int64_t i = 0; i < 100; i++)
        chan_send(tc.c, &i);
    kt_add(&tc.finished, 1);
}

#define TC_P 4
#define TC_L 1000

static void tc_sendL(void *arg)
{
    (void)arg;
    for (int64_t i = 0; i < TC_L; i++)
        chan_send(tc.c, &i);
    kt_add(&tc.finished, 1);
}

static void tc_recvL(void *arg)
{
    uint32_t *recv = arg;           // this receiver's counts, read by the test after done
    for (int i = 0; i < TC_L; i++) {
        int64_t v = -1;
        chan_recv(tc.c, &v);
        if (v >= 0 && v < TC_L)
            recv[v]++;
    }
    bool t = true;
    chan_send(tc.done, &t);
}

static void tc_wait_finished(uint64_t n)
{
    if (!kt_wait_count(&tc.finished, n, GO_STALL_MS))
        ktest_fail(__FILE__, __LINE__, "goroutines stuck: %lu of %lu finished", kt_load(&tc.finished), n);
}

static void test_chan_cap(int64_t cap)
{
    int64_t v;
    {
        // Receive from an empty channel blocks; a non-blocking one does not.
        tc.c = chan_make(sizeof(int64_t), (size_t)cap);
        tc.recv1 = tc.recv2 = tc.finished = 0;
        go(tc_recv1, 0);
        go(tc_recv2, 0);
        sleep_ns(1 * GO_MS);
        if (kt_load(&tc.recv1) || kt_load(&tc.recv2))
            KT_FAIL("chan[%ld]: receive from empty chan", cap);
        if (chan_try_recv(tc.c, &v) != CHAN_WOULD_BLOCK || chan_try_recv(tc.c, &v) != CHAN_WOULD_BLOCK)
            KT_FAIL("chan[%ld]: receive from empty chan", cap);
        v = 0;
        chan_send(tc.c, &v);
        chan_send(tc.c, &v);
        tc_wait_finished(2);
        chan_free(tc.c);
    }
    {
        // Send to a full channel blocks; a non-blocking one does not.
        tc.c = chan_make(sizeof(int64_t), (size_t)cap);
        for (int64_t i = 0; i < cap; i++)
            chan_send(tc.c, &i);
        tc.sent = tc.finished = 0;
        go(tc_send0, 0);
        sleep_ns(1 * GO_MS);
        if (kt_load(&tc.sent))
            KT_FAIL("chan[%ld]: send to full chan", cap);
        v = 0;
        if (chan_try_send(tc.c, &v))
            KT_FAIL("chan[%ld]: send to full chan", cap);
        chan_recv(tc.c, &v);
        tc_wait_finished(1);
        chan_free(tc.c);
    }
    {
        // A closed channel gives its values, then zeros.
        chan_t *c = chan_make(sizeof(int64_t), (size_t)cap);
        for (int64_t i = 0; i < cap; i++)
            chan_send(c, &i);
        chan_close(c);
        for (int64_t i = 0; i < cap; i++) {
            chan_recv(c, &v);
            if (v != i)
                KT_FAIL("chan[%ld]: received %ld, expected %ld", cap, v, i);
        }
        v = 1;
        chan_recv(c, &v);
        if (v != 0)
            KT_FAIL("chan[%ld]: received %ld, expected 0", cap, v);
        v = 1;
        bool ok = chan_recv(c, &v);
        if (v != 0 || ok)
            KT_FAIL("chan[%ld]: received %ld/%d, expected 0/0", cap, v, ok);
        chan_free(c);
    }
    {
        // Close unblocks a receiver.
        tc.c = chan_make(sizeof(int64_t), (size_t)cap);
        tc.done = chan_make(sizeof(bool), 0);
        go(tc_recv_closed, 0);
        sleep_ns(1 * GO_MS);
        chan_close(tc.c);
        bool good = false;
        chan_recv(tc.done, &good);
        if (!good)
            KT_FAIL("chan[%ld]: received non zero from closed chan", cap);
        chan_free(tc.c);
        chan_free(tc.done);
    }
    {
        // 100 values in FIFO order, by recv and by recv with ok.
        tc.c = chan_make(sizeof(int64_t), (size_t)cap);
        tc.done = chan_make(sizeof(bool), 0);
        tc.finished = 0;
        go(tc_send100, 0);
        for (int64_t i = 0; i < 100; i++) {
            chan_recv(tc.c, &v);
            if (v != i)
                KT_FAIL("chan[%ld]: received %ld, expected %ld", cap, v, i);
        }
        go(tc_send100, 0);
        for (int64_t i = 0; i < 100; i++) {
            if (!chan_recv(tc.c, &v))
                KT_FAIL("chan[%ld]: receive failed, expected %ld", cap, i);
            if (v != i)
                KT_FAIL("chan[%ld]: received %ld, expected %ld", cap, v, i);
        }
        // 4 senders and 4 receivers of 1000 values each.
        static uint32_t recv[TC_P][TC_L];
        memset(recv, 0, sizeof recv);
        for (int p = 0; p < TC_P; p++)
            go(tc_sendL, 0);
        for (int p = 0; p < TC_P; p++)
            go(tc_recvL, recv[p]);
        for (int p = 0; p < TC_P; p++) {
            bool t;
            chan_recv(tc.done, &t);
        }
        tc_wait_finished(2 + TC_P);
        for (int k = 0; k < TC_L; k++) {
            uint32_t n = 0;
            for (int p = 0; p < TC_P; p++)
                n += recv[p][k];
            if (n != TC_P)
                KT_FAIL("chan[%ld]: value %d received %u times, expected %d", cap, k, n, TC_P);
        }
        chan_free(tc.c);
        chan_free(tc.done);
    }
    {
        // len and cap.
        chan_t *c = chan_make(sizeof(int64_t), (size_t)cap);
        if (chan_len(c) != 0 || chan_cap(c) != (size_t)cap)
            KT_FAIL("chan[%ld]: bad len/cap, expect 0/%ld, got %lu/%lu", cap, cap, chan_len(c), chan_cap(c));
        for (int64_t i = 0; i < cap; i++)
            chan_send(c, &i);
        if (chan_len(c) != (size_t)cap || chan_cap(c) != (size_t)cap)
            KT_FAIL("chan[%ld]: bad len/cap, expect %ld/%ld, got %lu/%lu", cap, cap, cap, chan_len(c),
                    chan_cap(c));
        chan_free(c);
    }
}

KTEST(go_TestChan)
{
    int procs = gomaxprocs(4);
    for (int64_t cap = 0; cap < 20 && !ktest_failed(); cap++)
        test_chan_cap(cap);
    gomaxprocs(procs);
}

// ---- TestNonblockRecvRace --------------------------------------------------

// A channel that holds a value and is then closed is never "not ready" to
// a non-blocking receive (it has the value, or it is closed): the race
// between the lock-free fast path and close (chan.c's header). Short: 100.
static uint64_t nbr_done;

static void nbr_try(void *arg)
{
    if (chan_try_recv(arg, 0) == CHAN_WOULD_BLOCK)
        ktest_fail(__FILE__, __LINE__, "chan is not ready");
    kt_add(&nbr_done, 1);
}

KTEST(go_TestNonblockRecvRace)
{
    nbr_done = 0;
    for (uint64_t i = 0; i < 100; i++) {
        chan_t *c = chan_make(sizeof(int64_t), 1);
        int64_t one = 1;
        chan_send(c, &one);
        go(nbr_try, c);
        chan_close(c);
        chan_recv(c, 0);
        KT_ASSERT(kt_wait_count(&nbr_done, i + 1, GO_STALL_MS));
        chan_free(c);
        if (ktest_failed())
            return;
    }
}

// ---- TestMultiConsumer -----------------------------------------------------

// 23 workers range over one channel and forward to another, yielding on
// some values to disturb the FIFO order; 271828 values (Go has no short
// mode here) must all come through, with the right sum.
#define MC_NWORK 23
#define MC_NITER 271828
static const int mc_pn[] = { 2, 3, 7, 11, 13, 17, 19, 23, 27, 31 };
static struct {
    chan_t *q, *r;
    waitgroup_t wg;
    int64_t expect;                 // written by the feeder before it closes r
} mc;

static void mc_worker(void *arg)
{
    int w = (int)(uintptr_t)arg;
    int64_t v;
    while (chan_recv(mc.q, &v)) {
        if (mc_pn[w % 10] == v)
            gosched();
        chan_send(mc.r, &v);
    }
    wg_done(&mc.wg);
}

static void mc_feeder(void *arg)
{
    (void)arg;
    for (int i = 0; i < MC_NITER; i++) {
        int64_t v = mc_pn[i % 10];
        mc.expect += v;
        chan_send(mc.q, &v);
    }
    chan_close(mc.q);               // no more work
    wg_wait(&mc.wg);                // workers done
    chan_close(mc.r);               // ... so there can be no more results
}

KTEST(go_TestMultiConsumer)
{
    mc.q = chan_make(sizeof(int64_t), MC_NWORK * 3);
    mc.r = chan_make(sizeof(int64_t), MC_NWORK * 3);
    mc.wg = (waitgroup_t)WAITGROUP_INIT;
    mc.expect = 0;
    for (int i = 0; i < MC_NWORK; i++) {
        wg_add(&mc.wg, 1);
        go(mc_worker, (void *)(uintptr_t)i);
    }
    go(mc_feeder, 0);
    int64_t n = 0, s = 0, v;
    while (chan_recv(mc.r, &v)) {
        n++;
        s += v;
    }
    // r is closed after the feeder's last use of q and of the WaitGroup;
    // its close is the feeder's last touch of r.
    if (n != MC_NITER || s != mc.expect)
        KT_FAIL("expected sum %ld (got %ld) from %d iter (saw %ld)", mc.expect, s, MC_NITER, n);
    chan_free(mc.q);
    chan_free(mc.r);
}

// ---- TestShrinkStackDuringBlockedSend --------------------------------------

// A sender alternates blocking sends with bursts of deep recursion; the
// receiver sleeps 1 ms after each value so the sender is parked in its
// send, its value on its own stack. Go then runs the GC to shrink that
// stack (moving the value); goro's stacks never move or shrink while their
// goroutine lives, so what remains is the growth: 20 KiB of frames,
// mapped by page faults between sends, must not disturb the parked value.
static void stack_growth_recursive(int i)
{
    volatile uint64_t pad[128];
    for (int j = 0; j < 128; j++)
        pad[j] = 0;
    if (i != 0 && pad[0] == 0)
        stack_growth_recursive(i - 1);
}

static void shrink_sender(void *arg)
{
    chan_t **cs = arg;
    chan_t *c = cs[0], *done = cs[1];
    for (int64_t i = 0; i < 10; i++) {
        chan_send(c, &i);
        stack_growth_recursive(20);
    }
    chan_send(done, 0);
}

KTEST(go_TestShrinkStackDuringBlockedSend)
{
    chan_t *cs[2] = { chan_make(sizeof(int64_t), 0), chan_make(0, 0) };
    go(shrink_sender, cs);
    for (int64_t i = 0; i < 10; i++) {
        int64_t x = -1;
        chan_recv(cs[0], &x);
        if (x != i)
            KT_FAIL("bad channel read: want %ld, got %ld", i, x);
        sleep_ns(1 * GO_MS);
    }
    chan_recv(cs[1], 0);
    chan_free(cs[0]);
    chan_free(cs[1]);
}

// ---- TestChanSendBarrier / TestChanSendSelectBarrier (chanbarrier_test.go) --

// 10 goroutines (short mode; 100 otherwise) each make 1000 requests (100000
// otherwise): a request makes two channels and a goroutine that sends a
// freshly allocated result, by a plain send or by a select that could also
// take `done`; the caller checks the result and yields. Go checks its
// write barriers; here: every result arrives intact, through 20,000
// spawns and channel pairs, with 1 KiB of garbage allocated per request.
// The request goroutine's end is awaited before its channels are freed.
#define BARRIER_ERR 0x6d794572726f72ull     // "myError"
struct async {
    void *resp;
    uint64_t err;
};

struct request {
    chan_t *ch, *done;
    bool use_select;
    waitgroup_t sent;
};

static void request_sender(void *arg)
{
    struct request *rq = arg;
    struct async *a = malloc(sizeof *a);
    *a = (struct async){ 0, BARRIER_ERR };
    if (rq->use_select) {
        struct select_case cs[2] = {
            { .c = rq->ch, .dir = SELECT_SEND, .elem = &a },
            { .c = rq->done, .dir = SELECT_RECV },
        };
        chan_select(cs, 2, true);
    } else {
        chan_send(rq->ch, &a);
    }
    wg_done(&rq->sent);
}

static bool do_request(bool use_select)
{
    struct request rq = { chan_make(sizeof(struct async *), 0), chan_make(0, 0), use_select, WAITGROUP_INIT };
    wg_add(&rq.sent, 1);
    go(request_sender, &rq);
    struct async *r = 0;
    chan_recv(rq.ch, &r);
    gosched();
    bool ok = r && r->resp == 0 && r->err == BARRIER_ERR;
    free(r);
    wg_wait(&rq.sent);
    chan_free(rq.ch);
    chan_free(rq.done);
    return ok;
}

static struct {
    waitgroup_t wg;
    mutex_t global_mu;
    void *global;
    bool use_select;
    uint64_t bad;
} barrier;

static void barrier_worker(void *arg)
{
    (void)arg;
    void *garbage = 0;
    for (int j = 0; j < 1000; j++) {
        if (!do_request(barrier.use_select))
            kt_add(&barrier.bad, 1);
        free(garbage);
        garbage = malloc(1 << 10);
    }
    mutex_lock(&barrier.global_mu);
    free(barrier.global);
    barrier.global = garbage;
    mutex_unlock(&barrier.global_mu);
    wg_done(&barrier.wg);
}

static void chan_send_barrier(bool use_select)
{
    barrier.wg = (waitgroup_t)WAITGROUP_INIT;
    barrier.global_mu = (mutex_t)MUTEX_INIT;
    barrier.global = 0;
    barrier.use_select = use_select;
    barrier.bad = 0;
    for (int i = 0; i < 10; i++) {
        wg_add(&barrier.wg, 1);
        go(barrier_worker, 0);
    }
    wg_wait(&barrier.wg);
    free(barrier.global);
    if (barrier.bad)
        ktest_fail(__FILE__, __LINE__, "%lu results arrived damaged", barrier.bad);
}

KTEST(go_TestChanSendBarrier) { chan_send_barrier(false); }
KTEST(go_TestChanSendSelectBarrier) { chan_send_barrier(true); }

// ---- test/chan/fifo.go -----------------------------------------------------

// A buffered channel is FIFO; and an unbuffered one read by a daisy chain
// of goroutines, each taking its turn, delivers 0..9 in order.
#define FIFO_N 10

struct chain_arg {
    chan_t *ch, *in, *out;
    int64_t val;
};

static void fifo_chain(void *arg)
{
    struct chain_arg *a = arg;      // the test's array; it waits for the last out
    chan_recv(a->in, 0);
    int64_t v = -1;
    chan_recv(a->ch, &v);
    if (v != a->val)
        ktest_fail(__FILE__, __LINE__, "chain %ld received %ld", a->val, v);
    chan_send(a->out, 0);
}

KTEST(go_chan_fifo)
{
    chan_t *ch = chan_make(sizeof(int64_t), FIFO_N);
    for (int64_t i = 0; i < FIFO_N; i++)
        chan_send(ch, &i);
    for (int64_t i = 0; i < FIFO_N; i++) {
        int64_t v = -1;
        chan_recv(ch, &v);
        if (v != i)
            KT_FAIL("bad receive: %ld, expected %ld", v, i);
    }
    chan_free(ch);

    static struct chain_arg args[FIFO_N];
    static chan_t *links[FIFO_N + 1];
    ch = chan_make(sizeof(int64_t), 0);
    links[0] = chan_make(0, 0);
    for (int i = 0; i < FIFO_N; i++) {
        links[i + 1] = chan_make(0, 0);
        args[i] = (struct chain_arg){ ch, links[i], links[i + 1], i };
        go(fifo_chain, &args[i]);
    }
    chan_send(links[0], 0);
    for (int64_t i = 0; i < FIFO_N; i++)
        chan_send(ch, &i);
    chan_recv(links[FIFO_N], 0);
    chan_free(ch);
    for (int i = 0; i <= FIFO_N; i++)
        chan_free(links[i]);
}

// ---- test/chan/goroutines.go -----------------------------------------------

// 10000 goroutines in a chain, each passing one value from its right
// channel to its left: the value sent at the right end reaches the left.
#define CHAIN_N 10000
static chan_t *chain_chans[CHAIN_N + 1];
static uint64_t chain_done;

static void chain_link(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    int64_t v = 0;
    chan_recv(chain_chans[i + 1], &v);
    chan_send(chain_chans[i], &v);
    kt_add(&chain_done, 1);
}

KTEST(go_chan_goroutines)
{
    chain_done = 0;
    for (int i = 0; i <= CHAIN_N; i++)
        chain_chans[i] = chan_make(sizeof(int64_t), 0);
    for (uintptr_t i = 0; i < CHAIN_N; i++)
        go(chain_link, (void *)i);
    int64_t one = 1, v = 0;
    chan_send(chain_chans[CHAIN_N], &one);
    chan_recv(chain_chans[0], &v);
    KT_ASSERT_EQ(v, 1);
    KT_ASSERT(kt_wait_count(&chain_done, CHAIN_N, GO_STALL_MS));
    for (int i = 0; i <= CHAIN_N; i++)
        chan_free(chain_chans[i]);
}
