// SPDX-License-Identifier: MIT
// A text console on a linear framebuffer (GOP or the multiboot2 framebuffer
// tag): 8x16 cells, light grey on black, newline and scroll, nothing more.
#ifndef GORO_FB_H
#define GORO_FB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"

#define FB_FONT_W 8
#define FB_FONT_H 16

extern const uint8_t font8x16[128][16];

// Takes the framebuffer when it can draw on it (32 or 24 bpp, inside the
// boot identity map, i.e. below 4 GiB) and clears it; false otherwise.
bool fb_init(const struct boot_framebuffer *f);
// Unserialized, like console_output, its only caller.
void fb_write(const char *s, size_t n);

#endif
