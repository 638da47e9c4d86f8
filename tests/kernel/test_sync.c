// SPDX-License-Identifier: MIT
// sync tests: mutual exclusion under contention, starvation mode bounding
// the longest wait, RWMutex exclusion, WaitGroup and Once under contention,
// Cond signal and broadcast, the semaphore's FIFO order, and the fatal
// errors as apps of their own.
#include "kernel/ktest.h"
#include "goro.h"
#include "lib/string.h"
#include "kernel/chan.h"
#include "kernel/sched.h"

// Busy for about ns, yielding (a stand-in for sleeping, until timers come).
static void yield_for(uint64_t ns)
{
    uint64_t end = nanotime() + ns;
    while (nanotime() < end)
        gosched();
}

// ---- Mutex ----------------------------------------------------------------

#define MU_G 8u
#define MU_ITERS 3000u
static mutex_t mu;
static uint64_t mu_counter;         // mu held
static uint32_t mu_inside;          // atomic: holders right now
static uint64_t mu_done, mu_overlap;

static void mu_worker(void *arg)
{
    uint32_t seed = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
    for (uint32_t i = 0; i < MU_ITERS; i++) {
        mutex_lock(&mu);
        if (__atomic_fetch_add(&mu_inside, 1, __ATOMIC_RELAXED) != 0)
            kt_add(&mu_overlap, 1);
        uint64_t c = mu_counter;
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 16 == 0)
            gosched();              // park others behind a holder that is off its core
        mu_counter = c + 1;
        __atomic_fetch_sub(&mu_inside, 1, __ATOMIC_RELAXED);
        mutex_unlock(&mu);
    }
    kt_add(&mu_done, 1);
}

KTEST(sync_mutex_mutual_exclusion_counter)
{
    memset(&mu, 0, sizeof mu);
    mu_counter = mu_done = mu_overlap = 0;
    for (uint32_t i = 0; i < MU_G; i++)
        go(mu_worker, (void *)(uintptr_t)i);
    if (!kt_wait_count(&mu_done, MU_G, KT_STALL_MS))
        KT_FAIL("only %lu of %u workers finished", kt_load(&mu_done), MU_G);
    KT_ASSERT_EQ(kt_load(&mu_overlap), 0);
    KT_ASSERT_EQ(mu_counter, MU_G * MU_ITERS);
    KT_ASSERT_EQ(mu.state, 0);
    KT_ASSERT(mutex_trylock(&mu));
    KT_ASSERT(!mutex_trylock(&mu));
    mutex_unlock(&mu);
}

// One goroutine takes the mutex again right after each release, holding it
// 200 us at a time (yielding meanwhile, like Go's TestMutexFairness, which
// sleeps). In normal mode a woken waiter competes with it and may lose; a
// waiter that has waited over 1 ms turns the mutex to starvation mode,
// where unlock hands it to the oldest waiter and a newcomer never takes it.
//
// What holds however long the host stops a vCPU: every waiter gets the
// mutex STARVE_ROUNDS times while the hog never stops trying, and an
// unlock in starvation mode with a waiter parked is always followed by a
// waiter's turn, never the hog's. (With none parked yet, the unlock only
// raises the count: the waiter that set STARVING may still be on its way
// into semacquire, its vCPU stopped by the host, and the hog's next lock,
// queueing because of STARVING, takes the count first. Go's semaphore has
// the same window; seen with a 400 us delay after that CAS, at 4 vCPUs.)
// On one P starvation mode surely comes: a waiter readied by the hog's
// unlock runs only when the hog yields, which it does holding the mutex,
// so the waiter loses until it has waited 1 ms. On several Ps a waiter
// stolen by another core may win in normal mode (measured: 1 hand-off in
// 18 turns on 4 vCPUs). How long the longest wait was is a tail.
#define STARVE_WAITERS 3u
#define STARVE_ROUNDS 6u
static mutex_t starve_mu;
static uint32_t starve_stop;
static uint64_t starve_done, starve_max_wait_ns, starve_hog_rounds;
static uint64_t starve_waiter_turns;    // starve_mu held to write
static uint64_t starve_handoffs, starve_barged;

