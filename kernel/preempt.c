// SPDX-License-Identifier: MIT
// Preemption and each core's timer.
//
// Each core's one-shot timer is armed for the earliest of: its P's next
// timer, the running G's quantum check, and (on core 0) sysmon's next look.
// An idle core arms only for a timer some idle P holds, and only if no
// other idle core already watches an earlier one. Nothing is periodic.
//
// Quantum accounting costs the scheduler's fast path nothing: a slice is
// recognised by P.schedtick, which execute() already increments. At each
// timer interrupt the core compares schedtick with what it saw last; the
// same value a quantum later means one G has run all that time. So a hog
// is preempted between one and two quanta after its slice began (Go's
// sysmon has the same window, at 10-20 ms).
//
// A preemption is requested by setting the core's preempt_pending and acted on at
// the end of the interrupt (trap_switch_hook), when the interrupted code is
// a G with no preempt count and not the preemption resume stub.
// Spinlock holders have interrupts off, so they are never interrupted; a
// request made while the preempt count is above zero is carried out by
// releasem when it drops to zero.
//
// The preempted G goes to the global queue when its quantum ran out (Go's
// goschedImpl) unless sched.lock is held then, to the tail of its own P's
// queue otherwise; the P's due timers run before it picks the next G.
#include "kernel/sched.h"
#include "arch/arch.h"
#include "kernel/cmdline.h"
#include "kernel/debugdelay.h"
#include "kernel/page.h"
#include "kernel/profile.h"
#include "lib/panic.h"
#include "kernel/timer.h"
#include "kernel/netpoll.h"

uint64_t quantum_cycles;
uint64_t timer_fast_period_cycles;

// Work waiting for pp's time slice to end: Gs in its own queue, in the
// global queue, or the netpoller's work nobody has polled (Gs readied by
// interrupts wait there). Hints. Go's retake preempts a G past its slice
// whatever waits, and its sysmon moves the netpoller's Gs to the global
// queue first; here a G alone is left to run, so pending network work
// must count, or a G readied by a packet waits for sysmon's poll.
bool others_runnable(struct p *pp)
{
    return !runqempty(&pp->runq) || __atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED) ||   // a hint, as Go's
           netpoll_pending();
}

static uint64_t min_nz(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

// Arms this core's timer for d (0: nothing). The hardware is written only
// when d is earlier than what it is armed for, or when that has passed: a
// deadline still ahead and no later than d is left as it is, and its
// interrupt, if it comes before d, finds nothing due and arms again
// (timer_irq). A deadline that has passed is armed again, so that an
// interrupt lost on the way is asked for again rather than waited for
// forever. Why lazy: under TCG an APIC timer write costs a few
// microseconds of wall time (QEMU's device model), and a G that starts a
// timer and parks wrote it twice per timer (the timer's deadline, then
// the quantum's once the timer ran): 4.4x BenchmarkAfter's time. So
// mp->armed is an upper bound on when this core's next interrupt comes.
static void arm(struct m *mp, uint64_t d)
{
    profile_hook_deadline(mp, d);   // the next sample, when profiling
    uint64_t armed = mp->armed;
    if (armed && (d == 0 || d >= armed) && armed > arch_cycles())
        return;
    if (d)
        arch_timer_arm(d);
    else
        arch_timer_cancel();
    mp->armed = d;
}

// Cycles of TIMER_GRACE_NS and TIMER_PREEMPT_WINDOW_NS (preempt_init).
static uint64_t timer_grace_cycles, timer_window_cycles;

// How many times a window a due timer of pp may preempt its G: a periodic
// timer faster than the budget can serve (TickerReset's ticker of 2 ns is
// always due) gets one, so that it costs its core one preemption a window
// (taking eight, it made TickerReset 4x slower); others the whole budget.
static uint32_t timer_preempt_budget(struct p *pp)
{
    return __atomic_load_n(&pp->timer0_fast, __ATOMIC_RELAXED) ? 1 : TIMER_PREEMPTS_PER_WINDOW;   // relaxed: a hint, as timer0_update writes it
}

// Interrupts off, on mp's own core. Arms this core's timer for what it
// must watch now. A deadline whose preemption request is already pending
// is left out: the request waits for the preempt count to drop (releasem
// acts then) or for the G to leave (dropg drops it and re-arms), and
// arming the deadline again, already past, would only fire the interrupt
// again at once, over and over (an interrupt storm while pinned).
// The P's timers are watched from floor at the earliest (core_rearm: 0;
// core_rearm_new_timer: the grace).
static void rearm_timers_from(struct m *mp, uint64_t floor)
{
    uint64_t d = 0;
    struct p *pp = mp->p;
    if (pp) {
        // Holding a P, the M runs a G or is about to (on g0, between Gs):
        // either way the quantum check is due.
        uint32_t pending = preempt_pending_here();
        if (!(pending & PREEMPT_TIMERS)) {
            d = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);    // pairs with timer0_update's release
            if (mp->timers_preempts >= timer_preempt_budget(pp) &&
                floor < mp->timers_window + timer_window_cycles)
                floor = mp->timers_window + timer_window_cycles;    // preempt_check's budget is spent
            if (d && d < floor)
                d = floor;
        }
        if (!(pending & PREEMPT_QUANTUM))
            d = min_nz(d, mp->tick_when + quantum_cycles);
    } else if (mp->curg && mp->oldp && !(preempt_pending_here() & PREEMPT_QUANTUM)) {
        d = mp->tick_when + quantum_cycles;     // in a blocking call: its G's slice runs on (preempt_check)
    }
    if (mp->id == 0)
        d = min_nz(d, sysmon_deadline());
    arm(mp, d);
}

