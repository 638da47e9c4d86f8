// SPDX-License-Identifier: MIT
// The scheduler's data: G, M, P and the global scheduler state.
// The design essay is at the top of kernel/proc.c.
#ifndef GORO_SCHED_H
#define GORO_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/arch.h"
#include "goro.h"
#include "kernel/runq.h"
#include "kernel/timer.h"
#include "kernel/trace.h"

// A read of a field other cores write, for a display or statistics (the
// shell, sched_state, sysmon's dump), without stopping them: a snapshot
// that may be a few events apart from the next one, as Go's schedtrace.
// Nothing is ordered by it, so nothing may be concluded from it but the value.
#define SNAPSHOT(lvalue) __atomic_load_n(&(lvalue), __ATOMIC_RELAXED)   // relaxed: a value to show, nothing behind it

// G states, defined by who owns the G and its stack.
enum gstatus {
    G_IDLE,         // just allocated, never run: owned by its allocator
    G_RUNNABLE,     // on a run queue (or in hand between queue and execute);
                    // not executing; nobody runs on its stack
    G_RUNNING,      // executing on g->m, which owns it and its stack
    G_WAITING,      // parked: owned by whatever will ready it (a channel,
                    // a timer, an interrupt); its stack is not in use
    G_SYSCALL,      // inside entersyscall/exitsyscall: owns its M, which holds
                    // no P meanwhile (its P may be handed to another M)
    G_DEAD,         // exited: on a free list, stack kept for reuse
};

// P states, changed only under sched.lock (except P_RUNNING -> the owner).
enum pstatus {
    P_IDLE,         // on sched.pidle, no M
    P_RUNNING,      // held by p->m, which runs Gs with it
    P_SYSCALL,      // held by no M: the M that left it runs a G inside a blocking
                    // call and takes it back at exitsyscall unless sysmon, a
                    // stop-the-world or another M leaving a call took it first (a CAS)
    P_STOPPED,      // taken by a stop-the-world
    P_DEAD,         // beyond gomaxprocs
};

// Each G owns G_STACK_SLOT bytes of the stack region: an unmapped guard
// page at the bottom, its stack, and its own struct g in the top page.
// Only that top page is mapped when the G is made; the rest is mapped on
// first touch by the page-fault handler, from the faulting core's node.
// A parked G therefore costs one page plus its share of a page table
// (4096 / (2 MiB / G_STACK_SLOT) = 512 bytes): 4.5 KiB, struct g included.
#define G_STACK_SLOT (256u * 1024)
#define G_STACK_GUARD 4096u
#define G_RECORD_SIZE ((sizeof(struct g) + 63) & ~(size_t)63)
#define M_SPARE_PAGES 8
#define GFREE_LOCAL_MAX 64

struct m;
struct p;
struct timer;

struct g {
    // set by its creator (g_alloc), read-only while the G lives
    uint64_t id;
    uint64_t parent_id;
    void (*fn)(void *);
    uint64_t stack_lo, stack_hi;    // usable stack; the guard page is below lo
    int32_t node;                   // where its first stack page came from
    // the M running it, or the scheduler (g0) when it is not running
    uint64_t rsp;                   // saved context (arch_mcall / arch_stack_init)
    struct m *m;                    // NULL unless G_RUNNING or G_SYSCALL (a call keeps its M)
    void *xsave;                    // vector state; allocated at its first preemption
    bool (*waitunlockf)(struct g *, void *);   // gopark's unlock, run on g0
    void *waitlock;
    // written by the G itself before it parks; read by dumps and park_m
    const char *waitreason;
    const void *waiton;
    // its waker, once the G is parked (kernel/chan.c)
    void *param;
    bool success;
    // atomic, any core
    uint32_t status;                // enum gstatus
    // whoever holds the queue or list it is on (global run queue, free lists)
    struct g *schedlink;
    // allg_lock held
    struct g *alllink;
    // the trace's and the metrics' hooks: run_cycles written by the core
    // running the G (kernel/trace.c), read racily by the shell's ps;
    // metrics_runnable (metrics=1) by whoever made it runnable, read by
    // the M that starts it (kernel/metrics.c)
    uint64_t run_cycles;
    uint64_t metrics_runnable;
    // the G itself only: what goexit runs first, newest first (gdefer_push)
    struct gdefer *defers;
};

