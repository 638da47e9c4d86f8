// SPDX-License-Identifier: MIT
// app=soak's invariants that span programs: the goroutine and message
// ledgers, the idle-P watcher and the stall watchdog.
#include "soak.h"

// ---- goroutines: each started one completes exactly once ------------------

#define MAX_GS 8192

struct gstart {
    soak_fn fn;
    void *arg;
    uint32_t slot;
};

static uint32_t nstarted;               // slots handed out this round (atomic)
static uint32_t ndone;                  // goroutines finished this round (atomic)
static uint8_t done[MAX_GS];            // per slot: times finished (atomic)
static waitgroup_t round_wg;

static void trampoline(void *p)
{
    struct gstart s = *(struct gstart *)p;
    free(p);
    s.fn(s.arg);
    static uint32_t broken;             // break=g: once (atomic)
    if (soak_args.breakage && !strcmp(soak_args.breakage, "g") &&
        !__atomic_exchange_n(&broken, 1, __ATOMIC_RELAXED))
        __atomic_add_fetch(&done[s.slot], 1, __ATOMIC_RELAXED);
    uint8_t n = __atomic_add_fetch(&done[s.slot], 1, __ATOMIC_RELAXED);  // ordered by wg_done below
    if (n != 1)
        soak_fail("goroutine of slot %u finished %u times", s.slot, n);
    __atomic_fetch_add(&ndone, 1, __ATOMIC_RELAXED);
    soak_op(1);
    wg_done(&round_wg);
}

void soak_go(soak_fn fn, void *arg)
{
    uint32_t slot = __atomic_fetch_add(&nstarted, 1, __ATOMIC_RELAXED);
    if (slot >= MAX_GS)
        panic("soak: more than %u goroutines in one round", MAX_GS);
    struct gstart *s = malloc(sizeof *s);
    *s = (struct gstart){ fn, arg, slot };
    wg_add(&round_wg, 1);
    go(trampoline, s);
}

void soak_join(void)
{
    wg_wait(&round_wg);                 // a goroutine that never ends: the watchdog names it
    uint32_t n = __atomic_load_n(&nstarted, __ATOMIC_RELAXED);
    if (__atomic_load_n(&ndone, __ATOMIC_RELAXED) != n)
        soak_fail("round: %u goroutines started, %u finished", n, ndone);
    for (uint32_t i = 0; i < n; i++)
        if (done[i] != 1)
            soak_fail("goroutine of slot %u finished %u times", i, done[i]);
}

void ledger_reset(void)
{
    uint32_t n = nstarted < MAX_GS ? nstarted : MAX_GS;
    memset(done, 0, n);
    nstarted = ndone = 0;
}

// ---- messages: each sent one is received exactly once, intact -------------

#define MAX_MSGS (1u << 17)
static uint32_t nmsgs;                  // seqs handed out this round (atomic)
static uint32_t forgiven;               // dropped on purpose (atomic)
static uint8_t received[MAX_MSGS];      // per seq: times received (atomic)

