// SPDX-License-Identifier: MIT
#include "console.h"
#include "bootinfo.h"
#include "fb.h"
#include "serial.h"

// Serial first, so the framebuffer's own messages have somewhere to go.
void console_init(void)
{
    serial_init();
    fb_init(&boot_info.fb);
}

void console_output(const char *s, size_t n)
{
    serial_write(s, n);
    fb_write(s, n);
}
