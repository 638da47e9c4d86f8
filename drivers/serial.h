// SPDX-License-Identifier: MIT
#ifndef GORO_SERIAL_H
#define GORO_SERIAL_H
#include <stddef.h>

void serial_init(void);
// Writes n bytes to COM1, "\n" as "\r\n". Polls; callers serialize.
void serial_write(const char *s, size_t n);

// COM1's "received data available" interrupt on (IER bit 0), at a 1-byte
// FIFO trigger; the line is ISA IRQ 4. Route it before calling this.
void serial_enable_rx_irq(void);
// A received byte, or -1 when none waits. Never blocks. Reading the last
// one clears the receive interrupt.
int serial_getc(void);

#endif
