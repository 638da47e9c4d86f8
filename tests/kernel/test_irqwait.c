// SPDX-License-Identifier: MIT
// irq_wait: a goroutine parked on a vector is readied by that vector's
// interrupt. IPIs on IRQ_VEC_TEST stand in for a device; the PIT's
// channel 0 through the IOAPIC is a real one.
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/irqwait.h"
#include "kernel/netpoll.h"
#include "drivers/ioapic.h"
#include "arch/pit.h"

#define SEC 1000000000ull
// How long a wait below lasts before it names what never came: only a
// lost interrupt or wake-up reaches it, never a descheduled vCPU.
#define STALL KT_STALL_NS

// Waiting loops sleep rather than yield: a G that only yields stays on its
// P's local queue, and a P with local work does not poll the netpoller,
// which holds the Gs that interrupts readied, so a yielding main G would
// starve the very waiter it waits for on one core.
static void nap(void) { sleep_ns(20000); }

// Yields until *p >= v or timeout_ns pass; false on timeout.
static bool wait_until(const uint64_t *p, uint64_t v, uint64_t timeout_ns)
{
    uint64_t end = nanotime() + timeout_ns;
    while (kt_load(p) < v)
        if (nanotime() > end)
            return false;
        else
            nap();
    return true;
}

static bool wait_waiters(uint8_t vec, uint32_t n)
{
    uint64_t end = nanotime() + STALL;
    while (irq_nwaiting(vec) < n)
        if (nanotime() > end)
            return false;
        else
            nap();
    return true;
}

// Some other core than the caller's when there is one: the interrupt then
// readies a G parked by another core.
static uint32_t other_core(void)
{
    return (uint32_t)(core_id() + 1) % (uint32_t)num_cpu();
}

// Sends one IPI on vec and waits until it has been delivered, so that
// back-to-back sends are never merged in a local APIC's IRR.
static bool send_delivered(uint8_t vec, uint32_t cpu)
{
    uint64_t before = irq_count(vec);
    arch_send_ipi(cpu, vec);
    uint64_t end = nanotime() + STALL;
    while (irq_count(vec) == before)
        if (nanotime() > end)
            return false;
        else
            nap();
    return true;
}

// Goroutines waiting on other vectors count in nexternal too: the
// console's readers, when the shell runs these tests.
static uint32_t others_waiting(void)
{
    uint32_t n = 0;
    for (int v = IRQ_VEC_BASE; v <= IRQ_VEC_LAST; v++)
        if (v != IRQ_VEC_TEST)
            n += irq_nwaiting((uint8_t)v);
    return n;
}

static bool nexternal_settles(void)
{
    uint64_t end = nanotime() + STALL;
    while (__atomic_load_n(&sched.nexternal, __ATOMIC_ACQUIRE) != others_waiting())
        if (nanotime() > end)
            return false;
        else
            nap();
    return true;
}

KTEST(irqwait_rejects_bad_vectors)
{
    KT_ASSERT_EQ(irq_wait(0x20), -1);               // below the device range
    KT_ASSERT_EQ(irq_wait(VEC_WAKE), -1);           // a scheduler IPI
    KT_ASSERT_EQ(irq_wait(IRQ_VEC_LAST - 1), -1);   // in range, never attached
    KT_ASSERT_EQ(irq_attach(0x20, 0), -1);
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);   // again, same hook: fine
}

// ---- one waiter, woken by an IPI from another core ------------------------

#define ROUNDS 20
static uint64_t woke_at, woke_n, woke_done;

static void waiter(void *arg)
{
    (void)arg;
    int n = irq_wait(IRQ_VEC_TEST);
    woke_at = nanotime();
    woke_n = (uint64_t)n;
    __atomic_fetch_add(&woke_done, 1, __ATOMIC_RELEASE);
}