static void starve_hog(void *arg)
{
    (void)arg;
    uint64_t turns_at_handoff = 0;
    bool handed_off = false;
    while (!__atomic_load_n(&starve_stop, __ATOMIC_ACQUIRE)) {
        mutex_lock(&starve_mu);
        // After an unlock in starvation mode to a parked waiter, a waiter
        // owned the mutex before this lock returned.
        if (handed_off && starve_waiter_turns == turns_at_handoff)
            kt_add(&starve_barged, 1);
        yield_for(200000);
        // Read while held: STARVING is set only by a waiter while the
        // mutex is held, and cleared only by the waiter it is handed to;
        // a parked waiter stays parked until this unlock's semrelease
        // takes it off the queue and gives it the count.
        handed_off = mutex_starving(&starve_mu) && sema_waiters(&starve_mu.sema) > 0;
        turns_at_handoff = starve_waiter_turns;
        mutex_unlock(&starve_mu);
        if (handed_off)
            kt_add(&starve_handoffs, 1);
        kt_add(&starve_hog_rounds, 1);
    }
    kt_add(&starve_done, 1);
}

static void starve_waiter(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < STARVE_ROUNDS; i++) {
        uint64_t t0 = nanotime();
        mutex_lock(&starve_mu);
        uint64_t w = nanotime() - t0;
        starve_waiter_turns++;
        mutex_unlock(&starve_mu);
        kt_raise(&starve_max_wait_ns, w);
        yield_for(500000);
    }
    kt_add(&starve_done, 1);
}

// The hog and the waiters on procs Ps; false (after a failure) if a
// waiter never finished.
static bool starvation_round(int procs)
{
    int orig = gomaxprocs(procs);
    memset(&starve_mu, 0, sizeof starve_mu);
    starve_stop = 0;
    starve_done = starve_max_wait_ns = starve_hog_rounds = 0;
    starve_waiter_turns = starve_handoffs = starve_barged = 0;
    go(starve_hog, 0);
    for (int i = 0; i < 20; i++)
        gosched();                  // the hog holds it first
    for (uint32_t i = 0; i < STARVE_WAITERS; i++)
        go(starve_waiter, 0);
    bool ok = kt_wait_count(&starve_done, STARVE_WAITERS, KT_STALL_MS);
    __atomic_store_n(&starve_stop, 1, __ATOMIC_RELEASE);
    bool hog_out = kt_wait_count(&starve_done, STARVE_WAITERS + 1, KT_STALL_MS);
    gomaxprocs(orig);
    printf("ktest: starvation on %d P(s): longest wait %lu us, hog rounds %lu, hand-offs %lu\n", procs,
           kt_load(&starve_max_wait_ns) / 1000, kt_load(&starve_hog_rounds), kt_load(&starve_handoffs));
    if (!ok || !hog_out) {
        ktest_fail(__FILE__, __LINE__, "waiters starved: %lu of %u finished", kt_load(&starve_done),
                   STARVE_WAITERS);
        return false;
    }
    return true;
}

KTEST(sync_mutex_starvation_hands_off_on_one_p)
{
    if (!starvation_round(1))
        return;
    KT_ASSERT_EQ(starve_waiter_turns, STARVE_WAITERS * STARVE_ROUNDS);
    KT_ASSERT(kt_load(&starve_handoffs) > 0);
    KT_ASSERT_EQ(kt_load(&starve_barged), 0);
}

KTEST(sync_mutex_starvation_bounds_longest_wait)
{
    if (!starvation_round(num_cpu()))
        return;
    KT_ASSERT_EQ(starve_waiter_turns, STARVE_WAITERS * STARVE_ROUNDS);
    KT_ASSERT_EQ(kt_load(&starve_barged), 0);
    // 1 ms to turn starving, one 200 us hold, and slack for TCG.
    KT_TAIL_BOUND("mutex wait beside a hog, longest", kt_load(&starve_max_wait_ns), 250000000ull);
}

// ---- an unlock in starvation mode by a G that may not switch ---------------
//
// Unlock in starvation mode hands the mutex to the oldest waiter and yields
// to it. It yielded whatever the caller's state: inside preempt_disable or
// a blocking call (both public) the switch ran with the preempt count held
// and the kernel panicked (assertion preempt_count() == 0 in mcall); with
// interrupts off it switched away from a G that may hold a lock. Go yields
// there only when m.locks == 0. Here, on one P, the holder keeps the mutex
// until a waiter has turned it to starvation mode and parked, then unlocks
// it in each of those states: the mutex must belong to the waiter at once
// (the hand-off happened) while the unlocker is still where it was (on one
// P the waiter could have run only if the unlocker had switched).

