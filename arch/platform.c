// SPDX-License-Identifier: MIT
// The boot core's platform set-up: the direct map, and the rates of the
// TSC and the timer, measured while the boot goes on. (The local APIC is
// enabled earlier, by arch_early_init, to start the APs.)
#include "arch/arch_private.h"
#include "arch/x86.h"

struct arch_page_allocator arch_pages;

void arch_clock_begin(void)
{
    tsc_calibrate_begin();          // CPUID, or the reference's first reading
}

void arch_platform_init(const struct arch_page_allocator *pages)
{
    arch_pages = *pages;
    arch_boot_mark("paging");
    paging_init();                  // the direct map, from arch_pages
    tsc_calibrate_mark();           // a reading inside the TSC's window
    tlb_init();
    timer_calibrate_begin();        // the APIC timer counts against the TSC from here
}

void arch_clock_end(void)
{
    tsc_calibrate_end();            // at least 1 ms since arch_clock_begin, bound <= 500 ppm
    timer_calibrate_end();          // APIC ticks per TSC cycle (nothing to do with TSC-deadline)
}

// The rates, printed once the cores are up: under QEMU every character on
// the serial port is two VM exits and a write by QEMU, 2-9 us each under
// TCG here, and these two lines were a fifth of the boot's output before
// the APs start.
void arch_clock_report(void)
{
    tsc_report();
    timer_report();
}
