// SPDX-License-Identifier: MIT
// Go 1.19's sync tests (src/sync: mutex_test.go, rwmutex_test.go,
// waitgroup_test.go, once_test.go, cond_test.go), written again for
// goro's mutex_t, rwmutex_t, waitgroup_t, once_t, cond_t and the runtime
// semaphore under them. Go's misuse tests (a fatal error each) are
// configurations of tests/matrix.py running app=go_misuse, at the end of
// this file. sync.Pool and sync.Map have no counterpart in goro: their
// tests do not apply (docs/testing.md).
#include "tests/kernel/go_test.h"
#include "kernel/chan.h"
#include "lib/string.h"

// ---- TestSemaphore (mutex_test.go) -----------------------------------------

// Ten goroutines take and give back a semaphore of count 1, 1000 times.
static void hammer_semaphore(void *arg)
{
    chan_t **a = arg;
    sema_t *s = (sema_t *)a[0];
    for (int i = 0; i < 1000; i++) {
        semacquire(s, false, "semacquire");
        semrelease(s, false);
    }
    bool t = true;
    chan_send(a[1], &t);
}

KTEST(go_TestSemaphore)
{
    static sema_t s;
    s.count = 1;
    chan_t *c = chan_make(sizeof(bool), 0);
    void *a[2] = { &s, c };
    for (int i = 0; i < 10; i++)
        go(hammer_semaphore, a);
    for (int i = 0; i < 10; i++)
        chan_recv(c, 0);
    chan_free(c);
    KT_ASSERT_EQ(s.count, 1);
}

// ---- TestMutex -------------------------------------------------------------

// trylock fails on a locked mutex and succeeds on an unlocked one; then
// ten goroutines hammer it, every third iteration with trylock.
static void hammer_mutex(void *arg)
{
    void **a = arg;
    mutex_t *m = a[0];
    for (int i = 0; i < 1000; i++) {
        if (i % 3 == 0) {
            if (mutex_trylock(m))
                mutex_unlock(m);
            continue;
        }
        mutex_lock(m);
        mutex_unlock(m);
    }
    bool t = true;
    chan_send(a[1], &t);
}

KTEST(go_TestMutex)
{
    static mutex_t m;
    m = (mutex_t)MUTEX_INIT;
    mutex_lock(&m);
    if (mutex_trylock(&m))
        KT_FAIL("trylock succeeded with mutex locked");
    mutex_unlock(&m);
    if (!mutex_trylock(&m))
        KT_FAIL("trylock failed with mutex unlocked");
    mutex_unlock(&m);
    chan_t *c = chan_make(sizeof(bool), 0);
    void *a[2] = { &m, c };
    for (int i = 0; i < 10; i++)
        go(hammer_mutex, a);
    for (int i = 0; i < 10; i++)
        chan_recv(c, 0);
    chan_free(c);
    KT_ASSERT_EQ(m.state, 0);
}

// ---- TestMutexFairness -----------------------------------------------------

// One goroutine holds the mutex 100 us at a time and takes it again at
// once; another wants it ten times, 100 us apart. Without starvation mode
// the second would keep losing for good; it must get all ten. Go allows
// 10 s; the work needs about 10 x (100 us + 1 ms to turn starving + 100
// us), and a waiter that never gets it never does, so here the bound is
// the stall limit.
static struct {
    mutex_t mu;
    chan_t *stop, *done;
    uint64_t hog_done;
} mf;

static void mf_hog(void *arg)
{
    (void)arg;
    for (;;) {
        mutex_lock(&mf.mu);
        sleep_ns(100000);
        mutex_unlock(&mf.mu);
        if (go_ready(mf.stop))
            break;
    }
    kt_add(&mf.hog_done, 1);
}

static void mf_waiter(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        sleep_ns(100000);
        mutex_lock(&mf.mu);
        mutex_unlock(&mf.mu);
    }
    bool t = true;
    chan_send(mf.done, &t);
}

