// SPDX-License-Identifier: MIT
// Regression tests for scheduler defects found and fixed, one or more per
// defect, each failing on the code before its fix. Windows of a few
// instructions are widened with debug builds' delay points
// (kernel/debugdelay.h): each such test names the window it widens, sets
// it itself, and runs without it (as a plain stress of the same path) in
// normal builds. The matrix runs this file in the debug build
// (tests/matrix.py, the race-debug-* configurations).
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "kernel/debugdelay.h"
#include "kernel/irqwait.h"
#include "kernel/cmdline.h"
#include "lib/string.h"

static void spin_ns(uint64_t ns)
{
    uint64_t end = nanotime() + ns;
    while (nanotime() < end)
        cpu_relax();
}

// Time slices run out: the stale request's kind. A due timer some earlier
// test left behind preempts for its P's timers instead (PREEMPT_TIMERS),
// and comes due inside any window once the host deschedules the vCPU.
static uint64_t quantum_preemptions(void)
{
    static struct sched_stats s;
    sched_stats(&s);
    return s.total.preemptions_quantum;
}

// Preemptions of every cause: each puts a G back in a run queue.
static uint64_t all_preemptions(void)
{
    static struct sched_stats s;
    sched_stats(&s);
    return s.total.preemptions;
}

// The M the calling G runs on now (it may move right after).
static struct m *my_m(void)
{
    struct m *mp = acquirem();
    releasem(mp);
    return mp;
}

// ---- runnext hand-offs continue one time slice ------------------------
//
// The every-61st look at the global queue counted schedules, runnext
// hand-offs included, so a ping-pong pair gave the P to a global G within
// 61 hand-offs (Go's TestPingPongHog failed by a factor of 1000). Go counts
// time slices there, and a G run from runnext continues the slice of the G
// that readied it. Here a pair hands a token back and forth 1000 times on
// one P with Gs waiting both on the P's ring and on the global queue; the
// hand-offs are one slice, so none of those Gs may run before the pair is
// done. The quantum is raised to a second meanwhile, so that a slow host
// cannot end the slice.

#define HANDOFFS 1000
#define WAITERS 300
static uint64_t waiters_ran;
static chan_t *ping, *pong, *pair_done;
static struct g *pair_g[2];

// Yields until both Gs of the pair are parked on their channels.
static bool pair_parked(void)
{
    uint64_t end = nanotime() + KT_STALL_NS;        // a stall limit: the host may hold a vCPU long
    for (;;) {
        struct g *a = __atomic_load_n(&pair_g[0], __ATOMIC_ACQUIRE);
        struct g *b = __atomic_load_n(&pair_g[1], __ATOMIC_ACQUIRE);
        if (a && b && __atomic_load_n(&a->status, __ATOMIC_ACQUIRE) == G_WAITING &&
            __atomic_load_n(&b->status, __ATOMIC_ACQUIRE) == G_WAITING)
            return true;
        if (nanotime() > end)
            return false;
        gosched();
    }
}

static void waiter_g(void *arg)
{
    (void)arg;
    kt_add(&waiters_ran, 1);
}

static void pinger(void *arg)
{
    (void)arg;
    uint64_t token = 0;
    __atomic_store_n(&pair_g[0], getg(), __ATOMIC_RELEASE);
    chan_recv(ping, &token);            // the start
    uint64_t before = kt_load(&waiters_ran);
    for (int i = 0; i < HANDOFFS; i++) {
        chan_send(pong, &token);
        chan_recv(ping, &token);
    }
    uint64_t ran = kt_load(&waiters_ran) - before;
    token = ~0ull;
    chan_send(pong, &token);
    chan_send(pair_done, &ran);
}

static void ponger(void *arg)
{
    (void)arg;
    uint64_t token;
    __atomic_store_n(&pair_g[1], getg(), __ATOMIC_RELEASE);
    for (;;) {
        chan_recv(pong, &token);
        if (token == ~0ull)
            return;
        chan_send(ping, &token);
    }
}

// One round: how many waiting Gs ran during the pair's hand-offs, and
// whether any preemption came meanwhile. One that did moved the pair off
// the P for a cause other than the slice's: a host that held the vCPU for
// a second ends even the raised quantum, and a timer some earlier test
// left behind may come due.
static bool runnext_round(uint64_t *ran, bool *preempted)
{
    ping = chan_make(sizeof(uint64_t), 0);
    pong = chan_make(sizeof(uint64_t), 0);
    pair_done = chan_make(sizeof(uint64_t), 1);
    pair_g[0] = pair_g[1] = 0;
    go(pinger, 0);
    go(ponger, 0);
    bool parked = pair_parked();
    kt_store(&waiters_ran, 0);
    uint64_t p0 = all_preemptions();
    for (int i = 0; i < WAITERS; i++)   // a full ring overflows to the global queue
        go(waiter_g, 0);
    uint64_t start = 0;
    chan_send(ping, &start);            // parks us: the pair runs from runnext
    chan_recv(pair_done, ran);
    *preempted = all_preemptions() != p0;
    kt_wait_count(&waiters_ran, WAITERS, 60000);
    chan_free(ping);
    chan_free(pong);
    chan_free(pair_done);
    return parked;
}

KTEST(race_runnext_handoffs_continue_the_slice)
{
    int orig = gomaxprocs(1);
    uint64_t q = sched_set_quantum_ns(1000000000);
    uint64_t ran = 0;
    bool parked = true, preempted = true;
    for (int round = 0; round < 3 && parked && preempted; round++)
        parked = runnext_round(&ran, &preempted);
    sched_set_quantum_ns(q);
    gomaxprocs(orig);
    KT_ASSERT(parked);
    if (preempted)
        KT_SKIP("a preemption came in each of 3 rounds: the host held the vCPU, or a timer came due");
    if (ran != 0)
        KT_FAIL("%lu of the waiting goroutines ran during %d runnext hand-offs", ran, HANDOFFS);
}

// ---- gosched lets the global queue run -----------------------------------
//
// A G that keeps yielding starved the global queue: 4000 Gs spawned on one
// P (most overflow to the global queue), 80,000 yields later only 3402 had
// run, because the yielder went to its own P's tail and the global queue
// was looked at once per 61 schedules. Go's Gosched puts the yielder on the
// global queue behind them, so one yield lets every one of them run first.

#define YIELD_SPAWN 4000
static uint64_t yield_ran;

static void yield_counted(void *arg)
{
    (void)arg;
    kt_add(&yield_ran, 1);
}

