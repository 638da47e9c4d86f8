// SPDX-License-Identifier: MIT
// Host tests of shell/lineedit.c. A model terminal that knows only
// printable characters, "\b" and "\n" (what the editor may send) replays
// its output; after every key the terminal must show exactly the line, the
// cursor where the editor says it is, and nothing stale to the right.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "drivers/keydecode.h"
#include "shell/lineedit.h"

#define COLS 1024

struct term {
    char row[COLS];                 // the current row, ' ' where nothing was drawn
    int col;
    int newlines;
    char last_row[COLS];            // the row a "\n" ended
};

static void term_out(void *ctx, const char *s, size_t n)
{
    struct term *t = ctx;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\b') {
            if (t->col > 0)
                t->col--;
        } else if (c == '\n') {
            memcpy(t->last_row, t->row, COLS);
            memset(t->row, ' ', COLS);
            t->col = 0;
            t->newlines++;
        } else {
            CHECKF(c >= 0x20 && c < 0x7f, "the editor sent byte 0x%02x", (unsigned char)c);
            if (t->col < COLS)
                t->row[t->col++] = c;
        }
    }
}

static void term_init(struct term *t)
{
    memset(t, 0, sizeof *t);
    memset(t->row, ' ', COLS);
}

// The terminal shows exactly e's line with the cursor at e->pos.
static void check_screen(const struct term *t, const struct lineedit *e, const char *what)
{
    CHECKF(memcmp(t->row, e->buf, e->len) == 0, "%s: screen \"%.*s\" but line \"%.*s\"", what,
           (int)e->len, t->row, (int)e->len, e->buf);
    for (int i = (int)e->len; i < COLS; i++)
        if (t->row[i] != ' ') {
            CHECKF(0, "%s: stale '%c' at column %d beyond the line's %zu", what, t->row[i], i,
                   e->len);
            break;
        }
    CHECKF(t->col == (int)e->pos, "%s: cursor at %d, editor at %zu", what, t->col, e->pos);
    CHECKF(strlen(e->buf) == e->len, "%s: buf not terminated at len", what);
}

// An editor and the terminal it draws on.
struct ed {
    char buf[64];
    struct term t;
    struct lineedit e;
};

// A fresh screen and an editor of d->buf's first cap bytes.
static void start(struct ed *d, size_t cap, struct lineedit_history *h)
{
    CHECK(cap <= sizeof d->buf);
    term_init(&d->t);
    lineedit_init(&d->e, d->buf, cap, h, term_out, &d->t);
}

static enum lineedit_result type(struct ed *d, const int *keys, int n)
{
    enum lineedit_result r = LINEEDIT_MORE;
    for (int i = 0; i < n && r == LINEEDIT_MORE; i++) {
        r = lineedit_key(&d->e, keys[i]);
        if (r == LINEEDIT_MORE)
            check_screen(&d->t, &d->e, "after a key");
    }
    return r;
}

static void type_str(struct ed *d, const char *s)
{
    while (*s)
        type(d, (int[]){ (unsigned char)*s++ }, 1);
}

static void test_insert_move_erase(void)
{
    struct ed d;
    start(&d, sizeof d.buf, 0);
    type_str(&d, "helo world");
    type(&d, (int[]){ KEY_HOME, KEY_RIGHT, KEY_RIGHT, KEY_RIGHT }, 4);
    type_str(&d, "l");
    CHECK(strcmp(d.buf, "hello world") == 0 && d.e.pos == 4);
    type(&d, (int[]){ KEY_END, KEY_BACKSPACE, KEY_BACKSPACE, KEY_LEFT, KEY_LEFT, KEY_DELETE }, 6);
    CHECK(strcmp(d.buf, "hello wr") == 0 && d.e.pos == 7);
    type(&d, (int[]){ KEY_CTRL('U') }, 1);
    CHECK(strcmp(d.buf, "r") == 0 && d.e.pos == 0);
    type(&d, (int[]){ KEY_CTRL('E'), 'x', KEY_CTRL('A'), KEY_CTRL('K') }, 4);
    CHECK(d.buf[0] == 0 && d.e.len == 0);
    // nothing happens at the ends
    type(&d, (int[]){ KEY_BACKSPACE, KEY_LEFT, KEY_DELETE, KEY_RIGHT, KEY_DOWN }, 5);
    type_str(&d, "ok");
    CHECK(type(&d, (int[]){ KEY_LEFT, KEY_ENTER }, 2) == LINEEDIT_DONE);
    CHECK(strcmp(d.buf, "ok") == 0 && d.t.newlines == 1 && memcmp(d.t.last_row, "ok ", 3) == 0);
}

