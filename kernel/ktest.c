// SPDX-License-Identifier: MIT
#include "kernel/ktest.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "arch/arch.h"
#include "kernel/sched.h"

extern const struct ktest __ktest_start[], __ktest_end[];

bool ktest_tail_bounds_asserted(void)
{
    return !arch_under_hypervisor();
}

uint64_t ktest_tsc_skew_ns(void)
{
    return ktest_tail_bounds_asserted() ? 0 : 200000;
}

// Every P gets busy one woken P at a time (a chain of wake-ups: up to 13
// minutes at 1024 vCPUs on 2 host CPUs), and meanwhile the loops already
// on a P are preempted in turn for those still queued: every loop has
// started long before every P runs one. So fewer Ps idle than ever before
// in a round is a step: true then, with the new low in *fewest.
static bool fewer_idle(uint32_t *fewest, uint32_t idle)
{
    uint32_t seen = __atomic_load_n(fewest, __ATOMIC_RELAXED);     // relaxed: a low-water mark; the CAS decides
    while (idle < seen)
        // relaxed: the mark publishes nothing (a busy round's moved does); a failure reloads seen
        if (__atomic_compare_exchange_n(fewest, &seen, idle, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return true;
    return false;
}

void kt_busy_round_begin(struct kt_busy_round *r)
{
    *r = (struct kt_busy_round){ .moved = cputicks(), .fewest_idle = UINT32_MAX };
}

void kt_busy_round_moved(struct kt_busy_round *r)
{
    kt_store(&r->moved, cputicks());
}

// A new low of idle Ps is a step of the round, whichever of its
// goroutines sees it: the looking one can wait in a run queue for longer
// than the stall limit while the others run and idle Ps keep waking.
static void busy_round_note_idle(struct kt_busy_round *r, uint32_t idle)
{
    if (fewer_idle(&r->fewest_idle, idle))
        kt_busy_round_moved(r);
}

enum { BUSY_ROUND_UNREPORTED, BUSY_ROUND_REPORTING, BUSY_ROUND_STALLED };

// (Not a difference: moved may be ahead of this core's clock.) The first
// goroutine to see the round stalled prints the wake-up chain's state;
// while it waits for the NMIs' answers the round is not yet stalled.
static bool busy_round_past_limit(struct kt_busy_round *r)
{
    return cputicks() > kt_load(&r->moved) + KT_STALL_NS / 1000000000 * cputicks_hz();
}

bool kt_busy_round_stalled(struct kt_busy_round *r)
{
    uint64_t now = cputicks(), last = __atomic_exchange_n(&r->asked, now, __ATOMIC_RELAXED);  // relaxed: a time
    busy_round_note_idle(r, SNAPSHOT(sched.npidle));
    if (!busy_round_past_limit(r))
        return false;
    uint64_t held = KT_HOST_HELD_MS * cputicks_hz() / 1000;
    if (arch_under_hypervisor() && last && now > last && now - last > held) {      // last: 0 on the first ask
        printf("ktest: no goroutine of the round asked for %lu ms: the stall limit starts again\n",
               (now - last) * 1000 / cputicks_hz());
        kt_busy_round_moved(r);
        return false;
    }
    uint32_t none = BUSY_ROUND_UNREPORTED;
    // acq_rel: the reporter's moved and host_stalls are seen by the next
    // one; relaxed on failure: the state is read below
    if (__atomic_compare_exchange_n(&r->reported, &none, BUSY_ROUND_REPORTING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
        if (!busy_round_past_limit(r)) {    // a report before ours started the limit again
            __atomic_store_n(&r->reported, BUSY_ROUND_UNREPORTED, __ATOMIC_RELAXED);   // relaxed: nothing written
            return false;
        }
        bool held = kt_stall_excused(&r->host_stalls);
        if (held)
            kt_busy_round_moved(r);
        // release: publishes moved and host_stalls to the next reporter's CAS
        __atomic_store_n(&r->reported, held ? BUSY_ROUND_UNREPORTED : BUSY_ROUND_STALLED, __ATOMIC_RELEASE);
        return !held;
    }
    return __atomic_load_n(&r->reported, __ATOMIC_RELAXED) == BUSY_ROUND_STALLED;   // relaxed: a state
}

static void census_add(struct g *gp, void *arg)
{
    struct kt_census *c = arg;
    uint32_t st = __atomic_load_n(&gp->status, __ATOMIC_RELAXED);     // relaxed: a snapshot for a report
    if (st != G_RUNNABLE && st != G_RUNNING && st != G_SYSCALL)
        return;
    c->running += st == G_RUNNING;
    c->runnable += st == G_RUNNABLE;
    c->in_call += st == G_SYSCALL;
    for (int i = 0; i < KT_CENSUS_FNS; i++)
        if (c->fn[i] == gp->fn || !c->fn[i]) {
            c->fn[i] = gp->fn;
            c->n[i]++;
            return;
        }
    c->other++;
}

void kt_census(struct kt_census *c)
{
    memset(c, 0, sizeof *c);
    g_for_each(census_add, c);
}

// A stall with no P idle and Gs queued: who holds the Ps (a test's
// leftovers show here).
static void print_census(void)
{
    struct kt_census c;
    kt_census(&c);
    printf("ktest: goroutines: %u running, %u runnable, %u in a call; by start:", c.running, c.runnable,
           c.in_call);
    for (int i = 0; i < KT_CENSUS_FNS && c.fn[i]; i++) {
        uint64_t off;
        const char *sym = arch_symbolize((uintptr_t)c.fn[i], &off);
        printf(" %s %u", sym ? sym : "?", c.n[i]);
    }
    printf(c.other ? ", others %u\n" : "\n", c.other);
}

// Reads other cores' Ms without their locks: each field a snapshot.
bool kt_print_wake_chain(void)
{
    enum { ASK = 4 };
    uint32_t self = (uint32_t)core_id(), ncpu = SNAPSHOT(sched.ncpu);
    uint32_t handed = 0, spinning = 0, oldest_core = 0, asked[ASK + 3], nasked = 0;
    uint64_t now = arch_cycles(), oldest = 0;
    for (uint32_t i = 0; i < ncpu; i++) {
        struct m *mp = &allm[i];
        if (SNAPSHOT(mp->nextp)) {
            uint64_t sent = SNAPSHOT(mp->wake_sent);
            handed++;
            if (now > sent && now - sent >= oldest) {
                oldest = now - sent;
                oldest_core = i;
            }
        }
        if (SNAPSHOT(mp->spinning) && spinning++ < ASK && i != self)
            asked[nasked++] = i;
    }
    // sysmon starts a spinner beside a stalled one (sched_backstop_spinner):
    // whether it has looked lately says whether core 0 was run.
    uint64_t look = sysmon_last_look();
    printf("ktest: sysmon looked %lu ms ago and has started %lu spinner(s) beside a stalled one\n",
           look && now > look ? arch_cycles_to_ns(now - look) / 1000000 : 0, kt_load(&sched_spinner_backstops));
    printf("ktest: wake-up chain: %u idle P(s), %u idle M(s), %u counted spinning (%u M(s) spin), "
           "%u G(s) in the global queue, %u core(s) waiting for a lock; %u M(s) handed a P not yet taken%s",
           SNAPSHOT(sched.npidle), SNAPSHOT(sched.nmidle), SNAPSHOT(sched.nmspinning), spinning,
           SNAPSHOT(sched.runq_size), arch_lock_waiters(), handed, handed ? "" : "\n");
    if (handed) {
        printf(", the oldest core %u's, %lu ms ago\n", oldest_core, arch_cycles_to_ns(oldest) / 1000000);
        if (oldest_core != self)
            asked[nasked++] = oldest_core;
    }
    print_census();
    // wakep's claim of the spinner is made before startm takes sched.lock:
    // a count with no M spinning or handed one is a claimer on its way.
    uint32_t counted = SNAPSHOT(sched.nmspinning), claimer = SNAPSHOT(sched.claim_core);
    if (counted > spinning + handed && claimer < ncpu) {
        printf("ktest: %u spinner(s) counted for no M: the latest claim was core %u's\n",
               counted - spinning - handed, claimer);
        if (claimer != self)
            asked[nasked++] = claimer;
    }
    int32_t holder = SNAPSHOT(sched.lock.cpu);
    uintptr_t pc = SNAPSHOT(sched.lock.pc);
    if (SNAPSHOT(sched.lock.locked) && holder >= 0 && (uint32_t)holder < ncpu) {
        uint64_t off;
        const char *sym = arch_symbolize(pc, &off);
        printf("ktest: sched.lock held by core %d, taken at %s+0x%lx\n", holder, sym ? sym : "?", off);
        if ((uint32_t)holder != self)
            asked[nasked++] = (uint32_t)holder;
    }
    bool held = kt_ask_cores(asked, nasked, "in the wake-up chain");
    printf("ktest: wake-up chain after the NMIs: %u idle P(s), %u idle M(s), %u counted spinning, "
           "%u G(s) in the global queue\n", SNAPSHOT(sched.npidle), SNAPSHOT(sched.nmidle),
           SNAPSHOT(sched.nmspinning), SNAPSHOT(sched.runq_size));
    return held;
}

// Where those cores are: an NMI records it, and a vCPU the host does not
// run answers late or not at all, which says as much (at 1024 vCPUs on a
// 2-CPU host the host's round is seconds long). A report counts as
// answered once printed by anyone: a debug build's sysmon flushes every
// core's.
bool kt_ask_cores(const uint32_t *cores, uint32_t n, const char *why)
{
    enum { MOST = 8 };
    ASSERT(n <= MOST);
    uint64_t before[MOST];
    bool sent[MOST];
    for (uint32_t k = 0; k < n; k++) {
        before[k] = arch_reports_printed(cores[k]);
        sent[k] = arch_report_cpu(cores[k], why);
    }
    // The last answer's time bounds every answer's; a core that does not
    // answer keeps the wait to half the stall limit, past KT_HOST_HELD_MS.
    uint64_t asked_at = arch_cycles(), until = asked_at + arch_ns_to_cycles(KT_STALL_NS / 2), waited_ms = 0;
    for (uint32_t k = 0; k < n; k++) {
        bool answered = false;
        while (!(answered = arch_report_flush(cores[k]) || arch_reports_printed(cores[k]) != before[k]) &&
               arch_cycles() < until)
            cpu_relax();
        waited_ms = arch_cycles_to_ns(arch_cycles() - asked_at) / 1000000;
        if (!answered)
            printf("ktest: core %u did not answer its NMI within %lu s%s\n", cores[k],
                   (unsigned long)(KT_STALL_NS / 2000000000ull), sent[k] ? "" : " (a report was under way)");
        else
            printf("ktest: core %u answered %lu ms after the NMIs were sent\n", cores[k], waited_ms);
    }
    return arch_under_hypervisor() && waited_ms > KT_HOST_HELD_MS;
}

static bool excuse(bool held, uint32_t *host_stalls)
{
    if (!held || *host_stalls >= KT_HOST_STALLS)
        return false;
    ++*host_stalls;
    printf("ktest: the host held a core: the stall limit starts again (%u of %u)\n", *host_stalls, KT_HOST_STALLS);
    return true;
}

bool kt_stall_excused(uint32_t *host_stalls)
{
    return excuse(kt_print_wake_chain(), host_stalls);
}

// kt_stall_excused for a wait on one core's goroutine: asks that core.
static bool core_stall_excused(uint32_t core, const char *why, uint32_t *host_stalls)
{
    return excuse(kt_ask_cores(&core, 1, why), host_stalls);
}

bool kt_wait_count_of(const uint64_t *counter, uint64_t target, struct g *gp, const char *what)
{
    uint32_t host_stalls = 0;
    while (!kt_wait_count(counter, target, KT_STALL_MS)) {
        // A snapshot: the G may have moved on, or ended, meanwhile.
        struct m *mp = gp ? SNAPSHOT(gp->m) : 0;
        uint32_t status = gp ? SNAPSHOT(gp->status) : G_RUNNABLE;
        bool on_core = mp && (status == G_RUNNING || status == G_SYSCALL), held;
        uint32_t core = on_core ? SNAPSHOT(mp->id) : 0;
        char where[40];
        if (on_core)
            snprintf(where, sizeof where, "on core %u", core);
        else
            snprintf(where, sizeof where, "not on a core (status %u)", status);
        printf("ktest: %s: no move for %d s; its goroutine is %s\n", what, (int)(KT_STALL_NS / 1000000000), where);
        if (on_core)
            held = core_stall_excused(core, what, &host_stalls);
        else
            held = kt_stall_excused(&host_stalls);
        if (!held)
            return false;
    }
    return true;
}

bool kt_busy_round_look(struct kt_busy_round *r, bool other_work)
{
    uint32_t idle = SNAPSHOT(sched.npidle), global = SNAPSHOT(sched.runq_size), queued = 0;
    for (uint32_t i = 0; i < SNAPSHOT(sched.gomaxprocs); i++)
        queued += !runqempty(&allp[i]->runq);
    busy_round_note_idle(r, idle);
    if (!idle && !global && !queued && !other_work)
        return true;
    kt_store(&r->seen_at, cputicks());
    kt_store(&r->seen_idle, idle);
    kt_store(&r->seen_global, global);
    kt_store(&r->seen_queued, queued);
    kt_store(&r->seen_other, other_work);
    return false;
}

uint64_t kt_busy_round_seen_s(const struct kt_busy_round *r)
{
    uint64_t at = kt_load(&r->seen_at), now = cputicks();
    return now > at ? (now - at) / cputicks_hz() : 0;
}

int kt_every_p_busy_rounds(int rounds)
{
    return ktest_guest_bounds_asserted() || SNAPSHOT(sched.gomaxprocs) <= 64 ? rounds : 1;
}

// The running test's outcome. Tests run one at a time from the main
// goroutine; a test's helper goroutines report through KT_* too, so the
// fields are written atomically and the first failure wins.
static char fail_msg[320];     // room for a set-up's whole state and the file and line
static int failed;
static const char *skip_reason;

void ktest_fail(const char *file, int line, const char *fmt, ...)
{
    // acq_rel: the first failure wins and writes fail_msg; the runner reads
    // it after the test returned and ktest_failed's acquire.
    if (__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL))
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof fail_msg)
        snprintf(fail_msg + n, sizeof fail_msg - (size_t)n, " (%s:%d)", file, line);
}

void ktest_skip(const char *reason)
{
    skip_reason = reason;
}

bool ktest_failed(void)
{
    return __atomic_load_n(&failed, __ATOMIC_ACQUIRE);     // acquire: pairs with ktest_fail's exchange
}

bool kt_wait_count(const uint64_t *counter, uint64_t target, uint64_t stall_ms)
{
    uint64_t seen = kt_load(counter), moved = nanotime();
    while (seen < target) {
        gosched();
        uint64_t now = nanotime(), v = kt_load(counter);
        if (v != seen) {
            seen = v;
            moved = now;
        } else if (now - moved > stall_ms * 1000000) {
            return false;
        }
    }
    return true;
}

static bool clock_exact;            // set once, before the tests run

void ktest_set_clock_exact(bool exact)
{
    clock_exact = exact;
}

bool ktest_guest_bounds_asserted(void)
{
    return clock_exact || ktest_tail_bounds_asserted();
}

void ktest_guest_bound(const char *file, int line, const char *what, uint64_t ns, uint64_t bound_ns)
{
    bool asserted = ktest_guest_bounds_asserted();
    kprintf("ktest: guest time %s: %lu us (bound %lu us, %s)\n", what, ns / 1000, bound_ns / 1000,
            clock_exact ? "asserted: the clock counts instructions"
            : asserted  ? "asserted: bare metal"
                        : "measured only: under a hypervisor");
    if (asserted && ns > bound_ns)
        ktest_fail(file, line, "%s: %lu us of guest time, over its %lu us bound", what, ns / 1000,
                   bound_ns / 1000);
}

// Whether name holds one of filter's comma-separated substrings.
static bool selected(const char *name, const char *filter)
{
    if (!filter)
        return true;
    for (const char *f = filter; *f;) {
        const char *end = f;
        while (*end && *end != ',')
            end++;
        size_t n = (size_t)(end - f);
        for (const char *c = name; n && *c; c++)
            if (strncmp(c, f, n) == 0)
                return true;
        f = *end ? end + 1 : end;
    }
    return false;
}

void ktest_tail(const char *file, int line, const char *what, uint64_t ns, uint64_t bound_ns)
{
    bool asserted = ktest_tail_bounds_asserted();
    kprintf("ktest: tail %s: %lu us (bound %lu us, %s)\n", what, ns / 1000, bound_ns / 1000,
            asserted ? "asserted: bare metal" : "measured only: under a hypervisor");
    if (asserted && ns > bound_ns)
        ktest_fail(file, line, "%s: %lu us, over its %lu us bound", what, ns / 1000, bound_ns / 1000);
}

int ktest_run_all(const char *filter)
{
    int pass = 0, fail = 0, skip = 0;
    if (ktest_tail_bounds_asserted())
        kprintf("ktest: bare metal: tail bounds on wall-clock time are asserted\n");
    else
        kprintf("ktest: under a hypervisor (%s): tail bounds are measured, not asserted\n", arch_accel());
    // Each test starts at the run's gomaxprocs: one that fails between its
    // change and its restore (a KT_ASSERT returns) would otherwise run the
    // rest with fewer Ps, and those that need every core would skip.
    int procs = gomaxprocs(0);
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct ktest *t = __ktest_start; t < __ktest_end; t++) {
        if (!selected(t->name, filter))
            continue;
        failed = 0;
        skip_reason = 0;
        fail_msg[0] = 0;
        uint64_t t0 = arch_cycles();
        t->fn();
        uint64_t ms = arch_cycles_to_ns(arch_cycles() - t0) / 1000000;
        int left = gomaxprocs(procs);
        if (left != procs)
            ktest_fail(__FILE__, __LINE__, "left gomaxprocs at %d, not the run's %d", left, procs);
        if (ktest_failed()) {
            kprintf("TEST FAIL %s: %s\n", t->name, fail_msg);
            fail++;
        } else if (skip_reason) {
            kprintf("TEST SKIP %s: %s\n", t->name, skip_reason);
            skip++;
        } else {
            kprintf("TEST PASS %s (%lu ms)\n", t->name, ms);
            pass++;
        }
    }
    if (skip)
        kprintf("ktest: %d passed, %d failed, %d skipped\n", pass, fail, skip);
    else
        kprintf("ktest: %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
