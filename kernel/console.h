// SPDX-License-Identifier: MIT
// The console's output: where kernel text goes (the serial port, and a
// framebuffer when one exists; kernel/console.c). Typed keys come in
// through shell/console_in.h. kprintf and console_write are declared in
// lib/printf.h, for every layer; console_read_line, for applications, in
// goro.h.
#ifndef GORO_CONSOLE_H
#define GORO_CONSOLE_H
#include <stdbool.h>
#include <stddef.h>
#include "goro.h"

void console_init(void);
// The boot's lines are held in memory from kernel entry until
// console_release (once the cores are up), then written in one go; a
// fatal path (console_panic_mode) writes them first. Under TCG each serial
// character costs two port exits (2-9 us here): the lines before the APs
// start were 0.5-2 ms of a boot whose target is 2 ms.
void console_release(void);
// Unserialized: callers hold the console lock (printf.c) or are panicking.
void console_output(const char *s, size_t n);
// Writes the caller's unfinished line (text kprintf holds until its "\n")
// now: a prompt before a read, an echo as it is typed.
void console_flush(void);
#ifdef GORO_DEBUG
// Debug builds' tests: calls fn with the console's lock held (interrupts
// off), then holds it ns more: a core interrupted (by NMI) while it prints.
void console_lock_held_for(void (*fn)(void), uint64_t ns);
#endif

#endif
