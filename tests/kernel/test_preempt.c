// SPDX-License-Identifier: MIT
// Preemption, timers and sysmon: no goroutine can hog a core.
#include "kernel/ktest.h"
#include "arch/arch.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "lib/string.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"

static uint64_t kparams_quantum_us(void) { return kparams.quantum_ns / 1000; }

// ---- CPU hogs on every P and a 1 ms sleeper --------------------------------

static uint64_t hog_stop, hogs_done;

// A tight loop with no calls: only an interrupt can take the core away.
static void hog(void *arg)
{
    volatile uint64_t *count = arg;
    while (!__atomic_load_n(&hog_stop, __ATOMIC_RELAXED))
        (*count)++;
    __atomic_fetch_add(&hogs_done, 1, __ATOMIC_RELEASE);
}

#define SLEEPS 60
static uint64_t late_ns[SLEEPS];
static uint64_t sleeper_done;

static void sleeper(void *arg)
{
    (void)arg;
    for (int i = 0; i < SLEEPS; i++) {
        uint64_t t0 = nanotime();
        sleep_ns(1000000);
        uint64_t d = nanotime() - t0;
        late_ns[i] = d >= 1000000 ? d - 1000000 : 0;
        if (d + ktest_tsc_skew_ns() < 1000000)
            late_ns[i] = ~0ull;         // early (woken on another core: its TSC's skew allowed): flagged below
    }
    kt_store(&sleeper_done, 1);
}

static void hogs_with_sleeper(int procs)
{
    int orig = gomaxprocs(procs);
    // Static, not on this frame: a hog that outlives a timed-out wait
    // below still writes its counter.
    static uint64_t counts[MAX_CPUS];
    static struct sched_stats before, after;
    memset(counts, 0, sizeof counts);
    hog_stop = hogs_done = sleeper_done = 0;
    sched_stats(&before);
    for (int i = 0; i < procs; i++)
        go(hog, &counts[i]);
    go(sleeper, 0);
    // The main G is one more runnable G: it yields until the sleeper is done.
    bool slept = kt_wait_count(&sleeper_done, 1, KT_STALL_MS);
    // Every hog gets a core while the others hog: waited for, not assumed
    // done by the sleeper's 60 ms (seed 8005 on numa4-q35: a hog still in
    // the queue of a P whose vCPU the host held that long, which no busy
    // P steals from).
    int never_ran = -1;
    for (int i = 0; i < procs; i++)
        if (!kt_wait_count(&counts[i], 1, KT_STALL_MS) && never_ran < 0)
            never_ran = i;
    kt_store(&hog_stop, 1);
    bool stopped = kt_wait_count(&hogs_done, (uint64_t)procs, KT_STALL_MS);
    sched_stats(&after);
    gomaxprocs(orig);
    if (!slept)
        KT_FAIL("the sleeper never finished its %d sleeps beside %d hogs", SLEEPS, procs);
    if (!stopped)
        KT_FAIL("only %lu of %d hogs stopped", kt_load(&hogs_done), procs);
    for (int i = 0; i < SLEEPS; i++)
        if (late_ns[i] == ~0ull)
            KT_FAIL("sleep %d returned early", i);
    sort_u64(late_ns, SLEEPS);
    uint64_t p50 = late_ns[SLEEPS / 2], p99 = late_ns[SLEEPS - 1 - SLEEPS / 100], max = late_ns[SLEEPS - 1];
    uint64_t pre = after.total.preemptions - before.total.preemptions;
    printf("ktest: gomaxprocs=%d hogs=%d sleeper lateness p50 %lu us p99 %lu us max %lu us "
           "(quantum %lu us), %lu preemptions\n",
           procs, procs, p50 / 1000, p99 / 1000, max / 1000, kparams_quantum_us(), pre);
    // What holds however long the host stops a vCPU: every sleep lasted
    // its 1 ms, every hog ran (in the end), and the sleeper finished its sleeps and the
    // main G its wait while a hog that never yields held every P, which
    // only preemption allows.
    if (never_ran >= 0)
        KT_FAIL("hog %d of %d never ran while the others hogged their Ps", never_ran, procs);
    KT_ASSERT(pre > 0);
    // How late the sleeper woke is a tail: within the quantum on real
    // cores; under a hypervisor the host deschedules whole vCPUs, timer
    // interrupts included (two QEMUs sharing two host cores: one-P p99 of
    // 3 to 76 ms; 8 busy vCPUs on 2 host cores: p50 of 30-50 ms).
    KT_TAIL_BOUND("sleeper lateness p50", p50, kparams.quantum_ns);
    KT_TAIL_BOUND("sleeper lateness p99", p99, kparams.quantum_ns);
}

KTEST(preempt_hogs_and_sleeper_one_p)
{
    hogs_with_sleeper(1);
}

KTEST(preempt_hogs_and_sleeper_all_ps)
{
    hogs_with_sleeper(num_cpu());
}

// ---- a quantum preemption does not wait for sched.lock ----------------------
//
// spin_trylock first: it takes a free lock with interrupts off and leaves
// a held one, and the interrupt state, as they were.
KTEST(spin_trylock_takes_a_free_lock_and_leaves_a_held_one)
{
    static struct spinlock l = SPINLOCK_INIT("ktest trylock", LOCK_RANK_CONSOLE_STASH);
    bool on = irqs_enabled();
    KT_ASSERT(spin_trylock(&l));
    KT_ASSERT(spin_holding(&l) && !irqs_enabled());
    spin_unlock(&l);
    KT_ASSERT_EQ(irqs_enabled(), on);
    // Held by no core of ours: a lock word some other holder set.
    __atomic_store_n(&l.locked, 1, __ATOMIC_RELAXED);   // relaxed: this G's own lock, no other reader
    bool took = spin_trylock(&l);
    bool still_on = irqs_enabled();
    __atomic_store_n(&l.locked, 0, __ATOMIC_RELAXED);   // relaxed: as above
    KT_ASSERT(!took);
    KT_ASSERT_EQ(still_on, on);
}

// This G holds sched.lock, interrupts off on its core, with two more hogs
// than the other Ps and one of them on the global queue, so that every
// other P's slice ends with a G waiting, until a preemption has found the
// lock held (the G then goes to its own P's tail). After it: every hog
// runs again (none was lost from a queue) and each stops when told.
#define LB_HOGS_EXTRA 2
static uint64_t lb_stop, lb_done, lb_count[MAX_CPUS + LB_HOGS_EXTRA];

