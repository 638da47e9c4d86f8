// SPDX-License-Identifier: MIT
// The goroutine scheduler, after Go's src/runtime/proc.go.
//
// Vocabulary
//   G  a goroutine: a function with its own stack.
//   M  a core. One per core brought up, for the life of the machine; an M
//      runs Gs only while it holds a P. Each M has a g0 stack (the stack the
//      core booted on), and schedule() always runs there, never on a G's
//      stack: a G is put on a queue only after its context is saved, so no
//      other core can resume it while it still runs (Go's mcall pattern).
//   P  the right to run Gs: a local run queue, a runnext slot, a free list
//      of dead Gs. gomaxprocs Ps exist; cores without one are idle Ms.
//
// Where runnable Gs live
//   - P.runnext: the G most recently readied by the P's running G (a new
//     goroutine, a channel partner). It runs next and inherits the rest of
//     the time slice, so a producer/consumer pair ping-pongs on one core.
//   - P.runq: a 256-slot lock-free ring (kernel/runq.c); the owner puts at
//     the tail and takes at the head, thieves take half with one CAS.
//   - the global run queue (sched.lock): overflow from full rings, Gs of
//     Ps removed by gomaxprocs, preempted Gs (to the P's own ring when the
//     lock is held: only give_up_p's look waits for it, the others and a
//     preemption go elsewhere rather than spin). Every 61st time slice on a P
//     looks there first (P.globcheck counts slices down and stays due below
//     0 until the look; a runnext hand-off continues its slice, as in Go),
//     so it cannot starve behind busy local queues.
//   - the network poller (kernel/netpoll.c): Gs parked on a socket or a
//     device vector, readied by interrupts, stay there until an M polls;
//     a poll spreads them as Go's injectglist does: to idle Ps, each with
//     an M woken, the rest to the poller's queue. A time slice ends for
//     pending work as for queued Gs, and sysmon polls as Go's does.
//
// Finding work (find_runnable), in order: runnext, the local ring, the
// global queue, the netpoller (netpoll_find), then stealing: up to STEAL_ROUNDS (4) rounds over all Ps in
// a random order (kernel/steal_order.c, host-tested by tests/host/test_steal_order.c:
// a random start and a random stride coprime with gomaxprocs),
// taking half of a victim's ring; a victim's runnext only in the last
// round, after a short backoff, because its owner is probably about to
// run it.
//
// Spinning and parking. An M with a P and no work "spins" (steals) before
// it gives up. At most about half of the busy Ps may have a spinning M
// (2 * nmspinning < gomaxprocs - npidle), so idle cores do not burn the
// machine looking at each other's empty queues. The protocol that keeps
// every runnable G from being stranded while a core sleeps:
//
//   1. wakep(): a G made runnable (go, ready, a wake-up from a timer or an
//      interrupt) is published by a release store to a queue, then a full
//      fence (or by runnext's seq-cst exchange alone: wakep_after_rmw),
//      then npidle and nmspinning are read: if some P is idle and
//      no M is spinning, it claims the right to start a spinner (CAS
//      nmspinning 0 -> 1) and hands an idle P to an idle M (startm), then
//      sends that core an IPI. Only Ms taken from the idle list are sent
//      IPIs, so a busy core is never interrupted to be woken.
//   2. resetspinning(): a spinning M that finds work stops spinning and,
//      if it was the last spinner and Ps are still idle, starts another
//      (wakep's rule, after its own seq-cst decrement: wakep_after_rmw):
//      the next M picks up where it left off. Work is therefore
//      never left without either a spinner or a running M that will look
//      at it.
//   3. give_up_p(): an M with nothing to run, under sched.lock, re-checks
//      the global queue, puts its P on the idle list (npidle, seq-cst) AND
//      itself on the idle M list in the same critical section (so a waker
//      always finds an M for the P it takes), then drops spinning (a
//      seq-cst decrement), and only then re-checks every local queue (the
//      "delicate dance": a G queued after our check and before our
//      decrement saw a spinner and did not wake anyone, so we must look
//      once more after the decrement; the fence of step 1 and this
//      decrement make the two sides a Dekker pair: one of them sees the
//      other). If it finds work, it starts an M for it (possibly itself).
//      An AP's M joining the idle list for the first time (mstart) looks
//      the same way: until then a waker finds an idle P but no idle M.
//   4. stopm(): an idle M halts with interrupts enabled only between the
//      check of its nextp and the hlt (sti; hlt): a waker that sets nextp
//      and sends the IPI either is seen by the check or interrupts the hlt.
//   5. sched_backstop_spinner(), sysmon's: the counted spinner gates
//      step 1, so when no P has left the idle list for 10 ms while one is
//      counted and Ps and Ms idle beside work (its core stopped: a vCPU
//      its host does not run), one more is started for that work, as a
//      relay: finding work, it starts the next relay itself while Ps and
//      Ms idle beside queued Gs, whoever else is counted (resetspinning).
//
// Invariants of the wake-ups:
//   - sched.nmspinning counts the Ms with spinning set plus those handed a
//     P with nextspinning set that have not yet taken it; whoever raises
//     it for an M it then fails to start (no idle M) lowers it again.
//   - An M is woken with a P only from the idle lists, both taken under
//     one hold of sched.lock, so a woken M always has a P and an idle P
//     never waits with a G in its queue.
//   - At most one spinner is started for no G in particular (wakep, the
//     CAS from 0); the re-checks of steps 2 and 3 and sysmon's step 5
//     start one for work they saw, and a relay one for work still queued
//     (a chain of relays ends at the first that finds no P idle or no G
//     queued: one per idle P at most). A woken M that finds nothing gives its
//     P back.
//
// Rejected alternatives. A single global queue (contention on every
// schedule; no locality). Waking an M for every G readied (a thundering
// herd of IPIs: the spinning bound above exists to avoid it). Halting
// without giving the P back (other cores could not take over its queue).
// Putting Gs on queues from the G's own stack before switching away (a
// thief could resume the G on another core while it is still running).
//
// Lock order: enum lock_rank in arch/spinlock.h, written once there and
// checked by debug builds (sched.lock comes before the timers, gfree and
// allg locks, the allocators and the console). No scheduler lock is held
// across a context switch.
#include "kernel/sched.h"
#include "kernel/chan.h"
#include "kernel/steal_order.h"
#include "arch/arch.h"
#include "kernel/cmdline.h"
#include "kernel/debugdelay.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "kernel/timer.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/netpoll.h"

