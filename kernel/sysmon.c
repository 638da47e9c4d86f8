// SPDX-License-Identifier: MIT
// sysmon: the monitor, Go's, run from core 0's timer interrupt.
//
// Each look (retake, then the rest of sysmon_tick):
//   - A P whose G has run one time slice while anything waits (its queue,
//     the global queue, Gs readied from outside, a due timer of its P) has
//     its core sent a preemption IPI: the core's own timer check should
//     have acted, and sysmon is the backstop, as Go's retake is.
//   - A P in a blocking call for 20 us (one look) is retaken when its
//     queue has Gs or a timer of it is due, when no P is idle or spinning
//     to take other work (Go's rule), or when the call has lasted 10 ms;
//     handoffp then hands it to an idle M, which runs its queue and due
//     timers, or, with no M free, sends its Gs to the global queue and its
//     timers to a running P. A timer of a P in a call brings the next look
//     forward to when it comes due. So no timer waits for a blocking call.
//   - The netpoller (kernel/netpoll.c, whose Gs interrupts ready) is
//     polled when its work has waited through a whole look or nobody has
//     polled for 10 ms (Go's sched.lastpoll), and what it readied is
//     injected: to idle Ps, each with its M woken, the rest to the global
//     queue. It goes first: retake may preempt for what it queued.
//   - When no P has left the idle list for 10 ms while a spinner is
//     counted and Ps and Ms idle beside queued Gs, another spinner is
//     started (sched_backstop_spinner, kernel/proc.c).
//   - A timer overdue by a millisecond while a P is idle starts an M, or,
//     with none idle, the idle Ps' due timers go to a running P; dead Gs'
//     stacks are marked for trimming about once a second; schedtrace
//     lines are printed when due.
// Looks come every 20 us while there is something to do, backing off by
// doubling to 10 ms when there is not, as Go's sysmon does; with every P
// idle and no schedtrace, sysmon sleeps and core 0 arms nothing for it.
// Whoever starts a P running while it may sleep wakes it (sysmon_wake),
// as Go's sched.sysmonwait: startm, injectglist, an idle M taking a P for
// its timers, entersyscall, exitsyscall taking an idle P. Going to sleep
// and a waker are a Dekker pair (sysmon_tick, sysmon_wake): one of them
// sees the other, so sysmon never sleeps while a P runs.
#include "kernel/sched.h"
#include "kernel/chan.h"
#include "kernel/cmdline.h"
#include "kernel/debugdelay.h"
#include "lib/printf.h"
#include "kernel/timer.h"
#include "kernel/netpoll.h"

static uint64_t next_look;          // TSC; 0 = asleep
static uint64_t last_look;          // TSC of the last look (a report reads it)
static uint64_t delay;
static uint64_t next_trace;
static uint64_t boot_tsc;
// What sysmon did, for tests (atomic: sysmon writes, any core reads)
uint64_t sysmon_timer_handons;      // times a retaken P's timers went to a running P

#define SYSMON_MIN_NS 20000         // one look: a call's grace, and the shortest delay
#define SYSMON_MAX_NS 10000000      // the longest delay
#define LONG_CALL_NS 10000000       // a call this long is retaken whatever waits (Go's)