static void lb_hog(void *arg)
{
    uint64_t *count = arg;
    while (!kt_load(&lb_stop))
        kt_add(count, 1);
    kt_add(&lb_done, 1);
}

static uint64_t preemptions_lock_busy(void)
{
    static struct sched_stats s;
    sched_stats(&s);
    return s.total.preemptions_lock_busy;
}

KTEST(preempt_with_sched_lock_held_queues_on_its_own_p)
{
    uint32_t procs = (uint32_t)gomaxprocs(0);
    if (procs < 2)
        KT_SKIP("needs 2 Ps: the lock's holder keeps one");
    uint32_t nhogs = procs - 1 + LB_HOGS_EXTRA;
    kt_store(&lb_stop, 0);
    kt_store(&lb_done, 0);
    for (uint32_t i = 0; i < nhogs; i++) {
        kt_store(&lb_count[i], 0);
        go(lb_hog, &lb_count[i]);
    }
    // Every hog has run, and a G waits on the global queue: with the lock
    // held it stays there, so every P's slice ends with work waiting.
    bool started = true;
    for (uint32_t i = 0; i < nhogs && started; i++)
        started = kt_wait_count(&lb_count[i], 1, KT_STALL_MS);
    // The lock is held in tries of a few slices each, released between
    // them: a P whose hog was just queued globally finds no work it can
    // take without the lock and waits for it in give_up_p, where no slice
    // ends, so a try that began then cannot see a preemption.
    uint64_t try_ns = 4 * sched_quantum_ns();
    uint64_t before = preemptions_lock_busy();
    uint64_t t0 = nanotime(), held_ns = 0, tries = 0;
    bool queued = false, seen = false;
    while (started && !seen && nanotime() - t0 < KT_STALL_NS) {
        spin_lock(&sched.lock);
        if (sched.runq_size) {
            queued = true;
            tries++;
            uint64_t t1 = nanotime();
            while (!(seen = preemptions_lock_busy() > before) && nanotime() - t1 < try_ns)
                arch_lock_relax();  // interrupts off: a TLB shoot-down must not wait for this core
            held_ns += nanotime() - t1;
        }
        spin_unlock(&sched.lock);
        if (!seen)
            sleep_ns(1000000);
    }
    uint64_t held_ms = held_ns / 1000000;
    uint64_t after[MAX_CPUS + LB_HOGS_EXTRA];
    for (uint32_t i = 0; i < nhogs; i++)
        after[i] = kt_load(&lb_count[i]);
    uint32_t stalled = nhogs;
    for (uint32_t i = 0; i < nhogs; i++) {
        // Each hog moves past its count at the lock's release: every one
        // of them is still in some run queue.
        if (!kt_wait_count(&lb_count[i], after[i] + 1, KT_STALL_MS)) {
            stalled = i;
            break;
        }
    }
    kt_store(&lb_stop, 1);
    bool all_done = kt_wait_count(&lb_done, nhogs, KT_STALL_MS);
    printf("ktest: sched.lock held %lu ms in %lu tries until a preemption found it held (%lu such preemptions)\n",
            held_ms, tries, preemptions_lock_busy() - before);
    if (!started || !queued)
        KT_FAIL("%s within %llu s (%u hogs on %u Ps)",
                !started ? "not every hog ran" : "no G waited on the global queue", KT_STALL_MS / 1000,
                nhogs, procs);
    if (!seen)
        KT_FAIL("no quantum preemption found sched.lock held in %llu s (%u hogs on %u Ps)",
                KT_STALL_MS / 1000, nhogs, procs);
    if (stalled < nhogs)
        KT_FAIL("hog %u of %u did not run for %llu s after the lock's release", stalled, nhogs,
                KT_STALL_MS / 1000);
    KT_ASSERT(all_done);
}

// ---- vector state survives thousands of preemptions -------------------------

typedef double v4d __attribute__((vector_size(32)));

__attribute__((noinline, target("avx2"))) static double avx_checksum(int rounds)
{
    v4d a = { 1.0, 2.0, 3.0, 4.0 }, b = { 0.5, 0.25, 0.125, 0.0625 }, acc = { 0, 0, 0, 0 };
    for (int r = 0; r < rounds; r++) {
        a = a * 1.0000001 + b;
        b = b * 0.9999999 + a * 1e-9;
        acc += a - b;
    }
    return acc[0] + acc[1] * 3 + acc[2] * 7 + acc[3] * 11;
}

__attribute__((noinline)) static double sse_checksum(int rounds)
{
    double x = 1.0, y = 2.0, s = 0;
    for (int r = 0; r < rounds; r++) {
        x = x * 1.0000003 + y * 1e-7;
        y = y * 0.9999997 + x * 1e-7;
        s += x - y;
    }
    return s;
}

// The workers checksum until SIMD_PREEMPTIONS preemptions have struck
// them (two checksums each at least): a count, not a time, so the test is
// as strong on a fast machine as under TCG, where the fixed 4M rounds it
// once ran took 20-60 s.
#define SIMD_ROUNDS 100000
#define SIMD_PREEMPTIONS 100
static double simd_ref_avx, simd_ref_sse;
static uint64_t simd_bad, simd_checksums, simd_pre0;
static waitgroup_t simd_wg;

static uint64_t preemptions_total(void)
{
    struct sched_stats *s = malloc(sizeof *s);      // 100 KiB: not a frame's worth
    sched_stats(s);
    uint64_t n = s->total.preemptions;
    free(s);
    return n;
}

static void simd_worker(void *arg)
{
    bool avx = arg != 0;
    for (int k = 0; k < 2 || preemptions_total() - simd_pre0 < SIMD_PREEMPTIONS; k++) {
        double v = avx ? avx_checksum(SIMD_ROUNDS) : sse_checksum(SIMD_ROUNDS);
        if (v != (avx ? simd_ref_avx : simd_ref_sse))
            __atomic_fetch_add(&simd_bad, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&simd_checksums, 1, __ATOMIC_RELAXED);
    }
    wg_done(&simd_wg);
}

