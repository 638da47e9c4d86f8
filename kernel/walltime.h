// SPDX-License-Identifier: MIT
// The time of day (goro.h: walltime_ns): the CMOS clock read once at
// boot, then nanotime's progress since.
#ifndef GORO_WALLTIME_H
#define GORO_WALLTIME_H

#include <stdint.h>

// Boot core, after arch_clock_end and before the APs go (their release
// publishes what it wrote). century_reg: the FADT's (0: none). Prints
// the clock's reading, or why there is none.
void walltime_init(uint8_t century_reg);

#endif
