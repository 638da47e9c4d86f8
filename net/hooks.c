// SPDX-License-Identifier: MIT
// lwIP's IPv4 input hook (LWIP_HOOK_IP4_INPUT, lwipopts.h): every IPv4
// packet, from a device or the loopback queue, passes here under the
// stack lock before lwIP looks at it. Returning 1 means "taken": the
// hook frees the packet and lwIP forgets it.
#include "net/hooks.h"
#include "net/stack.h"
#include <lwip/ip4.h>
#include <lwip/prot/ip.h>
#include <lwip/pbuf.h>
#include <lwip/prot/ip4.h>
#include <lwip/prot/tcp.h>

// stack lock held (written under it)
static uint16_t drop_syn_port;
static uint64_t dropped;

int net_hook_ip4_input(struct pbuf *p, struct netif *inp)
{
    (void)inp;
    if (!drop_syn_port || p->len < IP_HLEN)
        return 0;
    const struct ip_hdr *ip = p->payload;
    uint16_t hlen = (uint16_t)(IPH_HL(ip) * 4);
    if (IPH_PROTO(ip) != IP_PROTO_TCP || hlen < IP_HLEN || p->len < hlen + TCP_HLEN)
        return 0;
    const struct tcp_hdr *tcp = (const struct tcp_hdr *)((const uint8_t *)p->payload + hlen);
    uint8_t flags = TCPH_FLAGS(tcp);
    if (lwip_ntohs(tcp->dest) != drop_syn_port || !(flags & TCP_SYN) || (flags & TCP_ACK))
        return 0;
    dropped++;
    pbuf_free(p);
    return 1;
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
