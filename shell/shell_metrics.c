// SPDX-License-Identifier: MIT
// The shell's metrics command. For now it prints what sched_stats (goro.h)
// and malloc_stats count; runtime/metrics-style names
// (/sched/latencies:seconds, ...) and the metrics=1 report at stop are
// still to be built, and will replace this file's body: the command table
// (shell.c) only knows shell_cmd_metrics.
#include "shell/shell.h"
#include "kernel/malloc.h"
#include "kernel/metrics.h"
#include "lib/printf.h"

int shell_cmd_metrics(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    // From the heap: with one P record per possible P it is 100 KiB, more
    // than a kernel frame may hold (the Makefile's KERNEL_FRAME_MAX).
    struct sched_stats *st = malloc(sizeof *st);
    sched_stats(st);
    const struct sched_pstats *t = &st->total;
    if (!metrics_print_live())
        kprintf("metrics: boot with metrics=1 for runtime/metrics' histograms; the counters:\n");
    kprintf("  goroutines %d, gomaxprocs %d, cores %d\n", num_goroutine(), st->gomaxprocs, st->ncpu);
    kprintf("  sched: runs %lu, steal attempts %lu, steals %lu, stolen %lu (same node %lu, "
            "remote %lu), preemptions %lu, wake IPIs %lu, halts %lu, spin cycles %lu, "
            "global-queue takes %lu\n", t->runs, t->steal_attempts, t->steals, t->stolen,
            t->steals_local, t->steals_remote, t->preemptions, t->wake_ipis, t->halts,
            t->spin_cycles, t->global_gets);
    free(st);
    struct malloc_stats ms;
    malloc_stats(&ms);
    uint64_t mallocs = 0, frees = 0;
    for (uint32_t c = 0; c < ms.nclass; c++) {
        mallocs += ms.cls[c].mallocs;
        frees += ms.cls[c].frees;
    }
    kprintf("  malloc: %lu allocations, %lu frees, %lu blocks (%lu bytes) in use\n", mallocs, frees,
            ms.blocks_in_use, ms.bytes_in_use);
    return 0;
}
