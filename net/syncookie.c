// SPDX-License-Identifier: MIT
// SYN cookies (net/syncookie.h), as Linux's and BSD's make them: lwIP
// keeps every half-open connection as a pcb, and ends it after its
// SYN_RCVD timeout, 20 s, when no ACK of its handshake came (every one
// lost in a burst: the client, whose side is open, never repeats a bare
// ACK). The client's first request then found only the listener, which
// reset it. With the initial sequence number a cookie, that segment
// instead proves the handshake happened, and the connection is made
// again. A SYN that finds its listener's half-open queue full is answered
// by its cookie alone, no pcb kept (net/synq.c), and its ACK makes the
// connection the same way.
//
// A cookie, 32 bits: the period it was made in (SYNCOOKIE_SLOT_MS each,
// its low 4 bits), the index of the peer's MSS in mss_table (2 bits),
// and 26 bits of SipHash-2-4, under a key drawn at the first SYN, of the
// addresses, the ports, the peer's own initial sequence number and the
// period. Only the boot's key makes a cookie that checks, and one for a
// later connection between the same ports differs (the peer's sequence
// number is in it). The connection made again has what the SYN said
// except its window scale and SACK (lwIP uses neither) and an MSS
// rounded down to mss_table's.
#include "net/syncookie.h"
#include "net/stack.h"
#include "net/synq.h"
#include <lwip/inet_chksum.h>
#include <lwip/ip.h>
#include <lwip/ip4.h>
#include <lwip/pbuf.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/prot/ip.h>
#include <lwip/prot/ip4.h>
#include <lwip/prot/tcp.h>
#include <lwip/sys.h>
#include <lwip/tcp.h>
#include <string.h>

static const uint16_t mss_table[4] = {536, 1220, 1440, 1460};

// stack lock held for all of these
static uint64_t key[2];
static bool keyed;
// The SYN syncookie_note_syn saw last, for syncookie_isn.
static struct {
    uint32_t src, dst;              // network order, as ip4_addr_t holds them
    uint16_t sport, dport;          // host order
    uint32_t seq;
    uint8_t mss_index;
    bool valid;
} noted;
// While syncookie_ack hands lwIP a SYN: the cookie its connection must get.
static struct {
    uint32_t isn;
    bool on;
} rebuilding;

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                \
    do {                                                                        \
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);               \
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                                  \
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                                  \
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);               \
    } while (0)

