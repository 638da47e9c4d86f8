// SPDX-License-Identifier: MIT
// Go 1.19's select tests, written again for goro's chan_select: those of
// runtime/chan_test.go, and test/chan's select.go, select3.go, select6.go,
// select7.go and doubleselect.go (as go_chan_*). Go's `select` becomes an
// array of struct select_case; a case on a nil channel is a case with
// c == NULL; `default` is block == false.
#include "tests/kernel/go_test.h"

static struct select_case recv_case(chan_t *c, void *elem)
{
    return (struct select_case){ .c = c, .dir = SELECT_RECV, .elem = elem };
}

static struct select_case send_case(chan_t *c, const void *elem)
{
    return (struct select_case){ .c = c, .dir = SELECT_SEND, .elem = (void *)elem };
}

// ---- TestNonblockSelectRace, TestNonblockSelectRace2 -----------------------

// select acts on the channels' state at one moment: from the time the
// goroutine starts, at least one of c1 and c2 is ready (c1 has a value;
// then c2 gets one, or is closed, before c1 may be drained), so its
// non-blocking select must never take the default. Short mode: 1000.
static chan_t *nbs_c1, *nbs_c2, *nbs_done;

static void nbs_select(void *arg)
{
    (void)arg;
    struct select_case cs[2] = { recv_case(nbs_c1, 0), recv_case(nbs_c2, 0) };
    bool ok = chan_select(cs, 2, false) >= 0;
    chan_send(nbs_done, &ok);
}

static void nonblock_select_race(bool close_c2)
{
    nbs_done = chan_make(sizeof(bool), 1);
    for (int i = 0; i < 1000; i++) {
        nbs_c1 = chan_make(sizeof(int64_t), 1);
        nbs_c2 = chan_make(sizeof(int64_t), close_c2 ? 0 : 1);
        int64_t one = 1;
        chan_send(nbs_c1, &one);
        go(nbs_select, 0);
        if (close_c2)
            chan_close(nbs_c2);
        else
            chan_send(nbs_c2, &one);
        chan_try_recv(nbs_c1, 0);
        bool ok = false;
        chan_recv(nbs_done, &ok);   // the goroutine is done with c1 and c2
        chan_free(nbs_c1);
        chan_free(nbs_c2);
        if (!ok) {
            ktest_fail(__FILE__, __LINE__, "iteration %d: no chan is ready", i);
            break;
        }
    }
    chan_free(nbs_done);
}

KTEST(go_TestNonblockSelectRace) { nonblock_select_race(false); }
KTEST(go_TestNonblockSelectRace2) { nonblock_select_race(true); }

// ---- TestSelfSelect --------------------------------------------------------

// Two goroutines select over a send and a receive on the same channel
// (gomaxprocs 2, capacities 0 and 10): no crash, no deadlock, and on the
// unbuffered channel a goroutine never receives its own value.
static struct {
    chan_t *c;
    bool unbuffered;
    waitgroup_t wg;
} self;

static void self_selector(void *arg)
{
    int64_t p = (int64_t)(uintptr_t)arg;
    for (int i = 0; i < 1000; i++) {
        int64_t v = -1;
        struct select_case cs[2];
        // Go writes the two cases in either order; the order is irrelevant
        // to a fair select, but kept.
        if (p == 0 || i % 2 == 0) {
            cs[0] = send_case(self.c, &p);
            cs[1] = recv_case(self.c, &v);
        } else {
            cs[0] = recv_case(self.c, &v);
            cs[1] = send_case(self.c, &p);
        }
        int r = chan_select(cs, 2, true);
        if (cs[r].dir == SELECT_RECV && self.unbuffered && v == p) {
            ktest_fail(__FILE__, __LINE__, "self receive");
            break;
        }
    }
    wg_done(&self.wg);
}

