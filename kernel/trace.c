// SPDX-License-Identifier: MIT
// The event trace: one ring per core, written only by that core with
// interrupts off, so a record is never shared or torn by another writer.
//
// Invariants: ring i is written only by core i, with interrupts off; a
// record is complete before n is advanced past it (release), so the dump,
// reading n with acquire, sees whole records. The dump runs once the other
// cores are being stopped by NMI, which can land inside a record: the only
// slot that can be in flight is the one at n (the oldest once the ring has
// wrapped), so the dump leaves that slot out.
//
// The shell pauses and resumes recording (trace_set_recording) and dumps
// while the machine runs (trace_dump_live): each core marks its ring busy
// around a record, and the dump, once it has turned recording off, waits
// until no ring is busy (Dekker: both sides store, fence, then load), so
// it reads rings nobody writes.
//
// Run time per goroutine: while the hooks are on, each core knows the G it
// started last (cur_g, since) and adds the time to that G's run_cycles
// when it sees the G leave (parked, preempted, exited, yielded) or the next
// one start. A G's count restarts when it is created (records are reused).
#include "kernel/trace.h"
#include "arch/arch.h"
#include "goro.h"
#include "kernel/page.h"
#include "lib/printf.h"
#include "kernel/sched.h"
#include "kernel/metrics.h"

#define TRACE_RING 8192u            // records per core, a power of two

struct trace_rec {
    uint64_t tsc;
    uint64_t g;
    uint64_t arg;
    uint32_t ev;                    // enum trace_ev
    uint32_t fn_lo;                 // GoCreate: the low half of the G's start function (see fn_of)
};

struct trace_ring {
    // the owning core, interrupts off
    struct trace_rec *recs;
    uint64_t n;                     // records ever written (release store)
    uint64_t running;               // the G last started here and not yet seen leave, 0 = none
    struct g *cur_g;                // that G, for its run time
    uint64_t since;                 // when it started (TSC)
    uint32_t busy;                  // a record is being written (see the top)
} __attribute__((aligned(64)));

bool trace_on;                      // the rings exist
static bool recording;              // records are kept (trace_set_recording)
struct static_key trace_key;
static struct trace_ring rings[MAX_CPUS];
static uint32_t trace_ncpu;
static uint64_t trace_t0;

// How each event prints: its name and the names of its two fields (NULL:
// not printed). tools/trace/trace2json.py reads these lines.
static const struct {
    const char *name, *g, *arg;
} ev_fmt[TR_NEVENTS] = {
    [TR_GO_CREATE] = { "GoCreate", "g", "parent" },      // and fn=, the start function
    [TR_GO_START] = { "GoStart", "g", "p" },
    [TR_GO_YIELD] = { "GoYield", "g", 0 },
    [TR_GO_PREEMPT] = { "GoPreempt", "g", "why" },
    [TR_GO_PARK] = { "GoPark", "g", "reason" },
    [TR_GO_UNPARK] = { "GoUnpark", "g", "by" },
    [TR_GO_END] = { "GoEnd", "g", 0 },
    [TR_STEAL] = { "Steal", "n", "victim" },
    [TR_IDLE] = { "Idle", 0, 0 },
    [TR_WAKE] = { "Wake", 0, 0 },
    [TR_PROC_START] = { "ProcStart", 0, "p" },
    [TR_PROC_STOP] = { "ProcStop", 0, "p" },
    [TR_GOMAXPROCS] = { "Gomaxprocs", 0, "procs" },
    [TR_SYSCALL] = { "GoSysCall", "g", 0 },
    [TR_SYSCALL_EXIT] = { "GoSysExit", "g", "lost" },
    [TR_HANDOFF] = { "Handoff", 0, "p" },
    [TR_TIMER] = { "TimerFire", "late", "fn" },
    [TR_WAKE_IPI] = { "WakeIPI", 0, "core" },
};

static void record(enum trace_ev ev, uint64_t g, uint64_t arg, struct g *gp);

void trace_enable(void)
{
    unsigned n = static_branch_enable(&trace_key);
    kprintf("trace: %u hooks on\n", n);
}