static uint64_t min_nz(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

uint64_t sysmon_deadline(void)
{
    return __atomic_load_n(&next_look, __ATOMIC_RELAXED);      // a deadline only: no data hangs on it
}

uint64_t sysmon_last_look(void)
{
    return __atomic_load_n(&last_look, __ATOMIC_RELAXED);      // a time to show, nothing behind it
}

// Any core, pinned (a G between acquirem and releasem, or g0): something
// started running; make sure sysmon looks soon. Awake, it costs a load:
// only the waker whose CAS ends the sleep interrupts core 0 (Go wakes
// sysmon only when sched.sysmonwait says it sleeps).
void sysmon_wake(void)
{
    uint64_t asleep = 0, look = arch_cycles() + arch_ns_to_cycles(SYSMON_MIN_NS);
    if (__atomic_load_n(&next_look, __ATOMIC_SEQ_CST) != 0)       // after the caller's npidle change (a locked RMW): pairs with sysmon_tick's sleep
        return;
    // relaxed: a deadline only; lost: another waker (or sysmon) set it
    if (!__atomic_compare_exchange_n(&next_look, &asleep, look, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;
    if (cpu_index() != 0) {
        arch_send_ipi(0, VEC_TIMER);        // core 0 re-arms in its handler, or idle, in stopm before it halts again
        return;
    }
    uint64_t f = irq_save();                // core 0 itself: its timer may be armed later or not at all
    core_rearm(getm(), arch_cycles());
    irq_restore(f);
}

// sched.lock held, no stop-the-world pending (so gomaxprocs holds still):
// from, a P going idle while no idle M could watch its timers, gives them
// to a running P, whose M runs them when due (its timer check preempts its
// G for them). Returns that P's M, to be sent a timer interrupt so that it
// arms for them, or NULL when no P runs (then the first M to idle watches
// them: core_arm_idle looks at every P's timers). The P chosen may stop
// running meanwhile; its timers are still watched: an idle P's by an idle
// M, one in a call's by sysmon, which retakes it when one comes due.
static struct m *timers_hand_on(struct p *from)
{
    for (uint32_t k = 1; k < sched.gomaxprocs; k++) {
        struct p *to = allp[(from->id + k) % sched.gomaxprocs];
        struct m *pm = __atomic_load_n(&to->m, __ATOMIC_RELAXED);     // racy: see above
        if (__atomic_load_n(&to->status, __ATOMIC_RELAXED) == P_RUNNING && pm) {   // racy: see above
            timers_move(from, to);
            __atomic_fetch_add(&sysmon_timer_handons, 1, __ATOMIC_RELAXED);       // a count tests read
            return pm;
        }
    }
    return 0;
}

// A P just taken from a G in a blocking call (status P_IDLE, not yet on
// the idle list), Go's handoffp: to an idle M when its queue, the global
// queue or a due timer has work, or, when no P is idle and nobody spins,
// to an idle M that spins with it (work may wait on busy Ps); else to the
// idle list, its queue to the global queue, and its timers, when no idle
// M could watch them there, to a running P. A stop-the-world that came
// between retake's CAS and this lock found the P neither on the idle list
// nor in a call, and waits for it: the P is stopped here, as Go's handoffp
// does. Put on the idle list instead, it stopped only if some M took it
// from there, and none may: a CI run's ktest (go-smp8-seed3) hung in
// gomaxprocs's stop that way.
static void handoffp(struct p *pp, uint64_t now)
{
    uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);    // pairs with timer0_update's release
    struct m *kick = 0;
    uint8_t kick_vec = VEC_WAKE;
    spin_lock(&sched.lock);
    pp->m = 0;
    if (sched.stw_pending) {        // sched.lock orders it with stop_the_world's count
        pp->status = P_STOPPED;
        __atomic_fetch_sub(&sched.stopwait, 1, __ATOMIC_RELEASE);  // pairs with stop_the_world's acquire
        spin_unlock(&sched.lock);
        return;
    }
    bool work = !runqempty(&pp->runq) || sched.runq_size || (t0 && t0 <= now);
    uint32_t zero = 0;
    bool spin = !work && !sched.npidle && sched.midle &&
                __atomic_compare_exchange_n(&sched.nmspinning, &zero, 1, false, __ATOMIC_SEQ_CST,   // claims the spinner, as wakep's CAS
                                            __ATOMIC_RELAXED);      // someone spins: it will steal
    struct m *nmp = work || spin ? mget() : 0;
    if (nmp) {
        nmp->nextspinning = spin;
        __atomic_store_n(&nmp->nextp, pp, __ATOMIC_RELEASE);   // pairs with stopm's acquire
        spin_unlock(&sched.lock);
        if (nmp != getm()) {        // core 0 idle in stopm: it sees nextp when this interrupt returns
            trace_event(TR_WAKE_IPI, 0, nmp->id);
            arch_send_ipi(nmp->id, VEC_WAKE);
        }
        return;
    }
    struct g *gs[RUNQ_SIZE + 1];
    globrunqputbatch(gs, runqdrain(&pp->runq, gs));
    if (t0 && !sched.midle) {
        kick = timers_hand_on(pp);
        kick_vec = VEC_TIMER;
    } else if (t0) {
        // An idle M watches the idle Ps' earliest timer; if this one is
        // earlier than the watch, the M at the idle list's head is woken
        // to watch again (core_arm_idle, on its way back to halt).
        uint64_t w = __atomic_load_n(&sched.timer_watch, __ATOMIC_ACQUIRE);   // pairs with core_arm_idle's CAS
        if (!w || t0 < w)
            kick = sched.midle;
    }
    pidleput(pp);
    spin_unlock(&sched.lock);
    if (kick && kick != getm())     // our own core: timer_irq re-arms after sysmon_tick
        arch_send_ipi(kick->id, kick_vec);
}

// The preemption backstop and the retake of Ps in blocking calls (the
// header says when). Returns how many it acted on; *recheck: when a P in
// a call needs the next look (its grace ends with work waiting, or its
// earliest timer comes due), 0 for none.
static uint32_t retake(uint64_t now, uint64_t *recheck)
{
    uint32_t n = 0;
    uint64_t one_look = arch_ns_to_cycles(SYSMON_MIN_NS), long_call = arch_ns_to_cycles(LONG_CALL_NS);
    *recheck = 0;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        struct p *pp = allp[i];
        struct m *pm;
        uint32_t s = __atomic_load_n(&pp->status, __ATOMIC_ACQUIRE);   // pairs with entersyscall's store (syscall_when)
        uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);  // pairs with timer0_update's release
        if (s == P_SYSCALL) {
            uint64_t in_call = now - pp->syscall_when;
            bool work = !runqempty(&pp->runq) || (t0 && t0 <= now);   // hints: the CAS and handoffp decide
            bool help = (!__atomic_load_n(&sched.npidle, __ATOMIC_RELAXED) &&        // hints: Go's rule, nobody
                         !__atomic_load_n(&sched.nmspinning, __ATOMIC_RELAXED)) ||  // else would take other work
                        in_call >= long_call;
            bool core_free = __atomic_load_n(&sched.nmidle, __ATOMIC_RELAXED);  // a hint: handoffp copes without one
            if (in_call < one_look || (!work && !(help && core_free))) {
                if (in_call < one_look && (work || t0))
                    *recheck = min_nz(*recheck, pp->syscall_when + one_look);
                else if (t0)
                    *recheck = min_nz(*recheck, t0);
                continue;
            }
            uint32_t want = P_SYSCALL;
            if (__atomic_compare_exchange_n(&pp->status, &want, P_IDLE, false, __ATOMIC_ACQ_REL,   // one of this, exitsyscall's, entersyscall_stw's and stop_the_world's CAS wins
                                            __ATOMIC_RELAXED)) {    // lost: the P is someone else's
                pp->syscalltick++;
                trace_event(TR_HANDOFF, 0, pp->id);
                handoffp(pp, now);
                n++;
            }
        } else if (s == P_RUNNING && (pm = __atomic_load_n(&pp->m, __ATOMIC_RELAXED))) {   // racy: a stale M gets a spare IPI
            if (pp->schedtick != pp->sysmon_tick) {
                pp->sysmon_tick = pp->schedtick;
                pp->sysmon_when = now;
            } else if (now - pp->sysmon_when >= quantum_cycles && pm->id != 0 &&   // core 0's own check runs before this look
                       (others_runnable(pp) || (t0 && t0 <= now))) {
                arch_send_ipi(pm->id, VEC_PREEMPT);
                pp->sysmon_when = now;
                n++;
            }
        }
    }
    return n;
}