KTEST(go_TestSelfSelect)
{
    int procs = gomaxprocs(2);
    const int caps[] = { 0, 10 };
    for (int k = 0; k < 2; k++) {
        self.wg = (waitgroup_t)WAITGROUP_INIT;
        wg_add(&self.wg, 2);
        self.c = chan_make(sizeof(int64_t), (size_t)caps[k]);
        self.unbuffered = caps[k] == 0;
        for (uintptr_t p = 0; p < 2; p++)
            go(self_selector, (void *)p);
        wg_wait(&self.wg);
        chan_free(self.c);
    }
    gomaxprocs(procs);
}

// ---- TestSelectStress ------------------------------------------------------

// Four channels (unbuffered twice, capacities 2 and 3): per channel a
// goroutine sending N values and one receiving N, plus one goroutine that
// sends N on each through one select and one that receives N from each
// through one select, dropping (nil-ing) a channel once its N are done.
// Go runs it with GOMAXPROCS 10 (here: every core, at most 10) and N 1e4
// in short mode. It must not deadlock.
#define STRESS_N 10000
static struct {
    chan_t *c[4];
    waitgroup_t wg;
} ss;

static void ss_sender(void *arg)
{
    chan_t *c = ss.c[(uintptr_t)arg];
    int64_t zero = 0;
    for (int i = 0; i < STRESS_N; i++)
        chan_send(c, &zero);
    wg_done(&ss.wg);
}

static void ss_receiver(void *arg)
{
    chan_t *c = ss.c[(uintptr_t)arg];
    for (int i = 0; i < STRESS_N; i++)
        chan_recv(c, 0);
    wg_done(&ss.wg);
}

static void ss_select_sender(void *arg)
{
    (void)arg;
    int n[4] = { 0 };
    chan_t *c1[4] = { ss.c[0], ss.c[1], ss.c[2], ss.c[3] };
    int64_t zero = 0;
    for (int i = 0; i < 4 * STRESS_N; i++) {
        // Go's case order: 3, 2, 0, 1
        static const int order[4] = { 3, 2, 0, 1 };
        struct select_case cs[4];
        for (int k = 0; k < 4; k++)
            cs[k] = send_case(c1[order[k]], &zero);
        int j = order[chan_select(cs, 4, true)];
        if (++n[j] == STRESS_N)
            c1[j] = 0;
    }
    wg_done(&ss.wg);
}

static void ss_select_receiver(void *arg)
{
    (void)arg;
    int n[4] = { 0 };
    chan_t *c1[4] = { ss.c[0], ss.c[1], ss.c[2], ss.c[3] };
    for (int i = 0; i < 4 * STRESS_N; i++) {
        struct select_case cs[4];
        for (int k = 0; k < 4; k++)
            cs[k] = recv_case(c1[k], 0);
        int j = chan_select(cs, 4, true);
        if (++n[j] == STRESS_N)
            c1[j] = 0;
    }
    wg_done(&ss.wg);
}

KTEST(go_TestSelectStress)
{
    int procs = gomaxprocs(10);
    ss.c[0] = chan_make(sizeof(int64_t), 0);
    ss.c[1] = chan_make(sizeof(int64_t), 0);
    ss.c[2] = chan_make(sizeof(int64_t), 2);
    ss.c[3] = chan_make(sizeof(int64_t), 3);
    ss.wg = (waitgroup_t)WAITGROUP_INIT;
    wg_add(&ss.wg, 10);
    for (uintptr_t k = 0; k < 4; k++) {
        go(ss_sender, (void *)k);
        go(ss_receiver, (void *)k);
    }
    go(ss_select_sender, 0);
    go(ss_select_receiver, 0);
    wg_wait(&ss.wg);
    for (int k = 0; k < 4; k++)
        chan_free(ss.c[k]);
    gomaxprocs(procs);
}

// ---- TestSelectFairness ----------------------------------------------------

