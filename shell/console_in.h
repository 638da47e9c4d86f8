// SPDX-License-Identifier: MIT
// Console input: where typed keys come from (COM1 and the PS/2 keyboard;
// shell/console_in.c), edited into lines; the shell's hold on it.
// Goroutines only.
#ifndef GORO_CONSOLE_IN_H
#define GORO_CONSOLE_IN_H
#include <stdbool.h>
#include <stddef.h>
#include "goro.h"

struct lineedit_history;

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
