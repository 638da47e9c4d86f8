// SPDX-License-Identifier: MIT
// A device's transmit backlog (net/txq.c): the frames its ring had no room
// for, sent in order once it has. Stack lock held for all of it
// (net/stack.h), as the lock's holder is the tx owner (net/ether.c).
#ifndef GORO_NET_TXQ_H
#define GORO_NET_TXQ_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/net/netdev.h"

// Frames held at most, Linux's txqueuelen (1000) and more: a burst of
// answers to every connection of a server at once.
#define TXQ_MAX 4096

struct txq_frame;

struct txq {
    struct txq_frame *head, *tail;  // oldest first
    uint32_t n;
    uint64_t held;                  // frames the device refused and the backlog kept
    uint64_t dropped;               // frames refused by a full backlog or the memory budget
};

// Sends one frame: the device's xmit on the backlog's queue.
typedef enum netdev_xmit_result txq_xmit_fn(void *ctx, const struct netdev_frag *frags, uint32_t nfrags);

enum txq_result {
    TXQ_SENT,       // the device took it
    TXQ_HELD,       // copied into the backlog, to go after the frames before it
    TXQ_FULL,       // neither: the backlog is full or memory short; the caller keeps it
    TXQ_REFUSED,    // the device will never send it (NETDEV_TX_DROPPED)
};

// Sends the frame after every held one: at once when none is held and the
// device takes it, else held (copied). A device that refused a frame
// reports room later (NETDEV_EV_TX): then txq_flush.
enum txq_result txq_send(struct txq *q, const struct netdev_frag *frags, uint32_t nfrags,
                         txq_xmit_fn *xmit, void *ctx);
// Sends held frames, oldest first, until the device refuses one. True
// when none is left.
bool txq_flush(struct txq *q, txq_xmit_fn *xmit, void *ctx);

#endif