void core_rearm(struct m *mp, uint64_t now)
{
    (void)now;
    rearm_timers_from(mp, 0);
}

// A timer was just made its P's earliest (timer_start, timer_modify: by a
// running G, or on g0 for one that parks, as sleep_ns's). One due within
// TIMER_GRACE_NS (1 ms) is watched from the end of that grace: every pass
// of the P's scheduler runs its due timers (schedule_m), and Gs that park
// or switch pass there within microseconds nearly always, so no interrupt
// is taken and, with arm()'s laziness, the hardware is not written per
// timer. A G that keeps running without scheduling delays such a timer by
// at most the grace (Go's running G delays its P's timers until it
// schedules or sysmon preempts it, 10-20 ms); a P that goes idle arms the
// exact deadline (core_arm_idle). Under TCG the APIC writes and interrupts
// were most of the time of Go's BenchmarkAfter, AfterFunc and Sleep ports:
// 11-17 ms an op against 3 ms without for After, 33 against 9 for Sleep
// (1000 timers an op, 1 vCPU).
void core_rearm_new_timer(struct m *mp, uint64_t now)
{
    rearm_timers_from(mp, now + timer_grace_cycles);
}

// The deadline idle cores watch: the earliest timer of any P. A deadline
// already past is watched only while some P is idle: then the woken M
// takes that P and runs the overdue timers (stealing runs other Ps'), and
// a timer that came due between stopm's look and the arming is not lost.
// With no idle P the M could do nothing for it (the busy P's own M runs
// it), and arming for it would fire this core's interrupt again at once,
// over and over.
static uint64_t idle_watch_deadline(uint64_t now)
{
    if (__atomic_load_n(&sched.npidle, __ATOMIC_RELAXED))     // racy: a P going idle runs its own due timers in stopm
        return timers_next();
    return timers_next_after(now);
}

// An M about to halt without a P: watch that deadline unless another idle
// core already watches one at least as early. The watcher knows itself
// (m->watching), so its own re-arms after each wake keep the watch; a
// watch left by a core that since took a P is released in core_leave_idle.
// Invariant: sched.timer_watch, when not 0 and still to come, is the
// deadline its watcher's core is armed for, or will be before that core
// halts again (woken, it passes here first); others rely on it and arm
// nothing.
void core_arm_idle(struct m *mp)
{
    uint64_t now = arch_cycles();
    uint64_t next = idle_watch_deadline(now);
    uint64_t d = 0;
    if (!next && mp->watching) {
        // The watched timer went away before its deadline (stopped or
        // reset) and none is left: give the watch up with the arm. Kept,
        // it would still look valid until that deadline, so a timer added
        // after it on a P that goes idle would be left unwatched while
        // every core halts.
        uint64_t w = mp->watching;
        mp->watching = 0;
        // acq_rel: pairs with the other cores' load-acquire and CAS below;
        // only if still ours (relaxed on failure: another core took it)
        __atomic_compare_exchange_n(&sched.timer_watch, &w, 0, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);
    }
    if (next) {
        uint64_t w = __atomic_load_n(&sched.timer_watch, __ATOMIC_ACQUIRE);    // pairs with the CAS below on other cores
        for (;;) {
            // another idle core watches one at least as early; a watch
            // already in the past is stale (its watcher has moved on)
            if (w && w <= next && w != mp->watching && w > now)
                break;
            if (__atomic_compare_exchange_n(&sched.timer_watch, &w, next, false, __ATOMIC_ACQ_REL,   // claims the watch; pairs with the other watchers' CAS
                                            __ATOMIC_ACQUIRE)) {    // failed: w is the newer watch, look again
                mp->watching = next;
                d = next;
                break;
            }
        }
    }
    if (mp->id == 0)
        d = min_nz(d, sysmon_deadline());
    arm(mp, d);
}

