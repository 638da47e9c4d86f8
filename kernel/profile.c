// SPDX-License-Identifier: MIT
// The sampling CPU profiler. Each core keeps its own sample buffer and its
// own next-sample deadline; the deadline joins whatever else the core's
// one-shot timer waits for (kernel/preempt.c's arm), so sampling needs no
// timer of its own and nothing periodic runs while profiling is off.
//
// A sample is taken in the timer interrupt: the interrupted RIP, then the
// return addresses found by walking the saved-RBP chain (goro is built
// with frame pointers) within the interrupted stack. Maskable interrupts
// are off in the scheduler (g0) and under spinlocks, so a sample falls due
// there is taken where interrupts come back on, with the periods it waited
// as its weight (Linux's perf without NMIs has the same skew). A sample
// whose core was halted on g0 is marked idle.
//
// Invariants: core i's buffer, deadline and counters are written only by
// core i with interrupts off. A record is whole before n moves past it
// (release); the dump reads n with acquire and stops there, so a record
// in flight (a core stopped by NMI, or one still finishing the tick that
// raced profile_stop) is never read. A new sampling run (profile_start)
// bumps the epoch; each core empties its own buffer when it first sees
// the new epoch, resetting n before it publishes the epoch (release), so
// the dump, reading the epoch with acquire and then n, never counts an
// old run's records in a new run.
#include "kernel/profile.h"
#include "goro.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "lib/printf.h"

#define PROFILE_DEPTH 32                    // frames per sample, the interrupted RIP first
#define PROFILE_BUF_PAGES 512               // 2 MiB per core: ~20k samples of 10 frames
#define PROFILE_G0_STACK_MAX (1u << 20)     // a g0 stack is smaller than this

enum sample_kind { S_GOROUTINE, S_G0, S_IRQ, S_IDLE, S_NKINDS };
static const char *const kind_name[S_NKINDS] = { "go", "g0", "irq", "idle" };

// A record is 3 + depth words: the header (depth | kind << 8 | weight <<
// 32), the goroutine id (0 off a goroutine), the word at the interrupted
// RSP, then the PCs. The word at RSP is the return address when the
// interrupted function keeps no frame (GCC gives none to leaves that need
// no stack) or had not built it yet: the host tool, which can read the
// function's code, decides (tools/trace/profile2pprof.py).
struct profile_core {
    // the owning core, interrupts off
    uint64_t *buf;
    uint64_t cap;                   // words
    uint64_t next;                  // TSC the next sample is due, 0 = not yet scheduled
    uint64_t first;                 // TSC this core's sampling began (its first deadline set)
    uint64_t dropped;               // samples the buffer had no room for
    // written by the owning core, read by the dump
    uint64_t n;                     // words holding whole records (release store)
    uint32_t epoch;                 // the sampling run the buffer holds (release store)
} __attribute__((aligned(64)));

struct static_key profile_key;
static struct profile_core cores[MAX_CPUS];
static uint32_t prof_ncpu;          // set once the buffers exist (release store)
static struct {
    // written by profile_start / profile_stop while no core samples
    uint32_t hz;
    uint64_t period;                // TSC cycles between samples
    uint64_t t0, t1;                // the run's start and stop (t1 = 0: running)
    // atomic
    uint32_t epoch;                 // bumped by each profile_start
    uint32_t dumped;                // the last epoch printed (exchange: one dump per run)
    bool running;                   // cores sample (release store after the fields above)
} prof;