_Static_assert(CMDLINE_GOMAXPROCS_MAX == MAX_CPUS, "gomaxprocs= reaches every core");
_Static_assert(SCHED_STATS_MAXP == MAX_CPUS, "sched_stats and sched_state cover every P");
_Static_assert(STEAL_ORDER_MAXP == MAX_CPUS, "a steal order for every gomaxprocs");

struct sched sched = { .lock = SPINLOCK_INIT("sched", LOCK_RANK_SCHED) };
uint32_t scavenge_due;
struct m allm[MAX_CPUS];
struct p *allp[MAX_CPUS];

// Each P's node, for steal_order (kernel/steal_order.c): set under a
// stopped world (steal_order_reset), or at boot.
static int32_t node_of_p[MAX_CPUS];

void steal_order_reset(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        node_of_p[i] = allp[i]->node;
}

bool pset_put(uint64_t *set, uint32_t id, bool on)
{
    uint64_t bit = 1ull << (id % 64), was;
    if (on)
        was = __atomic_fetch_or(&set[id / 64], bit, __ATOMIC_SEQ_CST);    // seq-cst: see struct sched
    else
        was = __atomic_fetch_and(&set[id / 64], ~bit, __ATOMIC_SEQ_CST);  // seq-cst: see struct sched
    return !(was & bit) == on;
}

// sched_probe_marks (goro.h): insncount's markers 3 and 4 (tools/insncount)
// at the start of a look for work that found nothing local and at the halt
// it ends in, while a benchmark asks for them. A load and a branch each
// when off, on paths that are about to steal or halt.
static bool probe_marks;
#define PROBE_MARK(id)                                                                          \
    do {                                                                                        \
        if (__atomic_load_n(&probe_marks, __ATOMIC_RELAXED))    /* relaxed: a benchmark's switch */ \
            __asm__ volatile(".byte 0x0f,0x1f,0x80," #id ",0x00,0xed,0xfe" ::: "memory");     \
    } while (0)

void sched_probe_marks(bool on)
{
    __atomic_store_n(&probe_marks, on, __ATOMIC_RELAXED);      // relaxed: a benchmark's switch
}

uint64_t fastrand(struct m *mp)
{
    uint64_t x = mp->rand;      // xorshift64*
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    mp->rand = x;
    return x * 2685821657736338717ull;
}

// Owner of pp. The cold half of runqput: gp goes to pp's full ring,
// which moves half of itself (and gp) to the global queue.
__attribute__((noinline, cold)) void runqputslow(struct p *pp, struct g *gp)
{
    struct g *overflow[RUNQ_SIZE / 2 + 1];
    uint32_t n = runq_push(&pp->runq, gp, false, overflow);
    if (n == 0)
        return;                 // a thief made room meanwhile
    spin_lock(&sched.lock);
    globrunqputbatch(overflow, n);
    spin_unlock(&sched.lock);
}

// The quantum check starts over on an M that takes a P: the slice count
// it saw last may be the P's count from long ago, with the time it saw it.
// sysmon sleeps only while every P is idle, so whoever takes a P off the
// idle list wakes it (sysmon_wake), not every acquirep: most P hand-overs
// come from startm, which has woken it already.
void acquirep(struct m *mp, struct p *pp)
{
    ASSERT(mp->p == 0);
    trace_event(TR_PROC_START, 0, pp->id);
    mp->p = pp;
    pp->m = mp;
    pp->status = P_RUNNING;
    mp->tick_seen = pp->schedtick;
    mp->tick_when = arch_cycles();
}

// Hands pp (or, with pp NULL, any idle P) to an idle M and wakes its core.
// spinning: the caller has already counted the new M in sched.nmspinning.
static void startm(struct p *pp, bool spinning, bool relay)
{
    if (spinning)
        __atomic_store_n(&sched.claim_core, core_id(), __ATOMIC_RELAXED);  // relaxed: read only by a stall's report
    spin_lock(&sched.lock);
    if (!pp)
        pp = pidleget();
    struct m *nmp = pp ? mget() : 0;
    if (pp && !nmp)
        pidleput(pp);           // every core is busy: the P waits for one
    if (!nmp) {
        spin_unlock(&sched.lock);
        if (spinning)
            __atomic_fetch_sub(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);    // undo the caller's claim (step 1's CAS)
        return;
    }
    struct m *self = getm();
    nmp->nextspinning = spinning;
    nmp->nextrelay = relay;
    nmp->wake_hops = self ? self->wake_hops + 1 : 1;
    nmp->wake_sent = arch_cycles();
    __atomic_store_n(&nmp->nextp, pp, __ATOMIC_RELEASE);   // pairs with stopm's acquire
    spin_unlock(&sched.lock);
    sysmon_wake();
    if (nmp != self) {
        if (self && self->p)
            self->p->stats.wake_ipis++;
        trace_event(TR_WAKE_IPI, 0, nmp->id);
        arch_send_ipi(nmp->id, VEC_WAKE);
    }
}

// Any M, after making a G runnable, where it cannot be preempted (g0, an
// interrupt, or a G pinned by acquirem). Step 1 of the protocol: start a
// spinning M if Ps are idle and nobody spins.
//
// The fence is the submitter's half of a Dekker pair. The G was published
// by a release store (the run queue's tail or runnext, the global queue's
// lock); on x86 a later load may still pass that store. An M going idle
// does the other half: it stores npidle (pidleput, seq-cst) and drops
// nmspinning (seq-cst RMW), then re-checks every run queue (step 3).
// Without the fence both sides could miss each other: this M reads
// npidle == 0 or nmspinning != 0 from before the idle M's stores, the idle
// M reads the queue from before this M's store, and the G waits while
// cores halt. (Go's amd64 atomic stores are XCHG, a full barrier, so its
// runqput carries the fence.)
void wakep(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);    // store(G) -> load(npidle, nmspinning): see above
    wakep_after_rmw();
}

