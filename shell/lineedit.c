// SPDX-License-Identifier: MIT
// The console's line editor (shell/lineedit.h). Pure: no kernel calls.
//
// Invariant after every key: the terminal shows buf[0..len) from the
// column where editing began, the cursor sits pos columns from there, and
// nothing the editor drew lies beyond column len (what a shorter line left
// behind is overwritten with spaces).
#include "shell/lineedit.h"
#include "drivers/keydecode.h"

static void flush(struct lineedit *e)
{
    if (e->on)
        e->out(e->ctx, e->o, e->on);
    e->on = 0;
}

static void put(struct lineedit *e, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (e->on == sizeof e->o)
            flush(e);
        e->o[e->on++] = s[i];
    }
}

static void put_rep(struct lineedit *e, char c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(e, &c, 1);
}

void lineedit_init(struct lineedit *e, char *buf, size_t cap, struct lineedit_history *hist,
                   lineedit_out_fn out, void *ctx)
{
    e->buf = buf;
    e->cap = cap;
    e->len = e->pos = 0;
    e->hist = hist;
    e->browse = 0;
    e->saved[0] = 0;
    e->out = out;
    e->ctx = ctx;
    e->on = 0;
    buf[0] = 0;
}

// Draws buf[from..len) followed by `clear` spaces, then brings the cursor
// back to column pos (from <= pos).
static void redraw_from(struct lineedit *e, size_t from, size_t clear)
{
    put(e, e->buf + from, e->len - from);
    put_rep(e, ' ', clear);
    put_rep(e, '\b', e->len + clear - e->pos);
}

static void insert(struct lineedit *e, char c)
{
    if (e->len + 1 >= e->cap)
        return;
    for (size_t i = e->len; i > e->pos; i--)
        e->buf[i] = e->buf[i - 1];
    e->buf[e->pos] = c;
    e->len++;
    size_t at = e->pos++;
    redraw_from(e, at, 0);
}

// Erases n characters starting at column at (at + n <= len); the cursor
// ends at column at.
static void erase(struct lineedit *e, size_t at, size_t n)
{
    if (!n)
        return;
    put_rep(e, '\b', e->pos - at);
    for (size_t i = at; i + n < e->len; i++)
        e->buf[i] = e->buf[i + n];
    e->len -= n;
    e->pos = at;
    redraw_from(e, at, n);
}

// Shows text instead of the line, the cursor at its end.
static void replace(struct lineedit *e, const char *text)
{
    size_t old = e->len, n = 0;
    put_rep(e, '\b', e->pos);
    while (text[n] && n + 1 < e->cap) {
        e->buf[n] = text[n];
        n++;
    }
    e->len = e->pos = n;
    put(e, e->buf, n);
    size_t clear = old > n ? old - n : 0;
    put_rep(e, ' ', clear);
    put_rep(e, '\b', clear);
}

static uint32_t history_len(const struct lineedit_history *h)
{
    return !h ? 0 : h->count < LINEEDIT_HISTORY ? h->count : LINEEDIT_HISTORY;
}

// The k-th newest line, k = 1..history_len.
static const char *history_at(const struct lineedit_history *h, uint32_t k)
{
    return h->line[(h->count - k) % LINEEDIT_HISTORY];
}

static void copy_line(char *dst, const char *src, size_t len)
{
    size_t n = len < LINEEDIT_MAX - 1 ? len : LINEEDIT_MAX - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
    dst[n] = 0;
}

static void browse(struct lineedit *e, int dir)
{
    uint32_t k = e->browse;
    if (dir > 0 && k < history_len(e->hist))
        k++;
    else if (dir < 0 && k > 0)
        k--;
    else
        return;
    if (e->browse == 0)
        copy_line(e->saved, e->buf, e->len);
    e->browse = k;
    replace(e, k ? history_at(e->hist, k) : e->saved);
}

enum lineedit_result lineedit_key(struct lineedit *e, int key)
{
    enum lineedit_result r = LINEEDIT_MORE;
    switch (key) {
    case KEY_ENTER:
        put(e, e->buf + e->pos, e->len - e->pos);
        put(e, "\n", 1);
        e->pos = e->len;
        r = LINEEDIT_DONE;
        break;
    case KEY_CTRL('C'):
        put(e, e->buf + e->pos, e->len - e->pos);
        put(e, "^C\n", 3);
        e->len = e->pos = 0;
        r = LINEEDIT_CANCEL;
        break;
    case KEY_BACKSPACE:
        if (e->pos)
            erase(e, e->pos - 1, 1);
        break;
    case KEY_DELETE:
        if (e->pos < e->len)
            erase(e, e->pos, 1);
        break;
    case KEY_CTRL('U'):
        erase(e, 0, e->pos);
        break;
    case KEY_CTRL('K'):
        erase(e, e->pos, e->len - e->pos);
        break;
    case KEY_LEFT:
        if (e->pos) {
            put(e, "\b", 1);
            e->pos--;
        }
        break;
    case KEY_RIGHT:
        if (e->pos < e->len) {
            put(e, e->buf + e->pos, 1);
            e->pos++;
        }
        break;
    case KEY_HOME:
    case KEY_CTRL('A'):
        put_rep(e, '\b', e->pos);
        e->pos = 0;
        break;
    case KEY_END:
    case KEY_CTRL('E'):
        put(e, e->buf + e->pos, e->len - e->pos);
        e->pos = e->len;
        break;
    case KEY_UP:
        browse(e, 1);
        break;
    case KEY_DOWN:
        browse(e, -1);
        break;
    default:
        if (key >= 0x20 && key < 0x7f)
            insert(e, (char)key);
        break;
    }
    e->buf[e->len] = 0;
    flush(e);
    return r;
}

void lineedit_history_add(struct lineedit_history *h, const char *line)
{
    if (!line[0])
        return;
    if (h->count) {
        const char *newest = history_at(h, 1);
        size_t i = 0;
        while (line[i] && line[i] == newest[i])
            i++;
        if (line[i] == newest[i])
            return;
    }
    size_t n = 0;
    while (line[n])
        n++;
    copy_line(h->line[h->count % LINEEDIT_HISTORY], line, n);
    h->count++;
}
