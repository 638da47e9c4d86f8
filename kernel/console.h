// SPDX-License-Identifier: MIT
// The console: where kernel text goes (the serial port, and a framebuffer
// when one exists; kernel/console.c), and where typed keys come from (COM1
// and the PS/2 keyboard; kernel/console_in.c). kprintf and console_write
// are declared in lib/printf.h, for every layer; console_read_line, for
// applications, in goro.h.
#ifndef GORO_CONSOLE_H
#define GORO_CONSOLE_H
#include <stdbool.h>
#include <stddef.h>
#include "kernel/goro.h"

struct lineedit_history;

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

// ---- input (goroutines only) ----

// Starts input once: routes the interrupts and starts one reader goroutine
// per device. False when there is no input at all (no IOAPIC to route
// through, no device).
bool console_input_start(void);
// Shows prompt, then edits a line into buf (at most cap - 1 characters,
// NUL-terminated) with the history hist (NULL: none). Returns its length;
// -2 when Ctrl-C abandoned it; -1 when there is no input.
int console_edit_line(const char *prompt, char *buf, size_t cap, struct lineedit_history *hist);

// The shell's hold on the console. console_fg_shell: from now on the shell
// reads between runs, and console_read_line from anyone else fails at once
// there. console_fg_begin .. console_fg_end bracket an app's run: Ctrl-C
// is then sent to the returned channel (one slot, drained at each begin)
// instead of being a key, and console_read_line belongs to the app; at the
// end, reads the app left waiting return -1.
void console_fg_shell(void);
chan_t *console_fg_begin(void);
void console_fg_end(void);

#endif