// wakep for a caller that published its G with a seq-cst read-modify-write
// (runqput into runnext: its exchange). That is the submitter's half of
// the pair already, as Go's runqput's atomic store is, and on x86 a
// locked instruction orders every later load after it: no fence again.
void wakep_after_rmw(void)
{
    if (__atomic_load_n(&sched.npidle, __ATOMIC_SEQ_CST) == 0)   // pairs with pidleput's seq-cst store
        return;
    uint32_t zero = 0;
    if (__atomic_load_n(&sched.nmspinning, __ATOMIC_RELAXED) != 0 ||     // ordered by the caller's fence or RMW; the CAS decides
        !__atomic_compare_exchange_n(&sched.nmspinning, &zero, 1, false, __ATOMIC_SEQ_CST,   // claims the spinner: pairs with step 3's decrement
                                     __ATOMIC_RELAXED))                 // relaxed: someone else spins, nothing to do
        return;
    // The claim stops every other wakep until startm hands it to an M: a
    // caller preempted here would keep it, and idle Ps idle, for as long
    // as it waits in a run queue.
    ASSERT(preempt_count() || !irqs_enabled() || !getm()->curg);
    startm(0, true, false);
}

static bool idle_beside_work(void);
static void startm_for_work(bool relay);

// Step 2: a spinner that found work hands the baton on. A relay (step 5)
// hands it on for work still queued even while another spinner is
// counted: that one may be the stalled one step 5 started it beside, and
// the relay then takes the idle Ps one hop at a time, not one sysmon
// look at a time.
static void resetspinning(struct m *mp)
{
    bool relay = mp->relay;
    mp->spinning = false;
    mp->relay = false;
    uint32_t left = __atomic_sub_fetch(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);   // seq-cst: ordered with wakep's CAS and fence; the RMW is wakep's fence
    if (left == 0) {
        wakep_after_rmw();
    } else if (relay && idle_beside_work()) {
        __atomic_fetch_add(&sched_spinner_relays, 1, __ATOMIC_RELAXED);   // a count tests read
        startm_for_work(true);
    }
}

// How an idle core waits (idle= on the command line). A waker stores
// nextp before its IPI, so mwait and poll wake on the store itself, hlt on
// the IPI; all three return with interrupts off and the caller re-checks.
static enum idle_policy idle_how = IDLE_HLT;

static void idle_wait(struct m *mp)
{
    if (idle_how == IDLE_MWAIT)
        arch_idle_mwait(&mp->nextp);
    else if (idle_how == IDLE_POLL)
        arch_idle_poll(&mp->nextp);
    else
        arch_idle_halt();
    mp->woke = arch_cycles();
}