KTEST(go_TestMutexFairness)
{
    mf.mu = (mutex_t)MUTEX_INIT;
    mf.stop = chan_make(sizeof(bool), 0);
    mf.done = chan_make(sizeof(bool), 1);
    mf.hog_done = 0;
    go(mf_hog, 0);
    go(mf_waiter, 0);
    bool got = go_recv_within(mf.done, 0, GO_STALL_NS, 0);
    chan_close(mf.stop);
    KT_ASSERT(kt_wait_count(&mf.hog_done, 1, GO_STALL_MS));
    if (!got)
        KT_FAIL("can't acquire mutex in %lu seconds", GO_STALL_NS / GO_SEC);
    chan_free(mf.stop);
    chan_free(mf.done);
}

// ---- TestOnce --------------------------------------------------------------

static struct {
    once_t once;
    int o;
    chan_t *c;
} once;

static void once_increment(void *arg)
{
    (void)arg;
    once.o++;
}

static void once_run(void *arg)
{
    (void)arg;
    once_do(&once.once, once_increment, 0);
    int v = once.o;
    if (v != 1)
        ktest_fail(__FILE__, __LINE__, "once failed inside run: %d is not 1", v);
    bool t = true;
    chan_send(once.c, &t);
}

KTEST(go_TestOnce)
{
    once.once = (once_t)ONCE_INIT;
    once.o = 0;
    once.c = chan_make(sizeof(bool), 0);
    for (int i = 0; i < 10; i++)
        go(once_run, 0);
    for (int i = 0; i < 10; i++)
        chan_recv(once.c, 0);
    chan_free(once.c);
    if (once.o != 1)
        KT_FAIL("once failed outside run: %d is not 1", once.o);
}

// ---- TestParallelReaders (rwmutex_test.go) ---------------------------------

// numReaders goroutines all hold the read lock at once: each reports it
// holds it, and none lets go before all have reported.
static struct {
    rwmutex_t m;
    chan_t *clocked, *cunlock, *cdone;
} pr;

static void parallel_reader(void *arg)
{
    (void)arg;
    bool t = true;
    rwmutex_rlock(&pr.m);
    chan_send(pr.clocked, &t);
    chan_recv(pr.cunlock, 0);
    rwmutex_runlock(&pr.m);
    chan_send(pr.cdone, &t);
}

static void parallel_readers(int num_readers, int procs)
{
    gomaxprocs(procs);
    pr.m = (rwmutex_t)RWMUTEX_INIT;
    pr.clocked = chan_make(sizeof(bool), 0);
    pr.cunlock = chan_make(sizeof(bool), 0);
    pr.cdone = chan_make(sizeof(bool), 0);
    for (int i = 0; i < num_readers; i++)
        go(parallel_reader, 0);
    for (int i = 0; i < num_readers; i++)      // every rlock has succeeded
        chan_recv(pr.clocked, 0);
    bool t = true;
    for (int i = 0; i < num_readers; i++)
        chan_send(pr.cunlock, &t);
    for (int i = 0; i < num_readers; i++)
        chan_recv(pr.cdone, 0);
    chan_free(pr.clocked);
    chan_free(pr.cunlock);
    chan_free(pr.cdone);
}

KTEST(go_TestParallelReaders)
{
    int procs = gomaxprocs(0);
    parallel_readers(1, 4);
    parallel_readers(3, 4);
    parallel_readers(4, 2);
    gomaxprocs(procs);
}

// ---- TestRWMutex -----------------------------------------------------------

// The try variants against a locked, an unlocked and a read-locked
// RWMutex; then HammerRWMutex: two writers and numReaders readers, each
// checking through an activity count that a writer is alone and readers
// share, at gomaxprocs 1, 4 and 10 (clamped to the cores). Short mode: 5
// iterations each.
static struct {
    rwmutex_t rwm;
    int32_t activity;               // readers in + 10000 per writer in
    int iterations;
    chan_t *cdone;
} hr;

static void hr_reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < hr.iterations; i++) {
        rwmutex_rlock(&hr.rwm);
        int32_t n = __atomic_add_fetch(&hr.activity, 1, __ATOMIC_SEQ_CST);
        if (n < 1 || n >= 10000)
            ktest_fail(__FILE__, __LINE__, "rlock with activity %d", n);
        for (volatile int k = 0; k < 100; k++)
            ;
        __atomic_sub_fetch(&hr.activity, 1, __ATOMIC_SEQ_CST);
        rwmutex_runlock(&hr.rwm);
    }
    bool t = true;
    chan_send(hr.cdone, &t);
}

