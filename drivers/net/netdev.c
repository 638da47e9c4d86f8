// SPDX-License-Identifier: MIT
// The registry of network devices and each device's one consumer
// (drivers/net/netdev.h has the interface and its rules).
//
// Registration happens at boot on one core, before any consumer looks;
// the count is published with a release so that a reader that sees it
// sees the devices it counts. A consumer is one pointer, swapped in and
// out with compare-and-swap; the interrupt handlers read it with acquire
// and count themselves in ready_calls_running around the call, so that
// netdev_detach can wait for a call still using the old consumer.
#include "drivers/net/netdev.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "arch/arch.h"

static struct netdev *devs[NETDEV_MAX];
// written by netdev_register (release), read by anyone (acquire)
static uint32_t ndevs;

int netdev_register(struct netdev *dev)
{
    ASSERT(dev->ops && dev->nqueues >= 1 && dev->nqueues <= NETDEV_MAX_QUEUES && dev->queues);
    uint32_t n = __atomic_load_n(&ndevs, __ATOMIC_RELAXED);    // relaxed: only the boot core writes it
    if (n == NETDEV_MAX) {
        kprintf("netdev: %s at %s: more than %u devices; not registered\n", dev->driver,
                dev->bus_info, NETDEV_MAX);
        return -1;
    }
    snprintf(dev->name, sizeof dev->name, "net%u", n);
    dev->index = n;
    devs[n] = dev;
    __atomic_store_n(&ndevs, n + 1, __ATOMIC_RELEASE);         // release: pairs with netdev_count's acquire
    return 0;
}

uint32_t netdev_count(void)
{
    return __atomic_load_n(&ndevs, __ATOMIC_ACQUIRE);          // acquire: pairs with netdev_register's release
}

struct netdev *netdev_get(uint32_t i)
{
    return i < netdev_count() ? devs[i] : 0;
}

int netdev_attach(struct netdev *dev, const struct netdev_consumer *c)
{
    ASSERT(c && c->ready);
    const struct netdev_consumer *none = 0;
    // release: c's fields before the pointer; pairs with netdev_ready's acquire
    bool ok = __atomic_compare_exchange_n(&dev->consumer, &none, c, false, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED);
    return ok ? 0 : -1;
}

void netdev_detach(struct netdev *dev, const struct netdev_consumer *c)
{
    const struct netdev_consumer *expect = c;
    // seq_cst: the pointer's change before the read of the running count
    // below, against netdev_ready's increment before its load (a Dekker
    // pair: one of the two sees the other)
    bool ok = __atomic_compare_exchange_n(&dev->consumer, &expect, 0, false, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED);
    ASSERT(ok);         // only the consumer detaches itself
    while (__atomic_load_n(&dev->ready_calls_running, __ATOMIC_SEQ_CST))    // seq_cst: see above
        cpu_relax();
}

void netdev_ready(struct netdev *dev, uint16_t q, uint32_t events)
{
    __atomic_fetch_add(&dev->ready_calls_running, 1, __ATOMIC_SEQ_CST);     // seq_cst: pairs with netdev_detach
    const struct netdev_consumer *c = __atomic_load_n(&dev->consumer, __ATOMIC_SEQ_CST);  // seq_cst: as above; acquire for c's fields
    if (c)
        c->ready(c->ctx, dev, q, events);
    __atomic_fetch_sub(&dev->ready_calls_running, 1, __ATOMIC_RELEASE);     // release: the call's reads of c before; pairs with netdev_detach's load
}

void netdev_set_link(struct netdev *dev, bool up)
{
    bool was = __atomic_exchange_n(&dev->link_up, up, __ATOMIC_RELEASE);  // release: pairs with netdev_link_up's acquire
    if (was != up)
        netdev_ready(dev, 0, NETDEV_EV_LINK);
}

uint32_t netdev_tx_len(const struct netdev *dev, const struct netdev_frag *frags, uint32_t nfrags,
                       const struct netdev_tx *tx)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < nfrags; i++)
        total += frags[i].len;
    if (total < NETDEV_MIN_FRAME || total > netdev_max_frame(dev))
        return 0;
    if (tx && (tx->flags & NETDEV_TX_CSUM) &&
        (!(dev->features & NETDEV_F_TX_CSUM) || (uint32_t)tx->csum_start + tx->csum_offset + 2 > total))
        return 0;
    return (uint32_t)total;
}