static uint64_t msg_sum(const struct soak_msg *m)
{
    uint64_t h = 0xcbf29ce484222325ull ^ m->seq;
    h = (h ^ m->from) * 0x100000001b3ull;
    h = (h ^ m->payload) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

void msg_make(struct soak_msg *m, uint32_t from, rng_t *r)
{
    m->seq = __atomic_fetch_add(&nmsgs, 1, __ATOMIC_RELAXED);
    if (m->seq >= MAX_MSGS)
        panic("soak: more than %u messages in one round", MAX_MSGS);
    m->from = from;
    m->payload = rng_next(r);
    m->sum = msg_sum(m);
}

void msg_received(const struct soak_msg *m, const char *where)
{
    if (m->seq >= MAX_MSGS || m->sum != msg_sum(m)) {
        soak_fail("%s: a corrupt message (seq %u from %u, checksum %#lx, expected %#lx)",
                  where, m->seq, m->from, m->sum, msg_sum(m));
        return;
    }
    static uint32_t broken;             // break=msg: once (atomic)
    if (soak_args.breakage && !strcmp(soak_args.breakage, "msg") &&
        !__atomic_exchange_n(&broken, 1, __ATOMIC_RELAXED))
        return;
    uint8_t n = __atomic_add_fetch(&received[m->seq], 1, __ATOMIC_RELAXED);
    if (n != 1)
        soak_fail("%s: message seq %u received %u times", where, m->seq, n);
    soak_op(1);
}

void msg_forgive(uint32_t n)
{
    __atomic_fetch_add(&forgiven, n, __ATOMIC_RELAXED);
}

void msg_check_round(void)
{
    uint32_t n = nmsgs < MAX_MSGS ? nmsgs : MAX_MSGS, lost = 0;
    for (uint32_t i = 0; i < n; i++)
        if (received[i] == 0)
            lost++;
    if (lost != forgiven)
        soak_fail("messages: %u sent, %u never received (%u dropped on purpose)", n, lost, forgiven);
    memset(received, 0, n);
    nmsgs = forgiven = 0;
}

// ---- the idle-P watcher ---------------------------------------------------
//
// "No runnable G waits while a P idles past a bound", judged by the
// scheduler's own state. An idle P needs an idle core (M) to run it: with
// every core busy (one of them inside a blocking call, whose P sysmon
// handed off to the idle list), queued work waits for a core, by design:
// goro has one M per core where Go would start another thread. So the
// watcher looks only at moments with an idle P and an idle M both. It is
// judged by that state rather than by wall time (a host that deschedules
// a vCPU stretches any wall-clock window). From an anchor snapshot A where
// a queue holds Gs while Ps and Ms idle and no M spins, it is a lost
// wake-up when
// a later snapshot N shows, with nothing in between that could explain it:
// - the same queue still non-empty and nothing taken from it (its head, or
//   the global queue's gets, unchanged);
// - every P idle at A still idle, having run nothing, and no wake-up IPI
//   sent by anyone, and still no M spinning;
// - every P running at A has been through schedule() since (its runs
//   moved): no G readied on it can still be between its run queue and its
//   wakep.
// The bound is thus "every running P scheduled once", whatever the host.

struct snap {
    struct sched_state st;
    struct sched_stats ss;
    uint64_t gets;                      // global queue takes, all Ps
};

static void snap_take(struct snap *s)
{
    sched_state(&s->st);
    sched_stats(&s->ss);
    s->gets = s->ss.total.global_gets;
}

static bool waiting_work(const struct snap *s)
{
    if (s->st.stopping || s->st.npidle == 0 || s->st.nmidle == 0 || s->st.nmspinning != 0)
        return false;
    if (s->st.global_runq > 0)
        return true;
    for (int i = 0; i < s->st.gomaxprocs && i < SCHED_STATS_MAXP; i++)
        if (s->st.p[i].status == SCHED_P_RUNNING && s->st.p[i].runq_len > 0)
            return true;
    return false;
}

// Which queue of a stayed non-empty and untouched in n: -1 global, a P's
// index, or -2 none.
static int stuck_queue(const struct snap *a, const struct snap *n)
{
    if (a->st.global_runq > 0 && n->st.global_runq > 0 && a->gets == n->gets)
        return -1;
    for (int i = 0; i < a->st.gomaxprocs && i < SCHED_STATS_MAXP; i++)
        if (a->st.p[i].status == SCHED_P_RUNNING && n->st.p[i].status == SCHED_P_RUNNING &&
            a->st.p[i].runq_len > 0 && n->st.p[i].runq_len > 0 &&
            a->st.p[i].runq_head == n->st.p[i].runq_head)
            return i;
    return -2;
}

// Whether n shows the lost wake-up described above, from anchor a.
static bool lost_wakeup(const struct snap *a, const struct snap *n, int *q)
{
    if (!waiting_work(n) || a->st.gomaxprocs != n->st.gomaxprocs)
        return false;
    if (n->ss.total.wake_ipis != a->ss.total.wake_ipis)
        return false;
    for (int i = 0; i < a->st.gomaxprocs && i < SCHED_STATS_MAXP; i++) {
        uint8_t was = a->st.p[i].status, is = n->st.p[i].status;
        if (was == SCHED_P_IDLE && (is != SCHED_P_IDLE || n->ss.p[i].runs != a->ss.p[i].runs))
            return false;
        if (was == SCHED_P_RUNNING && is == SCHED_P_RUNNING && n->ss.p[i].runs == a->ss.p[i].runs)
            return false;
    }
    *q = stuck_queue(a, n);
    return *q != -2;
}

static bool watching;                   // atomic: cleared by watch_stop
static uint32_t watchers;               // goroutines still running (atomic)
static uint64_t snapshots, anchors;     // the watcher's counters (its own)

static void watcher(void *arg)
{
    (void)arg;
    struct snap *a = malloc(sizeof *a), *n = malloc(sizeof *n);
    bool anchored = false;
    while (__atomic_load_n(&watching, __ATOMIC_ACQUIRE)) {    // pairs with watch_stop
        snap_take(n);
        snapshots++;
        int q;
        if (anchored && lost_wakeup(a, n, &q)) {
            char where[32];
            if (q == -1)
                snprintf(where, sizeof where, "the global queue");
            else
                snprintf(where, sizeof where, "the local queue of P%d", q);
            soak_fail("a runnable G waits on %s while %d P(s) and %d M(s) idle, no M "
                      "spins, no wake-up was sent, and every running P has scheduled since",
                      where, n->st.npidle, n->st.nmidle);
            anchored = false;
        } else if (anchored && !waiting_work(n)) {
            anchored = false;
        } else if (!anchored && waiting_work(n)) {
            struct snap *t = a;
            a = n;
            n = t;
            anchored = true;
            anchors++;
        }
        sleep_ns(200000);
    }
    free(a);
    free(n);
    __atomic_fetch_sub(&watchers, 1, __ATOMIC_RELEASE);
}

// ---- the watchdog: no operation at all for this long is a hang ------------
//
// A stall limit, not a bound on speed (docs/testing.md, the hypervisor
// rule): counted from the last operation anyone completed, so a slow host
// that keeps moving never reaches it. It takes both STALL_NS of guest time
// and STALL_CHECKS looks of the watchdog's own: under TCG guest time is
// the host's, so a host that gives QEMU no CPU for two minutes (a niced
// soak on a loaded machine) moves the clock past the limit with nothing
// run at all, and the first look after it would call that a hang. Each
// look needs its core to have run; a hang is the others making no
// progress over all of them.
#define STALL_NS (120ull * 1000000000ull)
#define CHECK_NS 100000000ull
#define STALL_CHECKS (STALL_NS / CHECK_NS)
static uint64_t last_ops, last_move, quiet_checks;

static void watchdog(void *arg)
{
    (void)arg;
    last_move = nanotime();
    while (__atomic_load_n(&watching, __ATOMIC_ACQUIRE)) {    // pairs with watch_stop
        uint64_t ops = soak_ops_done(), now = nanotime();
        if (ops != last_ops) {
            last_ops = ops;
            last_move = now;
            quiet_checks = 0;
        } else if (++quiet_checks >= STALL_CHECKS && now - last_move > STALL_NS) {
            soak_fail("no operation completed for %lu s: %u of %u goroutines of the round "
                      "finished; %d goroutines exist", (unsigned long)(STALL_NS / 1000000000ull),
                      __atomic_load_n(&ndone, __ATOMIC_RELAXED),
                      __atomic_load_n(&nstarted, __ATOMIC_RELAXED), num_goroutine());
            for (uint32_t i = 0; i < nstarted && i < MAX_GS; i++)
                if (!__atomic_load_n(&done[i], __ATOMIC_RELAXED))
                    printf("soak: goroutine slot %u never finished\n", i);
            soak_give_up();
        }
        sleep_ns(CHECK_NS);
    }
    __atomic_fetch_sub(&watchers, 1, __ATOMIC_RELEASE);
}

void watch_start(void)
{
    __atomic_store_n(&watching, true, __ATOMIC_RELEASE);
    __atomic_store_n(&watchers, 2, __ATOMIC_RELEASE);
    go(watcher, 0);
    go(watchdog, 0);
}

void watch_stop(void)
{
    __atomic_store_n(&watching, false, __ATOMIC_RELEASE);   // pairs with the loops' acquire
    while (__atomic_load_n(&watchers, __ATOMIC_ACQUIRE))
        sleep_ns(1000000);
}

void watch_report(void)
{
    printf("soak: idle-P watcher: %lu snapshots, %lu with work waiting beside idle Ps\n",
           snapshots, anchors);
}