KTEST(race_gosched_yields_to_the_global_queue)
{
    int orig = gomaxprocs(1);
    kt_store(&yield_ran, 0);
    for (int i = 0; i < YIELD_SPAWN; i++)
        go(yield_counted, 0);
    uint64_t yields = 0, preempted = all_preemptions();
    while (kt_load(&yield_ran) < YIELD_SPAWN && yields < 80000) {
        gosched();
        yields++;
    }
    preempted = all_preemptions() - preempted;
    uint64_t ran = kt_load(&yield_ran);
    gomaxprocs(orig);
    printf("ktest: %lu of %d spawned goroutines ran after %lu yields (%lu preemptions meanwhile)\n", ran,
           YIELD_SPAWN, yields, preempted);
    KT_ASSERT_EQ(ran, YIELD_SPAWN);
    // Everything queued before the yield runs before the yielder again. A
    // quantum preemption during the spawning (a slow host makes the loop
    // outlast a time slice) also puts us behind them all: then no yield
    // is needed at all. One of the spawned Gs preempted while the host
    // held its vCPU goes back in the queue behind the yielder, and costs
    // one more yield (seen once: 2 yields, in a proof run at load 3); the
    // starvation this guards against took thousands.
    KT_ASSERT(yields <= 1 + preempted);
}

// ---- the global queue's look survives slices started past it -----------
//
// P.globcheck counts time slices down to the look at the global queue
// first, and was reset only when schedule_m found it at 0. A P at 0 could
// start a slice without passing there: an idle P taken by a spinning M,
// whose schedule() goes straight to schedule_slow (a P retaken from a
// blocking call at 0 and put on the idle list is one). The count went
// below 0, wrapped to 4294967295 (about 1 in 61 retakes), and the P stopped
// looking at the global queue first: a pair of Gs handing it to each
// other starved a G on the global queue for 3 s. Here every idle P is left
// at 0, and Gs are spawned for spinning Ms to steal onto those Ps; no P's
// count may end above the period.

#define GLOB_SPAWN 32
static uint64_t glob_ran;

static void glob_spinner(void *arg)
{
    (void)arg;
    spin_ns(100000);                // long enough for a spinning M to steal it
    kt_add(&glob_ran, 1);
}

KTEST(race_global_look_survives_slices_past_due)
{
    if (num_cpu() < 2)
        KT_SKIP("needs an idle P for a spinning M to take");
    int orig = gomaxprocs(num_cpu());
    uint32_t zeroed = 0;
    int32_t worst = 0;
    for (int round = 0; round < 5; round++) {
        // A P reaches the idle list when its M stops spinning, which takes
        // its vCPU running: on a loaded host, not always by the next round.
        uint64_t end = nanotime() + KT_STALL_NS;    // a stall limit
        while (!SNAPSHOT(sched.npidle) && nanotime() < end)
            gosched();
        spin_lock(&sched.lock);     // the idle list owns its Ps
        for (struct p *pp = sched.pidle; pp; pp = pp->link, zeroed++)
            pp->globcheck = 0;
        spin_unlock(&sched.lock);
        kt_store(&glob_ran, 0);
        for (int i = 0; i < GLOB_SPAWN; i++)
            go(glob_spinner, 0);
        if (!kt_wait_count(&glob_ran, GLOB_SPAWN, KT_STALL_MS)) {
            gomaxprocs(orig);
            KT_FAIL("only %lu of %d goroutines ran", kt_load(&glob_ran), GLOB_SPAWN);
        }
        for (uint32_t i = 0; i < (uint32_t)gomaxprocs(0); i++) {
            // another P's count, read racily: a value that passed the
            // period is not a transient (only a look brings it back)
            if (SNAPSHOT(allp[i]->globcheck) > GLOBAL_CHECK_PERIOD) {
                uint32_t bad = (uint32_t)SNAPSHOT(allp[i]->globcheck);
                gomaxprocs(orig);
                KT_FAIL("P%u's global-queue countdown is %u, above its period %d", i, bad,
                        GLOBAL_CHECK_PERIOD);
            }
            if ((int32_t)SNAPSHOT(allp[i]->globcheck) < worst)
                worst = (int32_t)SNAPSHOT(allp[i]->globcheck);
        }
    }
    gomaxprocs(orig);
    printf("ktest: %u idle Ps set to a due look, lowest countdown seen %d\n", zeroed, worst);
    KT_ASSERT(zeroed > 0);
}

// ---- stop-the-world preempts a lone G on another P ----------------------
//
// gomaxprocs() from one P hung forever while another P ran a call-free
// loop alone: quantum preemption needed other runnable Gs on that P, and
// stop_the_world never asked running Gs to stop (Go's preemptall). Hangs
// before the fix (the runner's timeout ends it).

static uint64_t lone_stop, lone_spins, lone_done;
static struct m *lone_m;

static void lone_hog(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&lone_stop, __ATOMIC_RELAXED)) {
        __atomic_store_n(&lone_m, getm(), __ATOMIC_RELEASE);   // where it runs now: it may move
        __atomic_store_n(&lone_spins, lone_spins + 1, __ATOMIC_RELAXED);
    }
    kt_store(&lone_done, 1);
}

// Sleeps a little at a time until the G that counts spins runs its loop
// on another M than the caller's; false at the stall limit. (Sleeping, not
// yielding: the wake-up is a ready, which wakes an idle core to take
// whichever of the two is queued.)
static bool apart_from(struct m *const *other_m, const uint64_t *spins)
{
    uint64_t end = nanotime() + KT_STALL_NS;        // a stall limit: the host may hold a vCPU long
    while (nanotime() < end) {
        uint64_t s = kt_load(spins);
        sleep_ns(100000);
        struct m *om = __atomic_load_n(other_m, __ATOMIC_ACQUIRE);
        if (om && kt_load(spins) != s && om != my_m())
            return true;
    }
    return false;
}

KTEST(race_stop_the_world_preempts_a_lone_hog)
{
    if (num_cpu() < 2)
        KT_SKIP("needs 2 cores: the hog must be alone on another P");
    int orig = gomaxprocs(2);
    lone_stop = lone_spins = lone_done = 0;
    __atomic_store_n(&lone_m, 0, __ATOMIC_RELAXED);
    go(lone_hog, 0);
    bool apart = apart_from(&lone_m, &lone_spins);
    gomaxprocs(1);                  // stops the world: the hog's P must stop too
    kt_store(&lone_stop, 1);
    bool stopped = kt_wait_count(&lone_done, 1, 60000);
    gomaxprocs(orig);
    KT_ASSERT(apart);
    KT_ASSERT(stopped);
}

