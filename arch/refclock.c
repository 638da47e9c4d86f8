// SPDX-License-Identifier: MIT
// Reference clocks for measuring the TSC: the HPET's main counter, the
// ACPI PM timer, or the PIT's channel 2, best first.
//
// Every reading is bracketed by two TSC reads: the reference was read at
// some moment between them, so the bracket's midpoint stands for that
// moment, within half the bracket's width. A measurement is then the ratio
// of two elapsed counts, so time lost anywhere between the readings (a
// vCPU the host descheduled, an SMI) cancels out; only the brackets and
// the reference's resolution limit it, and both are known: the error
// bound is exact, not a guess.
//
// Which clock. The HPET counts at 10-70 ns resolution (100 MHz in QEMU),
// the PM timer at 279 ns, the PIT at 838 ns and is slow to read (three
// port accesses). Under TCG one read of the HPET or PM timer costs about
// 0.2 us, rdtsc 0.06 us. The PIT is used only when neither of the others
// is there, and never for refinement while the machine runs (tests
// reprogram channel 2).
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "arch/pit.h"

#define HPET_CAP 0x00               // bits 63:32 period in fs, bit 13 64-bit counter
#define HPET_CONFIG 0x10            // bit 0 ENABLE_CNF: the main counter runs
#define HPET_COUNTER 0xF0
#define HPET_MAX_PERIOD_FS 100000000ull     // the specification's slowest: 10 MHz
#define PM_TIMER_HZ ARCH_PM_TIMER_HZ

static uint16_t pm_port;
static bool pm_32bit;
static volatile uint64_t *hpet;

void arch_set_pm_timer(uint16_t port, bool is_32bit)
{
    pm_port = port;
    pm_32bit = is_32bit;
}

void arch_set_hpet(uint64_t phys)
{
    // Reached through the direct map's uncached 3-4 GiB hole only.
    if (phys >= (3ull << 30) && phys < (4ull << 30) - 1024)
        hpet = (volatile uint64_t *)(uintptr_t)phys;
}

static uint64_t hpet_read(void) { return hpet[HPET_COUNTER / 8]; }
static uint64_t pm_read(void) { return inl(pm_port); }
static uint64_t pit_read(void) { return pit_ch2_read(); }

// The HPET as a reference: present, with a sane period; its counter is
// switched on if the firmware left it off (nothing else in goro uses it).
static bool hpet_pick(struct refclock *rc)
{
    if (!hpet)
        return false;
    uint64_t cap = hpet[HPET_CAP / 8];
    uint64_t period_fs = cap >> 32;
    if (period_fs == 0 || period_fs > HPET_MAX_PERIOD_FS)
        return false;
    if (!(hpet[HPET_CONFIG / 8] & 1))
        hpet[HPET_CONFIG / 8] |= 1;
    *rc = (struct refclock){ "HPET", 1000000000000000ull / period_fs,
                             cap & (1u << 13) ? UINT64_MAX : 0xFFFFFFFFull, false, true, hpet_read };
    return true;
}

// Boot core. The best reference this machine has; false: none.
bool refclock_pick(struct refclock *rc)
{
    if (hpet_pick(rc))
        return true;
    if (pm_port) {
        *rc = (struct refclock){ "ACPI PM timer", PM_TIMER_HZ, pm_32bit ? 0xFFFFFFFFull : 0xFFFFFFull,
                                 false, true, pm_read };
        return true;
    }
    // Channel 2 as a free-running rate generator (mode 2) over the full
    // 16 bits, gated on, speaker off.
    outb(0x61, (inb(0x61) & ~0x02) | 0x01);
    outb(0x43, 0xB4);
    outb(0x42, 0xFF);
    outb(0x42, 0xFF);
    *rc = (struct refclock){ "PIT", PIT_HZ, 0xFFFF, true, false, pit_read };
    return true;
}

// One reading, bracketed; false if even the best of a few tries had a
// bracket wider than max_half cycles on each side (the vCPU kept being
// descheduled). The narrowest of `tries` brackets is kept.
bool refclock_sample(const struct refclock *rc, int tries, uint64_t max_half, struct refsample *s)
{
    bool got = false;
    struct refsample best = { 0, UINT64_MAX, 0 };
    for (int i = 0; i < tries || (!got && i < 100); i++) {
        uint64_t t0 = rdtsc_ordered();
        uint64_t r = rc->read() & rc->mask;
        uint64_t t1 = rdtsc_ordered();
        uint64_t half = (t1 - t0 + 1) / 2;
        if (half <= max_half && half < best.half) {
            best = (struct refsample){ t0 + (t1 - t0) / 2, half, r };
            got = true;
        }
    }
    if (got)
        *s = best;
    return got;
}

// Reference ticks from a to b, less than one wrap apart.
uint64_t refclock_ticks(const struct refclock *rc, const struct refsample *a, const struct refsample *b)
{
    return (rc->down ? a->count - b->count : b->count - a->count) & rc->mask;
}

bool arch_pm_timer_reading(struct arch_pm_reading *r)
{
    if (!pm_port)
        return false;
    struct refclock pm = { "ACPI PM timer", PM_TIMER_HZ, pm_32bit ? 0xFFFFFFFFull : 0xFFFFFFull, false, true,
                           pm_read };
    struct refsample s;
    if (!refclock_sample(&pm, 3, UINT64_MAX, &s))
        return false;
    *r = (struct arch_pm_reading){ s.tsc, s.half, s.count, pm.mask };
    return true;
}