// A trace started while goroutines exist begins, as Go's StartTrace does,
// with a GoCreate for each of them, so that a reader (trace2json's
// checker) knows every G it sees; and every G's run time starts now.
static void existing_g(struct g *gp, void *arg)
{
    (void)arg;
    __atomic_store_n(&gp->run_cycles, 0, __ATOMIC_RELAXED);        // relaxed: no hook runs yet
    uint32_t st = __atomic_load_n(&gp->status, __ATOMIC_RELAXED);  // relaxed: a snapshot
    if (st != G_DEAD && st != G_IDLE)
        record(TR_GO_CREATE, gp->id, gp->parent_id, 0);
}

int trace_set_hooks(bool on)
{
    static mutex_t m = MUTEX_INIT;
    mutex_lock(&m);
    int n = 0;
    if (on && (!trace_key.enabled || !trace_on)) {  // (metrics=1 may have patched them in alone)
        if (!trace_on)
            trace_init(arch_ncpu());
        if (!trace_on) {
            n = -1;
            goto out;
        }
        g_for_each(existing_g, 0);
        // The caller runs: its GoStart, on its core (pinned while recorded).
        struct m *mp = acquirem();
        record(TR_GO_START, mp->curg->id, mp->p->id, mp->curg);
        releasem(mp);
        if (!trace_key.enabled) {
            mp = acquirem();    // its syncs are TLB shoot-downs: the caller stays on its core
            n = (int)static_branch_set_live(&trace_key, true);
            releasem(mp);
        }
    } else if (!on && trace_key.enabled) {
        if (__atomic_load_n(&metrics_on, __ATOMIC_ACQUIRE)) {    // acquire: pairs with metrics_init's release
            kprintf("trace: the hooks stay in for metrics=1 (recording is off)\n");
            goto out;               // the cores keep running record(): their ring state is theirs
        }
        struct m *mp = acquirem();      // as above
        n = (int)static_branch_set_live(&trace_key, false);
        releasem(mp);
        // Every core has taken an interrupt since the hooks went out, and
        // none is inside record() (it runs with interrupts off): no core
        // writes the rings now. What each knew of its running G would be
        // stale when the hooks come back.
        for (uint32_t i = 0; i < trace_ncpu; i++) {
            rings[i].cur_g = 0;
            rings[i].running = 0;
        }
    }
out:
    mutex_unlock(&m);
    return n;
}

void trace_init(uint32_t ncpu)
{
    size_t pages = (TRACE_RING * sizeof(struct trace_rec) + PAGE_SIZE - 1) / PAGE_SIZE;
    for (uint32_t i = 0; i < ncpu; i++) {
        rings[i].recs = page_try_alloc(pages);
        if (!rings[i].recs) {
            kprintf("trace: no memory for core %u's ring (%lu KiB); the trace stays off\n", i,
                    pages * PAGE_SIZE / 1024);
            return;
        }
    }
    trace_ncpu = ncpu;
    trace_t0 = arch_cycles();
    recording = true;
    __atomic_store_n(&trace_on, true, __ATOMIC_RELEASE);   // release: the rings are set up
    kprintf("trace: on, the latest %u events of each core are printed when the machine stops\n",
            TRACE_RING);
}

// The owning core, interrupts off.
static void ring_put(struct trace_ring *r, uint64_t tsc, enum trace_ev ev, uint64_t g, uint64_t arg,
                     uint32_t fn_lo)
{
    uint64_t n = r->n;
    struct trace_rec *rec = &r->recs[n & (TRACE_RING - 1)];
    rec->tsc = tsc;
    rec->g = g;
    rec->arg = arg;
    rec->ev = ev;
    rec->fn_lo = fn_lo;
    __atomic_store_n(&r->n, n + 1, __ATOMIC_RELEASE);     // release: the record is whole
}

// The owning core, interrupts off: the run time of the G that ran here.
static void account_leave(struct trace_ring *r, uint64_t now)
{
    if (r->cur_g) {
        // relaxed: read racily by the shell's ps; only this core writes it
        __atomic_store_n(&r->cur_g->run_cycles, r->cur_g->run_cycles + (now - r->since),
                         __ATOMIC_RELAXED);
    }
    __atomic_store_n(&r->cur_g, (struct g *)0, __ATOMIC_RELAXED);   // relaxed: read racily by ps
}

