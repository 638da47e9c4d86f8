// SPDX-License-Identifier: MIT
// The 8254 PIT's channel 2, used only as a reference clock at boot.
#ifndef GORO_PIT_H
#define GORO_PIT_H
#include <stdint.h>

#define PIT_HZ 1193182u

// Starts a one-shot countdown of ticks (< 65536) on channel 2.
void pit_oneshot_start(uint16_t ticks);
// True once the countdown started by pit_oneshot_start has reached zero.
int pit_oneshot_done(void);

#endif