// The backstop for timers nobody runs. A timer overdue by a millisecond
// while some P is idle means no idle M watched it: one is started, as Go's
// sysmon does (it runs the idle P's timers, or steals a busy P's overdue
// ones). With no M idle (every core runs a G or is in a call) nobody
// could start, and an idle P's timer waited until some core went idle (a
// P retaken from a call before its timer was due, the idle M woken to
// watch it taken for other work): the idle Ps' due timers go to a running
// P, as handoffp's do when it finds no M. *recheck: the next look, while
// an idle P's timer is pending with no M to watch it.
static bool timers_backstop(uint64_t now, uint64_t *recheck)
{
    uint64_t late = arch_ns_to_cycles(1000000);
    if (!__atomic_load_n(&sched.npidle, __ATOMIC_RELAXED))   // a hint: wakep and the lock decide
        return false;
    if (__atomic_load_n(&sched.nmidle, __ATOMIC_RELAXED)) {  // a hint, as above
        uint64_t due = timers_next();
        if (!due || now <= due || now - due <= late)
            return false;
        wakep();
        return true;
    }
    uint64_t due = 0;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++)
        if (__atomic_load_n(&allp[i]->status, __ATOMIC_RELAXED) == P_IDLE)   // a hint: the lock decides
            due = min_nz(due, __atomic_load_n(&allp[i]->timer0, __ATOMIC_ACQUIRE));   // pairs with timer0_update's release
    if (!due)
        return false;
    if (now <= due || now - due <= late) {
        *recheck = min_nz(*recheck, due + late + 1);
        return false;
    }
    // The Ms sent a timer interrupt (after the lock, as handoffp's); one
    // past the first few finds its due timers at its next slice check.
    struct m *kick[4];
    uint32_t nkick = 0;
    spin_lock(&sched.lock);
    if (!sched.stw_pending && !sched.midle) {   // a stop moves no timers; an idle M takes its P itself
        for (struct p *pp = sched.pidle; pp; pp = pp->link) {
            uint64_t t0 = __atomic_load_n(&pp->timer0, __ATOMIC_ACQUIRE);  // pairs with timer0_update's release
            struct m *pm = t0 && t0 <= now ? timers_hand_on(pp) : 0;
            if (pm && nkick < sizeof kick / sizeof kick[0])
                kick[nkick++] = pm;
        }
    }
    spin_unlock(&sched.lock);
    for (uint32_t i = 0; i < nkick; i++)
        if (kick[i] != getm())      // our own core: timer_irq re-arms after sysmon_tick
            arch_send_ipi(kick[i]->id, VEC_TIMER);
    return nkick != 0;
}

