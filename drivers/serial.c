// SPDX-License-Identifier: MIT
// 16550 UART on COM1, 115200 8N1, polled transmit; receive by interrupt
// (shell/console_in.c) or by polling serial_getc.
#include "drivers/serial.h"
#include "arch/x86.h"

#define COM1 0x3F8
enum { DATA = 0, IER = 1, FCR = 2, LCR = 3, MCR = 4, LSR = 5 };
#define LSR_DR   0x01     // a received byte waits in RBR
#define LSR_THRE 0x20
#define IER_ERBFI 0x01    // interrupt when received data is available

void serial_init(void)
{
    outb(COM1 + IER, 0x00);
    outb(COM1 + LCR, 0x80);     // DLAB: divisor follows
    outb(COM1 + DATA, 0x01);    // 115200 baud
    outb(COM1 + IER, 0x00);
    outb(COM1 + LCR, 0x03);     // 8N1
    outb(COM1 + FCR, 0xC7);     // FIFO on, cleared, 14-byte threshold
    outb(COM1 + MCR, 0x0B);     // DTR, RTS, OUT2
}

static void put(char c)
{
    while (!(inb(COM1 + LSR) & LSR_THRE))
        ;
    outb(COM1 + DATA, (uint8_t)c);
}

void serial_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            put('\r');
        put(s[i]);
    }
}

void serial_enable_rx_irq(void)
{
    // Trigger at 1 byte, FIFO kept on and not cleared: bytes that came
    // before stay readable, and each new one interrupts at once instead of
    // after the FIFO's character timeout.
    outb(COM1 + FCR, 0x01);
    outb(COM1 + IER, IER_ERBFI);
}

int serial_getc(void)
{
    if (!(inb(COM1 + LSR) & LSR_DR))
        return -1;
    return inb(COM1 + DATA);
}
