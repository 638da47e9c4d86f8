// SPDX-License-Identifier: MIT
// Channel and select tests: FIFO and close semantics, conservation under
// stress (every message received exactly once, sums match) through
// unbuffered and buffered channels and through select, select fairness by
// a chi-square bound, default and nil cases, and the fatal errors as apps
// of their own.
#include "kernel/ktest.h"
#include "goro.h"
#include "lib/string.h"

// ---- single-goroutine semantics ----------------------------------------------

KTEST(chan_buffered_fifo_and_close)
{
    chan_t *c = chan_make(sizeof(uint64_t), 4);
    KT_ASSERT_EQ(chan_cap(c), 4);
    for (uint64_t i = 1; i <= 4; i++)
        KT_ASSERT(chan_try_send(c, &i));
    uint64_t v = 99;
    KT_ASSERT(!chan_try_send(c, &v));
    KT_ASSERT_EQ(chan_len(c), 4);
    KT_ASSERT(chan_recv(c, &v));
    KT_ASSERT_EQ(v, 1);
    v = 5;
    chan_send(c, &v);                   // wraps around the ring
    chan_close(c);
    for (uint64_t want = 2; want <= 5; want++) {
        KT_ASSERT_EQ(chan_try_recv(c, &v), CHAN_RECEIVED);
        KT_ASSERT_EQ(v, want);
    }
    v = 77;
    KT_ASSERT_EQ(chan_try_recv(c, &v), CHAN_CLOSED);
    KT_ASSERT_EQ(v, 0);
    v = 77;
    KT_ASSERT(!chan_recv(c, &v));
    KT_ASSERT_EQ(v, 0);
    KT_ASSERT_EQ(chan_len(c), 0);
    chan_free(c);
}

KTEST(chan_try_ops_and_nil)
{
    chan_t *c = chan_make(sizeof(uint32_t), 0);
    uint32_t v = 7;
    KT_ASSERT(!chan_try_send(c, &v));   // nobody receiving
    KT_ASSERT_EQ(chan_try_recv(c, &v), CHAN_WOULD_BLOCK);
    KT_ASSERT_EQ(v, 0);
    KT_ASSERT(!chan_try_send(0, &v));
    KT_ASSERT_EQ(chan_try_recv(0, &v), CHAN_WOULD_BLOCK);
    KT_ASSERT_EQ(chan_len(0), 0);
    KT_ASSERT_EQ(chan_cap(0), 0);
    chan_close(c);
    KT_ASSERT_EQ(chan_try_recv(c, &v), CHAN_CLOSED);
    chan_free(c);
    // zero-size elements: signals only
    chan_t *s = chan_make(0, 2);
    chan_send(s, 0);
    chan_send(s, 0);
    KT_ASSERT_EQ(chan_len(s), 2);
    KT_ASSERT(chan_recv(s, 0));
    KT_ASSERT_EQ(chan_try_recv(s, 0), CHAN_RECEIVED);
    chan_free(s);
    // a large buffer comes from whole pages
    chan_t *big = chan_make(64, 1000);
    uint8_t blk[64], out[64];
    for (int i = 0; i < 1000; i++) {
        memset(blk, i & 0xff, sizeof blk);
        KT_ASSERT(chan_try_send(big, blk));
    }
    for (int i = 0; i < 1000; i++) {
        KT_ASSERT(chan_recv(big, out));
        KT_ASSERT_EQ(out[63], i & 0xff);
    }
    chan_free(big);
}

// ---- hand-off ----------------------------------------------------------------

struct pp_arg {
    chan_t *ping, *pong;
    uint64_t n;
};

// *arg is in the test's frame, which is gone as soon as the test stops
// waiting (its last receive, or a failed check mid-loop): the channels are
// read once, before the test can pass its first send.
static void echo(void *arg)
{
    struct pp_arg *a = arg;
    chan_t *ping = a->ping, *pong = a->pong;
    uint64_t v;
    while (chan_recv(ping, &v)) {
        v++;
        chan_send(pong, &v);
    }
    chan_send(pong, 0);                // zero value: done
}