static void hr_writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < hr.iterations; i++) {
        rwmutex_lock(&hr.rwm);
        int32_t n = __atomic_add_fetch(&hr.activity, 10000, __ATOMIC_SEQ_CST);
        if (n != 10000)
            ktest_fail(__FILE__, __LINE__, "wlock with activity %d", n);
        for (volatile int k = 0; k < 100; k++)
            ;
        __atomic_sub_fetch(&hr.activity, 10000, __ATOMIC_SEQ_CST);
        rwmutex_unlock(&hr.rwm);
    }
    bool t = true;
    chan_send(hr.cdone, &t);
}

static void hammer_rwmutex(int procs, int num_readers, int iterations)
{
    gomaxprocs(procs);
    hr.rwm = (rwmutex_t)RWMUTEX_INIT;
    hr.activity = 0;
    hr.iterations = iterations;
    hr.cdone = chan_make(sizeof(bool), 0);
    go(hr_writer, 0);
    int i;
    for (i = 0; i < num_readers / 2; i++)
        go(hr_reader, 0);
    go(hr_writer, 0);
    for (; i < num_readers; i++)
        go(hr_reader, 0);
    for (i = 0; i < 2 + num_readers; i++)
        chan_recv(hr.cdone, 0);
    chan_free(hr.cdone);
}

KTEST(go_TestRWMutex)
{
    rwmutex_t m = RWMUTEX_INIT;
    rwmutex_lock(&m);
    if (rwmutex_trylock(&m))
        KT_FAIL("trylock succeeded with mutex locked");
    if (rwmutex_tryrlock(&m))
        KT_FAIL("tryrlock succeeded with mutex locked");
    rwmutex_unlock(&m);
    if (!rwmutex_trylock(&m))
        KT_FAIL("trylock failed with mutex unlocked");
    rwmutex_unlock(&m);
    if (!rwmutex_tryrlock(&m))
        KT_FAIL("tryrlock failed with mutex unlocked");
    if (!rwmutex_tryrlock(&m))
        KT_FAIL("tryrlock failed with mutex rlocked");
    if (rwmutex_trylock(&m))
        KT_FAIL("trylock succeeded with mutex rlocked");
    rwmutex_runlock(&m);
    rwmutex_runlock(&m);

    int procs = gomaxprocs(0);
    const int n = 5;
    const int runs[][2] = { { 1, 1 }, { 1, 3 }, { 1, 10 }, { 4, 1 }, { 4, 3 },
                            { 4, 10 }, { 10, 1 }, { 10, 3 }, { 10, 10 }, { 10, 5 } };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0] && !ktest_failed(); k++)
        hammer_rwmutex(runs[k][0], runs[k][1], n);
    gomaxprocs(procs);
}

// ---- TestRLocker -----------------------------------------------------------

// Go's RLocker is the read side as a Locker; here the read side itself:
// a goroutine read-locks twice and then wants the write lock. The write
// lock waits until both read locks are gone, and a new read lock waits
// for the writer.
static struct {
    rwmutex_t wl;
    chan_t *wlocked, *rlocked;
} rl;

static void rlocker_g(void *arg)
{
    (void)arg;
    bool t = true;
    for (int i = 0; i < 10; i++) {
        rwmutex_rlock(&rl.wl);
        rwmutex_rlock(&rl.wl);
        chan_send(rl.rlocked, &t);
        rwmutex_lock(&rl.wl);
        chan_send(rl.wlocked, &t);
    }
}

KTEST(go_TestRLocker)
{
    rl.wl = (rwmutex_t)RWMUTEX_INIT;
    rl.wlocked = chan_make(sizeof(bool), 1);
    rl.rlocked = chan_make(sizeof(bool), 1);
    go(rlocker_g, 0);
    for (int i = 0; i < 10; i++) {
        chan_recv(rl.rlocked, 0);
        rwmutex_runlock(&rl.wl);
        if (go_ready(rl.wlocked))
            KT_FAIL("the read side did not read-lock it");
        rwmutex_runlock(&rl.wl);
        chan_recv(rl.wlocked, 0);
        if (go_ready(rl.rlocked))
            KT_FAIL("the read side did not respect the write lock");
        rwmutex_unlock(&rl.wl);
    }
    chan_free(rl.wlocked);
    chan_free(rl.rlocked);
}