// One stealing round's lists (steal_victims): the candidate Ps and their
// visit order, a P id each. 8 KiB at MAX_CPUS, more than a kernel frame may
// hold (the Makefile's KERNEL_FRAME_MAX), so each M has its own.
struct steal_scratch {
    uint32_t cand[MAX_CPUS];
    uint32_t victims[MAX_CPUS];
};

struct m {
    // owner core only
    struct g *curg;                 // the G running, or NULL on g0
    struct p *p;                    // the P held, or NULL
    bool spinning;                  // looking for work; counted in sched.nmspinning
    bool relay;                     // with spinning: sysmon's backstop started it (proc.c, step 5)
    uint64_t rand;                  // fastrand state
    uint64_t g0_top;                // the g0 stack: schedule() always runs here
    uint64_t armed;                 // TSC deadline armed on this core, 0 = none (an upper bound: preempt.c, arm)
    uint64_t timers_window;         // start (TSC) of the window its P's timer preemptions are counted in
    uint32_t timers_preempts;       // timer preemptions of its G in that window
    void *spare[M_SPARE_PAGES];     // zeroed pages for stack faults (touched with interrupts off)
    uint32_t nspare;
    uint64_t watching;              // the sched.timer_watch deadline this idle M set, 0 = none
    uint64_t last_timer_irq;        // TSC of this core's last timer interrupt (debug checks)
    uint32_t tick_seen;             // p->schedtick at the last timer interrupt
    uint64_t tick_when;             // when tick_seen was first seen (TSC)
    struct steal_scratch *steal;    // steal_work's lists, on the core's node (sched_init)
    uint64_t woke;                  // arch_cycles() as its last idle wait ended (a statistic: tests read it)
    // atomic: written by the owner core, read by timer_stop on any core
    struct timer *running_timer;    // the timer whose function this M runs now
    // owner core only, between entersyscall and exitsyscall (p is NULL then)
    struct p *oldp;                 // the P it left for the call, to take back
    uint32_t syscalltick;           // oldp->syscalltick when it left it
    // atomic, any core: the waker hands an idle M its P here
    struct p *nextp;
    bool nextspinning;              // with nextp: start out spinning
    bool nextrelay;                 // with nextp: start out a relay (true only until nextp is taken)
    uint32_t wake_hops;             // with nextp: its waker's wake_hops + 1 (a statistic: how
                                    // many wake-ups in a row led here; tests read it)
    uint64_t wake_sent;             // with nextp: arch_cycles() at the hand-over (a statistic, as wake_hops)
    // sched.lock held
    struct m *schedlink;            // sched.midle
    bool idle;                      // on sched.midle
    // read-only after boot
    uint32_t id;                    // == core index
};