// Every hook comes here: to the ring when the trace is on, to the metrics
// when metrics=1 (gp: the G, when the hook had it).
static void record(enum trace_ev ev, uint64_t g, uint64_t arg, struct g *gp)
{
    bool tr = __atomic_load_n(&trace_on, __ATOMIC_ACQUIRE);     // acquire: pairs with trace_init's release
    bool me = __atomic_load_n(&metrics_on, __ATOMIC_ACQUIRE);   // acquire: pairs with metrics_init's release
    if (!tr && !me)
        return;
    uint64_t fl = irq_save();
    uint64_t now = arch_cycles();
    if (me)
        metrics_event(ev, gp, g, arg, now);
    if (!tr) {
        irq_restore(fl);
        return;
    }
    struct trace_ring *r = &rings[cpu_index()];
    __atomic_store_n(&r->busy, 1, __ATOMIC_SEQ_CST);      // pairs with trace_dump_live's load
    bool keep = __atomic_load_n(&recording, __ATOMIC_SEQ_CST);   // after busy is visible
    uint32_t fn_lo = 0;
    if (ev == TR_GO_CREATE && gp) {
        gp->run_cycles = 0;
        fn_lo = (uint32_t)(uintptr_t)gp->fn;
    }
    if (ev == TR_GO_START) {
        // gosched has no hook (it is the hottest switch): a G that is still
        // running here when the next one starts left through gosched.
        if (r->running && keep)
            ring_put(r, now, TR_GO_YIELD, r->running, 0, 0);
        account_leave(r, now);
        r->running = g;
        __atomic_store_n(&r->since, now, __ATOMIC_RELAXED);    // relaxed: read racily by ps
        __atomic_store_n(&r->cur_g, gp, __ATOMIC_RELAXED);     // relaxed: read racily by ps
    } else if (ev == TR_GO_YIELD || ev == TR_GO_PREEMPT || ev == TR_GO_PARK || ev == TR_GO_END) {
        if (r->running != g && keep) {
            // A G leaving a core where this ring never saw it start was
            // running when the hooks came in (they are patched in one site
            // at a time while every core runs): it starts here, now, so
            // that the trace says who ran (and a G that left through
            // gosched before it, as above).
            if (r->running)
                ring_put(r, now, TR_GO_YIELD, r->running, 0, 0);
            struct m *mp = getm();
            ring_put(r, now, TR_GO_START, g, mp->p ? mp->p->id : 0, 0);
            r->running = g;
        }
        if (r->running == g) {
            r->running = 0;
            account_leave(r, now);
        }
    }
    if (keep)
        ring_put(r, now, ev, g, arg, fn_lo);
    __atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);      // the ring is whole again
    irq_restore(fl);
}

void trace_record(enum trace_ev ev, uint64_t g, uint64_t arg)
{
    record(ev, g, arg, 0);
}

void trace_record_gp(enum trace_ev ev, struct g *gp, uint64_t arg)
{
    record(ev, gp->id, arg, gp);
}

void trace_record_g(enum trace_ev ev, struct g *gp)
{
    uint64_t arg = 0;
    struct m *mp = getm();
    switch (ev) {
    case TR_GO_CREATE:
        arg = gp->parent_id;
        break;
    case TR_GO_START:
        arg = mp->p ? mp->p->id : 0;
        break;
    case TR_GO_PARK:
        arg = (uint64_t)gp->waitreason;
        break;
    case TR_GO_UNPARK:
        arg = mp->curg ? mp->curg->id : 0;
        break;
    default:
        break;
    }
    record(ev, gp->id, arg, gp);
}

// A start function from its low half: the kernel image (every function)
// lies within one aligned 4 GiB, this function's. 0: not known.
static uint64_t fn_of(uint32_t fn_lo)
{
    return fn_lo ? ((uint64_t)(uintptr_t)fn_of & ~0xffffffffull) | fn_lo : 0;
}

// A dump's conversion of TSC cycles to ns: one rate, read when the dump
// starts. sysmon refines the rate while the machine runs (arch/tsc.c), and
// printing a dump takes long enough for a refinement to land inside it:
// converted at the current rate, every record printed after it would move
// by the change (1.7 ppm moves a record 206 ms in by 343 ns) and come out
// before records printed just before it, on its own core too, though the
// merge prints in TSC order (Go's trace parser refuses times that go back).
struct dump_clock {
    uint64_t ns_per_2_32;           // ns in 2^32 cycles: 32.32 ns per cycle
};

static struct dump_clock dump_clock_now(void)
{
    return (struct dump_clock){ arch_cycles_to_ns(1ull << 32) };
}

