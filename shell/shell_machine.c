// SPDX-License-Identifier: MIT
// The shell's machine commands: numa, mem, cpus, reboot (halt is in
// shell.c, beside the loop that may also end the machine).
#include "shell/shell.h"
#include "kernel/cmdline.h"
#include "kernel/malloc.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "lib/printf.h"
#include "lib/string.h"

int shell_cmd_numa(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int nodes = numa_nodes();
    kprintf("%d node%s, steal=%s\n", nodes, nodes == 1 ? "" : "s",
            SNAPSHOT(kparams.steal) == STEAL_FLAT ? "flat" : "numa");
    uint32_t nr;
    const struct numa_range *r = numa_ranges(&nr);
    for (int k = 0; k < nodes; k++) {
        char cores[64], mem[24], freeb[24];
        cpuset_format(cores, sizeof cores, numa_node_cores(k));
        shell_fmt_bytes(mem, sizeof mem, numa_node_mem(k));
        shell_fmt_bytes(freeb, sizeof freeb, page_node_free(k) * PAGE_SIZE);
        kprintf("node %d: cores %s, memory %s, free pages %lu of %lu (%s), fallbacks in %lu\n", k,
                cores, mem, page_node_free(k), page_node_total(k), freeb, page_node_fallbacks(k));
        for (uint32_t i = 0; i < nr; i++)
            if ((int)r[i].node == k)
                kprintf("  range 0x%012lx-0x%012lx%s\n", r[i].base, r[i].end,
                        r[i].hotplug ? " (hot-plug)" : "");
    }
    kprintf("distances:");
    for (int k = 0; k < nodes; k++) {
        kprintf(k ? " /" : "");
        for (int j = 0; j < nodes; j++)
            kprintf(" %d", numa_distance(k, j));
    }
    kprintf("\n");
    return 0;
}

int shell_cmd_mem(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char a[24], b[24];
    shell_fmt_bytes(a, sizeof a, page_free_count() * PAGE_SIZE);
    shell_fmt_bytes(b, sizeof b, page_total_count() * PAGE_SIZE);
    kprintf("pages: %lu free of %lu (%s of %s); goroutine stacks trimmed %lu pages so far\n",
            page_free_count(), page_total_count(), a, b, stack_scavenged_pages());
    struct page_pool_stat ps;
    for (uint32_t i = 0; page_pool_stat(i, &ps); i++)
        kprintf("  pool %u: node %d, 0x%012lx-0x%012lx, %lu of %lu pages free\n", i, ps.node, ps.base,
                ps.base + ps.npages * PAGE_SIZE, ps.nfree, ps.npages);
    struct malloc_stats ms;
    malloc_stats(&ms);
    shell_fmt_bytes(a, sizeof a, ms.bytes_in_use);
    kprintf("malloc: %lu blocks in use (%s)\n", ms.blocks_in_use, a);
    kprintf("  %8s %10s %10s %8s %10s\n", "CLASS", "MALLOCS", "FREES", "IN USE", "BYTES");
    for (uint32_t c = 1; c < ms.nclass; c++) {
        const struct malloc_class_stats *k = &ms.cls[c];
        if (!k->mallocs)
            continue;
        uint64_t live = k->mallocs > k->frees ? k->mallocs - k->frees : 0;
        shell_fmt_bytes(a, sizeof a, live * k->size);
        kprintf("  %8u %10lu %10lu %8lu %10s\n", k->size, k->mallocs, k->frees, live, a);
    }
    const struct malloc_class_stats *big = &ms.cls[0];
    shell_fmt_bytes(a, sizeof a, ms.large_bytes);
    kprintf("  %8s %10lu %10lu %8lu %10s\n", "large", big->mallocs, big->frees,
            big->mallocs > big->frees ? big->mallocs - big->frees : 0, a);
    return 0;
}

static const char *idle_name(enum idle_policy p)
{
    return p == IDLE_MWAIT ? "mwait" : p == IDLE_POLL ? "poll" : "hlt";
}

int shell_cmd_cpus(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    char model[64];
    arch_cpu_model(model, sizeof model);
    uint64_t hz = arch_tsc_hz();
    kprintf("%s (%s), %u cores, local APIC in %s mode, timer %s, TSC %lu.%03lu MHz, idle=%s\n",
            model, arch_accel(), arch_ncpu(), arch_x2apic() ? "x2APIC" : "xAPIC",
            arch_timer_tsc_deadline() ? "TSC-deadline one-shot" : "APIC one-shot", hz / 1000000,
            hz / 1000 % 1000, idle_name(kparams.idle));
    kprintf("%4s %7s %4s %12s %4s %8s %5s %8s\n", "CORE", "APIC ID", "NODE", "ONLINE AFTER", "P",
            "RUNNING", "IDLE", "SPINNING");
    uint64_t t0 = arch_cpu(0)->online_tsc;
    for (uint32_t i = 0; i < arch_ncpu(); i++) {
        struct cpu *c = arch_cpu(i);
        struct m *mp = &allm[i];
        struct p *pp = SNAPSHOT(mp->p);
        struct g *gp = SNAPSHOT(mp->curg);
        char online[24], p[8] = "-", g[24] = "-";
        shell_fmt_ns(online, sizeof online, arch_cycles_to_ns(c->online_tsc - t0));
        if (pp)
            snprintf(p, sizeof p, "%u", pp->id);
        if (gp)
            snprintf(g, sizeof g, "g%lu", gp->id);
        kprintf("%4u %7u %4d %12s %4s %8s %5s %8s\n", i, c->apic_id, numa_core_node(i),
                i ? online : "boot core", p, g,
                SNAPSHOT(mp->idle) ? "yes" : "no",
                SNAPSHOT(mp->spinning) ? "yes" : "no");
    }
    return 0;
}

int shell_cmd_reboot(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    kprintf("shell: rebooting\n");
    arch_reboot();
}
