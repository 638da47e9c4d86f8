// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include "lib/panic.h"
#include "arch/arch.h"
#include "lib/printf.h"
#include "kernel/trace.h"

void panic(const char *fmt, ...)
{
    irq_disable();
    arch_fatal_dump_begin();
    arch_stop_others();
    console_panic_mode();
    kprintf("\npanic on cpu %u: ", cpu_index());
    va_list ap;
    va_start(ap, fmt);
    kvprintf(0, fmt, &ap);
    va_end(ap);
    kprintf("\n");
    trap_describe_context();
    kprintf("backtrace:\n");
    arch_backtrace((uint64_t)__builtin_frame_address(0), 32);
    trace_dump();
    arch_exit(ARCH_EXIT_FATAL);
}
