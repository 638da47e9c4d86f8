// SPDX-License-Identifier: MIT
// The transmit backlog (net/txq.c) against a device that refuses frames
// while its ring is full: none lost, none reordered, the bound held.
#include "kernel/ktest.h"
#include "net/stack.h"
#include "net/txq.h"

#define SENT_MAX (TXQ_MAX + 64)

struct fake_dev {
    uint32_t room;                  // frames it takes before it says busy
    uint32_t never;                 // a frame with this id it never sends (0: none)
    uint32_t sent[SENT_MAX];        // the ids taken, in order
    uint32_t nsent;
};

static enum netdev_xmit_result fake_xmit(void *ctx, const struct netdev_frag *frags, uint32_t nfrags)
{
    struct fake_dev *d = ctx;
    uint32_t id = 0;
    uint32_t len = 0;
    for (uint32_t i = 0; i < nfrags; i++)
        len += frags[i].len;
    if (len != sizeof id + 2)       // every test frame: its id, then two bytes
        return NETDEV_TX_DROPPED;
    __builtin_memcpy(&id, frags[0].base, frags[0].len < sizeof id ? frags[0].len : sizeof id);
    if (nfrags > 1 && frags[0].len < sizeof id)
        __builtin_memcpy((uint8_t *)&id + frags[0].len, frags[1].base, sizeof id - frags[0].len);
    if (id == d->never)
        return NETDEV_TX_DROPPED;
    if (!d->room)
        return NETDEV_TX_BUSY;
    d->room--;
    if (d->nsent < SENT_MAX)
        d->sent[d->nsent++] = id;
    return NETDEV_TX_OK;
}

// Frame id, in two fragments split inside the id (as a pbuf chain may be).
static enum txq_result send_id(struct txq *q, struct fake_dev *d, uint32_t id)
{
    static uint8_t b[sizeof(uint32_t) + 2];
    __builtin_memcpy(b, &id, sizeof id);
    b[4] = 0xAB;
    b[5] = 0xCD;
    struct netdev_frag f[2] = { { b, 3 }, { b + 3, sizeof b - 3 } };
    return txq_send(q, f, 2, fake_xmit, d);
}

static struct fake_dev dev;
static struct txq q;

KTEST(net_txq_refused_frames_go_in_order_once_there_is_room)
{
    dev = (struct fake_dev){ .room = 2 };
    q = (struct txq){ 0 };
    net_lock();                     // netmem: the stack lock's holder allocates
    KT_ASSERT_EQ(send_id(&q, &dev, 1), TXQ_SENT);
    KT_ASSERT_EQ(send_id(&q, &dev, 2), TXQ_SENT);
    KT_ASSERT_EQ(send_id(&q, &dev, 3), TXQ_HELD);      // the ring is full
    dev.room = 5;
    KT_ASSERT_EQ(send_id(&q, &dev, 4), TXQ_SENT);      // after 3, which goes first
    dev.room = 1;
    KT_ASSERT_EQ(send_id(&q, &dev, 5), TXQ_SENT);
    KT_ASSERT_EQ(send_id(&q, &dev, 6), TXQ_HELD);
    KT_ASSERT_EQ(send_id(&q, &dev, 7), TXQ_HELD);      // behind 6, though the device was not asked
    dev.room = 1;
    KT_ASSERT(!txq_flush(&q, fake_xmit, &dev));        // 6 goes, 7 waits
    dev.room = 100;
    dev.never = 8;
    KT_ASSERT_EQ(send_id(&q, &dev, 8), TXQ_REFUSED);   // 7 first, then 8 refused for good
    KT_ASSERT(txq_flush(&q, fake_xmit, &dev));
    net_unlock();
    static const uint32_t want[] = { 1, 2, 3, 4, 5, 6, 7 };
    KT_ASSERT_EQ(dev.nsent, sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < dev.nsent; i++)
        if (dev.sent[i] != want[i])
            KT_FAIL("frame %u sent as the %u-th, want %u", dev.sent[i], i + 1, want[i]);
    KT_ASSERT_EQ(q.n, 0);
    KT_ASSERT_EQ(q.held, 3);
    KT_ASSERT_EQ(q.dropped, 0);
}

KTEST(net_txq_holds_at_most_its_bound_and_drops_none_below_it)
{
    dev = (struct fake_dev){ .room = 0 };
    q = (struct txq){ 0 };
    net_lock();
    for (uint32_t id = 1; id <= TXQ_MAX; id++)
        if (send_id(&q, &dev, id) != TXQ_HELD) {
            net_unlock();
            KT_FAIL("frame %u of %u not held", id, TXQ_MAX);
        }
    enum txq_result over = send_id(&q, &dev, TXQ_MAX + 1);
    dev.never = 3;                  // a held frame the device refuses for good is let go
    dev.room = SENT_MAX;
    bool empty = txq_flush(&q, fake_xmit, &dev);
    net_unlock();
    KT_ASSERT_EQ(over, TXQ_FULL);
    KT_ASSERT(empty);
    KT_ASSERT_EQ(q.dropped, 1);
    KT_ASSERT_EQ(dev.nsent, TXQ_MAX - 1);
    for (uint32_t i = 0, want = 1; i < dev.nsent; i++, want++) {
        if (want == 3)
            want++;
        if (dev.sent[i] != want)
            KT_FAIL("the %u-th frame sent is %u, want %u", i + 1, dev.sent[i], want);
    }
}