KTEST(preempt_keeps_vector_state)
{
    if (!arch_simd_enabled)
        KT_SKIP("simd=off");
    bool have_avx2 = arch_has_avx2();
    preempt_disable();
    simd_ref_sse = sse_checksum(SIMD_ROUNDS);
    if (have_avx2)
        simd_ref_avx = avx_checksum(SIMD_ROUNDS);
    preempt_enable();
    uint64_t old_q = sched_set_quantum_ns(50000);
    int orig = gomaxprocs(1);
    static struct sched_stats a, b;
    sched_stats(&a);
    simd_pre0 = a.total.preemptions;
    // The main G waits parked, so the workers alone share the P and each
    // runs whole quanta.
    simd_bad = simd_checksums = 0;
    wg_add(&simd_wg, have_avx2 ? 4 : 2);
    for (int i = 0; i < 2; i++)
        go(simd_worker, 0);
    if (have_avx2)
        for (int i = 0; i < 2; i++)
            go(simd_worker, (void *)1);
    wg_wait(&simd_wg);
    sched_stats(&b);
    gomaxprocs(orig);
    sched_set_quantum_ns(old_q);
    uint64_t pre = b.total.preemptions - a.total.preemptions;
    printf("ktest: vector workers: %lu preemptions, %lu checksums, %lu bad (avx2 %s)\n", pre,
           simd_checksums, simd_bad, have_avx2 ? "yes" : "no");
    KT_ASSERT_EQ(simd_bad, 0);
    KT_ASSERT(pre >= SIMD_PREEMPTIONS);
}

// ---- a preempt-disabled region is never preempted ---------------------------

static uint64_t other_ran;

static void other(void *arg)
{
    (void)arg;
    kt_store(&other_ran, nanotime());
}

KTEST(preempt_disabled_region_defers)
{
    int orig = gomaxprocs(1);
    uint64_t old_q = sched_set_quantum_ns(200000);
    static struct sched_stats a, b, c;
    other_ran = 0;
    preempt_disable();
    go(other, 0);                       // runnable on our P the whole time
    sched_stats(&a);
    int core = core_id();
    // 50 quanta at least, and until a preemption has come due (a loaded
    // host may not run this vCPU for a while; only a hang reaches give_up)
    uint64_t end = nanotime() + 10000000, give_up = nanotime() + KT_STALL_NS;
    while ((nanotime() < end || !this_cpu()->preempt_pending) && nanotime() < give_up)
        cpu_relax();
    sched_stats(&b);
    bool moved = core_id() != core;
    bool ran_inside = kt_load(&other_ran) != 0;
    uint64_t t_enable = nanotime();
    preempt_enable();                   // the deferred preemption happens here
    sched_stats(&c);
    // The other G usually runs right then; the scheduler's fairness (the
    // global queue first every 61st schedule) may run this one first.
    for (uint64_t end = nanotime() + KT_STALL_NS; !kt_load(&other_ran) && nanotime() < end;)
        gosched();
    uint64_t ran = kt_load(&other_ran);
    sched_set_quantum_ns(old_q);
    gomaxprocs(orig);
    KT_ASSERT(ran != 0);
    KT_ASSERT(!moved);
    KT_ASSERT(!ran_inside);
    KT_ASSERT_EQ(b.total.preemptions, a.total.preemptions);
    KT_ASSERT(c.total.preemptions > b.total.preemptions);
    KT_ASSERT(ran + ktest_tsc_skew_ns() >= t_enable);     // not inside the region
}

// ---- the time slice keeps to its range -----------------------------------
//
// sched_set_quantum_ns(0) was accepted from apps (the shell and the command
// line keep to 20 us..1 s): a slice of 0 preempts at every interrupt. 0
// now only queries, as gomaxprocs(0) does, and other values clamp.

static bool near_ns(uint64_t a, uint64_t b)
{
    return a + 1000 >= b && a <= b + 1000;     // the TSC conversion rounds
}

KTEST(preempt_quantum_setting_clamps_and_zero_queries)
{
    uint64_t orig = sched_quantum_ns();
    uint64_t got = sched_set_quantum_ns(0);
    uint64_t after_zero = sched_quantum_ns();
    sched_set_quantum_ns(1);
    uint64_t after_one = sched_quantum_ns();
    sched_set_quantum_ns(10000000000ull);
    uint64_t after_ten_s = sched_quantum_ns();
    sched_set_quantum_ns(orig);
    KT_ASSERT(near_ns(got, orig));
    KT_ASSERT(near_ns(after_zero, orig));
    KT_ASSERT(near_ns(after_one, 20000));
    KT_ASSERT(near_ns(after_ten_s, 1000000000));
    KT_ASSERT(near_ns(sched_quantum_ns(), orig));
}

// ---- a G stuck in a blocking call hands its P over --------------------------

static uint64_t queued_done, queued_core_mask, blocker_out;

static void queued(void *arg)
{
    (void)arg;
    __atomic_fetch_or(&queued_core_mask, 1ull << core_id(), __ATOMIC_RELAXED);
    __atomic_fetch_add(&queued_done, 1, __ATOMIC_RELEASE);
}

static void blocker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 8; i++)
        go(queued, 0);                  // queued behind us on our P
    // sysmon hands the P over within tens of us, but on a busy host the
    // vCPUs of sysmon's core or the idle core may not run for tens of ms
    // (CI runs several QEMUs at once): the call lasts until all 8 have run;
    // only a hang reaches the stall limit. How soon is a benchmark's
    // question, not this test's.
    entersyscall();
    uint64_t end = nanotime() + KT_STALL_NS;
    while (nanotime() < end && kt_load(&queued_done) < 8)
        cpu_relax();
    kt_store(&blocker_out, kt_load(&queued_done));
    exitsyscall();
}

KTEST(preempt_syscall_handoff_to_spare_core)
{
    if (num_cpu() < 2)
        KT_SKIP("needs a spare core");
    int orig = gomaxprocs(1);
    queued_done = queued_core_mask = 0;
    blocker_out = ~0ull;
    go(blocker, 0);
    kt_wait_count(&queued_done, 8, KT_STALL_MS);
    while (kt_load(&blocker_out) == ~0ull)
        gosched();
    gomaxprocs(orig);
    printf("ktest: syscall hand-off: %lu of 8 ran while the blocker was inside, core mask %lx\n",
           kt_load(&blocker_out), kt_load(&queued_core_mask));
    KT_ASSERT_EQ(kt_load(&blocker_out), 8);
}

