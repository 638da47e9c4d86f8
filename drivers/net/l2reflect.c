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
};

struct reflector {
    struct netdev_consumer consumer;
    struct netdev *dev;
    struct counters q[NETDEV_MAX_QUEUES];
};
static struct reflector reflectors[NETDEV_MAX];

struct pass {
    struct netdev *dev;
    uint16_t q;
    struct counters *c;
};

// Deliver: the frame, its MACs swapped, out of the same queue.
static void reflect(void *ctx, const void *frame, uint32_t len, uint32_t flags)
{
    struct pass *p = ctx;
    const uint8_t *f = frame;
    (void)flags;
    uint8_t macs[2 * ETH_ALEN];
    memcpy(macs, f + ETH_ALEN, ETH_ALEN);
    memcpy(macs + ETH_ALEN, f, ETH_ALEN);
    struct netdev_frag frags[2] = { { macs, sizeof macs }, { f + sizeof macs, len - (uint32_t)sizeof macs } };
    if (p->dev->ops->xmit(p->dev, p->q, frags, 2, 0) == NETDEV_TX_OK)
        netdev_stat_add(&p->c->reflected, 1);
    else
        netdev_stat_add(&p->c->dropped, 1);
}

// Interrupt context, on the queue's core.
static void ready(void *ctx, struct netdev *dev, uint16_t q, uint32_t events)
{
    struct reflector *r = ctx;
    if (!(events & NETDEV_EV_RX))
        return;
    struct pass p = { dev, q, &r->q[q] };
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

bool l2reflect_start(struct netdev *dev)
{
    for (uint16_t q = 0; q < dev->nqueues; q++)
        if (!dev->queues[q].vector)
            return false;           // polled only (nic_irq=none): nothing would call it
    struct reflector *r = &reflectors[dev->index];
    memset(r, 0, sizeof *r);
    r->dev = dev;
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
    }
}