// c1 and c2 always ready (10001 values buffered each), c3 and c4 never:
// over 10000 selects the share of c1 must be within Go's six-nines margin
// of error, 4.891676 / (2 sqrt(10000)), of one half.
#define FAIR_TRIALS 10000
static struct {
    chan_t *c1, *c2, *c3, *c4, *out, *done;
    waitgroup_t wg;
} fair;

static void fair_selector(void *arg)
{
    (void)arg;
    for (;;) {
        uint8_t b = 0;
        struct select_case cs[4] = { recv_case(fair.c3, &b), recv_case(fair.c4, &b),
                                     recv_case(fair.c1, &b), recv_case(fair.c2, &b) };
        chan_select(cs, 4, true);
        struct select_case out[2] = { send_case(fair.out, &b), recv_case(fair.done, 0) };
        if (chan_select(out, 2, true) == 1)
            break;
    }
    wg_done(&fair.wg);
}

KTEST(go_TestSelectFairness)
{
    fair.c1 = chan_make(1, FAIR_TRIALS + 1);
    fair.c2 = chan_make(1, FAIR_TRIALS + 1);
    for (int i = 0; i < FAIR_TRIALS + 1; i++) {
        uint8_t one = 1, two = 2;
        chan_send(fair.c1, &one);
        chan_send(fair.c2, &two);
    }
    fair.c3 = chan_make(1, 0);
    fair.c4 = chan_make(1, 0);
    fair.out = chan_make(1, 0);
    fair.done = chan_make(1, 0);
    fair.wg = (waitgroup_t)WAITGROUP_INIT;
    wg_add(&fair.wg, 1);
    go(fair_selector, 0);
    int cnt1 = 0, cnt2 = 0;
    for (int i = 0; i < FAIR_TRIALS; i++) {
        uint8_t b = 0;
        chan_recv(fair.out, &b);
        if (b == 1)
            cnt1++;
        else if (b == 2)
            cnt2++;
        else
            KT_FAIL("unexpected value %d on channel", b);
    }
    chan_close(fair.done);
    wg_wait(&fair.wg);
    double r = (double)cnt1 / FAIR_TRIALS, e = r > 0.5 ? r - 0.5 : 0.5 - r;
    printf("ktest: go_TestSelectFairness %d %d %.4f %.4f\n", cnt1, cnt2, r, e);
    chan_t *all[] = { fair.c1, fair.c2, fair.c3, fair.c4, fair.out, fair.done };
    for (int k = 0; k < 6; k++)
        chan_free(all[k]);
    // 4.891676 / (2 * sqrt(10000)) = 0.02445838
    if (e > 4.891676 / (2 * 100.0))
        KT_FAIL("unfair select: in %d trials, results were %d, %d", FAIR_TRIALS, cnt1, cnt2);
}

// ---- TestChanSendInterface -------------------------------------------------

// Go's concern is the compiler (interface values in send cases); what
// remains for the runtime: send cases on a full channel with a default
// take the default, one or two of them.
KTEST(go_TestChanSendInterface)
{
    int64_t m = 1, other = 2;
    chan_t *c = chan_make(sizeof(int64_t), 1);
    chan_send(c, &m);
    struct select_case one[1] = { send_case(c, &m) };
    KT_ASSERT_EQ(chan_select(one, 1, false), -1);
    struct select_case two[2] = { send_case(c, &m), send_case(c, &other) };
    KT_ASSERT_EQ(chan_select(two, 2, false), -1);
    chan_free(c);
}

// ---- TestPseudoRandomSend --------------------------------------------------

// 100 selects sending 1 or 0 on the same channel (capacities 0 and 100),
// to a receiver that yields before each receive: each value must be
// chosen more than a tenth of the time.
#define PRS_N 100
static struct {
    chan_t *c;
    int64_t l[PRS_N];
    mutex_t m;
} prs;

static void prs_receiver(void *arg)
{
    (void)arg;
    for (int i = 0; i < PRS_N; i++) {
        gosched();
        chan_recv(prs.c, &prs.l[i]);
    }
    mutex_unlock(&prs.m);
}

