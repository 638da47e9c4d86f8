// SPDX-License-Identifier: MIT
// The console: where kernel text goes (the serial port, and a framebuffer
// when one exists), and kprintf's line discipline.
//
// Lines never interleave: each core collects text in its own line buffer
// (interrupts off while it does) and hands complete lines to console_write,
// which writes them under one lock.
//
// A goroutine's unfinished line travels with the goroutine. A G that prints
// "abc" without a newline and then parks can resume on another core; had
// "abc" stayed in the first core's buffer it would come out later, glued
// to whatever that core printed next, and the G's "\n" would end an empty
// line elsewhere (a lost echo once: "hello" typed one key at a time
// showed as "lo"). So at the end of every kprintf from a goroutine,
// an unfinished line moves from the core's buffer to a stash slot keyed by
// the goroutine's id, and the G's next kprintf, on whatever core, takes it
// back first. Text from interrupt handlers and code with interrupts off
// cannot move and stays in the core's buffer, as before.
//
// console_flush writes the caller's unfinished line at once: a prompt must
// be seen before the line typed after it (console_in.c calls it before it
// reads, like stdio flushing stdout before reading stdin).
#include "kernel/console.h"
#include "arch/arch.h"
#include "boot/bootinfo.h"
#include "drivers/fb.h"
#include "drivers/serial.h"
#include "kernel/sched.h"
#include "lib/printf.h"
#include "lib/string.h"

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

#define LINE_MAX 256

// Per-core line buffers. Touched only by their core, with interrupts off.
struct line {
    char buf[LINE_MAX];
    size_t len;
};
static struct line line[MAX_CPUS];

// Goroutines' unfinished lines (stash_lock held). A slot is free when its
// goid is 0. When every slot is taken, the oldest line is written out as
// it is: a goroutine that exits in mid-line must not hold a slot forever.
#define STASH_SLOTS 16
static struct spinlock stash_lock = SPINLOCK_INIT("console stash", LOCK_RANK_CONSOLE_STASH);
static struct {
    uint64_t goid;
    uint64_t stamp;                 // when it was stashed (stash_clock), for eviction
    struct line l;
} stash[STASH_SLOTS];
static uint64_t stash_clock;
static uint32_t nstashed;           // slots in use; read without the lock as a hint

static bool panicking;

// The goroutine running here, or 0 on g0, in an interrupt, before the
// scheduler exists, or with interrupts off at the call (irqs_were_on):
// such text cannot move to another core. 0 too once the machine is
// stopping: a core stopped by NMI may hold the stash's lock. Interrupts off.
static uint64_t writer_goid(bool irqs_were_on)
{
    if (!irqs_were_on || __atomic_load_n(&panicking, __ATOMIC_RELAXED))  // relaxed: a mode flag
        return 0;
    struct m *mp = this_cpu() ? getm() : 0;
    return mp && mp->curg ? mp->curg->id : 0;
}

static struct line *this_line(void)
{
    struct cpu *cpu = this_cpu();
    return &line[cpu ? cpu->index : 0];
}

// Interrupts off. Appends goid's stashed text, if any, to l and frees its slot.
static void stash_take(uint64_t goid, struct line *l)
{
    // The common case: nothing stashed. A hint read without the lock: a
    // G's own stash_put is ordered before this load by the context switch
    // that moved the G (or by program order on the same core).
    if (!__atomic_load_n(&nstashed, __ATOMIC_RELAXED))     // relaxed: a hint (above)
        return;
    spin_lock(&stash_lock);
    for (int i = 0; i < STASH_SLOTS; i++) {
        if (stash[i].goid != goid)
            continue;
        size_t n = stash[i].l.len;
        if (n > LINE_MAX - l->len)
            n = LINE_MAX - l->len;
        memcpy(l->buf + l->len, stash[i].l.buf, n);
        l->len += n;
        stash[i].goid = 0;
        __atomic_store_n(&nstashed, nstashed - 1, __ATOMIC_RELAXED);   // relaxed: the hint; the lock orders the rest
        break;
    }
    spin_unlock(&stash_lock);
}

