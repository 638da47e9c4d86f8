// SPDX-License-Identifier: MIT
// Go 1.19's runtime/sema_test.go, written again for goro's runtime
// semaphore (kernel/sync_sema.c: semacquire, semrelease with handoff,
// sema_waiters for Go's SemNwait). sync's TestSemaphore is in
// go_sync_test.c.
#include "tests/kernel/go_test.h"
#include "kernel/chan.h"

// ---- TestSemaHandoff, TestSemaHandoff1, TestSemaHandoff2 -------------------

// A release with handoff gives the P straight to the first waiter: right
// after semrelease(s, true) both the releaser and the woken waiter try to
// CAS res from 0, and the waiter must win in at least two thirds of 10000
// tries (Go sees over 90%). As in Go, one goroutine per P keeps yielding
// meanwhile, so that the releaser cannot win simply by moving to an idle
// core.
static struct {
    sema_t sema;
    uint32_t res;
    chan_t *done;
    waitgroup_t wg;
} sh;

static void sh_busy(void *arg)
{
    (void)arg;
    while (!go_ready(sh.done))
        gosched();
    wg_done(&sh.wg);
}

static void sh_waiter(void *arg)
{
    (void)arg;
    semacquire(&sh.sema, false, "semacquire");
    uint32_t zero = 0;
    __atomic_compare_exchange_n(&sh.res, &zero, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    semrelease(&sh.sema, true);
    chan_close(sh.done);
    wg_done(&sh.wg);
}

static bool sema_handoff_once(void)
{
    sh.sema = (sema_t)SEMA_INIT;
    sh.res = 0;
    sh.done = chan_make(0, 0);
    sh.wg = (waitgroup_t)WAITGROUP_INIT;
    int procs = gomaxprocs(0);
    for (int i = 0; i < procs; i++) {
        wg_add(&sh.wg, 1);
        go(sh_busy, 0);
    }
    wg_add(&sh.wg, 1);
    go(sh_waiter, 0);
    while (sema_waiters(&sh.sema) == 0)
        gosched();                  // until the waiter blocks in semacquire
    // The crux: release with handoff, then race the waiter's CAS.
    semrelease(&sh.sema, true);
    uint32_t zero = 0;
    __atomic_compare_exchange_n(&sh.res, &zero, 2, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    wg_wait(&sh.wg);
    chan_free(sh.done);
    return sh.res == 1;
}

static void sema_handoff(void)
{
    const int iter = 10000;
    int ok = 0;
    for (int i = 0; i < iter; i++)
        ok += sema_handoff_once();
    printf("ktest: sema handoff: %d of %d direct (gomaxprocs %d)\n", ok, iter, gomaxprocs(0));
    if (ok < iter * 2 / 3)
        ktest_fail(__FILE__, __LINE__, "direct handoff < 2/3: %d of %d", ok, iter);
}

KTEST(go_TestSemaHandoff) { sema_handoff(); }

KTEST(go_TestSemaHandoff1)
{
    int procs = gomaxprocs(0);
    if (procs <= 1)
        KT_SKIP("gomaxprocs <= 1");
    gomaxprocs(1);
    sema_handoff();
    gomaxprocs(procs);
}

KTEST(go_TestSemaHandoff2)
{
    int procs = gomaxprocs(0);
    if (procs <= 2)
        KT_SKIP("gomaxprocs <= 2");
    gomaxprocs(2);
    sema_handoff();
    gomaxprocs(procs);
}
