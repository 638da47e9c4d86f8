// SPDX-License-Identifier: MIT
// The 8254 PIT's channel 2, a reference clock at boot, and channel 0, a
// device interrupt source for tests (ISA IRQ 0).
#ifndef GORO_PIT_H
#define GORO_PIT_H
#include <stdint.h>

#define PIT_HZ 1193182u

// Starts a one-shot countdown of ticks (< 65536) on channel 2.
void pit_oneshot_start(uint16_t ticks);
// True once the countdown started by pit_oneshot_start has reached zero.
int pit_oneshot_done(void);

// Starts a one-shot countdown of ticks on channel 0: ISA IRQ 0 rises once
// when it reaches zero (route and unmask it through the IOAPIC first).
void pit_ch0_oneshot(uint16_t ticks);

// Latches and reads channel 2's current count (counting down).
uint16_t pit_ch2_read(void);

#endif
