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
// goschedImpl), to the tail of its own P's queue when the interrupt was for
// a due timer; the P's due timers run before it picks the next G.
#include "kernel/sched.h"
#include "arch/arch.h"
#include "kernel/cmdline.h"
#include "kernel/page.h"
#include "lib/panic.h"
#include "kernel/timer.h"

uint64_t quantum_cycles;
void sysmon_tick(uint64_t now);
uint64_t sysmon_deadline(void);

static bool others_runnable(struct p *pp)
{
    return !runq_empty(&pp->runq) || __atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED);
}

static uint64_t min_nz(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

// Interrupts off. Arms this core's timer for what it must watch now.
void core_rearm(struct m *mp, uint64_t now)
{
    (void)now;
    uint64_t d = 0;
    struct p *pp = mp->p;
    if (pp) {
        // Holding a P, the M runs a G or is about to (on g0, between Gs):
        // either way the quantum check is due.
        d = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);
        d = min_nz(d, mp->tick_when + quantum_cycles);
    }
    if (mp->id == 0)
        d = min_nz(d, sysmon_deadline());
    if (d == mp->armed)
        return;
    if (d)
        arch_timer_arm(d);
    else
        arch_timer_cancel();
    mp->armed = d;
}

// An M about to halt without a P: watch the earliest timer of the idle Ps
// unless another idle core already watches one at least as early. The
// watcher knows itself (m->watching), so interrupts that re-arm it keep
// the watch; a watch left by a core that since took a P is released in
// core_leave_idle. Invariant: sched.timer_watch, when not 0 and still to
// come, is the deadline its watcher's core is armed for; others rely on
// it and arm nothing.
void core_arm_idle(struct m *mp)
{
    uint64_t next = timers_next();
    uint64_t d = 0;
    if (!next && mp->watching) {
        // The watched timer went away before its deadline (stopped or
        // reset) and none is left: give the watch up with the arm. Kept,
        // it would still look valid until that deadline, so a timer added
        // after it on a P that goes idle would be left unwatched while
        // every core halts.
        uint64_t w = mp->watching;
        mp->watching = 0;
        __atomic_compare_exchange_n(&sched.timer_watch, &w, 0, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);      // only if still ours
    }
    if (next) {
        uint64_t w = __atomic_load_n(&sched.timer_watch, __ATOMIC_ACQUIRE);
        uint64_t now = arch_cycles();
        for (;;) {
            // another idle core watches one at least as early; a watch
            // already in the past is stale (its watcher has moved on)
            if (w && w <= next && w != mp->watching && w > now)
                break;
            if (__atomic_compare_exchange_n(&sched.timer_watch, &w, next, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                mp->watching = next;
                d = next;
                break;
            }
        }
    }
    if (mp->id == 0)
        d = min_nz(d, sysmon_deadline());
    if (d != mp->armed) {
        if (d)
            arch_timer_arm(d);
        else
            arch_timer_cancel();
        mp->armed = d;
    }
}

// mp just got a P. If it watched the idle Ps' timers, the watch is
// released and another idle core is woken to take it over (it re-arms on
// its way back to halt).
void core_leave_idle(struct m *mp)
{
    uint64_t w = mp->watching;
    if (!w)
        return;
    mp->watching = 0;
    __atomic_compare_exchange_n(&sched.timer_watch, &w, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    if (!timers_pending())
        return;
    spin_lock(&sched.lock);
    struct m *other = sched.midle;
    spin_unlock(&sched.lock);
    if (other && other != mp)
        arch_send_ipi(other->id, VEC_WAKE);
}

// The quantum and timer checks for a core running a G. Interrupts off.
static void preempt_check(struct m *mp, uint64_t now, bool force)
{
    struct p *pp = mp->p;
    if (!pp || !mp->curg)
        return;
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);
    if (t0 && t0 <= now)
        preempt_request(PREEMPT_TIMERS);
    if (pp->schedtick != mp->tick_seen) {
        mp->tick_seen = pp->schedtick;
        mp->tick_when = now;
    } else if (force || now - mp->tick_when >= quantum_cycles) {
        if (others_runnable(pp))
            preempt_request(PREEMPT_QUANTUM);
        else
            mp->tick_when = now;        // alone on its P: a new slice
    }
}

static void timer_irq(uint8_t vector)
{
    (void)vector;
    struct m *mp = getm();
    uint64_t now = arch_cycles();
    mp->armed = 0;
    __atomic_store_n(&mp->last_timer_irq, now, __ATOMIC_RELAXED);
    preempt_check(mp, now, false);
    if (mp->id == 0)
        sysmon_tick(now);
    if (mp->p)
        core_rearm(mp, now);
    else
        core_arm_idle(mp);
}

// sysmon's backstop: this core's own timer did not act on an overrun.
static void preempt_ipi(uint8_t vector)
{
    (void)vector;
    struct m *mp = getm();
    preempt_check(mp, arch_cycles(), true);
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
    trace_event(TR_GO_PREEMPT, gp->id, reason);
    __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);
    if (reason & PREEMPT_QUANTUM) {
        spin_lock(&sched.lock);
        globrunq_put(gp);
        spin_unlock(&sched.lock);
    } else {
        queue_on_p(pp, gp, false);
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
    if (!mp || !preempt_pending_here() || !mp->curg || preempt_count())
        return tf;              // none due, not a G, or releasem will do it
    if (arch_preempt_unsafe(tf)) {
        // the resume stub's first instruction: try again in a moment
        arch_timer_arm(arch_cycles() + arch_ns_to_cycles(2000));
        mp->armed = 0;
        return tf;
    }
    struct g *gp = mp->curg;
    // arch_preempt writes a switch frame just below tf, on the G's stack:
    // its page must be mapped before, since a fault there would come with
    // interrupts off. Without a spare page, try again in a moment.
    if (!g_stack_premap((uint64_t)tf - 64)) {
        arch_timer_arm(arch_cycles() + arch_ns_to_cycles(20000));
        mp->armed = 0;
        return tf;
    }
    preempt_reason[mp->id] = preempt_take();
    arch_preempt(tf, &gp->rsp, g_xsave_area(gp), mp->g0_top, preempt_m, gp);
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

// The time slice, in force from each core's next timer interrupt.
uint64_t preempt_set_quantum_ns(uint64_t ns)
{
    uint64_t old = arch_cycles_to_ns(quantum_cycles);
    __atomic_store_n(&quantum_cycles, arch_ns_to_cycles(ns), __ATOMIC_RELAXED);
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
    arch_set_irq_handler(VEC_TIMER, timer_irq);
    arch_set_irq_handler(VEC_PREEMPT, preempt_ipi);
}
