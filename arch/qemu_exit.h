// SPDX-License-Identifier: MIT
#ifndef GORO_QEMU_EXIT_H
#define GORO_QEMU_EXIT_H
#include <stdint.h>

// Writes v to QEMU's isa-debug-exit (iobase 0xf4); QEMU then exits with
// status (v << 1) | 1. Harmless where no such device exists.
void qemu_debug_exit(uint8_t v);

#endif