// Go's format: SCHED 1004ms: gomaxprocs=4 idleprocs=1 threads=4
// spinningthreads=0 idlethreads=1 runqueue=0 [3 0 1 0]
static void schedtrace(uint64_t now)
{
    char line[512];
    int n = snprintf(line, sizeof line,
                     "SCHED %lums: gomaxprocs=%u idleprocs=%u threads=%u spinningthreads=%u idlethreads=%u runqueue=%u [",
                     arch_cycles_to_ns(now - boot_tsc) / 1000000, sched.gomaxprocs,
                     __atomic_load_n(&sched.npidle, __ATOMIC_RELAXED), sched.ncpu,   // a report: racy reads
                     __atomic_load_n(&sched.nmspinning, __ATOMIC_RELAXED),          // racy
                     __atomic_load_n(&sched.nmidle, __ATOMIC_RELAXED),              // racy
                     __atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED));          // racy
    for (uint32_t i = 0; i < sched.gomaxprocs && n < (int)sizeof line - 16; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, i ? " %u" : "%u", runq_len(&allp[i]->runq));
    kprintf("%s]\n", line);
    if (!kparams.scheddetail)
        return;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        struct p *pp = allp[i];
        struct m *mp = pp->m;
        kprintf("  P%u: status=%u schedtick=%u m=%d runqsize=%u gfreecnt=%u timerslen=%u\n", i,
                pp->status, pp->schedtick, mp ? (int)mp->id : -1, runq_len(&pp->runq), pp->ngfree,
                pp->ntimers);
    }
    for (uint32_t i = 0; i < sched.ncpu; i++) {
        struct m *mp = &allm[i];
        kprintf("  M%u: p=%d curg=%ld locks=%u spinning=%s idle=%s\n", i, mp->p ? (int)mp->p->id : -1,
                mp->curg ? (long)mp->curg->id : -1L, arch_cpu(i)->preempt_count, mp->spinning ? "true" : "false",
                mp->idle ? "true" : "false");
    }
}

uint64_t sysmon_irqoff_reports;     // debug builds: reports made (tests read it)