// SipHash-2-4 of three 64-bit words (24 bytes, little-endian) under key.
static uint64_t siphash3(uint64_t m0, uint64_t m1, uint64_t m2)
{
    uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
    uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
    const uint64_t m[4] = {m0, m1, m2, (uint64_t)24 << 56};
    for (int i = 0; i < 4; i++) {
        v3 ^= m[i];
        SIPROUND;
        SIPROUND;
        v0 ^= m[i];
    }
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static uint32_t now_slot(void)
{
    return sys_now() / SYNCOOKIE_SLOT_MS;
}

// The cookie of a handshake: addresses in network order, ports in host
// order, the peer's initial sequence number, the period, the MSS index.
static uint32_t cookie(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t slot,
                       uint32_t mss_index)
{
    if (!keyed) {
        key[0] = (uint64_t)LWIP_RAND() << 32 | LWIP_RAND();
        key[1] = (uint64_t)LWIP_RAND() << 32 | LWIP_RAND();
        keyed = true;
    }
    uint64_t h = siphash3((uint64_t)src << 32 | dst, (uint64_t)sport << 48 | (uint64_t)dport << 32 | seq, slot);
    return (slot & 15u) << 28 | (mss_index & 3u) << 26 | ((uint32_t)h & 0x3ffffffu);
}

// The MSS option of a SYN's header (tcp_len bytes of it at hand), or
// 536, what a peer that sends none takes (RFC 9293).
static uint16_t syn_mss(const struct tcp_hdr *tcp, uint16_t tcp_len)
{
    const uint8_t *o = (const uint8_t *)tcp;
    uint16_t end = (uint16_t)(TCPH_HDRLEN(tcp) * 4);
    if (end > tcp_len)
        end = tcp_len;
    for (uint16_t i = TCP_HLEN; i < end;) {
        if (o[i] == 0)
            break;
        if (o[i] == 1) {
            i++;
            continue;
        }
        if (i + 1 >= end || o[i + 1] < 2)
            break;
        if (o[i] == 2 && o[i + 1] == 4 && i + 4 <= end)
            return (uint16_t)(o[i + 2] << 8 | o[i + 3]);
        i = (uint16_t)(i + o[i + 1]);
    }
    return 536;
}

void syncookie_note_syn(const struct ip_hdr *ip, const struct tcp_hdr *tcp, uint16_t tcp_len)
{
    net_assert_locked();
    uint16_t mss = syn_mss(tcp, tcp_len);
    uint8_t k = 3;
    while (k > 0 && mss_table[k] > mss)
        k--;
    noted.src = ip->src.addr;
    noted.dst = ip->dest.addr;
    noted.sport = lwip_ntohs(tcp->src);
    noted.dport = lwip_ntohs(tcp->dest);
    noted.seq = lwip_ntohl(tcp->seqno);
    noted.mss_index = k;
    noted.valid = true;
}

uint32_t syncookie_isn(const void *local_ip, uint16_t local_port, const void *remote_ip, uint16_t remote_port)
{
    net_assert_locked();
    uint32_t local = ((const ip4_addr_t *)local_ip)->addr, remote = ((const ip4_addr_t *)remote_ip)->addr;
    if (rebuilding.on)
        return rebuilding.isn;
    if (noted.valid && noted.src == remote && noted.dst == local && noted.sport == remote_port &&
        noted.dport == local_port) {
        noted.valid = false;
        return cookie(remote, local, remote_port, local_port, noted.seq, now_slot(), noted.mss_index);
    }
    return LWIP_RAND();
}

// Is there a pcb for these addresses and ports (host order)?
static bool connection_exists(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
    struct tcp_pcb *lists[] = {tcp_active_pcbs, tcp_tw_pcbs};
    for (int l = 0; l < 2; l++)
        for (struct tcp_pcb *pcb = lists[l]; pcb; pcb = pcb->next)
            if (pcb->remote_port == sport && pcb->local_port == dport && pcb->remote_ip.addr == src &&
                pcb->local_ip.addr == dst)
                return true;
    return false;
}

static bool listening(uint16_t port)
{
    for (struct tcp_pcb_listen *l = tcp_listen_pcbs.listen_pcbs; l; l = l->next)
        if (l->local_port == port)
            return true;
    return false;
}

// The SYN a cookie stands for: from the ACK's addresses and ports, the
// peer's sequence number, the MSS of the cookie and the ACK's window.
static struct pbuf *syn_of(const struct ip_hdr *ip, const struct tcp_hdr *tcp, uint32_t seq, uint16_t mss)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, IP_HLEN + TCP_HLEN + 4, PBUF_RAM);
    if (!p)
        return NULL;
    struct ip_hdr *iph = p->payload;
    memset(iph, 0, IP_HLEN + TCP_HLEN + 4);
    IPH_VHL_SET(iph, 4, IP_HLEN / 4);
    IPH_LEN_SET(iph, lwip_htons(IP_HLEN + TCP_HLEN + 4));
    IPH_TTL_SET(iph, 64);
    IPH_PROTO_SET(iph, IP_PROTO_TCP);
    iph->src = ip->src;
    iph->dest = ip->dest;
    IPH_CHKSUM_SET(iph, inet_chksum(iph, IP_HLEN));
    struct tcp_hdr *th = (struct tcp_hdr *)((uint8_t *)iph + IP_HLEN);
    th->src = tcp->src;
    th->dest = tcp->dest;
    th->seqno = lwip_htonl(seq);
    TCPH_HDRLEN_FLAGS_SET(th, (TCP_HLEN + 4) / 4, TCP_SYN);
    th->wnd = tcp->wnd;
    uint8_t *opt = (uint8_t *)th + TCP_HLEN;
    opt[0] = 2, opt[1] = 4, opt[2] = (uint8_t)(mss >> 8), opt[3] = (uint8_t)mss;
    ip4_addr_t src, dst;
    ip4_addr_copy(src, iph->src);
    ip4_addr_copy(dst, iph->dest);
    pbuf_remove_header(p, IP_HLEN);
    th->chksum = ip_chksum_pseudo(p, IP_PROTO_TCP, TCP_HLEN + 4, &src, &dst);
    pbuf_add_header(p, IP_HLEN);
    return p;
}

int syncookie_ack(struct netif *inp, const struct ip_hdr *ip, const struct tcp_hdr *tcp)
{
    net_assert_locked();
    // Every segment of an established connection is such an ACK: unless
    // a handshake went without a pcb within a cookie's life, none can be
    // one to make, and no hash is spent on it.
    if (!keyed || !synq_unheld_within(SYNCOOKIE_SLOTS * SYNCOOKIE_SLOT_MS))
        return 0;
    uint16_t sport = lwip_ntohs(tcp->src), dport = lwip_ntohs(tcp->dest);
    uint32_t src = ip->src.addr, dst = ip->dest.addr;
    uint32_t seq = lwip_ntohl(tcp->seqno) - 1, isn = lwip_ntohl(tcp->ackno) - 1;
    if (!listening(dport))
        return 0;
    // The cookie's period is at most SYNCOOKIE_SLOTS - 1 old: its low 4
    // bits give its age, the hash the rest.
    uint32_t slot = now_slot(), age = (slot - (isn >> 28)) & 15u;
    if (age >= SYNCOOKIE_SLOTS || slot < age)
        return 0;
    uint32_t mss_index = isn >> 26 & 3u;
    if (cookie(src, dst, sport, dport, seq, slot - age, mss_index) != isn || connection_exists(src, dst, sport, dport))
        return 0;
    struct pbuf *syn = syn_of(ip, tcp, seq, mss_table[mss_index]);
    if (!syn)
        return 1;
    rebuilding.isn = isn;
    rebuilding.on = true;
    ip4_input(syn, inp);            // lwIP makes the connection, in SYN_RCVD, and answers a SYN-ACK
    rebuilding.on = false;
    return connection_exists(src, dst, sport, dport) ? 0 : 1;
}

bool syncookie_rebuilding(void)
{
    net_assert_locked();
    return rebuilding.on;
}