// A timer of an idle P is due and this idle M watched for it: take an
// idle P and go run it (find_runnable runs due timers, and steals overdue
// ones from other Ps). False when a waker already claimed this M.
static bool take_p_for_timers(struct m *mp)
{
    spin_lock(&sched.lock);
    struct p *pp = mp->idle ? pidleget() : 0;
    if (pp) {
        struct m **link = &sched.midle;
        while (*link != mp)
            link = &(*link)->schedlink;
        *link = mp->schedlink;
        sched.nmidle--;
        mp->idle = false;
    }
    spin_unlock(&sched.lock);
    if (!pp)
        return false;
    acquirep(mp, pp);
    sysmon_wake();              // the P left the idle list: nobody else woke it
    mp->spinning = true;
    __atomic_fetch_add(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);     // a spinner, as startm's; undone in step 2 or 3
    return true;
}

// Step 4: the M waits, halted, until a waker hands it a P (or a timer it
// watches comes due). Returns holding a P.
void stopm(struct m *mp)
{
    struct p *pp;
    ASSERT(!irqs_enabled());
    for (;;) {
        if ((pp = __atomic_exchange_n(&mp->nextp, 0, __ATOMIC_ACQUIRE))) {   // pairs with startm's release
            acquirep(mp, pp);
            mp->spinning = mp->nextspinning;
            mp->relay = mp->nextrelay;
            mp->nextrelay = false;
            break;
        }
        uint64_t next = timers_next();
        if (next && next <= arch_cycles() && take_p_for_timers(mp))
            break;
        core_arm_idle(mp);
        trace_event(TR_IDLE, 0, 0);
        PROBE_MARK(0x04);
        idle_wait(mp);
        trace_event(TR_WAKE, 0, 0);
    }
    core_leave_idle(mp);
    core_rearm(mp, arch_cycles());
}

// A stop-the-world is pending: hand our P over and wait.
static void stw_stopm(struct m *mp)
{
    spin_lock(&sched.lock);
    if (mp->spinning) {
        mp->spinning = false;
        mp->relay = false;
        __atomic_fetch_sub(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);   // the world stops: no re-check needed
    }
    struct p *pp = mp->p;
    pp->status = P_STOPPED;
    pp->m = 0;
    mp->p = 0;
    trace_event(TR_PROC_STOP, 0, pp->id);
    mput(mp);
    __atomic_fetch_sub(&sched.stopwait, 1, __ATOMIC_RELEASE);  // pairs with stop_the_world's acquire
    spin_unlock(&sched.lock);
    stopm(mp);
}

// One steal attempt on victim; last: the final round, which may take its
// runnext. Runs victim's overdue timers first (they ready Gs onto pp).
static struct g *steal_from(struct p *pp, struct p *victim, bool last)
{
    uint64_t vt = __atomic_load_n(&victim->timer0, __ATOMIC_ACQUIRE);     // pairs with timer0_update's release
    if (vt && vt <= arch_cycles() && timers_run(victim, arch_cycles())) {
        bool inherit;
        struct g *gp = runqget(&pp->runq, &inherit);
        if (gp)
            return gp;
    }
    pp->stats.steal_attempts++;
    if (last && runq_len(&victim->runq) == 1 &&
        __atomic_load_n(&victim->runq.runnext, __ATOMIC_RELAXED)) {   // a hint: runqsteal's CAS decides
        // Only runnext is left, and its owner will probably run it any
        // moment: give it about 3 us before taking it away.
        uint64_t until = arch_cycles() + arch_ns_to_cycles(3000);
        while (arch_cycles() < until)
            cpu_relax();
    }
    uint32_t before = runq_len(&pp->runq);
    struct g *gp = runqsteal(&pp->runq, &victim->runq, last);
    if (gp) {
        pp->stats.steals++;
        pp->stats.stolen += 1 + runq_len(&pp->runq) - before;
        trace_event(TR_STEAL, 1 + runq_len(&pp->runq) - before, victim->id);
        if (victim->node == pp->node)
            pp->stats.steals_local++;
        else
            pp->stats.steals_remote++;
    }
    return gp;
}

// The victims of one stealing round for pp, as P indexes in visit order
// (kernel/steal_order.h); steal=numa (the default) orders them by node when
// there is more than one. Returns how many it wrote.
uint32_t steal_victims(const struct p *pp, uint64_t r, bool all, struct steal_scratch *s)
{
    static const uint64_t none[STEAL_ORDER_WORDS];     // all: no P counts as idle
    uint32_t start, inc;
    enum steal_policy policy = __atomic_load_n(&kparams.steal, __ATOMIC_RELAXED);     // relaxed: a setting, no data behind it (sched_set_steal_by_node)
    bool by_node = policy == STEAL_NUMA && numa_nodes() > 1;
    uint32_t n = steal_candidates(all ? none : sched.pidle_set, all ? none : sched.ptimer_set,
                                  __atomic_load_n(&sched.gomaxprocs, __ATOMIC_RELAXED),   // relaxed: changes under a stopped world only
                                  pp->id, s->cand);
    steal_pick(n, r, &start, &inc);
    return steal_order(s->cand, n, start, inc, by_node, node_of_p, numa_nodes_by_distance(pp->node),
                       by_node ? numa_nodes() : 1, s->victims);
}

bool sched_set_steal_by_node(bool by_node)
{
    // relaxed: a setting with no data behind it; each round reads it afresh (steal_victims)
    enum steal_policy old = __atomic_exchange_n(&kparams.steal, by_node ? STEAL_NUMA : STEAL_FLAT,
                                                __ATOMIC_RELAXED);
    return old == STEAL_NUMA;
}