// ---- timer_stop waits for a running timer function ----------------------
//
// ticker_stop freed a ticker while another core ran its tick: timers_run
// calls f without the lock, after putting a periodic timer back in its
// heap, and timer_stop returned as soon as it took it out again. Here f
// runs slowly on the timer's P while a G on another core stops the timer:
// f must never see timer_stop returned, during this run or later ones.

struct slow_timer {
    struct timer t;                 // first: f gets the slow_timer
    uint64_t runs, in_f, stop_called, stop_returned, bad, met;
};
static struct slow_timer slow;
static uint64_t stopper_spins;
static struct m *stopper_m;

static void slow_f(struct timer *t, uint64_t now)
{
    (void)now;
    struct slow_timer *s = (struct slow_timer *)t;
    if (kt_load(&s->stop_returned))
        kt_store(&s->bad, 1);       // ran after timer_stop returned
    if (__atomic_fetch_add(&s->runs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    kt_store(&s->in_f, 1);
    uint64_t end = arch_cycles() + arch_ns_to_cycles(200000000);
    while (!kt_load(&s->stop_called) && arch_cycles() < end)
        cpu_relax();
    if (!kt_load(&s->stop_called))
        return;                     // the stopper did not run meanwhile: no verdict
    kt_store(&s->met, 1);
    // timer_stop is under way: it must not return while we run. 100 ms
    // lets the stopper's vCPU be descheduled by the host a while.
    end = arch_cycles() + arch_ns_to_cycles(100000000);
    while (!kt_load(&s->stop_returned) && arch_cycles() < end)
        cpu_relax();
    if (kt_load(&s->stop_returned))
        kt_store(&s->bad, 2);       // timer_stop returned while f ran
}

static void timer_stopper(void *arg)
{
    (void)arg;
    while (!kt_load(&slow.in_f)) {
        __atomic_store_n(&stopper_m, getm(), __ATOMIC_RELEASE);   // where it runs now: it may move
        __atomic_store_n(&stopper_spins, stopper_spins + 1, __ATOMIC_RELAXED);
    }
    kt_store(&slow.stop_called, 1);
    timer_stop(&slow.t);
    kt_store(&slow.stop_returned, 1);
}

// One try: false when it could not tell (the stopper and the timer's
// function did not run at the same time).
static bool timer_stop_try(bool *returned)
{
    memset(&slow, 0, sizeof slow);
    stopper_spins = 0;
    __atomic_store_n(&stopper_m, 0, __ATOMIC_RELAXED);
    go(timer_stopper, 0);
    apart_from(&stopper_m, &stopper_spins);
    slow.t.f = slow_f;
    slow.t.period = arch_ns_to_cycles(100000);
    slow.t.when = arch_cycles() + slow.t.period;
    timer_start(&slow.t);
    *returned = kt_wait_count(&slow.stop_returned, 1, 60000);
    sleep_ns(2000000);              // a stopped timer stays stopped
    if (!*returned)
        timer_stop(&slow.t);
    return kt_load(&slow.met) != 0;
}

KTEST(race_timer_stop_waits_for_a_running_timer)
{
    if (num_cpu() < 2)
        KT_SKIP("needs 2 cores: f and timer_stop must run at once");
    int orig = gomaxprocs(num_cpu());
    bool returned = false, met = false;
    for (int try = 0; try < 5 && !met && !slow.bad; try++)
        met = timer_stop_try(&returned);
    gomaxprocs(orig);
    KT_ASSERT(returned);
    if (slow.bad == 1)
        KT_FAIL("the timer function ran again after timer_stop returned");
    if (slow.bad == 2)
        KT_FAIL("timer_stop returned while the timer function was still running");
    if (!met)
        KT_SKIP("in 5 tries the stopper never ran while the timer function did");
}

// ---- exitsyscall with its P retaken and a preemption pending -------------
//
// exitsyscall gave up the M's P, dropped the preempt count, and only then
// turned interrupts off: an interrupt in between, with a preemption pending
// from inside the call (a quantum or a timer that came due meanwhile), ran
// preempt_m with no P (#PF). Widens window exitsyscall_retaken, and a
// worker on the retaken P sends timer interrupts at the caller's core.

static uint64_t ret_started, ret_exiting, ret_core, ret_done;

static void retaken_worker(void *arg)
{
    (void)arg;
    kt_store(&ret_started, 1);
    while (!kt_load(&ret_exiting))
        cpu_relax();
    uint32_t core = (uint32_t)kt_load(&ret_core);
    for (int i = 0; i < 1000; i++) {
        arch_send_ipi(core, VEC_TIMER);
        spin_ns(20000);
    }
    kt_add(&ret_done, 1);
}

KTEST(race_exitsyscall_retaken_with_a_preemption_pending)
{
    if (num_cpu() < 2)
        KT_SKIP("needs an idle core for sysmon to hand the P to");
    int orig = gomaxprocs(1);
    debug_delay_set("exitsyscall_retaken", 20000);
    ret_started = ret_exiting = ret_done = 0;
    go(retaken_worker, 0);          // queued on our P: sysmon retakes it for an idle core
    entersyscall();
    uint64_t end = nanotime() + KT_STALL_NS;    // sysmon's vCPU may be held: a stall limit
    while (!kt_load(&ret_started) && nanotime() < end)
        cpu_relax();
    bool retaken = kt_load(&ret_started);
    uint64_t f = irq_save();
    preempt_request(PREEMPT_QUANTUM);   // as if the quantum ran out during the call
    irq_restore(f);
    kt_store(&ret_core, (uint64_t)core_id());
    kt_store(&ret_exiting, 1);
    exitsyscall();
    debug_delay_set("exitsyscall_retaken", 0);
    sleep_ns(1000000);
    gomaxprocs(orig);
    // Its 20 ms of interrupts are this test's, not the next one's.
    KT_ASSERT(kt_wait_count(&ret_done, 1, KT_STALL_MS));
    KT_ASSERT(retaken);
}

// ---- exitsyscall takes a P back only as its sole holder --------------------
//
// The M in a blocking call kept its P, and exitsyscall's fast path CASed
// the P from P_SYSCALL back to P_RUNNING without asking whose call that
// was, and without setting pp->m. Once sysmon had retaken the P and handed
// it to M1, and M1's G had entered a call of its own on it, M0's exit
// succeeded: two Ms held the P (M1 still named it), and pp->m named M1, so
// stop-the-world's and sysmon's IPIs for the P's G went to M1's core. As
// in Go, the M now lets go of its P for the call (a P in a call is
// nobody's: an exiting M may take it, as Go's exitsyscallfast does) and
// the exit makes it the P's holder (wirep). Here the first G stays in its
// call until the second, run from the retaken P, is inside a call there;
// then it leaves its call, and its P must be held by its M alone.

static uint64_t aba_inside, aba_out, aba_done;

static void aba_second(void *arg)
{
    (void)arg;
    entersyscall();
    kt_store(&aba_inside, 1);
    uint64_t end = nanotime() + KT_STALL_NS;        // a stall limit: the host may hold a vCPU long
    while (!kt_load(&aba_out) && nanotime() < end)
        cpu_relax();
    exitsyscall();
    kt_add(&aba_done, 1);
}

KTEST(race_exitsyscall_takes_back_a_p_in_another_call)
{
    if (num_cpu() < 2)
        KT_SKIP("needs an idle core for sysmon to hand the P to");
    int orig = gomaxprocs(1);
    aba_inside = aba_out = aba_done = 0;
    go(aba_second, 0);              // queued on our P: sysmon retakes it for an idle core
    entersyscall();
    uint64_t end = nanotime() + KT_STALL_NS;        // a stall limit: the host may hold a vCPU long
    while (!kt_load(&aba_inside) && nanotime() < end)
        cpu_relax();
    bool inside = kt_load(&aba_inside);
    exitsyscall();
    struct m *mp = acquirem();
    struct p *pp = mp->p;
    struct m *holder = SNAPSHOT(pp->m);
    int also = -1;
    for (uint32_t i = 0; i < sched.ncpu; i++)
        if (&allm[i] != mp && SNAPSHOT(allm[i].p) == pp)
            also = (int)i;
    releasem(mp);
    kt_store(&aba_out, 1);
    bool done = kt_wait_count(&aba_done, 1, KT_STALL_MS);
    gomaxprocs(orig);
    KT_ASSERT(inside);
    KT_ASSERT(done);
    if (holder != mp)
        KT_FAIL("P%u's holder is M%d, not M%u, which runs on it", pp->id, holder ? (int)holder->id : -1,
                mp->id);
    if (also >= 0)
        KT_FAIL("M%d holds P%u too, while M%u runs on it", also, pp->id, mp->id);
}

// ---- timer_stop of a periodic timer that is being run --------------------
//
// timers_run took a due periodic timer out of its heap and, under the same
// lock, put it back at its next time before calling its function.
// timer_stop read t->pp NULL in between (without the lock), had nothing to
// remove, waited for the function and returned with the timer back in the
// heap: the ticker ticked on, and ticker_reset's timer_start found it
// queued (assertion t->pp == 0; app=gobench's TickerReset at 8 vCPUs). A
// periodic timer now stays in its heap while it runs. Widens window
// timers_run_taken (before the fix, between the removal and the push);
// the timer runs on another core (an idle P's M runs our P's overdue
// timers) while this G spins.

static struct timer tick_t;
static uint64_t tick_fired;

static void tick_f(struct timer *t, uint64_t now)
{
    (void)t;
    (void)now;
    __atomic_add_fetch(&tick_fired, 1, __ATOMIC_RELAXED);    // a count the test reads
}

KTEST(race_timer_stop_of_a_periodic_timer_in_flight)
{
    if (num_cpu() < 2)
        KT_SKIP("needs 2 cores: timers_run and timer_stop must run at once");
    int orig = gomaxprocs(num_cpu());
    debug_delay_set("timers_run_taken", 100);
    bool queued = false, ticked = false, ran = true;
    for (int i = 0; i < 20 && !queued && !ticked && ran; i++) {
        memset(&tick_t, 0, sizeof tick_t);
        tick_t.f = tick_f;
        tick_t.period = arch_ns_to_cycles(20000);
        tick_t.when = arch_cycles() + tick_t.period;
        uint64_t f0 = kt_load(&tick_fired);
        timer_start(&tick_t);
        uint64_t end = nanotime() + KT_STALL_NS;   // a stall limit: the host may hold the timer's vCPU
        while (kt_load(&tick_fired) < f0 + 3 && nanotime() < end)
            cpu_relax();
        ran = kt_load(&tick_fired) >= f0 + 3;
        timer_stop(&tick_t);
        queued = __atomic_load_n(&tick_t.pp, __ATOMIC_ACQUIRE) != 0;  // pairs with heap_push's release
        uint64_t f1 = kt_load(&tick_fired);
        spin_ns(1000000);
        ticked = kt_load(&tick_fired) != f1;
        if (queued || ticked)
            timer_stop(&tick_t);    // leave nothing behind
    }
    debug_delay_set("timers_run_taken", 0);
    gomaxprocs(orig);
    if (queued)
        KT_FAIL("timer_stop returned with the periodic timer back in its heap");
    if (ticked)
        KT_FAIL("the periodic timer fired after timer_stop returned");
    if (!ran)
        KT_FAIL("the periodic timer did not fire 3 times in %d s", (int)(KT_STALL_NS / 1000000000));
}

// ---- a periodic timer's function never runs on two Ms at once -------------
//
// timers_run leaves a periodic timer in its heap, at its next time, while
// its function runs without the lock. An M that found it due again (a core
// stealing our P's overdue timers while our M was descheduled in the
// function) ran the function a second time at once, and a ticker could
// then deliver a later time before an earlier one (app=soak, 32 vCPUs,
// seed 5005: "ticker: tick 752099806 before the previous 753631293"). The
// function here spins 300 us, fifteen periods, as a descheduled vCPU
// would; meanwhile this G sleeps, so the other cores go idle, watch the
// timer and run our P's overdue timers when it comes due.

static struct timer twice_t;
static uint64_t twice_in, twice_overlaps, twice_fired;

static void twice_f(struct timer *t, uint64_t now)
{
    (void)t;
    (void)now;
    if (__atomic_add_fetch(&twice_in, 1, __ATOMIC_ACQ_REL) > 1)     // acq_rel: the overlap count is the test's
        __atomic_add_fetch(&twice_overlaps, 1, __ATOMIC_RELAXED);  // relaxed: read after timer_stop's wait
    uint64_t end = arch_cycles() + arch_ns_to_cycles(300000);
    while (arch_cycles() < end)
        cpu_relax();
    __atomic_add_fetch(&twice_fired, 1, __ATOMIC_RELAXED);          // relaxed: a count the test reads
    __atomic_sub_fetch(&twice_in, 1, __ATOMIC_ACQ_REL);             // acq_rel: pairs with the add above
}

KTEST(race_periodic_timer_function_never_runs_twice_at_once)
{
    if (num_cpu() < 2)
        KT_SKIP("needs 2 cores: another core must find the timer due while its function runs");
    int orig = gomaxprocs(num_cpu());
    memset(&twice_t, 0, sizeof twice_t);
    twice_overlaps = twice_fired = 0;
    twice_t.f = twice_f;
    twice_t.period = arch_ns_to_cycles(20000);
    preempt_disable();
    twice_t.when = arch_cycles() + twice_t.period;
    timer_start(&twice_t);
    preempt_enable();
    for (int i = 0; i < 10; i++)
        sleep_ns(5000000);
    timer_stop(&twice_t);            // waits for a function still running
    gomaxprocs(orig);
    uint64_t overlaps = kt_load(&twice_overlaps), fired = kt_load(&twice_fired);
    if (overlaps)
        KT_FAIL("the periodic timer's function ran on two cores at once %lu times in %lu runs",
                (unsigned long)overlaps, (unsigned long)fired);
    KT_ASSERT(fired >= 1);
}

// ---- a stale preemption request does not hit the next G ------------------
//
// A request that could not be acted on (interrupts off at releasem) stayed
// pending on the core after its G switched away, and preempted the next G
// at its first interrupt.

static uint64_t victim_done;

static void runnext_taker(void *arg)
{
    (void)arg;
}

static uint64_t victim_preempted;

// The stale request (before the fix) hits the victim at once: its timer
// was re-armed 2 us ahead. Only quantum preemptions count (the stale
// request is one; the quantum is a second): a timer an earlier test left
// behind preempts for timers, and under a loaded host it comes due inside
// the victim's 300 us however short they are.
static void preempt_victim(void *arg)
{
    uint64_t before = (uint64_t)(uintptr_t)arg;
    spin_ns(300000);
    kt_store(&victim_preempted, quantum_preemptions() - before);
    kt_store(&victim_done, 1);
}

KTEST(race_stale_preemption_request_spares_the_next_goroutine)
{
    int orig = gomaxprocs(1);
    // The victim must start a time slice of its own, not continue ours
    // from runnext (ours may be old: we keep it through every runnext
    // wake-up): a G spawned after it takes runnext and pushes it to the
    // ring. And a second-long quantum keeps a real request out.
    uint64_t q = sched_set_quantum_ns(1000000000);
    victim_done = 0;
    uint64_t before = quantum_preemptions();
    go(preempt_victim, (void *)(uintptr_t)before);
    go(runnext_taker, 0);
    preempt_disable();
    irq_disable();
    preempt_request(PREEMPT_QUANTUM);
    preempt_enable();               // interrupts off: cannot act, stays pending
    gosched();                      // the victim runs next on this core
    bool done = kt_wait_count(&victim_done, 1, 60000);
    uint64_t preempted = kt_load(&victim_preempted);
    sched_set_quantum_ns(q);
    gomaxprocs(orig);
    KT_ASSERT(done);
    KT_ASSERT_EQ(preempted, 0);
}

// ---- no false deadlock report while a G leaves a blocking call ----------
//
// exitsyscall stopped counting the G as in a call before it held a P or
// was queued; if the last other M gave up its P in that gap, checkdead
// saw every P idle, nothing queued and nothing in a call, and ended the
// machine with "all goroutines are asleep". Go's checkdead counts running
// Ms. Widens window exitsyscall_leaving; the worker on the retaken P
// leaves inside it, once the G in the call says it is leaving. Before the
// fix the machine exits 255 here.

static uint64_t dl_started, dl_leaving;

static void leaves_in_the_gap(void *arg)
{
    (void)arg;
    kt_store(&dl_started, 1);
    uint64_t end = nanotime() + 5000000000ull;
    while (!kt_load(&dl_leaving) && nanotime() < end)
        cpu_relax();
}

KTEST(race_exitsyscall_is_not_a_deadlock)
{
    if (num_cpu() < 2)
        KT_SKIP("needs an idle core for sysmon to hand the P to");
    int orig = gomaxprocs(1);
    debug_delay_set("exitsyscall_leaving", 20000);
    dl_started = 0;
    dl_leaving = 0;
    go(leaves_in_the_gap, 0);
    entersyscall();
    uint64_t end = nanotime() + KT_STALL_NS;        // a stall limit: the host may hold a vCPU long
    while (!kt_load(&dl_started) && nanotime() < end)
        cpu_relax();
    bool retaken = kt_load(&dl_started);
    kt_store(&dl_leaving, 1);
    exitsyscall();
    debug_delay_set("exitsyscall_leaving", 0);
    gomaxprocs(orig);
    KT_ASSERT(retaken);
}

// ---- no timer interrupt storm while preemption is held off -------------
//
// With the preempt count above zero, a due preemption request re-armed the
// core's timer for the very deadline that raised it, already past, so the
// interrupt fired again at once: 12-28 timer interrupts per ms, as fast as
// the host delivers them. Here a pinned G spins through three quanta with
// a runnable G behind it and a due timer on its P. How many interrupts
// that makes depends on the host (which may even lose some); what the code
// decides does not: while a request is pending, the core's timer must not
// be armed for the deadline that raised it. The test samples its core's
// armed deadline as it spins.

static void nothing_f(struct timer *t, uint64_t now)
{
    (void)t;
    (void)now;
}

static void nothing_g(void *arg)
{
    (void)arg;
}

KTEST(race_no_timer_interrupt_storm_while_pinned)
{
    int orig = gomaxprocs(1);
    static struct timer due;
    memset(&due, 0, sizeof due);
    due.f = nothing_f;
    go(nothing_g, 0);               // runnable behind us: the quantum will be due
    struct m *mp = acquirem();
    struct p *pp = mp->p;
    due.when = arch_cycles() + arch_ns_to_cycles(1000000);
    timer_start(&due);
    uint64_t spin = 3 * kparams.quantum_ns;
    uint64_t t0 = nanotime(), seen = __atomic_load_n(&mp->last_timer_irq, __ATOMIC_RELAXED);
    uint64_t irqs = 0, pending_samples = 0, rearmed = 0, next_ipi = t0 + 2000000;
    uint32_t self = mp->id;
    // Three quanta, and then on until a request has been seen pending a
    // while: a loaded host may deschedule this vCPU for the whole three
    // quanta, leaving a sample or two. Only a lost interrupt reaches the
    // stall limit.
    while (nanotime() - t0 < spin ||
           (pending_samples < 1000 && nanotime() - t0 < KT_STALL_NS)) {
        if (nanotime() > next_ipi) {
            // A timer interrupt every millisecond whatever the host does
            // with the core's own timer (a loaded TCG host can lose one).
            arch_send_ipi(self, VEC_TIMER);
            next_ipi += 1000000;
        }
        uint64_t l = __atomic_load_n(&mp->last_timer_irq, __ATOMIC_RELAXED);
        if (l != seen) {
            seen = l;
            irqs++;
        }
        uint64_t f = irq_save();    // a consistent look at this core's state
        uint32_t pending = preempt_pending_here();
        uint64_t a = mp->armed, now = arch_cycles();
        uint64_t last = __atomic_load_n(&mp->last_timer_irq, __ATOMIC_RELAXED);   // relaxed: this core's own
        if (pending)
            pending_samples++;
        // The storm's mark: armed again, by a timer interrupt that came
        // after it, for a pending request's deadline that has passed (it
        // fires at once, and again). Armed for one still ahead is allowed:
        // arm() leaves an earlier deadline in place rather than write the
        // hardware (preempt.c), and its one interrupt re-arms without it.
        // So is one passed whose interrupt has not come yet (a loaded host
        // delivers it late; once in 147,010 samples here, at load 15).
        if (a && a <= now && last >= a &&
            (((pending & PREEMPT_TIMERS) && a == __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE)) ||
             ((pending & PREEMPT_QUANTUM) && a == mp->tick_when + quantum_cycles)))
            rearmed++;
        irq_restore(f);
    }
    releasem(mp);
    timer_stop(&due);
    gomaxprocs(orig);
    printf("ktest: pinned %lu ms: %lu timer interrupts; armed for a pending request's deadline in %lu of %lu samples\n",
           (nanotime() - t0) / 1000000, irqs, rearmed, pending_samples);
    KT_ASSERT(pending_samples > 0);
    KT_ASSERT_EQ(rearmed, 0);
}

// ---- a sleep too long for 64 bits of TSC never ends early ---------------
//
// sleep_ns added its cycles to now without a bound: a duration whose
// cycles do not fit in 64 bits wrapped around to a deadline in the near
// past or future, so a sleep of some 230 years ended within milliseconds.
// Deadlines now saturate: too far is never. The duration is picked where
// the TSC conversion wraps, if it does (arch_ns_to_cycles may saturate
// itself), else merely far; the sleeper is woken by hand afterwards.

static uint64_t long_woke, long_ns;
static struct g *long_g;

static void long_sleeper(void *arg)
{
    (void)arg;
    __atomic_store_n(&long_g, getg(), __ATOMIC_RELEASE);
    sleep_ns(long_ns);
    kt_store(&long_woke, 1);
}

// A duration near where ns * (cycles per ns) passes 2^64: the first, in
// 20 ms steps, whose cycles wrap to under 20 ms; without a wrap, one well
// past it.
static uint64_t wrapping_ns(void)
{
    uint64_t hz = arch_tsc_hz();
    uint64_t ns0 = UINT64_MAX / hz * 1000000000u + UINT64_MAX % hz * 1000000000u / hz;
    uint64_t small = arch_ns_to_cycles(20000000);
    for (uint64_t ns = ns0 - 2000000000ull; ns < ns0 + 2000000000ull; ns += 20000000)
        if (arch_ns_to_cycles(ns) < small)
            return ns;
    return ns0 + 2000000000ull;
}

// Stops the sleeper's timer (on its stack, found through the heaps) and
// readies it. False when it is not asleep in sleep_ns.
static bool wake_sleeper(struct g *gp)
{
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        struct p *pp = allp[i];
        struct timer *found = 0;
        uint64_t f = timers_lock(pp);
        for (uint32_t k = 0; k < pp->ntimers && !found; k++)
            if (pp->timers[k]->arg == gp)
                found = pp->timers[k];
        timers_unlock(pp, f);
        if (found && timer_stop(found)) {
            goready(gp, false);
            return true;
        }
    }
    return false;
}

