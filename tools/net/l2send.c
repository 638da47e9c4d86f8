// SPDX-License-Identifier: MIT
// l2send: tools/bench/l2floor.py's sender over a tap (--tap), in C.
//
// The frames are tools/bench/l2floor.py's frame(seq, size, flows, csum),
// byte for byte: IPv4 UDP datagrams 198.18.0.1 -> 198.18.0.2 from --flows
// source ports (--flows 0: frames of EtherType 0x88B5), each numbered, its
// payload a pattern of its number. A packet socket on the tap (or, with
// --fd, l2floor.py's UDP socket on QEMU's dgram backend, each frame a
// datagram to 127.0.0.1:--to) keeps --window of them in flight, closed loop:
// frames leave in batches of up to --batch (sendmmsg) as the window has
// room, and come back in batches (recvmmsg). Each frame back must be one
// still outstanding, its addresses swapped and every other byte as sent
// (with --csum, its UDP checksum completed as its virtio header asks and
// right); anything else is not counted. A frame not back within --stall
// seconds of the last that was is lost.
//
// The Python sender spent more host time per frame than QEMU's path did,
// so on a loaded two-core host the floor measured the sender: this one
// builds each frame once, into the slot it is sent from, and moves a batch
// per system call.
//
//   l2send IFNAME [--frames N] [--window W] [--size S] [--flows F] [--csum]
//                 [--batch B] [--stall SECONDS]
//   l2send --fd FD --to PORT --flows 0 [...]   # over QEMU's dgram backend
//   l2send --selftest           # the checker rejects every damaged frame
//   l2send --print SEQ [--size S] [--flows F] [--csum]   # frame SEQ in hex, to
//                               # hold against l2floor.py's (its --check does)
//
// Output: one line, "SENT back=N secs=S sent=N bad=N" (bad: frames read
// that were none of ours, damaged or a duplicate). Exit 0 when every
// frame came back, 1 otherwise, 2 when it could not start.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME 1514
#define MAX_BATCH 256
#define UDP_CSUM_AT (14 + 20 + 6) // where the frame's UDP checksum sits
#define ETHERTYPE 0x88B5          // IEEE 802's local experimental type
#define NEEDS_CSUM 1              // virtio_net_hdr's flag

// virtio's header before each frame on a PACKET_VNET_HDR socket (struct
// virtio_net_hdr, host byte order).
struct vnet_hdr {
    uint8_t flags, gso_type;
    uint16_t hdr_len, gso_size, csum_start, csum_offset;
};

static const uint8_t guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }; // QEMU's first NIC's
static const uint8_t host_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };  // locally administered

static struct {
    const char *ifname;
    uint32_t frames, window, size, flows, batch;
    int fd;      // --fd: a UDP socket, bound, for QEMU's dgram backend
    uint16_t to; // --to: QEMU's port on 127.0.0.1
    double stall;
    bool csum;
} opt = { 0, 50000, 256, 64, 64, 32, -1, 0, 60.0, false };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v);
}

// The folded 16-bit ones-complement sum of n bytes at p plus sum (RFC 1071).
static uint32_t ones_sum(const uint8_t *p, uint32_t n, uint32_t sum)
{
    for (uint32_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    return sum;
}

// The pseudo-header's folded sum for frame f's UDP datagram.
static uint32_t udp_pseudo(const uint8_t *f, uint32_t len)
{
    return ones_sum(f + 26, 8, 17 + (len - 34));
}

// Where a frame's number is: after the UDP header, or after the EtherType.
static uint32_t seq_at(void)
{
    return opt.flows ? 42 : 14;
}

// Frame seq into f, as l2floor.py's frame(seq, size, flows, csum) makes it.
static void frame(uint8_t *f, uint32_t seq, bool csum)
{
    uint32_t size = opt.size, total = size - 14, at = seq_at();
    memcpy(f, guest_mac, 6);
    memcpy(f + 6, host_mac, 6);
    put32(f + at, seq);
    for (uint32_t i = at + 4; i < size; i++)
        f[i] = (uint8_t)(seq + (i - at - 4));
    if (!opt.flows) {
        put16(f + 12, ETHERTYPE);
        return;
    }
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    static const uint8_t addrs[8] = { 198, 18, 0, 1, 198, 18, 0, 2 };
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, total);
    put16(ip + 4, seq & 0xFFFF);
    put16(ip + 6, 0);
    ip[8] = 64;
    ip[9] = 17;
    put16(ip + 10, 0);
    memcpy(ip + 12, addrs, 8);
    put16(ip + 10, ~ones_sum(ip, 20, 0) & 0xFFFF);
    uint8_t *udp = ip + 20;
    put16(udp, 20000 + seq % opt.flows);
    put16(udp + 2, 9);
    put16(udp + 4, total - 20);
    put16(udp + 6, 0);
    if (csum) {
        uint32_t s = ~ones_sum(f + 34, size - 34, udp_pseudo(f, size)) & 0xFFFF;
        put16(f + UDP_CSUM_AT, s ? s : 0xFFFF);
    }
}

