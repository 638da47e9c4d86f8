// SPDX-License-Identifier: MIT
// Calls from arch/'s trap path into kernel/ (which implements them), and
// the fault-handler hook kernel/ may register.
#ifndef GORO_TRAP_HOOKS_H
#define GORO_TRAP_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

struct trapframe;

// Prints which goroutine was running, for fatal dumps.
void trap_describe_context(void);
// Prints the scheduler's state (Ps, Ms, queues, every goroutine) for a
// hang report: the machine is about to stop, the other cores are parked in
// their NMI, and racy reads are accepted.
void trap_dump_sched_state(void);
// After an interrupt handler ran: returns the frame to resume, which is tf
// unless the kernel decided to switch goroutines (preemption).
struct trapframe *trap_switch_hook(struct trapframe *tf);

// A handler for exception vector v (< 32) that returns true when it
// resolved the fault (e.g. a stack page mapped on first touch). irqs_on:
// the faulting code had interrupts enabled, so it held no spinlock.
typedef bool (*fault_handler_fn)(uint64_t vector, uint64_t error, uint64_t addr, uint64_t rip,
                                 bool irqs_on);
void arch_set_fault_handler(uint8_t vector, fault_handler_fn fn);

#endif