static uint64_t min_nz(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

void profile_enable(void)
{
    unsigned n = static_branch_enable(&profile_key);
    kprintf("profile: %u hooks on\n", n);
}

static void start(uint32_t hz)
{
    prof.hz = hz;
    prof.period = arch_tsc_hz() / hz;
    prof.t0 = arch_cycles();
    prof.t1 = 0;
    __atomic_fetch_add(&prof.epoch, 1, __ATOMIC_RELEASE);      // pairs with core_state's acquire
    __atomic_store_n(&prof.running, true, __ATOMIC_RELEASE);   // pairs with the cores' acquire: the fields above are set
}

// Each core's buffer, once. False when memory ran out.
static bool alloc_buffers(uint32_t ncpu)
{
    for (uint32_t i = 0; i < ncpu; i++) {
        if (cores[i].buf)
            continue;
        cores[i].buf = page_try_alloc(PROFILE_BUF_PAGES);
        if (!cores[i].buf) {
            kprintf("profile: no memory for core %u's samples; the profiler stays off\n", i);
            return false;
        }
        cores[i].cap = PROFILE_BUF_PAGES * PAGE_SIZE / sizeof(uint64_t);
    }
    __atomic_store_n(&prof_ncpu, ncpu, __ATOMIC_RELEASE);  // release: the buffers are set up
    return true;
}

void profile_init(uint32_t ncpu, uint32_t hz)
{
    if (!alloc_buffers(ncpu))
        return;
    start(hz);
    kprintf("profile: %u Hz per core, %lu KiB of samples per core, printed at exit\n", hz,
            (uint64_t)PROFILE_BUF_PAGES * PAGE_SIZE / 1024);
}

// This core's state for the current run, emptied on the run's first look.
// Null when no run is on.
static struct profile_core *core_state(struct m *mp)
{
    if (!__atomic_load_n(&prof.running, __ATOMIC_ACQUIRE))    // pairs with start's release
        return 0;
    struct profile_core *c = &cores[mp->id];
    uint32_t epoch = __atomic_load_n(&prof.epoch, __ATOMIC_ACQUIRE);   // pairs with start's release
    if (c->epoch != epoch) {
        __atomic_store_n(&c->n, 0, __ATOMIC_RELAXED);           // published by the epoch's release below
        c->dropped = 0;
        c->next = 0;
        __atomic_store_n(&c->epoch, epoch, __ATOMIC_RELEASE);   // pairs with the dump's acquire: n is reset
    }
    return c;
}

uint64_t profile_deadline(struct m *mp, uint64_t d)
{
    struct profile_core *c = core_state(mp);
    if (!c)
        return d;
    if (!c->next) {
        c->first = arch_cycles();
        c->next = c->first + prof.period;
    }
    return min_nz(d, c->next);
}

// Is [a, a + 16) a frame record within the stack [lo, hi), mapped?
static bool frame_ok(uint64_t fp, uint64_t lo, uint64_t hi)
{
    return !(fp & 7) && fp >= lo && fp + 16 <= hi && arch_virt_to_phys(fp) &&
           arch_virt_to_phys(fp + 8);
}

static void take_sample(struct m *mp, struct profile_core *c, uint64_t weight)
{
    struct arch_irq_ctx ctx;
    if (!arch_irq_context(&ctx))
        return;
    struct g *gp = mp->curg;
    uint64_t gid = 0, hi;
    enum sample_kind kind;
    if (gp && ctx.rsp >= gp->stack_lo && ctx.rsp < gp->stack_hi) {
        kind = S_GOROUTINE;
        gid = gp->id;
        hi = gp->stack_hi;
    } else if (ctx.rsp < mp->g0_top && mp->g0_top - ctx.rsp < PROFILE_G0_STACK_MAX) {
        // g0 runs with interrupts off but in its idle wait
        kind = !gp && ctx.irqs_on ? S_IDLE : S_G0;
        hi = mp->g0_top;
    } else {
        kind = S_IRQ;               // an unknown stack: the RIP alone
        hi = 0;
    }
    uint64_t n = c->n;
    if (n + 3 + PROFILE_DEPTH > c->cap) {
        c->dropped++;
        return;
    }
    uint64_t *rec = &c->buf[n];
    uint64_t depth = 0;
    rec[2] = hi && arch_virt_to_phys(ctx.rsp) ? *(const uint64_t *)ctx.rsp : 0;
    rec[3 + depth++] = ctx.rip;
    for (uint64_t fp = ctx.rbp, lo = ctx.rsp; depth < PROFILE_DEPTH && frame_ok(fp, lo, hi);) {
        const uint64_t *frame = (const uint64_t *)fp;
        if (!frame[1])
            break;
        rec[3 + depth++] = frame[1];
        lo = fp + 16;               // frames move up the stack, or the walk ends
        fp = frame[0];
    }
    if (weight > 0xFFFFFFFFu)
        weight = 0xFFFFFFFFu;
    rec[0] = depth | (uint64_t)kind << 8 | weight << 32;
    rec[1] = gid;
    __atomic_store_n(&c->n, n + 3 + depth, __ATOMIC_RELEASE);  // pairs with the dump's acquire: the record is whole
}

void profile_tick(struct m *mp, uint64_t now)
{
    struct profile_core *c = core_state(mp);
    if (!c || !c->next || now < c->next)
        return;                     // the timer fired for something else
    // the periods that went by since the sample fell due (interrupts were off)
    uint64_t weight = 1 + (now - c->next) / prof.period;
    c->next += weight * prof.period;
    take_sample(mp, c, weight);
}

void profile_dump(void)
{
    if (!prof_ncpu)
        return;
    if (__atomic_exchange_n(&prof.running, false, __ATOMIC_ACQ_REL))   // acq_rel: stop sampling; pairs with core_state's acquire
        prof.t1 = arch_cycles();
    uint32_t epoch = __atomic_load_n(&prof.epoch, __ATOMIC_ACQUIRE);     // acquire: pairs with start's release
    if (__atomic_exchange_n(&prof.dumped, epoch, __ATOMIC_ACQ_REL) == epoch)  // acq_rel: one dump per run, whoever comes first
        return;
    uint32_t ncpu = prof_ncpu;      // read once: both loops cover the same buffers
    static uint64_t end[MAX_CPUS];      // 8 KiB, off the stack: one dump per run (above)
    uint64_t samples = 0, weight = 0, dropped = 0, unsampled = 0;
    uint64_t t1 = prof.t1 ? prof.t1 : arch_cycles();
    // unsampled: the periods of the run no sample stands for. Before a
    // core's first deadline (it is set when the core first arms its
    // timer: a run started at boot waits for the rest of the boot, and
    // a core that never arms one has none), and after its last sample
    // the periods due before the stop whose interrupt had not come (a
    // host that starves QEMU's timer thread delays a core's interrupts
    // by tens of milliseconds, and the last wait has no sample to carry
    // it). next and first are read racily: a core taking its last sample
    // moves next by that sample's weight at most.
    uint64_t run_periods = (t1 - prof.t0) / prof.period;
    for (uint32_t i = 0; i < ncpu; i++) {
        struct profile_core *c = &cores[i];
        end[i] = 0;
        uint64_t next = 0, first = 0;
        if (__atomic_load_n(&c->epoch, __ATOMIC_ACQUIRE) == epoch) {    // pairs with core_state's release
            next = __atomic_load_n(&c->next, __ATOMIC_RELAXED);     // relaxed: racy, see above
            first = __atomic_load_n(&c->first, __ATOMIC_RELAXED);   // relaxed: as next
        }
        if (!next) {
            unsampled += run_periods;   // no deadline of this run yet
            continue;
        }
        if (first > prof.t0)
            unsampled += (first - prof.t0) / prof.period;
        if (t1 >= next)
            unsampled += 1 + (t1 - next) / prof.period;
        end[i] = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);          // pairs with take_sample's release
        dropped += c->dropped;
        for (uint64_t w = 0; w < end[i]; w += 3 + (c->buf[w] & 0xFF)) {
            samples++;
            weight += c->buf[w] >> 32;
        }
    }
    kprintf("PROFILE begin cores=%u hz=%u period_ns=%lu duration_ns=%lu samples=%lu weight=%lu "
            "dropped=%lu unsampled=%lu\n",
            ncpu, prof.hz, arch_cycles_to_ns(prof.period), arch_cycles_to_ns(t1 - prof.t0),
            samples, weight, dropped, unsampled);
    for (uint32_t i = 0; i < ncpu; i++) {
        const uint64_t *buf = cores[i].buf;
        for (uint64_t w = 0; w < end[i]; w += 3 + (buf[w] & 0xFF)) {
            uint64_t depth = buf[w] & 0xFF, kind = (buf[w] >> 8) & 0xFF;
            char line[64 + PROFILE_DEPTH * 17];
            int len = snprintf(line, sizeof line, "PROFILE %u %s %lu %lu %lx", i,
                               kind < S_NKINDS ? kind_name[kind] : "?", buf[w + 1], buf[w] >> 32,
                               buf[w + 2]);
            for (uint64_t d = 0; d < depth && len < (int)sizeof line; d++)
                len += snprintf(line + len, sizeof line - (size_t)len, " %lx", buf[w + 3 + d]);
            kprintf("%s\n", line);
        }
    }
    kprintf("PROFILE end\n");
}

