// SPDX-License-Identifier: MIT
// The boot timeline: when each boot phase began, in microseconds from
// kernel entry (the TSC at the loader's first instruction). Printed as one
// line when the main goroutine starts:
//
//   boot: us from entry: console=41 cmdline=118 ... online=1392 sched=1406 main=1561
//
// Each key is a phase (kernel/main.c's table, arch_platform_init's and
// arch/smp.c's steps); `online` is the moment the last core came online
// (checked in: arch/smp.c) and `ready` the moment the last one was set up,
// about to become an M. With boot_timeline=1 every core's own moments
// follow, one line each:
//
//   boot: cpu 3 (apic id 3) online at 1211 us, ready at 2950 us
//
// tools/bench/boot_bench.py reads both.
#include "kernel/boot_timeline.h"
#include "arch/arch.h"
#include "boot/bootinfo.h"
#include "goro.h"
#include "lib/printf.h"

static uint64_t us_since_entry(uint64_t tsc)
{
    uint64_t entry = arch_boot_entry_tsc();
    return tsc > entry ? arch_cycles_to_ns(tsc - entry) / 1000 : 0;
}

// The moment the last core came online (checked in), or was ready (set
// up, its TSC checked: about to become an M), by the TSC.
static uint64_t last_core_tsc(bool ready)
{
    uint64_t last = 0;
    for (uint32_t i = 0; i < arch_ncpu(); i++) {
        uint64_t t = ready ? arch_cpu(i)->ready_tsc : arch_cpu(i)->online_tsc;
        if (t > last)
            last = t;
    }
    return last;
}

void boot_timeline_print(bool per_core)
{
    const struct arch_boot_mark *m;
    uint32_t n = arch_boot_marks(&m);
    // The two moments the APs make, placed among the boot core's marks by
    // time (online may come before the console is up, or after the clock).
    struct { const char *key; uint64_t tsc; bool shown; } cores[2] = {
        { "online", last_core_tsc(false), false }, { "ready", last_core_tsc(true), false },
    };
    char line[640];
    int len = snprintf(line, sizeof line, "boot: us from entry:");
    for (uint32_t i = 0; i <= n && len < (int)sizeof line - 32; i++) {
        for (int k = 0; k < 2; k++) {
            if (!cores[k].shown && (i == n || m[i].tsc >= cores[k].tsc)) {
                len += snprintf(line + len, sizeof line - (size_t)len, " %s=%lu", cores[k].key,
                                us_since_entry(cores[k].tsc));
                cores[k].shown = true;
            }
        }
        if (i < n)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s=%lu", m[i].phase, us_since_entry(m[i].tsc));
    }
    kprintf("%s\n", line);
    if (!per_core)
        return;
    for (uint32_t i = 0; i < arch_ncpu(); i++)
        kprintf("boot: cpu %u (apic id %u) online at %lu us, ready at %lu us\n", i, arch_cpu(i)->apic_id,
                us_since_entry(arch_cpu(i)->online_tsc), us_since_entry(arch_cpu(i)->ready_tsc));
}

int boot_times(uint64_t *online_ns, int max, const char **loader)
{
    uint64_t entry = arch_boot_entry_tsc();
    if (!entry || last_core_tsc(false) < entry)
        return 0;
    int n = (int)arch_ncpu();
    for (int i = 0; i < n && i < max; i++) {
        uint64_t t = arch_cpu((uint32_t)i)->online_tsc;
        online_ns[i] = t > entry ? arch_cycles_to_ns(t - entry) : 0;
    }
    *loader = boot_info.loader ? boot_info.loader : "?";
    return n;
}