KTEST(chan_unbuffered_pingpong_in_order)
{
    struct pp_arg a = { chan_make(8, 0), chan_make(8, 0), 20000 };
    go(echo, &a);
    for (uint64_t i = 0; i < a.n; i++) {
        chan_send(a.ping, &i);
        uint64_t r;
        KT_ASSERT(chan_recv(a.pong, &r));
        if (r != i + 1)
            KT_FAIL("round %lu came back %lu", i, r);
    }
    chan_close(a.ping);
    uint64_t r = 1;
    KT_ASSERT(chan_recv(a.pong, &r));
    KT_ASSERT_EQ(r, 0);
    chan_free(a.ping);
    chan_free(a.pong);
}

// ---- conservation: M producers, N consumers ----------------------------------

#define CONS_PRODUCERS 6u
#define CONS_CONSUMERS 5u
#define CONS_PER 4000u
#define CONS_TOTAL (CONS_PRODUCERS * CONS_PER)

struct cons {
    chan_t *c[3];           // select mode uses all three, others c[0]
    chan_t *quit;
    bool use_select;
    uint8_t seen[CONS_TOTAL];
    uint64_t sum_sent, sum_recv;
    uint64_t received;
    uint64_t producers_done, consumers_done;
};
static struct cons cons;

static uint64_t msg_value(uint32_t idx) { return (uint64_t)idx * 2654435761u + 17; }

static void cons_producer(void *arg)
{
    uint32_t p = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = 0; i < CONS_PER; i++) {
        uint64_t msg = (uint64_t)(p * CONS_PER + i) << 32 | (uint32_t)msg_value(p * CONS_PER + i);
        if (cons.use_select) {
            struct select_case cs[3];
            for (int k = 0; k < 3; k++)
                cs[k] = (struct select_case){ .c = cons.c[k], .dir = SELECT_SEND, .elem = &msg };
            int r = chan_select(cs, 3, true);
            if (r < 0 || r > 2)
                ktest_fail(__FILE__, __LINE__, "blocking select returned %d", r);
        } else {
            chan_send(cons.c[0], &msg);
        }
        kt_add(&cons.sum_sent, (uint32_t)msg);
        if ((i & 127) == 0)
            gosched();
    }
    kt_add(&cons.producers_done, 1);
}

static void cons_take(uint64_t msg)
{
    uint32_t idx = (uint32_t)(msg >> 32);
    if (idx >= CONS_TOTAL || (uint32_t)msg != (uint32_t)msg_value(idx)) {
        ktest_fail(__FILE__, __LINE__, "garbled message %lx", msg);
        return;
    }
    __atomic_fetch_add(&cons.seen[idx], 1, __ATOMIC_RELAXED);
    kt_add(&cons.sum_recv, (uint32_t)msg);
    kt_add(&cons.received, 1);
}

static void cons_consumer(void *arg)
{
    (void)arg;
    uint64_t msg;
    if (!cons.use_select) {
        while (chan_recv(cons.c[0], &msg))
            cons_take(msg);
    } else {
        for (;;) {
            struct select_case cs[4];
            for (int k = 0; k < 3; k++)
                cs[k] = (struct select_case){ .c = cons.c[k], .dir = SELECT_RECV, .elem = &msg };
            cs[3] = (struct select_case){ .c = cons.quit, .dir = SELECT_RECV };
            int r = chan_select(cs, 4, true);
            if (r == 3)
                break;
            if (!cs[r].ok) {
                ktest_fail(__FILE__, __LINE__, "case %d reported closed", r);
                break;
            }
            cons_take(msg);
        }
    }
    kt_add(&cons.consumers_done, 1);
}