// ---- a timer of a P held by a blocking call fires during the call -----------
//
// retake skipped a P in a blocking call whose run queues were empty and
// never looked at its timers, and idle cores and sysmon's overdue-timer
// backstop act only for idle Ps: with gomaxprocs(1) on 2 cores, a 2 ms
// sleep beside a 500 ms call took 500 ms. Now sysmon retakes such a P (as
// Go's, when no P is idle or spinning, or when a timer of it is due, and
// looks again when one comes due), and an idle core runs its timers. Here
// the sleeper is this G; the call lasts until the sleep has ended (a stall
// limit: a slow host cannot end the call first). How late the sleep was is
// printed, and asserted (a time slice plus sysmon's longest period) where
// guest time is exact: bare metal, and -icount (the sysmon-icount runs).

#define CALL_SLEEP_NS 2000000ull
static uint64_t call_sleep_over, call_saw_it, call_in, call_left;
static struct g *call_g;        // the call's goroutine (kt_wait_count_of)

// Holds its core in a call until the sleep is over (or the stall limit),
// and says which it was.
static void long_call(void *arg)
{
    (void)arg;
    __atomic_store_n(&call_g, getg(), __ATOMIC_RELEASE);     // pairs with end_long_call's acquire
    entersyscall();
    kt_store(&call_in, 1);      // its M keeps this core, and g->m, until the call ends
    uint64_t end = nanotime() + KT_STALL_NS;
    while (!kt_load(&call_sleep_over) && nanotime() < end)
        cpu_relax();
    kt_store(&call_saw_it, kt_load(&call_sleep_over));
    exitsyscall();
    kt_store(&call_left, 1);
}

static void start_long_call(void)
{
    kt_store(&call_sleep_over, 0);
    kt_store(&call_saw_it, 0);
    kt_store(&call_in, 0);
    kt_store(&call_left, 0);
    __atomic_store_n(&call_g, NULL, __ATOMIC_RELAXED);        // relaxed: read only after a later release
    go(long_call, 0);           // runs on our P once we sleep, and holds it
}

// Ends the call and waits for it to leave. A core the host does not run
// for a minute holds the call past the stall limit (at 1024 vCPUs on 2
// host CPUs): asked by NMI, one that answers late starts the limit again.
static void end_long_call(void)
{
    kt_store(&call_sleep_over, 1);
    kt_wait_count_of(&call_left, 1, __atomic_load_n(&call_g, __ATOMIC_ACQUIRE),   // acquire: long_call's release
                     "the blocking call's end");
}

KTEST(preempt_sleep_beside_a_blocking_call_wakes_during_it)
{
    if (num_cpu() < 2)
        KT_SKIP("needs a core besides the blocking call's");
    int orig = gomaxprocs(1);
    uint64_t worst = 0;
    bool during = true;
    for (int r = 0; r < 5 && during; r++) {
        start_long_call();
        uint64_t t0 = nanotime();
        sleep_ns(CALL_SLEEP_NS);
        uint64_t late = nanotime() - t0 - CALL_SLEEP_NS;
        end_long_call();
        during = kt_load(&call_saw_it);
        if (late > worst)
            worst = late;
    }
    gomaxprocs(orig);
    printf("ktest: 2 ms sleep on a P held by a blocking call: late by %lu us at most (slice %lu us)\n",
           worst / 1000, sched_quantum_ns() / 1000);
    if (!during)
        KT_FAIL("the sleep ended only when the blocking call did");
    KT_GUEST_BOUND("2 ms sleep beside a blocking call, lateness", worst, sched_quantum_ns() + 10000000);
}

// The report end_long_call makes on a stall: the call's core answers its
// NMI while it spins in the call (whether late is the host's, unasserted).
KTEST(preempt_stall_report_asks_the_blocking_calls_core)
{
    if (num_cpu() < 2)
        KT_SKIP("needs a core besides the blocking call's");
    start_long_call();
    KT_ASSERT(kt_wait_count(&call_in, 1, KT_STALL_MS));
    uint32_t core = __atomic_load_n(&call_g, __ATOMIC_ACQUIRE)->m->id;   // acquire: long_call's release; m kept in the call
    uint64_t before = arch_reports_printed(core);
    kt_ask_cores(&core, 1, "runs the blocking call (asked by the test)");
    bool answered = arch_reports_printed(core) != before;
    end_long_call();
    KT_ASSERT(answered);
    KT_ASSERT(kt_load(&call_saw_it) && kt_load(&call_left));
}

// ---- ... and with no core free, its timers go to a running P ---------------
//
// The same with every core busy: gomaxprocs = cores, a call-free loop on
// every P but ours, and the blocking call on ours. No idle M can take the
// retaken P, so handoffp gives its timers to a running P, whose core is
// sent a timer interrupt and preempts its loop for them. Before, the P was
// never retaken (nothing in its queue, no idle core) and the sleep lasted
// as long as the call.

static uint64_t busy_started, busy_stop, busy_done;

static void busy_loop(void *arg)
{
    (void)arg;
    kt_add(&busy_started, 1);
    while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED))     // relaxed: a flag; call-free
        ;
    kt_add(&busy_done, 1);
}

