// SPDX-License-Identifier: MIT
// lwIP's network interface over a NIC (drivers/net/netdev.h).
//
// The port is each device's consumer. Its ready function, which the
// driver calls from the queue's interrupt, only notes the queue in a word
// and posts the stack's work (net_post); when the stack lock is free it
// also tells the netpoller (netpoll_wake), so an M polls: docs/net.md's
// protocol, step 1. The frames themselves are taken by the stack lock's
// holder (ether_poll, from the stack's work loop), so the lock's holder
// is the rx owner and the tx owner of every queue, as netdev.h asks: one
// context at a time per side.
//
// A queue is polled BUDGET frames at a time; one that still has frames
// after ROUNDS polls stays noted and its work posted again, so a flood
// is taken in turns with everything else the stack does (and, past the
// stack's own limit, handed to the netpoller). A queue whose frames are
// all taken gets its interrupt back (irq_enable); if frames came
// meanwhile, it stays noted.
//
// Receive checksums: a device that checks them (NETDEV_F_RX_CSUM) marks
// the frames it checked, or that the host left with the checksum to fill
// in (virtio's NEEDS_CSUM over a tap), so lwIP's own TCP and UDP checks
// are off on its interface and the frames without the mark are checked
// here, before lwIP sees them.
//
// Addresses: DHCP by default; kparams' ip= and gw= (kernel/cmdline.h) set
// a static one on the first device. The address is printed when it is
// bound ("net: net0 10.0.2.15/24 gw 10.0.2.2").
#include "net/ether.h"
#include "net/stack.h"
#include "net/synq.h"
#include "net/txq.h"
#include "drivers/net/netdev.h"
#include "kernel/cmdline.h"
#include "kernel/netpoll.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include <lwip/dhcp.h>
#include <lwip/etharp.h>
#include <lwip/inet_chksum.h>
#include <lwip/ip4.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/prot/ethernet.h>
#include <lwip/prot/ip4.h>
#include <lwip/prot/tcp.h>
#include <lwip/prot/udp.h>
#include <netif/ethernet.h>

#define BUDGET 64
#define ROUNDS 4

struct ether {
    struct netif nif;               // the stack lock held
    struct netdev *dev;             // set at attach, read-only after
    struct netdev_consumer consumer;
    bool check_rx_csum;             // lwIP's checks off: unmarked frames checked here
    // atomic, any core
    uint64_t rxq;                   // queues with frames (or room) noted, a bit each
    uint32_t link;                  // a link change to report
    // the stack lock held
    uint64_t rx_frames, rx_dropped;
    struct txq txq;                 // queue 0's frames its ring had no room for
};

static struct ether ethers[NETDEV_MAX];
static uint32_t nethers;            // written once, before any interrupt can use it

// Interrupt context (netdev.h): note the queue, post the work.
static void ether_ready(void *ctx, struct netdev *dev, uint16_t q, uint32_t events)
{
    struct ether *e = ctx;
    (void)dev;
    if (events & (NETDEV_EV_RX | NETDEV_EV_TX))
        __atomic_fetch_or(&e->rxq, 1ull << q, __ATOMIC_RELEASE);   // pairs with ether_poll's acquire exchange
    if (events & NETDEV_EV_LINK)
        __atomic_store_n(&e->link, 1, __ATOMIC_RELEASE);          // pairs with ether_poll's acquire exchange
    if (!net_post(NET_WORK_RX))
        netpoll_wake();
}

// The 16-bit ones-complement sum of an IPv4 TCP or UDP segment with its
// pseudo-header is right (or there is nothing to check). p holds the
// whole Ethernet frame.
static bool transport_csum_ok(struct pbuf *p)
{
    if (p->len < SIZEOF_ETH_HDR + IP_HLEN)
        return true;                // lwIP refuses it for its own reasons
    const struct eth_hdr *eh = p->payload;
    if (eh->type != PP_HTONS(ETHTYPE_IP))
        return true;
    const struct ip_hdr *ip = (const struct ip_hdr *)((const uint8_t *)p->payload + SIZEOF_ETH_HDR);
    uint16_t hlen = (uint16_t)(IPH_HL(ip) * 4), tot = lwip_ntohs(IPH_LEN(ip));
    uint8_t proto = IPH_PROTO(ip);
    if ((proto != IP_PROTO_TCP && proto != IP_PROTO_UDP) || hlen < IP_HLEN || tot < hlen ||
        p->tot_len < SIZEOF_ETH_HDR + tot || (IPH_OFFSET(ip) & PP_HTONS(IP_OFFMASK | IP_MF)))
        return true;                // not a whole segment: lwIP refuses or reassembles it (fragments
                                    // are checked below ip4_reass only by the device's mark)
    uint16_t len = (uint16_t)(tot - hlen);
    if (proto == IP_PROTO_UDP) {
        if (len < UDP_HLEN)
            return true;
        const struct udp_hdr *u = (const struct udp_hdr *)((const uint8_t *)ip + hlen);
        if (u->chksum == 0)
            return true;            // UDP over IPv4 without a checksum
    }
    ip4_addr_t src, dst;
    ip4_addr_copy(src, ip->src);
    ip4_addr_copy(dst, ip->dest);
    uint16_t off = (uint16_t)(SIZEOF_ETH_HDR + hlen);
    if (pbuf_remove_header(p, off))
        return false;
    u16_t sum = inet_chksum_pseudo_partial(p, proto, len, len, &src, &dst);
    pbuf_add_header(p, off);
    return sum == 0;
}