// Frame seq as it goes out with --csum: the checksum left to fill in.
static void frame_out(uint8_t *out, uint32_t seq)
{
    struct vnet_hdr h = { NEEDS_CSUM, 0, 0, 0, UDP_CSUM_AT - 6, 6 };
    memcpy(out, &h, sizeof h);
    uint8_t *f = out + sizeof h;
    frame(f, seq, true);
    put16(f + UDP_CSUM_AT, udp_pseudo(f, opt.size));
}

// The outstanding frames: a bit each.
static uint8_t *outstanding;

static bool is_out(uint32_t seq)
{
    return seq < opt.frames && (outstanding[seq >> 3] >> (seq & 7) & 1);
}

static void set_out(uint32_t seq, bool on)
{
    if (on)
        outstanding[seq >> 3] |= (uint8_t)(1u << (seq & 7));
    else
        outstanding[seq >> 3] &= (uint8_t) ~(1u << (seq & 7));
}

// A frame read (n bytes at d, its virtio header first with --csum): its
// number when it is an outstanding frame of ours come back intact, its
// addresses swapped; -1 otherwise. With --csum its checksum is completed
// as the header asks, then compared with the one the sender would make.
static int64_t check_echo(uint8_t *d, uint32_t n)
{
    if (opt.csum) {
        struct vnet_hdr h;
        if (n < sizeof h)
            return -1;
        memcpy(&h, d, sizeof h);
        d += sizeof h;
        n -= (uint32_t)sizeof h;
        if ((h.flags & NEEDS_CSUM) && (uint32_t)h.csum_start + h.csum_offset + 2 <= n) {
            uint32_t s = ~ones_sum(d + h.csum_start, n - h.csum_start, 0) & 0xFFFF;
            put16(d + h.csum_start + h.csum_offset, s ? s : 0xFFFF);
        }
    }
    if (n != opt.size || memcmp(d, host_mac, 6) || memcmp(d + 6, guest_mac, 6))
        return -1;
    const uint8_t *at = d + seq_at();
    uint32_t seq = (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
    if (!is_out(seq))
        return -1;
    uint8_t want[MAX_FRAME];
    frame(want, seq, opt.csum);
    if (memcmp(d + 12, want + 12, opt.size - 12))
        return -1;
    return seq;
}

// The checker against damage: every frame reflected intact passes, once;
// each byte flipped, the wrong length, or a number not outstanding fails.
static int selftest(void)
{
    static const uint32_t sizes[] = { 60, 64, 61, 1514 };
    int bad = 0;
    opt.frames = 1000;
    outstanding = calloc(opt.frames / 8 + 1, 1);
    for (int mode = -1; mode < 2; mode++) {
        opt.flows = mode < 0 ? 0 : 64; // -1: the EtherType's frames; 1: --csum
        opt.csum = mode > 0;
        for (uint32_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            opt.size = sizes[si];
            uint8_t out[MAX_FRAME + sizeof(struct vnet_hdr)], back[sizeof out];
            uint32_t seq = 7 + si * 100 + (uint32_t)(mode + 1);
            uint32_t hdr = opt.csum ? sizeof(struct vnet_hdr) : 0;
            // As it would come back: the addresses swapped; with --mode,
            // the header and partial checksum left as sent.
            if (opt.csum)
                frame_out(out, seq);
            else
                frame(out, seq, false);
            memcpy(back, out, hdr + opt.size);
            memcpy(back + hdr, out + hdr + 6, 6);
            memcpy(back + hdr + 6, out + hdr, 6);
            uint8_t d[sizeof out];
            set_out(seq, true);
            memcpy(d, back, hdr + opt.size);
            if (check_echo(d, hdr + opt.size) != (int64_t)seq) {
                fprintf(stderr, "selftest: size %u mode %d: an intact frame refused\n", opt.size,
                        mode);
                bad++;
            }
            for (uint32_t i = hdr; i < hdr + opt.size; i++) {
                memcpy(d, back, hdr + opt.size);
                d[i] ^= 0x01;
                // The checksum field itself is rewritten from the header's
                // request before the compare: a flip there is repaired, as
                // the device would, and is no damage.
                if (opt.csum && i - hdr >= UDP_CSUM_AT && i - hdr < UDP_CSUM_AT + 2)
                    continue;
                if (check_echo(d, hdr + opt.size) >= 0) {
                    fprintf(stderr, "selftest: size %u mode %d: byte %u flipped, accepted\n",
                            opt.size, mode, i - hdr);
                    bad++;
                }
            }
            memcpy(d, back, hdr + opt.size);
            if (check_echo(d, hdr + opt.size - 1) >= 0) {
                fprintf(stderr, "selftest: size %u: a short frame accepted\n", opt.size);
                bad++;
            }
            set_out(seq, false);
            memcpy(d, back, hdr + opt.size);
            if (check_echo(d, hdr + opt.size) >= 0) {
                fprintf(stderr, "selftest: size %u: a frame not outstanding accepted\n", opt.size);
                bad++;
            }
        }
    }
    printf(bad ? "selftest: FAIL (%d)\n" : "selftest: ok\n", bad);
    return bad ? 1 : 0;
}

// A packet socket on --ifname, or -1 (said on stderr).
static int packet_socket(void)
{
    int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (s < 0) {
        perror("l2send: socket");
        return -1;
    }
    int one = 1, big = 1 << 22;
    // Our own frames going out would come back on this socket too: skip them.
    if (setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) < 0 ||
        (opt.csum && setsockopt(s, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) < 0) ||
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big) < 0 ||
        setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big) < 0) {
        perror("l2send: setsockopt");
        return -1;
    }
    struct sockaddr_ll sll = { .sll_family = AF_PACKET,
                               .sll_protocol = htons(ETH_P_ALL),
                               .sll_ifindex = (int)if_nametoindex(opt.ifname) };
    if (!sll.sll_ifindex || bind(s, (struct sockaddr *)&sll, sizeof sll) < 0) {
        perror("l2send: bind");
        return -1;
    }
    return s;
}