KTEST(preempt_sleep_beside_a_blocking_call_with_every_core_busy)
{
    if (num_cpu() < 2)
        KT_SKIP("needs a running P to take the timers");
    int procs = num_cpu(), orig = gomaxprocs(procs);
    busy_started = busy_stop = busy_done = 0;
    uint64_t handons = kt_load(&sysmon_timer_handons), backstops = kt_load(&sched_spinner_backstops);
    for (int i = 0; i < procs - 1; i++)
        go(busy_loop, 0);
    // Every P busy (the loops and this G) and every core holding one. The
    // wait spins: asleep, this G leaves its P to a loop and queues behind
    // the others on waking (at 512 vCPUs the state was not seen in 60 s).
    // Its stall limit counts from the last loop's start or the last P
    // taken from the idle list (a busy round's step): at 512 vCPUs on a
    // 2-CPU host the loops took about a minute to start, idle Ps woken one
    // at a time.
    struct kt_busy_round round;
    kt_busy_round_begin(&round);
    uint64_t seen = 0;
    bool settled = true;
    while (kt_load(&busy_started) < (uint64_t)procs - 1 || SNAPSHOT(sched.npidle) ||
           SNAPSHOT(sched.nmidle)) {
        uint64_t started = kt_load(&busy_started);
        if (started != seen) {
            seen = started;
            kt_busy_round_moved(&round);
        } else if (kt_busy_round_stalled(&round)) {
            printf("ktest: every core busy: no step for %d s: %lu of %d loops started, %u idle P(s) "
                   "(fewest %u), %u idle M(s), %u spinning, %u G(s) in the global queue\n",
                   (int)(KT_STALL_NS / 1000000000), started, procs - 1, SNAPSHOT(sched.npidle),
                   SNAPSHOT(round.fewest_idle), SNAPSHOT(sched.nmidle), SNAPSHOT(sched.nmspinning),
                   SNAPSHOT(sched.runq_size));
            settled = false;
            break;
        }
        cpu_relax();
    }
    start_long_call();
    uint64_t t0 = nanotime();
    sleep_ns(CALL_SLEEP_NS);
    uint64_t late = nanotime() - t0 - CALL_SLEEP_NS;
    end_long_call();
    bool during = kt_load(&call_saw_it);
    kt_store(&busy_stop, 1);
    kt_wait_count(&busy_done, (uint64_t)procs - 1, KT_STALL_MS);
    gomaxprocs(orig);
    printf("ktest: 2 ms sleep beside a blocking call, %d busy P(s): late by %lu us, timers handed on %lu time(s); "
           "%lu spinner(s) started beside a stalled one\n", procs - 1, late / 1000,
           kt_load(&sysmon_timer_handons) - handons, kt_load(&sched_spinner_backstops) - backstops);
    KT_ASSERT(settled);
    if (!during)
        KT_FAIL("the sleep ended only when the blocking call did");
    KT_GUEST_BOUND("2 ms sleep beside a blocking call, every core busy, lateness", late,
                   sched_quantum_ns() + 10000000);
}

// ---- the stall report's census ----------------------------------------------
//
// The wake-up chain's report counts the goroutines that want a core under
// their start function, queued or running: here the loops above.

KTEST(preempt_stall_report_counts_goroutines_by_start)
{
    enum { LOOPS = 3 };
    busy_started = busy_stop = busy_done = 0;
    for (int i = 0; i < LOOPS; i++)
        go(busy_loop, 0);
    struct kt_census c;
    kt_census(&c);
    kt_store(&busy_stop, 1);
    KT_ASSERT(kt_wait_count(&busy_done, LOOPS, KT_STALL_MS));
    uint32_t loops = 0;
    for (int i = 0; i < KT_CENSUS_FNS; i++)
        if (c.fn[i] == busy_loop)
            loops = c.n[i];
    KT_ASSERT_EQ(loops, LOOPS);
    KT_ASSERT(c.running >= 1);      // this G
    KT_ASSERT(c.running + c.runnable + c.in_call >= LOOPS + 1);
}

// ---- ... and an idle P's timer with no M to watch it ------------------------
//
// An idle P with a timer while every core is busy: no idle M watches the
// timer, and nothing ran it until some core went idle (here: until the
// call ended). sysmon's backstop gives the idle Ps' due timers to a
// running P. Each step of the set-up is forced (the idle P list is LIFO,
// and a G readied in a call goes to its head, with an idle M):
//   1. every P but two runs a call-free loop: ours (Pa) runs, one P (Pb)
//      and one M are idle;
//   2. in a call we ready the helper: it goes to Pb, the only idle P,
//      notes it and sleeps there; Pb and its M go idle again;
//   3. in a long call on Pa, sysmon retakes Pa after 10 ms (a core is
//      free, Go's rule): Pa goes to the idle list's head, over Pb;
//   4. still in the call, we ready a G that loops: it takes Pa and the
//      idle M.
// Now Pb is idle with the helper's timer and no M is idle. The sleep must
// end during the call, by a hand-on. The waits for each state spin: a
// sleep's wake-up readies us with Pb idle, and wakep starts the idle M
// spinning on Pb, so a sleeping poll sees one P and one M idle only when
// that spinner's vCPU has run since (at 256 vCPUs on 2 host CPUs, not
// once in a minute of polls). A host that holds vCPUs for longer than the
// helper's sleep spoils a round (steps 2-4 took over 200 ms at 8 vCPUs
// on 2 host CPUs, 2 s at 256): the round is tried again with the sleep
// doubled, up to the stall limit; a round whose set-up a stall ended says
// which step it did not reach. Step 1 is a busy round (kernel/ktest.h):
// its stall limit counts from the last loop that started or P taken from
// the idle list, and a core the host held starts it again. At 1024 vCPUs
// on 2 host CPUs every P took 13 minutes to get a loop, and step 1 once
// stalled for a minute five rounds in a row.

#define STRAND_SLEEP_NS 200000000ull    // well after the retake, so the watch is not what wakes it
static uint64_t strand_p, strand_woke, strand_loop_on, strand_loop_stop, strand_loop_done, strand_sleep;
static chan_t *strand_c, *strand_hc;
static struct g *strand_loop_g, *strand_helper_g;      // each round's (kt_wait_count_of)

struct chan_waiters {
    chan_t *c;
    uint32_t n;
};

static void count_on_chan(struct g *gp, void *arg)
{
    struct chan_waiters *w = arg;
    if (__atomic_load_n(&gp->status, __ATOMIC_ACQUIRE) == G_WAITING && gp->waiton == w->c)
        w->n++;
}

// A channel has no count of its receivers: their G states say it.
static uint32_t parked_on(chan_t *c)
{
    struct chan_waiters w = { c, 0 };
    g_for_each(count_on_chan, &w);
    return w.n;
}

static void strand_helper(void *arg)
{
    (void)arg;
    __atomic_store_n(&strand_helper_g, getg(), __ATOMIC_RELEASE);     // pairs with the test's acquire
    chan_recv(strand_hc, 0);
    struct m *mp = acquirem();
    kt_store(&strand_p, mp->p->id + 1);
    releasem(mp);
    sleep_ns(kt_load(&strand_sleep));
    kt_store(&strand_woke, 1);
}

// strand_loop_stop counts the rounds ended and is never reset, so a
// round's loop that runs only after its round ends still stops.
static void strand_loop(void *arg)
{
    uint64_t round = (uint64_t)(uintptr_t)arg;
    __atomic_store_n(&strand_loop_g, getg(), __ATOMIC_RELEASE);       // pairs with the test's acquire
    chan_recv(strand_c, 0);
    kt_store(&strand_loop_on, 1);
    while (__atomic_load_n(&strand_loop_stop, __ATOMIC_RELAXED) <= round)     // relaxed: a flag; call-free
        ;
    kt_add(&strand_loop_done, 1);
}