struct p {
    // owner M only (the M holding the P)
    uint32_t schedtick;             // incremented per time slice
    int32_t globcheck;              // time slices until the global queue is looked at first: due
                                    // at <= 0, reset when looked (it may pass 0: see schedule_m)
    struct g *gfree;                // dead Gs for reuse
    uint32_t ngfree;
    uint64_t goidcache, goidcacheend;   // batch of G ids
    uint64_t ncreated, nexited;     // summed by num_goroutine()
    struct sched_pstats stats;      // owner writes, sched_stats() reads racily
    // timers_lock held (timer0 also read atomically by any core)
    uint32_t timers_lock;           // a word lock (kernel/timer.c's heap_lock)
    struct timer **timers;          // 4-ary min-heap by when
    struct timer timers_hole;       // heap[0]'s stand-in after a stop (kernel/timer.c)
    uint32_t ntimers, timers_cap;
    uint64_t timer0;                // earliest queued key (kernel/timer.c), 0 = none
    bool timer0_fast;               // the earliest is a periodic timer of under timer_fast_period_cycles
    // the holder M, and whoever wins the CAS of status out of P_SYSCALL
    uint64_t syscall_when;          // TSC at entersyscall (read by sysmon after status)
    uint32_t syscalltick;           // calls left on this P that ended: each exit, retake
                                    // and stop-the-world of one adds 1
    uint32_t sysmon_tick;           // schedtick sysmon saw last
    uint64_t sysmon_when;
    // lock-free: see kernel/runq.c
    struct runq runq;
    // status: under sched.lock, or by its holder (P_RUNNING -> P_SYSCALL),
    // or by whoever wins the CAS out of P_SYSCALL; m: by whoever makes an M
    // its holder, read racily by sysmon and stop_the_world
    uint32_t status;                // enum pstatus
    struct m *m;                    // holder, or NULL
    // sched.lock held
    struct p *link;                 // sched.pidle
    // read-only after creation
    uint32_t id;
    int32_t node;                   // NUMA node its Gs and their stacks come from
} __attribute__((aligned(64)));

struct sched {
    struct spinlock lock;
    // sched.lock held (runq_size and npidle also read atomically as hints)
    struct g *runq_head, *runq_tail;
    uint32_t runq_size;
    struct p *pidle;
    uint32_t npidle;
    struct m *midle;
    uint32_t nmidle;
    uint64_t pidle_gets;            // Ps taken off the idle list (read racily: sched_backstop_spinner)
    uint32_t stw_pending;           // a stop-the-world is in progress
    uint32_t stopwait;              // Ps the stop-the-world still waits for
    uint32_t gomaxprocs;            // also read racily
    // atomic, any core
    uint32_t nmspinning;            // Ms spinning for work
    uint32_t claim_core;            // the latest core to enter startm with a spinner counted (reports)
    uint64_t goidgen;
    uint32_t nexternal;             // Gs the netpoller will ready (sockets, irq_wait)
    bool started;                   // main G created; wakep active
    bool random_runnext;            // seed= given: one new G in four skips runnext
    uint64_t timer_watch;           // the timer deadline an idle M is armed for (atomic)
    uint64_t seed;
    uint32_t ncpu;                  // Ms (cores); read-only after sched_init
    // One bit per P, Go's idlepMask and timerpMask, so that a look over
    // the Ps costs a word per 64 of them and nothing per idle one
    // (kernel/steal_order.h). pidle_set: the P is on the idle list
    // (changed with it, sched.lock held; seq-cst, as npidle: the re-check
    // after dropping spinning relies on it). ptimer_set: the P has timers
    // (changed with its timer0, its timers_lock held; set before timer0
    // becomes non-zero, cleared after it becomes zero, so a bit that reads
    // clear stands for a timer0 read then).
    uint64_t pidle_set[MAX_CPUS / 64];
    uint64_t ptimer_set[MAX_CPUS / 64];
    uint32_t nptimer;               // bits in ptimer_set (changed with them, seq-cst)
};

extern struct sched sched;
extern struct m allm[MAX_CPUS];
extern struct p *allp[MAX_CPUS];     // each in its node's memory (sched_init)

static inline struct m *getm(void)
{
    return (struct m *)this_cpu_m();
}

// The running G's M, pinned: while this core's preempt count is above
// zero the G is not preempted, so it stays on this M. The count is raised
// before the M is read, in one instruction (see arch.h).
static inline struct m *acquirem(void)
{
    preempt_count_inc();
    return getm();
}