// The rx owner's deliver (netdev.h): the frame copied into a pbuf and
// handed to lwIP (ethernet_input, through nif.input).
static void ether_deliver(void *ctx, const void *frame, uint32_t len, uint32_t flags)
{
    struct ether *e = ctx;
    struct pbuf *p = len <= 0xffff ? pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL) : 0;
    if (!p) {
        e->rx_dropped++;            // lwIP's memory budget is spent: as a full ring would
        return;
    }
    pbuf_take(p, frame, (u16_t)len);
    if (e->check_rx_csum && !(flags & NETDEV_RX_CSUM_OK) && !transport_csum_ok(p)) {
        pbuf_free(p);
        e->rx_dropped++;
        return;
    }
    e->rx_frames++;
    if (e->nif.input(p, &e->nif) != ERR_OK)
        pbuf_free(p);
}

static enum netdev_xmit_result ether_xmit(void *ctx, const struct netdev_frag *frags, uint32_t nfrags)
{
    struct ether *e = ctx;
    return e->dev->ops->xmit(e->dev, 0, frags, nfrags, 0);
}

// lwIP's linkoutput: the stack lock's holder is the tx owner; queue 0. A
// frame the ring has no room for waits in the backlog (net/txq.c).
static err_t ether_output(struct netif *nif, struct pbuf *p)
{
    struct ether *e = nif->state;
    struct netdev_frag frags[16];
    uint32_t n = 0;
    for (struct pbuf *q = p; q; q = q->next) {
        if (n == sizeof frags / sizeof frags[0])
            return ERR_BUF;
        if (q->len)
            frags[n++] = (struct netdev_frag){ q->payload, q->len };
    }
    switch (txq_send(&e->txq, frags, n, ether_xmit, e)) {
    case TXQ_SENT:
    case TXQ_HELD:
        return ERR_OK;
    case TXQ_FULL:
        return ERR_MEM;             // TCP keeps the segment; a datagram is lost, as on a full ring
    case TXQ_REFUSED:
    default:
        return ERR_BUF;
    }
}

// A TCP segment lwIP sends to a peer before or without a connection: a
// SYN-ACK or a reset.
static bool handshake_answer(const struct pbuf *p)
{
    if (p->len < IP_HLEN)
        return false;
    const struct ip_hdr *ip = p->payload;
    uint16_t hlen = (uint16_t)(IPH_HL(ip) * 4);
    if (IPH_PROTO(ip) != IP_PROTO_TCP || hlen < IP_HLEN || p->len < hlen + TCP_HLEN)
        return false;
    uint8_t flags = TCPH_FLAGS((const struct tcp_hdr *)((const uint8_t *)p->payload + hlen));
    return (flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK) || (flags & TCP_RST);
}

// lwIP's output of an IPv4 packet: etharp_output, but while a SYN flood
// is answered (its SYN-ACKs, and its half-open connections' retransmitted
// ones, go to spoofed addresses), a SYN-ACK or reset to a neighbour on the
// link whose address the ARP table lacks only asks for it, and is dropped.
// etharp_output would queue it in a new table entry, and lwIP makes room
// for one by ending the oldest resolved entry first, so a flood from more
// sources than the table holds (ARP_TABLE_SIZE) would keep ending real
// clients' entries, and the answers waiting in them, while it lasts. A
// real peer answers the request, and its retransmission finds its entry.
static err_t ether_ip_output(struct netif *nif, struct pbuf *p, const ip4_addr_t *dst)
{
    struct eth_addr *mac;
    const ip4_addr_t *ip;
    if (synq_flooded_within(TCP_SYN_RCVD_TIMEOUT) && ip4_addr_netcmp(dst, netif_ip4_addr(nif), netif_ip4_netmask(nif)) &&
        !ip4_addr_isbroadcast(dst, nif) && handshake_answer(p) && etharp_find_addr(nif, dst, &mac, &ip) < 0) {
        etharp_request(nif, dst);
        return ERR_OK;
    }
    return etharp_output(nif, p, dst);
}

static void ether_status(struct netif *nif)
{
    if (ip4_addr_isany_val(*netif_ip4_addr(nif)))
        return;
    char ip[16], gw[16];
    ip4addr_ntoa_r(netif_ip4_addr(nif), ip, sizeof ip);
    ip4addr_ntoa_r(netif_ip4_gw(nif), gw, sizeof gw);
    uint32_t mask = lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(nif)));
    int prefix = 0;
    while (prefix < 32 && (mask & (1u << (31 - prefix))))
        prefix++;
    kprintf("net: %s %s/%d%s%s\n", ((struct ether *)nif->state)->dev->name, ip,
            prefix, ip4_addr_isany_val(*netif_ip4_gw(nif)) ? "" : " gw ", ip4_addr_isany_val(*netif_ip4_gw(nif)) ? "" : gw);
}

