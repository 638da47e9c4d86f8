// SPDX-License-Identifier: MIT
// The PS/2 keyboard behind the 8042 controller (ports 0x60/0x64), which
// QEMU emulates and most PCs' firmware provides for a USB keyboard too
// ("USB legacy support"). It interrupts on ISA IRQ 1; the bytes are
// scancodes in set 1 (drivers/keydecode.h decodes them).
#ifndef GORO_PS2KBD_H
#define GORO_PS2KBD_H

#include <stdbool.h>

#define PS2KBD_IRQ 1

// Sets the controller up: keyboard port on, its interrupt on, the mouse
// port off, set 1 translation on, scanning enabled. Call before routing
// IRQ 1. False when no controller answers (it says why on the console).
bool ps2kbd_init(void);
// A scancode byte from the keyboard, or -1 when none waits. Never blocks;
// bytes from the mouse port are read and dropped. Reading the last byte
// lowers the interrupt line.
int ps2kbd_getc(void);

#endif
