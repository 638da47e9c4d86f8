// SPDX-License-Identifier: MIT
// The framebuffer text console. The text on screen is kept in a grid of
// characters, and the framebuffer is only ever written, never read: on
// real machines it is uncached (or write-combined) memory where reads cost
// microseconds. Scrolling moves the grid up one row and redraws only the
// cells whose character changed, which for log output is mostly the
// non-blank part of each line.
//
// The cursor, an underline in the cell where the next character goes,
// shows where typed keys land (the shell's line editing moves it with
// "\b"). It is taken off before a write changes anything and put back
// after, so scrolling never copies it. tests/fbshot.py draws it the same way.
//
// No lock: console_output's callers hold the console lock (or are
// panicking, when a torn line is the lesser evil).
#include "drivers/fb.h"
#include "lib/printf.h"
#include "lib/string.h"

#define FB_MAX_COLS 512         // 4096 pixels wide
#define FB_MAX_ROWS 192         // 3072 pixels high
#define FB_FG 0xd0              // light grey
#define FB_CURSOR_ROWS 2        // the underline: the glyph's bottom rows
#define FB_BG 0x00
#define IDENTITY_MAP_TOP (4ull << 30)   // what the boot page tables cover

static struct {
    uint8_t *base;
    uint32_t pitch, bytes_pp;
    uint32_t fg, bg;            // pixel values in the framebuffer's layout
    uint32_t cols, rows;
    uint32_t col, row;          // where the next character goes
    bool on;
    bool cursor_shown;
    uint32_t cursor_row, cursor_col;
} fb;

static char grid[FB_MAX_ROWS][FB_MAX_COLS];

static uint32_t pixel(const struct boot_framebuffer *f, uint8_t grey)
{
    return (uint32_t)grey << f->red_pos | (uint32_t)grey << f->green_pos |
           (uint32_t)grey << f->blue_pos;
}

static void put_pixel(uint8_t *p, uint32_t v)
{
    if (fb.bytes_pp == 4) {
        *(volatile uint32_t *)p = v;
    } else {
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
    }
}

static void draw_glyph(uint32_t row, uint32_t col, char ch, bool cursor)
{
    unsigned char c = (unsigned char)ch;
    const uint8_t *glyph = font8x16[c >= 0x20 && c < 0x7f ? c : '?'];
    uint8_t *line = fb.base + (uint64_t)row * FB_FONT_H * fb.pitch +
                    (uint64_t)col * FB_FONT_W * fb.bytes_pp;
    for (int y = 0; y < FB_FONT_H; y++, line += fb.pitch) {
        uint8_t bits = cursor && y >= FB_FONT_H - FB_CURSOR_ROWS ? 0xff : glyph[y];
        for (int x = 0; x < FB_FONT_W; x++)
            put_pixel(line + x * fb.bytes_pp, bits & (0x80 >> x) ? fb.fg : fb.bg);
    }
}

static void draw_cell(uint32_t row, uint32_t col, char ch)
{
    draw_glyph(row, col, ch, false);
}

static void cursor_hide(void)
{
    if (fb.cursor_shown)
        draw_cell(fb.cursor_row, fb.cursor_col, grid[fb.cursor_row][fb.cursor_col]);
    fb.cursor_shown = false;
}

// In the cell where the next character goes; none while a line waits to
// wrap (col == cols): that cell is on the next row, not drawn yet.
static void cursor_show(void)
{
    if (fb.col >= fb.cols)
        return;
    fb.cursor_row = fb.row;
    fb.cursor_col = fb.col;
    draw_glyph(fb.row, fb.col, grid[fb.row][fb.col], true);
    fb.cursor_shown = true;
}

static void set_cell(uint32_t row, uint32_t col, char ch)
{
    if (grid[row][col] != ch) {
        grid[row][col] = ch;
        draw_cell(row, col, ch);
    }
}

static void scroll(void)
{
    for (uint32_t r = 0; r + 1 < fb.rows; r++)
        for (uint32_t c = 0; c < fb.cols; c++)
            set_cell(r, c, grid[r + 1][c]);
    for (uint32_t c = 0; c < fb.cols; c++)
        set_cell(fb.rows - 1, c, ' ');
}

static void newline(void)
{
    fb.col = 0;
    if (fb.row + 1 < fb.rows)
        fb.row++;
    else
        scroll();
}

static void put_char(char ch)
{
    switch (ch) {
    case '\n':
        newline();
        return;
    case '\r':
        fb.col = 0;
        return;
    case '\t':
        do
            put_char(' ');
        while (fb.col % 8);
        return;
    case '\b':
        if (fb.col)
            fb.col--;
        return;
    }
    if (fb.col == fb.cols)
        newline();
    set_cell(fb.row, fb.col++, ch);
}

bool fb_init(const struct boot_framebuffer *f)
{
    uint64_t size = (uint64_t)f->pitch * f->height;
    if (!f->addr || (f->bpp != 32 && f->bpp != 24) || f->width < FB_FONT_W || f->height < FB_FONT_H)
        return false;
    if (f->addr + size > IDENTITY_MAP_TOP) {
        kprintf("fb: framebuffer at 0x%lx is above 4 GiB, not mapped: serial console only\n",
                f->addr);
        return false;
    }
    fb.base = (uint8_t *)f->addr;
    fb.pitch = f->pitch;
    fb.bytes_pp = f->bpp / 8;
    fb.fg = pixel(f, FB_FG);
    fb.bg = pixel(f, FB_BG);
    fb.cols = f->width / FB_FONT_W < FB_MAX_COLS ? f->width / FB_FONT_W : FB_MAX_COLS;
    fb.rows = f->height / FB_FONT_H < FB_MAX_ROWS ? f->height / FB_FONT_H : FB_MAX_ROWS;
    fb.col = fb.row = 0;
    for (uint32_t y = 0; y < f->height; y++)
        for (uint32_t x = 0; x < f->width; x++)
            put_pixel(fb.base + (uint64_t)y * fb.pitch + x * fb.bytes_pp, fb.bg);
    memset(grid, ' ', sizeof grid);
    fb.on = true;
    fb.cursor_shown = false;
    kprintf("fb: %ux%ux%u at 0x%lx, %ux%u text\n", f->width, f->height, f->bpp, f->addr,
            fb.cols, fb.rows);
    return true;
}

void fb_write(const char *s, size_t n)
{
    if (!fb.on)
        return;
    cursor_hide();
    for (size_t i = 0; i < n; i++)
        put_char(s[i]);
    cursor_show();
}
