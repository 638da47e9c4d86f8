// SPDX-License-Identifier: MIT
// A device's transmit backlog: what the ring had no room for.
//
// lwIP hands a frame to the interface once. Refused with ERR_MEM, a TCP
// segment stays unsent until lwIP's next output on that connection, and
// with nothing else in flight that is the peer's retransmission: 200 ms or
// more on Linux, past wrk's 2 s timeout after a few. Hundreds of
// keep-alive connections answered at once fill a virtio ring often (QEMU
// drains it in turns with everything else it does). So a refused frame is
// copied here and sent, in order, when the device says it has room
// (NETDEV_EV_TX), as Linux's qdisc holds what a stopped queue cannot take.
// Later frames go behind it, never past it.
//
// Invariants: n counts the list's frames and is at most TXQ_MAX; a frame
// is on the list from its copy to its send, and freed then; only the
// stack lock's holder touches any of it.
#include "net/txq.h"
#include "net/netmem.h"
#include "lib/panic.h"

struct txq_frame {
    struct txq_frame *next;
    uint32_t len;
    uint8_t bytes[];
};

bool txq_flush(struct txq *q, txq_xmit_fn *xmit, void *ctx)
{
    while (q->head) {
        struct txq_frame *f = q->head;
        struct netdev_frag frag = { f->bytes, f->len };
        if (xmit(ctx, &frag, 1) == NETDEV_TX_BUSY)
            return false;
        q->head = f->next;          // sent, or a frame the device never sends
        if (!q->head)
            q->tail = 0;
        q->n--;
        netmem_free(f);
    }
    return true;
}

enum txq_result txq_send(struct txq *q, const struct netdev_frag *frags, uint32_t nfrags,
                         txq_xmit_fn *xmit, void *ctx)
{
    if (!q->head || txq_flush(q, xmit, ctx)) {
        switch (xmit(ctx, frags, nfrags)) {
        case NETDEV_TX_OK:
            return TXQ_SENT;
        case NETDEV_TX_BUSY:
            break;
        case NETDEV_TX_DROPPED:
        default:
            return TXQ_REFUSED;
        }
    }
    uint32_t len = 0;
    for (uint32_t i = 0; i < nfrags; i++)
        len += frags[i].len;
    struct txq_frame *f = q->n < TXQ_MAX ? netmem_alloc(sizeof *f + len) : 0;
    if (!f) {
        q->dropped++;
        return TXQ_FULL;
    }
    netdev_frags_copy(f->bytes, frags, nfrags);
    f->len = len;
    f->next = 0;
    if (q->tail)
        q->tail->next = f;
    else
        q->head = f;
    q->tail = f;
    q->n++;
    q->held++;
    ASSERT(q->n <= TXQ_MAX);
    return TXQ_HELD;
}
