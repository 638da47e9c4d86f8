// SPDX-License-Identifier: MIT
// The CMOS clock counts whole seconds, so the time of day is the second it
// showed plus the time since it was read: behind the true time by less
// than a second (the part of the second already gone at the reading),
// then as steady as nanotime. Nothing sets or slews it later.
#include "kernel/walltime.h"
#include "goro.h"
#include "arch/arch.h"
#include "lib/printf.h"

// Written once by walltime_init before the APs go; read-only after.
static int64_t boot_unix_s;     // 0: no time of day
static uint64_t boot_ns;        // nanotime() at the reading

void walltime_init(uint8_t century_reg)
{
    int64_t s;
    bool ok = arch_rtc_read(century_reg, &s);
    uint64_t at = arch_nanotime();      // after: s held at some moment before it, never after
    if (!ok || s <= 0) {
        kprintf("rtc: no valid time in the CMOS clock; walltime_ns() is 0\n");
        return;
    }
    boot_unix_s = s;
    boot_ns = at;
    kprintf("rtc: Unix time %lld (UTC)%s\n", (long long)s,
            century_reg ? "" : ", the year taken as 20xx (no century register in the FADT)");
}

int64_t walltime_ns(void)
{
    if (!boot_unix_s)
        return 0;
    return boot_unix_s * 1000000000ll + (int64_t)(arch_nanotime() - boot_ns);
}