KTEST(go_TestPseudoRandomSend)
{
    const int caps[] = { 0, PRS_N };
    for (int k = 0; k < 2; k++) {
        prs.c = chan_make(sizeof(int64_t), (size_t)caps[k]);
        prs.m = (mutex_t)MUTEX_INIT;
        mutex_lock(&prs.m);
        go(prs_receiver, 0);
        int64_t one = 1, zero = 0;
        for (int i = 0; i < PRS_N; i++) {
            struct select_case cs[2] = { send_case(prs.c, &one), send_case(prs.c, &zero) };
            chan_select(cs, 2, true);
        }
        mutex_lock(&prs.m);         // wait
        mutex_unlock(&prs.m);
        int n0 = 0, n1 = 0;
        for (int i = 0; i < PRS_N; i++) {
            n0 += (int)((prs.l[i] + 1) % 2);
            n1 += (int)prs.l[i];
        }
        chan_free(prs.c);
        if (n0 <= PRS_N / 10 || n1 <= PRS_N / 10)
            KT_FAIL("want pseudorandom, got %d zeros and %d ones (chan cap %d)", n0, n1, caps[k]);
    }
}

// ---- TestSelectDuplicateChannel --------------------------------------------

// A select with the same channel in two cases queues two records on it.
// A (select on c, c, d) queues first, then B (receive on c); waking A
// through d must take both its records off c, so that the send on c wakes
// B (it once corrupted c's queue and tried to wake A again).
static struct {
    chan_t *c, *d, *e;
    uint64_t b_done;
} dup;

static void dup_a(void *arg)
{
    (void)arg;
    int64_t v;
    struct select_case cs[3] = { recv_case(dup.c, &v), recv_case(dup.c, &v), recv_case(dup.d, &v) };
    chan_select(cs, 3, true);
    int64_t nine = 9;
    chan_send(dup.e, &nine);
}

static void dup_b(void *arg)
{
    (void)arg;
    chan_recv(dup.c, 0);
    kt_add(&dup.b_done, 1);
}

KTEST(go_TestSelectDuplicateChannel)
{
    dup.c = chan_make(sizeof(int64_t), 0);
    dup.d = chan_make(sizeof(int64_t), 0);
    dup.e = chan_make(sizeof(int64_t), 0);
    dup.b_done = 0;
    go(dup_a, 0);
    sleep_ns(1 * GO_MS);            // A queues first on c
    go(dup_b, 0);
    sleep_ns(1 * GO_MS);            // B queues on c before we go on
    int64_t seven = 7, eight = 8;
    chan_send(dup.d, &seven);       // wakes A, which takes itself off c
    chan_recv(dup.e, 0);            // A is done
    chan_send(dup.c, &eight);       // wakes B
    KT_ASSERT(kt_wait_count(&dup.b_done, 1, GO_STALL_MS));
    chan_free(dup.c);
    chan_free(dup.d);
    chan_free(dup.e);
}

// ---- test/chan/select.go ---------------------------------------------------

// A loop of selects sending on a and b with a default: each channel (one
// slot) takes one value and is then set to nil; the default ends the
// loop. Go also counts the send expressions evaluated (all of them, every
// time); in C they are evaluated before the call, and counted the same.
static unsigned sel_counter, sel_shift;

static uint64_t get_value(void)
{
    sel_counter++;
    return 1ull << sel_shift;
}

static int select_send(chan_t *a, chan_t *b)
{
    int i = 0;
    for (;;) {
        uint64_t va = get_value(), vb = get_value();
        struct select_case cs[2] = { send_case(a, &va), send_case(b, &vb) };
        int r = chan_select(cs, 2, false);
        if (r < 0)
            break;
        i++;
        if (r == 0)
            a = 0;
        else
            b = 0;
        sel_shift++;
    }
    return i;
}