static mutex_t pin_mu;
static uint64_t pin_turns, pin_done;

static void pin_waiter(void *arg)
{
    (void)arg;
    mutex_lock(&pin_mu);
    kt_add(&pin_turns, 1);
    mutex_unlock(&pin_mu);
    kt_add(&pin_done, 1);
}

// With pin_mu held: holds it, letting waiters run between holds, until a
// waiter has waited over 1 ms, set STARVING and parked. Each sleep lets
// the waiter run and find the mutex held; each unlock in normal mode wakes
// it, and the relock right after usually beats it. When it does not (a
// preemption between the two, as under a 50 us time slice), the waiter
// takes the mutex in normal mode and is done: another one starts.
// *spawned counts the waiters started.
static bool hold_until_starving(uint64_t *spawned)
{
    uint64_t end = nanotime() + KT_STALL_NS;        // a stall limit: the host may hold a vCPU long
    while (!(mutex_starving(&pin_mu) && sema_waiters(&pin_mu.sema) > 0)) {
        if (nanotime() > end)
            return false;
        if (kt_load(&pin_done) == *spawned) {
            go(pin_waiter, 0);
            (*spawned)++;
        }
        sleep_ns(1500000);
        if (mutex_starving(&pin_mu))
            continue;                   // parked, or on its way to park: look again
        mutex_unlock(&pin_mu);
        mutex_lock(&pin_mu);
    }
    return true;
}

enum pin_how { PIN_PREEMPT_DISABLE, PIN_SYSCALL, PIN_IRQS_OFF };
static const char *const pin_names[] = { "preempt_disable", "entersyscall", "interrupts off" };

KTEST(sync_starving_unlock_while_pinned_hands_off_without_switching)
{
    int orig = gomaxprocs(1);
    for (int how = PIN_PREEMPT_DISABLE; how <= PIN_IRQS_OFF; how++) {
        memset(&pin_mu, 0, sizeof pin_mu);
        pin_turns = pin_done = 0;
        uint64_t spawned = 0;
        mutex_lock(&pin_mu);
        if (!hold_until_starving(&spawned)) {
            mutex_unlock(&pin_mu);
            kt_wait_count(&pin_done, spawned, KT_STALL_MS);
            gomaxprocs(orig);
            KT_FAIL("%s: no waiter turned the mutex to starvation mode", pin_names[how]);
        }
        uint64_t turns_before = kt_load(&pin_turns);
        int core = core_id();
        uint64_t f = 0;
        if (how == PIN_PREEMPT_DISABLE)
            preempt_disable();
        else if (how == PIN_SYSCALL)
            entersyscall();
        else
            f = irq_save();
        mutex_unlock(&pin_mu);
        uint64_t turns = kt_load(&pin_turns) - turns_before;
        // The waiter owns it now: a trylock fails, unless (in a call, where
        // the waiter may run elsewhere at once) it has had its turn already.
        bool took = mutex_trylock(&pin_mu);
        bool handed = !took || kt_load(&pin_turns) != turns_before;
        if (took)
            mutex_unlock(&pin_mu);
        bool irqs_still_off = !irqs_enabled();
        bool same_core = core_id() == core;
        if (how == PIN_PREEMPT_DISABLE)
            preempt_enable();
        else if (how == PIN_SYSCALL)
            exitsyscall();
        else
            irq_restore(f);
        bool done = kt_wait_count(&pin_done, spawned, KT_STALL_MS);
        if (!handed || !done || !same_core || (how == PIN_IRQS_OFF && !irqs_still_off) ||
            (how != PIN_SYSCALL && turns != 0)) {
            gomaxprocs(orig);
            // In a blocking call the waiter goes to an idle core (or the
            // global queue), and may run there at once.
            KT_FAIL("%s: handed %d, waiters done %d, same core %d, interrupts still off %d, "
                    "waiter turns while pinned %lu", pin_names[how], handed, done, same_core,
                    irqs_still_off, turns);
        }
    }
    gomaxprocs(orig);
    KT_ASSERT_EQ(pin_mu.state, 0);
}

// ---- RWMutex --------------------------------------------------------------

#define RW_READERS 6u
#define RW_WRITERS 2u
#define RW_ITERS 1500u
static rwmutex_t rw;
static uint64_t rw_a, rw_b;         // equal whenever no writer holds rw
static uint32_t rw_readers_in, rw_writers_in;
static uint64_t rw_done, rw_bad, rw_max_readers;