KTEST(irqwait_ipi_wakes_waiter)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    uint64_t lat[ROUNDS];
    kt_store(&woke_done, 0);
    for (int i = 0; i < ROUNDS; i++) {
        go(waiter, 0);
        if (!wait_waiters(IRQ_VEC_TEST, 1))
            KT_FAIL("round %d: the waiter never parked", i);
        uint64_t t0 = nanotime();
        arch_send_ipi(other_core(), IRQ_VEC_TEST);
        if (!wait_until(&woke_done, (uint64_t)i + 1, STALL))
            KT_FAIL("round %d: the waiter was not readied by the interrupt", i);
        KT_ASSERT_EQ(woke_n, 1);
        lat[i] = woke_at - t0;
    }
    KT_ASSERT(nexternal_settles());
    sort_u64(lat, ROUNDS);
    printf("ktest: irq_wait wake latency (IPI sent -> waiter runs) p50 %lu us max %lu us\n",
           lat[ROUNDS / 2] / 1000, lat[ROUNDS - 1] / 1000);
    KT_TAIL_BOUND("irq_wait wake latency, max", lat[ROUNDS - 1], 2 * SEC);
}

// ---- every waiter on a vector wakes at its next interrupt -----------------

#define NWAITERS 6

KTEST(irqwait_wakes_all_waiters)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    kt_store(&woke_done, 0);
    for (int i = 0; i < NWAITERS; i++)
        go(waiter, 0);
    if (!wait_waiters(IRQ_VEC_TEST, NWAITERS))
        KT_FAIL("only %u of %d waiters parked", irq_nwaiting(IRQ_VEC_TEST), NWAITERS);
    KT_ASSERT(__atomic_load_n(&sched.nexternal, __ATOMIC_ACQUIRE) >= NWAITERS);
    arch_send_ipi(other_core(), IRQ_VEC_TEST);
    if (!wait_until(&woke_done, NWAITERS, STALL))
        KT_FAIL("%lu of %d waiters woke", kt_load(&woke_done), NWAITERS);
    KT_ASSERT_EQ(irq_nwaiting(IRQ_VEC_TEST), 0);
    KT_ASSERT_EQ(irq_take_pending(IRQ_VEC_TEST), 0);   // consumed by the waiters, not kept
    KT_ASSERT(nexternal_settles());
}

// ---- an interrupt before the wait is not lost -----------------------------

static uint64_t rescue_stop, rescued;

// Fires the vector if the test is still stuck after a while: a lost wakeup
// then fails the test instead of hanging the run.
static void rescuer(void *arg)
{
    (void)arg;
    // only a lost wake-up, never a slow host, lasts the stall limit
    for (uint64_t i = 0; i < KT_STALL_NS / 10000000 && !kt_load(&rescue_stop); i++)
        sleep_ns(10000000);
    if (!kt_load(&rescue_stop)) {
        kt_store(&rescued, 1);
        arch_send_ipi(0, IRQ_VEC_TEST);
    }
    kt_store(&rescue_stop, 2);
}

static void rescue_start(void)
{
    kt_store(&rescue_stop, 0);
    kt_store(&rescued, 0);
    go(rescuer, 0);
}

static void rescue_end(void)
{
    kt_store(&rescue_stop, 1);
    wait_until(&rescue_stop, 2, STALL);
}

KTEST(irqwait_interrupt_before_wait)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    KT_ASSERT(send_delivered(IRQ_VEC_TEST, other_core()));
    rescue_start();
    int n = irq_wait(IRQ_VEC_TEST);         // must not park: the interrupt is kept
    rescue_end();
    KT_ASSERT(!kt_load(&rescued));
    KT_ASSERT_EQ(n, 1);
    // Three, each delivered before the next is sent: one call takes them all.
    for (int i = 0; i < 3; i++)
        KT_ASSERT(send_delivered(IRQ_VEC_TEST, other_core()));
    rescue_start();
    n = irq_wait(IRQ_VEC_TEST);
    rescue_end();
    KT_ASSERT(!kt_load(&rescued));
    KT_ASSERT_EQ(n, 3);
    KT_ASSERT_EQ(irq_take_pending(IRQ_VEC_TEST), 0);
}