// mp just got a P (on its way out of stopm). If it watched the idle Ps'
// timers, it releases the watch. Then, whether or not it was the watcher:
// when a timer is pending and nobody watches, an idle M is woken to take
// the watch (it re-arms on its way back to halt). The M is the idle list's
// head under sched.lock; the IPI goes out after the lock is let go. If
// startm takes that M in between, the M passes through here on its way
// out and wakes the next one, so the watch is never dropped on the floor,
// and the IPI finds it running (or back at its halt, where it only makes
// it look again). Not under the lock: the woken M's first step is to take
// sched.lock (take_p_for_timers), and under TCG an APIC access waits for
// QEMU's global lock, which a vCPU spinning with PAUSE takes and lets go
// at every PAUSE: the sender held sched.lock for 1.5-4.5 ms while the M it
// had woken spun for it (2 vCPUs, app=bench_time sleep_lateness, p99 3 ms).
void core_leave_idle(struct m *mp)
{
    uint64_t w = mp->watching;
    if (w) {
        mp->watching = 0;
        __atomic_compare_exchange_n(&sched.timer_watch, &w, 0, false, __ATOMIC_ACQ_REL,   // only if still ours; pairs with core_arm_idle's CAS
                                    __ATOMIC_RELAXED);     // another core's watch: leave it
    }
    if (__atomic_load_n(&sched.timer_watch, __ATOMIC_ACQUIRE) ||    // pairs with core_arm_idle's CAS
        !idle_watch_deadline(arch_cycles()))
        return;
    spin_lock(&sched.lock);
    struct m *other = sched.midle;
    spin_unlock(&sched.lock);
    DEBUG_DELAY(core_leave_idle);
    if (other && other != mp)
        arch_send_ipi(other->id, VEC_WAKE);
}

// The quantum and timer checks for a core running a G. Interrupts off.
// The time slice check of the G running on pp (or, in a blocking call,
// on the P it left, read racily: a P that changed hands shows a new
// slice). A request made in a call waits for exitsyscall's releasem, and
// goes if the call lost its P (mcall's dropg).
static void quantum_check(struct m *mp, struct p *pp, uint64_t now, bool force)
{
    uint32_t tick = __atomic_load_n(&pp->schedtick, __ATOMIC_RELAXED);    // racy in a call: the owner may be another M
    if (tick != mp->tick_seen) {
        mp->tick_seen = tick;
        mp->tick_when = now;
    } else if (force || now - mp->tick_when >= quantum_cycles) {
        if (others_runnable(pp))
            preempt_request(PREEMPT_QUANTUM);
        else
            mp->tick_when = now;        // alone on its P: a new slice
    }
}

static void preempt_check(struct m *mp, uint64_t now, bool force)
{
    struct p *pp = mp->p;
    if (!mp->curg)
        return;
    if (!pp) {
        // In a blocking call, the G's slice still runs: a G that spends it
        // in calls, leaving each within the 20 us sysmon gives it, is
        // preempted when it leaves one (Go's sysmon retakes its P when the
        // slice is over; here the M is the only one that could run the
        // rest, TestPreemptionAfterSyscall on 1 vCPU).
        if ((pp = mp->oldp))
            quantum_check(mp, pp, now, force);
        return;
    }
    // A due timer of its P preempts the G, at most TIMER_PREEMPTS_PER_WINDOW
    // times a TIMER_PREEMPT_WINDOW_NS window: past that, the P's timers run
    // when it schedules (schedule_m) or when the window ends. Without a
    // budget a ticker of a few ns (Go's BenchmarkTickerReset) kept its core
    // in back-to-back interrupts, each taking the G off for one tick (44x
    // Go's time); one preemption a millisecond made sleepers among CPU hogs
    // wait for it (app=latency wl=timers under icount, 1 ms sleepers: p50
    // 1.3 ms late); a budget of eight keeps sparse timers exact, and a fast
    // periodic timer at the top gets one (timer_preempt_budget).
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);     // pairs with timer0_update's release
    if (now - mp->timers_window >= timer_window_cycles) {
        mp->timers_window = now;
        mp->timers_preempts = 0;
    }
    if (t0 && t0 <= now && mp->timers_preempts < timer_preempt_budget(pp)) {
        preempt_request(PREEMPT_TIMERS);
        mp->timers_preempts++;
    }
    if (__atomic_load_n(&sched.stw_pending, __ATOMIC_ACQUIRE) &&     // pairs with stop_the_world's store
        __atomic_load_n(&pp->status, __ATOMIC_RELAXED) == P_RUNNING)   // not the stopper's own P
        preempt_request(PREEMPT_STW);
    quantum_check(mp, pp, now, force);
}

