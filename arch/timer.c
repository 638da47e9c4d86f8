// SPDX-License-Identifier: MIT
// Each core's one-shot timer: TSC-deadline mode where CPUID offers it (the
// deadline is a TSC value, no conversion, no 32-bit limit), otherwise the
// local APIC timer in one-shot mode with divide-by-1, calibrated against the
// TSC at boot. Nothing is periodic: a core with nothing to wait for arms
// nothing.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/printf.h"

void lapic_timer_oneshot(uint32_t count, uint8_t vector);
uint32_t lapic_timer_current(void);
void lapic_timer_stop(void);
void lapic_timer_deadline_mode(uint8_t vector);

static bool tsc_deadline;
static uint64_t apic_hz;
static uint64_t apic_per_tsc_24;    // APIC ticks per TSC cycle, 8.24 fixed point

bool arch_timer_tsc_deadline(void)
{
    return tsc_deadline;
}

// Boot core, once, after tsc_calibrate.
void timer_calibrate(void)
{
    tsc_deadline = cpuid(1, 0).ecx & (1u << 24);
    if (tsc_deadline) {
        kprintf("timer: TSC-deadline one-shot\n");
        timer_init_cpu();
        return;
    }
    // Count down from the maximum for 5 ms of TSC time; each end reads the
    // count bracketed by TSC reads (see arch/tsc.c), so a descheduled vCPU
    // does not skew the ratio.
    lapic_timer_oneshot(0xFFFFFFFFu, VEC_TIMER);
    uint64_t a0 = rdtsc();
    uint32_t c0 = lapic_timer_current();
    uint64_t a1 = rdtsc();
    tsc_delay_us(5000);
    uint64_t b0 = rdtsc();
    uint32_t c1 = lapic_timer_current();
    uint64_t b1 = rdtsc();
    lapic_timer_stop();
    uint64_t t0 = a0 + (a1 - a0) / 2, t1 = b0 + (b1 - b0) / 2;
    apic_hz = (uint64_t)(c0 - c1) * arch_tsc_hz() / (t1 - t0);
    apic_per_tsc_24 = (apic_hz << 24) / arch_tsc_hz();
    kprintf("timer: APIC one-shot, %lu.%03lu MHz\n", apic_hz / 1000000, (apic_hz / 1000) % 1000);
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