// Up to STEAL_ROUNDS rounds; steal=numa (the default) orders each round by node
// when there is more than one.
static struct g *steal_work(struct m *mp, struct p *pp)
{
    uint32_t *victims = mp->steal->victims;
    uint64_t t0 = arch_cycles();
    struct g *gp = 0;
    // Nothing to look at: every other P idle and none with timers. Hints
    // (a P woken meanwhile runs its own work), read once, as Go's
    // stealWork reads idlepMask: an idle machine's look costs the same
    // at any gomaxprocs.
    uint32_t others_busy = sched.gomaxprocs - 1 - __atomic_load_n(&sched.npidle, __ATOMIC_RELAXED);   // a hint (above)
    uint32_t others_timers = __atomic_load_n(&sched.nptimer, __ATOMIC_RELAXED) -                      // a hint (above)
                             (uint32_t)(__atomic_load_n(&pp->timer0, __ATOMIC_RELAXED) != 0);           // a hint (above)
    if (!others_busy && !others_timers)
        return 0;
    for (int round = 0; round < STEAL_ROUNDS && !gp; round++) {
        uint32_t nv = steal_victims(pp, fastrand(mp), false, mp->steal);
        for (uint32_t i = 0; i < nv && !gp; i++) {
            if (__atomic_load_n(&sched.stw_pending, __ATOMIC_ACQUIRE))   // pairs with stop_the_world's store
                goto out;
            gp = steal_from(pp, allp[victims[i]], round == STEAL_ROUNDS - 1);
        }
    }
out:
    pp->stats.spin_cycles += arch_cycles() - t0;
    return gp;
}

// Any context (a G whose M holds no P, an interrupt handler, sysmon), or
// the owner of pp when pp is not NULL. list: Gs made runnable outside any
// P's scheduling (G_RUNNABLE, with their GoUnpark traced by whoever readied
// them), linked by schedlink, oldest first. Go's injectglist: each idle P
// for which an idle M is free gets the next G in its queue, and that M is
// woken to run it; what is left goes to pp's queue, or with pp NULL to the
// global queue's tail (an M looks there before it halts, and every time
// slice ends while it is not empty: preempt.c). The idle P and its M are
// paired under one hold of sched.lock, so a P never waits on the idle list
// with a G in its queue. The Ms are woken after the lock, a batch at a
// time (a frame holding one per core would not fit at 1024 cores).
#define INJECT_BATCH 16
void injectglist(struct g *list, struct p *pp)
{
    struct m *woken[INJECT_BATCH];
    uint32_t nwoken, total = 0;
    struct m *self = getm();
    do {
        nwoken = 0;
        spin_lock(&sched.lock);
        while (list && sched.pidle && sched.midle && nwoken < INJECT_BATCH) {
            struct g *gp = list;
            list = gp->schedlink;
            struct p *ip = pidleget();
            struct m *nmp = mget();
            bool put = runq_push_fast(&ip->runq, &gp, false);   // ours until nextp hands it on; empty, so it fits
            ASSERT(put);
            nmp->nextspinning = false;
            nmp->wake_hops = self ? self->wake_hops + 1 : 1;
            nmp->wake_sent = arch_cycles();
            __atomic_store_n(&nmp->nextp, ip, __ATOMIC_RELEASE);   // pairs with stopm's acquire
            woken[nwoken++] = nmp;
        }
        bool more = list && nwoken == INJECT_BATCH;    // more idle pairs may be left: another batch
        while (list && !pp && !more) {
            struct g *gp = list;
            list = gp->schedlink;
            globrunqput(gp);
        }
        spin_unlock(&sched.lock);
        for (uint32_t i = 0; i < nwoken; i++) {
            if (woken[i] == self)
                continue;           // an idle M's own interrupt: stopm looks at nextp next
            trace_event(TR_WAKE_IPI, 0, woken[i]->id);
            arch_send_ipi(woken[i]->id, VEC_WAKE);
        }
        total += nwoken;
    } while (list && nwoken == INJECT_BATCH);
    if (total)
        sysmon_wake();
    while (list) {
        struct g *gp = list;
        list = gp->schedlink;
        runqput(pp, gp, false);
    }
}

// After dropping spinning (give_up_p): a G on any P's queue? Only Ps off
// the idle list can have one (pidleput asserts an empty queue, and only
// a P's holder queues on it), so the idle ones are skipped a word at a
// time. A P taken off the idle list after its bit is read here was taken
// after this M's seq-cst decrement of nmspinning: whoever queues a G on
// it then sees that decrement in wakep (its fence) and wakes a spinner.
static bool any_local_work(void)
{
    uint32_t nprocs = sched.gomaxprocs;
    if (__atomic_load_n(&sched.npidle, __ATOMIC_SEQ_CST) == nprocs)    // seq-cst: after the decrement; every P idle, every queue empty
        return false;
    for (uint32_t k = 0; k * 64 < nprocs; k++) {
        uint64_t busy = ~__atomic_load_n(&sched.pidle_set[k], __ATOMIC_SEQ_CST);   // seq-cst: after the decrement (above)
        if (nprocs - k * 64 < 64)
            busy &= (1ull << (nprocs - k * 64)) - 1;
        for (; busy; busy &= busy - 1)
            if (!runqempty(&allp[k * 64 + (uint32_t)__builtin_ctzll(busy)]->runq))
                return true;
    }
    return false;
}