KTEST(race_sleep_beyond_64_bits_never_ends)
{
    long_woke = 0;
    long_ns = wrapping_ns();
    __atomic_store_n(&long_g, 0, __ATOMIC_RELAXED);
    go(long_sleeper, 0);
    // Asleep first (the 50 ms below are a sleep's chance to end early,
    // not the time the sleeper takes to start: iso-bios under load once
    // found it not yet parked, and nothing to wake).
    struct g *gp = 0;
    uint64_t give_up = nanotime() + KT_STALL_NS;
    while (!kt_load(&long_woke) && nanotime() < give_up &&
           (!(gp = __atomic_load_n(&long_g, __ATOMIC_ACQUIRE)) ||   // acquire: pairs with the sleeper's release
            __atomic_load_n(&gp->status, __ATOMIC_ACQUIRE) != G_WAITING))   // acquire: a snapshot of its state
        sleep_ns(1000000);
    sleep_ns(50000000);
    // Its timer goes into a heap as it parks: a sleeper whose vCPU the
    // host holds in between is looked for again.
    bool early = false, woken = false;
    while (gp && !woken && !(early = kt_load(&long_woke)) && nanotime() < give_up)
        if (!(woken = wake_sleeper(gp)))
            sleep_ns(1000000);
    woken = woken || early;
    bool done = kt_wait_count(&long_woke, 1, 60000);
    KT_ASSERT(woken && done);
    if (early)
        KT_FAIL("a sleep of %lu ns ended within 50 ms", long_ns);
}

