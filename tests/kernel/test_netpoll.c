// SPDX-License-Identifier: MIT
// The netpoller (kernel/netpoll.c) on its own, without a network stack:
// poll descriptors readied, timed out and closed by hand, and a poll
// function of the test's own registered as the stack's would be.
#include "kernel/ktest.h"
#include "tests/kernel/go_test.h"
#include "kernel/netpoll.h"
#include "kernel/sched.h"
#include "arch/arch.h"

static void ready_now(struct polldesc *pd, int mode)
{
    struct netpoll_list l = { 0 };
    netpoll_ready(&l, pd, mode);
    netpoll_ready_list(&l, false);
}

// Readiness that comes before the wait is kept (PD_READY) and consumed.
KTEST(netpoll_ready_before_wait_is_kept)
{
    struct polldesc pd;
    netpoll_open(&pd);
    ready_now(&pd, NETPOLL_READ);
    KT_ASSERT_EQ(netpoll_wait(&pd, NETPOLL_READ), NETPOLL_OK);
    KT_ASSERT_EQ(pd.rg, 0);
    KT_ASSERT_EQ(pd.wg, 0);
    netpoll_unblock(&pd);
    netpoll_close(&pd);
}

struct waiter {
    struct polldesc *pd;
    int mode;
    uint64_t parked, result, done;
};

static void wait_fn(void *arg)
{
    struct waiter *w = arg;
    kt_store(&w->parked, 1);
    kt_store(&w->result, (uint64_t)netpoll_wait(w->pd, w->mode));
    kt_store(&w->done, 1);
}

// Until w's G is parked on the descriptor (its semaphore holds a G).
static bool wait_parked(struct waiter *w)
{
    uintptr_t *sem = w->mode == NETPOLL_READ ? &w->pd->rg : &w->pd->wg;
    uint64_t seen = 0;
    for (uint64_t spins = 0; spins < 1000000000ull; spins++) {
        if (__atomic_load_n(sem, __ATOMIC_ACQUIRE) > PD_WAIT)  // pairs with block_commit's release
            return true;
        if (++seen % 64 == 0)
            gosched();
    }
    return false;
}

// A parked reader wakes on readiness; the writer's side is untouched; the
// waiter is counted while parked and not after.
KTEST(netpoll_wait_parks_until_ready)
{
    struct polldesc pd;
    netpoll_open(&pd);
    struct waiter w = { .pd = &pd, .mode = NETPOLL_READ };
    uint32_t before = netpoll_waiters();
    go(wait_fn, &w);
    KT_ASSERT(wait_parked(&w));
    KT_ASSERT_EQ(netpoll_waiters(), before + 1);
    KT_ASSERT_EQ(kt_load(&w.done), 0);
    ready_now(&pd, NETPOLL_WRITE);              // the other direction: no wake
    KT_ASSERT_EQ(kt_load(&w.done), 0);
    ready_now(&pd, NETPOLL_READ);
    KT_ASSERT(kt_wait_count(&w.done, 1, KT_STALL_MS));
    KT_ASSERT_EQ(kt_load(&w.result), NETPOLL_OK);
    KT_ASSERT_EQ(netpoll_waiters(), before);
    netpoll_unblock(&pd);
    netpoll_close(&pd);
}

// A deadline expires (never early) and wakes only its own direction; a
// later wait fails at once until the deadline is cleared.
KTEST(netpoll_deadline_expires_its_direction)
{
    struct polldesc pd;
    netpoll_open(&pd);
    uint64_t t0 = nanotime();
    netpoll_set_deadline(&pd, t0 + 2000000, NETPOLL_READ);
    KT_ASSERT_EQ(netpoll_wait(&pd, NETPOLL_READ), NETPOLL_ERR_TIMEOUT);
    KT_ASSERT(nanotime() + ktest_tsc_skew_ns() >= t0 + 2000000);
    KT_ASSERT_EQ(netpoll_reset(&pd, NETPOLL_READ), NETPOLL_ERR_TIMEOUT);
    KT_ASSERT_EQ(netpoll_reset(&pd, NETPOLL_WRITE), NETPOLL_OK);
    netpoll_set_deadline(&pd, 0, NETPOLL_READ);
    KT_ASSERT_EQ(netpoll_reset(&pd, NETPOLL_READ), NETPOLL_OK);
    netpoll_unblock(&pd);
    netpoll_close(&pd);
}