static void rw_reader(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < RW_ITERS; i++) {
        rwmutex_rlock(&rw);
        uint32_t n = __atomic_add_fetch(&rw_readers_in, 1, __ATOMIC_RELAXED);
        kt_raise(&rw_max_readers, n);
        if (__atomic_load_n(&rw_writers_in, __ATOMIC_RELAXED) || rw_a != rw_b)
            kt_add(&rw_bad, 1);
        if (i % 8 == 0)
            gosched();
        __atomic_sub_fetch(&rw_readers_in, 1, __ATOMIC_RELAXED);
        rwmutex_runlock(&rw);
    }
    kt_add(&rw_done, 1);
}

static void rw_writer(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < RW_ITERS / 4; i++) {
        rwmutex_lock(&rw);
        if (__atomic_add_fetch(&rw_writers_in, 1, __ATOMIC_RELAXED) != 1 ||
            __atomic_load_n(&rw_readers_in, __ATOMIC_RELAXED))
            kt_add(&rw_bad, 1);
        rw_a++;
        if (i % 4 == 0)
            gosched();
        rw_b++;
        __atomic_sub_fetch(&rw_writers_in, 1, __ATOMIC_RELAXED);
        rwmutex_unlock(&rw);
        gosched();
    }
    kt_add(&rw_done, 1);
}

KTEST(sync_rwmutex_readers_share_writers_exclude)
{
    memset(&rw, 0, sizeof rw);
    rw_a = rw_b = rw_done = rw_bad = rw_max_readers = 0;
    for (uint32_t i = 0; i < RW_READERS; i++)
        go(rw_reader, 0);
    for (uint32_t i = 0; i < RW_WRITERS; i++)
        go(rw_writer, 0);
    if (!kt_wait_count(&rw_done, RW_READERS + RW_WRITERS, KT_STALL_MS))
        KT_FAIL("only %lu finished", kt_load(&rw_done));
    KT_ASSERT_EQ(kt_load(&rw_bad), 0);
    KT_ASSERT_EQ(rw_a, RW_WRITERS * (RW_ITERS / 4));
    KT_ASSERT_EQ(rw_b, rw_a);
    printf("ktest: rwmutex: up to %lu readers inside at once\n", kt_load(&rw_max_readers));
}

static uint64_t rw_share_in, rw_share_out;

static void rw_share_reader(void *arg)
{
    (void)arg;
    rwmutex_rlock(&rw);
    kt_add(&rw_share_in, 1);
    kt_wait_count(&rw_share_in, RW_READERS, KT_STALL_MS);   // every reader inside together
    rwmutex_runlock(&rw);
    kt_add(&rw_share_out, 1);
}

KTEST(sync_rwmutex_readers_inside_together)
{
    memset(&rw, 0, sizeof rw);
    rw_share_in = rw_share_out = 0;
    for (uint32_t i = 0; i < RW_READERS; i++)
        go(rw_share_reader, 0);
    if (!kt_wait_count(&rw_share_out, RW_READERS, KT_STALL_MS))
        KT_FAIL("%lu readers got in together, %lu left", kt_load(&rw_share_in), kt_load(&rw_share_out));
    KT_ASSERT_EQ(kt_load(&rw_share_in), RW_READERS);
    rwmutex_lock(&rw);              // and a writer after them
    rwmutex_unlock(&rw);
}

// ---- WaitGroup ------------------------------------------------------------

#define WG_WORKERS 64u
#define WG_WAITERS 4u
#define WG_ROUNDS 8u
static waitgroup_t wg;
static uint64_t wg_work, wg_waiters_back, wg_bad;

static void wg_worker(void *arg)
{
    (void)arg;
    if ((uintptr_t)arg & 1)
        gosched();
    kt_add(&wg_work, 1);
    wg_done(&wg);
}

static void wg_waiter(void *arg)
{
    uint64_t want = (uint64_t)(uintptr_t)arg;
    wg_wait(&wg);
    if (kt_load(&wg_work) < want)
        kt_add(&wg_bad, 1);
    kt_add(&wg_waiters_back, 1);
}

