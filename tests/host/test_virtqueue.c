// SPDX-License-Identifier: MIT
// drivers/net/virtqueue.c against a device played here: it takes chains
// from the available ring, writes into the writable buffers, returns them
// on the used ring, and decides notifications and interrupts by the
// spec's rules (virtio 1.2, 2.7.7 and 2.7.10), so the driver's side of
// each rule is checked against the device's. Then a device that lies.
#include <stdlib.h>
#include <string.h>
#include "drivers/net/virtqueue.h"
#include "check.h"

// lib/panic.h's, for the queue's ASSERTs.
#include <stdarg.h>
void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    abort();
}

#define SIZE 8

struct dev {
    struct virtqueue *vq;
    bool event_idx;
    uint16_t last_avail;        // the next available entry to take
    uint16_t used_idx;
    uint16_t notify_old;        // avail idx when the device last asked (event idx)
    uint32_t interrupts;
};

static void *block;
static void *tokens[VQ_MAX_SIZE];
static struct virtqueue vq;
static struct dev dev;
static uint8_t bufs[SIZE * 4][64];

static void setup(uint16_t size, bool event_idx)
{
    free(block);
    size_t n = vq_bytes(size, 0, 0);
    block = aligned_alloc(4096, n);
    memset(block, 0, n);
    vq_init(&vq, size, block, tokens, event_idx);
    dev = (struct dev){ .vq = &vq, .event_idx = event_idx };
}

static volatile uint16_t *avail_ring(void) { return (volatile uint16_t *)(uintptr_t)vq_avail_addr(&vq); }
static volatile uint16_t *used_ring(void) { return (volatile uint16_t *)(uintptr_t)vq_used_addr(&vq); }

// The device completes up to max chains: each writable buffer gets its
// length in bytes of 0xAB, and the used length is what was written.
static uint32_t dev_run(uint32_t max)
{
    volatile uint16_t *a = avail_ring(), *u = used_ring();
    uint32_t done = 0;
    uint16_t old_used = dev.used_idx;
    while (done < max && dev.last_avail != a[1]) {
        uint16_t head = a[2 + (dev.last_avail & (vq.size - 1))];
        uint32_t written = 0;
        for (uint16_t i = head, k = 0; k < vq.size; k++) {
            struct vring_desc *d = &vq.desc[i];
            if (d->flags & VRING_DESC_F_WRITE) {
                memset((void *)(uintptr_t)d->addr, 0xAB, d->len);
                written += d->len;
            }
            if (!(d->flags & VRING_DESC_F_NEXT))
                break;
            i = d->next;
        }
        volatile uint16_t *e = &u[2 + 4 * (dev.used_idx & (vq.size - 1))];
        e[0] = head;
        e[1] = 0;
        e[2] = (uint16_t)written;
        e[3] = (uint16_t)(written >> 16);
        dev.used_idx++;
        u[1] = dev.used_idx;
        dev.last_avail++;
        done++;
    }
    if (done) {
        bool irq = dev.event_idx ? vring_need_event(a[2 + vq.size], dev.used_idx, old_used)
                                 : !(a[0] & VRING_AVAIL_F_NO_INTERRUPT);
        dev.interrupts += irq;
    }
    return done;
}

static bool add_rx(int i)
{
    struct vq_buf b = { (uint64_t)(uintptr_t)bufs[i], sizeof bufs[i], true };
    return vq_add(&vq, &b, 1, bufs[i]);
}

static void round_trip(void)
{
    setup(SIZE, false);
    for (int i = 0; i < SIZE; i++)
        CHECK(add_rx(i));
    CHECK(!add_rx(SIZE));                       // full
    CHECK(vq_kick_prepare(&vq));
    CHECK(!vq_kick_prepare(&vq));               // nothing new
    CHECK(dev_run(100) == SIZE);
    for (int i = 0; i < SIZE; i++) {
        uint32_t len;
        CHECK(vq_get_used(&vq, &len) == bufs[i] && len == sizeof bufs[i] && bufs[i][0] == 0xAB);
    }
    uint32_t len;
    CHECK(!vq_get_used(&vq, &len) && vq.num_free == SIZE);
}

// Chains of three: every descriptor comes back to the free list.
static void chains(void)
{
    setup(SIZE, false);
    for (int round = 0; round < 10; round++) {
        struct vq_buf b[3];
        for (int k = 0; k < 3; k++)
            b[k] = (struct vq_buf){ (uint64_t)(uintptr_t)bufs[k + 3 * (round & 1)], 16, k == 2 };
        CHECK(vq_add(&vq, b, 3, bufs[round]));
        CHECK(vq_add(&vq, b, 3, bufs[round + 1]));
        CHECK(!vq_add(&vq, b, 3, bufs[0]));         // 2 left
        vq_kick_prepare(&vq);
        dev_run(100);
        uint32_t len;
        CHECK(vq_get_used(&vq, &len) == bufs[round] && len == 16);
        CHECK(vq_get_used(&vq, &len) == bufs[round + 1]);
        CHECK(vq.num_free == SIZE);
    }
}