// A deadline moved later before it fires does not fire at the old time:
// the waiter wakes no earlier than the new one.
KTEST(netpoll_deadline_moved_later_is_not_early)
{
    struct polldesc pd;
    netpoll_open(&pd);
    uint64_t t0 = nanotime();
    netpoll_set_deadline(&pd, t0 + 1000000, NETPOLL_WRITE);
    netpoll_set_deadline(&pd, t0 + 30000000, NETPOLL_WRITE);
    KT_ASSERT_EQ(netpoll_wait(&pd, NETPOLL_WRITE), NETPOLL_ERR_TIMEOUT);
    KT_ASSERT(nanotime() + ktest_tsc_skew_ns() >= t0 + 30000000);
    netpoll_unblock(&pd);
    netpoll_close(&pd);
}

// A deadline set in the past wakes a parked waiter at once.
KTEST(netpoll_deadline_in_the_past_wakes_the_waiter)
{
    struct polldesc pd;
    netpoll_open(&pd);
    struct waiter w = { .pd = &pd, .mode = NETPOLL_WRITE };
    go(wait_fn, &w);
    KT_ASSERT(wait_parked(&w));
    netpoll_set_deadline(&pd, 1, NETPOLL_READ + NETPOLL_WRITE);
    KT_ASSERT(kt_wait_count(&w.done, 1, KT_STALL_MS));
    KT_ASSERT_EQ(kt_load(&w.result), NETPOLL_ERR_TIMEOUT);
    netpoll_unblock(&pd);
    netpoll_close(&pd);
}

// Closing wakes every goroutine blocked on the descriptor, and every later
// wait fails.
KTEST(netpoll_unblock_wakes_reader_and_writer)
{
    struct polldesc pd;
    netpoll_open(&pd);
    struct waiter r = { .pd = &pd, .mode = NETPOLL_READ }, w = { .pd = &pd, .mode = NETPOLL_WRITE };
    go(wait_fn, &r);
    go(wait_fn, &w);
    KT_ASSERT(wait_parked(&r));
    KT_ASSERT(wait_parked(&w));
    netpoll_unblock(&pd);
    KT_ASSERT(kt_wait_count(&r.done, 1, KT_STALL_MS));
    KT_ASSERT(kt_wait_count(&w.done, 1, KT_STALL_MS));
    KT_ASSERT_EQ(kt_load(&r.result), NETPOLL_ERR_CLOSING);
    KT_ASSERT_EQ(kt_load(&w.result), NETPOLL_ERR_CLOSING);
    KT_ASSERT_EQ(netpoll_wait(&pd, NETPOLL_READ), NETPOLL_ERR_CLOSING);
    netpoll_close(&pd);
}

// Readiness racing the park, from another core, round after round: every
// round's wait returns (no readiness is lost between the waiter's look and
// its park), and each readiness wakes at most one wait.
struct pingpong {
    struct polldesc pd;
    uint64_t rounds, waited, readied, stop;
};

static void pp_readier(void *arg)
{
    struct pingpong *p = arg;
    while (!kt_load(&p->stop)) {
        if (kt_load(&p->readied) > kt_load(&p->waited)) {
            gosched();
            continue;
        }
        kt_add(&p->readied, 1);         // counted first: the wait it ends may see it at once
        ready_now(&p->pd, NETPOLL_READ);
    }
}

KTEST(netpoll_ready_racing_the_park_is_never_lost)
{
    static struct pingpong p;
    p = (struct pingpong){ .rounds = 20000 };
    netpoll_open(&p.pd);
    go(pp_readier, &p);
    for (uint64_t i = 0; i < p.rounds; i++) {
        KT_ASSERT_EQ(netpoll_wait(&p.pd, NETPOLL_READ), NETPOLL_OK);
        // Each wait consumed one readiness: never more waits than readies.
        KT_ASSERT(kt_load(&p.readied) >= i + 1);
        kt_add(&p.waited, 1);
    }
    kt_store(&p.stop, 1);
    KT_ASSERT(kt_load(&p.readied) >= p.rounds);
    netpoll_unblock(&p.pd);
    gosched();
    netpoll_close(&p.pd);
}