static uint64_t dump_ns(struct dump_clock c, uint64_t cycles)
{
    __uint128_t ns = ((__uint128_t)cycles * c.ns_per_2_32) >> 32;
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

static void print_rec(struct dump_clock c, uint32_t core, const struct trace_rec *rec)
{
    uint64_t ns = dump_ns(c, rec->tsc - trace_t0);
    if (rec->ev >= TR_NEVENTS) {
        kprintf("TRACE %u %lu Bad ev=%u\n", core, ns, rec->ev);
        return;
    }
    char g[32] = "", arg[96] = "";
    if (rec->ev == TR_TIMER)        // the lateness, in TSC cycles
        snprintf(g, sizeof g, " late=%lu", dump_ns(c, rec->g));
    else if (ev_fmt[rec->ev].g)
        snprintf(g, sizeof g, " %s=%lu", ev_fmt[rec->ev].g, rec->g);
    if (rec->ev == TR_GO_PARK)      // the wait reason: a string literal, no spaces lost
        snprintf(arg, sizeof arg, " reason=\"%s\"", rec->arg ? (const char *)rec->arg : "");
    else if (rec->ev == TR_GO_CREATE)   // tools/trace/trace2go.py names the function from goro.elf
        snprintf(arg, sizeof arg, " parent=%lu fn=%lu", rec->arg, fn_of(rec->fn_lo));
    else if (ev_fmt[rec->ev].arg)
        snprintf(arg, sizeof arg, " %s=%lu", ev_fmt[rec->ev].arg, rec->arg);
    kprintf("TRACE %u %lu %s%s%s\n", core, ns, ev_fmt[rec->ev].name, g, arg);
}

// ---- the flight recorder ----------------------------------------------------
//
// While the machine runs, the rings keep being written, so a slot read now
// may be overwritten while it is copied. A record at index s (slot s &
// (TRACE_RING - 1)) is safe to have copied if, after the copy, the
// writer's count n is still below s + TRACE_RING - 1: the writer has not
// started the record that reuses the slot (it writes slot n & mask before
// publishing n + 1). Each core's window is copied newest first, each copy
// checked, and the walk stops at the first record that may be torn or is
// older than the window.

struct snap {
    struct trace_rec *recs;         // oldest first
    uint64_t n, next;
};

// Copies core i's records from cutoff to now (TSC) into s.
static void snap_core(uint32_t i, uint64_t cutoff, uint64_t now, struct snap *s)
{
    struct trace_ring *r = &rings[i];
    uint64_t end = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE);    // acquire: pairs with ring_put's release
    uint64_t k = 0;                 // records copied, newest first at the top of s->recs
    for (uint64_t idx = end; idx > 0 && k < TRACE_RING - 1; idx--) {
        const struct trace_rec *src = &r->recs[(idx - 1) & (TRACE_RING - 1)];
        struct trace_rec copy = { 0 };
        copy.tsc = __atomic_load_n(&src->tsc, __ATOMIC_RELAXED);   // relaxed: validated below
        copy.g = __atomic_load_n(&src->g, __ATOMIC_RELAXED);       // relaxed: as tsc
        copy.arg = __atomic_load_n(&src->arg, __ATOMIC_RELAXED);   // relaxed: as tsc
        copy.ev = __atomic_load_n(&src->ev, __ATOMIC_RELAXED);     // relaxed: as tsc
        copy.fn_lo = __atomic_load_n(&src->fn_lo, __ATOMIC_RELAXED);   // relaxed: as tsc
        __atomic_thread_fence(__ATOMIC_ACQUIRE);    // the copy's loads before n's re-read
        uint64_t now_n = __atomic_load_n(&r->n, __ATOMIC_RELAXED);    // relaxed: the fence above orders it after the copy
        if (now_n >= idx - 1 + TRACE_RING - 1 || copy.tsc < cutoff)
            break;                  // may be torn (the writer lapped it), or older than the window
        if (copy.tsc > now)
            continue;               // written since the dump began: after the window
        s->recs[TRACE_RING - 1 - ++k] = copy;
    }
    s->recs += TRACE_RING - 1 - k;  // the oldest copied
    s->n = k;
    s->next = 0;
}

