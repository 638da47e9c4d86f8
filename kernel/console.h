// SPDX-License-Identifier: MIT
// Where console text goes: the serial port, and a framebuffer when one exists.
#ifndef GORO_CONSOLE_H
#define GORO_CONSOLE_H
#include <stddef.h>

void console_init(void);
// Unserialized: callers hold the console lock (printf.c) or are panicking.
void console_output(const char *s, size_t n);

#endif