static uint64_t ms_since(uint64_t t0)
{
    return (nanotime() - t0) / 1000000;
}

static uint32_t this_p(void)
{
    struct m *mp = acquirem();
    uint32_t id = mp->p->id;
    releasem(mp);
    return id;
}

KTEST(preempt_idle_p_timer_runs_with_no_m_free)
{
    if (num_cpu() < 2)
        KT_SKIP("needs a second core, for the loop beside the call");
    int procs = num_cpu(), orig = gomaxprocs(procs);
    busy_started = busy_stop = busy_done = 0;
    kt_store(&strand_loop_done, 0);
    kt_store(&strand_loop_stop, 0);
    strand_c = chan_make(0, 0);
    strand_hc = chan_make(0, 0);
    uint64_t handons = kt_load(&sysmon_timer_handons);
    for (int i = 0; i < procs - 2; i++)
        go(busy_loop, 0);
    bool set_up = false, during = true, ended = true;
    const char *missed = "";
    int round = 0;
    for (uint64_t sleep = STRAND_SLEEP_NS; !set_up && ended && sleep <= KT_STALL_NS; sleep *= 2, round++) {
        kt_store(&strand_p, 0);
        kt_store(&strand_woke, 0);
        kt_store(&strand_loop_on, 0);
        kt_store(&strand_sleep, sleep);
        __atomic_store_n(&strand_loop_g, 0, __ATOMIC_RELAXED);      // relaxed: the go() below publishes it
        __atomic_store_n(&strand_helper_g, 0, __ATOMIC_RELAXED);    // as above
        go(strand_loop, (void *)(uintptr_t)round);
        go(strand_helper, 0);
        // 1. The loops run, the loop and the helper wait on their
        //    channels, one P and one M idle.
        uint64_t r0 = nanotime(), at[4], started = kt_load(&busy_started);
        struct kt_busy_round step1;
        kt_busy_round_begin(&step1);
        bool settled = true;
        while (started < (uint64_t)procs - 2 || SNAPSHOT(sched.npidle) != 1 || SNAPSHOT(sched.nmidle) != 1 ||
               !parked_on(strand_c) || !parked_on(strand_hc)) {
            if (kt_load(&busy_started) != started) {
                started = kt_load(&busy_started);
                kt_busy_round_moved(&step1);
            } else if (kt_busy_round_stalled(&step1)) {
                settled = false;
                break;
            }
            cpu_relax();
        }
        uint64_t end = nanotime() + (settled ? KT_STALL_NS : 0);     // a stalled round's later steps are not waited for
        at[0] = ms_since(r0);
        // 2. The helper, readied in a call, sleeps on the idle P.
        entersyscall();
        bool helper_sent = chan_try_send(strand_hc, 0);
        while (!kt_load(&strand_p) && nanotime() < end)
            cpu_relax();
        exitsyscall();
        bool helped = kt_load(&strand_p) != 0;
        if (!helper_sent)
            chan_send(strand_hc, 0);        // past the stall limit: let it go, whenever it parks
        uint32_t pb = helped ? (uint32_t)kt_load(&strand_p) - 1 : 0;
        at[1] = ms_since(r0);
        while ((SNAPSHOT(allp[pb]->status) != P_IDLE || SNAPSHOT(sched.nmidle) != 1) && nanotime() < end)
            cpu_relax();
        at[2] = ms_since(r0);
        // 3. Our P retaken in a long call, 4. the loop readied onto it.
        uint32_t pa = this_p();
        entersyscall();
        struct p *pp = allp[pa];
        while (__atomic_load_n(&pp->status, __ATOMIC_ACQUIRE) == P_SYSCALL && nanotime() < end)   // pairs with retake's CAS
            cpu_relax();
        bool sent = __atomic_load_n(&pp->status, __ATOMIC_ACQUIRE) != P_SYSCALL &&     // as above
                    chan_try_send(strand_c, 0);
        at[3] = ms_since(r0);
        uint32_t idle_ps = SNAPSHOT(sched.npidle), idle_ms = SNAPSHOT(sched.nmidle);
        uint32_t spinning = SNAPSHOT(sched.nmspinning);
        while (sent && !kt_load(&strand_loop_on) && nanotime() < end)
            cpu_relax();
        missed = !settled                                  ? "1 (one P and one M idle)"
                 : !helped                                 ? "2 (the helper on the idle P)"
                 : pa == pb || !sent                       ? "3 (our P retaken in the call)"
                 : !kt_load(&strand_loop_on)               ? "4 (the loop on our P)"
                 : kt_load(&strand_woke)                   ? "the end of the set-up before the sleep's"
                 : SNAPSHOT(allp[pa]->status) != P_RUNNING ? "4 (our P running the loop)"
                 : SNAPSHOT(allp[pb]->status) != P_IDLE    ? "2 (the helper's P idle)"
                 : SNAPSHOT(sched.nmidle)                  ? "4 (no M idle)"
                                                           : "";
        set_up = !*missed;
        if (!set_up)    // which wait a stall ended, and where the time went
            printf("ktest: idle P's timer, round %d (helper asleep %lu ms): did not reach step %s; "
                   "ms from the round's start: steps 1, 2, the helper's P idle, our P retaken at "
                   "%lu, %lu, %lu, %lu; then %u idle P(s), %u idle M(s), %u spinning\n", round,
                   sleep / 1000000, missed, at[0], at[1], at[2], at[3], idle_ps, idle_ms, spinning);
        uint64_t wake_end = nanotime() + sleep + KT_STALL_NS;
        while (!kt_load(&strand_woke) && nanotime() < wake_end)
            cpu_relax();
        during = kt_load(&strand_woke);
        exitsyscall();
        // The round's goroutines end before the next round's start: one
        // left running would hold the P that step 1 needs idle.
        ended = kt_wait_count_of(&strand_woke, 1, __atomic_load_n(&strand_helper_g, __ATOMIC_ACQUIRE),
                                 "the helper's wake-up");   // acquire: pairs with the helper's release
        kt_store(&strand_loop_stop, (uint64_t)round + 1);
        if (!sent)
            chan_send(strand_c, 0);     // the loop ends at once
        ended &= kt_wait_count_of(&strand_loop_done, (uint64_t)round + 1,
                                  __atomic_load_n(&strand_loop_g, __ATOMIC_ACQUIRE),  // as above, the loop's
                                  "the loop's end");
    }
    kt_store(&busy_stop, 1);
    kt_wait_count(&busy_done, (uint64_t)procs - 2, KT_STALL_MS);
    chan_free(strand_c);
    chan_free(strand_hc);
    gomaxprocs(orig);
    uint64_t handed = kt_load(&sysmon_timer_handons) - handons;
    printf("ktest: idle P's timer with no M free: %d round(s) to set up, timers handed on %lu time(s)\n",
           round, handed);
    if (!ended)
        KT_FAIL("round %d's helper or loop did not end", round - 1);
    if (!set_up)
        KT_FAIL("the set-up did not reach step %s with the helper asleep for %lu ms", missed,
                kt_load(&strand_sleep) / 1000000);
    if (!during)
        KT_FAIL("the idle P's timer ran only when the blocking call ended");
    KT_ASSERT(handed > 0);
}

