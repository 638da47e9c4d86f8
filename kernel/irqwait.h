// SPDX-License-Identifier: MIT
// The kernel's side of irq_wait (goro.h): device vectors, and how a driver
// makes one waitable. kernel/irqwait.c has the protocol.
#ifndef GORO_IRQWAIT_H
#define GORO_IRQWAIT_H

#include <stdint.h>

// Device interrupts (arch/arch.h's vector map): ISA IRQ n at 0x30 + n,
// 0x40-0x4F for everything else.
#define IRQ_VEC_BASE 0x30
#define IRQ_VEC_LAST 0x4F
#define IRQ_NVEC (IRQ_VEC_LAST - IRQ_VEC_BASE + 1)
#define IRQ_VEC_ISA(irq) (IRQ_VEC_BASE + (irq))
#define IRQ_VEC_TEST 0x4F                   // tests/kernel/test_irqwait.c's IPIs

// Interrupt context, interrupts off, on the core the interrupt reached:
// the driver's acknowledgement of its device (drain a FIFO, clear a
// status bit), run before the vector's waiters are readied.
typedef void (*irq_hook_fn)(uint8_t vector);

// Any context but interrupts. Makes vector waitable: its interrupts from
// now on wake irq_wait's waiters, after hook (NULL: none) has run. Call it
// before the device can interrupt. Returns 0, or -1 when vector is outside
// the device range or already attached with another hook.
int irq_attach(uint8_t vector, irq_hook_fn hook);

// Interrupts delivered on vector that no waiter has consumed yet, taken
// (reset to 0) without waiting; 0 for a vector not attached.
uint32_t irq_take_pending(uint8_t vector);

// Snapshots, for tests and dumps: interrupts delivered on vector since
// boot, and goroutines parked in irq_wait on it now.
uint64_t irq_count(uint8_t vector);
uint32_t irq_nwaiting(uint8_t vector);

#endif
