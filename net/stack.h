// SPDX-License-Identifier: MIT
// The network stack's lock and its work (net/stack.c): lwIP is called only
// by the lock's holder. docs/net.md, "The lwIP port", has the protocol.
#ifndef GORO_NET_STACK_H
#define GORO_NET_STACK_H

#include <stdbool.h>
#include <stdint.h>

// From a goroutine or g0: waits (spinning) until the lock is free. The
// holder is pinned (no preemption, no park) until net_unlock.
void net_lock(void);
// Any context, interrupt handlers included: takes the lock if it is free.
bool net_trylock(void);
// Does the work posted meanwhile (net_post) before letting go, then
// readies the goroutines the work made ready. From a goroutine.
void net_unlock(void);
// The holder's check (an ASSERT).
void net_assert_locked(void);

// Work for the stack, from any context (NET_WORK_*): whoever holds the
// lock, or takes it next, does it. Returns whether the caller should see
// that someone comes: false when the lock was free (the caller arranges a
// poll), true when a holder will see it before it lets go.
enum {
    NET_WORK_TIMERS = 1,        // lwIP's timeouts may be due
    NET_WORK_RX = 2,            // a device has frames (or transmit room)
};
bool net_post(uint32_t what);

// The stack lock's holder: the list its work readies goroutines onto
// (lwIP's callbacks mark poll descriptors ready into it, netpoll_ready);
// they run once the holder lets go.
struct netpoll_list *net_ready_list(void);

// The ceiling on a TCP connection's retransmission timeout, Linux's
// TCP_RTO_MAX (RFC 6298 allows any of 60 s or more); lwIP's own has none
// (net/stack.c). _TICKS is in lwIP's slow-timer ticks (TCP_SLOW_INTERVAL,
// from lwip/priv/tcp_priv.h, which its user includes).
#define NET_TCP_RTO_MAX_MS 120000
#define NET_TCP_RTO_MAX_TICKS (NET_TCP_RTO_MAX_MS / TCP_SLOW_INTERVAL)

// Brings lwIP up (once; every entry of the network API calls it first):
// the loopback interface at 127.0.0.1, lwIP's timers. From a goroutine.
void net_start(void);

#endif
