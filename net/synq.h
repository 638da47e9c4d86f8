// SPDX-License-Identifier: MIT
// A listener's half-open connections (net/synq.c): counted, kept oldest
// first, and bounded. Stack lock held for all of it (net/stack.h).
#ifndef GORO_NET_SYNQ_H
#define GORO_NET_SYNQ_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_pcb;

// Half-open connections a listener holds; a SYN that would make one more
// is answered by its SYN cookie alone (net/synq.c). A burst of real
// connects keeps about as many half-open as ACKs wait in the receive ring
// and the tap's queue: up to about 300 with 256 connects in flight. A
// flood of spoofed SYNs keeps all SYNQ_MAX, each retransmitting its
// SYN-ACK to an address never resolved: with 1024, after a 2000-SYN flood
// a loaded host's e1000e guest answered no ping within 10 s.
#define SYNQ_MAX 512

// Gives lpcb, a listening pcb of goro's net API, its queue; false when
// memory is short (the listener is then unusable: close it).
// accept_full(arg) says whether the listener's connections waiting for
// accept are at their limit: then, as Linux does, a new SYN is dropped
// and a half-open connection's ACK is held back (synq_holds), so the
// peer retries later instead of being reset.
bool synq_listen(struct tcp_pcb *lpcb, bool (*accept_full)(void *arg), void *arg);
// pcb, accepted by its listener, is no longer half-open.
void synq_established(struct tcp_pcb *pcb);
// Should pcb's segment (an ACK of its SYN_RCVD handshake) be dropped,
// because its listener cannot take one more connection now?
bool synq_holds(struct tcp_pcb *pcb);
// Has a handshake gone without a pcb within the last ms milliseconds:
// lwIP ended a half-open connection (a reset, its SYN_RCVD timeout,
// memory short), or a SYN was answered by its cookie alone? Only then can
// a segment be for a connection a SYN cookie must make (net/syncookie.c).
bool synq_unheld_within(uint32_t ms);
// Has a SYN been answered by its cookie alone (a listener's half-open
// queue full: a flood, most likely) within the last ms milliseconds?
bool synq_flooded_within(uint32_t ms);

// Since boot (racy reads): SYNs dropped and ACKs held back (the accept
// queue full), and SYNs answered by their cookie alone (the half-open
// queue full).
struct synq_counts {
    unsigned long long overflows;
    unsigned long long cookies;
};
void synq_counts(struct synq_counts *out);

#endif
