// SPDX-License-Identifier: MIT
// app=soak's programs with large values on goroutine stacks: channel
// elements of 4 KiB to 60,000 bytes sent and received from frames that
// large (at a random depth, so their pages are sometimes new), and a
// goroutine's stack buffer filled by workers on other cores. The channel
// copies run with interrupts off; the stack pages they touch must be
// mapped before (docs/design.md, *Goroutine stacks*). Every element
// carries a message (the ledger) and a body derived from it, checked.
#include "soak.h"

#define BIG_MAX 60000u
static const uint32_t big_sizes[] = { 4096, 8192, 20000, BIG_MAX };
static const uint32_t big_caps[] = { 0, 0, 1, 4 };

struct bigprog {
    chan_t *c;
    uint32_t size;
    int32_t left;                       // messages not yet claimed by a receiver (atomic)
    uint32_t per_sender;
    uint32_t senders_left;              // the last sender closes c (atomic)
};

struct bigactor {
    struct bigprog *bp;
    rng_t r;
    uint32_t id;
};

static uint8_t body_byte(const struct soak_msg *m, uint32_t i)
{
    return (uint8_t)(m->payload >> (i % 8 * 8)) ^ (uint8_t)(i >> 3);
}

static void big_fill(uint8_t *b, uint32_t size, const struct soak_msg *m)
{
    memcpy(b, m, sizeof *m);
    for (uint32_t i = sizeof *m; i < size; i++)
        b[i] = body_byte(m, i);
}

// Checks a received element: its message through the ledger, its body
// against the message. A zero element (the close) is false.
static bool big_check(const uint8_t *b, uint32_t size, const char *where)
{
    struct soak_msg m;
    memcpy(&m, b, sizeof m);
    if (m.seq == 0 && m.sum == 0)
        return false;
    for (uint32_t i = sizeof m; i < size; i++)
        if (b[i] != body_byte(&m, i)) {
            soak_fail("%s: byte %u of a %u-byte element (seq %u) is %#x, expected %#x", where, i, size,
                      m.seq, b[i], body_byte(&m, i));
            break;
        }
    msg_received(&m, where);
    return true;
}

// Each of the three below runs its large frame depth KiB further down the
// stack than its caller (descend: 1 KiB frames), so that the frame's place
// in the stack varies, its pages sometimes new. The large frames are
// probed page by page at entry (-fstack-clash-protection).
#define DESCEND(call)                                                        \
    do {                                                                     \
        volatile uint8_t pad[1024];                                          \
        pad[0] = (uint8_t)depth;                                             \
        if (depth) {                                                         \
            depth--;                                                         \
            call;                                                            \
            __asm__ volatile("" :: "r"(pad) : "memory");   /* no tail call */ \
            return;                                                          \
        }                                                                    \
    } while (0)

__attribute__((noinline)) static void big_send(struct bigactor *a)
{
    uint8_t buf[BIG_MAX];
    struct soak_msg m;
    msg_make(&m, a->id, &a->r);
    big_fill(buf, a->bp->size, &m);
    chan_send(a->bp->c, buf);
    soak_op(1);
}

__attribute__((noinline)) static void big_send_at(struct bigactor *a, uint32_t depth)
{
    DESCEND(big_send_at(a, depth));
    big_send(a);
}

// Receives one element; false at the close.
__attribute__((noinline)) static bool big_recv(struct bigactor *a)
{
    uint8_t buf[BIG_MAX];
    bool ok;
    if (rng_below(&a->r, 3) == 0) {
        struct select_case cs[2] = {
            { .c = 0, .dir = SELECT_RECV, .elem = 0 },      // nil: never ready
            { .c = a->bp->c, .dir = SELECT_RECV, .elem = buf },
        };
        ok = chan_select(cs, 2, true) == 1 && cs[1].ok;
    } else {
        ok = chan_recv(a->bp->c, buf);
    }
    bool got = big_check(buf, a->bp->size, "bigchan");
    if (got != ok)
        soak_fail("bigchan: a receive reported %s but left %s", ok ? "a value" : "the close",
                  got ? "a value" : "zeros");
    return ok;
}

