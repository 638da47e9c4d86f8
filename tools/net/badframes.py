#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Malformed frames at goro's network stack: app=netecho must stay up and
answer a later connection whatever arrives.

    tools/net/badframes.py [--nic virtio-modern,virtio-legacy,e1000e] [--smp 2]
                           [--flood 2000] [--seed 1]
    tools/net/badframes.py --tap [--smp 2]        # as root: over a tap

The guest boots with one NIC and a static address, 198.18.0.2/24 (RFC
2544's benchmarking block), and this tool is a host of its own on that
link, 198.18.0.1 with a locally administered MAC: it builds every frame by
hand (Ethernet, ARP, IPv4, ICMP, UDP, TCP, and a small TCP client), so it
can send what no kernel sends. The link is QEMU's dgram netdev (each frame
one UDP datagram between QEMU's port and this tool's on 127.0.0.1, no
root), or with --tap a tap device in a network namespace this tool makes
(tools/net/netns.py, named "net2bad<pid>" or --ns-prefix's, removed at
the end), QEMU and a packet socket inside it; without root --tap prints
"SKIP ...: needs root". Over the tap, the namespace's own kernel
(198.18.0.1 there) also pings the guest (every one of 3 answered) and
opens a connection after the rounds; this tool's hand-built host is then
198.18.0.9.

