// SPDX-License-Identifier: MIT
// Line editing for the console (shell/console_in.c): keys in
// (drivers/keydecode.h), the line and what the terminal must be sent to
// show it out. Pure: tests/host/test_lineedit.c drives it.
//
// The terminal is assumed to understand only printable characters, "\b"
// (cursor one column left) and "\n": every edit is drawn with those, so the
// same bytes work on a serial terminal and on goro's framebuffer console
// (drivers/fb.c), and tests/fbshot.py can replay them. A line longer than
// the terminal is wide still edits correctly in the buffer, but a "\b"
// does not climb back to the previous row, so the screen may not show it.
//
// Keys: printable characters insert at the cursor; Backspace and Delete
// erase; Left/Right, Home/End (Ctrl-A/Ctrl-E) move; Ctrl-U erases before
// the cursor, Ctrl-K after it; Up/Down walk the history; Enter ends the
// line; Ctrl-C abandons it.
#ifndef GORO_LINEEDIT_H
#define GORO_LINEEDIT_H

#include <stddef.h>
#include <stdint.h>

#define LINEEDIT_HISTORY 32         // lines kept
#define LINEEDIT_MAX 256            // longest history entry (longer ones are cut)

struct lineedit_history {
    char line[LINEEDIT_HISTORY][LINEEDIT_MAX];
    uint32_t count;                 // lines ever added; the newest is at (count - 1) % LINEEDIT_HISTORY
};

typedef void (*lineedit_out_fn)(void *ctx, const char *s, size_t n);

struct lineedit {
    char *buf;                      // the line, NUL-terminated when DONE
    size_t cap;                     // buf's size: at most cap - 1 characters
    size_t len, pos;                // characters, and the cursor (0..len)
    struct lineedit_history *hist;  // NULL: no history
    uint32_t browse;                // 0: the new line; k: the k-th newest history line
    char saved[LINEEDIT_MAX];       // the new line while the history is shown
    lineedit_out_fn out;
    void *ctx;
    char o[128];                    // output of the key being handled
    size_t on;
};

enum lineedit_result {
    LINEEDIT_MORE,                  // keep sending keys
    LINEEDIT_DONE,                  // Enter: buf holds the line
    LINEEDIT_CANCEL,                // Ctrl-C: buf is empty
};

// cap >= 1. Nothing is drawn: the caller has shown its prompt.
void lineedit_init(struct lineedit *e, char *buf, size_t cap, struct lineedit_history *hist,
                   lineedit_out_fn out, void *ctx);
enum lineedit_result lineedit_key(struct lineedit *e, int key);
// Adds line to the history, unless it is empty or repeats the newest entry.
void lineedit_history_add(struct lineedit_history *h, const char *line);

#endif