// ---- what a blocking call may do -------------------------------------------
//
// Between entersyscall and exitsyscall the M holds no P (goro.h says what
// the call may do there): a G the call makes runnable goes to an idle P,
// whose core is woken, or to the global queue, as one an interrupt
// readies. Here a call sends to a parked receiver and unlocks a mutex a G
// waits on. Both must run; with a core and a P to spare, while the call
// still lasts.

static chan_t *call_c;
static mutex_t call_mu;
static uint64_t call_woken;

static void call_receiver(void *arg)
{
    (void)arg;
    chan_recv(call_c, 0);
    kt_add(&call_woken, 1);
}

static void call_locker(void *arg)
{
    (void)arg;
    mutex_lock(&call_mu);
    kt_add(&call_woken, 1);
    mutex_unlock(&call_mu);
}

// Sleeps until both Gs wait, the locker on the mutex and the receiver on
// the channel; false at the stall limit.
static bool call_waiters_parked(void)
{
    uint64_t end = nanotime() + KT_STALL_NS;
    while (sema_waiters(&call_mu.sema) < 1 || parked_on(call_c) < 1)
        if (nanotime() > end)
            return false;
        else
            sleep_ns(20000);
    return true;
}

KTEST(preempt_syscall_readies_through_idle_ps)
{
    int orig = gomaxprocs(num_cpu());
    call_c = chan_make(0, 0);
    memset(&call_mu, 0, sizeof call_mu);
    kt_store(&call_woken, 0);
    mutex_lock(&call_mu);
    go(call_receiver, 0);
    go(call_locker, 0);
    bool parked = call_waiters_parked();
    entersyscall();
    bool sent = chan_try_send(call_c, 0);
    mutex_unlock(&call_mu);
    // With a P idle besides ours, both run on it (or another) while we
    // are still inside; a stall limit, since the host may hold that vCPU.
    bool spare = num_cpu() > 1;
    uint64_t end = nanotime() + KT_STALL_NS;
    while (spare && kt_load(&call_woken) < 2 && nanotime() < end)
        cpu_relax();
    uint64_t during = kt_load(&call_woken);
    exitsyscall();
    bool all = kt_wait_count(&call_woken, 2, KT_STALL_MS);
    chan_free(call_c);
    gomaxprocs(orig);
    printf("ktest: readied inside a blocking call: %lu of 2 ran before it ended\n", during);
    KT_ASSERT(parked && sent && all);
    if (spare)
        KT_ASSERT_EQ(during, 2);
}

// Each is an app of its own: the fatal error ends the machine.
static int syscall_go_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("syscall_go: go() between entersyscall and exitsyscall\n");
    entersyscall();
    go(call_receiver, 0);
    exitsyscall();
    return 1;
}
GORO_APP(syscall_go, "go() inside a blocking call (expect the fatal error, exit 255)", syscall_go_main);

static int syscall_sleep_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("syscall_sleep: sleep_ns between entersyscall and exitsyscall\n");
    entersyscall();
    sleep_ns(1000);
    exitsyscall();
    return 1;
}
GORO_APP(syscall_sleep, "sleep inside a blocking call (expect the fatal error, exit 255)", syscall_sleep_main);

// ---- timers fire in order and never early ------------------------------------

#define NTIMERS 300
static struct timer tms[NTIMERS];
static uint64_t fired_when[NTIMERS], fired_at[NTIMERS];
static uint64_t nfired;

static void record(struct timer *t, uint64_t now)
{
    uint64_t k = __atomic_fetch_add(&nfired, 1, __ATOMIC_ACQ_REL);
    fired_when[k] = t->when;
    fired_at[k] = now;
}

KTEST(timers_fire_in_order_never_early)
{
    int orig = gomaxprocs(1);
    nfired = 0;
    // Not preemptible while it queues them: this P's timers run only when
    // it schedules, so none fires before all are queued and timer 7 is
    // stopped, however long the host stops this vCPU in the loop (then
    // some are overdue at once: a later one started before an earlier
    // one fired would look out of order).
    uint64_t base = arch_cycles() + arch_ns_to_cycles(100000000);
    uint64_t x = 12345;
    preempt_disable();
    for (int i = 0; i < NTIMERS; i++) {
        x = x * 6364136223846793005ull + 1;
        tms[i] = (struct timer){ .when = base + arch_ns_to_cycles((x >> 33) % 20000000), .f = record };
        timer_start(&tms[i]);
    }
    // one stopped before it fires
    bool stopped = timer_stop(&tms[7]), stopped_twice = timer_stop(&tms[7]);
    preempt_enable();
    KT_ASSERT(stopped);
    KT_ASSERT(!stopped_twice);
    {
        // all are due within 120 ms; a stall, not slowness, ends the wait
        uint64_t seen = 0, moved = nanotime();
        while (kt_load(&nfired) < NTIMERS - 1 && nanotime() - moved < KT_STALL_NS) {
            sleep_ns(1000000);
            if (kt_load(&nfired) != seen) {
                seen = kt_load(&nfired);
                moved = nanotime();
            }
        }
    }
    gomaxprocs(orig);
    KT_ASSERT_EQ(kt_load(&nfired), NTIMERS - 1);
    for (int i = 0; i < NTIMERS - 1; i++) {
        if (fired_at[i] + arch_ns_to_cycles(ktest_tsc_skew_ns()) < fired_when[i])
            KT_FAIL("timer %d fired %lu cycles early", i, fired_when[i] - fired_at[i]);
        if (i && fired_when[i] < fired_when[i - 1])
            KT_FAIL("timer %d (when %lu) fired after a later one (%lu)", i, fired_when[i], fired_when[i - 1]);
    }
}

