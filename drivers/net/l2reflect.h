// SPDX-License-Identifier: MIT
// The L2 reflector: every frame a device receives goes straight back out
// of the queue it came in on, its source and destination MACs swapped,
// from the interrupt and with no stack. What a host tool measures against
// it is the frame rate the machine's NIC path allows (under QEMU: the
// emulator's floor), with nothing of goro's above the driver in the way.
#ifndef GORO_L2REFLECT_H
#define GORO_L2REFLECT_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/net/netdev.h"

// Options of l2reflect_start.
enum {
    // Each IPv4 UDP datagram goes back with its checksum left to the
    // device (NETDEV_TX_CSUM), where the device offers that: a datagram
    // that came with its checksum still to fill in (virtio's NEEDS_CSUM)
    // leaves with a whole one, and a host tool checks both offloads at once.
    L2REFLECT_CSUM = 1u << 0,
};

// Any context but interrupts: dev's consumer becomes the reflector, and
// every queue's interrupt is turned on. False when dev has another
// consumer, or a queue without an interrupt (nic_irq=none). opts: the
// L2REFLECT_* options.
bool l2reflect_start(struct netdev *dev, uint32_t opts);
// Whether the device's checksum is asked for (L2REFLECT_CSUM, and the
// device offers it).
bool l2reflect_csum(const struct netdev *dev);
// Any context but interrupts: interrupts off, the consumer detached;
// returns once no reflection is running.
void l2reflect_stop(struct netdev *dev);

// Counts since l2reflect_start, summed over the queues.
struct l2reflect_stats {
    uint64_t reflected;         // frames sent back
    uint64_t dropped;           // frames the transmit ring had no room for
    uint64_t interrupts;        // ready calls
    uint64_t requeued;          // times a busy queue was left to a self-interrupt
    uint64_t off_core;          // ready calls on another core than the queue's (netdev_queue.cpu)
    uint64_t csum_known;        // frames received marked NETDEV_RX_CSUM_OK
    uint64_t csum_asked;        // frames sent back with NETDEV_TX_CSUM
    uint64_t queue_reflected[NETDEV_MAX_QUEUES];    // reflected, per queue pair
};
void l2reflect_stats(const struct netdev *dev, struct l2reflect_stats *out);

#endif
