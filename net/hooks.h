// SPDX-License-Identifier: MIT
// Test hooks into the stack's receive path (net/hooks.c), as Go's
// socktest filters: what a test cannot get from a real network on
// demand, such as a connect that never completes.
#ifndef GORO_NET_HOOKS_H
#define GORO_NET_HOOKS_H

#include <stdint.h>

// TCP SYN segments (without ACK) to port are dropped on arrival, so a dial
// to it waits for ever (Go's TestDialTimeout); 0 stops dropping. From a
// goroutine.
void net_hook_drop_syn_to(uint16_t port);
// Every TCP segment to port is dropped on arrival, so the connections of
// the port's end never hear from it again: their peers retransmit until
// they give up (a peer gone silent); 0 stops dropping. From a goroutine.
void net_hook_drop_tcp_to(uint16_t port);
// Segments the hook dropped since boot.
uint64_t net_hook_dropped(void);

#endif