// Ps and Ms idle beside queued Gs (step 5's and its relays' condition).
// Relaxed, each a hint: startm takes what sched.lock says is idle.
static bool idle_beside_work(void)
{
    return __atomic_load_n(&sched.npidle, __ATOMIC_RELAXED) &&             // relaxed: a hint (above)
           __atomic_load_n(&sched.nmidle, __ATOMIC_RELAXED) &&             // relaxed: a hint (above)
           (__atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED) || any_local_work());   // relaxed: a hint (above)
}

// An M going idle saw work after publishing itself idle (step 3, mstart):
// a spinner for it, possibly this very M (its stopm then returns at once).
static void startm_for_work(bool relay)
{
    __atomic_fetch_add(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);   // counted for startm's M, as wakep's CAS does
    startm(0, true, relay);
}

// sysmon's look (core 0's timer interrupt): the backstop of step 1's
// single spinner. While one M is counted spinning, wakep starts no other,
// and only the last spinner hands the baton on; if the counted one stops
// (its core not run by its host, or handed a P and never woken), idle Ps
// stay idle beside queued Gs for as long, while busy Ps that spin and
// find work leave the count above zero. So when no P has left the idle
// list for 10 ms (sched_backstop_stall_ns) while a spinner is counted and
// Ps and Ms idle beside work, one more spinner is started, a relay that
// starts the next itself (resetspinning): one look wakes every idle P
// the queued Gs need (Go's sysmon has no such look). A hop of the baton
// on hardware takes microseconds, so there it acts for stopped cores
// only; an extra spinner costs one core a look. A stalled core 0 stalls
// sysmon too.
uint64_t sched_backstop_stall_ns = 10000000;     // atomic, relaxed: a test may lengthen it
uint64_t sched_spinner_backstops, sched_spinner_relays;

bool sched_backstop_spinner(uint64_t now)
{
    static uint64_t gets_seen, since;       // sysmon's own
    static bool counted_seen;
    uint64_t gets = __atomic_load_n(&sched.pidle_gets, __ATOMIC_RELAXED);   // relaxed: a progress count
    bool counted = __atomic_load_n(&sched.nmspinning, __ATOMIC_RELAXED) != 0;    // relaxed: a hint, as below
    // The stall counts from the first look that saw a spinner counted and
    // this many Ps taken: one counted after sysmon slept started just now.
    if (gets != gets_seen || !counted || !counted_seen) {
        gets_seen = gets;
        counted_seen = counted;
        since = now;
        return false;
    }
    if (now - since < arch_ns_to_cycles(__atomic_load_n(&sched_backstop_stall_ns, __ATOMIC_RELAXED)) ||   // relaxed: a setting
        !idle_beside_work() ||
        __atomic_load_n(&sched.stw_pending, __ATOMIC_RELAXED))           // relaxed: a hint, as idle_beside_work's
        return false;
    since = now;
    __atomic_fetch_add(&sched_spinner_backstops, 1, __ATOMIC_RELAXED);     // a count tests read
    startm_for_work(true);
    return true;
}

// Step 3 of the protocol: mp, holding a P, found nothing to run. Under
// sched.lock it looks at the global queue once more and, finding nothing,
// puts its P on the idle list and itself on the idle M list in the same
// critical section (a waker that takes the P then always finds an M).
// Then, if it was spinning, it stops (the seq-cst decrement) and only then
// looks at every local queue again: a G queued after the steal and before
// the decrement saw a spinner and woke nobody (wakep's fence and this
// decrement are the two halves of that handshake), so this look is the
// G's only chance. Every idling M, spinning or not, looks at the
// netpoller's pending work again the same way (after its seq-cst
// pidleput): its poster has no P that would poll. Work found here gets a
// spinner, possibly this M. Returns true with the P given up (the caller
// waits in stopm), false with the P kept: *found is a G of the global
// queue to run, or NULL to look again (a stop-the-world or work for the
// netpoller).
static bool give_up_p(struct m *mp, struct g **found)
{
    struct p *pp = mp->p;
    spin_lock(&sched.lock);
    if (sched.stw_pending) {
        spin_unlock(&sched.lock);
        return false;
    }
    if (sched.runq_size) {
        *found = globrunqget(pp, 0);
        spin_unlock(&sched.lock);
        return false;
    }
    if (netpoll_pending()) {
        spin_unlock(&sched.lock);
        return false;
    }
    pp->stats.halts++;
    pp->m = 0;
    mp->p = 0;
    trace_event(TR_PROC_STOP, 0, pp->id);
    pidleput(pp);               // npidle++, seq-cst: wakep's fence pairs with it
    mput(mp);
    checkdead();
    spin_unlock(&sched.lock);
    bool was_spinning = mp->spinning;
    if (was_spinning) {
        mp->spinning = false;
        mp->relay = false;
        __atomic_fetch_sub(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);  // full barrier before the re-check; pairs with wakep's fence
    }
    // Netpoller work posted after the look above: its poster's wakep
    // read npidle before our pidleput, or it started an M. So every M
    // that idles looks again after its (seq-cst) pidleput, spinning or
    // not; only a spinner looks at the local queues again (step 3).
    if ((was_spinning && any_local_work()) || netpoll_pending()) {
        startm_for_work(false);
    }
    return true;
}

