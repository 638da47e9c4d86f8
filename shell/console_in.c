// SPDX-License-Identifier: MIT
// Console input: keys from COM1 and from the PS/2 keyboard, read by
// interrupt, edited into lines. Nothing polls.
//
// Sources. COM1's receive interrupt (ISA IRQ 4) and the keyboard's (IRQ 1),
// both routed through the IOAPIC to the boot core, move bytes into a ring
// of their own (interrupt context: the hook quiets the device). One
// goroutine per source sleeps in irq_wait while its ring is empty, decodes
// the bytes into keys (drivers/keydecode.h) and sends each to `keys`, a
// buffered channel that line readers receive from. The two goroutines start
// with the first read and live as long as the machine; they count as
// outside work for the deadlock detector while they wait.
//
// The foreground (kernel/console.h). When the shell runs an app
// (console_fg_begin .. console_fg_end), Ctrl-C is not a key: it goes to the
// foreground's interrupt channel, which the shell selects on. A reader
// waits for keys and for its cancel channel at once:
//   - no shell (console_fg_shell never called): a nil channel, never ready;
//   - an app in the foreground: the run's channel, closed when the run
//     ends, so that readers the app left behind give the keys back;
//   - the shell at its prompt: a closed channel, so a left-behind reader
//     fails at once instead of taking the shell's keys.
// Readers take `reader` for a whole line, so lines never mix.
#include "goro.h"
#include "arch/arch.h"
#include "drivers/ioapic.h"
#include "drivers/keydecode.h"
#include "drivers/ps2kbd.h"
#include "drivers/serial.h"
#include "kernel/console.h"
#include "shell/console_in.h"
#include "kernel/irqwait.h"
#include "shell/lineedit.h"
#include "lib/printf.h"

#define COM1_IRQ 4
#define VEC_COM1 IRQ_VEC_ISA(COM1_IRQ)
#define VEC_KBD IRQ_VEC_ISA(PS2KBD_IRQ)
#define RING_SIZE 1024u
#define KEY_QUEUE 256               // keys typed ahead of the reader
_Static_assert((RING_SIZE & (RING_SIZE - 1)) == 0, "RING_SIZE is a power of two");

// One device's bytes. lock held: the handler appends at head, the source's
// goroutine takes at tail; the counters run freely and are reduced modulo
// RING_SIZE on use.
struct ring {
    struct spinlock lock;
    char buf[RING_SIZE];
    uint32_t head, tail;
    uint64_t dropped;               // bytes that found the ring full
};

static struct ring com1_ring = { .lock = SPINLOCK_INIT("console com1", LOCK_RANK_CONSOLE_IN) };
static struct ring kbd_ring = { .lock = SPINLOCK_INIT("console kbd", LOCK_RANK_CONSOLE_IN) };

// Written in input_start (once_do), read after once_do returns.
static once_t input_once = ONCE_INIT;
static bool have_com1, have_kbd;
static chan_t *keys;                // int; KEY_QUEUE buffered
static chan_t *closed_chan;         // closed at start: always ready
static chan_t *intr_chan;           // Ctrl-C for the foreground app; one slot

// fg_lock held.
static struct spinlock fg_lock = SPINLOCK_INIT("console fg", LOCK_RANK_CONSOLE_IN);
static bool shell_owns;             // the shell reads the console between runs
static bool fg_active;              // an app runs in the foreground: Ctrl-C goes to intr_chan
static chan_t *run_cancel;          // an open channel for the next or current run
static bool run_cancel_taken;       // a reader of the current run holds run_cancel
static chan_t *cancel_now;          // what a reader that starts now waits on (see the top)

static uint64_t keys_dropped;       // atomic: keys that found `keys` full (for a debugger)

static mutex_t reader = MUTEX_INIT;