// 70,000 buffers through an 8-entry queue: the 16-bit indices wrap, and
// every buffer comes back once, in order.
static void wraps(void)
{
    setup(SIZE, true);
    uint32_t sent = 0, got = 0;
    while (got < 70000) {
        while (sent < 70000 && sent - got < SIZE && add_rx((int)(sent % (SIZE * 4))))
            sent++;
        vq_kick_prepare(&vq);
        dev_run(3);
        void *t;
        uint32_t len;
        while ((t = vq_get_used(&vq, &len))) {
            CHECKF(t == bufs[got % (SIZE * 4)], "buffer %u out of order", got);
            got++;
        }
    }
    CHECK(sent == got && vq.num_free == SIZE);
}

// The device's avail_event: a notification only when the driver's index
// passes it.
static void kick_event_idx(void)
{
    setup(SIZE, true);
    volatile uint16_t *u = used_ring();
    volatile uint16_t *avail_event = &u[2 + 4 * SIZE];
    *avail_event = 2;                            // notify me once entry 2 is available
    add_rx(0);
    add_rx(1);
    CHECK(!vq_kick_prepare(&vq));               // idx 0 -> 2: entry 2 not yet there
    add_rx(2);
    CHECK(vq_kick_prepare(&vq));                // 2 -> 3: passes it
    add_rx(3);
    CHECK(!vq_kick_prepare(&vq));               // the device has not asked again
}

static void kick_no_notify(void)
{
    setup(SIZE, false);
    used_ring()[0] = VRING_USED_F_NO_NOTIFY;
    add_rx(0);
    CHECK(!vq_kick_prepare(&vq));
    used_ring()[0] = 0;
    add_rx(1);
    CHECK(vq_kick_prepare(&vq));
}

static void interrupts(bool event_idx)
{
    setup(SIZE, event_idx);
    for (int i = 0; i < SIZE; i++)
        add_rx(i);
    vq_kick_prepare(&vq);
    CHECK(vq_enable_cb(&vq));                   // nothing used yet: armed
    dev_run(1);
    CHECK(dev.interrupts == 1);
    vq_disable_cb(&vq);
    dev_run(2);
    CHECK(dev.interrupts == 1);                 // off: none
    CHECK(!vq_enable_cb(&vq));                  // chains wait: poll them
    uint32_t len;
    while (vq_get_used(&vq, &len))
        ;
    CHECK(vq_enable_cb(&vq));
    dev_run(1);
    CHECK(dev.interrupts == 2);
}

static void interrupts_plain(void) { interrupts(false); }
static void interrupts_event_idx(void) { interrupts(true); }

// vq_enable_cb_delayed: one interrupt when three quarters of the
// outstanding chains are done, not at the first.
static void interrupts_delayed(void)
{
    setup(SIZE, true);
    for (int i = 0; i < SIZE; i++)
        add_rx(i);
    vq_kick_prepare(&vq);
    CHECK(vq_enable_cb_delayed(&vq));
    for (int i = 0; i < 6; i++)
        dev_run(1);
    CHECK(dev.interrupts == 0);
    dev_run(1);
    CHECK(dev.interrupts == 1);
}

// A device that returns ids it was never given, or the same one twice:
// those entries are skipped, the free count never grows past the size.
static void lying_device(void)
{
    setup(SIZE, false);
    add_rx(0);
    add_rx(1);
    vq_kick_prepare(&vq);
    volatile uint16_t *u = used_ring();
    uint16_t ids[4] = { 0, 0, 200, 1 };
    for (int i = 0; i < 4; i++) {
        u[2 + 4 * i] = ids[i];
        u[2 + 4 * i + 2] = 5;
    }
    u[1] = 4;
    uint32_t len, taken = 0;
    void *got[4];
    while (vq_has_used(&vq)) {
        void *t = vq_get_used(&vq, &len);
        if (t)
            got[taken++] = t;
    }
    CHECK(taken == 2 && got[0] == bufs[0] && got[1] == bufs[1]);
    CHECK(vq.num_free == SIZE);
}

int main(void)
{
    RUN(round_trip);
    RUN(chains);
    RUN(wraps);
    RUN(kick_event_idx);
    RUN(kick_no_notify);
    RUN(interrupts_plain);
    RUN(interrupts_event_idx);
    RUN(interrupts_delayed);
    RUN(lying_device);
    free(block);
    return CHECK_DONE();
}
