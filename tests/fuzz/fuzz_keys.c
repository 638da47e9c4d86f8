// SPDX-License-Identifier: MIT
// Fuzzes what a person types into the console: drivers/keydecode.c (a
// serial terminal's bytes, VT100 escape sequences; a PC keyboard's set-1
// scancodes) and shell/lineedit.c, which the decoded keys drive.
//
// The input's bytes go both through vt_decode and through ps2_decode; the
// keys of each drive a line editor with a history, and after every key the
// harness replays the editor's output on a model terminal (printable bytes
// write and advance, "\b" moves left, "\n" starts a row) and checks
// lineedit.h's invariant: the row shows buf[0..len) then only blanks, the
// cursor is pos columns in, and buf holds no control byte.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "drivers/keydecode.h"
#include "shell/lineedit.h"
#include "tests/fuzz/fuzz.h"

#define COLS 1024                   // wider than any line (LINEEDIT_MAX)

struct term {
    char row[COLS];                 // the row being edited; ' ' where nothing was drawn
    size_t col;
    size_t drawn;                   // columns ever written since the row began
};

static void term_out(void *ctx, const char *s, size_t n)
{
    struct term *t = ctx;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') {
            memset(t->row, ' ', t->drawn);
            t->col = t->drawn = 0;
        } else if (c == '\b') {
            FUZZ_CHECK(t->col > 0);                 // the editor never backs past its start
            t->col--;
        } else {
            FUZZ_CHECK(c >= 0x20 && c < 0x7f);      // only what any terminal shows (lineedit.h)
            FUZZ_CHECK(t->col < COLS);
            t->row[t->col++] = (char)c;
            if (t->col > t->drawn)
                t->drawn = t->col;
        }
    }
}

static bool valid_key(int k)
{
    return k == KEY_NONE || k == KEY_TAB || k == KEY_ENTER || k == KEY_BACKSPACE ||
           (k >= 1 && k <= 0x1f) || (k >= 0x20 && k < 0x7f) || (k >= KEY_UP && k <= KEY_DELETE);
}

struct editor {
    struct lineedit e;
    struct lineedit_history hist;
    char buf[80];                   // shorter than a history line: recalled lines are cut to fit
    struct term t;
};

static void editor_start(struct editor *ed)
{
    memset(ed->t.row, ' ', ed->t.drawn);
    ed->t.col = ed->t.drawn = 0;
    lineedit_init(&ed->e, ed->buf, sizeof ed->buf, &ed->hist, term_out, &ed->t);
}

static void check_line(const struct editor *ed)
{
    const struct lineedit *e = &ed->e;
    FUZZ_CHECK(e->len < e->cap && e->pos <= e->len);
    for (size_t i = 0; i < e->len; i++)
        FUZZ_CHECK((unsigned char)e->buf[i] >= 0x20 && (unsigned char)e->buf[i] < 0x7f);
    FUZZ_CHECK(memcmp(ed->t.row, e->buf, e->len) == 0);
    for (size_t i = e->len; i < ed->t.drawn; i++)
        FUZZ_CHECK(ed->t.row[i] == ' ');
    FUZZ_CHECK(ed->t.col == e->pos);
}

static void feed(struct editor *ed, int key)
{
    FUZZ_CHECK(valid_key(key));
    if (key == KEY_NONE)
        return;
    enum lineedit_result r = lineedit_key(&ed->e, key);
    if (r == LINEEDIT_MORE) {
        check_line(ed);
        return;
    }
    FUZZ_CHECK(r == LINEEDIT_DONE || r == LINEEDIT_CANCEL);
    size_t n = strnlen(ed->buf, sizeof ed->buf);
    FUZZ_CHECK(n < sizeof ed->buf);
    if (r == LINEEDIT_CANCEL)
        FUZZ_CHECK(n == 0);
    lineedit_history_add(&ed->hist, ed->buf);
    uint32_t kept = ed->hist.count < LINEEDIT_HISTORY ? ed->hist.count : LINEEDIT_HISTORY;
    for (uint32_t i = 0; i < kept; i++)
        FUZZ_CHECK(strnlen(ed->hist.line[i], LINEEDIT_MAX) < LINEEDIT_MAX);
    editor_start(ed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct editor serial, kbd;
    memset(&serial.hist, 0, sizeof serial.hist);
    memset(&kbd.hist, 0, sizeof kbd.hist);
    editor_start(&serial);
    editor_start(&kbd);
    struct vt_decoder vt = { 0 };
    struct ps2_decoder ps2 = { 0 };
    for (size_t i = 0; i < size; i++) {
        feed(&serial, vt_decode(&vt, data[i]));
        feed(&kbd, ps2_decode(&ps2, data[i]));
    }
    return 0;
}
