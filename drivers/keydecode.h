// SPDX-License-Identifier: MIT
// Keys from the two places a person types into goro: a PC keyboard's
// scancodes (set 1, as the 8042 controller translates them; drivers/ps2kbd.c
// reads them) and a serial terminal's bytes (VT100/xterm escape sequences).
// Pure: the same file runs in the kernel and in tests/host/test_keydecode.c.
//
// A key is an int: a printable ASCII character, KEY_ENTER, KEY_BACKSPACE,
// KEY_TAB, a control character KEY_CTRL('A')..KEY_CTRL('Z') (Ctrl-C is
// KEY_CTRL('C') == 3), or one of the KEY_UP.. codes above 0xFF. KEY_NONE:
// the byte was part of a sequence, or a key goro has no use for.
#ifndef GORO_KEYDECODE_H
#define GORO_KEYDECODE_H

#include <stdbool.h>
#include <stdint.h>

#define KEY_CTRL(c) ((c) & 0x1f)
enum {
    KEY_NONE = 0,
    KEY_TAB = '\t',
    KEY_ENTER = '\n',
    KEY_BACKSPACE = 0x7f,
    KEY_UP = 0x100,
    KEY_DOWN,
    KEY_LEFT,
    KEY_RIGHT,
    KEY_HOME,
    KEY_END,
    KEY_DELETE,
};

// A serial terminal: "\r", "\n" and "\r\n" are one KEY_ENTER; 0x7f and
// 0x08 are KEY_BACKSPACE; ESC [ or ESC O sequences give the arrows, Home,
// End and Delete (parameters such as modifiers are accepted and ignored).
struct vt_decoder {
    uint8_t state;                  // private
    uint8_t param;
    bool after_cr;
};
int vt_decode(struct vt_decoder *d, uint8_t byte);

// A PC keyboard in scancode set 1 (the 8042 translates the keyboard's set
// 2 into it), US layout: Shift, Caps Lock and Ctrl are applied; key
// releases, Alt and function keys give KEY_NONE. The keypad's navigation
// keys count as the arrows, Home, End and Delete whatever Num Lock says.
struct ps2_decoder {
    bool e0;                        // private: the last byte was the 0xE0 prefix
    uint8_t skip;                   // bytes left of a Pause sequence
    bool lshift, rshift, lctrl, rctrl, caps;
};
int ps2_decode(struct ps2_decoder *d, uint8_t scancode);

#endif