// ---- the poll ------------------------------------------------------------------

// A stand-in for the stack, registered beside it: its poll readies one
// descriptor once a "device" (an IPI to a vector of the test's, no device
// uses it) has said so.
#define TEST_NET_VECTOR (IRQ_VEC_SOFT_FIRST + 1)

static struct {
    struct polldesc pd;
    uint32_t frames;            // atomic: set by the interrupt, taken by the poll
    uint64_t polls;             // polls that found the frame
    uint64_t irq_tsc, poll_tsc, run_tsc;    // the interrupt; the poll that found it; the waiter running
    uint64_t stop, hogs_started, hogs_done, stalled, idle_at_irq, idle_done;
    uint64_t round_start, sent;         // cputicks: the round's start, the send
    uint64_t settled;                   // every P spun for two time slices before the send
    struct kt_busy_round round;         // the other work: the netpoller's
    uint64_t spins[MAX_CPUS];
} dev;

static bool test_poll(struct netpoll_list *ready)
{
    if (!__atomic_load_n(&dev.frames, __ATOMIC_RELAXED) ||          // a hint; the exchange decides
        !__atomic_exchange_n(&dev.frames, 0, __ATOMIC_ACQUIRE))     // pairs with test_irq's release
        return true;
    kt_add(&dev.polls, 1);
    kt_store(&dev.poll_tsc, arch_cycles());
    netpoll_ready(ready, &dev.pd, NETPOLL_READ);
    return true;
}

// Interrupt context: a NIC's ready function (drivers/net/netdev.h).
static void test_irq(uint8_t vector)
{
    (void)vector;
    kt_store(&dev.irq_tsc, arch_cycles());
    __atomic_store_n(&dev.frames, 1, __ATOMIC_RELEASE);             // pairs with test_poll's acquire
    netpoll_wake();
}

static void test_net_setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    netpoll_open(&dev.pd);
    arch_set_irq_handler(TEST_NET_VECTOR, test_irq);
    netpoll_register(test_poll);
}

static void net_waiter(void *arg)
{
    chan_t *c = arg;
    int r = netpoll_wait(&dev.pd, NETPOLL_READ);
    kt_store(&dev.run_tsc, arch_cycles());
    kt_store(&dev.stop, 1);
    chan_send(c, &r);
}

// A call-free loop until the waiter has run. The sender (arg != NULL)
// first waits until every P has run a loop for two time slices (a slice's
// check counts from the first timer interrupt that sees it), then sends
// the "packet" to its own core. The clock is read every 2^20 rounds only,
// to give up at the stall limit.
static void hog(void *arg)
{
    bool sender = arg != 0;
    uint64_t n = 0;
    kt_busy_round_moved(&dev.round);
    kt_add(&dev.hogs_started, 1);
    if (sender) {
        uint64_t settle = 2 * sched_quantum_ns() * cputicks_hz() / 1000000000, since = 0;
        while (!kt_busy_round_stalled(&dev.round)) {
            if (!kt_busy_round_look(&dev.round, netpoll_pending()) || kt_load(&dev.hogs_started) < (uint64_t)gomaxprocs(0))
                since = 0;
            else if (!since)
                since = cputicks();
            else if (cputicks() - since >= settle) {
                kt_store(&dev.settled, 1);
                break;
            }
        }
        kt_busy_round_moved(&dev.round);
        kt_store(&dev.sent, cputicks());
        arch_send_ipi((uint32_t)core_id(), TEST_NET_VECTOR);
    }
    while (!__atomic_load_n(&dev.stop, __ATOMIC_RELAXED))          // relaxed: the loop makes no call; kt_load after
        if (!(++n & 0xFFFFF) && kt_busy_round_stalled(&dev.round)) {
            kt_store(&dev.stalled, 1);
            kt_store(&dev.stop, 1);
        }
    kt_add(&dev.hogs_done, 1);
}

