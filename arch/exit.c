// SPDX-License-Identifier: MIT
// Leaving the machine, with the exit codes of docs/api.md: QEMU exits 33 for a
// main that returned 0, (v << 1) | 1 for a return value v in 1..15 (larger
// values clamp to 15), 255 for a fatal error.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "arch/qemu_exit.h"
#include "lib/printf.h"

// About 0.1 s of pauses on hardware, more under TCG: far longer than
// QEMU's main loop takes to act on an exit request.
#define EXIT_GRACE_SPINS 1000000

void arch_exit(int code)
{
    uint8_t v;
    if (code == 0)
        v = 0x10;
    else if (code == ARCH_EXIT_FATAL)
        v = 0x7f;
    else if (code < 0 || code > 15)
        v = 15;
    else
        v = (uint8_t)code;
    qemu_debug_exit(v);
    // Still here: QEMU 10 takes the write as a request that its main loop
    // carries out a moment later (7.2 exited inside it); or not QEMU, or
    // no debug-exit device. Stop the other cores and give the request
    // that moment before saying the machine halted.
    irq_disable();
    arch_stop_others();
    for (int i = 0; i < EXIT_GRACE_SPINS; i++)
        cpu_relax();
    kprintf("goro: exit code %d; machine halted\n", code);
    for (;;)
        __asm__ volatile("cli; hlt");
}

#define RESET_CONTROL 0xCF9         // PIIX/ICH and later: bit 1 hard reset, bit 2 do it
#define KBC_STATUS 0x64
#define KBC_PULSE_RESET 0xFE

void arch_reboot(void)
{
    irq_disable();
    arch_stop_others();
    outb(RESET_CONTROL, 0x02);
    outb(RESET_CONTROL, 0x06);
    for (int i = 0; i < 1000000; i++)   // the reset takes effect within microseconds
        cpu_relax();
    for (int i = 0; i < 100000 && (inb(KBC_STATUS) & 0x02); i++)
        ;
    outb(KBC_STATUS, KBC_PULSE_RESET);
    for (int i = 0; i < 1000000; i++)
        cpu_relax();
    // Last resort: an exception with an empty IDT is a triple fault.
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) none = { 0, 0 };
    __asm__ volatile("lidt %0; int3" :: "m"(none));
    for (;;)
        __asm__ volatile("cli; hlt");
}

void arch_idle_halt(void)
{
    __asm__ volatile("sti; hlt; cli" ::: "memory");
}

bool arch_has_mwait(void)
{
    return cpuid(1, 0).ecx & (1u << 3);
}

// Waits until *addr may have changed or an interrupt came, with interrupts
// enabled only inside the wait (as arch_idle_halt). MONITOR arms on addr's
// line; the re-check after it closes the window in which a write before
// the arming would be missed. sti sits right before MWAIT (its shadow
// covers it), so an interrupt ends the wait with plain hints (ECX = 0; the
// "wake on masked interrupts" extension is optional and absent under TCG).
void arch_idle_mwait(const volatile void *addr)
{
    __asm__ volatile("monitor" :: "a"(addr), "c"(0), "d"(0));
    if (*(const volatile uint64_t *)addr)
        return;
    __asm__ volatile("sti; mwait; cli" :: "a"(0), "c"(0) : "memory");
}

// Spins with interrupts enabled until *addr is set or a little while
// passes (the caller loops): no halt, lowest wake-up latency, a busy core.
void arch_idle_poll(const volatile void *addr)
{
    __asm__ volatile("sti" ::: "memory");
    for (int i = 0; i < 1000 && !*(const volatile uint64_t *)addr; i++)
        __asm__ volatile("pause" ::: "memory");
    __asm__ volatile("cli" ::: "memory");
}
