// SPDX-License-Identifier: MIT
// The machine-level calls of goro.h: cores, time, exit.
#include "goro.h"
#include "arch/arch.h"
#include "lib/printf.h"
#include "kernel/trace.h"
#include "kernel/app.h"
#include "kernel/sched.h"
#include "kernel/profile.h"
#include "kernel/metrics.h"

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

uint64_t cputicks_hz(void)
{
    return arch_tsc_hz();
}

uint64_t nanotime(void)
{
    return arch_nanotime();
}

void cpu_model(char *buf, size_t n)
{
    arch_cpu_model(buf, n);
}

const char *cpu_accel(void)
{
    return arch_accel();
}

const char *cpu_timer_mode(void)
{
    return arch_timer_tsc_deadline() ? "tsc-deadline" : "apic-oneshot";
}

void machine_exit(int code)
{
    irq_disable();                  // no preemption from here: the dumps below must see a still machine
    arch_stop_others_quiet();       // each core halts outside its trace and metrics updates
    if (trace_on || profile_key.enabled || metrics_on) {
        console_panic_mode();       // a stopped core may hold the console lock
        trace_dump();
        profile_dump();
        metrics_print();
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