// ---- an interrupt held back shows in the APIC's requests -----------------
//
// The NMI report names the vector a halted core has requested and not
// taken (arch_irq_pending): with interrupts off, our own IPI must show
// there, and leave once they are on.

KTEST(irqwait_held_back_ipi_shows_as_pending)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    struct m *mp = acquirem();
    uint64_t before = irq_count(IRQ_VEC_TEST), end = nanotime() + STALL;
    irq_disable();
    arch_send_ipi((uint32_t)core_id(), IRQ_VEC_TEST);
    uint32_t seen;
    while ((seen = arch_irq_pending()) < IRQ_VEC_TEST && nanotime() < end)
        cpu_relax();
    bool taken_early = irq_count(IRQ_VEC_TEST) != before;
    irq_enable();
    while (irq_count(IRQ_VEC_TEST) == before && nanotime() < end)
        cpu_relax();
    uint32_t after = arch_irq_pending();
    uint64_t taken = irq_count(IRQ_VEC_TEST) - before;
    releasem(mp);
    KT_ASSERT(!taken_early);
    if (seen < IRQ_VEC_TEST)
        KT_FAIL("our IPI on vector %u never showed as requested (highest: %u)", IRQ_VEC_TEST, seen);
    KT_ASSERT_EQ(taken, 1);
    KT_ASSERT(after != IRQ_VEC_TEST);
    KT_ASSERT_EQ(irq_take_pending(IRQ_VEC_TEST), 1);
}

// ---- a stream of interrupts racing a waiter that parks and wakes ----------
//
// Every interrupt lands either on a parked waiter or in pending, never in
// between: the waiter's total must reach exactly what was sent.

#define STREAM 300
static uint64_t consumed, stream_done;

static void consumer(void *arg)
{
    (void)arg;
    uint64_t sum = 0;
    while (sum < STREAM && !kt_load(&rescue_stop)) {
        int n = irq_wait(IRQ_VEC_TEST);
        if (n < 1)
            break;
        sum += (uint64_t)n;
    }
    kt_store(&consumed, sum);
    kt_store(&stream_done, 1);
}

KTEST(irqwait_stream_loses_nothing)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    kt_store(&consumed, 0);
    kt_store(&stream_done, 0);
    kt_store(&rescue_stop, 0);
    go(consumer, 0);
    for (int i = 0; i < STREAM; i++) {
        if (!send_delivered(IRQ_VEC_TEST, (uint32_t)i % (uint32_t)num_cpu()))
            KT_FAIL("IPI %d was never delivered", i);
        if (i % 7 == 0)
            gosched();          // let the consumer park between some of them
    }
    if (!wait_until(&stream_done, 1, STALL)) {
        uint32_t left = irq_nwaiting(IRQ_VEC_TEST);
        kt_store(&rescue_stop, 1);
        arch_send_ipi(0, IRQ_VEC_TEST);
        wait_until(&stream_done, 1, STALL);
        KT_FAIL("the consumer saw %lu of %d interrupts (%u parked)", kt_load(&consumed), STREAM, left);
    }
    KT_ASSERT_EQ(kt_load(&consumed), STREAM);
    KT_ASSERT(nexternal_settles());
}

// ---- no deadlock report while a G waits for a device ----------------------
//
// The only G parks in irq_wait with no timer pending, so every P goes idle
// and the deadlock detector looks: sched.nexternal must stop it. The PIT's
// channel 0 (ISA IRQ 0, through the IOAPIC) fires ~55 ms later: nothing in
// the scheduler knows it is coming.

#define PIT_IRQ 0

