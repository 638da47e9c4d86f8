// SPDX-License-Identifier: MIT
#ifndef GORO_PANIC_H
#define GORO_PANIC_H

// Supplied by the machine (kernel/panic.c: stops the other cores, prints
// the message, the goroutine and a backtrace, and exits 255), declared
// here so that every layer can assert.
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

// Preconditions are asserts, not hopes. Always on: they are cheap.
#define ASSERT(c) \
    do { if (!(c)) panic("assertion failed: %s (%s:%d)", #c, __FILE__, __LINE__); } while (0)

#endif
