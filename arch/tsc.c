// SPDX-License-Identifier: MIT
// The TSC's frequency: from CPUID 0x15 (crystal clock times ratio) when the
// CPU states it, otherwise measured against the PIT's channel 2 over three
// 10 ms windows, taking the median. (Under QEMU's TCG 0x15 is absent; the
// PIT and ACPI PM timer agree within 0.05% there.)
#include "arch_private.h"
#include "x86.h"
#include "pit.h"
#include "printf.h"

static uint64_t tsc_hz;
// Conversions are a multiply and a shift, 32.32 fixed point: no division
// on the hot path, and no 128-bit division (which would need libgcc).
static uint64_t ns_per_cycle_32;    // 2^32 * 1e9 / tsc_hz
static uint64_t cycles_per_ns_32;   // 2^32 * tsc_hz / 1e9

static uint64_t tsc_from_cpuid(void)
{
    if (cpuid(0, 0).eax < 0x15)
        return 0;
    struct cpuid_regs r = cpuid(0x15, 0);
    if (!r.eax || !r.ebx || !r.ecx)
        return 0;
    return (uint64_t)r.ecx * r.ebx / r.eax;
}

static uint64_t tsc_measure_pit(void)
{
    const uint16_t ticks = PIT_HZ / 100;   // 10 ms
    uint64_t s[3];
    for (int i = 0; i < 3; i++) {
        pit_oneshot_start(ticks);
        uint64_t t0 = rdtsc();
        while (!pit_oneshot_done())
            ;
        s[i] = (rdtsc() - t0) * PIT_HZ / ticks;
    }
    // median of three
    if (s[0] > s[1]) { uint64_t t = s[0]; s[0] = s[1]; s[1] = t; }
    if (s[1] > s[2]) { uint64_t t = s[1]; s[1] = s[2]; s[2] = t; }
    if (s[0] > s[1]) { uint64_t t = s[0]; s[0] = s[1]; s[1] = t; }
    return s[1];
}

void tsc_calibrate(void)
{
    const char *how = "CPUID 0x15";
    tsc_hz = tsc_from_cpuid();
    if (!tsc_hz) {
        how = "PIT";
        tsc_hz = tsc_measure_pit();
    }
    ns_per_cycle_32 = (1000000000ull << 32) / tsc_hz;
    cycles_per_ns_32 = ((tsc_hz / 1000000000ull) << 32) + ((tsc_hz % 1000000000ull) << 32) / 1000000000ull;
    bool invariant = cpuid(0x80000000, 0).eax >= 0x80000007 &&
                     (cpuid(0x80000007, 0).edx & (1u << 8));
    kprintf("tsc: %lu.%03lu MHz (%s)%s\n", tsc_hz / 1000000, (tsc_hz / 1000) % 1000, how,
            invariant ? ", invariant" : ", not marked invariant");
}

uint64_t arch_tsc_hz(void)
{
    return tsc_hz;
}

uint64_t arch_ns_to_cycles(uint64_t ns)
{
    return (uint64_t)(((__uint128_t)ns * cycles_per_ns_32) >> 32);
}

uint64_t arch_cycles_to_ns(uint64_t cycles)
{
    return (uint64_t)(((__uint128_t)cycles * ns_per_cycle_32) >> 32);
}

void tsc_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + arch_ns_to_cycles(us * 1000);
    while (rdtsc() < end)
        cpu_relax();
}
