// SPDX-License-Identifier: MIT
// The scheduler's metrics. Each core accounts for itself from the event
// hooks: what it starts, how long the G waited runnable (the G's
// metrics_runnable stamp, set by whoever made it runnable), how long it ran
// and on which P, how long the core sat idle, steals, wake-ups,
// preemptions by cause, and how late timers fire.
//
// Invariants: core i's record is written only by core i, with interrupts
// off (trace_record's irq_save), each counter by a relaxed store of its
// new value; metrics_read sums the records with relaxed loads, so a reader
// sees every counter whole but the set is a snapshot, not a cut (as Go's
// runtime/metrics). A G's metrics_runnable is written by the core that
// readies it before the G is published to a queue (the queue's release),
// and read by the core that starts it after taking it from the queue
// (acquire).
#include "kernel/metrics.h"
#include "goro.h"
#include "kernel/sched.h"
#include "lib/printf.h"
#include "lib/string.h"

struct hist {
    uint64_t count, sum_ns;
    uint64_t counts[METRICS_HIST_BUCKETS];
};

struct metrics_core {
    // the owning core, interrupts off
    struct g *cur;                  // the G started here and not yet seen leave
    uint64_t run_start;             // when cur started (TSC)
    uint32_t run_p;                 // the P it runs on
    uint64_t idle_start;            // when the core went idle, 0 = not idle
    // written by the owning core (relaxed stores), read by metrics_read
    struct hist latency, lateness;
    uint64_t running, idle;         // TSC cycles
    uint64_t p_running[METRICS_MAXP];
    uint64_t schedules, creates, wakeups, steals, stolen;
    uint64_t preempt_quantum, preempt_timers, preempt_stw;
} __attribute__((aligned(64)));

bool metrics_on;
static struct metrics_core *cores;     // metrics_ncpu of them (metrics_init): 1.7 KiB each
static uint32_t metrics_ncpu;
static uint64_t metrics_t0;

static void bump(uint64_t *c, uint64_t d)
{
    __atomic_store_n(c, *c + d, __ATOMIC_RELAXED);     // owner only; readers load relaxed
}

// Bucket i >= 2 holds [2^k, 2^k + 2^(k-1)) or [2^k + 2^(k-1), 2^(k+1)) ns,
// k = i / 2, by i's low bit: two buckets per power of two.
static unsigned bucket(uint64_t ns)
{
    if (ns < 2)
        return (unsigned)ns;
    unsigned k = 63u - (unsigned)__builtin_clzll(ns);
    unsigned i = 2 * k + (unsigned)((ns >> (k - 1)) & 1);
    return i < METRICS_HIST_BUCKETS ? i : METRICS_HIST_BUCKETS - 1;
}

uint64_t metrics_bucket_lo_ns(int i)
{
    if (i < 2)
        return (uint64_t)(i < 0 ? 0 : i);
    unsigned k = (unsigned)i / 2;
    return (1ull << k) + ((unsigned)i & 1 ? 1ull << (k - 1) : 0);
}

static void hist_add(struct hist *h, uint64_t cycles)
{
    uint64_t ns = arch_cycles_to_ns(cycles);
    bump(&h->counts[bucket(ns)], 1);
    bump(&h->sum_ns, ns);
    bump(&h->count, 1);
}

void metrics_init(uint32_t ncpu)
{
    size_t bytes = ncpu * sizeof(struct metrics_core);
    cores = page_alloc((bytes + PAGE_SIZE - 1) / PAGE_SIZE);
    metrics_ncpu = ncpu;
    metrics_t0 = arch_cycles();
    __atomic_store_n(&metrics_on, true, __ATOMIC_RELEASE);    // release: the fields above are set
    kprintf("metrics: on, printed as METRIC lines when the machine stops\n");
}

// cur leaves its core at now: its running time goes to its P.
static void stop_running(struct metrics_core *c, uint64_t now)
{
    uint64_t d = now - c->run_start;
    bump(&c->running, d);
    if (c->run_p < METRICS_MAXP)
        bump(&c->p_running[c->run_p], d);
    c->cur = 0;
}

