// SPDX-License-Identifier: MIT
// Host tests of drivers/keydecode.c: a serial terminal's bytes and a PC
// keyboard's set 1 scancodes to keys.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "drivers/keydecode.h"

// Keys that bytes decode to, KEY_NONE dropped; returns how many.
static int vt_keys(const char *bytes, size_t n, int *out)
{
    struct vt_decoder d = { 0 };
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        int key = vt_decode(&d, (uint8_t)bytes[i]);
        if (key != KEY_NONE)
            out[k++] = key;
    }
    return k;
}
#define VT(s, out) vt_keys(s, sizeof(s) - 1, out)

static void test_vt_text_and_enter(void)
{
    int k[16];
    CHECK(VT("ab\r\ncd\ref\ngh", k) == 11);
    int want[] = { 'a', 'b', KEY_ENTER, 'c', 'd', KEY_ENTER, 'e', 'f', KEY_ENTER };
    CHECK(memcmp(k, want, sizeof want) == 0);
    CHECK(VT("\n\n", k) == 2);               // two bare newlines are two lines
    CHECK(VT("\r\r\n", k) == 2);             // \r \r\n
}

static void test_vt_editing_keys(void)
{
    int k[16];
    CHECK(VT("\x7f\b\x03\x15\t", k) == 5);
    CHECK(k[0] == KEY_BACKSPACE && k[1] == KEY_BACKSPACE && k[2] == KEY_CTRL('C') &&
          k[3] == KEY_CTRL('U') && k[4] == KEY_TAB);
    CHECK(VT("\x1b[A\x1b[B\x1b[C\x1b[D", k) == 4);
    CHECK(k[0] == KEY_UP && k[1] == KEY_DOWN && k[2] == KEY_RIGHT && k[3] == KEY_LEFT);
    CHECK(VT("\x1bOA\x1bOH\x1bOF", k) == 3);  // application cursor mode
    CHECK(k[0] == KEY_UP && k[1] == KEY_HOME && k[2] == KEY_END);
    CHECK(VT("\x1b[3~\x1b[1~\x1b[4~\x1b[7~\x1b[8~\x1b[H\x1b[F", k) == 7);
    CHECK(k[0] == KEY_DELETE && k[1] == KEY_HOME && k[2] == KEY_END && k[3] == KEY_HOME &&
          k[4] == KEY_END && k[5] == KEY_HOME && k[6] == KEY_END);
}

static void test_vt_modifiers_and_unknown(void)
{
    int k[16];
    CHECK(VT("\x1b[1;5C", k) == 1 && k[0] == KEY_RIGHT);     // Ctrl-Right: the modifier is ignored
    CHECK(VT("\x1b[3;2~x", k) == 2 && k[0] == KEY_DELETE && k[1] == 'x');
    CHECK(VT("\x1b[15~x", k) == 1 && k[0] == 'x');           // F5: nothing
    CHECK(VT("\x1bx", k) == 1 && k[0] == 'x');               // a lone Esc is dropped, x kept
    CHECK(VT("\x1b\x1b[A", k) == 1 && k[0] == KEY_UP);
    CHECK(VT("\xc3\xa9z", k) == 1 && k[0] == 'z');           // beyond ASCII: dropped
}

static int ps2_keys(const uint8_t *sc, size_t n, int *out)
{
    struct ps2_decoder d = { 0 };
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        int key = ps2_decode(&d, sc[i]);
        if (key != KEY_NONE)
            out[k++] = key;
    }
    return k;
}
#define PS2(out, ...) ps2_keys((const uint8_t[]){ __VA_ARGS__ }, \
                               sizeof((const uint8_t[]){ __VA_ARGS__ }), out)

static void test_ps2_letters_and_releases(void)
{
    int k[16];
    // h e l l o Enter, each pressed and released
    CHECK(PS2(k, 0x23, 0xA3, 0x12, 0x92, 0x26, 0xA6, 0x26, 0xA6, 0x18, 0x98, 0x1C, 0x9C) == 6);
    CHECK(k[0] == 'h' && k[1] == 'e' && k[2] == 'l' && k[3] == 'l' && k[4] == 'o' &&
          k[5] == KEY_ENTER);
    CHECK(PS2(k, 0x02, 0x82, 0x0B, 0x8B, 0x39, 0xB9, 0x0C, 0x35, 0x0E) == 6);
    CHECK(k[0] == '1' && k[1] == '0' && k[2] == ' ' && k[3] == '-' && k[4] == '/' &&
          k[5] == KEY_BACKSPACE);
}

static void test_ps2_shift_caps_ctrl(void)
{
    int k[16];
    // Shift held: A and !, released: a
    CHECK(PS2(k, 0x2A, 0x1E, 0x9E, 0x02, 0xAA, 0x1E) == 3);
    CHECK(k[0] == 'A' && k[1] == '!' && k[2] == 'a');
    // Caps Lock on: A, but 1 stays; with Shift: a
    CHECK(PS2(k, 0x3A, 0xBA, 0x1E, 0x02, 0x36, 0x1E, 0xB6) == 3);
    CHECK(k[0] == 'A' && k[1] == '1' && k[2] == 'a');
    // Ctrl-C, Ctrl-U with the right Ctrl (E0 1D); Ctrl with a digit: nothing
    CHECK(PS2(k, 0x1D, 0x2E, 0xAE, 0x9D, 0xE0, 0x1D, 0x16, 0x02, 0xE0, 0x9D, 0x2E) == 3);
    CHECK(k[0] == KEY_CTRL('C') && k[1] == KEY_CTRL('U') && k[2] == 'c');
}

static void test_ps2_extended_keys(void)
{
    int k[16];
    CHECK(PS2(k, 0xE0, 0x48, 0xE0, 0xC8, 0xE0, 0x50, 0xE0, 0x4B, 0xE0, 0x4D, 0xE0, 0x47,
              0xE0, 0x4F, 0xE0, 0x53, 0xE0, 0x1C, 0xE0, 0x35) == 9);
    int want[] = { KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT, KEY_HOME, KEY_END, KEY_DELETE,
                   KEY_ENTER, '/' };
    CHECK(memcmp(k, want, sizeof want) == 0);
    // The keypad's arrows count too; the shifts a keyboard fakes around
    // grey keys (E0 2A ... E0 AA) change nothing.
    CHECK(PS2(k, 0x48, 0xE0, 0x2A, 0xE0, 0x48, 0xE0, 0xAA, 0x1E) == 3);
    CHECK(k[0] == KEY_UP && k[1] == KEY_UP && k[2] == 'a');
    // Pause (E1 1D 45 E1 9D C5) is six bytes of nothing; Esc, Alt and F1 too
    CHECK(PS2(k, 0xE1, 0x1D, 0x45, 0xE1, 0x9D, 0xC5, 0x01, 0x38, 0x3B, 0xB8, 0x1E) == 1);
    CHECK(k[0] == 'a');
}

int main(void)
{
    RUN(test_vt_text_and_enter);
    RUN(test_vt_editing_keys);
    RUN(test_vt_modifiers_and_unknown);
    RUN(test_ps2_letters_and_releases);
    RUN(test_ps2_shift_caps_ctrl);
    RUN(test_ps2_extended_keys);
    return CHECK_DONE();
}