KTEST(go_chan_select)
{
    sel_counter = sel_shift = 0;
    chan_t *a = chan_make(sizeof(uint64_t), 1), *b = chan_make(sizeof(uint64_t), 1);
    int v = select_send(a, b);
    if (v != 2)
        KT_FAIL("send returned %d != 2", v);
    uint64_t av = 0, bv = 0;
    chan_recv(a, &av);
    chan_recv(b, &bv);
    if ((av | bv) != 3)
        KT_FAIL("bad values %lu %lu", av, bv);
    v = select_send(a, 0);
    if (v != 1)
        KT_FAIL("send returned %d != 1", v);
    if (sel_counter != 10)
        KT_FAIL("counter is %u != 10", sel_counter);
    chan_free(a);
    chan_free(b);
}

// ---- test/chan/select3.go --------------------------------------------------

// Which operations block, checked as Go does: the operation runs in a
// goroutine; "always blocks" means it has not finished 10 ms later (then
// the test unblocks it, where Go leaves it blocked for good), "never
// blocks" that it finishes (Go waits 10 s for a slow machine; here the
// stall limit).
// Operations that block forever (nil channels, empty selects) are left
// out: they would leave goroutines parked for good (the chan-nil-recv
// configuration shows the deadlock report of one). Sends on closed
// channels are fatal errors here (chan-send-closed and friends).
static struct {
    int which;
    chan_t *ch;                     // the channel the operation uses
    chan_t *fin;
} s3;

enum {
    S3_SEND_ASYNC_FREE,             // never: a send to a channel with a free slot
    S3_RECV_CLOSED,                 // never: receives from a closed channel
    S3_RECV_NOT_READY,              // always: a receive with nothing to receive
    S3_SELECT_NOT_READY,            // always: a select on a channel that is not ready
    S3_SELECT_DEFAULT,              // never: a select with only a default
    S3_SELECT_NIL_DEFAULT,          // never: nil cases and a default
    S3_SELECT_READY_SEND,           // never
    S3_SELECT_READY_RECV,           // never
    S3_SELECT_CLOSED,               // never: a select receiving from a closed channel
    S3_SELECT_SELF,                 // always: a send and a receive on one channel, alone
    S3_N
};

static void s3_op(void *arg)
{
    (void)arg;
    int64_t x = 7, v = 1;
    bool bad = false;
    switch (s3.which) {
    case S3_SEND_ASYNC_FREE:
        chan_send(s3.ch, &x);
        break;
    case S3_RECV_CLOSED:
        for (int i = 0; i < 10; i++) {
            v = 1;
            bool ok = chan_recv(s3.ch, &v);
            bad |= v != 0 || ok;
        }
        break;
    case S3_RECV_NOT_READY:
        chan_recv(s3.ch, &v);
        break;
    case S3_SELECT_NOT_READY: {
        struct select_case cs[1] = { recv_case(s3.ch, &v) };
        chan_select(cs, 1, true);
        break;
    }
    case S3_SELECT_DEFAULT:
        bad = chan_select(0, 0, false) != -1;
        break;
    case S3_SELECT_NIL_DEFAULT: {
        struct select_case cs[2] = { recv_case(0, &v), send_case(0, &x) };
        bad = chan_select(cs, 2, false) != -1;
        break;
    }
    case S3_SELECT_READY_SEND: {
        struct select_case cs[1] = { send_case(s3.ch, &x) };
        bad = chan_select(cs, 1, false) != 0;
        break;
    }
    case S3_SELECT_READY_RECV: {
        struct select_case cs[1] = { recv_case(s3.ch, &v) };
        bad = chan_select(cs, 1, false) != 0 || v != 7;
        break;
    }
    case S3_SELECT_CLOSED: {
        struct select_case cs[1] = { recv_case(s3.ch, &v) };
        bad = chan_select(cs, 1, true) != 0 || cs[0].ok || v != 0;
        break;
    }
    case S3_SELECT_SELF: {
        struct select_case cs[2] = { send_case(s3.ch, &x), recv_case(s3.ch, &v) };
        chan_select(cs, 2, true);
        break;
    }
    }
    if (bad)
        ktest_fail(__FILE__, __LINE__, "select3 case %d: wrong result", s3.which);
    chan_send(s3.fin, 0);
}