First, eight connections' initial sequence numbers must not count up
(RFC 6528: lwIP's own would). Then rounds, each bounded in count, then
the same checks after every one (the guest answers an ARP request, a
ping, a UDP echo, and a new TCP connection whose bytes come back; its
serial log shows no panic):
    short       frames of 1-59 bytes: headers cut anywhere
    oversized   frames past the MTU, 1515 bytes to 64 KiB
    ipbad       IPv4 headers with a bad checksum, a bad length, a bad IHL,
                a bad version, options past the end
    csum        a TCP SYN, a UDP datagram and an ICMP echo with bad
                checksums: the guest must not answer any of them
    tcpbad      TCP segments with a bad data offset, bad option lengths,
                every flag combination, to open and closed ports
    frags       first fragments that never complete, overlapping and
                out-of-range fragments (lwIP must drop them in time)
    seqwrap     on open connections, a FIN and a byte 2^31 before the
                sequence number the guest expects
    mutate      --mutate valid frames with random bytes changed (--seed)
    cookie      a handshake the guest ended half-open (a reset; lwIP's
                SYN_RCVD timeout does the same): data with its ACK makes
                it again from the SYN cookie, and is echoed
    synflood    --flood SYNs to port 7 from spoofed sources on the link,
                never answered; then FLOOD_PROBES connections, each SYN
                between SYNQ_FILL more before and after: it finds the
                listener's half-open connections full and must be
                answered (by its SYN cookie alone), and the connection echo

One PASS or FAIL line per NIC model (the runner's host-test format); counts
only, never a rate. Python 3 standard library only.
"""
import ctypes
import os
import random
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.run import qemu  # noqa: E402

BOOT_TIMEOUT = 180          # seconds to netecho's line, under TCG on a loaded host
REPLY_TIMEOUT = 10          # seconds an answer may take
SYNQ_FILL = 600             # spoofed SYNs: more than a listener's 512 half-open connections (net/synq.c)
FLOOD_PROBES = 3            # connections made right after SYNQ_FILL of them
ECHO_PORT = 7
GUEST_IP = "198.18.0.2"
PINGS = 3                   # the namespace's pings over the tap: each must be answered
TOOL_MAC = bytes.fromhex("020000ba0001")        # locally administered
BCAST = b"\xff" * 6
ETH_IP, ETH_ARP = 0x0800, 0x0806
PROTO_ICMP, PROTO_TCP, PROTO_UDP = 1, 6, 17
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
PANIC_RE = re.compile(r"panic|ASSERT|EXCEPTION|backtrace", re.I)


class Failed(Exception):
    pass


# ---- frames -------------------------------------------------------------------------

def ones_sum(b):
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def csum(b):
    return ~ones_sum(b) & 0xFFFF


def ip4(a):
    return socket.inet_aton(a)


def eth(dst, src, etype, payload):
    return dst + src + struct.pack("!H", etype) + payload


def ipv4(src, dst, proto, payload, ident=0, frag=0, ttl=64, bad_csum=False, tot=None, ihl=5,
         options=b"", version=4):
    hdr = struct.pack("!BBHHHBBH4s4s", (version << 4) | ihl, 0,
                      tot if tot is not None else 20 + len(options) + len(payload),
                      ident, frag, ttl, proto, 0, ip4(src), ip4(dst)) + options
    c = csum(hdr)
    if bad_csum:
        c ^= 0x5A5A
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def pseudo(src, dst, proto, seg):
    return ip4(src) + ip4(dst) + struct.pack("!BBH", 0, proto, len(seg))


def tcp(src, dst, sport, dport, seq, ack, flags, data=b"", window=65535, options=b"", doff=None,
        bad_csum=False):
    off = doff if doff is not None else (20 + len(options)) // 4
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off << 4,
                      flags, window, 0, 0) + options + data
    c = csum(pseudo(src, dst, PROTO_TCP, seg) + seg)
    if bad_csum:
        c ^= 0x1234
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def udp(src, dst, sport, dport, data, bad_csum=False):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    c = csum(pseudo(src, dst, PROTO_UDP, seg) + seg) or 0xFFFF
    if bad_csum:
        c ^= 0x1234
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def icmp_echo(ident, seq, data, bad_csum=False):
    m = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + data
    c = csum(m) ^ (0x1234 if bad_csum else 0)
    return m[:2] + struct.pack("!H", c) + m[4:]


def arp(op, smac, sip, tmac, tip):
    return struct.pack("!HHBBH6s4s6s4s", 1, ETH_IP, 6, 4, op, smac, ip4(sip), tmac, ip4(tip))


def parse(f):
    """(etype, src ip, dst ip, proto, l4 bytes, ip header) or None."""
    if len(f) < 34 or struct.unpack_from("!H", f, 12)[0] != ETH_IP:
        return None
    ihl = (f[14] & 15) * 4
    tot = struct.unpack_from("!H", f, 16)[0]
    return (socket.inet_ntoa(f[26:30]), socket.inet_ntoa(f[30:34]), f[23], f[14 + ihl:14 + tot])


# ---- the link -----------------------------------------------------------------------

class Link:
    """Frames to and from the guest's NIC; a reader thread answers ARP for
    the tool's address and keeps every other frame for whoever waits."""

    def __init__(self, send, recv, my_ip):
        self.send_raw, self.recv_raw, self.my_ip = send, recv, my_ip
        self.guest_mac = None
        self.frames = []
        self.cond = threading.Condition()
        self.stopped = False
        self.seen = 0
        threading.Thread(target=self.reader, daemon=True).start()

    def reader(self):
        while not self.stopped:
            f = self.recv_raw(1.0)
            if f is None:
                continue
            with self.cond:
                self.seen += 1
            if len(f) >= 42 and struct.unpack_from("!H", f, 12)[0] == ETH_ARP:
                op = struct.unpack_from("!H", f, 20)[0]
                sip, tip = socket.inet_ntoa(f[28:32]), socket.inet_ntoa(f[38:42])
                if sip == GUEST_IP:
                    with self.cond:
                        self.guest_mac = f[22:28]
                        self.cond.notify_all()
                if op == 1 and tip == self.my_ip:
                    self.send(eth(f[22:28], TOOL_MAC, ETH_ARP, arp(2, TOOL_MAC, self.my_ip, f[22:28], sip)))
                continue
            with self.cond:
                self.frames.append(f)
                del self.frames[:-4096]
                self.cond.notify_all()

    def send(self, f):
        self.send_raw(f)

    def send_ip(self, payload_ip):
        self.send(eth(self.guest_mac, TOOL_MAC, ETH_IP, payload_ip))

    def take(self, match, timeout=REPLY_TIMEOUT):
        """The first frame kept for which match(parsed) is true, removed; None after timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i, f in enumerate(self.frames):
                    p = parse(f)
                    if p and match(p):
                        del self.frames[i]
                        return p
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def drain(self):
        with self.cond:
            self.frames.clear()

    def resolve(self):
        """ARP for the guest (answers also teach its MAC); raises Failed."""
        with self.cond:
            self.guest_mac = None
        for _ in range(5):
            self.send(eth(BCAST, TOOL_MAC, ETH_ARP, arp(1, TOOL_MAC, self.my_ip, b"\0" * 6, GUEST_IP)))
            with self.cond:
                self.cond.wait_for(lambda: self.guest_mac is not None, 2)
                if self.guest_mac is not None:
                    return
        raise Failed("the guest answers no ARP request")


class TcpClient:
    """A TCP connection from the tool's address, by hand: a handshake,
    data, FIN, with a retransmission each second (at most RETRIES)."""

    RETRIES = 8

    def __init__(self, link, port, sport):
        self.link, self.port, self.sport = link, port, sport
        self.iss = random.getrandbits(32)
        self.snd_nxt = self.iss
        self.rcv_nxt = 0

    def mine(self, p):
        src, dst, proto, l4 = p
        return (proto == PROTO_TCP and src == GUEST_IP and dst == self.link.my_ip and len(l4) >= 20 and
                struct.unpack_from("!HH", l4) == (self.port, self.sport))

    def seg(self, flags, data=b""):
        return ipv4(self.link.my_ip, GUEST_IP, PROTO_TCP,
                    tcp(self.link.my_ip, GUEST_IP, self.sport, self.port, self.snd_nxt, self.rcv_nxt, flags,
                        data, options=struct.pack("!BBH", 2, 4, 1460) if flags & SYN else b""))

    def connect(self, after_syn=None, tries=RETRIES, wait=1.0):
        """The handshake: SYN sent at most tries times, each answer awaited
        for wait seconds; after_syn() runs after each SYN sent."""
        for _ in range(tries):
            self.link.send_ip(self.seg(SYN))
            if after_syn:
                after_syn()
            p = self.link.take(self.mine, wait)
            if p is None:
                continue
            l4 = p[3]
            seq, ack, flags = struct.unpack_from("!IIxB", l4, 4)
            if flags & RST:
                raise Failed(f"connection to port {self.port} refused (RST)")
            if flags & (SYN | ACK) == SYN | ACK and ack == (self.iss + 1) & 0xFFFFFFFF:
                self.snd_nxt = ack
                self.rcv_nxt = (seq + 1) & 0xFFFFFFFF
                self.link.send_ip(self.seg(ACK))
                return
        raise Failed(f"no SYN-ACK from port {self.port} to {tries} SYN(s)")

    def echo(self, data):
        """Sends data, reads as many bytes back; raises Failed."""
        got = bytearray()
        sent_at, tries = 0.0, 0
        acked = False
        while len(got) < len(data):
            now = time.monotonic()
            if not acked and now - sent_at > 1.0:
                if tries == self.RETRIES:
                    raise Failed(f"the guest never acknowledged {len(data)} bytes")
                self.link.send_ip(self.seg(ACK | PSH, data))
                sent_at, tries = now, tries + 1
            p = self.link.take(self.mine, 1.0)
            if p is None:
                if acked and time.monotonic() - sent_at > REPLY_TIMEOUT:
                    raise Failed(f"{len(got)} of {len(data)} bytes came back")
                continue
            l4 = p[3]
            seq, ack, offf, flags = struct.unpack_from("!IIBB", l4, 4)
            if flags & RST:
                raise Failed("the guest reset the connection")
            if ack == (self.snd_nxt + len(data)) & 0xFFFFFFFF:
                acked = True
            payload = l4[(offf >> 4) * 4:]
            if payload and seq == self.rcv_nxt:
                got.extend(payload)
                self.rcv_nxt = (self.rcv_nxt + len(payload)) & 0xFFFFFFFF
            if payload:
                self.link.send_ip(ipv4(self.link.my_ip, GUEST_IP, PROTO_TCP,
                                       tcp(self.link.my_ip, GUEST_IP, self.sport, self.port,
                                           self.snd_nxt + len(data), self.rcv_nxt, ACK)))
        self.snd_nxt = (self.snd_nxt + len(data)) & 0xFFFFFFFF
        if bytes(got) != data:
            raise Failed(f"{len(data)} bytes echoed wrong")

    def close(self):
        self.link.send_ip(self.seg(FIN | ACK))
        self.snd_nxt = (self.snd_nxt + 1) & 0xFFFFFFFF
        deadline = time.monotonic() + REPLY_TIMEOUT
        while time.monotonic() < deadline:
            p = self.link.take(self.mine, 1.0)
            if p is None:
                continue
            seq, flags = struct.unpack_from("!I", p[3], 4)[0], p[3][13]
            if flags & FIN:
                self.rcv_nxt = (seq + 1) & 0xFFFFFFFF
                self.link.send_ip(self.seg(ACK))
                return
        # The guest's FIN may never come (it was lost): reset instead.
        self.link.send_ip(self.seg(RST | ACK))


# ---- the checks ---------------------------------------------------------------------

def ping(link, ident, bad=False):
    data = os.urandom(56)
    link.send_ip(ipv4(link.my_ip, GUEST_IP, PROTO_ICMP, icmp_echo(ident, 1, data, bad)))
    return link.take(lambda p: p[2] == PROTO_ICMP and p[0] == GUEST_IP and len(p[3]) >= 8 and
                     p[3][0] == 0 and struct.unpack_from("!H", p[3], 4)[0] == ident,
                     2 if bad else REPLY_TIMEOUT)


def udp_echo(link, sport, data, bad=False):
    link.send_ip(ipv4(link.my_ip, GUEST_IP, PROTO_UDP, udp(link.my_ip, GUEST_IP, sport, ECHO_PORT, data, bad)))
    return link.take(lambda p: p[2] == PROTO_UDP and p[0] == GUEST_IP and len(p[3]) >= 8 and
                     struct.unpack_from("!HH", p[3]) == (ECHO_PORT, sport),
                     2 if bad else REPLY_TIMEOUT)


class Checker:
    def __init__(self, link, guest):
        self.link, self.guest = link, guest
        self.port_seq = 20000 + random.randrange(20000)

    def sport(self):
        self.port_seq = 20000 + (self.port_seq - 20000 + 1) % 40000
        return self.port_seq

    def alive(self, after):
        """The guest answers ARP, a ping, a UDP echo and a TCP echo."""
        self.guest.no_panic(after)
        self.link.drain()
        try:
            self.link.resolve()
            if not ping(self.link, random.randrange(1 << 16)):
                raise Failed("no ping reply")
            d = os.urandom(64)
            p = udp_echo(self.link, self.sport(), d)
            if not p or p[3][8:] != d:
                raise Failed("no UDP echo")
            c = TcpClient(self.link, ECHO_PORT, self.sport())
            c.connect()
            c.echo(os.urandom(1000))
            c.close()
        except Failed as e:
            raise Failed(f"after {after}: {e}") from None
        self.guest.no_panic(after)


# ---- the rounds ---------------------------------------------------------------------

def check_isns(link, rng, me, n=8):
    """The guest's initial sequence numbers for n connections in a row are
    not a counter: lwIP's own (6510, plus its tick count for each) would
    let a peer guess another's sequence numbers (RFC 6528). Each half-open
    connection is reset after."""
    isns = []
    for i in range(n):
        c = TcpClient(link, ECHO_PORT, 30000 + rng.randrange(10000))
        link.send_ip(c.seg(SYN))
        p = link.take(lambda p: c.mine(p) and p[3][13] & (SYN | ACK) == SYN | ACK)
        if p is None:
            raise Failed(f"no SYN-ACK for connection {i} of the sequence-number check")
        isn = struct.unpack_from("!I", p[3], 4)[0]
        isns.append(isn)
        c.snd_nxt, c.rcv_nxt = c.iss + 1, isn + 1
        link.send_ip(c.seg(RST | ACK))
    gaps = [(b - a) & 0xFFFFFFFF for a, b in zip(isns, isns[1:])]
    if all(g < 1 << 24 for g in gaps):
        raise Failed(f"initial sequence numbers that count up: {isns}")
    return n


def round_short(link, rng, me):
    valid = [eth(link.guest_mac, TOOL_MAC, ETH_IP, ipv4(me, GUEST_IP, PROTO_TCP,
                                                        tcp(me, GUEST_IP, 4000, ECHO_PORT, 1, 0, SYN))),
             eth(BCAST, TOOL_MAC, ETH_ARP, arp(1, TOOL_MAC, me, b"\0" * 6, GUEST_IP)),
             eth(link.guest_mac, TOOL_MAC, ETH_IP, ipv4(me, GUEST_IP, PROTO_UDP, udp(me, GUEST_IP, 4000, 7, b"x")))]
    n = 0
    for f in valid:
        for cut in range(1, 60):
            link.send(f[:cut])
            n += 1
    for _ in range(100):
        link.send(bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 60))))
        n += 1
    return n


def round_oversized(link, rng, me):
    n = 0
    for size in (1515, 1519, 1523, 1600, 2048, 4096, 9000, 9018, 9100, 16384, 32768, 65000):
        body = ipv4(me, GUEST_IP, PROTO_UDP, udp(me, GUEST_IP, 4001, ECHO_PORT, b"\xab" * (size - 42)),
                    tot=min(size - 14, 0xFFFF))
        link.send(eth(link.guest_mac, TOOL_MAC, ETH_IP, body)[:size])
        n += 1
    return n


def round_ipbad(link, rng, me):
    u = udp(me, GUEST_IP, 4002, ECHO_PORT, b"ipbad")
    variants = [
        ipv4(me, GUEST_IP, PROTO_UDP, u, bad_csum=True),
        ipv4(me, GUEST_IP, PROTO_UDP, u, tot=2000),
        ipv4(me, GUEST_IP, PROTO_UDP, u, tot=10),
        ipv4(me, GUEST_IP, PROTO_UDP, u, tot=0),
        ipv4(me, GUEST_IP, PROTO_UDP, u, ihl=4),
        ipv4(me, GUEST_IP, PROTO_UDP, u, ihl=0),
        ipv4(me, GUEST_IP, PROTO_UDP, u, ihl=15),
        ipv4(me, GUEST_IP, PROTO_UDP, u, version=6),
        ipv4(me, GUEST_IP, PROTO_UDP, u, version=0),
        ipv4(me, GUEST_IP, PROTO_UDP, u, options=b"\x07\x27\x04" + b"\0" * 5),     # record route past its end
        ipv4(me, GUEST_IP, PROTO_UDP, u, options=b"\x44\x00\x00\x00"),             # a zero-length option
        ipv4(me, GUEST_IP, PROTO_UDP, u, ttl=0),
        ipv4(me, GUEST_IP, 253, b"\0" * 40),                                         # an unknown protocol
        ipv4(me, "198.18.0.255", PROTO_UDP, udp(me, "198.18.0.255", 4002, ECHO_PORT, b"bcast")),
        ipv4("198.18.0.2", GUEST_IP, PROTO_UDP, udp(GUEST_IP, GUEST_IP, ECHO_PORT, ECHO_PORT, b"land")),
        ipv4("255.255.255.255", GUEST_IP, PROTO_UDP, u),
        ipv4(me, "224.0.0.1", PROTO_UDP, u),
    ]
    n = 0
    for v in variants:
        link.send_ip(v)
        n += 1
    for etype in (0x86DD, 0x8100, 0x88B5, 0x0000, 0xFFFF):
        link.send(eth(link.guest_mac, TOOL_MAC, etype, ipv4(me, GUEST_IP, PROTO_UDP, u)))
        n += 1
    # ARP with bad lengths and a bad hardware type
    for body in (struct.pack("!HHBBH", 1, ETH_IP, 6, 4, 1), struct.pack("!HHBBH", 6, ETH_IP, 6, 4, 1) + b"\0" * 20,
                 struct.pack("!HHBBH", 1, ETH_IP, 16, 4, 1) + b"\0" * 20, arp(2, TOOL_MAC, GUEST_IP, TOOL_MAC, me)):
        link.send(eth(BCAST, TOOL_MAC, ETH_ARP, body))
        n += 1
    return n


def round_csum(link, rng, me):
    """Bad checksums: the guest answers none of them."""
    c = TcpClient(link, ECHO_PORT, 4003)
    link.send_ip(ipv4(me, GUEST_IP, PROTO_TCP,
                      tcp(me, GUEST_IP, 4003, ECHO_PORT, c.iss, 0, SYN, bad_csum=True)))
    if link.take(c.mine, 2):
        raise Failed("the guest answered a SYN whose TCP checksum is bad")
    if udp_echo(link, 4004, b"bad", bad=True):
        raise Failed("the guest echoed a UDP datagram whose checksum is bad")
    if ping(link, 4005, bad=True):
        raise Failed("the guest answered a ping whose ICMP checksum is bad")
    link.send_ip(ipv4(me, GUEST_IP, PROTO_ICMP, icmp_echo(4006, 1, b"x" * 32), bad_csum=True))
    if link.take(lambda p: p[2] == PROTO_ICMP and len(p[3]) >= 8 and struct.unpack_from("!H", p[3], 4)[0] == 4006, 2):
        raise Failed("the guest answered a ping whose IP header checksum is bad")
    return 5


def round_tcpbad(link, rng, me):
    n = 0
    for port in (ECHO_PORT, 9):
        for doff in (0, 1, 4, 6, 15):
            link.send_ip(ipv4(me, GUEST_IP, PROTO_TCP, tcp(me, GUEST_IP, 4100 + doff, port, 7, 0, SYN, doff=doff)))
            n += 1
        for opts in (b"\x02\x00\x05\xb4", b"\x02\x01", b"\x03\x00\x00\x00", b"\x08\x02\x00\x00",
                     b"\x02\x04", b"\x01" * 40, b"\x05\xff\x00\x00", b"\x04\x02\x08\x0a"):
            pad = opts + b"\0" * (-len(opts) % 4)
            link.send_ip(ipv4(me, GUEST_IP, PROTO_TCP,
                              tcp(me, GUEST_IP, 4200 + n, port, 7, 0, SYN, options=pad[:40])))
            n += 1
        for flags in range(64):
            link.send_ip(ipv4(me, GUEST_IP, PROTO_TCP,
                              tcp(me, GUEST_IP, 4300 + flags, port, rng.getrandbits(32), rng.getrandbits(32),
                                  flags, b"data" if flags & 1 else b"")))
            n += 1
    return n


def round_frags(link, rng, me):
    n = 0
    for i in range(300):
        body = udp(me, GUEST_IP, 4400, ECHO_PORT, b"\xcd" * 1400)
        ident = 0x1000 + i
        # a first fragment (MF, offset 0) whose rest never comes
        link.send_ip(ipv4(me, GUEST_IP, PROTO_UDP, body[:1400], ident=ident, frag=0x2000))
        n += 1
        if i % 3 == 0:          # a middle one too, overlapping the first
            link.send_ip(ipv4(me, GUEST_IP, PROTO_UDP, body[:800], ident=ident, frag=0x2000 | 100))
            n += 1
        if i % 5 == 0:          # a last fragment past 64 KiB
            link.send_ip(ipv4(me, GUEST_IP, PROTO_UDP, body[:1000], ident=ident, frag=0x1FFF))
            n += 1
        if i % 7 == 0:          # a tiny middle fragment, 8 bytes at a time
            for k in range(1, 20):
                link.send_ip(ipv4(me, GUEST_IP, PROTO_UDP, b"\0" * 8, ident=ident, frag=0x2000 | k))
                n += 1
    return n


def round_seqwrap(link, rng, me):
    """On open connections, a FIN and a one-byte segment starting exactly
    2^31 before what the guest expects next (lwIP 2.1 asserts on these
    unless the port's TCP input hook drops them); each connection must
    still echo afterwards."""
    n = 0
    for i, (flags, data) in enumerate(((FIN | ACK, b""), (PSH | ACK, b"w"))):
        c = TcpClient(link, ECHO_PORT, 4600 + i)
        c.connect()
        link.send_ip(ipv4(me, GUEST_IP, PROTO_TCP,
                          tcp(me, GUEST_IP, c.sport, c.port, (c.snd_nxt - (1 << 31)) & 0xFFFFFFFF,
                              c.rcv_nxt, flags, data)))
        c.echo(b"still open %d" % i)
        c.close()
        n += 1
    return n


def round_mutate(link, rng, me, count):
    base = [
        eth(link.guest_mac, TOOL_MAC, ETH_IP, ipv4(me, GUEST_IP, PROTO_TCP,
                                                   tcp(me, GUEST_IP, 4500, ECHO_PORT, 1, 0, SYN,
                                                       options=struct.pack("!BBH", 2, 4, 1460)))),
        eth(link.guest_mac, TOOL_MAC, ETH_IP, ipv4(me, GUEST_IP, PROTO_UDP,
                                                   udp(me, GUEST_IP, 4500, ECHO_PORT, b"mutate" * 10))),
        eth(link.guest_mac, TOOL_MAC, ETH_IP, ipv4(me, GUEST_IP, PROTO_ICMP, icmp_echo(7, 7, b"m" * 40))),
        eth(BCAST, TOOL_MAC, ETH_ARP, arp(1, TOOL_MAC, me, b"\0" * 6, GUEST_IP)),
        eth(link.guest_mac, TOOL_MAC, ETH_IP, ipv4(me, GUEST_IP, PROTO_UDP, udp(me, GUEST_IP, 4500, 7, b"f" * 600),
                                                   ident=77, frag=0x2000)),
    ]
    for i in range(count):
        f = bytearray(base[i % len(base)])
        for _ in range(rng.randrange(1, 6)):
            at = rng.randrange(14, len(f))
            f[at] = rng.getrandbits(8)
        if rng.random() < 0.2:
            f = f[:rng.randrange(14, len(f))]
        link.send(bytes(f))
        # Pace the flood so the NIC's ring, not the dgram socket, decides.
        if i % 64 == 63:
            time.sleep(0.01)
    return count


def spoofed_syns(link, rng, count):
    for i in range(count):
        src = f"198.18.0.{rng.randrange(10, 250)}"
        link.send_ip(ipv4(src, GUEST_IP, PROTO_TCP,
                          tcp(src, GUEST_IP, rng.randrange(1024, 65536), ECHO_PORT, rng.getrandbits(32), 0, SYN,
                              options=struct.pack("!BBH", 2, 4, 1460))))
        if i % 64 == 63:
            time.sleep(0.01)
    return count


def round_synflood(link, rng, me, count):
    """A flood, then connections made amid it: each SYN comes right after
    SYNQ_FILL more, so it finds the listener's half-open connections full
    of the flood's (they last lwIP's SYN_RCVD timeout, 20 s), and SYNQ_FILL
    more follow it, from more sources than the guest's ARP table holds.
    The guest must answer it with its SYN cookie, make the connection from
    the ACK while the queue stays full, and echo. A guest that drops such
    a SYN never answers it. Once the guest has this tool's address (the
    first connection may have to ask for it), each later SYN must be
    answered, not retried: a guest whose answers to the flood's spoofed
    sources take over its ARP table loses the entry, and the answer
    waiting in it, to the burst behind the SYN."""
    sent = [spoofed_syns(link, rng, count)]

    def burst():
        sent[0] += spoofed_syns(link, rng, SYNQ_FILL)

    for i in range(FLOOD_PROBES):
        burst()
        c = TcpClient(link, ECHO_PORT, 20000 + rng.randrange(10000))
        if i == 0:
            c.connect(after_syn=burst)
        else:
            c.connect(after_syn=burst, tries=1, wait=REPLY_TIMEOUT)
        c.echo(b"during a flood " * 10)
        c.close()
        sent[0] += 5
    return sent[0]


def round_cookie(link, rng, me):
    """A handshake the guest no longer holds when its ACK comes: lwIP ends
    a half-open connection after 20 s without an ACK (every one lost in a
    burst), here at once by a reset in its window. Data with the ACK must
    then make the connection again from its SYN cookie, which the guest
    shows by answering a SYN-ACK of the same initial sequence number
    first, and come back."""
    c = TcpClient(link, ECHO_PORT, 20000 + rng.randrange(10000))
    link.send_ip(c.seg(SYN))
    p = link.take(lambda p: c.mine(p) and p[3][13] & (SYN | ACK) == SYN | ACK)
    if p is None:
        raise Failed("no SYN-ACK")
    isn = struct.unpack_from("!I", p[3], 4)[0]
    c.snd_nxt, c.rcv_nxt = (c.iss + 1) & 0xFFFFFFFF, (isn + 1) & 0xFFFFFFFF
    link.send_ip(c.seg(RST))
    if not ping(link, rng.randrange(1 << 16)):      # the reset taken before the ACK comes
        raise Failed("no ping reply after the reset")
    link.drain()
    data = b"made again from its cookie " * 20
    link.send_ip(c.seg(ACK | PSH, data))
    if link.take(lambda p: c.mine(p) and p[3][13] & (SYN | ACK) == SYN | ACK and
                 struct.unpack_from("!I", p[3], 4)[0] == isn) is None:
        raise Failed("no SYN-ACK of the cookie's: the connection was not made again")
    c.echo(data)
    c.close()
    return 5


# ---- the guest ----------------------------------------------------------------------

class Guest(qemu.Console):
    """app=netecho's console, and whether it has said anything fatal."""

    def no_panic(self, after):
        with self.cond:
            bad = [x for x in self.lines if x is None or PANIC_RE.search(x)]
            if bad:
                raise Failed(f"after {after}: the guest " +
                             ("ended" if bad[0] is None else f"said {bad[0]!r}") +
                             ": " + self.tail())


def run_rounds(link, guest, opts):
    rng = random.Random(opts.seed)
    check = Checker(link, guest)
    me = link.my_ip
    check.alive("boot")
    counts = {"isn": check_isns(link, rng, me)}
    rounds = [("short", lambda: round_short(link, rng, me)),
              ("oversized", lambda: round_oversized(link, rng, me)),
              ("ipbad", lambda: round_ipbad(link, rng, me)),
              ("csum", lambda: round_csum(link, rng, me)),
              ("tcpbad", lambda: round_tcpbad(link, rng, me)),
              ("frags", lambda: round_frags(link, rng, me)),
              ("seqwrap", lambda: round_seqwrap(link, rng, me)),
              ("mutate", lambda: round_mutate(link, rng, me, opts.mutate)),
              ("cookie", lambda: round_cookie(link, rng, me)),
              ("synflood", lambda: round_synflood(link, rng, me, opts.flood))]
    for name, fn in rounds:
        t0 = time.monotonic()
        try:
            counts[name] = fn()
        except Failed as e:
            guest.no_panic(f"{name}, which failed ({e})")   # the panic is the better reason
            raise Failed(f"{name}: {e}") from None
        check.alive(f"{name} ({counts[name]} frames)")
        if opts.verbose:
            print(f"badframes: {name}: {counts[name]} frames, then the checks: {time.monotonic() - t0:.1f} s",
                  file=sys.stderr, flush=True)
    return counts


def dgram_model(opts, nic, group):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    mine = sock.getsockname()[1]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        theirs = s.getsockname()[1]
    cmd = qemu.argv(opts.smp, "512M", machine=opts.machine,
                    extra=qemu.nic_argv(nic, "dgram", dgram=(theirs, mine))) + \
        qemu.kernel_boot(qemu.image(opts), f"ip={GUEST_IP}/24 gw=198.18.0.1 app=netecho")
    guest = Guest(group, cmd)

    def recv(timeout):
        r, _, _ = select.select([sock], [], [], timeout)
        return sock.recv(1 << 17) if r else None

    link = Link(lambda f: sock.sendto(f, ("127.0.0.1", theirs)), recv, "198.18.0.1")
    try:
        guest.wait_for(r"^netecho: tcp and udp echo on port 7", BOOT_TIMEOUT)
        return run_rounds(link, guest, opts)
    finally:
        link.stopped = True
        guest.close()
        sock.close()


def ping_argv():
    """iputils' ping, or busybox's (busybox-static is one of make deps')."""
    return ["ping"] if shutil.which("ping") else ["busybox", "ping"]


def setns(fd):
    """This thread into the network namespace fd (os.setns is Python 3.12's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:         # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns")


def tap_model(opts, nic, group):
    netns = os.path.join(ROOT, "tools", "net", "netns.py")
    name = f"{opts.ns_prefix}{os.getpid() % 100000}"
    smp = int(str(opts.smp).split(",")[0])
    out = subprocess.run([sys.executable, netns, "create", name, "--queues", str(smp)],
                         capture_output=True, text=True)
    if out.returncode:
        raise Failed(f"netns.py create: {out.stderr.strip()}")
    try:
        # The tap's largest MTU, so the oversized frames reach QEMU's NIC.
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", name, "mtu", "65521"], check=True)
        qargs = subprocess.run([sys.executable, netns, "qemu-args", name], capture_output=True, text=True,
                               check=True).stdout.split()
        cmd = ["ip", "netns", "exec", name] + qemu.argv(opts.smp, "512M", machine=opts.machine, extra=qargs) + \
            qemu.kernel_boot(qemu.image(opts), f"ip={GUEST_IP}/24 gw=198.18.0.1 app=netecho")
        guest = Guest(group, cmd)
        # A packet socket on the tap, opened inside the namespace.
        fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
        own = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:
            setns(fd)
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
            sock.bind((name, 0))
        finally:
            setns(own)
            os.close(fd)
            os.close(own)

        def recv(timeout):
            r, _, _ = select.select([sock], [], [], timeout)
            if not r:
                return None
            data, addr = sock.recvfrom(1 << 17)
            return None if addr[2] == socket.PACKET_OUTGOING else data

        def send(f):
            # A packet socket refuses a frame shorter than its header: on a
            # wire such a frame is a runt the sending NIC pads or never sends.
            if len(f) >= 14:
                sock.send(f)

        link = Link(send, recv, "198.18.0.9")
        try:
            guest.wait_for(r"^netecho: tcp and udp echo on port 7", BOOT_TIMEOUT)
            counts = run_rounds(link, guest, opts)
            # The namespace's own kernel: a ping, every echo answered (a
            # tap loses nothing), and a real connection.
            ping_ok = subprocess.run(["ip", "netns", "exec", name] + ping_argv() +
                                     ["-c", str(PINGS), "-W", "5", GUEST_IP], capture_output=True, text=True)
            m = re.search(r"(\d+) (?:packets )?received", ping_ok.stdout)
            replies = int(m.group(1)) if m else 0
            if ping_ok.returncode or replies != PINGS:
                raise Failed(f"ping from the namespace: {replies} of {PINGS} replies: "
                             f"{(ping_ok.stdout + ping_ok.stderr).strip()[-200:]}")
            counts = dict(counts, ping_replies=f"{replies} of {PINGS}")
            probe = ("import socket; s=socket.create_connection(('%s', 7), timeout=30); s.sendall(b'tap ok');"
                     "import sys; sys.exit(0 if s.recv(16) == b'tap ok' else 1)" % GUEST_IP)
            if subprocess.run(["ip", "netns", "exec", name, sys.executable, "-c", probe]).returncode:
                raise Failed("no echo over a connection from the namespace's kernel")
            guest.no_panic("the namespace's ping and connection")
            return counts
        finally:
            link.stopped = True
            guest.close()
            sock.close()
    finally:
        subprocess.run([sys.executable, netns, "destroy", name], capture_output=True)


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--nic", default="virtio-modern,virtio-legacy,e1000e")
    ap.add_argument("--smp", default="2")
    ap.add_argument("--machine", default=None)
    # More than the 512 half-open connections a listener holds (net/synq.c).
    ap.add_argument("--flood", type=int, default=2000)
    ap.add_argument("--mutate", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--ns-prefix", default="net2bad", help="the namespace's and tap's name, before the pid")
    ap.add_argument("-v", "--verbose", action="store_true", help="each round's wall-clock time, on stderr")
    opts = ap.parse_args()
    random.seed(opts.seed)
    group, failed = qemu.Group(), 0
    nics = ["virtio-modern"] if opts.tap else opts.nic.split(",")
    for nic in nics:
        name = f"badframes/{'tap-' if opts.tap else ''}{nic}-smp{opts.smp}"
        if opts.tap and os.geteuid() != 0:
            print(f"SKIP {name}: needs root (a namespace and a tap)", flush=True)
            continue
        try:
            counts = (tap_model if opts.tap else dgram_model)(opts, nic, group)
        except (Failed, qemu.ConsoleError, OSError, subprocess.CalledProcessError) as e:
            print(f"FAIL {name}: {e}", flush=True)
            failed += 1
            continue
        replies = counts.pop("ping_replies", None)
        print(f"PASS {name}: still answering after " +
              ", ".join(f"{k} {v}" for k, v in counts.items()) + " frames" +
              (f"; the namespace's ping: {replies} replies" if replies else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
