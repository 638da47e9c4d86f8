// SPDX-License-Identifier: MIT
// The L2 reflector (drivers/net/l2reflect.h).
//
// It is the device's consumer, and its ready function, which the driver
// calls in the queue's interrupt, does what a netpoller would leave to a
// goroutine: it polls the queue, sends each frame back from inside the
// deliver call (the receive buffer is lent, so the frame is transmitted
// from where it lies, only its 12 address bytes rebuilt), and turns the
// interrupt back on. That makes it the one consumer that owns both sides
// of every queue from the interrupt, which netdev.h allows because nothing
// else drives the device meanwhile.
//
// A queue that keeps receiving could hold its core in the interrupt for
// good; after ROUNDS polls that each found a full budget, the handler
// turns the interrupt on and, if frames still wait, sends its own core
// the queue's vector and returns, so the interrupted code runs between
// two rounds.
//
// With L2REFLECT_CSUM an IPv4 UDP datagram goes back with its checksum
// field set to the pseudo-header's sum and NETDEV_TX_CSUM asked, the
// netdev contract for a checksum the device makes; only a datagram that
// fills its frame exactly (no padding, not a fragment) qualifies, as the
// device sums to the frame's end.
#include "drivers/net/l2reflect.h"
#include "lib/panic.h"
#include "lib/string.h"
#include "arch/arch.h"

#define BUDGET 64
#define ROUNDS 8

struct counters {
    // the queue's interrupt handler (one core at a time)
    uint64_t reflected, dropped, interrupts, requeued;
    uint64_t off_core;          // interrupts that reached another core than the queue's
    uint64_t csum_known, csum_asked;
};

struct reflector {
    struct netdev_consumer consumer;
    struct netdev *dev;
    bool csum;                  // L2REFLECT_CSUM, on a device with NETDEV_F_TX_CSUM
    struct counters q[NETDEV_MAX_QUEUES];
};
static struct reflector reflectors[NETDEV_MAX];

struct pass {
    struct netdev *dev;
    uint16_t q;
    bool csum;
    struct counters *c;
};

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

#define IPV4 0x0800
#define UDP 17

// Where frame f's UDP checksum field is, with the pseudo-header's folded
// sum for it in sum (big-endian), when f is a whole IPv4 UDP datagram that
// ends where the frame ends; 0 otherwise.
static uint32_t udp_csum_at(const uint8_t *f, uint32_t len, uint8_t sum[2])
{
    const uint8_t *ip = f + ETH_HLEN;
    if (len < ETH_HLEN + 28 || be16(f + 12) != IPV4 || ip[0] >> 4 != 4 || ip[9] != UDP)
        return 0;
    uint32_t ihl = (ip[0] & 15u) * 4, l4 = ETH_HLEN + ihl;
    if (ihl < 20 || ETH_HLEN + (uint32_t)be16(ip + 2) != len || l4 + 8 > len || be16(f + l4 + 4) != len - l4 ||
        (be16(ip + 6) & 0x3FFF))            // more fragments, or an offset: not whole
        return 0;
    uint32_t s = be16(ip + 12) + be16(ip + 14) + be16(ip + 16) + be16(ip + 18) + UDP + (len - l4);
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    sum[0] = (uint8_t)(s >> 8);
    sum[1] = (uint8_t)s;
    return l4 + 6;
}

// Deliver: the frame, its MACs swapped, out of the same queue.
static void reflect(void *ctx, const void *frame, uint32_t len, uint32_t flags)
{
    struct pass *p = ctx;
    const uint8_t *f = frame;
    if (flags & NETDEV_RX_CSUM_OK)
        netdev_stat_add(&p->c->csum_known, 1);
    uint8_t macs[2 * ETH_ALEN], sum[2];
    memcpy(macs, f + ETH_ALEN, ETH_ALEN);
    memcpy(macs + ETH_ALEN, f, ETH_ALEN);
    struct netdev_frag frags[4] = { { macs, sizeof macs }, { f + sizeof macs, len - (uint32_t)sizeof macs } };
    uint32_t at = p->csum ? udp_csum_at(f, len, sum) : 0;
    struct netdev_tx tx = { 0, 0, 0 };
    if (at) {
        frags[1].len = at - (uint32_t)sizeof macs;
        frags[2] = (struct netdev_frag){ sum, 2 };
        frags[3] = (struct netdev_frag){ f + at + 2, len - at - 2 };
        tx = (struct netdev_tx){ NETDEV_TX_CSUM, (uint16_t)(at - 6), 6 };
    }
    if (p->dev->ops->xmit(p->dev, p->q, frags, at ? 4 : 2, at ? &tx : 0) == NETDEV_TX_OK) {
        netdev_stat_add(&p->c->reflected, 1);
        if (at)
            netdev_stat_add(&p->c->csum_asked, 1);
    } else {
        netdev_stat_add(&p->c->dropped, 1);
    }
}

