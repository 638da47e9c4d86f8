// SPDX-License-Identifier: MIT
// SYN cookies for lwIP (net/syncookie.c): a passive connection's initial
// sequence number says, to whoever knows the boot's secret key, which
// handshake it answered, so a half-open connection lwIP no longer holds
// can be made again from its peer's next segment. Stack lock held for all
// of it (net/stack.h); called from lwIP's hooks (lwipopts.h, net/hooks.c).
#ifndef GORO_NET_SYNCOOKIE_H
#define GORO_NET_SYNCOOKIE_H

#include <stdbool.h>
#include <stdint.h>

struct netif;
struct ip_hdr;
struct tcp_hdr;

// A cookie stays good for SYNCOOKIE_SLOTS periods of SYNCOOKIE_SLOT_MS
// after its SYN-ACK: about 16 minutes, long enough for a client whose
// every ACK of the handshake was lost to be served when it sends its
// request (make test-conns holds connections idle for minutes first).
#define SYNCOOKIE_SLOT_MS 64000u
#define SYNCOOKIE_SLOTS 16u

// A SYN (without ACK) arriving, at the IPv4 input hook: its addresses,
// sequence number and MSS are noted for the initial sequence number lwIP
// asks for next (syncookie_isn), if it makes a connection of it.
void syncookie_note_syn(const struct ip_hdr *ip, const struct tcp_hdr *tcp, uint16_t tcp_len);

// lwIP's LWIP_HOOK_TCP_ISN: the cookie for the SYN just noted when the
// addresses and ports are its own (a passive open), else a random number
// (an active open). Ports in host order; the addresses are ip4_addr_t.
uint32_t syncookie_isn(const void *local_ip, uint16_t local_port, const void *remote_ip, uint16_t remote_port);

// An ACK (without SYN or RST) arriving, at the IPv4 input hook. When it
// is for a listening port, matches no connection, and acknowledges a
// cookie of ours, the connection is made again: lwIP is handed the SYN
// the cookie stands for (it answers a SYN-ACK the client takes as a
// duplicate), and the ACK then completes it as if nothing had been lost.
// Returns 1 when the ACK must be dropped (its connection could not be
// made now, the listener's queue being full: the client repeats it),
// else 0 (lwIP goes on with it).
int syncookie_ack(struct netif *inp, const struct ip_hdr *ip, const struct tcp_hdr *tcp);

// Is lwIP, inside syncookie_ack, taking the SYN a cookie stands for? That
// handshake's ACK is at hand: its listener admits it past a full half-open
// queue (net/synq.c), as it completes at once.
bool syncookie_rebuilding(void);

#endif