// Interrupt context, lock not held: reads every waiting byte, even into a
// full ring, because the interrupt is edge-triggered: the line must fall
// before the next byte can raise it again.
static void ring_fill(struct ring *r, int (*getc)(void))
{
    spin_lock(&r->lock);
    for (int c; (c = getc()) >= 0;) {
        if (r->head - r->tail < RING_SIZE)
            r->buf[r->head++ % RING_SIZE] = (char)c;
        else
            r->dropped++;
    }
    spin_unlock(&r->lock);
}

static void com1_intr(uint8_t vector)
{
    (void)vector;
    ring_fill(&com1_ring, serial_getc);
}

static void kbd_intr(uint8_t vector)
{
    (void)vector;
    ring_fill(&kbd_ring, ps2kbd_getc);
}

static int ring_get(struct ring *r)
{
    int c = -1;
    spin_lock(&r->lock);
    if (r->head != r->tail)
        c = (unsigned char)r->buf[r->tail++ % RING_SIZE];
    spin_unlock(&r->lock);
    return c;
}

// A decoded key: Ctrl-C to the foreground app while there is one, every
// other key to the readers (dropped when they are KEY_QUEUE behind).
static void deliver(int key)
{
    spin_lock(&fg_lock);
    bool intr = key == KEY_CTRL('C') && fg_active;
    spin_unlock(&fg_lock);
    if (intr) {
        chan_try_send(intr_chan, 0);    // one pending Ctrl-C is enough
        return;
    }
    if (!chan_try_send(keys, &key))
        __atomic_fetch_add(&keys_dropped, 1, __ATOMIC_RELAXED);   // relaxed: a count
}

// A device's reader goroutine: the ring its interrupt hook fills, the
// vector that hook is on, and which decoder turns its bytes into keys.
struct reader_args {
    struct ring *ring;
    uint8_t vector;
    bool ps2;                       // PS/2 scancodes, else a terminal's bytes (VT100)
};

static struct reader_args com1_reader = { &com1_ring, VEC_COM1, false };
static struct reader_args kbd_reader = { &kbd_ring, VEC_KBD, true };

static void key_reader(void *arg)
{
    const struct reader_args *a = arg;
    struct vt_decoder vt = { 0 };
    struct ps2_decoder ps2 = { 0 };
    for (;;) {
        int c = ring_get(a->ring);
        if (c < 0) {
            irq_wait(a->vector);
            continue;
        }
        int key = a->ps2 ? ps2_decode(&ps2, (uint8_t)c) : vt_decode(&vt, (uint8_t)c);
        if (key != KEY_NONE)
            deliver(key);
    }
}

// Attach before routing, route before enabling: the first interrupt finds
// its handler. Bytes already waiting raise the line as soon as the device's
// interrupt is on, so they are read too.
static bool com1_setup(void)
{
    if (irq_attach(VEC_COM1, com1_intr) != 0 ||
        ioapic_route_isa(COM1_IRQ, VEC_COM1, arch_cpu(0)->apic_id) != 0) {
        kprintf("console: no receive interrupt for COM1: no serial input\n");
        return false;
    }
    serial_enable_rx_irq();
    return true;
}

static bool kbd_setup(void)
{
    if (!ps2kbd_init())
        return false;
    if (irq_attach(VEC_KBD, kbd_intr) != 0 ||
        ioapic_route_isa(PS2KBD_IRQ, VEC_KBD, arch_cpu(0)->apic_id) != 0) {
        kprintf("console: no interrupt for the PS/2 keyboard: no keyboard input\n");
        return false;
    }
    kbd_intr(VEC_KBD);              // a byte that came before the route raised no interrupt
    return true;
}

static void input_start(void *arg)
{
    (void)arg;
    keys = chan_make(sizeof(int), KEY_QUEUE);
    closed_chan = chan_make(0, 0);
    chan_close(closed_chan);
    intr_chan = chan_make(0, 1);
    have_com1 = com1_setup();
    have_kbd = kbd_setup();
    if (have_com1)
        go(key_reader, &com1_reader);
    if (have_kbd)
        go(key_reader, &kbd_reader);
    kprintf("console: input from %s\n", have_com1 && have_kbd ? "COM1 and the PS/2 keyboard" :
                                         have_com1 ? "COM1" : have_kbd ? "the PS/2 keyboard" :
                                         "nowhere (no interrupt can be routed)");
}