// Why a G is to be preempted (this core's preempt_pending, a mask).
enum {
    PREEMPT_QUANTUM = 1,    // its time slice ran out while others wait: to the global queue
    PREEMPT_TIMERS = 2,     // its P has a due timer: to its P's tail, the timers run first
    PREEMPT_STW = 4,        // a stop-the-world waits for its P: to its P's tail
};
void preempt_deferred(void);

// Ends acquirem. A preemption that came due meanwhile happens now (or,
// with interrupts off, shortly after they come back on).
static inline void releasem(struct m *mp)
{
    (void)mp;
    if (preempt_count_dec_zero() && __builtin_expect(preempt_pending_here() != 0, 0))
        preempt_deferred();
}

// Go's getg() on a G's stack: the G running (NULL on g0). Pinned while
// it reads curg; the G may move to another M afterwards, but is itself.
static inline struct g *getg(void)
{
    struct m *mp = acquirem();
    struct g *gp = mp->curg;
    releasem(mp);
    return gp;
}

// This core's pending preemption requests (PREEMPT_*): they live in the
// per-core struct, so that releasem tests them with one gs-relative load
// (preempt_pending_here). Interrupts off, on this core.
static inline void preempt_request(uint32_t why)
{
    this_cpu()->preempt_pending |= why;
}

// Interrupts off: returns this core's pending requests and clears them.
static inline uint32_t preempt_take(void)
{
    uint32_t why = this_cpu()->preempt_pending;
    this_cpu()->preempt_pending = 0;
    return why;
}

void preempt_drop(struct m *mp);

// On g0, first thing in every mcall target: the G is no longer running.
// A preemption request still pending on this core was for gp, which is
// leaving anyway: it is dropped, so that it cannot hit the next G.
// (Preemption itself takes its request before it switches.)
static inline struct m *dropg(struct g *gp)
{
    struct m *mp = getm();
    mp->curg = 0;
    gp->m = 0;
    if (__builtin_expect(preempt_pending_here() != 0, 0))
        preempt_drop(mp);
    return mp;
}

#define GLOBAL_CHECK_PERIOD 61
// Stealing: rounds over every other P before an M gives up; the last one
// may take a victim's runnext.
#define STEAL_ROUNDS 4

// proc.c: the scheduler loop and wake-ups
void schedule(void) __attribute__((noreturn));
void schedule_slow(struct m *mp) __attribute__((noreturn));

// g0 only: runs gp on mp. inherit: gp continues the current time slice.
static inline __attribute__((noreturn, always_inline)) void execute(struct m *mp, struct g *gp, bool inherit)
{
    struct p *pp = mp->p;
    mp->curg = gp;
    gp->m = mp;
    __atomic_store_n(&gp->status, G_RUNNING, __ATOMIC_RELAXED);      // read by dumps and assertions only
    if (!inherit) {
        pp->schedtick++;            // a new time slice (a runnext hand-off continues this one)
        pp->globcheck--;            // may pass 0: due until looked (schedule_m)
    }
    pp->stats.runs++;
    trace_g(TR_GO_START, gp);
    arch_gogo(gp->rsp);
}