KTEST(sync_waitgroup_many_waiters_reused)
{
    memset(&wg, 0, sizeof wg);
    wg_work = wg_waiters_back = wg_bad = 0;
    for (uint32_t round = 1; round <= WG_ROUNDS; round++) {
        uint64_t want = (uint64_t)round * WG_WORKERS;
        wg_add(&wg, (int)WG_WORKERS);
        for (uint32_t i = 0; i < WG_WAITERS; i++)
            go(wg_waiter, (void *)(uintptr_t)want);
        for (uint32_t i = 0; i < WG_WORKERS; i++)
            go(wg_worker, (void *)(uintptr_t)i);
        wg_wait(&wg);
        KT_ASSERT(kt_load(&wg_work) >= want);
        // the next round reuses wg only after every waiter is back
        if (!kt_wait_count(&wg_waiters_back, (uint64_t)round * WG_WAITERS, KT_STALL_MS))
            KT_FAIL("round %u: waiters did not return", round);
    }
    KT_ASSERT_EQ(kt_load(&wg_bad), 0);
    KT_ASSERT_EQ(wg.state, 0);
    wg_wait(&wg);                   // zero counter: returns at once
}

// ---- Once -----------------------------------------------------------------

#define ONCE_G 32u
static once_t once;
static uint64_t once_runs, once_value, once_done, once_bad;

static void once_fn(void *arg)
{
    kt_add(&once_runs, 1);
    for (int i = 0; i < 10; i++)
        gosched();                  // others arrive while fn runs
    once_value = (uint64_t)(uintptr_t)arg;
}

static void once_caller(void *arg)
{
    once_do(&once, once_fn, arg);
    if (once_value == 0)            // fn's write is visible to every caller
        kt_add(&once_bad, 1);
    kt_add(&once_done, 1);
}

KTEST(sync_once_runs_once_under_contention)
{
    memset(&once, 0, sizeof once);
    once_runs = once_value = once_done = once_bad = 0;
    for (uint32_t i = 0; i < ONCE_G; i++)
        go(once_caller, (void *)(uintptr_t)(i + 1));
    KT_ASSERT(kt_wait_count(&once_done, ONCE_G, KT_STALL_MS));
    KT_ASSERT_EQ(kt_load(&once_runs), 1);
    KT_ASSERT_EQ(kt_load(&once_bad), 0);
    once_do(&once, once_fn, (void *)1);
    KT_ASSERT_EQ(kt_load(&once_runs), 1);
}

// ---- a Once whose function ends its goroutine ---------------------------------
//
// fn calls goexit (under the shell, an app's exit() is goexit): Go's
// doSlow unlocks the mutex and sets done in defers, which Goexit runs, so
// later callers return at once and fn is not run again. The mutex stayed
// locked and done 0: every later caller waited forever.

static once_t once_x;
static uint64_t oncex_ran, oncex_returned, oncex_later;

static void oncex_fn(void *arg)
{
    (void)arg;
    kt_add(&oncex_ran, 1);
    goexit();
}

static void oncex_first(void *arg)
{
    (void)arg;
    once_do(&once_x, oncex_fn, 0);
    kt_add(&oncex_returned, 1);     // never: fn ended this goroutine
}

static void oncex_after(void *arg)
{
    (void)arg;
    once_do(&once_x, oncex_fn, 0);
    kt_add(&oncex_later, 1);
}

KTEST(sync_once_survives_goexit_in_its_function)
{
    memset(&once_x, 0, sizeof once_x);
    oncex_ran = oncex_returned = oncex_later = 0;
    go(oncex_first, 0);
    KT_ASSERT(kt_wait_count(&oncex_ran, 1, KT_STALL_MS));
    for (int i = 0; i < 4; i++)
        go(oncex_after, 0);
    if (!kt_wait_count(&oncex_later, 4, KT_STALL_MS))
        KT_FAIL("%lu of 4 later once_do calls returned: the Once stayed locked after goexit",
                kt_load(&oncex_later));
    once_do(&once_x, oncex_fn, 0);  // done: returns without running fn
    KT_ASSERT_EQ(kt_load(&oncex_ran), 1);
    KT_ASSERT_EQ(kt_load(&oncex_returned), 0);
}

// ---- Cond -----------------------------------------------------------------

#define COND_G 16u
static mutex_t cond_mu;
static cond_t cond;
static uint64_t cond_items;         // cond_mu held
static uint64_t cond_taken, cond_waiting, cond_gen;

static void cond_consumer(void *arg)
{
    (void)arg;
    mutex_lock(&cond_mu);
    kt_add(&cond_waiting, 1);
    while (cond_items == 0)
        cond_wait(&cond, &cond_mu);
    cond_items--;
    mutex_unlock(&cond_mu);
    kt_add(&cond_taken, 1);
}

