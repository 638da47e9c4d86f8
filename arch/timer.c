// SPDX-License-Identifier: MIT
// Each core's one-shot timer: TSC-deadline mode where CPUID offers it (the
// deadline is a TSC value, no conversion, no 32-bit limit), otherwise the
// local APIC timer in one-shot mode with divide-by-1, calibrated against the
// TSC at boot. Nothing is periodic: a core with nothing to wait for arms
// nothing.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/printf.h"

static bool tsc_deadline;
static uint64_t apic_hz;
static uint64_t apic_per_tsc_24;    // APIC ticks per TSC cycle, 8.24 fixed point
static const char *apic_source;
static uint64_t apic_bound_ppb, apic_window_us;     // measured against the TSC: over what, how well

// The APIC timer's start, for measuring it against the TSC.
static struct {
    uint64_t tsc, half;
    uint32_t count;
} apic_start;

#define APIC_WINDOW_MIN_US 500      // when the TSC's own rate needed no window

bool arch_timer_tsc_deadline(void)
{
    return tsc_deadline;
}

// The APIC timer's rate as the platform states it: the hypervisor's timing
// leaf (ebx, kHz), or CPUID 0x15's crystal, which clocks the local APIC on
// the CPUs that report it (Linux takes it so too). 0: not stated.
static uint64_t apic_hz_from_cpuid(void)
{
    if (arch_under_hypervisor() && cpuid(0x40000000, 0).eax >= 0x40000010 &&
        cpuid(0x40000010, 0).eax && cpuid(0x40000010, 0).ebx) {
        apic_source = "CPUID 0x40000010";
        return (uint64_t)cpuid(0x40000010, 0).ebx * 1000;
    }
    if (cpuid(0, 0).eax >= 0x15 && cpuid(0x15, 0).ecx) {
        apic_source = "CPUID 0x15 crystal";
        return cpuid(0x15, 0).ecx;
    }
    return 0;
}

// The APIC timer's count, bracketed by TSC reads; the narrowest of three.
static void apic_sample(uint64_t *tsc, uint64_t *half, uint32_t *count)
{
    *half = UINT64_MAX;
    *tsc = 0;
    *count = 0;         // (the first pass always sets all three)
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = rdtsc_ordered();
        uint32_t c = lapic_timer_current();
        uint64_t t1 = rdtsc_ordered();
        if ((t1 - t0 + 1) / 2 < *half) {
            *tsc = t0 + (t1 - t0) / 2;
            *half = (t1 - t0 + 1) / 2;
            *count = c;
        }
    }
}

// Boot core, just before tsc_calibrate: the APIC timer counts down from
// its maximum over the TSC's window (masked: it never fires).
void timer_calibrate_begin(void)
{
    tsc_deadline = cpuid(1, 0).ecx & (1u << 24);
    if (tsc_deadline || (apic_hz = apic_hz_from_cpuid()))
        return;
    lapic_timer_oneshot(0xFFFFFFFFu, VEC_TIMER);
    lapic_timer_mask();
    apic_sample(&apic_start.tsc, &apic_start.half, &apic_start.count);
}

// Boot core, just after tsc_calibrate: the APIC ticks per TSC cycle over
// the same window (at least 500 us when the TSC's rate came from CPUID).
void timer_calibrate_end(void)
{
    if (tsc_deadline) {
        timer_init_cpu();
        return;
    }
    if (!apic_hz) {
        uint64_t until = apic_start.tsc + arch_ns_to_cycles(APIC_WINDOW_MIN_US * 1000);
        while (rdtsc() < until)
            cpu_relax();
        uint64_t tsc, half;
        uint32_t count;
        apic_sample(&tsc, &half, &count);
        lapic_timer_stop();
        uint64_t ticks = apic_start.count - count, cycles = tsc - apic_start.tsc;
        if (count == 0 || ticks > (1u << 31)) {
            ticks = cycles;     // ran out: cannot happen in a window this short; say 1 tick a cycle
            apic_source = "ran out; assuming the TSC's rate";
        } else {
            apic_source = "against the TSC";
        }
        apic_hz = ticks * arch_tsc_hz() / cycles;
        apic_bound_ppb = (apic_start.half + half) * 1000000000ull / cycles;
        apic_window_us = arch_cycles_to_ns(cycles) / 1000;
    }
    apic_per_tsc_24 = (apic_hz << 24) / arch_tsc_hz();
}

void timer_report(void)
{
    if (tsc_deadline) {
        kprintf("timer: TSC-deadline one-shot\n");
        return;
    }
    kprintf("timer: APIC one-shot, %lu.%03lu MHz (%s", apic_hz / 1000000, (apic_hz / 1000) % 1000, apic_source);
    if (apic_window_us)
        kprintf(" over %lu us, within %lu ppm of it)\n", apic_window_us, apic_bound_ppb / 1000);
    else
        kprintf(")\n");
}

// Per core, after lapic_init: TSC-deadline mode is set once in the LVT.
void timer_init_cpu(void)
{
    if (tsc_deadline)
        lapic_timer_deadline_mode(VEC_TIMER);
}

// Per core: fire VEC_TIMER at TSC value deadline (at once if it passed);
// replaces whatever was armed. Interrupts off.
void arch_timer_arm(uint64_t deadline)
{
    if (tsc_deadline) {
        wrmsr(MSR_TSC_DEADLINE, deadline ? deadline : 1);
        return;
    }
    uint64_t now = rdtsc();
    uint64_t cycles = deadline > now ? deadline - now : 0;
    uint64_t count = (uint64_t)(((__uint128_t)cycles * apic_per_tsc_24) >> 24);
    if (count == 0)
        count = 1;
    if (count > 0xFFFFFFFFu)
        count = 0xFFFFFFFFu;    // fires early; the handler re-arms for the rest
    lapic_timer_oneshot((uint32_t)count, VEC_TIMER);
}

void arch_timer_cancel(void)
{
    if (tsc_deadline)
        wrmsr(MSR_TSC_DEADLINE, 0);
    else
        lapic_timer_stop();
}
