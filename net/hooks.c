// SPDX-License-Identifier: MIT
// lwIP's IPv4 input hook (LWIP_HOOK_IP4_INPUT, lwipopts.h): every IPv4
// packet, from a device or the loopback queue, passes here under the
// stack lock before lwIP looks at it. Returning 1 means "taken": the
// hook frees the packet and lwIP forgets it.
//
// Besides the tests' filter, it keeps a SYN flood from shutting a
// listener: lwIP drops a SYN while the listener's half-open connections
// (SYN_RCVD) fill its backlog, and a half-open one whose peer never
// answers (a spoofed source) goes only after lwIP's SYN_RCVD timeout, 20
// s. So a SYN that finds the backlog full first ends the oldest half-open
// connection, silently (its peer, likely spoofed, gets no reset): a real
// client's connect then waits for nothing, as with BSD's SYN cache.
//
// lwIP's TCP input hook (LWIP_HOOK_TCP_INPACKET_PCB) guards a flaw in
// lwIP 2.1's receive path: a segment that takes one sequence number (a
// FIN, or one byte) and starts exactly 2^31 before rcv_nxt passes
// tcp_receive's signed wrap-around test for "starts before rcv_nxt and
// ends after it", and lwIP then asserts ("insane offset"), which in goro
// is a panic any peer could cause. No such segment is ever acceptable (it
// is 2^31 from the window), so the hook drops it.
#include "net/hooks.h"
#include "net/stack.h"
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
static uint64_t dropped;

// A SYN to port, addressed to dest: if a listener there has its backlog
// full, its oldest half-open connection goes.
static void make_room(uint32_t dest, uint16_t port)
{
    struct tcp_pcb_listen *l;
    for (l = tcp_listen_pcbs.listen_pcbs; l; l = l->next)
        if (l->local_port == port &&
            (ip_addr_isany(&l->local_ip) || ip4_addr_get_u32(ip_2_ip4(&l->local_ip)) == dest))
            break;
    if (!l || l->accepts_pending < l->backlog)
        return;
    struct tcp_pcb *oldest = 0;
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (pcb->state == SYN_RCVD && pcb->listener == l &&
            (!oldest || (u32_t)(tcp_ticks - pcb->tmr) > (u32_t)(tcp_ticks - oldest->tmr)))
            oldest = pcb;
    if (oldest)
        tcp_abandon(oldest, 0);
}

int net_hook_ip4_input(struct pbuf *p, struct netif *inp)
{
    (void)inp;
    if (p->len < IP_HLEN)
        return 0;
    const struct ip_hdr *ip = p->payload;
    uint16_t hlen = (uint16_t)(IPH_HL(ip) * 4);
    if (IPH_PROTO(ip) != IP_PROTO_TCP || hlen < IP_HLEN || p->len < hlen + TCP_HLEN ||
        (IPH_OFFSET(ip) & PP_HTONS(IP_OFFMASK | IP_MF)))
        return 0;
    const struct tcp_hdr *tcp = (const struct tcp_hdr *)((const uint8_t *)p->payload + hlen);
    uint8_t flags = TCPH_FLAGS(tcp);
    if (!(flags & TCP_SYN) || (flags & TCP_ACK))
        return 0;
    uint16_t port = lwip_ntohs(tcp->dest);
    if (port == drop_syn_port && port) {
        dropped++;
        pbuf_free(p);
        return 1;
    }
    // A header that lwIP will refuse (its checksum, its length) still
    // costs the oldest half-open connection only when the backlog is full.
    make_room(ip4_addr_get_u32(&ip->dest), port);
    return 0;
}

void net_hook_drop_syn_to(uint16_t port)
{
    net_start();
    net_lock();
    drop_syn_port = port;
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
    uint32_t len = p->tot_len + ((TCPH_FLAGS(hdr) & (TCP_FIN | TCP_SYN)) ? 1 : 0);
    if (len > 0 && (uint32_t)(pcb->rcv_nxt - hdr->seqno) == 0x80000000u) {
        dropped++;
        return ERR_ABRT;
    }
    return ERR_OK;
}