static void test_capacity(void)
{
    struct ed d;
    start(&d, 5, 0);
    type_str(&d, "abcdefg");
    CHECK(strcmp(d.buf, "abcd") == 0);
    type(&d, (int[]){ KEY_HOME, 'z' }, 2);
    CHECK(strcmp(d.buf, "abcd") == 0);
}

static void test_ctrl_c(void)
{
    struct ed d;
    start(&d, 16, 0);
    type_str(&d, "abc");
    CHECK(type(&d, (int[]){ KEY_LEFT, KEY_CTRL('C') }, 2) == LINEEDIT_CANCEL);
    CHECK(d.buf[0] == 0 && d.t.newlines == 1 && memcmp(d.t.last_row, "abc^C", 5) == 0);
}

static void test_history(void)
{
    static struct lineedit_history h;
    struct ed d;
    lineedit_history_add(&h, "one");
    lineedit_history_add(&h, "");
    lineedit_history_add(&h, "a much longer line");
    lineedit_history_add(&h, "a much longer line");   // a repeat of the newest: not kept
    lineedit_history_add(&h, "three");
    CHECK(h.count == 3);
    start(&d, sizeof d.buf, &h);
    type_str(&d, "new");
    type(&d, (int[]){ KEY_UP }, 1);
    CHECK(strcmp(d.buf, "three") == 0);
    type(&d, (int[]){ KEY_UP }, 1);
    CHECK(strcmp(d.buf, "a much longer line") == 0);
    type(&d, (int[]){ KEY_UP, KEY_UP, KEY_UP }, 3);      // stops at the oldest
    CHECK(strcmp(d.buf, "one") == 0);
    type(&d, (int[]){ KEY_DOWN, KEY_DOWN, KEY_DOWN }, 3);
    CHECK(strcmp(d.buf, "new") == 0);                         // the line being typed comes back
    type(&d, (int[]){ KEY_DOWN, KEY_UP, KEY_HOME, 'x' }, 4);
    CHECK(strcmp(d.buf, "xthree") == 0 && d.e.pos == 1);
    CHECK(type(&d, (int[]){ KEY_ENTER }, 1) == LINEEDIT_DONE);
    // the history keeps its newest LINEEDIT_HISTORY lines
    for (int i = 0; i < 100; i++) {
        char l[16];
        snprintf(l, sizeof l, "cmd %d", i);
        lineedit_history_add(&h, l);
    }
    start(&d, sizeof d.buf, &h);
    for (int i = 0; i < 200; i++)
        type(&d, (int[]){ KEY_UP }, 1);
    char want[16];
    snprintf(want, sizeof want, "cmd %d", 100 - LINEEDIT_HISTORY);
    CHECKF(strcmp(d.buf, want) == 0, "oldest kept \"%s\", want \"%s\"", d.buf, want);
}

// Random keys: the screen matches the line after every one of them.
static void test_random_keys(void)
{
    static struct lineedit_history h;
    const int pool[] = { 'a', 'b', 'c', ' ', 'x', KEY_BACKSPACE, KEY_DELETE, KEY_LEFT, KEY_RIGHT,
                         KEY_HOME, KEY_END, KEY_CTRL('U'), KEY_CTRL('K'), KEY_UP, KEY_DOWN,
                         KEY_CTRL('A'), KEY_CTRL('E'), KEY_TAB, 0x1b };
    uint64_t s = 88172645463325252ull;
    for (int round = 0; round < 2000 && !check_failed_now; round++) {
        struct ed d;
        start(&d, 40, &h);
        for (int i = 0; i < 60 && !check_failed_now; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            type(&d, &pool[s % (sizeof pool / sizeof pool[0])], 1);
        }
        if (type(&d, (int[]){ KEY_ENTER }, 1) == LINEEDIT_DONE) {
            CHECKF(memcmp(d.t.last_row, d.buf, strlen(d.buf)) == 0, "round %d: \"%s\" shown as \"%.*s\"",
                   round, d.buf, (int)strlen(d.buf), d.t.last_row);
            lineedit_history_add(&h, d.buf);
        }
    }
}

int main(void)
{
    RUN(test_insert_move_erase);
    RUN(test_capacity);
    RUN(test_ctrl_c);
    RUN(test_history);
    RUN(test_random_keys);
    return CHECK_DONE();
}