static void conservation(size_t cap, bool use_select)
{
    memset(&cons, 0, sizeof cons);
    cons.use_select = use_select;
    cons.c[0] = chan_make(sizeof(uint64_t), cap);
    cons.c[1] = chan_make(sizeof(uint64_t), use_select ? 1 : 0);   // mixed capacities
    cons.c[2] = chan_make(sizeof(uint64_t), use_select ? 16 : 0);
    cons.quit = chan_make(0, 0);
    for (uint32_t i = 0; i < CONS_CONSUMERS; i++)
        go(cons_consumer, 0);
    for (uint32_t p = 0; p < CONS_PRODUCERS; p++)
        go(cons_producer, (void *)(uintptr_t)p);
    if (!kt_wait_count(&cons.producers_done, CONS_PRODUCERS, KT_STALL_MS))
        KT_FAIL("producers stuck: %lu of %u done, %lu received", kt_load(&cons.producers_done),
                CONS_PRODUCERS, kt_load(&cons.received));
    if (use_select) {
        // every message must be in before quit, which consumers may pick
        // over a pending message
        if (!kt_wait_count(&cons.received, CONS_TOTAL, KT_STALL_MS))
            KT_FAIL("only %lu of %u received", kt_load(&cons.received), CONS_TOTAL);
        chan_close(cons.quit);
    } else {
        chan_close(cons.c[0]);
    }
    if (!kt_wait_count(&cons.consumers_done, CONS_CONSUMERS, KT_STALL_MS))
        KT_FAIL("consumers stuck after close: %lu of %u done", kt_load(&cons.consumers_done), CONS_CONSUMERS);
    KT_ASSERT_EQ(kt_load(&cons.received), CONS_TOTAL);
    for (uint32_t i = 0; i < CONS_TOTAL; i++)
        if (cons.seen[i] != 1)
            KT_FAIL("message %u received %u times", i, cons.seen[i]);
    KT_ASSERT_EQ(kt_load(&cons.sum_recv), kt_load(&cons.sum_sent));
    for (int k = 0; k < 3; k++) {
        KT_ASSERT_EQ(chan_len(cons.c[k]), 0);
        chan_free(cons.c[k]);
    }
    chan_free(cons.quit);
}

KTEST(chan_conservation_unbuffered) { conservation(0, false); }
KTEST(chan_conservation_buffered) { conservation(64, false); }
KTEST(chan_conservation_buffered_1) { conservation(1, false); }
KTEST(chan_conservation_select) { conservation(0, true); }

// ---- close wakes every blocked receiver --------------------------------------

#define CLOSE_WAITERS 40u
static uint64_t close_started, close_woken, close_bad;

static void close_receiver(void *arg)
{
    chan_t *c = arg;
    uint64_t v = 0xdead;
    kt_add(&close_started, 1);
    if (chan_recv(c, &v) || v != 0)
        kt_add(&close_bad, 1);
    kt_add(&close_woken, 1);
}

static void close_selector(void *arg)
{
    chan_t *c = arg;
    chan_t *never = chan_make(8, 0);
    uint64_t v = 0xdead, w = 0xbeef;
    struct select_case cs[3] = {
        { .c = never, .dir = SELECT_RECV, .elem = &w },
        { .c = c, .dir = SELECT_RECV, .elem = &v },
        { .c = 0, .dir = SELECT_RECV, .elem = &w },
    };
    kt_add(&close_started, 1);
    int r = chan_select(cs, 3, true);
    if (r != 1 || cs[1].ok || v != 0 || w != 0xbeef)
        kt_add(&close_bad, 1);
    // the record on `never` is gone: a try-send finds nobody
    if (chan_try_send(never, &w))
        kt_add(&close_bad, 1);
    chan_free(never);
    kt_add(&close_woken, 1);
}

KTEST(chan_close_wakes_every_receiver)
{
    close_started = close_woken = close_bad = 0;
    chan_t *c = chan_make(sizeof(uint64_t), 0);
    for (uint32_t i = 0; i < CLOSE_WAITERS; i++)
        go(i & 1 ? close_selector : close_receiver, c);
    KT_ASSERT(kt_wait_count(&close_started, CLOSE_WAITERS, KT_STALL_MS));
    for (int i = 0; i < 200; i++)
        gosched();          // most are parked by now; the rest see closed at once
    chan_close(c);
    if (!kt_wait_count(&close_woken, CLOSE_WAITERS, KT_STALL_MS))
        KT_FAIL("only %lu of %u receivers woke", kt_load(&close_woken), CLOSE_WAITERS);
    KT_ASSERT_EQ(kt_load(&close_bad), 0);
    chan_free(c);
}

// ---- select: default, nil channels, waking, duplicates -----------------------