void metrics_event(enum trace_ev ev, struct g *gp, uint64_t g, uint64_t arg, uint64_t now)
{
    struct metrics_core *c = &cores[cpu_index()];
    switch (ev) {
    case TR_GO_CREATE:
        bump(&c->creates, 1);
        if (gp)
            gp->metrics_runnable = now;     // published by the queue put that follows
        break;
    case TR_GO_UNPARK:
        bump(&c->wakeups, 1);
        if (gp)
            gp->metrics_runnable = now;
        break;
    case TR_GO_START:
        if (c->cur) {               // it left through gosched (no hook): runnable from now
            c->cur->metrics_runnable = now;
            stop_running(c, now);
        }
        bump(&c->schedules, 1);
        hist_add(&c->latency, gp && gp->metrics_runnable && gp->metrics_runnable <= now
                                  ? now - gp->metrics_runnable : 0);
        c->cur = gp;
        c->run_start = now;
        c->run_p = (uint32_t)arg;
        break;
    case TR_GO_PREEMPT:
        if (arg & PREEMPT_QUANTUM)
            bump(&c->preempt_quantum, 1);
        if (arg & PREEMPT_TIMERS)
            bump(&c->preempt_timers, 1);
        if (arg & PREEMPT_STW)
            bump(&c->preempt_stw, 1);
        __attribute__((fallthrough));
    case TR_GO_YIELD:
        if (gp)
            gp->metrics_runnable = now;
        __attribute__((fallthrough));
    case TR_GO_PARK:
    case TR_GO_END:
    case TR_SYSCALL_EXIT:
        if (c->cur && (!gp || c->cur == gp) && (ev != TR_SYSCALL_EXIT || arg))
            stop_running(c, now);   // (a blocking call's return that kept its P goes on running)
        break;
    case TR_STEAL:
        bump(&c->steals, 1);
        bump(&c->stolen, g);
        break;
    case TR_IDLE:
        c->idle_start = now;
        break;
    case TR_WAKE:
        if (c->idle_start)
            bump(&c->idle, now - c->idle_start);
        c->idle_start = 0;
        break;
    case TR_TIMER:
        hist_add(&c->lateness, g);  // g carries the lateness in TSC cycles
        break;
    default:
        break;
    }
}

static void hist_sum(struct metrics_histogram *dst, const struct hist *h)
{
    dst->count += __atomic_load_n(&h->count, __ATOMIC_RELAXED);       // relaxed: a snapshot
    dst->sum_ns += __atomic_load_n(&h->sum_ns, __ATOMIC_RELAXED);     // relaxed: a snapshot
    for (int i = 0; i < METRICS_HIST_BUCKETS; i++)
        dst->counts[i] += __atomic_load_n(&h->counts[i], __ATOMIC_RELAXED);   // relaxed: a snapshot
}

static uint64_t load(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);     // relaxed: a snapshot (see the top)
}

bool metrics_read(struct goro_metrics *m)
{
    if (!__atomic_load_n(&metrics_on, __ATOMIC_ACQUIRE))     // pairs with metrics_init's release
        return false;
    memset(m, 0, sizeof *m);
    uint64_t now = arch_cycles();
    m->elapsed_ns = arch_cycles_to_ns(now - metrics_t0);
    m->goroutines = (uint64_t)num_goroutine();
    m->gomaxprocs = __atomic_load_n(&sched.gomaxprocs, __ATOMIC_RELAXED);   // relaxed: a snapshot
    m->ncpu = (int)(metrics_ncpu < METRICS_MAXP ? metrics_ncpu : METRICS_MAXP);
    m->nprocs = (int)(m->gomaxprocs < METRICS_MAXP ? m->gomaxprocs : METRICS_MAXP);
    for (uint32_t i = 0; i < metrics_ncpu; i++) {
        const struct metrics_core *c = &cores[i];
        hist_sum(&m->sched_latency, &c->latency);
        hist_sum(&m->timer_lateness, &c->lateness);
        m->schedules += load(&c->schedules);
        m->creates += load(&c->creates);
        m->wakeups += load(&c->wakeups);
        m->steals += load(&c->steals);
        m->stolen += load(&c->stolen);
        m->preempt_quantum += load(&c->preempt_quantum);
        m->preempt_timers += load(&c->preempt_timers);
        m->preempt_stw += load(&c->preempt_stw);
        for (int p = 0; p < METRICS_MAXP; p++)
            m->p_running_ns[p] += arch_cycles_to_ns(load(&c->p_running[p]));
        if (i < METRICS_MAXP) {
            m->m_running_ns[i] = arch_cycles_to_ns(load(&c->running));
            m->m_idle_ns[i] = arch_cycles_to_ns(load(&c->idle));
            uint64_t busy = m->m_running_ns[i] + m->m_idle_ns[i];
            m->m_sched_ns[i] = m->elapsed_ns > busy ? m->elapsed_ns - busy : 0;
        }
    }
    for (int p = 0; p < m->nprocs; p++)
        m->p_spinning_ns[p] = arch_cycles_to_ns(load(&allp[p]->stats.spin_cycles));
    return true;
}