// Interrupt context, on the queue's core.
static void ready(void *ctx, struct netdev *dev, uint16_t q, uint32_t events)
{
    struct reflector *r = ctx;
    if (!(events & NETDEV_EV_RX))
        return;
    struct pass p = { dev, q, r->csum, &r->q[q] };
    netdev_stat_add(&p.c->interrupts, 1);
    if (cpu_index() != dev->queues[q].cpu)
        netdev_stat_add(&p.c->off_core, 1);
    for (int round = 0; round < ROUNDS; round++) {
        if (dev->ops->rx_poll(dev, q, BUDGET, reflect, &p) < BUDGET && dev->ops->irq_enable(dev, q))
            return;
    }
    // Still busy: the interrupt on, and, with MSI-X, whose handler needs
    // no cause from the device, a nudge to come back after the interrupted
    // code has run. A shared vector's handler reads the device's cause,
    // which a nudge does not set: there the rounds go on until the queue
    // is empty.
    bool msix = !strcmp(dev->irq_mode, "msi-x");
    while (!dev->ops->irq_enable(dev, q)) {
        if (msix) {
            netdev_stat_add(&p.c->requeued, 1);
            arch_send_ipi(cpu_index(), dev->queues[q].vector);
            return;
        }
        dev->ops->rx_poll(dev, q, BUDGET, reflect, &p);
    }
}

bool l2reflect_start(struct netdev *dev, uint32_t opts)
{
    for (uint16_t q = 0; q < dev->nqueues; q++)
        if (!dev->queues[q].vector)
            return false;           // polled only (nic_irq=none): nothing would call it
    struct reflector *r = &reflectors[dev->index];
    memset(r, 0, sizeof *r);
    r->dev = dev;
    r->csum = (opts & L2REFLECT_CSUM) && (dev->features & NETDEV_F_TX_CSUM);
    r->consumer = (struct netdev_consumer){ ready, r };
    if (netdev_attach(dev, &r->consumer) != 0)
        return false;
    // Frames that came before are taken by the queue's first interrupt,
    // raised here on the queue's own core when they would raise none: only
    // that core's handler may poll the queue once its interrupt is on.
    for (uint16_t q = 0; q < dev->nqueues; q++)
        if (!dev->ops->irq_enable(dev, q))
            arch_send_ipi(dev->queues[q].cpu, dev->queues[q].vector);
    return true;
}

bool l2reflect_csum(const struct netdev *dev)
{
    return reflectors[dev->index].csum;
}

void l2reflect_stop(struct netdev *dev)
{
    struct reflector *r = &reflectors[dev->index];
    for (uint16_t q = 0; q < dev->nqueues; q++)
        dev->ops->irq_disable(dev, q);
    netdev_detach(dev, &r->consumer);
}

void l2reflect_stats(const struct netdev *dev, struct l2reflect_stats *out)
{
    const struct reflector *r = &reflectors[dev->index];
    *out = (struct l2reflect_stats){ 0 };
    for (uint16_t q = 0; q < dev->nqueues; q++) {
        const struct counters *c = &r->q[q];
        // relaxed: each counter has one writer; a recent value is all a reader wants
        out->queue_reflected[q] = __atomic_load_n(&c->reflected, __ATOMIC_RELAXED);
        out->reflected += out->queue_reflected[q];
        out->dropped += __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);     // relaxed: as above
        out->interrupts += __atomic_load_n(&c->interrupts, __ATOMIC_RELAXED);  // relaxed: as above
        out->requeued += __atomic_load_n(&c->requeued, __ATOMIC_RELAXED);   // relaxed: as above
        out->off_core += __atomic_load_n(&c->off_core, __ATOMIC_RELAXED);   // relaxed: as above
        out->csum_known += __atomic_load_n(&c->csum_known, __ATOMIC_RELAXED);   // relaxed: as above
        out->csum_asked += __atomic_load_n(&c->csum_asked, __ATOMIC_RELAXED);   // relaxed: as above
    }
}