void trace_dump_recent(uint64_t ms)
{
    if (!__atomic_load_n(&trace_on, __ATOMIC_ACQUIRE)) {      // acquire: pairs with trace_init's release
        kprintf("trace: off (boot with trace=1 to keep the flight recorder)\n");
        return;
    }
    uint32_t ncpu = trace_ncpu;
    size_t pages = ((TRACE_RING - 1) * sizeof(struct trace_rec) + PAGE_SIZE - 1) / PAGE_SIZE;
    static struct snap snaps[MAX_CPUS];
    static bool busy;
    if (__atomic_exchange_n(&busy, true, __ATOMIC_ACQUIRE)) {   // acquire: pairs with the release at the end; one dump at a time (snaps is shared)
        kprintf("trace: a flight-recorder dump is already being printed\n");
        return;
    }
    uint32_t got = 0;
    for (; got < ncpu; got++) {
        struct trace_rec *buf = page_try_alloc_uncleared(pages);    // written before it is read
        if (!buf)
            break;
        snaps[got].recs = buf;
    }
    // The copies are taken pinned, one after another, with nothing else
    // in between: a dumping G preempted among them let this core's own
    // goroutines lap its ring (8191 events are tens of ms of ping-pong),
    // and a loaded host once left both cores' windows empty. Another
    // core's ring can still be lapped while the host holds this vCPU.
    struct m *mp = acquirem();
    uint64_t now = arch_cycles();
    // ms so large that its nanoseconds overflow means all the rings hold
    uint64_t window = ms && ms <= UINT64_MAX / 1000000 ? arch_ns_to_cycles(ms * 1000000) : now;
    uint64_t cutoff = now > window ? now - window : 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < got; i++) {
        snap_core(i, cutoff, now, &snaps[i]);
        total += snaps[i].n;
    }
    releasem(mp);
    if (got < ncpu)
        kprintf("trace: no memory for core %u's snapshot; its events are left out\n", got);
    struct dump_clock clk = dump_clock_now();   // the window's end and every record: one rate
    kprintf("trace: flight recorder: %lu ms up to %lu ns\n", ms, dump_ns(clk, now - trace_t0));
    kprintf("TRACE begin cores=%u tsc_hz=%lu events=%lu dropped=%lu\n", ncpu, arch_tsc_hz(), total,
            (uint64_t)1);           // dropped >= 1: a window, not the whole run
    for (;;) {
        uint32_t best = got;
        for (uint32_t i = 0; i < got; i++)
            if (snaps[i].next < snaps[i].n &&
                (best == got || snaps[i].recs[snaps[i].next].tsc < snaps[best].recs[snaps[best].next].tsc))
                best = i;
        if (best == got)
            break;
        print_rec(clk, best, &snaps[best].recs[snaps[best].next++]);
    }
    kprintf("TRACE end\n");
    for (uint32_t i = 0; i < got; i++) {
        struct snap *s = &snaps[i];
        page_free(s->recs - (TRACE_RING - 1 - s->n), pages);
    }
    __atomic_store_n(&busy, false, __ATOMIC_RELEASE);   // release: snaps is free again
}

// Prints records [next, end) of every ring, merged by time, between the
// TRACE begin and end lines. dropped: the events before the first ones
// printed (overwritten, or printed by an earlier live dump), so that a
// reader knows the dump starts mid-stream.
static void dump_rings(uint32_t ncpu, uint64_t *next, const uint64_t *end, uint64_t dropped)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < ncpu; i++)
        total += end[i] - next[i];
    kprintf("TRACE begin cores=%u tsc_hz=%lu events=%lu dropped=%lu\n", ncpu,
            arch_tsc_hz(), total, dropped);
    // merge by time: each ring is in time order already
    struct dump_clock clk = dump_clock_now();
    for (;;) {
        uint32_t best = ncpu;
        for (uint32_t i = 0; i < ncpu; i++) {
            if (next[i] == end[i])
                continue;
            if (best == ncpu ||
                rings[i].recs[next[i] & (TRACE_RING - 1)].tsc <
                    rings[best].recs[next[best] & (TRACE_RING - 1)].tsc)
                best = i;
        }
        if (best == ncpu)
            break;
        print_rec(clk, best, &rings[best].recs[next[best] & (TRACE_RING - 1)]);
        next[best]++;
    }
    kprintf("TRACE end\n");
}

// Where the dumps start reading each ring: trace_dump_live moves it past
// what it printed, so the next dump shows only newer events.
static uint64_t dumped_to[MAX_CPUS];

