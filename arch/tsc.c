// SPDX-License-Identifier: MIT
// The TSC's frequency: from CPUID 0x15 (crystal clock times ratio) when the
// CPU states it, otherwise measured against the PIT's channel 2 over three
// 10 ms windows, taking the median. (Under QEMU's TCG 0x15 is absent; the
// PIT and ACPI PM timer agree within 0.05% there.)
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "arch/pit.h"
#include "lib/printf.h"

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

// A reference clock read together with the TSC. Each sample brackets the
// reference read between two TSC reads and keeps the bracket's midpoint;
// a sample whose bracket is wide (the vCPU was descheduled mid-read, or an
// SMI) is taken again. The frequency is the ratio of the two elapsed
// counts, so time lost anywhere else cancels out: a busy VM host cannot
// skew it, unlike waiting for the PIT's output pin.
struct refclock {
    uint64_t hz;
    uint64_t mask;              // the counter's width
    bool down;                  // counts down (the PIT)
    uint64_t (*read)(void);
};

static uint16_t pm_port;
static bool pm_32bit;

void arch_set_pm_timer(uint16_t port, bool is_32bit)
{
    pm_port = port;
    pm_32bit = is_32bit;
}

static uint64_t pm_read(void) { return inl(pm_port); }
static uint64_t pit_read(void) { return pit_ch2_read(); }

static bool sample(const struct refclock *rc, uint64_t *tsc, uint64_t *ref)
{
    for (int tries = 0; tries < 100; tries++) {
        uint64_t t0 = rdtsc();
        uint64_t r = rc->read() & rc->mask;
        uint64_t t1 = rdtsc();
        if (t1 - t0 < 200000) {         // about 50-100 us at any plausible TSC rate
            *tsc = t0 + (t1 - t0) / 2;
            *ref = r;
            return true;
        }
    }
    return false;
}

// TSC ticks per second over about 10 ms of the reference; 0 on failure.
static uint64_t measure(const struct refclock *rc)
{
    uint64_t t0, r0, t1, r1;
    if (!sample(rc, &t0, &r0))
        return 0;
    uint64_t want = rc->hz / 100, elapsed = 0;
    do {
        if (!sample(rc, &t1, &r1))
            return 0;
        elapsed = (rc->down ? r0 - r1 : r1 - r0) & rc->mask;
    } while (elapsed < want && elapsed < rc->mask / 2);
    return elapsed ? (t1 - t0) * rc->hz / elapsed : 0;
}

static uint64_t median5(uint64_t *s)
{
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            uint64_t t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return s[2];
}

static uint64_t tsc_measure(const char **how)
{
    struct refclock pm = { 3579545, 0, false, pm_read };
    struct refclock pit = { PIT_HZ, 0xFFFF, true, pit_read };
    const struct refclock *rc = &pit;
    *how = "PIT";
    if (pm_port) {
        pm.mask = pm_32bit ? 0xFFFFFFFFu : 0xFFFFFFu;
        rc = &pm;
        *how = "ACPI PM timer";
    } else {
        outb(0x61, (inb(0x61) & ~0x02) | 0x01);     // gate channel 2 on, speaker off
        outb(0x43, 0xB4);                           // channel 2, lo/hi, mode 2 (rate), binary
        outb(0x42, 0xFF);
        outb(0x42, 0xFF);
    }
    uint64_t s[5];
    for (int i = 0; i < 5; i++)
        s[i] = measure(rc);
    return median5(s);
}

void tsc_calibrate(void)
{
    const char *how = "CPUID 0x15";
    tsc_hz = tsc_from_cpuid();
    if (!tsc_hz)
        tsc_hz = tsc_measure(&how);
    if (!tsc_hz) {
        tsc_hz = 1000000000;    // no usable reference: say so, keep going
        how = "no reference clock answered; assuming 1 GHz";
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

// Both saturate: a duration too long for 64 bits is "never", not a
// wrapped-around short one.
uint64_t arch_ns_to_cycles(uint64_t ns)
{
    __uint128_t c = ((__uint128_t)ns * cycles_per_ns_32) >> 32;
    return c > UINT64_MAX ? UINT64_MAX : (uint64_t)c;
}

uint64_t arch_cycles_to_ns(uint64_t cycles)
{
    __uint128_t ns = ((__uint128_t)cycles * ns_per_cycle_32) >> 32;
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

void tsc_delay_us(uint64_t us)
{
    uint64_t end = rdtsc() + arch_ns_to_cycles(us * 1000);
    while (rdtsc() < end)
        cpu_relax();
}