KTEST(irqwait_device_irq_no_deadlock)
{
    if (!ioapic_init())
        KT_SKIP("no usable IOAPIC");
    uint8_t vec = IRQ_VEC_ISA(PIT_IRQ);
    KT_ASSERT_EQ(irq_attach(vec, 0), 0);
    // Routed and drained before the one-shot starts: started first, a vCPU
    // stalled for its 55 ms let the real edge land before the drain, which
    // then discarded it, and irq_wait waited for good.
    KT_ASSERT_EQ(ioapic_route_isa(PIT_IRQ, vec, arch_cpu(0)->apic_id), 0);
    // An edge the firmware's periodic PIT left behind may land between the
    // drain and the one-shot's start: irq_wait then returns at once and no
    // P need have halted, so the attempt is made again. Each attempt's
    // one-shot starts after its drain, so its edge is never discarded and
    // never waited for twice: no attempt can hang, however long the host
    // stops a vCPU in between.
    static struct sched_stats s0, s1;  // 100 KiB each: not on a goroutine's stack
    uint64_t waited = 0, halts = 0;
    int n = 0, attempts = 0;
    while (attempts < 3 && halts == 0 && n >= 0) {
        irq_take_pending(vec);
        sched_stats(&s0);
        uint64_t t0 = nanotime();
        pit_ch0_oneshot(0xFFFF);           // 65535 / 1193182 Hz = 54.9 ms
        n = irq_wait(vec);
        waited = nanotime() - t0;
        sched_stats(&s1);
        halts = s1.total.halts - s0.total.halts;
        attempts++;
    }
    ioapic_mask(ioapic_isa_gsi(PIT_IRQ));
    KT_ASSERT(n >= 1);
    printf("ktest: irq_wait on the PIT: woke after %lu ms, %d edge(s), attempt %d, %lu P halts meanwhile\n",
           waited / 1000000, n, attempts, halts);
    KT_ASSERT(halts > 0);                  // every P did go idle
    KT_TAIL_BOUND("irq_wait for the PIT's 55 ms one-shot", waited, 5 * SEC);
}

// ---- a G readied by an interrupt runs while every P runs a call-free loop ----
//
// The interrupt hands the G to the netpoller and calls wakep, which does
// nothing when no P is idle. A G alone on its P is preempted for it only
// because the time slice check counts the netpoller's pending work
// (others_runnable); the preemption polls and runs the readied G ahead of
// its own. Without that it ran only when the loops stopped (3016 ms
// later, 2 vCPUs; the console reader is such a G). Here every P runs a
// call-free loop; one of them sends
// the interrupt once all of them run and nothing else waits, and every
// loop goes on until the readied G has run. How long it waited, in time
// slices, is printed, and asserted (at most two) where guest time is
// exact: bare metal, and -icount (the sysmon-icount runs).

#define SPIN_ROUNDS 5
static uint64_t spin_started, spin_stop, spin_sent_at, spin_ran_at, spin_stalled, spin_settled;
static struct kt_busy_round spin_round;
static chan_t *spin_done;

static void spin_hog(void *arg)
{
    bool sender = arg != 0;
    kt_busy_round_moved(&spin_round);
    kt_add(&spin_started, 1);
    if (sender) {
        // Every P runs a loop, and has for two time slices (a slice's
        // check counts from the first timer interrupt that sees it: up to
        // a slice after it began), before the interrupt is sent.
        uint64_t settle = 2 * sched_quantum_ns() * cputicks_hz() / 1000000000, since = 0;
        while (!kt_busy_round_stalled(&spin_round)) {
            if (!kt_busy_round_look(&spin_round, false) || kt_load(&spin_started) < (uint64_t)gomaxprocs(0))
                since = 0;
            else if (!since)
                since = cputicks();
            else if (cputicks() - since >= settle) {
                kt_store(&spin_settled, 1);
                break;
            }
        }
        kt_busy_round_moved(&spin_round);
        kt_store(&spin_sent_at, cputicks());
        arch_send_ipi((uint32_t)core_id(), IRQ_VEC_TEST);
        // call-free but for the clock, read every 2^20 rounds
        for (uint64_t i = 1; !__atomic_load_n(&spin_stop, __ATOMIC_RELAXED); i++)
            if (!(i & 0xFFFFF) && kt_busy_round_stalled(&spin_round)) {
                kt_store(&spin_stalled, 1);
                kt_store(&spin_stop, 1);
            }
    } else {
        while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED))
            ;
    }
    chan_send(spin_done, 0);
}