// ---- every P idle, only a timer pending: an idle core must watch it --------

KTEST(timers_wake_an_all_idle_machine)
{
    // Nothing else runs: each sleep leaves every P idle with one timer
    // pending, which only an idle core's armed timer can deliver (sysmon
    // sleeps too): a missed timer is a hang, which the runner reports
    // with where every vCPU is. How long past 2 ms is a tail.
    uint64_t longest = 0;
    for (int i = 0; i < 20; i++) {
        uint64_t t0 = nanotime();
        sleep_ns(2000000);
        uint64_t d = nanotime() - t0;
        if (d + ktest_tsc_skew_ns() < 2000000)
            KT_FAIL("sleep %d returned after %lu us, before its 2 ms", i, d / 1000);
        longest = d > longest ? d : longest;
    }
    KT_TAIL_BOUND("2 ms sleep on an idle machine, longest", longest, 2000000000ull);
    uint64_t fired;
    uint64_t t0 = nanotime();
    chan_t *c = time_after(3000000);
    KT_ASSERT(chan_recv(c, &fired));
    KT_ASSERT(fired + ktest_tsc_skew_ns() >= t0 + 3000000);
    KT_ASSERT(nanotime() + ktest_tsc_skew_ns() >= t0 + 3000000);
    chan_free(c);
    // Tick i is due i periods after ticker_new read the clock, so start is
    // read before it: read after, a vCPU stalled in between makes a tick on
    // time look early ("tick 2 at 1788 us" once under OVMF).
    uint64_t start = nanotime(), t;
    ticker_t *tk = ticker_new(1000000);
    for (uint64_t i = 1; i <= 5; i++) {
        KT_ASSERT(chan_recv(ticker_chan(tk), &t));
        if (t + ktest_tsc_skew_ns() < start + i * 1000000)
            KT_FAIL("tick %lu at %lu us, before %lu us", i, (t - start) / 1000, i * 1000);
    }
    ticker_stop(tk);
}

// ---- debug builds: a core that keeps interrupts off is reported ------------

#ifdef GORO_DEBUG
extern uint64_t sysmon_irqoff_reports;
static uint64_t irqoff_core, irqoff_reported;

// On a core other than sysmon's (0): interrupts off until sysmon has
// reported it (20 ms at least); a fixed 20 ms went unseen when the host
// did not run core 0 meanwhile. On core 0 it only says where it ran.
static void irqoff_g(void *arg)
{
    (void)arg;
    uint64_t f = irq_save();
    if (core_id() != 0) {
        uint64_t before = kt_load(&sysmon_irqoff_reports);
        uint64_t least = nanotime() + 20000000, until = nanotime() + KT_STALL_NS;
        while ((nanotime() < least || kt_load(&sysmon_irqoff_reports) == before) && nanotime() < until)
            cpu_relax();
        kt_store(&irqoff_reported, kt_load(&sysmon_irqoff_reports) != before ? 1 : 2);
    }
    irq_restore(f);
    kt_store(&irqoff_core, (uint64_t)core_id() + 1);
}
#endif

#ifdef GORO_DEBUG
// sysmon's report on a core that keeps interrupts off comes by NMI, which
// may land while that core holds the console's lock. It must be recorded
// there and printed later (arch_report_flush), never printed from the NMI,
// which took the lock again: a lock-order panic in debug builds, a core
// spinning on its own lock otherwise. The soak found it (apps/soak); here
// the core asks itself, holding the console.
static bool report_asked;
static void report_self(void)
{
    report_asked = arch_report_cpu((uint32_t)core_id(), "asked by the test");
}
#endif

KTEST(debug_irqs_off_report_while_holding_the_console)
{
#ifndef GORO_DEBUG
    KT_SKIP("debug builds only (make DEBUG=1)");
#else
    // On a core other than 0, sysmon's debug check may flush the report
    // first (it prints every core's, whoever asked; under -icount at 2
    // vCPUs it always did): printed by either, it counts. A report of
    // sysmon's own still under way on this core drops this one: flushed,
    // then asked again.
    preempt_disable();
    uint32_t me = (uint32_t)core_id();
    uint64_t before;
    int tries = 0;
    do {
        before = arch_reports_printed(me);
        console_lock_held_for(report_self, 2000000);     // the NMI lands in here
        for (uint64_t until = nanotime() + KT_STALL_NS; arch_reports_printed(me) == before && nanotime() < until;)
            arch_report_flush(me);
    } while (!report_asked && ++tries < 10);
    preempt_enable();
    KT_ASSERT(report_asked);
    KT_ASSERT(arch_reports_printed(me) != before);
#endif
}

KTEST(debug_irqs_off_over_1ms_is_reported)
{
#ifndef GORO_DEBUG
    KT_SKIP("debug builds only (make DEBUG=1)");
#else
    if (num_cpu() < 2)
        KT_SKIP("needs a core besides sysmon's");
    // On core 0 this G holds its core, unpreemptible, so the other runs on
    // a core a wake-up sent stealing; on any other it yields its core to
    // the other, queued next there. It tries again when the other ran on
    // core 0 all the same (stolen). Holding it from core 1 left core 0 the
    // only one to steal at 2 vCPUs: under -icount, every time.
    irqoff_reported = 0;
    for (int tries = 0; tries < 20 && !kt_load(&irqoff_reported); tries++) {
        irqoff_core = 0;
        preempt_disable();
        bool hold = core_id() == 0;
        go(irqoff_g, 0);
        uint64_t until = nanotime() + 2 * KT_STALL_NS;
        while (hold && !kt_load(&irqoff_core) && nanotime() < until)
            cpu_relax();
        preempt_enable();
        KT_ASSERT(kt_wait_count(&irqoff_core, 1, KT_STALL_MS));
    }
    if (!kt_load(&irqoff_reported))
        KT_SKIP("the goroutine ran on core 0 (sysmon's) every time");
    KT_ASSERT_EQ(kt_load(&irqoff_reported), 1);
#endif
}
