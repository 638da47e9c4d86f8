// SPDX-License-Identifier: MIT
#include "console.h"
#include "serial.h"

void console_init(void)
{
    serial_init();
}

void console_output(const char *s, size_t n)
{
    serial_write(s, n);
}