KTEST(go_chan_select3)
{
    static const bool always[S3_N] = {
        [S3_RECV_NOT_READY] = true, [S3_SELECT_NOT_READY] = true, [S3_SELECT_SELF] = true,
    };
    s3.fin = chan_make(0, 1);
    for (int k = 0; k < S3_N && !ktest_failed(); k++) {
        s3.which = k;
        bool closed = k == S3_RECV_CLOSED || k == S3_SELECT_CLOSED;
        s3.ch = chan_make(sizeof(int64_t), k == S3_SEND_ASYNC_FREE || k == S3_SELECT_READY_SEND ||
                                                    k == S3_SELECT_READY_RECV ? 1 : 0);
        if (closed)
            chan_close(s3.ch);
        if (k == S3_SELECT_READY_RECV) {
            int64_t seven = 7;
            chan_send(s3.ch, &seven);
        }
        go(s3_op, 0);
        bool finished = go_recv_within(s3.fin, 0, always[k] ? 10 * GO_MS : GO_STALL_NS, 0);
        if (finished && always[k])
            KT_FAIL("select3 case %d: did not block", k);
        if (!finished && !always[k])
            KT_FAIL("select3 case %d: blocked", k);
        if (always[k]) {
            int64_t v = 1;
            if (k == S3_SELECT_SELF)
                chan_recv(s3.ch, &v);   // take its send
            else
                chan_send(s3.ch, &v);
            chan_recv(s3.fin, 0);
        }
        chan_free(s3.ch);
    }
    chan_free(s3.fin);
}

// ---- test/chan/select6.go --------------------------------------------------

// golang.org/issue/2075: a select that lost on c1 must leave no record
// there. G1 receives on c1; G2 selects over c1 and c2 and gets c2 from G3, then
// receives on c1; the two sends on c1 must reach G1 and G2's plain
// receive, never G2's select.
static struct {
    chan_t *c1, *c2, *c3;
    uint64_t done;
} s6;

static void s6_g1(void *arg)
{
    (void)arg;
    chan_recv(s6.c1, 0);
    kt_add(&s6.done, 1);
}

static void s6_g2(void *arg)
{
    (void)arg;
    struct select_case cs[2] = { recv_case(s6.c1, 0), recv_case(s6.c2, 0) };
    if (chan_select(cs, 2, true) == 0)
        ktest_fail(__FILE__, __LINE__, "the select received on c1");
    else
        chan_send(s6.c3, 0);
    chan_recv(s6.c1, 0);
    kt_add(&s6.done, 1);
}

static void s6_g3(void *arg)
{
    (void)arg;
    chan_send(s6.c2, 0);
    kt_add(&s6.done, 1);
}

KTEST(go_chan_select6)
{
    s6.c1 = chan_make(0, 0);
    s6.c2 = chan_make(0, 0);
    s6.c3 = chan_make(0, 0);
    s6.done = 0;
    go(s6_g1, 0);
    go(s6_g2, 0);
    go(s6_g3, 0);
    if (!go_recv_within(s6.c3, 0, GO_STALL_NS, 0))
        KT_FAIL("c3 never came (the select took c1?)");
    chan_send(s6.c1, 0);
    chan_send(s6.c1, 0);
    KT_ASSERT(kt_wait_count(&s6.done, 3, GO_STALL_MS));
    chan_free(s6.c1);
    chan_free(s6.c2);
    chan_free(s6.c3);
}

// ---- test/chan/select7.go --------------------------------------------------

// Every pairing of a plain, a one-case-select and a two-case-select
// receive with the same three kinds of send, the receiver started first
// (and given a yield to park).
static struct {
    chan_t *c;
    uint64_t done;
} s7;