KTEST(chan_select_default_and_nil)
{
    chan_t *a = chan_make(8, 0), *b = chan_make(8, 1);
    uint64_t v = 5, w = 0;
    struct select_case cs[3] = {
        { .c = a, .dir = SELECT_RECV, .elem = &w },
        { .c = 0, .dir = SELECT_SEND, .elem = &v },
        { .c = 0, .dir = SELECT_RECV, .elem = &w },
    };
    KT_ASSERT_EQ(chan_select(cs, 3, false), -1);
    KT_ASSERT_EQ(chan_select(cs + 1, 2, false), -1);   // only nil channels
    KT_ASSERT_EQ(chan_select(cs, 0, false), -1);
    // a ready send among nil cases always wins
    cs[0] = (struct select_case){ .c = b, .dir = SELECT_SEND, .elem = &v };
    for (int i = 0; i < 20; i++) {
        KT_ASSERT_EQ(chan_select(cs, 3, true), 0);
        KT_ASSERT(chan_recv(b, &w));
        KT_ASSERT_EQ(w, 5);
    }
    // full buffer: the send case would block
    KT_ASSERT(chan_try_send(b, &v));
    KT_ASSERT_EQ(chan_select(cs, 3, false), -1);
    // closed, drained channel: the recv case is ready with ok = false
    chan_t *cl = chan_make(8, 0);
    chan_close(cl);
    w = 9;
    struct select_case r[2] = { { .c = cl, .dir = SELECT_RECV, .elem = &w }, { .c = 0 } };
    KT_ASSERT_EQ(chan_select(r, 2, false), 0);
    KT_ASSERT(!r[0].ok);
    KT_ASSERT_EQ(w, 0);
    chan_free(a);
    chan_free(b);
    chan_free(cl);
}

struct wake_arg {
    chan_t *c;
    uint64_t delay_yields;
    uint64_t v;
};

static void delayed_sender(void *arg)
{
    struct wake_arg *a = arg;
    for (uint64_t i = 0; i < a->delay_yields; i++)
        gosched();
    chan_send(a->c, &a->v);
}

KTEST(chan_select_blocking_wakes_on_one_and_cleans_up)
{
    for (int round = 0; round < 200; round++) {
        chan_t *ch[3] = { chan_make(8, 0), chan_make(8, 0), chan_make(8, 2) };
        int pick = round % 3;
        struct wake_arg wa = { ch[pick], (uint64_t)(round % 5), 1000 + (uint64_t)round };
        go(delayed_sender, &wa);
        uint64_t got[3] = { 0, 0, 0 };
        struct select_case cs[3];
        for (int k = 0; k < 3; k++)
            cs[k] = (struct select_case){ .c = ch[k], .dir = SELECT_RECV, .elem = &got[k] };
        int r = chan_select(cs, 3, true);
        KT_ASSERT_EQ(r, pick);
        KT_ASSERT(cs[r].ok);
        KT_ASSERT_EQ(got[r], 1000 + (uint64_t)round);
        // no stale receiver left on the unbuffered channels
        uint64_t x = 1;
        for (int k = 0; k < 2; k++)
            KT_ASSERT(!chan_try_send(ch[k], &x));
        for (int k = 0; k < 3; k++)
            chan_free(ch[k]);
    }
}

struct dup_arg {
    chan_t *c;
    uint64_t n;
    uint64_t done;                  // the peer's operations, added after its last one
};

// The test's frame holds *arg and may be gone once its last select has
// paired with our last operation; so c and n are read before the first
// operation, and the last touch of *arg is the counter the test waits on.
static void dup_peer(void *arg)
{
    struct dup_arg *a = arg;
    chan_t *c = a->c;
    uint64_t n = a->n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = i;
        if (i & 1)
            chan_send(c, &v);
        else
            chan_recv(c, &v);
    }
    kt_add(&a->done, n);
}

// One channel in several cases, both directions, against a peer that
// alternates: the lock order must take it once, and both directions work.
KTEST(chan_select_same_channel_twice)
{
    struct dup_arg a = { chan_make(8, 0), 2000, 0 };
    go(dup_peer, &a);
    uint64_t out = 3, in = 0;
    uint64_t sends = 0, recvs = 0;
    for (uint64_t i = 0; i < a.n; i++) {
        struct select_case cs[4] = {
            { .c = a.c, .dir = SELECT_SEND, .elem = &out },
            { .c = a.c, .dir = SELECT_RECV, .elem = &in },
            { .c = a.c, .dir = SELECT_RECV, .elem = &in },
            { .c = a.c, .dir = SELECT_SEND, .elem = &out },
        };
        int r = chan_select(cs, 4, true);
        if (cs[r].dir == SELECT_SEND)
            sends++;
        else
            recvs++;
    }
    KT_ASSERT_EQ(sends, a.n / 2);
    KT_ASSERT_EQ(recvs, a.n / 2);
    KT_ASSERT(kt_wait_count(&a.done, a.n, KT_STALL_MS));   // the peer is done with a
    chan_free(a.c);
}

