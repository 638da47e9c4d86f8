// SPDX-License-Identifier: MIT
// Scheduler tests: conservation (every G runs exactly once), spreading by
// stealing, gomaxprocs changes mid-run, wake-ups after idle gaps, and the
// fatal reports (deadlock, stack overflow) as apps of their own.
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/page.h"
#include "lib/printf.h"
#include "lib/string.h"

// Yields until num_goroutine() <= n: the Gs a test made have gone (ones
// that just finished may still be switching out on another core), or the
// stall limit passes. At most n, not exactly: n was counted at the test's
// start, when a G of the test before it may still have been switching out
// (its vCPU descheduled by the host), and that one goes meanwhile.
static int settle_goroutines(int n)
{
    uint64_t end = nanotime() + KT_STALL_NS;
    while (num_goroutine() > n && nanotime() < end)
        gosched();
    return num_goroutine();
}

static uint64_t spin_work(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

// ---- 100,000 Gs with uneven work, each run exactly once --------------------

#define MANY 100000u
#define SPAWNERS 100u
static uint8_t ran[MANY];
static uint64_t many_done;
static uint64_t sink;

static void many_worker(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg;
    uint32_t h = i * 2654435761u;
    uint64_t work = (h % 97 == 0) ? 20000 : h % 300;     // 1 in 97 is heavy
    __atomic_fetch_add(&sink, spin_work(work), __ATOMIC_RELAXED);
    __atomic_fetch_add(&ran[i], 1, __ATOMIC_RELAXED);
    kt_add(&many_done, 1);
}

static void many_spawner(void *arg)
{
    uint32_t base = (uint32_t)(uintptr_t)arg * (MANY / SPAWNERS);
    for (uint32_t k = 0; k < MANY / SPAWNERS; k++) {
        go(many_worker, (void *)(uintptr_t)(base + k));
        if (k % 64 == 63)
            gosched();      // let the workers run: bounds live stacks
    }
}

KTEST(sched_100k_uneven_exactly_once)
{
    memset(ran, 0, sizeof ran);
    many_done = 0;
    int before = num_goroutine();
    for (uint32_t s = 0; s < SPAWNERS; s++)
        go(many_spawner, (void *)(uintptr_t)s);
    if (!kt_wait_count(&many_done, MANY, KT_STALL_MS))
        KT_FAIL("only %lu of %u goroutines finished (the count stalled)", kt_load(&many_done), MANY);
    for (uint32_t i = 0; i < MANY; i++)
        if (ran[i] != 1)
            KT_FAIL("goroutine #%u ran %u times", i, ran[i]);
    KT_ASSERT(settle_goroutines(before) <= before);
}

// ---- Gs spawned by one G run on every P -------------------------------------

#define SPREAD_BATCH 128u
static uint64_t spread_done;
static uint64_t ran_on[MAX_CPUS];

static void spread_worker(void *arg)
{
    (void)arg;
    __atomic_fetch_add(&sink, spin_work(40000), __ATOMIC_RELAXED);
    kt_add(&ran_on[core_id()], 1);
    kt_add(&spread_done, 1);
}

static bool every_other_core_ran(int skip)
{
    for (int c = 0; c < num_cpu(); c++)
        if (c != skip && kt_load(&ran_on[c]) == 0)
            return false;
    return true;
}

// The spawner spins without yielding, so only thieves run its Gs. Batches
// fit in one ring (no overflow to the global queue); the next batch comes
// once thieves have emptied the queue, while they are still busy with what
// they took, so each batch needs more cores. Batches continue until every
// other core has run one (on an overcommitted host a woken vCPU may come
// too late for a given batch), up to the stall limit, which only a core
// never woken or never stealing reaches.
KTEST(sched_spawned_by_one_run_everywhere)
{
    if (gomaxprocs(0) < 2)
        KT_SKIP("needs two Ps");
    // Above 64 the idle cores deepest in the idle list are woken only when
    // the others are all busy, which batches of short Gs never make them
    // on a host with fewer CPUs than vCPUs: sched_every_core_runs_a_spinner
    // (below) covers every core there.
    if (num_cpu() > 64)
        KT_SKIP("more than 64 cores: see sched_every_core_runs_a_spinner");
    static struct sched_stats before, after;
    spread_done = 0;
    memset(ran_on, 0, sizeof ran_on);
    sched_stats(&before);
    // Not preemptible while it spins: preempted (a spin past its quantum
    // while thieves' vCPUs are descheduled), it went to the global queue,
    // its own core ran its Gs and another core picked it up: every core ran
    // some with no steal at all.
    preempt_disable();
    int spawner_core = core_id();
    uint64_t spawned = 0, deadline = nanotime() + KT_STALL_NS;
    struct runq *mine = &getm()->p->runq;
    while (!every_other_core_ran(spawner_core) && nanotime() < deadline) {
        for (uint32_t i = 0; i < SPREAD_BATCH; i++, spawned++)
            go(spread_worker, 0);
        while (!runqempty(mine) && nanotime() < deadline)
            cpu_relax();
    }
    preempt_enable();
    if (!kt_wait_count(&spread_done, spawned, KT_STALL_MS))
        KT_FAIL("only %lu of %lu finished", kt_load(&spread_done), spawned);
    sched_stats(&after);
    for (int c = 0; c < num_cpu(); c++)
        printf("ktest: spread core %d ran %lu\n", c, kt_load(&ran_on[c]));
    printf("ktest: spread %lu Gs, steals %lu (%lu Gs), wake IPIs %lu, halts %lu\n", spawned,
           after.total.steals - before.total.steals, after.total.stolen - before.total.stolen,
           after.total.wake_ipis - before.total.wake_ipis, after.total.halts - before.total.halts);
    KT_ASSERT(after.total.steals > before.total.steals);
    for (int c = 0; c < num_cpu(); c++)
        if (c != spawner_core && kt_load(&ran_on[c]) == 0)
            KT_FAIL("core %d ran none of the %lu goroutines (stall limit)", c, spawned);
}

// ---- as many spinning Gs as cores: every core runs one -----------------------
//
// num_cpu() goroutines that spin until every core has run one of them. The
// work never runs out, so each M that finds a spinner wakes the next idle
// core (wakep), and the chain must reach every core however many there are:
// the wake-up IPIs, the idle list and stealing at any core count. (The test
// above needs thieves that keep up with the spawner's batches, which a
// 2-CPU host cannot give hundreds of vCPUs.) Counts only: the stall limit
// catches a core that is never woken.
//
// It prints the ramp-up: guest time from the burst to the last core's
// first spinner, and the longest chain of wake-ups that led to a core
// running one (struct m's wake_hops), which the host's load does not
// change (docs/performance.md); and where each woken core's hop went:
// from its hand-over to the end of its halt (the IPI and the host running
// its vCPU), then to its first spinner (the guest's own work).
static uint64_t spinner_on[MAX_CPUS], spinners_seen, spinners_stop, spinners_done, spinners_all_at;
static uint64_t spinner_hops_max, spinner_burst;
static uint64_t hop_to_wake[MAX_CPUS], hop_to_run[MAX_CPUS];  // cycles; 0: not woken in the burst

static void spinner(void *arg)
{
    uint64_t n = (uint64_t)(uintptr_t)arg;
    while (!kt_load(&spinners_stop)) {
        struct m *mp = acquirem();
        if (__atomic_exchange_n(&spinner_on[mp->id], 1, __ATOMIC_RELAXED) == 0) {   // relaxed: spinners_seen's add publishes it
            uint64_t now = cputicks();
            if (mp->wake_sent > spinner_burst && mp->woke > mp->wake_sent && now > mp->woke) {
                hop_to_wake[mp->id] = mp->woke - mp->wake_sent;     // published as spinner_on is
                hop_to_run[mp->id] = now - mp->woke;
            }
            kt_raise(&spinner_hops_max, mp->wake_hops);
            if (__atomic_add_fetch(&spinners_seen, 1, __ATOMIC_ACQ_REL) == n)    // acq_rel: as kt_add; the last core's
                kt_store(&spinners_all_at, nanotime());
        }
        releasem(mp);
        cpu_relax();
    }
    kt_add(&spinners_done, 1);
}

KTEST(sched_every_core_runs_a_spinner)
{
    int n = num_cpu();
    if (gomaxprocs(0) != n)
        KT_SKIP("gomaxprocs below the core count");
    memset(spinner_on, 0, sizeof spinner_on);
    memset(hop_to_wake, 0, sizeof hop_to_wake);
    memset(hop_to_run, 0, sizeof hop_to_run);
    kt_store(&spinners_seen, 0);
    kt_store(&spinners_done, 0);
    kt_store(&spinners_stop, 0);
    kt_store(&spinners_all_at, 0);
    static struct sched_stats before, after;
    sched_stats(&before);
    struct m *mp = acquirem();
    uint32_t hops0 = mp->wake_hops;     // the chain starts at the spawner's M
    kt_store(&spinner_hops_max, hops0);
    releasem(mp);
    uint64_t burst = nanotime();
    spinner_burst = cputicks();         // before any spinner exists
    for (int i = 0; i < n; i++)
        go(spinner, (void *)(uintptr_t)n);
    bool all = kt_wait_count(&spinners_seen, (uint64_t)n, KT_STALL_MS);
    kt_store(&spinners_stop, 1);
    if (!kt_wait_count(&spinners_done, (uint64_t)n, KT_STALL_MS))
        KT_FAIL("only %lu of %d spinners stopped", kt_load(&spinners_done), n);
    if (!all) {
        int first = 0;
        while (first < n && kt_load(&spinner_on[first]))
            first++;
        KT_FAIL("%lu of %d cores ran a spinner; core %d ran none (stall limit)", kt_load(&spinners_seen), n,
                first);
    }
    sched_stats(&after);
    printf("ktest: ramp-up: every one of %d cores ran a spinner %lu us after the burst; wake IPIs %lu, "
           "longest chain of wake-ups %lu\n", n, (kt_load(&spinners_all_at) - burst) / 1000,
           after.total.wake_ipis - before.total.wake_ipis, kt_load(&spinner_hops_max) - hops0);
    int woken = 0;
    uint64_t wake_sum = 0, run_sum = 0;
    for (int i = 0; i < n; i++) {
        if (!hop_to_wake[i])
            continue;
        hop_to_wake[woken] = hop_to_wake[i];
        hop_to_run[woken] = hop_to_run[i];
        wake_sum += hop_to_wake[woken];
        run_sum += hop_to_run[woken++];
    }
    if (woken) {
        uint64_t mhz = cputicks_hz() / 1000000;
        sort_u64(hop_to_wake, woken);
        sort_u64(hop_to_run, woken);
        printf("ktest: ramp-up hops of %d woken cores: hand-over to awake median %lu us (longest %lu us, "
               "sum %lu us), awake to a spinner median %lu us (longest %lu us, sum %lu us)\n", woken,
               hop_to_wake[woken / 2] / mhz, hop_to_wake[woken - 1] / mhz, wake_sum / mhz,
               hop_to_run[woken / 2] / mhz, hop_to_run[woken - 1] / mhz, run_sum / mhz);
    }
}

// ---- gomaxprocs changed up and down mid-run loses nothing ---------------------

#define RESIZE_G 3000u
static uint64_t resize_done;
static uint8_t resize_ran[RESIZE_G];

static void resize_worker(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg;
    for (int k = 0; k < 3; k++) {
        __atomic_fetch_add(&sink, spin_work(200 + i % 500), __ATOMIC_RELAXED);
        gosched();
    }
    __atomic_fetch_add(&resize_ran[i], 1, __ATOMIC_RELAXED);
    kt_add(&resize_done, 1);
}

KTEST(sched_gomaxprocs_resize_mid_run)
{
    int orig = gomaxprocs(0);
    int n = num_cpu();
    resize_done = 0;
    memset(resize_ran, 0, sizeof resize_ran);
    for (uint32_t i = 0; i < RESIZE_G; i++) {
        go(resize_worker, (void *)(uintptr_t)i);
        if (i % 500 == 250) {
            int want = (int)(i / 500) % 2 ? n : 1 + (int)(i / 500) % n;
            int prev = gomaxprocs(want);
            KT_ASSERT(prev >= 1 && prev <= n);
            KT_ASSERT_EQ(gomaxprocs(0), want);
        }
    }
    gomaxprocs(1);
    gomaxprocs(n);
    if (!kt_wait_count(&resize_done, RESIZE_G, KT_STALL_MS))
        KT_FAIL("only %lu of %u finished after resizes", kt_load(&resize_done), RESIZE_G);
    for (uint32_t i = 0; i < RESIZE_G; i++)
        if (resize_ran[i] != 1)
            KT_FAIL("goroutine #%u ran %u times", i, resize_ran[i]);
    KT_ASSERT_EQ(gomaxprocs(orig), n);
    KT_ASSERT_EQ(gomaxprocs(0), orig);
    KT_ASSERT_EQ(gomaxprocs(n + 1), orig);     // clamps to num_cpu()
    KT_ASSERT_EQ(gomaxprocs(0), n);
    gomaxprocs(orig);
}

// ---- bursts after idle gaps: a halted core must wake -----------------------

static uint64_t burst_done;
static uint64_t burst_spawn_ns;
static uint64_t burst_max_delay_ns;

static void burst_worker(void *arg)
{
    (void)arg;
    uint64_t d = nanotime() - __atomic_load_n(&burst_spawn_ns, __ATOMIC_ACQUIRE);
    kt_raise(&burst_max_delay_ns, d);
    __atomic_fetch_add(&sink, spin_work(500), __ATOMIC_RELAXED);
    kt_add(&burst_done, 1);
}

// The main G spawns a burst and then spins WITHOUT yielding: other cores
// run the burst once woken (wake IPIs must be sent), or, failing that, the
// spinner is preempted after its quantum and its own core runs it. It is
// not made unpreemptible: a lone G in its runnext is stolen only in a
// thief's last round, and a thief that misses it goes idle, so as in Go
// only preemption is sure to run it (seen once: 5 s in CI). Only a burst
// that never runs reaches the stall limit: CI runs several QEMUs on two
// host cores and a descheduled vCPU can take 100s of ms to run again. How
// soon a burst ran is printed, a benchmark's number.
KTEST(sched_bursts_after_idle_wake_halted_cores)
{
    if (gomaxprocs(0) < 2)
        KT_SKIP("needs two Ps");
    static struct sched_stats before, after;
    sched_stats(&before);
    burst_max_delay_ns = 0;
    int late = -1;
    uint32_t late_n = 0;
    for (int b = 0; b < 30 && late < 0; b++) {
        uint64_t gap_end = nanotime() + 2000000ull * (1 + b % 5);   // 2-10 ms idle gap
        while (nanotime() < gap_end)
            cpu_relax();
        burst_done = 0;
        uint32_t n = 1 + (uint32_t)b % 7;
        __atomic_store_n(&burst_spawn_ns, nanotime(), __ATOMIC_RELEASE);
        for (uint32_t i = 0; i < n; i++)
            go(burst_worker, 0);
        // The last one spawned sits in our runnext, which thieves take in
        // their last round, after a short backoff.
        uint64_t deadline = nanotime() + KT_STALL_NS;
        while (kt_load(&burst_done) < n) {
            if (nanotime() > deadline) {
                late = b;
                late_n = n;
                break;
            }
            cpu_relax();
        }
    }
    if (late >= 0)
        KT_FAIL("burst %d: %lu of %u ran before the stall limit while this core spun",
                late, kt_load(&burst_done), late_n);
    sched_stats(&after);
    printf("ktest: bursts: max spawn-to-run %lu us, wake IPIs %lu, halts %lu\n",
           burst_max_delay_ns / 1000, after.total.wake_ipis - before.total.wake_ipis,
           after.total.halts - before.total.halts);
    KT_ASSERT(after.total.wake_ipis > before.total.wake_ipis);
}

// ---- a close and a broadcast ready their waiters into runnext -------------
//
// Go's closechan and notifyListNotifyAll ready each waiter with goready,
// which puts it in runnext: the waiters run before Gs queued earlier, as
// every other wake-up does. goro's chan_close and cond_broadcast queued
// them at the ring's tail, behind those Gs. Here, on one P, waiters park
// on a channel (a cond), a G is queued behind them, and the closer (the
// broadcaster) parks: the first G to run must be a waiter.

#define WAKE_WAITERS 4
static chan_t *wake_c;
static cond_t wake_cond;
static mutex_t wake_mu;
static bool wake_go;                // wake_mu held
static struct g *wake_g[WAKE_WAITERS];
static uint64_t wake_order, wake_first, wake_done;

// Who ran first: 1 a waiter, 2 the G queued behind them.
static void wake_mark(uint64_t who)
{
    if (kt_load(&wake_order) == 0)
        __atomic_compare_exchange_n(&wake_first, &(uint64_t){ 0 }, who, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);    // relaxed on failure: another was first
    kt_add(&wake_order, 1);
}

static void wake_chan_waiter(void *arg)
{
    __atomic_store_n(&wake_g[(uintptr_t)arg], getg(), __ATOMIC_RELEASE);
    chan_recv(wake_c, 0);
    wake_mark(1);
    kt_add(&wake_done, 1);
}

static void wake_cond_waiter(void *arg)
{
    mutex_lock(&wake_mu);
    __atomic_store_n(&wake_g[(uintptr_t)arg], getg(), __ATOMIC_RELEASE);
    while (!wake_go)
        cond_wait(&wake_cond, &wake_mu);
    wake_mark(1);
    mutex_unlock(&wake_mu);
    kt_add(&wake_done, 1);
}

static void wake_queued(void *arg)
{
    (void)arg;
    wake_mark(2);
    kt_add(&wake_done, 1);
}

// Yields until every waiter has parked; false at the stall limit.
static bool wake_all_parked(void)
{
    uint64_t end = nanotime() + KT_STALL_NS;
    for (int i = 0; i < WAKE_WAITERS; i++)
        while (!__atomic_load_n(&wake_g[i], __ATOMIC_ACQUIRE) ||
               __atomic_load_n(&wake_g[i]->status, __ATOMIC_ACQUIRE) != G_WAITING)
            if (nanotime() > end)
                return false;
            else
                gosched();
    return true;
}

// One round: waiters of kind cond (else channel), then the wake-up.
static uint64_t wake_round(bool cond)
{
    wake_c = chan_make(0, 0);
    memset(&wake_cond, 0, sizeof wake_cond);
    memset(&wake_mu, 0, sizeof wake_mu);
    wake_go = false;
    memset(wake_g, 0, sizeof wake_g);
    wake_order = wake_first = wake_done = 0;
    for (uintptr_t i = 0; i < WAKE_WAITERS; i++)
        go(cond ? wake_cond_waiter : wake_chan_waiter, (void *)i);
    bool parked = wake_all_parked();
    go(wake_queued, 0);
    if (cond) {
        mutex_lock(&wake_mu);
        wake_go = true;
        mutex_unlock(&wake_mu);
        cond_broadcast(&wake_cond);
    } else {
        chan_close(wake_c);
    }
    kt_wait_count(&wake_done, WAKE_WAITERS + 1, KT_STALL_MS);
    chan_free(wake_c);
    return parked ? kt_load(&wake_first) : 0;
}

static uint64_t preemptions(void)
{
    static struct sched_stats st;
    sched_stats(&st);
    return st.total.preemptions;
}

// A round in which any preemption came (the host held the vCPU past the
// raised quantum, a stray due timer) may have let the queued G run first
// for that reason: it is run again, up to 3 times, then skipped.
static uint64_t wake_round_unpreempted(bool cond, bool *preempted)
{
    uint64_t first = 0;
    *preempted = true;
    for (int round = 0; round < 3 && *preempted; round++) {
        uint64_t before = preemptions();
        first = wake_round(cond);
        *preempted = preemptions() != before;
    }
    return first;
}

KTEST(sched_close_and_broadcast_ready_waiters_into_runnext)
{
    int orig = gomaxprocs(1);
    uint64_t q = sched_set_quantum_ns(1000000000);
    bool p1, p2;
    uint64_t by_close = wake_round_unpreempted(false, &p1);
    uint64_t by_broadcast = wake_round_unpreempted(true, &p2);
    sched_set_quantum_ns(q);
    gomaxprocs(orig);
    if (p1 || p2)
        KT_SKIP("a preemption came in each of 3 rounds: the host held the vCPU, or a timer came due");
    KT_ASSERT(by_close != 0 && by_broadcast != 0);          // every waiter parked
    if (by_close != 1)
        KT_FAIL("after chan_close the G queued behind the waiters ran first");
    if (by_broadcast != 1)
        KT_FAIL("after cond_broadcast the G queued behind the waiters ran first");
}

// ---- identities and counts ---------------------------------------------------

static uint64_t child_id, child_parent_seen;
static uint64_t ids_done;

static void id_child(void *arg)
{
    (void)arg;
    __atomic_store_n(&child_id, goid(), __ATOMIC_RELAXED);
    kt_add(&ids_done, 1);
}

KTEST(sched_ids_and_counts)
{
    ids_done = 0;
    uint64_t me = goid();
    KT_ASSERT(me > 0);
    int before = num_goroutine();
    uint64_t a = go(id_child, 0);
    uint64_t b = go(id_child, 0);
    KT_ASSERT(a != b && a != me && b != me);
    KT_ASSERT(num_goroutine() >= before);
    KT_ASSERT(kt_wait_count(&ids_done, 2, KT_STALL_MS));
    uint64_t seen = __atomic_load_n(&child_id, __ATOMIC_RELAXED);
    KT_ASSERT(seen == a || seen == b);
    (void)child_parent_seen;
    KT_ASSERT(settle_goroutines(before) <= before);
}

// ---- fatal reports, each an app of its own (they end the machine) ----------

static bool park_forever(struct g *gp, void *lock)
{
    (void)gp;
    (void)lock;
    return true;
}

static void sleeper(void *arg)
{
    gopark(park_forever, 0, "test: waits forever", arg);
}

static int deadlock_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    for (int i = 0; i < 3; i++)
        go(sleeper, (void *)(uintptr_t)(0x1000 + i));
    printf("deadlock: every goroutine now waits forever\n");
    gopark(park_forever, 0, "test: main waits forever", 0);
    return 0;
}
GORO_APP(deadlock, "park every goroutine (expect the deadlock report, exit 255)", deadlock_main);

__attribute__((noinline)) static uint64_t recurse(uint64_t n)
{
    volatile uint8_t pad[512];
    pad[0] = (uint8_t)n;
    return n == 0 ? pad[0] : recurse(n - 1) + pad[0];
}

static uint64_t overflow_done;
static void overflow_child(void *arg)
{
    (void)arg;
    printf("stack_overflow: recursing in goroutine %lu\n", goid());
    __atomic_fetch_add(&sink, recurse(1u << 20), __ATOMIC_RELAXED);
    kt_add(&overflow_done, 1);
}

static int stack_overflow_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    go(overflow_child, 0);
    kt_wait_count(&overflow_done, 1, KT_STALL_MS);
    return 1;
}
GORO_APP(stack_overflow, "recurse without bound in a goroutine (expect the overflow error, exit 255)",
         stack_overflow_main);
