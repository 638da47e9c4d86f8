// SPDX-License-Identifier: MIT
// Leaving the machine, with DESIGN.md's exit codes: QEMU exits 33 for a
// main that returned 0, (v << 1) | 1 for a return value v in 1..15 (larger
// values clamp to 15), 255 for a fatal error.
#include "arch_private.h"
#include "qemu_exit.h"
#include "printf.h"

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
    // Still here: not QEMU, or no debug-exit device.
    irq_disable();
    kprintf("goro: exit code %d; machine halted\n", code);
    arch_stop_others();
    for (;;)
        __asm__ volatile("cli; hlt");
}

void arch_idle_halt(void)
{
    __asm__ volatile("sti; hlt; cli" ::: "memory");
}