static err_t ether_init(struct netif *nif)
{
    struct ether *e = nif->state;
    nif->name[0] = 'e';
    nif->name[1] = 'n';
    nif->hwaddr_len = ETH_ALEN;
    memcpy(nif->hwaddr, e->dev->mac, ETH_ALEN);
    nif->mtu = e->dev->mtu;
    nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    nif->output = ether_ip_output;
    nif->linkoutput = ether_output;
    netif_set_hostname(nif, "goro");
    if (e->check_rx_csum)
        NETIF_SET_CHECKSUM_CTRL(nif, NETIF_CHECKSUM_ENABLE_ALL & ~(NETIF_CHECKSUM_CHECK_TCP | NETIF_CHECKSUM_CHECK_UDP));
    return ERR_OK;
}

void ether_attach_all(void)
{
    net_assert_locked();
    uint32_t n = netdev_count();
    for (uint32_t i = 0; i < n && nethers < NETDEV_MAX; i++) {
        struct ether *e = &ethers[nethers];
        e->dev = netdev_get(i);
        ASSERT(e->dev->nqueues <= 64);
        e->check_rx_csum = (e->dev->features & NETDEV_F_RX_CSUM) != 0;
        e->consumer = (struct netdev_consumer){ ether_ready, e };
        ip4_addr_t ip, mask, gw;
        bool fixed = nethers == 0 && kparams.ip_addr;
        ip4_addr_set_u32(&ip, fixed ? lwip_htonl(kparams.ip_addr) : 0);
        ip4_addr_set_u32(&mask, fixed ? lwip_htonl(kparams.ip_prefix ? ~0u << (32 - kparams.ip_prefix) : 0) : 0);
        ip4_addr_set_u32(&gw, fixed ? lwip_htonl(kparams.ip_gw) : 0);
        if (!netif_add(&e->nif, &ip, &mask, &gw, e, ether_init, ethernet_input)) {
            kprintf("net: %s: lwIP refused the interface\n", e->dev->name);
            continue;
        }
        netif_set_status_callback(&e->nif, ether_status);
        if (nethers == 0)
            netif_set_default(&e->nif);
        netif_set_up(&e->nif);
        if (netdev_link_up(e->dev))
            netif_set_link_up(&e->nif);
        if (netdev_attach(e->dev, &e->consumer)) {
            kprintf("net: %s has a consumer already\n", e->dev->name);
            netif_remove(&e->nif);
            continue;
        }
        nethers++;
        if (!fixed)
            dhcp_start(&e->nif);
        else
            ether_status(&e->nif);
        // Frames may wait already, and every interrupt is off until polled.
        __atomic_fetch_or(&e->rxq, e->dev->nqueues >= 64 ? ~0ull : (1ull << e->dev->nqueues) - 1,
                          __ATOMIC_RELEASE);                        // pairs with ether_poll's acquire exchange
        net_post(NET_WORK_RX);
    }
}

// One queue's turn: true when it still has frames.
static bool poll_queue(struct ether *e, uint16_t q)
{
    const struct netdev_ops *ops = e->dev->ops;
    for (int round = 0; round < ROUNDS; round++) {
        if (ops->rx_poll(e->dev, q, BUDGET, ether_deliver, e) < BUDGET && ops->irq_enable(e->dev, q))
            return false;
    }
    return true;
}

bool ether_poll(void)
{
    net_assert_locked();
    bool left = false;
    for (uint32_t i = 0; i < nethers; i++) {
        struct ether *e = &ethers[i];
        if (__atomic_load_n(&e->link, __ATOMIC_RELAXED) &&                 // a hint; the exchange decides
            __atomic_exchange_n(&e->link, 0, __ATOMIC_ACQUIRE)) {         // pairs with ether_ready's release
            if (netdev_link_up(e->dev))
                netif_set_link_up(&e->nif);
            else
                netif_set_link_down(&e->nif);
        }
        if (e->txq.head)
            txq_flush(&e->txq, ether_xmit, e);     // refused, it asked for NETDEV_EV_TX, which posts this poll
        uint64_t qs = __atomic_exchange_n(&e->rxq, 0, __ATOMIC_ACQUIRE);  // pairs with ether_ready's release or
        uint64_t again = 0;
        while (qs) {
            uint16_t q = (uint16_t)__builtin_ctzll(qs);
            qs &= qs - 1;
            if (q < e->dev->nqueues && poll_queue(e, q))
                again |= 1ull << q;
        }
        if (again) {
            __atomic_fetch_or(&e->rxq, again, __ATOMIC_RELEASE);           // pairs with the exchange above
            left = true;
        }
    }
    return left;
}

void ether_stats(uint32_t i, uint64_t *rx_frames, uint64_t *rx_dropped)
{
    net_assert_locked();
    *rx_frames = i < nethers ? ethers[i].rx_frames : 0;
    *rx_dropped = i < nethers ? ethers[i].rx_dropped : 0;
}