// ---- irq_wait_timeout ----------------------------------------------------------
//
// irq_wait had no timeout: a driver whose device stayed silent waited
// forever (and kept the deadlock report quiet). irq_wait_timeout gives up
// after its time with 0. Here: a silent vector times out, never early, and
// leaves no waiter behind; then a stress where interrupts and timeouts
// come close together, so that each wait ends once, either way.

static uint64_t ext_now(void)
{
    return __atomic_load_n(&sched.nexternal, __ATOMIC_ACQUIRE);
}

KTEST(race_irq_wait_timeout_gives_up_on_a_silent_vector)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    uint64_t ext = ext_now();
    uint64_t t0 = nanotime();
    int n = irq_wait_timeout(IRQ_VEC_TEST, 2000000);
    uint64_t waited = nanotime() - t0;
    KT_ASSERT_EQ(n, 0);
    // nanotime() may come from two cores' TSCs; a VM's may differ a little
    KT_ASSERT(waited + (arch_under_hypervisor() ? 200000 : 0) >= 2000000);
    KT_ASSERT_EQ(irq_nwaiting(IRQ_VEC_TEST), 0);
    KT_ASSERT_EQ(ext_now(), ext);
    KT_ASSERT_EQ(irq_wait_timeout(0x20, 1000), -1);      // not a device vector
}