__attribute__((noinline)) static void big_recv_at(struct bigactor *a, uint32_t depth, bool *ok)
{
    DESCEND(big_recv_at(a, depth, ok));
    *ok = big_recv(a);
}

static void big_sender(void *p)
{
    struct bigactor *a = p;
    for (uint32_t i = 0; i < a->bp->per_sender; i++)
        big_send_at(a, rng_below(&a->r, 64));
    if (__atomic_sub_fetch(&a->bp->senders_left, 1, __ATOMIC_ACQ_REL) == 0)
        chan_close(a->bp->c);           // after every send: acq_rel orders the others'
}

static void big_receiver(void *p)
{
    struct bigactor *a = p;
    for (bool ok = true; ok;)
        big_recv_at(a, rng_below(&a->r, 64), &ok);
}

static void free_chan(void *c) { chan_free(c); }

void prog_bigchan(rng_t *r)
{
    struct bigprog *bp = round_alloc(sizeof *bp);
    bp->size = big_sizes[rng_below(r, sizeof big_sizes / sizeof big_sizes[0])];
    bp->c = chan_make(bp->size, big_caps[rng_below(r, sizeof big_caps / sizeof big_caps[0])]);
    round_defer(free_chan, bp->c);
    uint32_t senders = 1 + rng_below(r, 3), receivers = 1 + rng_below(r, 4);
    bp->per_sender = 1 + rng_below(r, 8);
    bp->senders_left = senders;
    for (uint32_t i = 0; i < receivers + senders; i++) {
        struct bigactor *a = round_alloc(sizeof *a);
        *a = (struct bigactor){ bp, rng_split(r), i };
        soak_go(i < receivers ? big_receiver : big_sender, a);
    }
}

// ---- a stack buffer filled by workers ----------------------------------------

#define FRAME_WORDS (48 * 1024 / 8)

struct stripe {
    volatile uint64_t *buf;
    uint32_t w, n;                      // this worker writes words w, w + n, ...
    uint64_t tag;
    waitgroup_t *wg;
};

static void stripe_worker(void *p)
{
    struct stripe *s = p;
    for (uint32_t i = s->w; i < FRAME_WORDS; i += s->n)
        s->buf[i] = s->tag ^ i;
    soak_op(1);
    wg_done(s->wg);
}

// A 48 KiB local array written by n workers (anywhere in the machine)
// while this goroutine waits; then every word is checked.
__attribute__((noinline)) static void frame_owner_fill(rng_t *r)
{
    uint64_t buf[FRAME_WORDS];
    struct stripe stripes[8];
    waitgroup_t wg = WAITGROUP_INIT;
    uint32_t n = 2 + rng_below(r, 7);
    uint64_t tag = rng_next(r);
    wg_add(&wg, (int)n);
    for (uint32_t w = 0; w < n; w++) {
        stripes[w] = (struct stripe){ buf, w, n, tag, &wg };
        soak_go(stripe_worker, &stripes[w]);
    }
    wg_wait(&wg);
    for (uint32_t i = 0; i < FRAME_WORDS; i++)
        if (((volatile uint64_t *)buf)[i] != (tag ^ i)) {
            soak_fail("bigframe: word %u of a stack buffer filled by %u workers is %#lx, expected %#lx", i, n,
                      ((volatile uint64_t *)buf)[i], tag ^ i);
            break;
        }
}

__attribute__((noinline)) static void frame_owner_at(rng_t *r, uint32_t depth)
{
    DESCEND(frame_owner_at(r, depth));
    frame_owner_fill(r);
}

static void frame_owner(void *p)
{
    rng_t *r = p;
    frame_owner_at(r, rng_below(r, 128));
}

void prog_bigframe(rng_t *r)
{
    rng_t *own = round_alloc(sizeof *own);
    *own = rng_split(r);
    soak_go(frame_owner, own);
}