static void s7_recv(void *arg)
{
    int kind = (int)(uintptr_t)arg;
    if (kind == 0) {
        chan_recv(s7.c, 0);
    } else if (kind == 1) {
        struct select_case cs[1] = { recv_case(s7.c, 0) };
        chan_select(cs, 1, true);
    } else {
        chan_t *c2 = chan_make(sizeof(int64_t), 0);
        struct select_case cs[2] = { recv_case(s7.c, 0), recv_case(c2, 0) };
        chan_select(cs, 2, true);
        chan_free(c2);
    }
    kt_add(&s7.done, 1);
}

static void s7_send(int kind, int recv_kind)
{
    s7.c = chan_make(sizeof(int64_t), 0);
    go(s7_recv, (void *)(uintptr_t)recv_kind);
    gosched();
    int64_t one = 1;
    if (kind == 0) {
        chan_send(s7.c, &one);
    } else if (kind == 1) {
        struct select_case cs[1] = { send_case(s7.c, &one) };
        chan_select(cs, 1, true);
    } else {
        chan_t *c2 = chan_make(sizeof(int64_t), 0);
        struct select_case cs[2] = { send_case(s7.c, &one), send_case(c2, &one) };
        chan_select(cs, 2, true);
        chan_free(c2);
    }
}

KTEST(go_chan_select7)
{
    s7.done = 0;
    uint64_t n = 0;
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) {
            s7_send(s, r);
            KT_ASSERT(kt_wait_count(&s7.done, ++n, GO_STALL_MS));
            chan_free(s7.c);
        }
}

// ---- test/chan/doubleselect.go ---------------------------------------------

// A sender selects over four unbuffered channels 100000 times; four
// forwarders merge them into one; the receiver must never see a value
// twice (a select whose two cases both ran would send it twice). Go runs
// it with GOMAXPROCS 2.
#define DS_N 100000
static struct {
    chan_t *c[4], *cmux, *done;
    uint8_t seen[DS_N];
} ds;

static void ds_sender(void *arg)
{
    (void)arg;
    for (int64_t i = 0; i < DS_N; i++) {
        struct select_case cs[4];
        for (int k = 0; k < 4; k++)
            cs[k] = send_case(ds.c[k], &i);
        chan_select(cs, 4, true);
    }
    for (int k = 0; k < 4; k++)
        chan_close(ds.c[k]);
}

static void ds_mux(void *arg)
{
    chan_t *in = arg;
    int64_t v;
    while (chan_recv(in, &v))
        chan_send(ds.cmux, &v);
    chan_send(ds.done, 0);
}

static void ds_closer(void *arg)
{
    (void)arg;
    for (int k = 0; k < 4; k++)
        chan_recv(ds.done, 0);
    chan_close(ds.cmux);
}

KTEST(go_chan_doubleselect)
{
    int procs = gomaxprocs(2);
    for (int k = 0; k < 4; k++)
        ds.c[k] = chan_make(sizeof(int64_t), 0);
    ds.cmux = chan_make(sizeof(int64_t), 0);
    ds.done = chan_make(0, 0);
    memset(ds.seen, 0, sizeof ds.seen);
    go(ds_sender, 0);
    for (int k = 0; k < 4; k++)
        go(ds_mux, ds.c[k]);
    go(ds_closer, 0);
    int64_t v, n = 0, dup = -1;
    while (chan_recv(ds.cmux, &v)) {
        if (v < 0 || v >= DS_N || ds.seen[v]++)
            dup = v;
        n++;
    }
    gomaxprocs(procs);
    if (dup >= 0)
        KT_FAIL("got duplicate value: %ld", dup);
    KT_ASSERT_EQ(n, DS_N);
    // The closer's close of cmux was its last touch; the muxes sent on done
    // before that and the sender closed c[] before the muxes ended.
    for (int k = 0; k < 4; k++)
        chan_free(ds.c[k]);
    chan_free(ds.cmux);
    chan_free(ds.done);
}
