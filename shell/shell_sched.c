// SPDX-License-Identifier: MIT
// The shell's scheduler commands: ps, sched, gomaxprocs, quantum, steal,
// trace, profile. They read the scheduler's structures without stopping
// it: every line is a snapshot, and numbers read from different Ps may be
// a few events apart (as Go's schedtrace).
#include "shell/shell.h"
#include "kernel/cmdline.h"
#include "kernel/sched.h"
#include "kernel/trace.h"
#include "lib/printf.h"
#include "lib/string.h"



static const char *pstatus_name(uint32_t s)
{
    static const char *const names[] = { "idle", "running", "syscall", "stopped", "dead" };
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

// ---- ps ------------------------------------------------------------------------------

struct ps_state {
    bool timed;                     // run times are being measured
    uint32_t shown, dead;
};

static void ps_line(struct g *gp, void *arg)
{
    struct ps_state *st = arg;
    uint32_t s = SNAPSHOT(gp->status);
    if (s == G_DEAD || s == G_IDLE) {
        st->dead += s == G_DEAD;
        return;
    }
    char p[8] = "-", core[8] = "-", run[16] = "-";
    struct m *mp = SNAPSHOT(gp->m);
    if (mp && (s == G_RUNNING || s == G_SYSCALL)) {
        struct p *pp = SNAPSHOT(mp->p);
        if (pp)
            snprintf(p, sizeof p, "%u", pp->id);
        snprintf(core, sizeof core, "%u", mp->id);
    }
    if (st->timed)
        shell_fmt_ns(run, sizeof run, arch_cycles_to_ns(trace_run_cycles(gp)));
    const char *why = s == G_WAITING ? SNAPSHOT(gp->waitreason) : 0;
    char entry[48];
    shell_g_entry(gp, entry, sizeof entry);
    kprintf("%6lu  %-8s  %-22.22s  %7lu  %3s  %4s  %9s  %s\n", gp->id, gstatus_name(s),
            why ? why : "", gp->parent_id, p, core, run, entry);
    st->shown++;
}

int shell_cmd_ps(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct ps_state st = { .timed = trace_key.enabled };
    kprintf("%6s  %-8s  %-22s  %7s  %3s  %4s  %9s  %s\n", "GOID", "STATE", "WAITING FOR", "CREATOR",
            "P", "CORE", "RUN TIME", "ENTRY");
    g_for_each(ps_line, &st);
    kprintf("%u goroutines (num_goroutine says %d), %u dead kept for reuse\n", st.shown,
            num_goroutine(), st.dead);
    if (!st.timed)
        kprintf("run times are measured while the trace hooks are in: \"trace on\"\n");
    return 0;
}

// ---- sched -------------------------------------------------------------------------------

static uint64_t ms_since_boot(void)
{
    return arch_cycles_to_ns(arch_cycles() - arch_cpu(0)->online_tsc) / 1000000;
}

// Go's schedtrace line, as sysmon prints it for schedtrace= (kernel/sysmon.c,
// its twin: keep the two formats the same).
static void sched_line(void)
{
    char line[512];
    uint32_t np = SNAPSHOT(sched.gomaxprocs);
    int n = snprintf(line, sizeof line,
                     "SCHED %lums: gomaxprocs=%u idleprocs=%u threads=%u spinningthreads=%u "
                     "idlethreads=%u runqueue=%u [",
                     ms_since_boot(), np, SNAPSHOT(sched.npidle),
                     sched.ncpu, SNAPSHOT(sched.nmspinning),
                     SNAPSHOT(sched.nmidle),
                     SNAPSHOT(sched.runq_size));
    for (uint32_t i = 0; i < np && n < (int)sizeof line - 16; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, i ? " %u" : "%u", runq_len(&allp[i]->runq));
    kprintf("%s]\n", line);
}

int shell_cmd_sched(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    // From the heap: with one P record per possible P it is 100 KiB, more
    // than a kernel frame may hold (the Makefile's KERNEL_FRAME_MAX).
    struct sched_stats *st = malloc(sizeof *st);
    sched_stats(st);
    uint32_t np = SNAPSHOT(sched.gomaxprocs);
    char q[24];
    shell_fmt_ns(q, sizeof q, arch_cycles_to_ns(SNAPSHOT(quantum_cycles)));
    kprintf("gomaxprocs=%u cores=%u quantum=%s steal=%s seed=%lu\n", np, sched.ncpu, q,
            SNAPSHOT(kparams.steal) == STEAL_FLAT ? "flat" : "numa",
            sched.seed);
    uint32_t nsyscall = 0;          // the Ms whose G is in a blocking call (nothing counts them)
    for (uint32_t i = 0; i < sched.ncpu; i++) {
        struct g *gp = SNAPSHOT(allm[i].curg);
        nsyscall += gp && SNAPSHOT(gp->status) == G_SYSCALL;
    }
    kprintf("global queue %u, idle Ps %u, spinning Ms %u, idle Ms %u, in irq_wait %u, in syscalls %u\n",
            SNAPSHOT(sched.runq_size),
            SNAPSHOT(sched.npidle),
            SNAPSHOT(sched.nmspinning),
            SNAPSHOT(sched.nmidle),
            SNAPSHOT(sched.nexternal),
            nsyscall);
    kprintf("%3s %-8s %3s %4s %7s %9s %9s %13s %15s %7s %7s %7s %9s %7s\n", "P", "STATUS", "M", "RUNQ",
            "RUNNEXT", "SCHEDTICK", "RUNS", "STEALS/TRIED", "STOLEN LOC/REM", "PREEMPT", "WAKEIPI",
            "HALTS", "SPIN", "GLOBAL");
    for (uint32_t i = 0; i < np && i < SCHED_STATS_MAXP; i++) {
        struct p *pp = allp[i];
        struct m *mp = SNAPSHOT(pp->m);
        struct g *next = SNAPSHOT(pp->runq.runnext);
        const struct sched_pstats *s = &st->p[i];
        char m[8] = "-", rn[24] = "-", steals[24], stolen[24], spin[16];
        if (mp)
            snprintf(m, sizeof m, "%u", mp->id);
        if (next)
            snprintf(rn, sizeof rn, "g%lu", next->id);
        snprintf(steals, sizeof steals, "%lu/%lu", s->steals, s->steal_attempts);
        snprintf(stolen, sizeof stolen, "%lu %lu/%lu", s->stolen, s->steals_local, s->steals_remote);
        shell_fmt_ns(spin, sizeof spin, arch_cycles_to_ns(s->spin_cycles));
        kprintf("%3u %-8s %3s %4u %7s %9u %9lu %13s %15s %7lu %7lu %7lu %9s %7lu\n", i,
                pstatus_name(SNAPSHOT(pp->status)), m, runq_len(&pp->runq),
                rn, SNAPSHOT(pp->schedtick), s->runs, steals, stolen,
                s->preemptions, s->wake_ipis, s->halts, spin, s->global_gets);
    }
    char spin[16];
    shell_fmt_ns(spin, sizeof spin, arch_cycles_to_ns(st->total.spin_cycles));
    kprintf("total: runs %lu, steals %lu of %lu tried (%lu Gs), preemptions %lu, wake IPIs %lu, "
            "halts %lu, spinning %s\n", st->total.runs, st->total.steals, st->total.steal_attempts,
            st->total.stolen, st->total.preemptions, st->total.wake_ipis, st->total.halts, spin);
    free(st);
    sched_line();
    return 0;
}

// ---- settings ----------------------------------------------------------------------------

int shell_cmd_gomaxprocs(int argc, char **argv)
{
    uint64_t n;
    if (argc < 2) {
        kprintf("gomaxprocs %d (cores: %d)\n", gomaxprocs(0), num_cpu());
        return 0;
    }
    if (!shell_parse_u64(argv[1], &n) || n < 1 || n > 256) {
        kprintf("gomaxprocs: N is 1..256 (values above the core count, %d, clamp)\n", num_cpu());
        return 1;
    }
    int old = gomaxprocs((int)n);
    kprintf("gomaxprocs %d -> %d\n", old, gomaxprocs(0));
    return 0;
}

int shell_cmd_quantum(int argc, char **argv)
{
    char old[24], now[24];
    shell_fmt_ns(old, sizeof old, arch_cycles_to_ns(SNAPSHOT(quantum_cycles)));
    if (argc < 2) {
        kprintf("quantum %s\n", old);
        return 0;
    }
    uint64_t ns;
    if (!shell_parse_duration(argv[1], &ns) || ns < QUANTUM_MIN_NS || ns > QUANTUM_MAX_NS) {
        kprintf("quantum: DUR is 20us..1s, with its unit (us, ms or s)\n");
        return 1;
    }
    sched_set_quantum_ns(ns);
    shell_fmt_ns(now, sizeof now, ns);
    kprintf("quantum %s -> %s\n", old, now);
    return 0;
}

int shell_cmd_steal(int argc, char **argv)
{
    enum steal_policy cur = SNAPSHOT(kparams.steal);
    const char *name = cur == STEAL_FLAT ? "flat" : "numa";
    if (argc < 2) {
        kprintf("steal %s (%d NUMA node%s)\n", name, numa_nodes(), numa_nodes() == 1 ? "" : "s");
        return 0;
    }
    enum steal_policy p;
    if (strcmp(argv[1], "numa") == 0)
        p = STEAL_NUMA;
    else if (strcmp(argv[1], "flat") == 0)
        p = STEAL_FLAT;
    else {
        kprintf("steal: numa or flat\n");
        return 1;
    }
    sched_set_steal_by_node(p == STEAL_NUMA);
    kprintf("steal %s -> %s%s\n", name, argv[1],
            p == STEAL_NUMA && numa_nodes() == 1 ? " (one node: the same as flat)" : "");
    return 0;
}

int shell_cmd_trace(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "on") == 0) {
        int n = trace_set_hooks(true);
        if (n < 0) {
            kprintf("trace: no memory for the rings\n");
            return 1;
        }
        if (n)
            kprintf("trace: %d hooks patched in\n", n);
        bool was = trace_set_recording(true);
        kprintf("trace: recording %s -> on\n", was && !n ? "on" : "off");
        return 0;
    }
    if (strcmp(what, "off") == 0) {
        bool was = trace_recording();
        trace_set_recording(false);
        int n = trace_set_hooks(false);
        kprintf("trace: recording %s -> off%s\n", was ? "on" : "off",
                n ? ", hooks patched out" : "");
        return 0;
    }
    if (strcmp(what, "dump") == 0) {
        if (!trace_on) {
            kprintf("trace: nothing recorded (\"trace on\" starts)\n");
            return 1;
        }
        if (!trace_dump_live()) {
            kprintf("trace: another dump is running\n");
            return 1;
        }
        return 0;
    }
    if (!what[0]) {
        kprintf("trace: recording %s, hooks %s\n", trace_recording() ? "on" : "off",
                trace_key.enabled ? "in" : "out");
        return 0;
    }
    kprintf("usage: trace on|off|dump\n");
    return 1;
}

int shell_cmd_profile(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "start") == 0) {
        uint64_t hz;
        if (argc < 3 || !shell_parse_u64(argv[2], &hz) || hz < 100 || hz > 10000) {
            kprintf("profile: start wants a rate from 100 to 10000 (Hz)\n");
            return 1;
        }
        if (!profile_start((int)hz)) {
            kprintf("profile: a run is on already, or no memory for the buffers\n");
            return 1;
        }
        kprintf("profile: sampling every core at %lu Hz (\"profile stop\" prints the samples)\n", hz);
        return 0;
    }
    if (strcmp(what, "stop") == 0) {
        profile_stop();     // prints the PROFILE lines (tools/trace/profile2pprof.py reads them)
        return 0;
    }
    kprintf("usage: profile start HZ|stop\n");
    return 1;
}