static void gen_waiter(void *arg)
{
    (void)arg;
    mutex_lock(&cond_mu);
    uint64_t g = cond_gen;
    kt_add(&cond_waiting, 1);
    while (cond_gen == g)
        cond_wait(&cond, &cond_mu);
    mutex_unlock(&cond_mu);
    kt_add(&cond_taken, 1);
}

KTEST(sync_cond_signal_and_broadcast)
{
    memset(&cond_mu, 0, sizeof cond_mu);
    memset(&cond, 0, sizeof cond);
    cond_items = cond_taken = cond_waiting = 0;
    cond_signal(&cond);             // nobody waits: no effect
    for (uint32_t i = 0; i < COND_G; i++)
        go(cond_consumer, 0);
    KT_ASSERT(kt_wait_count(&cond_waiting, COND_G, KT_STALL_MS));
    for (uint32_t i = 0; i < COND_G; i++) {
        mutex_lock(&cond_mu);
        cond_items++;
        cond_signal(&cond);
        mutex_unlock(&cond_mu);
        if (i % 3 == 0)
            gosched();
    }
    if (!kt_wait_count(&cond_taken, COND_G, KT_STALL_MS))
        KT_FAIL("signal: %lu of %u consumers got an item", kt_load(&cond_taken), COND_G);
    KT_ASSERT_EQ(cond_items, 0);

    cond_taken = cond_waiting = 0;
    cond_gen = 0;
    for (uint32_t i = 0; i < COND_G; i++)
        go(gen_waiter, 0);
    KT_ASSERT(kt_wait_count(&cond_waiting, COND_G, KT_STALL_MS));
    mutex_lock(&cond_mu);
    cond_gen++;
    cond_broadcast(&cond);
    mutex_unlock(&cond_mu);
    if (!kt_wait_count(&cond_taken, COND_G, KT_STALL_MS))
        KT_FAIL("broadcast woke %lu of %u", kt_load(&cond_taken), COND_G);
}

// ---- Semaphore: FIFO ------------------------------------------------------

#define SEMA_G 12u
static sema_t sem;
static uint64_t sema_order[SEMA_G], sema_next, sema_back;

static void sema_waiter(void *arg)
{
    sema_acquire(&sem);
    uint64_t pos = __atomic_fetch_add(&sema_next, 1, __ATOMIC_ACQ_REL);
    sema_order[pos] = (uint64_t)(uintptr_t)arg;
    kt_add(&sema_back, 1);
}

KTEST(sync_sema_fifo_order)
{
    memset(&sem, 0, sizeof sem);
    sema_next = sema_back = 0;
    KT_ASSERT(!sema_try_acquire(&sem));
    sema_release(&sem);
    KT_ASSERT(sema_try_acquire(&sem));
    // queue them one at a time, so the queue order is known
    for (uint32_t i = 0; i < SEMA_G; i++) {
        go(sema_waiter, (void *)(uintptr_t)i);
        uint64_t end = nanotime() + KT_STALL_NS;
        while (sema_waiters(&sem) != i + 1 && nanotime() < end)
            gosched();
        KT_ASSERT_EQ(sema_waiters(&sem), i + 1);
    }
    for (uint32_t i = 0; i < SEMA_G; i++) {
        sema_release(&sem);
        KT_ASSERT(kt_wait_count(&sema_back, i + 1, KT_STALL_MS));
    }
    for (uint32_t i = 0; i < SEMA_G; i++)
        KT_ASSERT_EQ(sema_order[i], i);
}

// ---- fatal errors, each an app of its own ---------------------------------

static int unlock_unlocked_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    static mutex_t m;
    printf("mutex_unlock_unlocked: unlocking a mutex nobody holds\n");
    mutex_unlock(&m);
    return 1;
}
GORO_APP(mutex_unlock_unlocked, "unlock an unlocked mutex (expect the fatal error, exit 255)",
         unlock_unlocked_main);

static int wg_negative_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    static waitgroup_t w;
    wg_add(&w, 1);
    wg_done(&w);
    printf("wg_negative: one wg_done too many\n");
    wg_done(&w);
    return 1;
}
GORO_APP(wg_negative, "drive a WaitGroup counter negative (expect the fatal error, exit 255)",
         wg_negative_main);