static void print_seconds(const char *name, uint64_t ns)
{
    kprintf("METRIC %s %lu.%09lu\n", name, ns / 1000000000, ns % 1000000000);
}

static void print_hist(const char *name, const struct metrics_histogram *h)
{
    kprintf("METRIC %s histogram count=%lu sum=%lu.%09lu buckets=", name, h->count,
            h->sum_ns / 1000000000, h->sum_ns % 1000000000);
    bool first = true;
    for (int i = 0; i < METRICS_HIST_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        uint64_t lo = metrics_bucket_lo_ns(i);
        kprintf("%s%lu.%09lu:%lu", first ? "" : ",", lo / 1000000000, lo % 1000000000, h->counts[i]);
        first = false;
    }
    kprintf("\n");
}

static void print_metrics(const struct goro_metrics *mp);

void metrics_print(void)
{
    static struct goro_metrics m;   // one caller: the machine is stopping
    if (!metrics_read(&m))
        return;
    static bool printed;
    if (__atomic_exchange_n(&printed, true, __ATOMIC_ACQ_REL))   // acq_rel: once
        return;
    print_metrics(&m);
}

bool metrics_print_live(void)
{
    static struct goro_metrics m;   // the shell's, one at a time (its own goroutine)
    if (!metrics_read(&m))
        return false;
    print_metrics(&m);
    return true;
}

static void print_metrics(const struct goro_metrics *mp)
{
    kprintf("METRIC begin cores=%d elapsed_ns=%lu\n", mp->ncpu, mp->elapsed_ns);
    kprintf("METRIC /sched/goroutines:goroutines %lu\n", mp->goroutines);
    kprintf("METRIC /sched/gomaxprocs:threads %lu\n", mp->gomaxprocs);
    print_hist("/sched/latencies:seconds", &mp->sched_latency);
    print_hist("/goro/timers/lateness:seconds", &mp->timer_lateness);
    kprintf("METRIC /goro/sched/schedules:events %lu\n", mp->schedules);
    kprintf("METRIC /goro/sched/creates:goroutines %lu\n", mp->creates);
    kprintf("METRIC /goro/sched/wakeups:events %lu\n", mp->wakeups);
    kprintf("METRIC /goro/sched/steals:events %lu\n", mp->steals);
    kprintf("METRIC /goro/sched/stolen:goroutines %lu\n", mp->stolen);
    kprintf("METRIC /goro/sched/preemptions/quantum:events %lu\n", mp->preempt_quantum);
    kprintf("METRIC /goro/sched/preemptions/timers:events %lu\n", mp->preempt_timers);
    kprintf("METRIC /goro/sched/preemptions/stw:events %lu\n", mp->preempt_stw);
    uint64_t run = 0, idle = 0, sched_ns = 0;
    for (int i = 0; i < mp->ncpu; i++) {
        run += mp->m_running_ns[i];
        idle += mp->m_idle_ns[i];
        sched_ns += mp->m_sched_ns[i];
    }
    print_seconds("/cpu/classes/user:cpu-seconds", run);
    print_seconds("/cpu/classes/idle:cpu-seconds", idle);
    print_seconds("/goro/cpu/classes/scheduler:cpu-seconds", sched_ns);
    print_seconds("/cpu/classes/total:cpu-seconds", run + idle + sched_ns);
    char name[64];
    for (int p = 0; p < mp->nprocs; p++) {
        snprintf(name, sizeof name, "/goro/p/%d/running:seconds", p);
        print_seconds(name, mp->p_running_ns[p]);
        snprintf(name, sizeof name, "/goro/p/%d/spinning:seconds", p);
        print_seconds(name, mp->p_spinning_ns[p]);
    }
    for (int i = 0; i < mp->ncpu; i++) {
        snprintf(name, sizeof name, "/goro/m/%d/running:seconds", i);
        print_seconds(name, mp->m_running_ns[i]);
        snprintf(name, sizeof name, "/goro/m/%d/idle:seconds", i);
        print_seconds(name, mp->m_idle_ns[i]);
        snprintf(name, sizeof name, "/goro/m/%d/scheduler:seconds", i);
        print_seconds(name, mp->m_sched_ns[i]);
    }
    kprintf("METRIC end\n");
}
