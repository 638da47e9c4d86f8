// SPDX-License-Identifier: MIT
// lwIP's IPv4 input hook (LWIP_HOOK_IP4_INPUT, lwipopts.h): every IPv4
// packet, from a device or the loopback queue, passes here under the
// stack lock before lwIP looks at it. Returning 1 means "taken": the
// hook frees the packet and lwIP forgets it. A SYN is noted for its SYN
// cookie, and an ACK may make the connection its cookie stands for, one
// lwIP ended half-open or never held (net/syncookie.c).
//
// lwIP's TCP input hook (LWIP_HOOK_TCP_INPACKET_PCB) guards a flaw in
// lwIP 2.1's receive path: a segment that takes one sequence number (a
// FIN, or one byte) and starts exactly 2^31 before rcv_nxt passes
// tcp_receive's signed wrap-around test for "starts before rcv_nxt and
// ends after it", and lwIP then asserts ("insane offset"), which in goro
// is a panic any peer could cause. No such segment is ever acceptable (it
// is 2^31 from the window), so the hook drops it. It also drops the ACK
// that would complete a handshake while the listener's accept queue is
// full (net/synq.c), so that the peer repeats it later.
#include "net/hooks.h"
#include "net/stack.h"
#include "net/synq.h"
#include "net/syncookie.h"
#include <lwip/ip4.h>
#include <lwip/prot/ip.h>
#include <lwip/pbuf.h>
#include <lwip/prot/ip4.h>
#include <lwip/prot/tcp.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/tcp.h>
#include <lwip/err.h>

// stack lock held (written under it)
static uint16_t drop_syn_port;
static uint16_t drop_tcp_port;
static uint64_t dropped;

int net_hook_ip4_input(struct pbuf *p, struct netif *inp)
{
    if (p->len < IP_HLEN)
        return 0;
    const struct ip_hdr *ip = p->payload;
    uint16_t hlen = (uint16_t)(IPH_HL(ip) * 4);
    if (IPH_PROTO(ip) != IP_PROTO_TCP || hlen < IP_HLEN || p->len < hlen + TCP_HLEN ||
        (IPH_OFFSET(ip) & PP_HTONS(IP_OFFMASK | IP_MF)))
        return 0;
    const struct tcp_hdr *tcp = (const struct tcp_hdr *)((const uint8_t *)p->payload + hlen);
    if (drop_tcp_port && lwip_ntohs(tcp->dest) == drop_tcp_port) {
        dropped++;
        pbuf_free(p);
        return 1;
    }
    uint8_t flags = TCPH_FLAGS(tcp);
    if ((flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_ACK) {
        if (!syncookie_ack(inp, ip, tcp))
            return 0;
        pbuf_free(p);               // its connection cannot be made again now: the peer repeats it
        return 1;
    }
    if (!(flags & TCP_SYN) || (flags & TCP_ACK))
        return 0;
    uint16_t port = lwip_ntohs(tcp->dest);
    if (port == drop_syn_port && port) {
        dropped++;
        pbuf_free(p);
        return 1;
    }
    syncookie_note_syn(ip, tcp, (uint16_t)(p->len - hlen));
    return 0;
}

void net_hook_drop_syn_to(uint16_t port)
{
    net_start();
    net_lock();
    drop_syn_port = port;
    net_unlock();
}

void net_hook_drop_tcp_to(uint16_t port)
{
    net_start();
    net_lock();
    drop_tcp_port = port;
    net_unlock();
}

uint64_t net_hook_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);    // a count, read racily
}

int net_hook_tcp_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
    // Below SYN_RCVD (CLOSED, LISTEN, SYN_SENT) there is no rcv_nxt yet;
    // LISTEN's pcb is a struct tcp_pcb_listen, which has none at all.
    // hdr's fields are in host order here.
    if (pcb->state < SYN_RCVD)
        return ERR_OK;
    if ((TCPH_FLAGS(hdr) & (TCP_ACK | TCP_RST)) == TCP_ACK && synq_holds(pcb))
        return ERR_INPROGRESS;  // the handshake waits for room to accept; its peer repeats the ACK
    uint32_t len = p->tot_len + ((TCPH_FLAGS(hdr) & (TCP_FIN | TCP_SYN)) ? 1 : 0);
    if (len > 0 && (uint32_t)(pcb->rcv_nxt - hdr->seqno) == 0x80000000u) {
        dropped++;
        return ERR_ABRT;
    }
    return ERR_OK;
}
