// SPDX-License-Identifier: MIT
// Console input: COM1's receive interrupt (ISA IRQ 4, through the IOAPIC
// to the boot core) moves bytes into a ring, and console_read_line sleeps
// in irq_wait while the ring is empty. Nothing polls.
#include "kernel/goro.h"
#include "arch/arch.h"
#include "drivers/ioapic.h"
#include "kernel/irqwait.h"
#include "lib/printf.h"
#include "drivers/serial.h"
#include "kernel/console.h"

#define COM1_IRQ 4
#define VEC_COM1 IRQ_VEC_ISA(COM1_IRQ)
#define RING_SIZE 1024u
_Static_assert((RING_SIZE & (RING_SIZE - 1)) == 0, "RING_SIZE is a power of two");

// ring_lock held: the handler appends at head, readers take at tail; the
// counters run freely and are reduced modulo RING_SIZE on use.
static struct spinlock ring_lock = SPINLOCK_INIT("console_in", LOCK_RANK_CONSOLE_IN);
static char ring[RING_SIZE];
static uint32_t head, tail;
static uint64_t dropped;            // bytes that found the ring full

static once_t setup_once = ONCE_INIT;
static bool usable;                 // written in setup_once, read after once_do

// reader held: one line is assembled at a time.
static mutex_t reader = MUTEX_INIT;
static bool last_cr;                // the previous line ended in '\r'

// Interrupt context. Reads every waiting byte, even into a full ring,
// because the interrupt is edge-triggered: the line must fall before the
// next byte can raise it again.
static void rx_intr(uint8_t vector)
{
    (void)vector;
    spin_lock(&ring_lock);
    for (int c; (c = serial_getc()) >= 0;) {
        if (head - tail < RING_SIZE)
            ring[head++ % RING_SIZE] = (char)c;
        else
            dropped++;
    }
    spin_unlock(&ring_lock);
}

static int ring_get(void)
{
    int c = -1;
    spin_lock(&ring_lock);
    if (head != tail)
        c = (unsigned char)ring[tail++ % RING_SIZE];
    spin_unlock(&ring_lock);
    return c;
}

// Attach before routing, route before enabling: the first interrupt finds
// its handler. Bytes already in the UART's FIFO raise the line as soon as
// the interrupt is enabled, so they are read too.
static void setup(void *arg)
{
    (void)arg;
    if (irq_attach(VEC_COM1, rx_intr) != 0 ||
        ioapic_route_isa(COM1_IRQ, VEC_COM1, arch_cpu(0)->apic_id) != 0) {
        kprintf("console: no receive interrupt for COM1: console input is off\n");
        return;
    }
    serial_enable_rx_irq();
    usable = true;
}

int console_read_line(char *buf, size_t cap)
{
    once_do(&setup_once, setup, 0);
    if (!usable || cap == 0)
        return -1;
    mutex_lock(&reader);
    console_flush();                // the prompt, if the caller printed one
    size_t n = 0;
    int ret;
    for (;;) {
        int c = ring_get();
        if (c < 0) {
            if (irq_wait(VEC_COM1) < 0) {
                ret = -1;
                break;
            }
            continue;
        }
        bool after_cr = last_cr;
        last_cr = c == '\r';
        if (c == '\n' && after_cr)
            continue;               // the rest of a "\r\n"
        if (c == '\r' || c == '\n') {
            console_write("\n", 1);
            ret = (int)n;
            break;
        }
        if (c == 0x7f || c == '\b') {
            if (n) {
                n--;
                console_write("\b \b", 3);
            }
            continue;
        }
        if (n + 1 < cap && n < INT32_MAX) {
            buf[n++] = (char)c;
            // The console is the terminal: echo at once, not through
            // kprintf's line buffer, which holds text until its newline.
            console_write(&buf[n - 1], 1);
        }
    }
    buf[n] = 0;
    mutex_unlock(&reader);
    return ret;
}