// ---- fairness: all cases ready, each chosen about equally often ---------------

#define FAIR_CASES 4
#define FAIR_ROUNDS 8000

KTEST(chan_select_fairness_chi_square)
{
    chan_t *ch[FAIR_CASES];
    for (int k = 0; k < FAIR_CASES; k++) {
        ch[k] = chan_make(8, 1);
        uint64_t v = (uint64_t)k;
        chan_send(ch[k], &v);
    }
    uint64_t count[FAIR_CASES] = { 0 };
    uint64_t v;
    for (int round = 0; round < FAIR_ROUNDS; round++) {
        struct select_case cs[FAIR_CASES + 1];
        for (int k = 0; k < FAIR_CASES; k++)
            cs[k] = (struct select_case){ .c = ch[k], .dir = SELECT_RECV, .elem = &v };
        cs[FAIR_CASES] = (struct select_case){ .c = 0, .dir = SELECT_RECV, .elem = &v };
        int r = chan_select(cs, FAIR_CASES + 1, false);
        if (r < 0 || r >= FAIR_CASES || v != (uint64_t)r)
            KT_FAIL("round %d: case %d, value %lu", round, r, v);
        count[r]++;
        chan_send(ch[r], &v);           // ready again
    }
    // chi-square with 3 degrees of freedom; 30.66 is the 10^-6 tail (Go's
    // TestSelectFairness uses six nines too): the suite runs this in about
    // 30 configurations, so a 10^-4 tail failed a fair selector in one
    // suite of 300. A selector that takes one case 30% of the time scores
    // about 107.
    double expect = (double)FAIR_ROUNDS / FAIR_CASES, chi2 = 0;
    for (int k = 0; k < FAIR_CASES; k++) {
        double d = (double)count[k] - expect;
        chi2 += d * d / expect;
    }
    printf("ktest: select fairness %lu %lu %lu %lu chi2=%.2f\n", count[0], count[1], count[2],
           count[3], chi2);
    KT_ASSERT(chi2 < 30.66);
    for (int k = 0; k < FAIR_CASES; k++)
        chan_free(ch[k]);
}

// ---- fatal errors, each an app of its own (they end the machine) --------------

static int send_closed_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    chan_t *c = chan_make(sizeof(int), 1);
    chan_close(c);
    int v = 1;
    printf("chan_send_closed: sending on a closed channel\n");
    chan_send(c, &v);
    return 1;
}
GORO_APP(chan_send_closed, "send on a closed channel (expect the fatal error, exit 255)",
         send_closed_main);

static int close_closed_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    chan_t *c = chan_make(sizeof(int), 0);
    chan_close(c);
    printf("chan_close_closed: closing a channel twice\n");
    chan_close(c);
    return 1;
}
GORO_APP(chan_close_closed, "close a closed channel (expect the fatal error, exit 255)",
         close_closed_main);

static void blocked_sender(void *arg)
{
    int v = 2;
    chan_send(arg, &v);
}

// A sender parked on the channel when it is closed dies with the error too.
static int close_wakes_sender_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    chan_t *c = chan_make(sizeof(int), 0);
    go(blocked_sender, c);
    for (int i = 0; i < 100; i++)
        gosched();
    printf("chan_close_blocked_sender: closing under a parked sender\n");
    chan_close(c);
    for (;;)
        gosched();
    return 1;
}
GORO_APP(chan_close_blocked_sender, "close a channel a sender waits on (expect the fatal error, exit 255)",
         close_wakes_sender_main);

static int nil_recv_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("chan_nil_recv: receiving from a nil channel\n");
    chan_recv(0, 0);
    return 1;
}
GORO_APP(chan_nil_recv, "receive from a nil channel (expect the deadlock report, exit 255)", nil_recv_main);