static void timer_irq(uint8_t vector)
{
    (void)vector;
    struct m *mp = getm();
    uint64_t now = arch_cycles();
    mp->armed = 0;
    __atomic_store_n(&mp->last_timer_irq, now, __ATOMIC_RELAXED);    // debug checks read it racily
    profile_hook_tick(mp, now);
    preempt_check(mp, now, false);
    if (mp->id == 0)
        sysmon_tick(now);
    // An idle M (no P, no G) takes interrupts only inside stopm's
    // idle_wait, whose loop looks at the timers and arms again before it
    // waits again: nothing is armed here. Arming here would mostly re-arm
    // the watched deadline that just fired, already past (no timer has
    // run yet): its interrupt would come back on the first instruction
    // after the iret, before the loop could take a P for it, every time.
    // That livelocked an idle core under -icount (the APIC timer's one
    // tick is one instruction) and, by the same arithmetic, would on
    // hardware, where one tick is shorter than the way out of this
    // handler. An M in a blocking call has a G and no P: it arms what it
    // still watches, sysmon's next look on core 0.
    if (mp->p || mp->curg)
        core_rearm(mp, now);
}

// sysmon's backstop: this core's own timer did not act on an overrun.
static void preempt_ipi(uint8_t vector)
{
    (void)vector;
    struct m *mp = getm();
    uint64_t now = arch_cycles();
    preempt_check(mp, now, true);
    if (mp->p)
        core_rearm(mp, now);    // a new request's deadline leaves the timer (see core_rearm)
}

static void *g_xsave_area(struct g *gp)
{
    uint32_t size = arch_xsave_size();
    if (!size)
        return 0;
    if (!gp->xsave)
        gp->xsave = page_alloc((size + PAGE_SIZE - 1) / PAGE_SIZE);   // zeroed, page-aligned
    return gp->xsave;
}

static uint32_t preempt_reason[MAX_CPUS];

static void preempt_m(void *arg)
{
    struct g *gp = arg;
    struct m *mp = dropg(gp);
    struct p *pp = mp->p;
    uint32_t reason = preempt_reason[mp->id];
    uint64_t now = arch_cycles();
    pp->stats.preemptions++;
    trace_gp(TR_GO_PREEMPT, gp, reason);
    __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);      // published by the queue's release (lock or tail store)
    if (reason & PREEMPT_QUANTUM) {
        pp->stats.preemptions_quantum++;
        // The netpoller's Gs go ahead of the preempted G: their pending
        // work may be what ended its slice (others_runnable), and behind
        // it on the global queue they would wait for the next look there.
        if (netpoll_pending())
            netpoll_inject(pp);
        // With sched.lock held the G goes to its own P's tail instead, and
        // this P looks at the global queue first next: at 1024 vCPUs, with
        // every busy core queueing globally each slice, most cores spun on
        // the lock while the host ran its holder a thousandth of the time
        // (docs/design.md, the global queue).
        if (spin_trylock(&sched.lock)) {
            globrunqput(gp);
            spin_unlock(&sched.lock);
        } else {
            pp->stats.preemptions_lock_busy++;
            runqput(pp, gp, false);
            pp->globcheck = 0;
        }
        wakep();                // an idle P may run it at once (Go's goschedImpl does not)
    } else {
        if (reason & PREEMPT_TIMERS)
            pp->stats.preemptions_timers++;
        runqput(pp, gp, false);
    }
    timers_run(pp, now);
    mp->tick_seen = pp->schedtick;
    mp->tick_when = now;
    core_rearm(mp, now);
    schedule();
}