static void spin_waiter(void *arg)
{
    (void)arg;
    irq_wait(IRQ_VEC_TEST);
    kt_store(&spin_ran_at, cputicks());
    kt_store(&spin_stop, 1);
    chan_send(spin_done, 0);
}

KTEST(irqwait_readied_g_runs_while_every_p_spins)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    int procs = gomaxprocs(0);
    uint64_t quantum = sched_quantum_ns(), worst = 0;
    spin_done = chan_make(0, (size_t)procs + 1);
    for (int r = 0, rounds = kt_every_p_busy_rounds(SPIN_ROUNDS); r < rounds; r++) {
        irq_take_pending(IRQ_VEC_TEST);
        spin_started = spin_stop = spin_sent_at = spin_ran_at = spin_stalled = spin_settled = 0;
        kt_busy_round_begin(&spin_round);
        go(spin_waiter, 0);
        if (!wait_waiters(IRQ_VEC_TEST, 1))
            KT_FAIL("round %d: the waiter never parked", r);
        for (int i = 0; i < procs; i++)
            go(spin_hog, (void *)(uintptr_t)(i == 0));
        for (int i = 0; i < procs + 1; i++)
            chan_recv(spin_done, 0);        // parked: no runnable G but the loops
        if (!kt_load(&spin_settled))
            KT_FAIL("round %d: %lu of %d loops started; never every P in one for two time slices "
                    "(the sender's last look that found any, %lu s before: %lu P(s) idle, %lu G(s) in "
                    "the global queue, %lu P(s) with Gs queued)", r, kt_load(&spin_started), procs,
                    kt_busy_round_seen_s(&spin_round), kt_load(&spin_round.seen_idle),
                    kt_load(&spin_round.seen_global), kt_load(&spin_round.seen_queued));
        if (kt_load(&spin_stalled))
            KT_FAIL("round %d: the readied G did not run while %d P(s) ran loops (%d s)", r, procs,
                    (int)(KT_STALL_NS / 1000000000));
        uint64_t ns = (kt_load(&spin_ran_at) - kt_load(&spin_sent_at)) * 1000000000 / cputicks_hz();
        if (ns > worst)
            worst = ns;
    }
    chan_free(spin_done);
    KT_ASSERT(nexternal_settles());
    printf("ktest: irq-readied G beside %d spinning P(s): longest wait %lu us = %lu.%02lu time slices\n",
           procs, worst / 1000, worst / quantum, worst % quantum * 100 / quantum);
    KT_GUEST_BOUND("irq-readied G's wait while every P spins, longest", worst, 2 * quantum);
}

// ---- Gs readied by interrupts run in the order they were readied ---------
//
// The netpoller's list of Gs handed by interrupts is a stack, taken whole
// and reversed: taken as it stood, the G readied last ran first. On one P, while the only
// running G is pinned, three waiters on three vectors are readied one
// after the other; then that G parks, and they must run in that order.

#define ORDER_N 3
// Soft vectors (IRQ_VEC_LAST - 1 stays unattached: irqwait_rejects_bad_vectors)
static const uint8_t order_vec[ORDER_N] = { IRQ_VEC_SOFT_FIRST, IRQ_VEC_SOFT_FIRST + 1, IRQ_VEC_TEST };
static uint64_t order_next, order_seen[ORDER_N];
static chan_t *order_done;

static void order_waiter(void *arg)
{
    uint64_t i = (uint64_t)(uintptr_t)arg;
    irq_wait(order_vec[i]);
    order_seen[__atomic_fetch_add(&order_next, 1, __ATOMIC_ACQ_REL)] = i;
    chan_send(order_done, 0);
}

