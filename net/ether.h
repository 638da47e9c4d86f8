// SPDX-License-Identifier: MIT
// lwIP's network interfaces over the NICs (net/ether.c): one per device
// drivers/ registered, the first the default route.
#ifndef GORO_NET_ETHER_H
#define GORO_NET_ETHER_H

#include <stdbool.h>
#include <stdint.h>

// The stack lock held, once, at the stack's start: an interface for each
// registered NIC, its consumer attached, DHCP started (or kparams' static
// address), and a first poll posted.
void ether_attach_all(void);
// The stack lock held (the stack's work, NET_WORK_RX): takes the frames
// the NICs' queues hold. True when a queue still has some (a flood): the
// caller gives the stack's work another turn.
bool ether_poll(void);
// The stack lock held: interface i's frames handed to lwIP and dropped
// (lwIP's memory spent, a bad checksum).
void ether_stats(uint32_t i, uint64_t *rx_frames, uint64_t *rx_dropped);

#endif