#ifdef GORO_DEBUG
// Debug builds: a core whose timer came due more than 1 ms ago without its
// interrupt being taken has kept interrupts off that long (a halted core
// takes interrupts); it is asked, by NMI, to say where it is.
static void irqoff_check(uint64_t now)
{
    static uint64_t reported[MAX_CPUS];
    uint64_t limit = arch_ns_to_cycles(1000000);
    for (uint32_t i = 1; i < sched.ncpu; i++) {
        struct m *mp = &allm[i];
        arch_report_flush(i);           // an earlier report its NMI has recorded
        uint64_t armed = __atomic_load_n(&mp->armed, __ATOMIC_RELAXED);           // racy: a heuristic
        uint64_t last = __atomic_load_n(&mp->last_timer_irq, __ATOMIC_RELAXED);   // racy: a heuristic
        if (armed && now > armed + limit && last < armed && reported[i] != armed) {
            reported[i] = armed;
            __atomic_fetch_add(&sysmon_irqoff_reports, 1, __ATOMIC_RELAXED);   // a counter the tests read
            kprintf("sysmon: core %u has kept interrupts off for over %lu us\n", i,
                    arch_cycles_to_ns(now - armed) / 1000);
            arch_report_cpu(i, "interrupts off for over 1 ms");
        }
    }
}
#endif

// Core 0's timer interrupt.
void sysmon_tick(uint64_t now)
{
    if (!boot_tsc)
        boot_tsc = now;
    uint64_t look = __atomic_load_n(&next_look, __ATOMIC_RELAXED);   // a deadline only
    if (!look || now < look)
        return;
    __atomic_store_n(&last_look, now, __ATOMIC_RELAXED);       // a time to show, nothing behind it
    bool acted = netpoll_sysmon(now);       // the network's Gs first: retake may preempt for them
    uint64_t recheck;
    acted |= retake(now, &recheck) != 0;
    arch_clock_refine(now, false);      // the TSC's rate over a ten times longer window, when due
#ifdef GORO_DEBUG
    irqoff_check(now);
#endif
    acted |= timers_backstop(now, &recheck);
    acted |= sched_backstop_spinner(now);
    // About once a second, dead Gs' grown stacks are worth trimming; an
    // idle core does it on its way to halt.
    static uint64_t next_scavenge;
    if (now >= next_scavenge) {
        next_scavenge = now + arch_ns_to_cycles(1000000000);
        if (stack_scavenge_worth())
            __atomic_store_n(&scavenge_due, 1, __ATOMIC_RELAXED);   // a request: the idle M's exchange takes it
    }
    if (kparams.schedtrace_ns && now >= next_trace) {
        schedtrace(now);
        next_trace = now + arch_ns_to_cycles(kparams.schedtrace_ns);
    }
    uint64_t min = arch_ns_to_cycles(SYSMON_MIN_NS), max = arch_ns_to_cycles(SYSMON_MAX_NS);
    delay = acted || !delay ? min : delay * 2 > max ? max : delay * 2;
    // A P in a call is not idle: while one is, sysmon stays awake to
    // retake it. An M in a call whose P was retaken needs nothing of
    // sysmon; leaving the call it takes a P off the idle list, and wakes it.
    bool busy = __atomic_load_n(&sched.npidle, __ATOMIC_RELAXED) < sched.gomaxprocs;   // a hint: sysmon_wake restarts a sleeping sysmon
    uint64_t next = now + delay;
    if (kparams.schedtrace_ns && next_trace < next)
        next = next_trace;
    if (recheck && recheck < next)
        next = recheck > now + min ? recheck : now + min;   // a P in a call: its timer, or its grace
    if (busy || kparams.schedtrace_ns) {
        __atomic_store_n(&next_look, next, __ATOMIC_RELAXED);      // a deadline only
        return;
    }
    // Asleep, then a second look at what keeps it awake: a waker that
    // took a P after the look above saw next_look still set and woke
    // nobody, so the re-check is its only chance.
    __atomic_store_n(&next_look, 0, __ATOMIC_SEQ_CST);             // then npidle's load: pairs with sysmon_wake's seq-cst load
    if (__atomic_load_n(&sched.npidle, __ATOMIC_SEQ_CST) < sched.gomaxprocs)    // pairs with pidleget's change under sched.lock
        sysmon_wake();
}

void sysmon_init(void)
{
    boot_tsc = arch_cycles();
    next_trace = boot_tsc + arch_ns_to_cycles(kparams.schedtrace_ns);
    __atomic_store_n(&next_look, boot_tsc + arch_ns_to_cycles(20000), __ATOMIC_RELAXED);   // boot: before the other cores run
}