// g0 only, interrupts off: finds the next G and runs it. The common case
// (a G in the local queue, no stop-the-world, not the time slice on which
// the global queue goes first) is inlined into each mcall target; the rest
// is schedule_slow. The global look counts time slices, not schedules, as
// Go's schedtick % 61: a pair of Gs handing the P to each other through
// runnext continue one slice and do not bring the next look closer. The
// count is due at or below 0, not at 0 only: a P can start slices on paths
// that do not look first (a spinning M's, an M that changes P inside
// find_runnable), and each takes it one further below 0. Compared with 0
// and unsigned, it wrapped to 4294967295 there and the P stopped looking
// (race_global_look_survives_slices_past_due). mp must not be spinning: an
// M stops spinning before it runs a G (schedule_slow), so an M coming from
// a G never is; schedule() sends the others to schedule_slow.
static inline __attribute__((noreturn, always_inline)) void schedule_m(struct m *mp)
{
    struct p *pp = mp->p;
    bool global_first = pp->globcheck <= 0;
    // A due timer of this P sends the M the slow way, which runs it first
    // (Go's schedule calls checkTimers every time): a timer a G starts is
    // not interrupt-driven for its first TIMER_GRACE_NS (core_rearm_new_timer).
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);     // a hint, pairs with timer0_update's release
    if (__builtin_expect(!global_first && !(t0 && t0 <= arch_cycles()) &&
                         !__atomic_load_n(&sched.stw_pending, __ATOMIC_ACQUIRE), 1)) {   // pairs with stop_the_world's store
        bool inherit;
        struct g *gp = runqget(&pp->runq, &inherit);
        if (gp)
            execute(mp, gp, inherit);
    }
    schedule_slow(mp);
}
void mcall(void (*fn)(struct g *));
// Fatal errors naming what a G called where goro.h forbids it, and pc, the
// app's call site: a switch or block while pinned (preempt_disable, a
// blocking call), and what needs a P between entersyscall and exitsyscall.
void sched_fatal_pinned(const char *what, void *pc) __attribute__((noreturn, cold));
void sched_fatal_without_p(const char *what, void *pc) __attribute__((noreturn, cold));
void wakep(void);
void wakep_after_rmw(void);
void runqputslow(struct p *pp, struct g *gp);

// Owner of pp only (pp is the caller's P). Queues gp on pp: in runnext
// when next (the G there before goes to the ring's tail), else at the
// ring's tail; a full ring sends half of itself to the global queue
// (runqputslow, out of line). Inline: it is on every hand-off's path.
static inline __attribute__((always_inline)) void runqput(struct p *pp, struct g *gp, bool next)
{
    if (__builtin_expect(!runq_push_fast(&pp->runq, &gp, next), 0))
        runqputslow(pp, gp);
}
void acquirep(struct m *mp, struct p *pp);
void stopm(struct m *mp);
uint64_t fastrand(struct m *mp);
void steal_order_reset(uint32_t nprocs);    // under a stopped world (or at boot)
// One stealing round's victims for pp (all: every P, not only the
// candidates; for tests), as P ids in visit order in s->victims; returns
// how many. s is the caller's alone.
uint32_t steal_victims(const struct p *pp, uint64_t r, bool all, struct steal_scratch *s);
// The P set bits (sched.pidle_set, sched.ptimer_set): sets or clears P
// id's; returns whether it changed.
bool pset_put(uint64_t *set, uint32_t id, bool on);
void sched_init(uint32_t ncpu, uint32_t gomaxprocs, uint64_t seed, bool random_runnext);
void mstart(void) __attribute__((noreturn));

// Gs made runnable from outside any P's scheduling (an interrupt, a G in a
// blocking call, sysmon) go to idle Ps, waking an M for each, and the rest
// to pp's queue (pp the caller's P) or, with pp NULL, the global queue.
// Go's injectglist; proc.c says more.
void injectglist(struct g *list, struct p *pp);


// globrunq.c: the global run queue (sched.lock held)
void globrunqput(struct g *gp);
void globrunqputbatch(struct g **gs, uint32_t n);
struct g *globrunqget(struct p *pp, uint32_t max);
// The idle P and M lists (sched.lock held)
void pidleput(struct p *pp);
struct p *pidleget(void);
void mput(struct m *mp);
struct m *mget(void);

// g.c: goroutine records, stacks, free lists
struct g *gfget(struct p *pp);
void gfput(struct p *pp, struct g *gp);
struct g *g_alloc(int node);
// Go's defer, for kernel calls that hand control to a function which may
// end its goroutine with goexit (once_do): pushed before the call, popped
// after it; goexit runs what is pushed, newest first, before the G dies.
// The record lives in the pusher's frame. The G itself only.
struct gdefer {
    struct gdefer *next;
    void (*fn)(void *);
    void *arg;
};
void gdefer_push(struct gdefer *d, void (*fn)(void *), void *arg);
void gdefer_pop(struct gdefer *d);