// One round; false when sysmon took part of the list meanwhile (then the
// order across its take and the rest is not this test's to judge).
static bool order_round(uint32_t target, bool *ok)
{
    order_next = 0;
    uint64_t takes = netpoll_sysmon_polls();
    for (uint64_t i = 0; i < ORDER_N; i++) {
        irq_take_pending(order_vec[i]);
        go(order_waiter, (void *)(uintptr_t)i);
    }
    for (uint64_t i = 0; i < ORDER_N; i++)
        *ok = wait_waiters(order_vec[i], 1) && *ok;
    preempt_disable();              // nobody looks at the readied Gs meanwhile
    for (uint64_t i = 0; i < ORDER_N; i++) {
        uint8_t v = order_vec[i];
        uint64_t before = irq_count(v);
        arch_send_ipi(target, v);
        uint64_t end = nanotime() + STALL;
        while (irq_count(v) == before && nanotime() < end)
            cpu_relax();
    }
    preempt_enable();
    for (int i = 0; i < ORDER_N; i++)
        chan_recv(order_done, 0);
    return netpoll_sysmon_polls() == takes;
}

KTEST(irqwait_readied_gs_run_in_readiness_order)
{
    for (uint64_t i = 0; i < ORDER_N; i++)
        KT_ASSERT_EQ(irq_attach(order_vec[i], 0), 0);
    int orig = gomaxprocs(1);
    order_done = chan_make(0, ORDER_N);
    bool ok = true, alone = false;
    for (int r = 0; r < 3 && !alone && ok; r++)
        alone = order_round(other_core(), &ok);
    chan_free(order_done);
    gomaxprocs(orig);
    KT_ASSERT(ok);
    KT_ASSERT(nexternal_settles());
    if (!alone)
        KT_SKIP("sysmon took part of the readied Gs in each of 3 rounds (the host held this vCPU)");
    for (uint64_t i = 0; i < ORDER_N; i++)
        if (order_seen[i] != i)
            KT_FAIL("readied 0 1 2, ran %lu %lu %lu", order_seen[0], order_seen[1], order_seen[2]);
}

// ---- sysmon takes the readied Gs when no M looks ------------------------
//
// With every P's G pinned, no M schedules, so none looks at the Gs
// interrupts readied. Go's sysmon polls the network when nobody has for
// 10 ms and injects what it finds; so does goro's, whose poll takes the Gs
// interrupts readied: the readied G must reach the global queue (no P is
// idle) while the only P stays pinned. Before, nothing took it until the
// pin ended.

KTEST(irqwait_sysmon_takes_readied_gs_when_no_m_looks)
{
    KT_ASSERT_EQ(irq_attach(IRQ_VEC_TEST, 0), 0);
    irq_take_pending(IRQ_VEC_TEST);
    int orig = gomaxprocs(1);
    kt_store(&woke_done, 0);
    go(waiter, 0);
    bool parked = wait_waiters(IRQ_VEC_TEST, 1);
    preempt_disable();
    uint64_t before = irq_count(IRQ_VEC_TEST), polls = netpoll_sysmon_polls();
    arch_send_ipi(other_core(), IRQ_VEC_TEST);
    uint64_t t0 = nanotime(), end = t0 + STALL;
    while (irq_count(IRQ_VEC_TEST) == before && nanotime() < end)
        cpu_relax();
    uint64_t t1 = nanotime();
    // The G leaves the netpoller for the global queue: sysmon's injection
    while ((netpoll_sysmon_polls() == polls || !SNAPSHOT(sched.runq_size)) && nanotime() < end)
        cpu_relax();
    bool taken = netpoll_sysmon_polls() != polls && SNAPSHOT(sched.runq_size);
    uint64_t t2 = nanotime();
    preempt_enable();
    bool woke = wait_until(&woke_done, 1, STALL);
    gomaxprocs(orig);
    KT_ASSERT(parked && woke);
    printf("ktest: sysmon took the readied G %lu us after its interrupt\n", (t2 - t1) / 1000);
    if (!taken)
        KT_FAIL("the readied G stayed untaken for %d s while the only P was pinned",
                (int)(STALL / SEC));
    KT_ASSERT(nexternal_settles());
}