#define IRQT_ROUNDS 300
static uint64_t irqt_stop, irqt_sent, irqt_done, irqt_lost;

// Each interrupt goes to the sender's own core, and the sender goes on
// only once it has been counted, so that once the sender is done every
// interrupt of this test has landed (one that landed late made the next
// test's silent vector speak). Sent with interrupts off, it is usually
// taken as they come back on; but a timer or preemption interrupt pending
// at that sti comes first (a higher vector) and may preempt the sender,
// which another core then runs on while its interrupt waits for the first
// core's vCPU, held by the host for up to hundreds of milliseconds.
static void irqt_sender(void *arg)
{
    (void)arg;
    while (!kt_load(&irqt_stop) && !kt_load(&irqt_lost)) {
        sleep_ns(30000);
        uint64_t before = irq_count(IRQ_VEC_TEST);
        uint64_t f = irq_save();
        arch_send_ipi(cpu_index(), IRQ_VEC_TEST);
        irq_restore(f);
        kt_add(&irqt_sent, 1);
        uint64_t give_up = nanotime() + KT_STALL_NS;
        while (irq_count(IRQ_VEC_TEST) == before && nanotime() < give_up)
            gosched();
        if (irq_count(IRQ_VEC_TEST) == before)
            kt_store(&irqt_lost, 1);
    }
    kt_store(&irqt_done, 1);
}