void stack_spares_refill(struct m *mp);
void stack_spares_top_up(struct m *mp);
uint64_t stack_scavenge(uint32_t max);          // pages freed
uint64_t stack_scavenge_all(void);             // from a G: waits out a trim under way
void stack_region_fill(void);                   // inject=stack-full
uint64_t stack_scavenged_pages(void);
bool stack_scavenge_worth(void);
extern uint32_t scavenge_due;                   // set by sysmon, taken by an idle M
void g_free_list_move(struct p *pp);        // a dying P's free Gs -> global
void g_dump_all(void);
uint32_t g_count_live(void);                // Gs g_dump_all would list (allg_lock)
void g_for_each(void (*fn)(struct g *gp, void *arg), void *arg);   // read-only walk, no lock held
void goready(struct g *gp, bool next);       // G_WAITING -> runnable
void gopark(bool (*unlockf)(struct g *, void *), void *lock, const char *reason, const void *on);
const char *gstatus_name(uint32_t s);
bool g_stack_fault(uint64_t vector, uint64_t error, uint64_t addr, uint64_t rip, bool irqs_on);
bool g_stack_premap(uint64_t addr);

// preempt.c and sysmon.c: each core's timer, preemption, the monitor
void core_rearm(struct m *mp, uint64_t now);    // interrupts off, on mp's core
// The same after a G made a timer its P's earliest: one due within
// TIMER_GRACE_NS is watched from the end of the grace (preempt.c says why).
#define TIMER_GRACE_NS 1000000
// A P's due timers preempt its running G at most TIMER_PREEMPTS_PER_WINDOW
// times in TIMER_PREEMPT_WINDOW_NS (preempt.c, preempt_check).
#define TIMER_PREEMPT_WINDOW_NS 1000000
#define TIMER_PREEMPTS_PER_WINDOW 8
void core_rearm_new_timer(struct m *mp, uint64_t now);
void core_arm_idle(struct m *mp);               // interrupts off; mp has no P
void core_leave_idle(struct m *mp);             // mp got a P: hand its timer watch on
void preempt_init(void);
bool others_runnable(struct p *pp);             // work waits for pp's time slice to end (hints)
extern uint64_t quantum_cycles;                 // the time slice (atomic, relaxed: a new value applies from each core's next check)
extern uint64_t timer_fast_period_cycles;       // TIMER_PREEMPT_WINDOW_NS / TIMER_PREEMPTS_PER_WINDOW (set once at boot)
void sysmon_init(void);
void sysmon_wake(void);                         // pinned: something started running, look soon
void sysmon_tick(uint64_t now);                 // core 0's timer interrupt
uint64_t sysmon_deadline(void);                 // sysmon's next look (TSC), 0 when asleep
uint64_t sysmon_last_look(void);                // sysmon's last look (TSC), 0 before the first
extern uint64_t sysmon_irqoff_reports;          // debug builds: interrupts-off reports made (atomic)
extern uint64_t sysmon_timer_handons;           // times a retaken P's timers went to a running P (atomic)
bool sched_backstop_spinner(uint64_t now);      // sysmon: a spinner beside one that makes no progress
extern uint64_t sched_backstop_stall_ns;        // how long no P leaves the idle list before it acts (atomic)
extern uint64_t sched_spinner_backstops;        // spinners it started (atomic)
extern uint64_t sched_spinner_relays;           // spinners those started in turn beside a counted one (atomic)

// procresize.c: from a G. stop_the_world returns with every other P
// stopped and the caller pinned; start_the_world(n) resizes to n Ps, lets
// the world go and unpins. One at a time (a second caller parks).
void stop_the_world(const char *why);
void start_the_world(uint32_t nprocs);

// deadlock.c (sched.lock held)
void checkdead(void);

#endif