// ---- blocking calls ---------------------------------------------------------
//
// Go's entersyscall/exitsyscall. The G keeps its M, pinned (its preempt
// count held: it is not preempted in the middle), and the M lets go of its
// P: P_SYSCALL, held by no M, with m->oldp naming it for the way back. A P
// in a call is nobody's, so whoever wins the CAS of its status out of
// P_SYSCALL owns it: sysmon's retake, a stop-the-world, the M itself at
// exitsyscall, or another M leaving a call that had this P before (after a
// retake handed the P on and a G on it entered a call of its own; Go lets
// that M take it too). Each such end of a call on the P adds 1 to its
// syscalltick, so an M taking its P back knows whether it changed hands.
// While the M held on to its P through the call, it still took the P back
// from another M's call, and two Ms held it (stop-the-world's and sysmon's
// IPIs went to the wrong core): race_exitsyscall_takes_back_a_p_in_another_call.

// A stop-the-world came between our store of P_SYSCALL and its look at the
// Ps in calls: it counted this P as running and waits for it. Go's
// entersyscall_gcwait: the P is stopped here, if the stop has not taken it.
static void entersyscall_stw(struct p *pp)
{
    spin_lock(&sched.lock);         // the stop's counts are set under it
    uint32_t want = P_SYSCALL;
    if (sched.stw_pending && sched.stopwait &&
        __atomic_compare_exchange_n(&pp->status, &want, P_STOPPED, false, __ATOMIC_ACQ_REL,   // one of this, retake's, exitsyscall's and stop_the_world's CAS wins
                                    __ATOMIC_RELAXED)) {    // lost: someone took it
        pp->syscalltick++;
        trace_event(TR_HANDOFF, 0, pp->id);
        __atomic_fetch_sub(&sched.stopwait, 1, __ATOMIC_RELEASE);  // pairs with stop_the_world's acquire
    }
    spin_unlock(&sched.lock);
}

void entersyscall(void)
{
    struct m *mp = acquirem();
    struct p *pp = mp->p;
    if (!pp)
        sched_fatal_without_p("entersyscall", __builtin_return_address(0));     // calls do not nest
    __atomic_store_n(&mp->curg->status, G_SYSCALL, __ATOMIC_RELAXED);   // read by dumps only
    pp->syscall_when = arch_cycles();
    mp->syscalltick = pp->syscalltick;
    mp->oldp = pp;
    mp->p = 0;
    __atomic_store_n(&pp->m, (struct m *)0, __ATOMIC_RELAXED);        // racy readers only (preemptall, retake)
    trace_event(TR_SYSCALL, mp->curg->id, 0);
    // seq-cst: publishes the fields above to the CAS winner (release), and
    // is ordered before the stw_pending load below (stop_the_world stores
    // stw_pending, then looks at the statuses: one of us sees the other)
    __atomic_store_n(&pp->status, P_SYSCALL, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sched.stw_pending, __ATOMIC_SEQ_CST))       // pairs with stop_the_world's store
        entersyscall_stw(pp);
    sysmon_wake();              // asleep, it would never retake this P (Go does the same)
}

// The P is this M's again, by its CAS out of P_SYSCALL. If its syscalltick
// moved, the P changed hands during the call (a retake handed it on, and
// it is back in a call of another M's): it is taken as a new P, and the
// trace sees the G leave the call that lost its P and start again (Go's
// wirep and exitsyscallfast_reacquired). The G's slice ended with the
// call that lost its P: if anything waits, it yields behind it
// (releasem carries the request out), as exitsyscall0 queues it.
static void exitsyscall_wirep(struct m *mp, struct p *pp)
{
    struct g *gp = mp->curg;
    if (pp->syscalltick == mp->syscalltick) {
        mp->p = pp;
        __atomic_store_n(&pp->m, mp, __ATOMIC_RELAXED);               // racy readers only (preemptall, retake)
        trace_event(TR_SYSCALL_EXIT, gp->id, 0);
    } else {
        trace_event(TR_SYSCALL_EXIT, gp->id, 1);
        uint64_t f = irq_save();    // acquirep's, preempt_request's and core_rearm's callers keep this core
        acquirep(mp, pp);
        if (others_runnable(pp))
            preempt_request(PREEMPT_QUANTUM);
        core_rearm(mp, arch_cycles());
        irq_restore(f);
        trace_g(TR_GO_START, gp);
    }
    pp->syscalltick++;
}

