// SPDX-License-Identifier: MIT
#include "arch/pit.h"
#include "arch/x86.h"

void pit_oneshot_start(uint16_t ticks)
{
    // Gate channel 2 on, speaker off; mode 0 (interrupt on terminal count),
    // whose OUT pin (port 0x61 bit 5) rises when the count reaches zero.
    outb(0x61, (inb(0x61) & ~0x02) | 0x01);
    outb(0x43, 0xB0);
    outb(0x42, ticks & 0xFF);
    outb(0x42, ticks >> 8);
}

int pit_oneshot_done(void)
{
    return inb(0x61) & 0x20;
}

void pit_ch0_oneshot(uint16_t ticks)
{
    // Channel 0, lobyte/hibyte, mode 0: OUT (ISA IRQ 0) falls at once and
    // rises when the count reaches zero, one edge; it then stays high.
    outb(0x43, 0x30);
    outb(0x40, ticks & 0xFF);
    outb(0x40, ticks >> 8);
}

uint16_t pit_ch2_read(void)
{
    outb(0x43, 0x80);           // latch channel 2
    uint8_t lo = inb(0x42);
    return (uint16_t)(lo | (inb(0x42) << 8));
}
