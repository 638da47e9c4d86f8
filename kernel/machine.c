// SPDX-License-Identifier: MIT
// The machine-level calls of goro.h: cores, time, exit.
#include "kernel/goro.h"
#include "arch/arch.h"
#include "lib/printf.h"
#include "kernel/trace.h"
#include "kernel/app.h"

int num_cpu(void)
{
    return (int)arch_ncpu();
}

int core_id(void)
{
    return (int)cpu_index();
}

uint64_t cputicks(void)
{
    return arch_cycles();
}

uint64_t nanotime(void)
{
    return arch_nanotime();
}

void machine_exit(int code)
{
    arch_stop_others();
    if (trace_on) {
        console_panic_mode();       // a stopped core may hold the console lock
        trace_dump();
    }
    arch_exit(code);
}

// Under the shell, an app's exit() ends the calling goroutine only
// (kernel/app.h); otherwise the machine.
void exit(int code)
{
    if (app_exit_caught(code))
        goexit();
    machine_exit(code);
}