// The interrupted G is preempted here when a request is pending and it is
// safe; otherwise the interrupt returns to it.
struct trapframe *trap_switch_hook(struct trapframe *tf)
{
    struct m *mp = getm();
    if (mp && mp->curg && mp->nspare < M_SPARE_PAGES)
        stack_spares_top_up(mp);    // the G had interrupts on: it holds no lock
    if (!mp || !preempt_pending_here() || !mp->curg || preempt_count())
        return tf;              // none due, not a G, or releasem will do it
    if (arch_preempt_unsafe(tf)) {
        // the resume stub's first instruction: try again in a moment
        arch_timer_arm(arch_cycles() + arch_ns_to_cycles(2000));
        mp->armed = 0;
        return tf;
    }
    struct g *gp = mp->curg;
    // arch_preempt copies the frame onto the G's stack, below where it was
    // interrupted, with a switch frame under it: those pages must be
    // mapped first (at most two: the span is under a page), since a fault
    // there would come with interrupts off. At the guard page, try again
    // in a moment (the G overflows there by itself soon enough).
    uint64_t lo, hi;
    arch_preempt_stack(tf, &lo, &hi);
    if (!g_stack_premap(lo) || !g_stack_premap(hi - 1)) {
        arch_timer_arm(arch_cycles() + arch_ns_to_cycles(20000));
        mp->armed = 0;
        return tf;
    }
    preempt_reason[mp->id] = preempt_take();
    arch_preempt(tf, &gp->rsp, g_xsave_area(gp), mp->g0_top, preempt_m, gp);
}

// g0, interrupts off (dropg): the G a request was for left this core by
// itself. The request goes, and the timer is armed for what the core
// watches now.
__attribute__((noinline, cold)) void preempt_drop(struct m *mp)
{
    preempt_take();
    core_rearm(mp, arch_cycles());
}

static void preempt_deferred_m(struct g *gp)
{
    preempt_m(gp);
}

// releasem reached zero with a preemption pending: a voluntary switch
// (callee-saved state only: we are at a call boundary).
void preempt_deferred(void)
{
    if (!irqs_enabled()) {
        // The caller still runs with interrupts off (a lock is held, or a
        // gopark is on its way): let the timer ask again a moment after.
        arch_timer_arm(arch_cycles() + arch_ns_to_cycles(2000));
        getm()->armed = 0;
        return;
    }
    irq_disable();              // before reading the M: the G must not move meanwhile
    struct m *mp = getm();
    if (!preempt_pending_here() || !mp->curg || preempt_count()) {
        irq_enable();
        return;                 // moved to a core with nothing pending
    }
    preempt_reason[mp->id] = preempt_take();
    mcall(preempt_deferred_m);
}

void preempt_disable(void)
{
    preempt_count_inc();
}

void preempt_enable(void)
{
    releasem(0);
}

// The time slice, in force from each core's next timer interrupt. 0 only
// queries (as gomaxprocs(0)); other values clamp to the command line's
// range: a slice of 0 would preempt at every interrupt, and one past a
// second would let a hog hold a P for that long.
uint64_t sched_set_quantum_ns(uint64_t ns)
{
    uint64_t old = arch_cycles_to_ns(__atomic_load_n(&quantum_cycles, __ATOMIC_RELAXED));  // relaxed: a value, as stored below
    if (ns == 0)
        return old;
    ns = ns < QUANTUM_MIN_NS ? QUANTUM_MIN_NS : ns > QUANTUM_MAX_NS ? QUANTUM_MAX_NS : ns;
    __atomic_store_n(&quantum_cycles, arch_ns_to_cycles(ns), __ATOMIC_RELAXED);   // each core reads it at its next check
    uint64_t f = irq_save();
    struct m *mp = getm();
    if (mp->p)
        core_rearm(mp, arch_cycles());      // this core at once; the others at their next interrupt
    irq_restore(f);
    return old;
}

// Boot core, before the scheduler starts.
void preempt_init(void)
{
    quantum_cycles = arch_ns_to_cycles(kparams.quantum_ns);
    timer_grace_cycles = arch_ns_to_cycles(TIMER_GRACE_NS);
    timer_window_cycles = arch_ns_to_cycles(TIMER_PREEMPT_WINDOW_NS);
    timer_fast_period_cycles = timer_window_cycles / TIMER_PREEMPTS_PER_WINDOW;
    arch_set_irq_handler(VEC_TIMER, timer_irq);
    arch_set_irq_handler(VEC_PREEMPT, preempt_ipi);
}

uint64_t sched_quantum_ns(void)
{
    return arch_cycles_to_ns(__atomic_load_n(&quantum_cycles, __ATOMIC_RELAXED));     // relaxed: a value, as sched_set_quantum_ns stores it
}