// ---- TestWaitGroup ---------------------------------------------------------

// Two WaitGroups as a barrier, eight times over the same pair: 16
// goroutines each say done on wg1 and wait on wg2; none may pass wg2
// before the test has said done 16 times.
static struct {
    waitgroup_t wg1, wg2;
    chan_t *exited;
} twg;

static void wg_barrier_g(void *arg)
{
    (void)arg;
    wg_done(&twg.wg1);
    wg_wait(&twg.wg2);
    bool t = true;
    chan_send(twg.exited, &t);
}

KTEST(go_TestWaitGroup)
{
    twg.wg1 = (waitgroup_t)WAITGROUP_INIT;
    twg.wg2 = (waitgroup_t)WAITGROUP_INIT;
    const int n = 16;
    twg.exited = chan_make(sizeof(bool), (size_t)n);
    for (int round = 0; round != 8; round++) {
        wg_add(&twg.wg1, n);
        wg_add(&twg.wg2, n);
        for (int i = 0; i != n; i++)
            go(wg_barrier_g, 0);
        wg_wait(&twg.wg1);
        for (int i = 0; i != n; i++) {
            if (go_ready(twg.exited))
                KT_FAIL("WaitGroup released group too soon");
            wg_done(&twg.wg2);
        }
        for (int i = 0; i != n; i++)
            chan_recv(twg.exited, 0);   // blocks if the barrier fails to let someone go
    }
    chan_free(twg.exited);
}

// ---- TestWaitGroupRace -----------------------------------------------------

// 1000 times: two goroutines add to a counter and say done; after wg_wait
// both additions must be visible (no spurious wake-up).
static void wgr_g(void *arg)
{
    void **a = arg;
    __atomic_add_fetch((int32_t *)a[1], 1, __ATOMIC_SEQ_CST);
    wg_done(a[0]);
}

KTEST(go_TestWaitGroupRace)
{
    for (int i = 0; i < 1000; i++) {
        waitgroup_t wg = WAITGROUP_INIT;
        int32_t n = 0;
        void *a[2] = { &wg, &n };
        wg_add(&wg, 1);
        go(wgr_g, a);
        wg_add(&wg, 1);
        go(wgr_g, a);
        wg_wait(&wg);
        if (__atomic_load_n(&n, __ATOMIC_SEQ_CST) != 2)
            KT_FAIL("spurious wakeup from wg_wait");
    }
}

// ---- TestWaitGroupAlign ----------------------------------------------------

// A WaitGroup after a byte in a struct works (its 64-bit state word must
// be aligned for the atomics).
static void wga_done(void *arg)
{
    wg_done(arg);
}

KTEST(go_TestWaitGroupAlign)
{
    struct {
        uint8_t x;
        waitgroup_t wg;
    } x = { 0, WAITGROUP_INIT };
    KT_ASSERT_EQ((uintptr_t)&x.wg.state % 8, 0);
    wg_add(&x.wg, 1);
    go(wga_done, &x.wg);
    wg_wait(&x.wg);
}

// ---- TestCondSignal (cond_test.go) -----------------------------------------

// Two waiters; each signal wakes exactly one of them.
static struct {
    mutex_t m;
    cond_t c;
    chan_t *running, *awake, *exited_c;
    bool exit;                      // m held
} cs;

// Says it runs, waits on cs.c, and once signalled sends its index (arg)
// to cs.awake: TestCondSignal and TestCondSignalGenerations. It still
// holds cs.m then, so it says on cs.exited_c when it has let go.
static void cond_waiter(void *arg)
{
    int64_t i = (int64_t)(intptr_t)arg;
    bool t = true;
    mutex_lock(&cs.m);
    chan_send(cs.running, &t);
    cond_wait(&cs.c, &cs.m);
    chan_send(cs.awake, &i);
    mutex_unlock(&cs.m);
    chan_send(cs.exited_c, &t);
}

// The end of a test on cs: its n waiters gone, so that the next test's
// MUTEX_INIT does not meet one still unlocking cs.m (Go's tests each have
// their own mutex; these share cs). Then the channels are freed.
static void cs_join(int n)
{
    for (int k = 0; k < n; k++)
        chan_recv(cs.exited_c, 0);
    chan_free(cs.running);
    chan_free(cs.awake);
    chan_free(cs.exited_c);
}

