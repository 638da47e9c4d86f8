// SPDX-License-Identifier: MIT
// Scancodes and terminal bytes to keys (drivers/keydecode.h). Pure.
#include "drivers/keydecode.h"

// ---- serial terminals ---------------------------------------------------------

// VT_CSI_MORE: after the first parameter ("ESC [ 1 ; 5 A" is Ctrl-Up: the 5 is ignored).
enum { VT_TEXT, VT_ESC, VT_CSI, VT_CSI_MORE, VT_SS3 };

// The final byte of ESC [ ... or ESC O ...; param is the first number of a
// CSI sequence ("ESC [ 3 ~" is Delete).
static int vt_final(uint8_t c, uint8_t param)
{
    switch (c) {
    case 'A': return KEY_UP;
    case 'B': return KEY_DOWN;
    case 'C': return KEY_RIGHT;
    case 'D': return KEY_LEFT;
    case 'H': return KEY_HOME;
    case 'F': return KEY_END;
    case '~':
        if (param == 1 || param == 7)
            return KEY_HOME;
        if (param == 4 || param == 8)
            return KEY_END;
        if (param == 3)
            return KEY_DELETE;
        return KEY_NONE;
    default:
        return KEY_NONE;
    }
}

int vt_decode(struct vt_decoder *d, uint8_t c)
{
    bool after_cr = d->after_cr;
    d->after_cr = false;
    switch (d->state) {
    case VT_ESC:
        d->param = 0;
        if (c == '[' || c == 'O') {
            d->state = c == '[' ? VT_CSI : VT_SS3;
            return KEY_NONE;
        }
        d->state = VT_TEXT;         // a lone Esc: dropped, and c is a key of its own
        break;
    case VT_CSI:
    case VT_CSI_MORE:
        if (c >= '0' && c <= '9') {
            if (d->state == VT_CSI && d->param < 100)
                d->param = (uint8_t)(d->param * 10 + (c - '0'));
            return KEY_NONE;
        }
        if (c >= 0x20 && c < 0x40) {    // ';' and the other parameter and intermediate bytes
            d->state = VT_CSI_MORE;
            return KEY_NONE;
        }
        d->state = VT_TEXT;
        return c >= 0x40 && c <= 0x7e ? vt_final(c, d->param) : KEY_NONE;
    case VT_SS3:
        d->state = VT_TEXT;
        return vt_final(c, 0);
    default:
        break;
    }
    if (c == 0x1b) {
        d->state = VT_ESC;
        return KEY_NONE;
    }
    if (c == '\r') {
        d->after_cr = true;
        return KEY_ENTER;
    }
    if (c == '\n')
        return after_cr ? KEY_NONE : KEY_ENTER;
    if (c == 0x7f || c == '\b')
        return KEY_BACKSPACE;
    if (c < 0x7f)
        return c;                   // text, Tab and control characters
    return KEY_NONE;                // no encodings beyond ASCII
}

// ---- PC keyboards, scancode set 1 -------------------------------------------------

// US layout, indexed by make code; 0: not a character key.
static const char plain[0x3A] = {
    [0x02] = '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '-', '=',
    [0x0F] = '\t', 'q', 'w', 'e', 'r', 't', 'y', 'u', 'i', 'o', 'p', '[', ']',
    [0x1E] = 'a', 's', 'd', 'f', 'g', 'h', 'j', 'k', 'l', ';', '\'', '`',
    [0x2B] = '\\', 'z', 'x', 'c', 'v', 'b', 'n', 'm', ',', '.', '/',
    [0x37] = '*', [0x39] = ' ',
};
static const char shifted[0x3A] = {
    [0x02] = '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', '_', '+',
    [0x0F] = '\t', 'Q', 'W', 'E', 'R', 'T', 'Y', 'U', 'I', 'O', 'P', '{', '}',
    [0x1E] = 'A', 'S', 'D', 'F', 'G', 'H', 'J', 'K', 'L', ':', '"', '~',
    [0x2B] = '|', 'Z', 'X', 'C', 'V', 'B', 'N', 'M', '<', '>', '?',
    [0x37] = '*', [0x39] = ' ',
};

enum {
    SC_ESC = 0x01, SC_BACKSPACE = 0x0E, SC_ENTER = 0x1C, SC_CTRL = 0x1D, SC_LSHIFT = 0x2A,
    SC_RSHIFT = 0x36, SC_CAPS = 0x3A, SC_HOME = 0x47, SC_UP = 0x48, SC_LEFT = 0x4B,
    SC_RIGHT = 0x4D, SC_END = 0x4F, SC_DOWN = 0x50, SC_DELETE = 0x53, SC_SLASH = 0x35,
};

// The navigation keys: the grey ones (after 0xE0) and the keypad's.
static int navigation(uint8_t code)
{
    switch (code) {
    case SC_UP: return KEY_UP;
    case SC_DOWN: return KEY_DOWN;
    case SC_LEFT: return KEY_LEFT;
    case SC_RIGHT: return KEY_RIGHT;
    case SC_HOME: return KEY_HOME;
    case SC_END: return KEY_END;
    case SC_DELETE: return KEY_DELETE;
    default: return KEY_NONE;
    }
}

int ps2_decode(struct ps2_decoder *d, uint8_t sc)
{
    if (d->skip) {                  // the rest of Pause: E1 1D 45 E1 9D C5
        d->skip--;
        return KEY_NONE;
    }
    if (sc == 0xE1) {
        d->skip = 5;
        return KEY_NONE;
    }
    if (sc == 0xE0) {
        d->e0 = true;
        return KEY_NONE;
    }
    bool release = sc & 0x80, e0 = d->e0;
    uint8_t code = sc & 0x7f;
    d->e0 = false;
    if (code == SC_CTRL) {
        *(e0 ? &d->rctrl : &d->lctrl) = !release;
        return KEY_NONE;
    }
    if (code == SC_LSHIFT || code == SC_RSHIFT) {
        if (!e0)                    // E0 2A / E0 36: shifts the keyboard fakes around grey keys
            *(code == SC_LSHIFT ? &d->lshift : &d->rshift) = !release;
        return KEY_NONE;
    }
    if (release)
        return KEY_NONE;
    if (e0) {
        if (code == SC_ENTER)
            return KEY_ENTER;
        if (code == SC_SLASH)
            return '/';
        return navigation(code);
    }
    if (code == SC_CAPS) {
        d->caps = !d->caps;
        return KEY_NONE;
    }
    if (code == SC_BACKSPACE)
        return KEY_BACKSPACE;
    if (code == SC_ENTER)
        return KEY_ENTER;
    if (code >= sizeof plain)
        return navigation(code);
    char c = plain[code];
    if (!c)
        return KEY_NONE;            // Esc, Alt
    bool shift = d->lshift || d->rshift;
    bool letter = c >= 'a' && c <= 'z';
    if (d->lctrl || d->rctrl)
        return letter ? KEY_CTRL(c) : KEY_NONE;
    if (letter && d->caps)
        shift = !shift;
    return shift ? shifted[code] : c;
}