// The call lost its P. In Go the retake's handoffp started an M for the
// work that waited, and this G, finding no idle P, goes to the global
// queue. Here the Ms are the cores: with none free, the retaken P went to
// the idle list with its Gs on the global queue, and this M is the one to
// run them. So the G takes an idle P and runs at once only when nothing
// waits; otherwise it goes to the global queue behind what waits and the
// M schedules. Run first, with its slice started over on the new P, a G
// whose calls kept losing their P was never preempted while the Gs it
// displaced waited: go_TestPreemptionAfterSyscall's 100 us calls at 2
// vCPUs took 7-35 s of guest time, against 11 ms queued behind. With no
// idle P the G goes to the global queue and the core idles.
static void exitsyscall0(struct g *gp)
{
    struct m *mp = dropg(gp);
    spin_lock(&sched.lock);
    struct p *pp = pidleget();
    if (pp && !others_runnable(pp)) {
        spin_unlock(&sched.lock);
        acquirep(mp, pp);
        sysmon_wake();              // the P left the idle list
        core_rearm(mp, arch_cycles());      // the quantum check of the new P
        execute(mp, gp, true);
    }
    trace_g(TR_GO_YIELD, gp);       // it leaves this core for the global queue
    __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);  // published by sched.lock
    globrunqput(gp);
    if (!pp) {
        mput(mp);
        spin_unlock(&sched.lock);
        stopm(mp);
        schedule();
    }
    spin_unlock(&sched.lock);
    acquirep(mp, pp);
    sysmon_wake();                  // the P left the idle list
    core_rearm(mp, arch_cycles());
    schedule();
}

void exitsyscall(void)
{
    struct m *mp = getm();      // pinned since entersyscall
    struct p *pp = mp->oldp;
    if (!pp || mp->p)
        chan_fatal("exitsyscall without entersyscall", __builtin_return_address(0));
    mp->oldp = 0;
    DEBUG_DELAY(exitsyscall_leaving);
    uint32_t want = P_SYSCALL;
    if (__atomic_compare_exchange_n(&pp->status, &want, P_RUNNING, false, __ATOMIC_ACQ_REL,   // one of this, retake's, stop_the_world's and another exiting M's CAS wins
                                    __ATOMIC_RELAXED)) {            // lost: the P was taken
        exitsyscall_wirep(mp, pp);
        __atomic_store_n(&mp->curg->status, G_RUNNING, __ATOMIC_RELAXED);   // read by dumps only
        releasem(mp);
        return;
    }
    // Our P was taken: find another, or queue the G and idle this core.
    // Interrupts go off before the preempt count drops, so the G cannot be
    // preempted on an M without a P before mcall's dropg (which drops a
    // request still pending).
    trace_event(TR_SYSCALL_EXIT, mp->curg->id, 1);
    irq_disable();
    trace_event(TR_PROC_STOP, 0, pp->id);
    __atomic_store_n(&mp->curg->status, G_RUNNING, __ATOMIC_RELAXED);   // read by dumps only
    preempt_count_dec();        // mcall needs zero; interrupts are off
    DEBUG_DELAY(exitsyscall_retaken);
    mcall(exitsyscall0);
}

// The hang report's view of the scheduler (arch/trap.c's outside NMI): the
// schedtrace line with every P and M, what each P holds in runnext and its
// timers, then every goroutine. Racy reads: the other cores are stopped.
void trap_dump_sched_state(void)
{
    bool detail = kparams.scheddetail;
    kparams.scheddetail = true;
    schedtrace(arch_cycles());
    kparams.scheddetail = detail;
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        struct g *next = SNAPSHOT(allp[i]->runq.runnext);
        kprintf("  P%u: runnext=%ld\n", i, next ? (long)next->id : -1L);
    }
    kprintf("  nmidle=%u npidle=%u stw_pending=%u\n",
            SNAPSHOT(sched.nmidle), SNAPSHOT(sched.npidle), (unsigned)SNAPSHOT(sched.stw_pending));
    g_dump_all();
}
