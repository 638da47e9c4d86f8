// SPDX-License-Identifier: MIT
// The NIC drivers end to end, below any stack: frames built here go out
// through the netdev interface and QEMU's user networking (slirp) answers
// them. Slirp's gateway, 10.0.2.2, answers ARP for itself and ICMP echo
// sent to it, so an ARP request and pings of every size up to the MTU
// make a round trip through the driver's transmit and receive paths and
// its interrupt. Each test skips when the machine has no NIC (most runs
// have none); tests/matrix.py's net-* configurations give it one.
#include "kernel/ktest.h"
#include "drivers/net/l2reflect.h"
#include "drivers/net/netdev.h"
#include "drivers/pci/pci.h"
#include "lib/string.h"

#define GUEST_IP 0x0A00020Fu    // 10.0.2.15, slirp's guest address
#define GW_IP 0x0A000202u       // 10.0.2.2, slirp's gateway
#define ETH_ARP 0x0806
#define ETH_IP 0x0800

static const uint8_t broadcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void put16be(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32be(uint8_t *p, uint32_t v) { put16be(p, (uint16_t)(v >> 16)); put16be(p + 2, (uint16_t)v); }
static uint16_t get16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32be(const uint8_t *p) { return (uint32_t)get16be(p) << 16 | get16be(p + 2); }

// The Internet checksum (RFC 1071) of n bytes.
static uint16_t inet_csum(const uint8_t *p, uint32_t n)
{
    uint32_t s = 0;
    for (uint32_t i = 0; i + 1 < n; i += 2)
        s += get16be(p + i);
    if (n & 1)
        s += (uint32_t)p[n - 1] << 8;
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return (uint16_t)~s;
}

// ---- the consumer: counts ready calls, checks where they ran -----------------

struct watch {
    struct netdev *dev;
    uint64_t ready[NETDEV_MAX_QUEUES];      // NETDEV_EV_RX calls per queue
    uint64_t wrong_core;                    // calls on another core than the queue's
    uint64_t link_events;
};
static struct watch watch;

static void on_ready(void *ctx, struct netdev *dev, uint16_t q, uint32_t events)
{
    struct watch *w = ctx;
    (void)dev;
    if (events & NETDEV_EV_LINK)
        kt_add(&w->link_events, 1);
    if (events & NETDEV_EV_RX) {
        if ((uint32_t)core_id() != w->dev->queues[q].cpu)
            kt_add(&w->wrong_core, 1);
        kt_add(&w->ready[q], 1);
    }
}

static const struct netdev_consumer consumer = { on_ready, &watch };

// net0, attached to this file's consumer; NULL (after KT_SKIP) when the
// machine has none.
static struct netdev *open_net0(void)
{
    struct netdev *d = netdev_get(0);
    if (!d)
        return 0;
    memset(&watch, 0, sizeof watch);
    watch.dev = d;
    return netdev_attach(d, &consumer) == 0 ? d : 0;
}

static void close_net(struct netdev *d)
{
    for (uint16_t q = 0; q < d->nqueues; q++)
        d->ops->irq_disable(d, q);
    netdev_detach(d, &consumer);
}

#define OPEN_OR_SKIP(d)                                                           \
    struct netdev *d = open_net0();                                               \
    if (!d)                                                                       \
        KT_SKIP(netdev_get(0) ? "net0 has another consumer" : "no NIC (run a net-* configuration)")

// ---- frames ---------------------------------------------------------------------

static uint32_t arp_request(const struct netdev *d, uint8_t *f, uint32_t target)
{
    memcpy(f, broadcast, ETH_ALEN);
    memcpy(f + 6, d->mac, ETH_ALEN);
    put16be(f + 12, ETH_ARP);
    uint8_t *a = f + ETH_HLEN;
    put16be(a, 1);                  // Ethernet
    put16be(a + 2, ETH_IP);
    a[4] = ETH_ALEN;
    a[5] = 4;
    put16be(a + 6, 1);              // request
    memcpy(a + 8, d->mac, ETH_ALEN);
    put32be(a + 14, GUEST_IP);
    memset(a + 18, 0, ETH_ALEN);
    put32be(a + 24, target);
    return ETH_HLEN + 28;
}

// An ICMP echo request to the gateway with payload bytes of a pattern
// keyed on seq.
static uint32_t echo_request(const struct netdev *d, const uint8_t *gw_mac, uint8_t *f, uint16_t seq,
                             uint32_t payload)
{
    memcpy(f, gw_mac, ETH_ALEN);
    memcpy(f + 6, d->mac, ETH_ALEN);
    put16be(f + 12, ETH_IP);
    uint8_t *ip = f + ETH_HLEN, *icmp = ip + 20;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16be(ip + 2, (uint16_t)(20 + 8 + payload));
    put16be(ip + 4, seq);
    ip[8] = 64;
    ip[9] = 1;                      // ICMP
    put32be(ip + 12, GUEST_IP);
    put32be(ip + 16, GW_IP);
    put16be(ip + 10, inet_csum(ip, 20));
    icmp[0] = 8;                    // echo request
    icmp[1] = 0;
    put16be(icmp + 2, 0);
    put16be(icmp + 4, 0x6f72);      // id "or"
    put16be(icmp + 6, seq);
    for (uint32_t i = 0; i < payload; i++)
        icmp[8 + i] = (uint8_t)(seq * 7 + i);
    put16be(icmp + 2, inet_csum(icmp, 8 + payload));
    return ETH_HLEN + 20 + 8 + payload;
}

// A TFTP read request from UDP port sport to slirp's TFTP server
// (10.0.2.2:69), which answers every request with an error (no directory
// is served) after checking the UDP checksum, which it drops the
// datagram for when wrong. csum: 0 computed here, 1 left to the device
// (the field seeded with the pseudo-header's sum), 2 computed wrong.
static uint32_t tftp_request(const struct netdev *d, const uint8_t *gw_mac, uint8_t *f, uint16_t sport,
                             int csum, struct netdev_tx *tx)
{
    static const char rrq[] = "\0\1goro-net-test\0octet";
    uint32_t n = sizeof rrq;        // with the final NUL
    memcpy(f, gw_mac, ETH_ALEN);
    memcpy(f + 6, d->mac, ETH_ALEN);
    put16be(f + 12, ETH_IP);
    uint8_t *ip = f + ETH_HLEN, *udp = ip + 20;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16be(ip + 2, (uint16_t)(20 + 8 + n));
    ip[8] = 64;
    ip[9] = 17;                     // UDP
    put32be(ip + 12, GUEST_IP);
    put32be(ip + 16, GW_IP);
    put16be(ip + 10, inet_csum(ip, 20));
    put16be(udp, sport);
    put16be(udp + 2, 69);
    put16be(udp + 4, (uint16_t)(8 + n));
    put16be(udp + 6, 0);
    memcpy(udp + 8, rrq, n);
    // The pseudo-header: addresses, protocol, UDP length.
    uint8_t ph[12];
    memcpy(ph, ip + 12, 8);
    ph[8] = 0;
    ph[9] = 17;
    put16be(ph + 10, (uint16_t)(8 + n));
    uint32_t sum = (uint16_t)~inet_csum(ph, 12);
    if (csum == 1) {
        while (sum >> 16)
            sum = (sum & 0xFFFF) + (sum >> 16);
        put16be(udp + 6, (uint16_t)sum);
        *tx = (struct netdev_tx){ NETDEV_TX_CSUM, ETH_HLEN + 20, 6 };
    } else {
        uint32_t body = (uint16_t)~inet_csum(udp, 8 + n);
        sum += body;
        while (sum >> 16)
            sum = (sum & 0xFFFF) + (sum >> 16);
        uint16_t c = (uint16_t)~sum;
        put16be(udp + 6, csum == 2 ? (uint16_t)(c ^ 0x5a5a) : (c ? c : 0xFFFF));
    }
    return ETH_HLEN + 20 + 8 + n;
}

// What the receive side looks for, filled by deliver.
struct want {
    const struct netdev *dev;
    int kind;                       // 0: the gateway's ARP reply, 1: an echo reply, 2: a TFTP answer
    uint16_t seq;                   // echo: the sequence; TFTP: the first port answered (out)
    uint32_t payload;
    bool found, bad;                // found it; found it damaged
    uint8_t gw_mac[ETH_ALEN];
    uint64_t frames;
    uint32_t flags;                 // the rx flags it came with
};

static void deliver(void *ctx, const void *frame, uint32_t len, uint32_t flags)
{
    struct want *w = ctx;
    const uint8_t *f = frame;
    w->frames++;
    if (len < ETH_HLEN || memcmp(f, w->dev->mac, ETH_ALEN))
        return;                     // not for us (or a broadcast)
    uint16_t type = get16be(f + 12);
    if (w->kind == 0 && type == ETH_ARP && len >= ETH_HLEN + 28) {
        const uint8_t *a = f + ETH_HLEN;
        if (get16be(a + 6) == 2 && get32be(a + 14) == GW_IP && get32be(a + 24) == GUEST_IP) {
            memcpy(w->gw_mac, a + 8, ETH_ALEN);
            w->found = true;
        }
    } else if (w->kind == 2 && type == ETH_IP && len >= ETH_HLEN + 28) {
        const uint8_t *ip = f + ETH_HLEN, *udp = ip + 20;
        if (ip[9] == 17 && get32be(ip + 12) == GW_IP && get16be(udp) == 69) {
            w->found = true;
            w->seq = get16be(udp + 2);
            w->flags = flags;
        }
    } else if (w->kind == 1 && type == ETH_IP && len >= ETH_HLEN + 28) {
        const uint8_t *ip = f + ETH_HLEN, *icmp = ip + 20;
        if (ip[9] != 1 || icmp[0] != 0 || get16be(icmp + 6) != w->seq || get16be(icmp + 4) != 0x6f72)
            return;
        w->found = true;
        uint32_t total = get16be(ip + 2);
        if (total != 28 + w->payload || len < ETH_HLEN + total || inet_csum(ip, 20) != 0 ||
            inet_csum(icmp, total - 20) != 0)
            w->bad = true;
        for (uint32_t i = 0; i < w->payload && !w->bad; i++)
            if (icmp[8 + i] != (uint8_t)(w->seq * 7 + i))
                w->bad = true;
    }
}

// Polls every queue until w is found: the netdev protocol's steps 2 and 3
// (poll, then irq_enable; poll again while it answers false), waiting for
// the interrupt's ready call in between (or a while, for a device without
// interrupts: nic_irq=none). False when nothing came for a stall's worth
// (only a lost frame or interrupt gets there).
static bool wait_for(struct netdev *d, struct want *w)
{
    bool polled = d->queues[0].vector == 0;
    uint64_t give_up = nanotime() + KT_STALL_NS;
    for (;;) {
        if (polled && nanotime() > give_up)
            return false;
        uint64_t seen[NETDEV_MAX_QUEUES];
        bool busy = false;
        for (uint16_t q = 0; q < d->nqueues; q++) {
            seen[q] = kt_load(&watch.ready[q]);
            while (d->ops->rx_poll(d, q, 16, deliver, w) == 16)
                ;
            if (!w->found && !d->ops->irq_enable(d, q))
                busy = true;
        }
        if (w->found)
            return true;
        if (busy)
            continue;
        // Some queue's interrupt: the sum of the counters moves.
        uint64_t sum = 0;
        for (uint16_t q = 0; q < d->nqueues; q++)
            sum += seen[q];
        uint64_t stall_end = nanotime() + KT_STALL_NS;
        for (;;) {
            uint64_t now_sum = 0;
            for (uint16_t q = 0; q < d->nqueues; q++)
                now_sum += kt_load(&watch.ready[q]);
            if (now_sum > sum || polled)
                break;
            if (nanotime() > stall_end)
                return false;
            sleep_ns(100000);
        }
    }
}

static enum netdev_xmit_result send1(struct netdev *d, uint16_t q, const void *f, uint32_t len)
{
    struct netdev_frag frag = { f, len };
    return d->ops->xmit(d, q, &frag, 1, 0);
}

// Sends, retrying while the ring is full (it drains as QEMU sends).
static bool send(struct netdev *d, uint16_t q, const void *f, uint32_t len)
{
    uint64_t end = nanotime() + KT_STALL_NS;
    while (nanotime() < end) {
        enum netdev_xmit_result r = send1(d, q, f, len);
        if (r == NETDEV_TX_OK)
            return true;
        if (r == NETDEV_TX_DROPPED)
            return false;
        sleep_ns(100000);
    }
    return false;
}

// The gateway's MAC, by ARP on queue q.
static bool arp_gateway(struct netdev *d, uint16_t q, uint8_t mac[ETH_ALEN])
{
    static uint8_t f[64];
    struct want w = { .dev = d, .kind = 0 };
    if (!send(d, q, f, arp_request(d, f, GW_IP)) || !wait_for(d, &w))
        return false;
    memcpy(mac, w.gw_mac, ETH_ALEN);
    return true;
}

// ---- the tests --------------------------------------------------------------

KTEST(net_found)
{
    struct netdev *d = netdev_get(0);
    if (!d)
        KT_SKIP("no NIC (run a net-* configuration)");
    KT_ASSERT(d->nqueues >= 1 && d->queues && d->ops && d->driver);
    KT_ASSERT(d->mac[0] != 0 || d->mac[1] != 0 || d->mac[2] != 0);
    KT_ASSERT(!(d->mac[0] & 1));            // a unicast address
    KT_ASSERT(d->mtu >= 576 && d->mtu <= 9000);
    for (uint16_t q = 0; q < d->nqueues; q++)
        KT_ASSERT(d->queues[q].cpu < (uint32_t)num_cpu());
    printf("ktest: net0: %s at %s, %u queue pairs, %s, link %s\n", d->driver, d->bus_info, d->nqueues,
           d->irq_mode, netdev_link_up(d) ? "up" : "down");
}

// QEMU's link comes up with the machine (e1000e's after its
// auto-negotiation, which is quick in QEMU's model but not instant).
KTEST(net_link_up)
{
    struct netdev *d = netdev_get(0);
    if (!d)
        KT_SKIP("no NIC (run a net-* configuration)");
    uint64_t end = nanotime() + KT_STALL_NS;
    while (!netdev_link_up(d) && nanotime() < end)
        sleep_ns(1000000);
    KT_ASSERT(netdev_link_up(d));
}

KTEST(net_arp_gateway)
{
    OPEN_OR_SKIP(d);
    uint8_t mac[ETH_ALEN];
    bool ok = arp_gateway(d, 0, mac);
    close_net(d);
    KT_ASSERT(ok);
    KT_ASSERT(!(mac[0] & 1));
    KT_ASSERT_EQ(kt_load(&watch.wrong_core), 0);
}

// Echo requests of sizes from empty to the MTU, each answered with the
// same bytes: the transmit copy, the receive buffers and the largest frame.
KTEST(net_ping_sizes)
{
    OPEN_OR_SKIP(d);
    static uint8_t f[2048];
    static const uint32_t sizes[] = { 0, 1, 18, 56, 511, 1000, 1400, 1471, 1472 };
    uint8_t gw[ETH_ALEN];
    const char *bad = 0;
    if (!arp_gateway(d, 0, gw))
        bad = "no ARP reply";
    for (uint32_t i = 0; !bad && i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t payload = sizes[i];
        if (payload + 28 > d->mtu)
            continue;
        struct want w = { .dev = d, .kind = 1, .seq = (uint16_t)(100 + i), .payload = payload };
        if (!send(d, 0, f, echo_request(d, gw, f, w.seq, payload)))
            bad = "an echo request not sent";
        else if (!wait_for(d, &w))
            bad = "no echo reply";
        else if (w.bad)
            bad = "an echo reply with other bytes";
    }
    close_net(d);
    if (bad)
        KT_FAIL("%s", bad);
    KT_ASSERT_EQ(kt_load(&watch.wrong_core), 0);
}

// UDP checksums both ways. Slirp drops a datagram whose checksum is
// wrong, so a request with a wrong one sent first and a right one after
// (from another port) must be answered for the second only: the first
// answer is the second's. Then, where the device offers it, the checksum
// left to the device; and where the device checks received checksums,
// the answer carries NETDEV_RX_CSUM_OK.
KTEST(net_udp_checksums)
{
    OPEN_OR_SKIP(d);
    static uint8_t f[256];
    uint8_t gw[ETH_ALEN];
    struct netdev_tx tx;
    const char *bad = 0;
    if (!arp_gateway(d, 0, gw))
        bad = "no ARP reply";
    struct want w = { .dev = d, .kind = 2 };
    if (!bad && (!send(d, 0, f, tftp_request(d, gw, f, 40001, 2, &tx)) ||
                 !send(d, 0, f, tftp_request(d, gw, f, 40002, 0, &tx)) || !wait_for(d, &w)))
        bad = "no TFTP answer";
    else if (!bad && w.seq != 40002)
        bad = "the datagram with the wrong checksum was answered";
    bool rx_ok = w.flags & NETDEV_RX_CSUM_OK;
    if (!bad && (d->features & NETDEV_F_TX_CSUM)) {
        struct netdev_frag frag = { f, tftp_request(d, gw, f, 40003, 1, &tx) };
        w = (struct want){ .dev = d, .kind = 2 };
        if (d->ops->xmit(d, 0, &frag, 1, &tx) != NETDEV_TX_OK || !wait_for(d, &w))
            bad = "no answer to the datagram whose checksum the device made";
        else if (w.seq != 40003)
            bad = "an answer to another port";
    }
    close_net(d);
    if (bad)
        KT_FAIL("%s", bad);
    if (d->features & NETDEV_F_RX_CSUM && !strcmp(d->driver, "e1000e"))
        KT_ASSERT(rx_ok);           // virtio marks only what its host hands over checked
    printf("ktest: net_udp_checksums: tx offload %s, rx %s\n",
           d->features & NETDEV_F_TX_CSUM ? "tested" : "not offered", rx_ok ? "checked by the device" : "unchecked");
}

// A frame given as many fragments arrives as one.
KTEST(net_ping_fragments)
{
    OPEN_OR_SKIP(d);
    static uint8_t f[2048];
    uint8_t gw[ETH_ALEN];
    bool ok = arp_gateway(d, 0, gw);
    struct want w = { .dev = d, .kind = 1, .seq = 7, .payload = 1000 };
    uint32_t len = echo_request(d, gw, f, w.seq, w.payload);
    struct netdev_frag frags[5] = { { f, 1 }, { f + 1, 13 }, { f + 14, 20 }, { f + 34, 500 },
                                    { f + 534, len - 534 } };
    ok = ok && d->ops->xmit(d, 0, frags, 5, 0) == NETDEV_TX_OK && wait_for(d, &w) && !w.bad;
    close_net(d);
    KT_ASSERT(ok);
}

// Frames a device cannot send are refused, counted, and do no harm.
KTEST(net_tx_malformed)
{
    OPEN_OR_SKIP(d);
    static uint8_t f[4096];
    memset(f, 0, sizeof f);
    uint64_t dropped = d->queues[0].stats.tx_dropped;
    struct netdev_frag none = { f, 0 };
    bool ok = send1(d, 0, f, 0) == NETDEV_TX_DROPPED;
    ok = ok && send1(d, 0, f, ETH_HLEN - 1) == NETDEV_TX_DROPPED;
    ok = ok && send1(d, 0, f, netdev_max_frame(d) + 1) == NETDEV_TX_DROPPED;
    ok = ok && send1(d, 0, f, 4096) == NETDEV_TX_DROPPED;
    ok = ok && d->ops->xmit(d, 0, &none, 1, 0) == NETDEV_TX_DROPPED;
    struct netdev_tx bad_csum = { NETDEV_TX_CSUM, 60, 100 };
    struct netdev_frag sixty = { f, 60 };
    ok = ok && d->ops->xmit(d, 0, &sixty, 1, &bad_csum) == NETDEV_TX_DROPPED;
    uint64_t counted = d->queues[0].stats.tx_dropped - dropped;
    // The device still works.
    uint8_t gw[ETH_ALEN];
    bool works = arp_gateway(d, 0, gw);
    close_net(d);
    KT_ASSERT(ok);
    KT_ASSERT_EQ(counted, 6);
    KT_ASSERT(works);
}

// More requests than the receive ring holds, sent before any is taken:
// the device drops what it cannot hold, the driver loses nothing it was
// given, and the NIC works after.
KTEST(net_rx_overrun)
{
    OPEN_OR_SKIP(d);
    static uint8_t f[64];
    uint32_t len = arp_request(d, f, GW_IP);
    uint32_t sent = 0;
    for (int i = 0; i < 1000; i++)
        sent += send(d, 0, f, len);
    struct want w = { .dev = d, .kind = 0 };
    uint64_t rx_before = 0;
    for (uint16_t q = 0; q < d->nqueues; q++)
        rx_before += d->queues[q].stats.rx_frames;
    bool got = wait_for(d, &w);
    // Drain what came.
    for (uint16_t q = 0; q < d->nqueues; q++)
        while (d->ops->rx_poll(d, q, 64, deliver, &w))
            ;
    uint64_t rx = 0;
    for (uint16_t q = 0; q < d->nqueues; q++)
        rx += d->queues[q].stats.rx_frames;
    uint8_t gw[ETH_ALEN];
    bool works = arp_gateway(d, 0, gw);
    close_net(d);
    KT_ASSERT_EQ(sent, 1000);
    KT_ASSERT(got && works);
    KT_ASSERT(rx - rx_before >= 1 && rx - rx_before <= 1000 + 16);
    printf("ktest: net_rx_overrun: 1000 requests, %lu replies taken\n", (unsigned long)(rx - rx_before));
}

// Every queue pair transmits; the replies come back on whichever queue the
// device picks, each ready call on its queue's core.
KTEST(net_every_queue)
{
    OPEN_OR_SKIP(d);
    bool ok = true;
    for (uint16_t q = 0; q < d->nqueues && ok; q++) {
        uint64_t before = d->queues[q].stats.tx_frames;
        uint8_t gw[ETH_ALEN];
        ok = arp_gateway(d, q, gw) && d->queues[q].stats.tx_frames == before + 1;
    }
    close_net(d);
    KT_ASSERT(ok);
    KT_ASSERT_EQ(kt_load(&watch.wrong_core), 0);
}

// ---- the L2 reflector, between two NICs on one QEMU hub ------------------------

#define REFLECT_TYPE 0x88B5         // IEEE 802's local experimental EtherType
#define REFLECT_FRAMES 500
#define REFLECT_WINDOW 16
#define REFLECT_MAX 9216            // a frame at most: a jumbo frame's 9018 bytes fit

struct echoes {
    const struct netdev *from, *to;     // the reflector's NIC, the sender's
    bool oversize;                      // odd frames longer than the reflector takes
    uint64_t got, bad;
    bool seen[REFLECT_FRAMES];
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

// Whether frame seq is one the reflector must drop: longer than its MTU.
// The even ones, so the last frame sent comes back: the reflector handles
// its ring in order, so that return shows every drop before it counted.
static bool too_long(const struct echoes *e, uint32_t seq)
{
    return e->oversize && !(seq & 1);
}

// Frame seq's length: from 74 bytes up to the longest both NICs carry
// (their MTU's frame, a VLAN tag's room included), in even steps, so the
// last frame is that longest one; with a jumbo MTU most of them span
// several of a virtio-net's receive buffers. A frame too_long is from one
// byte past the reflector's longest up to the sender's.
static uint32_t reflect_len(const struct echoes *e, uint32_t seq)
{
    uint32_t refl = netdev_max_frame(e->from), snd = min_u32(netdev_max_frame(e->to), REFLECT_MAX);
    if (too_long(e, seq))
        return refl + 1 + seq * (snd - refl - 1) / (REFLECT_FRAMES - 1);
    uint32_t most = min_u32(refl, snd);
    return ETH_HLEN + 60 + seq * (most - ETH_HLEN - 60) / (REFLECT_FRAMES - 1);
}

// Deliver on the sender: a frame back from the reflector, MACs swapped.
static void echo_back(void *ctx, const void *frame, uint32_t len, uint32_t flags)
{
    struct echoes *e = ctx;
    const uint8_t *f = frame;
    (void)flags;
    if (len < ETH_HLEN + 4 || get16be(f + 12) != REFLECT_TYPE)
        return;
    uint32_t seq = get32be(f + ETH_HLEN);
    if (memcmp(f, e->to->mac, ETH_ALEN) || memcmp(f + 6, e->from->mac, ETH_ALEN) || seq >= REFLECT_FRAMES ||
        too_long(e, seq) || e->seen[seq] || len != reflect_len(e, seq)) {
        e->bad++;
        return;
    }
    for (uint32_t i = 4; i < len - ETH_HLEN; i++)
        if (f[ETH_HLEN + i] != (uint8_t)(seq + i)) {
            e->bad++;
            return;
        }
    e->seen[seq] = true;
    e->got++;
}

static const struct netdev_consumer quiet_consumer = { on_ready, &watch };

// net1 sends REFLECT_FRAMES frames to net0's reflector, REFLECT_WINDOW of
// those expected back in flight, and takes what comes back into e. False
// when the reflector would not start; st gets its counts.
static bool reflect_run(struct echoes *e, struct netdev *refl, struct netdev *snd, struct l2reflect_stats *st)
{
    static uint8_t f[REFLECT_MAX];
    e->from = refl;
    e->to = snd;
    memset(&watch, 0, sizeof watch);
    watch.dev = snd;
    if (netdev_attach(snd, &quiet_consumer) != 0)
        return false;
    uint64_t end = nanotime() + KT_STALL_NS;
    while ((!netdev_link_up(refl) || !netdev_link_up(snd)) && nanotime() < end)
        sleep_ns(1000000);
    bool started = l2reflect_start(refl, 0);
    uint32_t sent = 0, expected = 0, want = 0;
    for (uint32_t i = 0; i < REFLECT_FRAMES; i++)
        want += !too_long(e, i);
    uint64_t last_move = nanotime(), last_got = 0;
    while (started && e->got < want && nanotime() - last_move < KT_STALL_NS) {
        while (sent < REFLECT_FRAMES && expected - e->got < REFLECT_WINDOW) {
            uint32_t len = reflect_len(e, sent);
            memcpy(f, refl->mac, ETH_ALEN);
            memcpy(f + 6, snd->mac, ETH_ALEN);
            put16be(f + 12, REFLECT_TYPE);
            put32be(f + ETH_HLEN, sent);
            for (uint32_t i = 4; i < len - ETH_HLEN; i++)
                f[ETH_HLEN + i] = (uint8_t)(sent + i);
            if (!send(snd, 0, f, len))
                break;
            expected += !too_long(e, sent);
            sent++;
        }
        for (uint16_t q = 0; q < snd->nqueues; q++)
            while (snd->ops->rx_poll(snd, q, 32, echo_back, e) == 32)
                ;
        if (e->got != last_got) {
            last_got = e->got;
            last_move = nanotime();
        } else {
            sleep_ns(200000);
        }
    }
    *st = (struct l2reflect_stats){ 0 };
    if (started) {
        l2reflect_stop(refl);
        l2reflect_stats(refl, st);
    }
    netdev_detach(snd, &quiet_consumer);
    return started;
}

// net1 sends frames of every length to net0's reflector and gets each back
// once, with its bytes, the addresses swapped; the reflector counts them.
// (matrix net-l2reflect-*: virtio-net and e1000e both ways, and two
// virtio-nets with a jumbo MTU, whose frames take mergeable buffers.)
KTEST(net_l2reflect)
{
    struct netdev *refl = netdev_get(0), *snd = netdev_get(1);
    if (!snd)
        KT_SKIP("needs two NICs on one hub (net-l2reflect-*)");
    static struct echoes e;
    memset(&e, 0, sizeof e);
    struct l2reflect_stats st;
    KT_ASSERT(reflect_run(&e, refl, snd, &st));
    KT_ASSERT_EQ(e.bad, 0);
    KT_ASSERT_EQ(e.got, REFLECT_FRAMES);
    KT_ASSERT_EQ(st.reflected, REFLECT_FRAMES);
    KT_ASSERT_EQ(st.dropped, 0);
    printf("ktest: net_l2reflect: %s reflected %lu frames of 74 to %u bytes to %s in %lu interrupts\n",
           refl->driver, (unsigned long)st.reflected, reflect_len(&e, REFLECT_FRAMES - 1), snd->driver,
           (unsigned long)st.interrupts);
}

// Frames longer than the reflector's MTU, from a sender with a jumbo MTU,
// between ones it takes: each too long is dropped (by a virtio-net driver,
// which counts it, or by a device such as the 82574, which does not hand
// it over), never delivered, and every other frame comes back.
KTEST(net_l2reflect_oversize)
{
    struct netdev *refl = netdev_get(0), *snd = netdev_get(1);
    if (!snd || netdev_max_frame(snd) <= netdev_max_frame(refl))
        KT_SKIP("needs a sender on the same hub with a larger MTU (net-l2reflect-oversize-*)");
    static struct echoes e;
    memset(&e, 0, sizeof e);
    e.oversize = true;
    uint64_t dropped = 0;
    for (uint16_t q = 0; q < refl->nqueues; q++)
        dropped -= kt_load(&refl->queues[q].stats.rx_dropped);
    struct l2reflect_stats st;
    KT_ASSERT(reflect_run(&e, refl, snd, &st));
    for (uint16_t q = 0; q < refl->nqueues; q++)
        dropped += kt_load(&refl->queues[q].stats.rx_dropped);
    KT_ASSERT_EQ(e.bad, 0);
    KT_ASSERT_EQ(e.got, REFLECT_FRAMES / 2);
    KT_ASSERT_EQ(st.reflected, REFLECT_FRAMES / 2);
    if (!strcmp(refl->driver, "virtio-net"))
        KT_ASSERT_EQ(dropped, REFLECT_FRAMES / 2);
    else
        KT_ASSERT(dropped <= REFLECT_FRAMES / 2);
    printf("ktest: net_l2reflect_oversize: %s reflected %lu frames, %lu of %u too long dropped by the driver\n",
           refl->driver, (unsigned long)st.reflected, (unsigned long)dropped, REFLECT_FRAMES / 2);
}

// The PCI walk found the NIC and a host bridge, and named no function
// broken.
KTEST(net_pci_enumerated)
{
    uint32_t n = pci_count(), host_bridges = 0, bad = 0;
    if (n == 0)
        KT_SKIP("no PCI bus");
    for (uint32_t i = 0; i < n; i++) {
        const struct pci_func *f = pci_get(i);
        host_bridges += f->class == 6 && f->subclass == 0;
        bad += f->error != PCI_OK;
    }
    uint32_t claimed = 0;
    for (uint32_t i = 0; i < n; i++)
        claimed += pci_claimed_by(pci_get(i)) != 0;
    KT_ASSERT(host_bridges >= 1);
    KT_ASSERT_EQ(bad, 0);
    KT_ASSERT(claimed >= netdev_count());
}