void trace_dump(void)
{
    // acquire: pairs with trace_init's release (the rings and trace_ncpu)
    if (!__atomic_load_n(&trace_on, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&recording, __ATOMIC_RELAXED))     // relaxed: a mode flag
        return;                     // no trace, or the shell's "trace off": nothing wanted
    static bool dumped;
    if (__atomic_exchange_n(&dumped, true, __ATOMIC_ACQ_REL))  // acq_rel: one dump, whoever comes first
        return;                     // a panic inside the dump: do not start again
    uint32_t ncpu = trace_ncpu;     // read once: every loop below covers the same rings
    static uint64_t next[MAX_CPUS], end[MAX_CPUS];     // 16 KiB, off the stack: one dump (above)
    uint64_t dropped = 0;
    for (uint32_t i = 0; i < ncpu; i++) {
        end[i] = __atomic_load_n(&rings[i].n, __ATOMIC_ACQUIRE);   // acquire: whole records
        next[i] = end[i] > TRACE_RING - 1 ? end[i] - (TRACE_RING - 1) : 0;
        if (next[i] < dumped_to[i])
            next[i] = dumped_to[i];
        dropped += next[i];
    }
    // cppcheck-suppress uninitvar ; end[i] is set for every i < ncpu, all dump_rings reads
    dump_rings(ncpu, next, end, dropped);
}

uint64_t trace_run_cycles(struct g *gp)
{
    // Relaxed throughout: a racy look at other cores' counts, good enough
    // for a display (the G may be switching as we read).
    uint64_t c = __atomic_load_n(&gp->run_cycles, __ATOMIC_RELAXED);     // relaxed: as above
    if (!__atomic_load_n(&trace_on, __ATOMIC_ACQUIRE))    // acquire: pairs with trace_init's release
        return c;
    uint32_t ncpu = trace_ncpu;
    for (uint32_t i = 0; i < ncpu; i++) {
        if (__atomic_load_n(&rings[i].cur_g, __ATOMIC_RELAXED) == gp) {           // relaxed: as above
            uint64_t since = __atomic_load_n(&rings[i].since, __ATOMIC_RELAXED);  // relaxed: as above
            uint64_t now = arch_cycles();
            if (now > since)
                c += now - since;
            break;
        }
    }
    return c;
}

bool trace_set_recording(bool on)
{
    // seq_cst: trace_dump_live's store here is ordered before its loads of
    // the busy words (Dekker with record's store of busy, load of recording)
    return __atomic_exchange_n(&recording, on, __ATOMIC_SEQ_CST);   // seq_cst: see above
}

bool trace_recording(void)
{
    return __atomic_load_n(&trace_on, __ATOMIC_RELAXED) &&     // relaxed: a display of the state
           __atomic_load_n(&recording, __ATOMIC_RELAXED);      // relaxed: as trace_on
}

bool trace_dump_live(void)
{
    if (!__atomic_load_n(&trace_on, __ATOMIC_ACQUIRE))    // acquire: pairs with trace_init's release
        return false;
    static uint32_t dumping;
    if (__atomic_exchange_n(&dumping, 1, __ATOMIC_ACQUIRE))  // acquire: pairs with the release below
        return false;
    uint32_t ncpu = trace_ncpu;     // read once: every loop below covers the same rings
    bool was = trace_set_recording(false);              // seq_cst: before the busy loads
    for (uint32_t i = 0; i < ncpu; i++)
        while (__atomic_load_n(&rings[i].busy, __ATOMIC_SEQ_CST))   // seq_cst: pairs with record's store
            cpu_relax();
    // No core writes a ring now: every slot is whole, the one at n too.
    static uint64_t next[MAX_CPUS], end[MAX_CPUS];     // 16 KiB, off the stack: one live dump at a time
    uint64_t dropped = 0;
    for (uint32_t i = 0; i < ncpu; i++) {
        end[i] = __atomic_load_n(&rings[i].n, __ATOMIC_ACQUIRE);   // acquire: whole records
        next[i] = end[i] > TRACE_RING ? end[i] - TRACE_RING : 0;
        if (next[i] < dumped_to[i])
            next[i] = dumped_to[i];
        dropped += next[i];
    }
    // cppcheck-suppress uninitvar ; end[i] is set for every i < ncpu, all dump_rings reads
    dump_rings(ncpu, next, end, dropped);
    for (uint32_t i = 0; i < ncpu; i++)
        dumped_to[i] = end[i];
    trace_set_recording(was);
    __atomic_store_n(&dumping, 0, __ATOMIC_RELEASE);    // release: the next dump sees dumped_to
    return true;
}
