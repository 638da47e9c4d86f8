// SPDX-License-Identifier: MIT
#include "qemu_exit.h"
#include "x86.h"

void qemu_debug_exit(uint8_t v)
{
    outl(0xF4, v);
}
