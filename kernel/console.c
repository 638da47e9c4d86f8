// SPDX-License-Identifier: MIT
// The console: where kernel text goes (the serial port, and a framebuffer
// when one exists), and kprintf's line discipline.
//
// Lines never interleave: each core collects text in its own line buffer
// (interrupts off while it does) and hands complete lines to console_write,
// which writes them under one lock.
#include "kernel/console.h"
#include "arch/arch.h"
#include "boot/bootinfo.h"
#include "drivers/fb.h"
#include "drivers/serial.h"
#include "lib/printf.h"

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

// Per-core line buffers. Touched only by their core, with interrupts off.
#define LINE_MAX 256
static struct {
    char buf[LINE_MAX];
    size_t len;
} line[MAX_CPUS];

static void line_sink(void *c, const char *s, size_t n)
{
    (void)c;
    struct cpu *cpu = this_cpu();
    uint32_t i = cpu ? cpu->index : 0;
    for (size_t k = 0; k < n; k++) {
        line[i].buf[line[i].len++] = s[k];
        if (s[k] == '\n' || line[i].len == LINE_MAX) {
            console_write(line[i].buf, line[i].len);
            line[i].len = 0;
        }
    }
}

int kvprintf(fmt_float_fn ffn, const char *fmt, va_list *ap)
{
    uint64_t f = irq_save();
    int n = fmt_format(line_sink, 0, ffn, fmt, ap);
    irq_restore(f);
    return n;
}

int kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvprintf(0, fmt, &ap);
    va_end(ap);
    return n;
}

static struct spinlock console_lock = SPINLOCK_INIT("console", LOCK_RANK_CONSOLE);
static bool panicking;

void console_panic_mode(void)
{
    __atomic_store_n(&panicking, true, __ATOMIC_RELAXED);  // relaxed: the other cores are stopped (NMI) before it matters
}

void console_write(const char *s, size_t n)
{
    if (__atomic_load_n(&panicking, __ATOMIC_RELAXED)) {   // relaxed: a mode flag, no data behind it
        console_output(s, n);
        return;
    }
    spin_lock(&console_lock);
    console_output(s, n);
    spin_unlock(&console_lock);
}
