// SPDX-License-Identifier: MIT
// Where console text goes: the serial port, and a framebuffer when one exists.
// kprintf and console_write are declared in lib/printf.h, for every layer.
#ifndef GORO_CONSOLE_H
#define GORO_CONSOLE_H
#include <stddef.h>

void console_init(void);
// Unserialized: callers hold the console lock (printf.c) or are panicking.
void console_output(const char *s, size_t n);
// Writes the caller's unfinished line (text kprintf holds until its "\n")
// now: a prompt before a read, an echo as it is typed.
void console_flush(void);

#endif