// Blocks until there is a G to run; returns it with mp holding a P.
// *inherit: the G came from runnext and continues the time slice.
static struct g *find_runnable(struct m *mp, bool *inherit)
{
    struct g *gp;
top:
    *inherit = false;
    struct p *pp = mp->p;
    if (__atomic_load_n(&sched.stw_pending, __ATOMIC_ACQUIRE)) {         // pairs with stop_the_world's store
        stw_stopm(mp);
        goto top;
    }
    timers_run(pp, arch_cycles());
    // The look is decided for the P held now: stopm may have handed this
    // M another one since the last pass.
    bool global_first = pp->globcheck <= 0;
    if (global_first)
        pp->globcheck = GLOBAL_CHECK_PERIOD;
    // Every 61st time slice the netpoller and the global queue come before
    // the local queue, so a P whose Gs keep yielding to each other cannot
    // starve them.
    if (global_first && netpoll_pending() && (gp = netpoll_find(pp)))
        return gp;
    // These two looks do not wait for sched.lock: a P with its own Gs, or
    // Gs to steal, runs those instead, and the look that decides whether
    // the P idles (give_up_p) waits for the lock. A held lock leaves the
    // first look due.
    if (global_first && __atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED)) {   // a hint: the lock decides
        if (spin_trylock(&sched.lock)) {
            gp = globrunqget(pp, 1);
            spin_unlock(&sched.lock);
            if (gp)
                return gp;
        } else {
            pp->globcheck = 0;
        }
    }
    if ((gp = runqget(&pp->runq, inherit)))
        return gp;
    if (__atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED) && spin_trylock(&sched.lock)) {   // a hint: the lock decides
        gp = globrunqget(pp, 0);
        spin_unlock(&sched.lock);
        if (gp)
            return gp;
    }
    // The netpoller (kernel/netpoll.c, step 4): polled without waiting
    // when it has work nobody took, before stealing.
    if (netpoll_pending() && (gp = netpoll_find(pp)))
        return gp;
    PROBE_MARK(0x03);
    // At most about half the busy Ps spin.
    uint32_t busy = sched.gomaxprocs - __atomic_load_n(&sched.npidle, __ATOMIC_RELAXED);   // heuristic: racy
    if (mp->spinning || 2 * __atomic_load_n(&sched.nmspinning, __ATOMIC_RELAXED) < busy) {  // heuristic: racy
        if (!mp->spinning) {
            mp->spinning = true;
            __atomic_fetch_add(&sched.nmspinning, 1, __ATOMIC_SEQ_CST);   // seen by wakep: no new spinner while one looks
        }
        if (cpu_index() != 0)       // core 0 runs sysmon, which a stall there stops too
            DEBUG_DELAY_ONE(spinner_look);
        if ((gp = steal_work(mp, pp)))
            return gp;
    }

    // Idle time is when the stack-fault spares are topped up (go() does it
    // too) and, when sysmon says so, dead Gs' grown stacks are trimmed.
    if (mp->nspare < M_SPARE_PAGES)
        stack_spares_refill(mp);
    if (__atomic_load_n(&scavenge_due, __ATOMIC_RELAXED) &&         // a hint; the exchange decides
        __atomic_exchange_n(&scavenge_due, 0, __ATOMIC_ACQUIRE))     // pairs with sysmon's store; one M takes it
        stack_scavenge(256);
    struct g *found = 0;
    if (!give_up_p(mp, &found)) {
        if (found)
            return found;
        goto top;
    }
    stopm(mp);
    goto top;
}

// g0 only: everything that is not a G in the local queue on a quiet P.
void schedule_slow(struct m *mp)
{
    bool inherit;
    struct g *gp = find_runnable(mp, &inherit);
    if (mp->spinning)
        resetspinning(mp);
    execute(mp, gp, inherit);
}

// The entry for Ms that may be spinning (one just handed a P by startm)
// and for callers outside the mcall targets.
void schedule(void)
{
    struct m *mp = getm();
    ASSERT(mp->curg == 0 && preempt_count() == 0);
    if (mp->spinning)
        schedule_slow(mp);
    schedule_m(mp);
}

// The fatal errors of a G that breaks goro.h's rules for pinned code:
// what it called, and from where (chan_fatal's form).
void sched_fatal_pinned(const char *what, void *pc)
{
    char msg[192];
    snprintf(msg, sizeof msg, "%s with the preempt count held (inside preempt_disable or "
             "between entersyscall and exitsyscall)", what);
    chan_fatal(msg, pc);
}