KTEST(race_irq_wait_timeout_ends_each_wait_once)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    uint64_t ext = ext_now(), count0 = irq_count(IRQ_VEC_TEST);
    irqt_stop = irqt_sent = irqt_done = irqt_lost = 0;
    go(irqt_sender, 0);
    int timeouts = 0, interrupts = 0, bad = 0;
    for (int i = 0; i < IRQT_ROUNDS; i++) {
        int n = irq_wait_timeout(IRQ_VEC_TEST, 30000);
        if (n == 0)
            timeouts++;
        else if (n > 0)
            interrupts++;
        else
            bad++;
    }
    kt_store(&irqt_stop, 1);
    KT_ASSERT(kt_wait_count(&irqt_done, 1, KT_STALL_MS));    // its last interrupt has landed
    uint32_t left = irq_take_pending(IRQ_VEC_TEST);
    uint64_t sent = kt_load(&irqt_sent), landed = irq_count(IRQ_VEC_TEST) - count0;
    printf("ktest: irq_wait_timeout: %d timeouts, %d interrupts in %d waits (%lu sent, %lu landed, %u left "
           "pending)\n", timeouts, interrupts, IRQT_ROUNDS, sent, landed, left);
    if (kt_load(&irqt_lost))
        KT_FAIL("interrupt %lu sent to the sender's own core never landed (%d s)", sent,
                (int)(KT_STALL_NS / 1000000000));
    KT_ASSERT_EQ(landed, sent);     // each landed once: none merged into another
    KT_ASSERT_EQ(bad, 0);
    KT_ASSERT_EQ(irq_nwaiting(IRQ_VEC_TEST), 0);
    KT_ASSERT_EQ(ext_now(), ext);
}

// ---- a fatal dump's backtrace stops at an unmapped frame ---------------
//
// The frame-pointer walk trusted any aligned, rising address below 2^47,
// so a corrupt chain faulted inside the dump. Here the chain leads to an
// unmapped address (and, second, into a goroutine stack's guard page).

static uint64_t fake_frames[2][2] __attribute__((aligned(16)));

KTEST(race_backtrace_stops_at_an_unmapped_frame)
{
    fake_frames[0][0] = 0x00007ff000000000ull;      // unmapped, aligned, above
    fake_frames[0][1] = (uint64_t)(uintptr_t)spin_ns + 1;
    arch_backtrace((uint64_t)(uintptr_t)fake_frames[0], 8);
    struct m *mp = my_m();
    struct g *gp = mp->curg;
    fake_frames[1][0] = gp->stack_lo - 64;          // the guard page below this G's stack
    fake_frames[1][1] = fake_frames[0][1];
    arch_backtrace((uint64_t)(uintptr_t)fake_frames[1], 8);
}

// ---- a stalled spinner does not keep idle Ps idle ---------------------------
//
// While one M is counted spinning, wakep starts no other (Go's rule), so a
// spinner whose core stopped running kept idle Ps idle beside queued Gs for
// as long as it stopped: at 1024 vCPUs on a 2-CPU host, 82 Ps beside 81 Gs
// for over a minute. sysmon starts a spinner when no P has left the idle
// list for 10 ms beside it. Widens window spinner_look (one core but core
// 0, sysmon's, held there for the stall limit or until the test ends) and
// needs it: a normal build skips. Our G holds its P (pinned) and queues
// workers on it; each must run on a third P while the spinner is held,
// within half the stall limit (without sysmon's spinner some other M took
// the third P and spun after about a minute; with it, 15-60 ms at 3 and 4
// vCPUs).

#define STALLED_WORKERS 2
static uint64_t stall_ran, stall_baits_ran, stall_elsewhere, stall_our_p, stall_queued, stall_wait_max;

static void stall_worker(void *later)
{
    struct m *mp = acquirem();
    uint32_t holder = __atomic_load_n(&debug_delay_holder[DELAY_spinner_look], __ATOMIC_RELAXED);  // relaxed: a state
    bool elsewhere = later && mp->p->id != kt_load(&stall_our_p) && holder != 0 && holder != (uint32_t)core_id() + 1;
    releasem(mp);
    if (later)
        kt_raise(&stall_wait_max, nanotime() - kt_load(&stall_queued));
    kt_add(&stall_elsewhere, elsewhere);
    kt_add(later ? &stall_ran : &stall_baits_ran, 1);
}

static uint32_t spinner_holder(void)
{
    return __atomic_load_n(&debug_delay_holder[DELAY_spinner_look], __ATOMIC_RELAXED);   // relaxed: a state
}

// Our G pinned, with npidle Ps idle and no M spinning: widens
// spinner_look and sends baits until a spinner is held there (by the
// stall limit). A bait's wakep starts the spinner that is held, unless
// that is core 0's (never held): then it runs the bait and hands the
// baton on, and with nobody spinning and nothing held, another bait is
// sent. Returns how many baits; *quiet: the idle Ps were seen first.
static uint64_t hold_a_spinner(uint32_t npidle, bool *quiet)
{
    uint64_t end = nanotime() + KT_STALL_NS;
    while ((SNAPSHOT(sched.npidle) != npidle || SNAPSHOT(sched.nmspinning)) && nanotime() < end)
        cpu_relax();
    *quiet = nanotime() < end;
    end = nanotime() + KT_STALL_NS;
    debug_delay_set("spinner_look", (uint32_t)(KT_STALL_NS / 1000));
    uint64_t baits = 0;
    while (!spinner_holder() && nanotime() < end) {
        if (kt_load(&stall_baits_ran) == baits && !SNAPSHOT(sched.nmspinning) && !spinner_holder()) {
            go(stall_worker, 0);
            baits++;
        }
        cpu_relax();
    }
    return baits;
}