// A "packet" comes while every P runs a loop that makes no call: no P is
// idle to poll and none stops to look. The time slice check counts the
// netpoller's pending work (others_runnable), so a slice ends for it and
// the preemption polls before its G is queued; sysmon's poll is the
// backstop. The delay from the interrupt is printed, and asserted within
// two time slices where guest time is exact (bare metal, -icount: the
// sysmon-icount runs). Every loop runs until the readied G has run.
#define PACKET_ROUNDS 3
KTEST(netpoll_packet_reaches_a_goroutine_while_every_p_spins)
{
    test_net_setup();
    int procs = gomaxprocs(0);
    uint64_t worst = 0, quantum = sched_quantum_ns();
    for (int round = 0, rounds = kt_every_p_busy_rounds(PACKET_ROUNDS); round < rounds; round++) {
        dev.stop = dev.hogs_done = dev.hogs_started = dev.polls = dev.stalled = dev.settled = 0;
        dev.round_start = cputicks();
        kt_busy_round_begin(&dev.round);
        chan_t *c = chan_make(sizeof(int), 1);
        go(net_waiter, c);
        struct waiter probe = { .pd = &dev.pd, .mode = NETPOLL_READ };
        KT_ASSERT(wait_parked(&probe));
        for (int i = 0; i < procs; i++)
            go(hog, (void *)(uintptr_t)(i == 0));
        int r = -1;
        bool got;                   // parks: the last P goes to a hog
        while (!(got = go_recv_within(c, &r, KT_STALL_NS, 0)) && !kt_busy_round_stalled(&dev.round))
            ;
        kt_store(&dev.stop, 1);
        KT_ASSERT(kt_wait_count(&dev.hogs_done, (uint64_t)procs, KT_STALL_MS));
        chan_free(c);
        if (!kt_load(&dev.settled))
            KT_FAIL("round %d: %lu of %d loops started; never every P in one for two time slices "
                    "(the sender's last look that found any, %lu s before: %lu P(s) idle, %lu G(s) in the "
                    "global queue, %lu P(s) with Gs queued, netpoller work %s)", round,
                    kt_load(&dev.hogs_started), procs, kt_busy_round_seen_s(&dev.round),
                    kt_load(&dev.round.seen_idle), kt_load(&dev.round.seen_global),
                    kt_load(&dev.round.seen_queued), kt_load(&dev.round.seen_other) ? "pending" : "none");
        if (!got || kt_load(&dev.stalled))
            KT_FAIL("round %d: the readied goroutine did not run while %d P(s) spun (polls %lu)", round,
                    procs, kt_load(&dev.polls));
        KT_ASSERT_EQ(r, NETPOLL_OK);
        KT_ASSERT_EQ(kt_load(&dev.polls), 1);
        uint64_t late = arch_cycles_to_ns(kt_load(&dev.run_tsc) - kt_load(&dev.irq_tsc));
        if (late > worst)
            worst = late;
        printf("netpoll: every P spinning after %lu ms; "
               "interrupt to poll %lu us, poll to run %lu us\n",
               (kt_load(&dev.sent) - dev.round_start) * 1000 / cputicks_hz(),
               arch_cycles_to_ns(kt_load(&dev.poll_tsc) - kt_load(&dev.irq_tsc)) / 1000,
               arch_cycles_to_ns(kt_load(&dev.run_tsc) - kt_load(&dev.poll_tsc)) / 1000);
    }
    printf("ktest: packet-readied G beside %d spinning P(s): longest wait %lu us = %lu.%02lu time slices\n",
           procs, worst / 1000, worst / quantum, worst % quantum * 100 / quantum);
    KT_GUEST_BOUND("packet-readied G's wait while every P spins, longest", worst, 2 * quantum);
}

// ---- an idle machine -----------------------------------------------------------

// A timer's function (g0, interrupts off): the "device" interrupts now,
// while the test's goroutine is parked too. Notes how many Ps were idle.
static void packet_later(struct timer *t, uint64_t now)
{
    (void)t;
    (void)now;
    kt_store(&dev.idle_at_irq, __atomic_load_n(&sched.npidle, __ATOMIC_ACQUIRE));   // pairs with pidleput's seq-cst add
    arch_send_ipi((uint32_t)(num_cpu() - 1), TEST_NET_VECTOR);
}