static uint32_t arg(const char *name, const char *v, uint32_t lo, uint32_t hi)
{
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (*end || x < lo || x > hi) {
        fprintf(stderr, "l2send: %s: %u..%u\n", name, lo, hi);
        exit(2);
    }
    return (uint32_t)x;
}

int main(int argc, char **argv)
{
    int64_t print_seq = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--selftest"))
            return selftest();
        if (!strcmp(a, "--csum")) {
            opt.csum = true;
            continue;
        }
        if (a[0] != '-') {
            opt.ifname = a;
            continue;
        }
        i++;
        if (!strcmp(a, "--frames"))
            opt.frames = arg(a, v, 1, 1u << 30);
        else if (!strcmp(a, "--window"))
            opt.window = arg(a, v, 1, 1u << 20);
        else if (!strcmp(a, "--size"))
            opt.size = arg(a, v, 60, MAX_FRAME);
        else if (!strcmp(a, "--flows"))
            opt.flows = arg(a, v, 0, 45000);
        else if (!strcmp(a, "--fd"))
            opt.fd = (int)arg(a, v, 0, 1 << 20);
        else if (!strcmp(a, "--to"))
            opt.to = (uint16_t)arg(a, v, 1, 65535);
        else if (!strcmp(a, "--batch"))
            opt.batch = arg(a, v, 1, MAX_BATCH);
        else if (!strcmp(a, "--stall"))
            opt.stall = arg(a, v, 1, 3600);
        else if (!strcmp(a, "--print"))
            print_seq = (int64_t)arg(a, v, 0, UINT32_MAX);
        else {
            fprintf(stderr, "l2send: unknown option %s\n", a);
            return 2;
        }
    }
    if (print_seq >= 0) {
        uint8_t f[MAX_FRAME];
        frame(f, (uint32_t)print_seq, opt.csum);
        for (uint32_t i = 0; i < opt.size; i++)
            printf("%02x", f[i]);
        printf("\n");
        return 0;
    }
    if (!opt.ifname == (opt.fd < 0) || (opt.fd >= 0 && !opt.to) || (opt.csum && !opt.flows)) {
        fprintf(stderr, "usage: l2send IFNAME|--fd FD --to PORT [--frames N] [--window W] "
                        "[--size S] [--flows F] [--csum (not with --flows 0)] [--batch B] "
                        "[--stall S]\n");
        return 2;
    }
    outstanding = calloc(opt.frames / 8 + 1, 1);
    struct sockaddr_in qemu = { .sin_family = AF_INET,
                                .sin_port = htons(opt.to),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int s = opt.fd >= 0 ? opt.fd : packet_socket();
    if (!outstanding || s < 0)
        return 2;
    uint32_t hdr = opt.csum ? sizeof(struct vnet_hdr) : 0;
    static uint8_t txb[MAX_BATCH][MAX_FRAME + sizeof(struct vnet_hdr)];
    static uint8_t rxb[MAX_BATCH][2048];
    struct mmsghdr tx[MAX_BATCH], rx[MAX_BATCH];
    struct iovec txv[MAX_BATCH], rxv[MAX_BATCH];
    for (uint32_t i = 0; i < MAX_BATCH; i++) {
        txv[i] = (struct iovec){ txb[i], hdr + opt.size };
        rxv[i] = (struct iovec){ rxb[i], sizeof rxb[i] };
        tx[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &txv[i], .msg_iovlen = 1 } };
        if (opt.fd >= 0) {
            tx[i].msg_hdr.msg_name = &qemu;
            tx[i].msg_hdr.msg_namelen = sizeof qemu;
        }
    }
    uint32_t sent = 0, back = 0, inflight = 0;
    uint64_t bad = 0;
    double t0 = now(), last = t0;
    while (back < opt.frames) {
        // Fill the window, a batch per call.
        while (sent < opt.frames && inflight < opt.window) {
            uint32_t n = opt.window - inflight;
            if (n > opt.batch)
                n = opt.batch;
            if (n > opt.frames - sent)
                n = opt.frames - sent;
            for (uint32_t i = 0; i < n; i++) {
                if (opt.csum)
                    frame_out(txb[i], sent + i);
                else
                    frame(txb[i], sent + i, false);
            }
            int k = sendmmsg(s, tx, n, 0);
            if (k < 0) {
                if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)
                    break; // the socket's queue is full: read first
                perror("l2send: sendmmsg");
                return 2;
            }
            for (int i = 0; i < k; i++)
                set_out(sent + (uint32_t)i, true);
            sent += (uint32_t)k;
            inflight += (uint32_t)k;
        }
        struct pollfd p = { s, POLLIN, 0 };
        int r = poll(&p, 1, 1000);
        if (r < 0 && errno != EINTR) {
            perror("l2send: poll");
            return 2;
        }
        if (r <= 0) {
            if (now() - last > opt.stall)
                break;
            continue;
        }
        for (uint32_t i = 0; i < opt.batch; i++)
            rx[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &rxv[i], .msg_iovlen = 1 } };
        int k = recvmmsg(s, rx, opt.batch, MSG_DONTWAIT, 0);
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            perror("l2send: recvmmsg");
            return 2;
        }
        uint32_t good = 0;
        for (int i = 0; i < k; i++) {
            int64_t seq = check_echo(rxb[i], rx[i].msg_len);
            if (seq < 0) {
                bad++;
                continue;
            }
            set_out((uint32_t)seq, false);
            good++;
        }
        back += good;
        inflight -= good;
        if (good)
            last = now();
    }
    printf("SENT back=%u secs=%.3f sent=%u bad=%llu\n", back, now() - t0, sent,
           (unsigned long long)bad);
    return back == opt.frames ? 0 : 1;
}