KTEST(race_a_stalled_spinner_gets_another_beside_it)
{
    if (num_cpu() < 3)
        KT_SKIP("needs our P, the held spinner's and one more");
    if (!debug_delay_set("spinner_look", 0))
        KT_SKIP("needs a debug build (delay point spinner_look)");
    int orig = gomaxprocs(3);
    stall_ran = stall_baits_ran = stall_elsewhere = stall_wait_max = 0;
    uint64_t backstops = kt_load(&sched_spinner_backstops);
    struct m *mp = acquirem();      // our P runs nothing else until the end
    kt_store(&stall_our_p, mp->p->id);
    bool quiet;
    uint64_t baits = hold_a_spinner(2, &quiet), end = nanotime() + KT_STALL_NS;
    // The last bait may go to an M that held the third P meanwhile and
    // spins beside the held one (fewer than half the busy Ps spin): the
    // rest are queued only once that P and an M are idle again.
    while ((SNAPSHOT(sched.npidle) != 1 || !SNAPSHOT(sched.nmidle)) && nanotime() < end)
        cpu_relax();
    bool held = spinner_holder();
    kt_store(&stall_queued, nanotime());
    for (int i = 0; i < STALLED_WORKERS; i++)
        go(stall_worker, &stall_ran);   // wakep: a spinner is counted, nobody else is started
    end = nanotime() + KT_STALL_NS;
    while (kt_load(&stall_ran) < STALLED_WORKERS && nanotime() < end)
        cpu_relax();
    debug_delay_set("spinner_look", 0);
    releasem(mp);
    KT_ASSERT(kt_wait_count(&stall_ran, STALLED_WORKERS, KT_STALL_MS));
    KT_ASSERT(kt_wait_count(&stall_baits_ran, baits, KT_STALL_MS));
    gomaxprocs(orig);
    uint64_t started = kt_load(&sched_spinner_backstops) - backstops;
    uint64_t later = kt_load(&stall_elsewhere);
    uint64_t waited = kt_load(&stall_wait_max);
    printf("ktest: stalled spinner: %lu of %d workers queued while a P idled ran on it while the "
           "spinner was held, in %lu ms at most; %lu spinner(s) started beside it\n", later,
           STALLED_WORKERS, waited / 1000000, started);
    KT_ASSERT(quiet);
    KT_ASSERT(held);
    KT_ASSERT_EQ(later, STALLED_WORKERS);
    KT_ASSERT(waited < KT_STALL_NS / 2);
}

// ---- ... and the spinner it starts relays to the next ---------------------
//
// One spinner started beside the stalled one took one idle P; the rest
// stayed idle until sysmon's next look that found no P taken for 10 ms,
// one P a look (at 1024 vCPUs, 170 Ps idle beside 170 Gs for a minute
// while sysmon's own core was seldom run). The started spinner is a
// relay: finding work, it starts the next while Ps idle beside queued Gs.
// Here the backstop waits 10 s, so one look starts one relay, and every
// idle P must take a loop before the next look could: without relays the
// second P waited for that look. Needs 4 cores (ours, the held spinner's,
// two idle).

#define RELAY_BACKSTOP_NS 10000000000ull
static uint64_t relay_stop, relay_done;

static void relay_loop(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&relay_stop, __ATOMIC_RELAXED))     // relaxed: a flag; call-free
        ;
    kt_add(&relay_done, 1);
}

KTEST(race_relays_take_every_idle_p_beside_a_stalled_spinner)
{
    if (num_cpu() < 4)
        KT_SKIP("needs our P, the held spinner's and two idle");
    if (!debug_delay_set("spinner_look", 0))
        KT_SKIP("needs a debug build (delay point spinner_look)");
    uint32_t n = (uint32_t)num_cpu(), loops = n - 2;
    int orig = gomaxprocs((int)n);
    stall_baits_ran = relay_stop = relay_done = 0;
    struct m *mp = acquirem();
    kt_store(&stall_our_p, mp->p->id);
    bool quiet;
    // The last bait, queued on our P beside the held spinner, is run by a
    // backstop spinner (10 ms) before the loops are queued.
    uint64_t baits = hold_a_spinner(n - 1, &quiet), end = nanotime() + KT_STALL_NS;
    while ((SNAPSHOT(sched.npidle) != loops || SNAPSHOT(sched.nmidle) < loops || SNAPSHOT(sched.runq_size) ||
            !runqempty(&mp->p->runq)) && nanotime() < end)
        cpu_relax();
    bool held = spinner_holder();
    uint64_t stall_ns = __atomic_exchange_n(&sched_backstop_stall_ns, RELAY_BACKSTOP_NS, __ATOMIC_RELAXED);   // a setting
    uint64_t backstops = kt_load(&sched_spinner_backstops), relays = kt_load(&sched_spinner_relays);
    for (uint32_t i = 0; i < loops; i++)
        go(relay_loop, 0);
    end = nanotime() + KT_STALL_NS;
    while (SNAPSHOT(sched.npidle) && nanotime() < end)
        cpu_relax();
    bool all_busy = !SNAPSHOT(sched.npidle);
    uint64_t looks = kt_load(&sched_spinner_backstops) - backstops;
    uint64_t relayed = kt_load(&sched_spinner_relays) - relays;
    __atomic_store_n(&relay_stop, 1, __ATOMIC_RELAXED);        // a flag
    debug_delay_set("spinner_look", 0);
    releasem(mp);
    KT_ASSERT(kt_wait_count(&relay_done, loops, KT_STALL_MS));
    KT_ASSERT(kt_wait_count(&stall_baits_ran, baits, KT_STALL_MS));
    __atomic_store_n(&sched_backstop_stall_ns, stall_ns, __ATOMIC_RELAXED);   // a setting
    gomaxprocs(orig);
    printf("ktest: relays: %s of %u idle P(s) beside a held spinner took a loop, after %lu backstop "
           "spinner(s) and %lu relay(s)\n", all_busy ? "all" : "not all", loops, looks, relayed);
    KT_ASSERT(quiet);
    KT_ASSERT(held);
    KT_ASSERT(all_busy);
    KT_ASSERT_EQ(looks, 1);
    KT_ASSERT(relayed >= 1);
}