// Go's netpoll(delay): every goroutine is parked (the waiter on its
// descriptor, this one on a channel) and every core halts until its next
// timer; the timer's "packet" then wakes a halted core, whose M polls and
// runs the waiter. How many Ps were idle when the packet came is printed:
// the timer's own P is not, and an idle M that watched the same deadline
// may hold one briefly (proc.c's take_p_for_timers).
KTEST(netpoll_packet_wakes_an_idle_machine)
{
    test_net_setup();
    dev.stop = dev.polls = dev.idle_at_irq = 0;
    chan_t *c = chan_make(sizeof(int), 1);
    go(net_waiter, c);
    struct waiter probe = { .pd = &dev.pd, .mode = NETPOLL_READ };
    KT_ASSERT(wait_parked(&probe));
    static struct timer t;
    t = (struct timer){ .f = packet_later, .when = arch_cycles() + arch_ns_to_cycles(5000000) };
    timer_start(&t);
    int r = -1;
    bool got = go_recv_within(c, &r, KT_STALL_NS, 0);
    KT_ASSERT(got);
    KT_ASSERT_EQ(r, NETPOLL_OK);
    KT_ASSERT_EQ(kt_load(&dev.polls), 1);
    printf("netpoll: %lu of %d Ps idle when the packet came\n", kt_load(&dev.idle_at_irq), gomaxprocs(0));
    chan_free(c);
}

// Goroutines parked on descriptors hold no core: with ten thousand of
// them parked (Go's "ten thousand idle connections"), every P but this
// goroutine's goes idle; then each is readied once and returns once.
#define IDLE_WAITERS 10000

static void idle_waiter(void *arg)
{
    struct waiter *w = arg;
    kt_store(&w->result, (uint64_t)netpoll_wait(w->pd, w->mode));
    kt_add(&dev.idle_done, 1);
}

KTEST(netpoll_parked_goroutines_hold_no_core)
{
    uint32_t before = netpoll_waiters();
    struct polldesc *pds = malloc(IDLE_WAITERS * sizeof *pds);
    struct waiter *ws = malloc(IDLE_WAITERS * sizeof *ws);
    KT_ASSERT(pds && ws);
    dev.idle_done = 0;
    for (int i = 0; i < IDLE_WAITERS; i++) {
        netpoll_open(&pds[i]);
        ws[i] = (struct waiter){ .pd = &pds[i], .mode = i % 2 ? NETPOLL_WRITE : NETPOLL_READ };
        go(idle_waiter, &ws[i]);
    }
    for (int i = 0; i < IDLE_WAITERS; i++)
        KT_ASSERT(wait_parked(&ws[i]));
    KT_ASSERT_EQ(netpoll_waiters(), before + IDLE_WAITERS);
    // Every other P gives up once it finds nothing: a parked G is on no
    // queue, and no M waits for it.
    // Looked at up to the stall bound (a vCPU the host does not run for a
    // while goes idle late), with this goroutine keeping its P: one that
    // slept between looks idled its P too, and each wake-up took an idle
    // P for the timer and started a spinner that held the other P just
    // when it looked (icount-smp2 saw none idle for 60 s, every look).
    uint32_t others = (uint32_t)gomaxprocs(0) - 1, idle = 0;
    for (uint64_t start = nanotime(); idle != others && nanotime() - start < KT_STALL_NS;) {
        cpu_relax();
        idle = __atomic_load_n(&sched.npidle, __ATOMIC_ACQUIRE);     // pairs with pidleput's seq-cst add
    }
    KT_ASSERT_EQ(idle, others);
    KT_ASSERT_EQ(kt_load(&dev.idle_done), 0);
    for (int i = 0; i < IDLE_WAITERS; i++)
        ready_now(&pds[i], ws[i].mode);
    KT_ASSERT(kt_wait_count(&dev.idle_done, IDLE_WAITERS, KT_STALL_MS));
    KT_ASSERT_EQ(netpoll_waiters(), before);
    for (int i = 0; i < IDLE_WAITERS; i++) {
        KT_ASSERT_EQ(ws[i].result, NETPOLL_OK);
        netpoll_unblock(&pds[i]);
        netpoll_close(&pds[i]);
    }
    free(pds);
    free(ws);
}