void sched_fatal_without_p(const char *what, void *pc)
{
    char msg[192];
    snprintf(msg, sizeof msg, "%s between entersyscall and exitsyscall (the goroutine's "
             "M holds no P there)", what);
    chan_fatal(msg, pc);
}

// From a G: saves it and runs fn(gp) on this M's g0 stack, where fn
// starts with dropg. Interrupts go off before the M is read, so the G
// cannot move to another core in between.
void mcall(void (*fn)(struct g *))
{
    if (__builtin_expect(preempt_count() != 0, 0))
        sched_fatal_pinned("a switch (gosched, goexit)", __builtin_return_address(0));
    irq_disable();
    struct m *mp = getm();
    struct g *gp = mp->curg;    // never NULL on a G: page 0 is unmapped, &gp->rsp would fault
    arch_mcall(&gp->rsp, mp->g0_top, (void (*)(void *))fn, gp);   // returns when gp is resumed
}

static void wake_ipi(uint8_t vector)
{
    (void)vector;       // waking the hlt was the point; stopm re-checks nextp
}

void sched_init(uint32_t ncpu, uint32_t nprocs, uint64_t seed, bool random_runnext)
{
    ASSERT(ncpu >= 1);
    if (nprocs == 0 || nprocs > ncpu)
        nprocs = ncpu;
    sched.ncpu = ncpu;
    sched.seed = seed;
    sched.random_runnext = random_runnext;
    arch_set_irq_handler(VEC_WAKE, wake_ipi);
    idle_how = kparams.idle;
    if (idle_how == IDLE_MWAIT && !arch_simd_enabled) {
        kprintf("sched: idle=mwait needs simd=on here (MONITOR kills this machine's PVM guests); using hlt\n");
        idle_how = IDLE_HLT;
    } else if (idle_how == IDLE_MWAIT && !arch_has_mwait()) {
        kprintf("sched: idle=mwait: this CPU has no MONITOR/MWAIT; using hlt\n");
        idle_how = IDLE_HLT;
    }
    preempt_init();
    sysmon_init();
    for (uint32_t i = 0; i < ncpu; i++) {
        struct m *mp = &allm[i];
        mp->id = i;
        mp->rand = seed ^ (0x9E3779B97F4A7C15ull * (i + 1));
        if (!mp->rand)
            mp->rand = 1;
        mp->g0_top = arch_cpu(i)->stack_top;
        arch_cpu(i)->m = mp;
        for (; mp->nspare < M_SPARE_PAGES; mp->nspare++)
            mp->spare[mp->nspare] = page_alloc_node(1, numa_core_node(i));
        mp->steal = page_alloc_node((sizeof *mp->steal + PAGE_SIZE - 1) / PAGE_SIZE, numa_core_node(i));
    }
    spin_lock(&sched.lock);
    sched.gomaxprocs = nprocs;
    trace_event(TR_GOMAXPROCS, 0, nprocs);
    // Each P, its run queue with it, lives on the node of the core it
    // starts on (P i on core i): P i's Gs and their stacks come from there.
    // One P per core: gomaxprocs never exceeds the core count.
    _Static_assert(sizeof(struct p) <= PAGE_SIZE, "a P fits in a page");
    for (uint32_t i = 0; i < ncpu; i++) {
        int node = numa_core_node(i % ncpu);
        allp[i] = page_alloc_node(1, node);     // zeroed
        allp[i]->node = node;
    }
    for (uint32_t i = 0; i < nprocs; i++) {
        allp[i]->id = i;
        allp[i]->globcheck = GLOBAL_CHECK_PERIOD;
        runq_init(&allp[i]->runq);
        if (i > 0)
            pidleput(allp[i]);
    }
    for (uint32_t i = ncpu; i-- > nprocs;) {
        allp[i]->id = i;
        allp[i]->status = P_DEAD;
    }
    steal_order_reset(nprocs);
    acquirep(&allm[0], allp[0]);
    spin_unlock(&sched.lock);
    static const char *const idle_names[] = { "hlt", "mwait", "poll" };
    kprintf("sched: %u cores, gomaxprocs=%u, seed=%lu%s, idle=%s\n", ncpu, nprocs, seed,
            random_runnext ? " (randomized runnext)" : "", idle_names[idle_how]);
}

// Every core but the boot core, once: idle until handed a P.
void mstart(void)
{
    struct m *mp = getm();
    irq_disable();
    spin_lock(&sched.lock);
    mput(mp);
    // This may be the last M to go idle: an AP that comes up after the
    // app's only goroutine blocked for good (chan-nil-recv on 2 vCPUs hung
    // with no deadlock report). Go's mput checks the same way.
    checkdead();
    spin_unlock(&sched.lock);
    // A G made runnable before the mput above may have found an idle P but
    // no idle M (startm put the P back), and its waker woke nobody: look
    // once, as a spinner going idle does (step 3). A startm after the mput
    // found this M; one before it published its G and its P under
    // sched.lock, so the look sees both.
    if (__atomic_load_n(&sched.npidle, __ATOMIC_SEQ_CST) &&       // after the lock: any P put back is seen
        (__atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED) || any_local_work() || netpoll_pending()))   // relaxed: ordered by the lock
        startm_for_work(false);
    stopm(mp);
    schedule();
}
