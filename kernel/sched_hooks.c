// SPDX-License-Identifier: MIT
// The kernel's side of arch/trap_hooks.h until the scheduler takes it over.
#include "trap_hooks.h"
#include "printf.h"
#include "arch.h"

void trap_describe_context(void)
{
    kprintf("  running on cpu %u's boot stack (no goroutine)\n", cpu_index());
}

struct trapframe *trap_switch_hook(struct trapframe *tf)
{
    return tf;
}