KTEST(go_TestCondSignal)
{
    cs.m = (mutex_t)MUTEX_INIT;
    cs.c = (cond_t)COND_INIT;
    int n = 2;
    cs.running = chan_make(sizeof(bool), (size_t)n);
    cs.awake = chan_make(sizeof(int64_t), (size_t)n);
    cs.exited_c = chan_make(sizeof(bool), (size_t)n);
    for (int i = 0; i < n; i++)
        go(cond_waiter, 0);
    for (int i = 0; i < n; i++)
        chan_recv(cs.running, 0);   // wait for everyone to run
    while (n > 0) {
        if (go_ready(cs.awake))
            KT_FAIL("goroutine not asleep");
        mutex_lock(&cs.m);
        cond_signal(&cs.c);
        mutex_unlock(&cs.m);
        chan_recv(cs.awake, 0);     // deadlocks if no goroutine wakes up
        if (go_ready(cs.awake))
            KT_FAIL("too many goroutines awake");
        n--;
    }
    cond_signal(&cs.c);
    cs_join(2);
}

// ---- TestCondSignalGenerations ---------------------------------------------

// 100 waiters, started one at a time, each signalled after the next one
// waits: they must wake in the order they waited.
KTEST(go_TestCondSignalGenerations)
{
    cs.m = (mutex_t)MUTEX_INIT;
    cs.c = (cond_t)COND_INIT;
    const int n = 100;
    cs.running = chan_make(sizeof(bool), (size_t)n);
    cs.awake = chan_make(sizeof(int64_t), (size_t)n);
    cs.exited_c = chan_make(sizeof(bool), (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        go(cond_waiter, (void *)(intptr_t)i);
        if (i > 0) {
            int64_t a = -1;
            chan_recv(cs.awake, &a);
            if (a != i - 1)
                KT_FAIL("wrong goroutine woke up: want %ld, got %ld", i - 1, a);
        }
        chan_recv(cs.running, 0);
        mutex_lock(&cs.m);
        cond_signal(&cs.c);
        mutex_unlock(&cs.m);
    }
    chan_recv(cs.awake, 0);         // the last one (Go leaves it; we free the channels)
    cs_join(n);
}

// ---- TestCondBroadcast -----------------------------------------------------

// 200 waiters, 200 rounds: every broadcast wakes each of them exactly once.
#define CB_N 200

static void cond_bcast_waiter(void *arg)
{
    int64_t g = (int64_t)(intptr_t)arg;
    mutex_lock(&cs.m);
    while (!cs.exit) {
        chan_send(cs.running, &g);
        cond_wait(&cs.c, &cs.m);
        chan_send(cs.awake, &g);
    }
    mutex_unlock(&cs.m);
    bool t = true;
    chan_send(cs.exited_c, &t);
}

KTEST(go_TestCondBroadcast)
{
    cs.m = (mutex_t)MUTEX_INIT;
    cs.c = (cond_t)COND_INIT;
    cs.exit = false;
    cs.running = chan_make(sizeof(int64_t), CB_N);
    cs.awake = chan_make(sizeof(int64_t), CB_N);
    cs.exited_c = chan_make(sizeof(bool), CB_N);
    for (int64_t i = 0; i < CB_N; i++)
        go(cond_bcast_waiter, (void *)(intptr_t)i);
    static bool seen[CB_N];
    for (int i = 0; i < CB_N; i++) {
        for (int k = 0; k < CB_N; k++)
            chan_recv(cs.running, 0);       // deadlocks unless n are running
        if (i == CB_N - 1) {
            mutex_lock(&cs.m);
            cs.exit = true;
            mutex_unlock(&cs.m);
        }
        if (go_ready(cs.awake))
            KT_FAIL("goroutine not asleep");
        mutex_lock(&cs.m);
        cond_broadcast(&cs.c);
        mutex_unlock(&cs.m);
        memset(seen, 0, sizeof seen);
        for (int k = 0; k < CB_N; k++) {
            int64_t g = -1;
            chan_recv(cs.awake, &g);
            if (g < 0 || g >= CB_N || seen[g])
                KT_FAIL("goroutine %ld woke up twice", g);
            seen[g] = true;
        }
    }
    for (int k = 0; k < CB_N; k++)
        chan_recv(cs.exited_c, 0);
    if (go_ready(cs.running))
        KT_FAIL("goroutine did not exit");
    cond_broadcast(&cs.c);
    chan_free(cs.running);
    chan_free(cs.awake);
    chan_free(cs.exited_c);
}

// ---- TestRace (cond_test.go) -----------------------------------------------

// Three goroutines hand x from 1 to 2 to 3 through one Cond: each sees the
// value the previous one left.
static struct {
    mutex_t m;
    cond_t c;
    int x;                          // m held
    chan_t *done;
} cr;

// With cr.m held: lets the others run without it, then holds it again.
static void cr_yield(void)
{
    mutex_unlock(&cr.m);
    gosched();
    mutex_lock(&cr.m);
}

// With cr.m held: releases it and reports this goroutine done.
static void cr_finish(void)
{
    mutex_unlock(&cr.m);
    bool t = true;
    chan_send(cr.done, &t);
}

static void cr_g1(void *arg)
{
    (void)arg;
    mutex_lock(&cr.m);
    cr.x = 1;
    cond_wait(&cr.c, &cr.m);
    if (cr.x != 2)
        ktest_fail(__FILE__, __LINE__, "want 2, got %d", cr.x);
    cr.x = 3;
    cond_signal(&cr.c);
    cr_finish();
}

static void cr_g2(void *arg)
{
    (void)arg;
    mutex_lock(&cr.m);
    while (cr.x != 1)
        cr_yield();
    cr.x = 2;
    cond_signal(&cr.c);
    cr_finish();
}

static void cr_g3(void *arg)
{
    (void)arg;
    mutex_lock(&cr.m);
    while (cr.x != 2 && cr.x != 3)
        cr_yield();
    if (cr.x == 2) {
        cond_wait(&cr.c, &cr.m);
        if (cr.x != 3)
            ktest_fail(__FILE__, __LINE__, "want 3, got %d", cr.x);
    }
    cr_finish();
}

KTEST(go_TestRace)
{
    cr.m = (mutex_t)MUTEX_INIT;
    cr.c = (cond_t)COND_INIT;
    cr.x = 0;
    cr.done = chan_make(sizeof(bool), 0);
    go(cr_g1, 0);
    go(cr_g2, 0);
    go(cr_g3, 0);
    for (int i = 0; i < 3; i++)
        chan_recv(cr.done, 0);
    chan_free(cr.done);
}

// ---- TestCondSignalStealing ------------------------------------------------

// A waiter is in cond_wait; then a broadcast races with a new waiter. The
// new one may or may not be woken, but the first must be. 1000 rounds.
// Go gives the first waiter 2 s; a lost wake-up is forever, so here the
// stall limit, which no host stall reaches and no lost wake-up survives.
static struct {
    mutex_t m;
    cond_t cond;
    chan_t *ch;
    bool done;                      // m held
    uint64_t second_out;
} st;

static void st_first(void *arg)
{
    (void)arg;
    mutex_lock(&st.m);
    chan_send(st.ch, 0);
    cond_wait(&st.cond, &st.m);
    mutex_unlock(&st.m);
    chan_send(st.ch, 0);
}

static void st_broadcast(void *arg)
{
    (void)arg;
    cond_broadcast(&st.cond);
}

static void st_second(void *arg)
{
    (void)arg;
    mutex_lock(&st.m);
    while (!st.done)
        cond_wait(&st.cond, &st.m);
    mutex_unlock(&st.m);
    kt_add(&st.second_out, 1);
}

KTEST(go_TestCondSignalStealing)
{
    st.second_out = 0;
    for (uint64_t iters = 0; iters < 1000; iters++) {
        st.m = (mutex_t)MUTEX_INIT;
        st.cond = (cond_t)COND_INIT;
        st.ch = chan_make(0, 0);
        st.done = false;
        go(st_first, 0);
        chan_recv(st.ch, 0);
        mutex_lock(&st.m);
        mutex_unlock(&st.m);
        // The first waiter is inside cond_wait: we synchronized with it,
        // then took and released the mutex it held.
        go(st_broadcast, 0);
        go(st_second, 0);
        if (!go_recv_within(st.ch, 0, GO_STALL_NS, 0))
            KT_FAIL("iteration %lu: first waiter didn't get broadcast", iters);
        // Release the second waiter in case it didn't get the broadcast.
        mutex_lock(&st.m);
        st.done = true;
        mutex_unlock(&st.m);
        cond_broadcast(&st.cond);
        // Before the next round reuses m and cond: the second waiter is out.
        KT_ASSERT(kt_wait_count(&st.second_out, iters + 1, GO_STALL_MS));
        chan_free(st.ch);
    }
}

// ---- misuse: TestMutexMisuse, TestWaitGroupMisuse, and the time package's
// TestNewTickerLtZeroDuration and TestTickerResetLtZeroDuration ------------

// Each of these is a fatal error in goro (Go panics or throws), so each
// runs as its own boot: app=go_misuse NAME, one configuration per NAME in
// tests/matrix.py, which expects exit 255 and Go's words in the message
// ("unlocked" for the lock misuses, as Go's test checks).
static void misuse_mutex_unlock(void) { mutex_t mu = MUTEX_INIT; mutex_unlock(&mu); }
static void misuse_mutex_unlock2(void) { mutex_t mu = MUTEX_INIT; mutex_lock(&mu); mutex_unlock(&mu); mutex_unlock(&mu); }
static void misuse_rw_unlock(void) { rwmutex_t mu = RWMUTEX_INIT; rwmutex_unlock(&mu); }
static void misuse_rw_unlock2(void) { rwmutex_t mu = RWMUTEX_INIT; rwmutex_rlock(&mu); rwmutex_unlock(&mu); }
static void misuse_rw_unlock3(void) { rwmutex_t mu = RWMUTEX_INIT; rwmutex_lock(&mu); rwmutex_unlock(&mu); rwmutex_unlock(&mu); }
static void misuse_rw_runlock(void) { rwmutex_t mu = RWMUTEX_INIT; rwmutex_runlock(&mu); }
static void misuse_rw_runlock2(void) { rwmutex_t mu = RWMUTEX_INIT; rwmutex_lock(&mu); rwmutex_runlock(&mu); }
static void misuse_rw_runlock3(void) { rwmutex_t mu = RWMUTEX_INIT; rwmutex_rlock(&mu); rwmutex_runlock(&mu); rwmutex_runlock(&mu); }
static void misuse_waitgroup(void) { waitgroup_t wg = WAITGROUP_INIT; wg_add(&wg, 1); wg_done(&wg); wg_done(&wg); }
static void misuse_new_ticker(void) { ticker_new(0); }
static void misuse_ticker_reset(void) { ticker_t *tk = ticker_new(GO_SEC); ticker_reset(tk, 0); }

static const struct {
    const char *name;
    void (*f)(void);
} misuses[] = {
    { "Mutex.Unlock", misuse_mutex_unlock },
    { "Mutex.Unlock2", misuse_mutex_unlock2 },
    { "RWMutex.Unlock", misuse_rw_unlock },
    { "RWMutex.Unlock2", misuse_rw_unlock2 },
    { "RWMutex.Unlock3", misuse_rw_unlock3 },
    { "RWMutex.RUnlock", misuse_rw_runlock },
    { "RWMutex.RUnlock2", misuse_rw_runlock2 },
    { "RWMutex.RUnlock3", misuse_rw_runlock3 },
    { "WaitGroup", misuse_waitgroup },
    { "NewTicker", misuse_new_ticker },
    { "TickerReset", misuse_ticker_reset },
};

static int misuse_main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof misuses / sizeof misuses[0]; i++)
        if (strcmp(argv[1], misuses[i].name) == 0) {
            printf("go_misuse: %s\n", misuses[i].name);
            misuses[i].f();
            printf("go_misuse: %s completed (expected a fatal error)\n", misuses[i].name);
            return 1;
        }
    printf("go_misuse: unknown test (one of Mutex.Unlock ... TickerReset)\n");
    return 2;
}
GORO_APP(go_misuse, "one of Go's misuse tests: expect a fatal error (go_misuse NAME)", misuse_main);
