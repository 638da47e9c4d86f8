// SPDX-License-Identifier: MIT
// The boot timeline's record, and the markers the host sees.
//
// The boot core stamps the TSC at the start of each boot phase (kernel/
// main.c's table, and arch_platform_init's steps) while it runs alone;
// kernel/boot_timeline.c prints the stamps as microseconds from kernel
// entry. The APs' own stamps are in their struct cpu (online_tsc).
//
// Markers for the host go to QEMU's debug console, port 0x402
// (`-device isa-debugcon,iobase=0x402,chardev=...`): a chardev the host
// reads with its own clock, so it can time QEMU's start to kernel entry
// and to main (tools/bench/boot_bench.py). Port 0x80 (POST codes) would be safe
// on any PC, but QEMU can neither log nor trace it; 0x402 is where SeaBIOS
// and OVMF write their debug logs, so the host sees the firmware's
// progress on the same clock. The markers are written only under a
// hypervisor: on a real chipset 0x400-0x47F is often the ACPI
// power-management block (0x402 is PM1_EN on many Intel boards).
#include "arch/arch_private.h"
#include "arch/x86.h"

#define MARKS_MAX 48
#define DEBUGCON_PORT 0x402

static struct arch_boot_mark marks[MARKS_MAX];
static uint32_t nmarks;
static uint64_t entry_tsc;

void arch_boot_entry(uint64_t tsc)
{
    entry_tsc = tsc;
}

uint64_t arch_boot_entry_tsc(void)
{
    return entry_tsc;
}

// Boot core, before the APs run: no other core writes the table.
void arch_boot_mark(const char *phase)
{
    if (nmarks < MARKS_MAX)
        marks[nmarks++] = (struct arch_boot_mark){ phase, rdtsc() };
}

uint32_t arch_boot_marks(const struct arch_boot_mark **out)
{
    *out = marks;
    return nmarks;
}

void arch_host_marker(const char *s)
{
    if (!arch_under_hypervisor())               // no hypervisor: real hardware
        return;
    while (*s)
        outb(DEBUGCON_PORT, (uint8_t)*s++);
}