// profile_start and profile_stop, one at a time.
static mutex_t control = MUTEX_INIT;
static bool patched_live;           // profile_start patched the hooks in (no profile= at boot)

bool profile_start(int hz)
{
    if (hz < 100 || hz > 10000)
        return false;
    mutex_lock(&control);
    bool ok = !__atomic_load_n(&prof.running, __ATOMIC_ACQUIRE) &&    // a run is on: no
              (prof_ncpu || alloc_buffers(arch_ncpu()));
    if (ok) {
        start((uint32_t)hz);
        if (!profile_key.enabled) { // booted without profile=: patch the hooks in now
            struct m *mp = acquirem();  // its syncs are TLB shoot-downs: the caller stays on its core
            static_branch_set_live(&profile_key, true);
            releasem(mp);
            patched_live = true;
        }
        // every core re-arms its timer for its first sample (timer_irq)
        uint64_t fl = irq_save();
        arch_send_ipi_all_but_self(VEC_TIMER);
        struct m *mp = getm();
        if (mp->p)
            core_rearm(mp, arch_cycles());
        irq_restore(fl);
    }
    mutex_unlock(&control);
    return ok;
}

void profile_stop(void)
{
    mutex_lock(&control);
    if (__atomic_exchange_n(&prof.running, false, __ATOMIC_ACQ_REL))   // acq_rel: stop sampling; pairs with core_state's acquire
        prof.t1 = arch_cycles();
    if (patched_live) {             // out again: profiling off costs nothing again
        struct m *mp = acquirem();      // as in profile_start
        static_branch_set_live(&profile_key, false);
        releasem(mp);
        patched_live = false;
    }
    profile_dump();
    mutex_unlock(&control);
}