bool console_input_start(void)
{
    once_do(&input_once, input_start, 0);
    return have_com1 || have_kbd;
}

// The next key, or -1 once cancel is ready (NULL: never).
static int next_key(chan_t *cancel)
{
    int key = 0;
    struct select_case cases[2] = {
        { .c = keys, .dir = SELECT_RECV, .elem = &key },
        { .c = cancel, .dir = SELECT_RECV },
    };
    return chan_select(cases, 2, true) == 0 ? key : -1;
}

static void echo(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    console_write(s, n);
}

// Edits one line with reader held. Returns its length, -1 when cancel
// became ready, -2 on Ctrl-C when cancel_on_intr, else Ctrl-C starts over.
static int edit_line(const char *prompt, char *buf, size_t cap, struct lineedit_history *hist,
                     chan_t *cancel, bool cancel_on_intr)
{
    struct lineedit e;
    console_flush();                // the caller's own prompt, if it printed one
    for (;;) {
        if (prompt)
            console_write(prompt, strlen(prompt));
        lineedit_init(&e, buf, cap, hist, echo, 0);
        enum lineedit_result r = LINEEDIT_MORE;
        while (r == LINEEDIT_MORE) {
            int key = next_key(cancel);
            if (key < 0) {
                if (e.len)
                    console_write("\n", 1);    // end the line the reader had begun
                buf[0] = 0;
                return -1;
            }
            r = lineedit_key(&e, key);
        }
        if (r == LINEEDIT_DONE)
            return (int)e.len;
        if (cancel_on_intr)
            return -2;
    }
}

int console_read_line(char *buf, size_t cap)
{
    if (!console_input_start() || cap == 0)
        return -1;
    mutex_lock(&reader);
    spin_lock(&fg_lock);
    chan_t *cancel = cancel_now;
    if (cancel && cancel == run_cancel)
        run_cancel_taken = true;
    spin_unlock(&fg_lock);
    int n = edit_line(0, buf, cap, 0, cancel, false);
    mutex_unlock(&reader);
    return n;
}

int console_edit_line(const char *prompt, char *buf, size_t cap, struct lineedit_history *hist)
{
    if (!console_input_start() || cap == 0)
        return -1;
    mutex_lock(&reader);
    int n = edit_line(prompt, buf, cap, hist, 0, true);
    mutex_unlock(&reader);
    return n;
}

void console_fg_shell(void)
{
    console_input_start();
    spin_lock(&fg_lock);
    shell_owns = true;
    cancel_now = closed_chan;
    spin_unlock(&fg_lock);
}

chan_t *console_fg_begin(void)
{
    console_input_start();
    chan_t *fresh = chan_make(0, 0);
    while (chan_try_recv(intr_chan, 0) == CHAN_RECEIVED)
        ;                           // a Ctrl-C that arrived as the last run ended
    spin_lock(&fg_lock);
    if (!run_cancel) {
        run_cancel = fresh;
        fresh = 0;
    }
    run_cancel_taken = false;
    cancel_now = run_cancel;
    fg_active = true;
    spin_unlock(&fg_lock);
    if (fresh)
        chan_free(fresh);           // the last run's channel was never taken: kept
    return intr_chan;
}

void console_fg_end(void)
{
    spin_lock(&fg_lock);
    fg_active = false;
    cancel_now = shell_owns ? closed_chan : 0;
    chan_t *cancel = run_cancel_taken ? run_cancel : 0;
    if (cancel)
        run_cancel = 0;
    spin_unlock(&fg_lock);
    // A reader holds the closed channel's address, perhaps not yet inside
    // its select, so the channel is never freed: a few bytes for each run
    // whose app read the console.
    if (cancel)
        chan_close(cancel);
}