// Interrupts off. Moves l's unfinished text to a slot for goid and empties l.
static void stash_put(uint64_t goid, struct line *l)
{
    struct line evicted = { .len = 0 };
    spin_lock(&stash_lock);
    int slot = -1;
    for (int i = 0; i < STASH_SLOTS; i++) {
        if (!stash[i].goid) {
            slot = i;
            break;
        }
        if (slot < 0 || stash[i].stamp < stash[slot].stamp)
            slot = i;
    }
    if (stash[slot].goid)
        evicted = stash[slot].l;
    else
        __atomic_store_n(&nstashed, nstashed + 1, __ATOMIC_RELAXED);   // relaxed: the hint; the lock orders the rest
    stash[slot].goid = goid;
    stash[slot].stamp = ++stash_clock;
    stash[slot].l = *l;
    spin_unlock(&stash_lock);
    l->len = 0;
    if (evicted.len)
        console_write(evicted.buf, evicted.len);
}

static void line_sink(void *c, const char *s, size_t n)
{
    struct line *l = c;
    for (size_t k = 0; k < n; k++) {
        l->buf[l->len++] = s[k];
        if (s[k] == '\n' || l->len == LINE_MAX) {
            console_write(l->buf, l->len);
            l->len = 0;
        }
    }
}

int kvprintf(fmt_float_fn ffn, const char *fmt, va_list *ap)
{
    uint64_t f = irq_save();
    uint64_t goid = writer_goid(f & (1u << 9));
    struct line *l = this_line();
    if (goid)
        stash_take(goid, l);
    int n = fmt_format(line_sink, l, ffn, fmt, ap);
    if (goid && l->len)
        stash_put(goid, l);
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

void console_flush(void)
{
    uint64_t f = irq_save();
    uint64_t goid = writer_goid(f & (1u << 9));
    struct line *l = this_line();
    if (goid)
        stash_take(goid, l);
    if (l->len)
        console_write(l->buf, l->len);
    l->len = 0;
    irq_restore(f);
}

static struct spinlock console_lock = SPINLOCK_INIT("console", LOCK_RANK_CONSOLE);

// Held boot lines (held from the start: nothing may reach the serial
// port before console_init): under console_lock, or by the one core of a
// panic. Only the ACPI parser's warnings can come before console_init,
// far fewer than HOLD_MAX bytes, so no flush happens before it.
#define HOLD_MAX 8192
static struct {
    char buf[HOLD_MAX];
    size_t len;
    bool on;
} hold = { .on = true };

static void hold_flush(void)
{
    console_output(hold.buf, hold.len);
    hold.len = 0;
}

void console_release(void)
{
    spin_lock(&console_lock);
    hold_flush();
    hold.on = false;
    spin_unlock(&console_lock);
}

void console_panic_mode(void)
{
    __atomic_store_n(&panicking, true, __ATOMIC_RELAXED);  // relaxed: the other cores are stopped (NMI) before it matters
    if (hold.on) {          // the held boot lines come before the report
        hold_flush();
        hold.on = false;
    }
}

// console_lock held.
static void write_or_hold(const char *s, size_t n)
{
    if (!hold.on) {
        console_output(s, n);
        return;
    }
    if (hold.len + n > HOLD_MAX)
        hold_flush();
    if (n > HOLD_MAX) {
        console_output(s, n);
        return;
    }
    memcpy(hold.buf + hold.len, s, n);
    hold.len += n;
}

#ifdef GORO_DEBUG
void console_lock_held_for(void (*fn)(void), uint64_t ns)
{
    spin_lock(&console_lock);
    fn();
    uint64_t end = nanotime() + ns;
    while (nanotime() < end)
        cpu_relax();
    spin_unlock(&console_lock);
}
#endif

void console_write(const char *s, size_t n)
{
    if (__atomic_load_n(&panicking, __ATOMIC_RELAXED)) {   // relaxed: a mode flag, no data behind it
        console_output(s, n);
        return;
    }
    spin_lock(&console_lock);
    write_or_hold(s, n);
    spin_unlock(&console_lock);
}
