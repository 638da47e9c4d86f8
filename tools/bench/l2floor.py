#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The emulator's floor: how many frames a second QEMU carries between the
host and a guest NIC on this machine, with nothing of goro's above the
driver. goro runs app=l2reflect (drivers/net/l2reflect.c), which sends
every frame its NIC receives straight back from the interrupt; this tool
sends frames from the host and counts what comes back.

    tools/bench/l2floor.py [--nic virtio-modern] [--smp 2] [--frames 50000]
                           [--window 32] [--size 64] [--runs 3]
    tools/bench/l2floor.py --check         # make test's host test: every frame back
    tools/bench/l2floor.py --tap --smp 4 --queues 4   # as root: multiqueue over a tap
    tools/bench/l2floor.py --check --tap --smp 1,2,4,8   # make test's: each vCPU count in turn
    tools/bench/l2floor.py --insn --frames 20000         # guest instructions per frame

The NIC's backend is QEMU's dgram netdev: each Ethernet frame is one UDP
datagram between QEMU's port and this tool's on 127.0.0.1, both picked
free at run time (no root, no tap). A closed loop keeps --window frames in
flight: a frame goes out each time one comes back, so the rate is what the
path sustains, not what a burst overflows. The frames are of --size bytes
(Ethernet header included), EtherType 0x88B5 (IEEE 802's local
experimental type), numbered, and each must come back with the addresses
swapped and its bytes intact. They are sent from this tool's socket by
tools/net/l2send (C, built by make beside the image: the same frames and
checks at a tenth of this script's host CPU a frame, --batch of them a
system call; --sender python: this script's own). A window above 32
overflowed the dgram backend on this host (frames lost). One line per run
in goro's benchmark format:

    BENCH l2floor nic=virtio-modern vcpus=2 size=64 window=32 frames=50000 pps=12345 lost=0 sender=c host_load=2.51

with the host's 1-minute load average at the start: the rate is
wall-clock under TCG, and moves with what else the host runs (take it on a
quiet host, or compare runs made side by side). --check sends a few
hundred frames through each NIC model, from each sender, and prints PASS
or FAIL per model (the runner's host-test format), asserting counts, never
a rate.

--tap (root): the NIC is a multiqueue virtio-net (--queues pairs, one per
vCPU by default) on a tap device in a network namespace this tool makes
(--ns-prefix, default "goro-l2f"; removed at the end), QEMU running inside
it. The frames go into the tap from a packet socket in the namespace, shaped
as UDP datagrams between 198.18.0.1 and 198.18.0.2 from --flows source
ports, so the tap spreads them over its queues by flow hash; the guest
reflects each on the queue it came in on. The sender is l2send on a packet
socket (Python's cost a frame, ten times its, was the rate's limit on a
loaded host), with a window of 256 by default (a pair's ring holds 256;
1,024 overflowed the path on this host, frames lost; --check keeps 128).
The BENCH line adds queues=, the guest's count per queue pair
(queue_frames=a/b/c/d), and the sender and its host CPU microseconds per
frame (sender=c sender_us=2.1);
--check with --tap asserts every frame came back, at least two queue pairs
carried some, pair i's interrupt was aimed at core i, and every interrupt
reached the core its pair's was aimed at; --check without it, that l2send's
frames are this script's byte for byte and its checker refuses damaged ones.
--smp takes a comma-separated list of vCPU counts: each is run in turn.

--insn: instead of a rate, the guest's instructions per reflected frame,
counted by the insncount plugin (make insncount), which does not move
with the host's load: two boots of app=l2reflect seconds=--insn-seconds
per NIC model, one given no frames and one --frames, each ending with the
plugin's count of every instruction every vCPU ran (its END line); the
difference over the frames is the driver's, the reflector's and the
interrupts' cost of a frame, one INSN line per model:

    INSN l2floor nic=virtio-modern vcpus=2 size=64 frames=20000 insn_per_frame=2345 idle_insn=... loaded_insn=...

Both boots run the same wall-clock time, so what idle cores execute meanwhile
(timer ticks, sysmon) is in both and cancels, up to its jitter; the
idle boot's total says how large that is.

--csum (with --tap; always on with --check): checksum offload both ways.
The sender's packet socket speaks virtio's header (PACKET_VNET_HDR): each
datagram goes out with its checksum left to fill in (NEEDS_CSUM, the
field holding the pseudo-header's sum), which the tap hands the guest as
it is; the guest (app=l2reflect csum=1) asks its device to make each
checksum on the way back. What comes back is completed as its header says
and must carry the right checksum; the guest's counts say every datagram
arrived marked NETDEV_RX_CSUM_OK and went back with NETDEV_TX_CSUM.

Python 3 standard library only.
"""
import argparse
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.run import qemu  # noqa: E402

ETHERTYPE = 0x88B5
GUEST_MAC = bytes.fromhex("525400123456")       # QEMU's default first NIC's
HOST_MAC = bytes.fromhex("020000000001")        # locally administered
READY = "l2reflect: reflecting on"
STALL_S = 60.0          # no frame back for this long: lost (only a hang gets there)


def free_udp_port():
    """A port nobody holds now on 127.0.0.1 (QEMU binds it a moment later;
    a collision shows as QEMU failing to start, and is retried)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ones_sum(b):
    """The folded 16-bit ones-complement sum of b (RFC 1071), not inverted."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f">{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def ip_csum(b):
    return ~ones_sum(b) & 0xFFFF


UDP_CSUM_AT = 14 + 20 + 6               # where frame()'s UDP checksum sits


def udp_pseudo(f):
    """The pseudo-header's folded sum for frame f's UDP datagram."""
    return ones_sum(f[26:34] + struct.pack(">HH", 17, len(f) - 34))


def udp_csum(f):
    """Frame f's UDP checksum as its sender makes it (0 becomes 0xFFFF)."""
    s = ~ones_sum(struct.pack(">H", udp_pseudo(f)) + f[34:UDP_CSUM_AT] + b"\0\0" + f[UDP_CSUM_AT + 2:]) & 0xFFFF
    return s or 0xFFFF


def frame(seq, size, flows=0, csum=False):
    """Frame seq: flows 0, the experimental EtherType and the number; else
    an IPv4 UDP datagram 198.18.0.1 -> 198.18.0.2 from one of flows source
    ports, the number in its payload, its checksum made with csum (else 0,
    none)."""
    if not flows:
        head = GUEST_MAC + HOST_MAC + struct.pack(">HI", ETHERTYPE, seq)
    else:
        total = size - 14
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, seq & 0xFFFF, 0, 64, 17, 0,
                         bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
        ip = ip[:10] + struct.pack(">H", ip_csum(ip)) + ip[12:]
        udp = struct.pack(">HHHH", 20000 + seq % flows, 9, total - 20, 0)
        head = GUEST_MAC + HOST_MAC + struct.pack(">H", 0x0800) + ip + udp + struct.pack(">I", seq)
    body = bytes((seq + i) & 0xFF for i in range(size - len(head)))
    f = head + body
    if flows and csum:
        f = f[:UDP_CSUM_AT] + struct.pack(">H", udp_csum(f)) + f[UDP_CSUM_AT + 2:]
    return f


def check_echo(data, seq_expected, size, flows=0, csum=False):
    """The frame back: addresses swapped, the rest as sent (with csum, the
    UDP checksum the right one). Its sequence number, or None when it is not
    one of ours or is damaged."""
    if len(data) != size or data[:6] != HOST_MAC or data[6:12] != GUEST_MAC:
        return None
    at = 14 if not flows else 42
    seq = struct.unpack(">I", data[at:at + 4])[0]
    if seq not in seq_expected or data[12:] != frame(seq, size, flows, csum)[12:]:
        return None
    return seq


# virtio's header before each frame on a PACKET_VNET_HDR socket (struct
# virtio_net_hdr, host byte order): flags, gso_type, hdr_len, gso_size,
# csum_start, csum_offset.
VNET_HDR = struct.Struct("=BBHHHH")
NEEDS_CSUM = 1
SOL_PACKET = 263                # <linux/socket.h>; the socket module lacks it
PACKET_VNET_HDR = 15            # <linux/if_packet.h>


def vnet_out(f):
    """Frame f (checksum made) as sent with its checksum left to fill in."""
    partial = f[:UDP_CSUM_AT] + struct.pack(">H", udp_pseudo(f)) + f[UDP_CSUM_AT + 2:]
    return VNET_HDR.pack(NEEDS_CSUM, 0, 0, 0, UDP_CSUM_AT - 6, 6) + partial


def vnet_in(data):
    """A frame read with its virtio header: the checksum it asks for made."""
    flags, _, _, _, start, off = VNET_HDR.unpack_from(data)
    f = data[VNET_HDR.size:]
    if flags & NEEDS_CSUM and start + off + 2 <= len(f):
        s = ~ones_sum(f[start:]) & 0xFFFF
        f = f[:start + off] + struct.pack(">H", s or 0xFFFF) + f[start + off + 2:]
    return f


class Guest:
    """goro with app=l2reflect on one NIC whose frames reach this tool."""

    def __init__(self, elf, nic, smp, machine, group, args="", plugin=()):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        mine = self.sock.getsockname()[1]
        self.qemu_port = free_udp_port()
        cmd = qemu.argv(smp, "512M", machine=machine, serial="stdio",
                        extra=qemu.nic_argv(nic, "dgram", dgram=(self.qemu_port, mine)) + list(plugin))
        self.cmd = cmd + qemu.kernel_boot(elf, f"app=l2reflect {args}".strip())
        self.group = group
        self.log = []

    def __enter__(self):
        self.ctx = self.group.started(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.proc = self.ctx.__enter__()
        deadline = time.monotonic() + 300
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\r\n")
            self.log.append(line)
            if line.startswith(READY):
                return self
            if time.monotonic() > deadline:
                break
        raise RuntimeError("l2reflect never said it was ready:\n  " + "\n  ".join(self.log[-15:]))

    def __exit__(self, *exc):
        self.ctx.__exit__(*exc)
        self.sock.close()

    def run(self, frames, window, size, l2send="", batch=32):
        """Sends frames, window in flight, from l2send (given its path: on
        this tool's socket, passed down) or from here; returns (frames back,
        seconds)."""
        if not l2send:
            to = ("127.0.0.1", self.qemu_port)
            return closed_loop(self.sock, lambda f: self.sock.sendto(f, to), frames, window, size, 0)
        fd = self.sock.fileno()
        out = subprocess.run([l2send, "--fd", str(fd), "--to", str(self.qemu_port), "--flows", "0",
                              "--frames", str(frames), "--window", str(window), "--size", str(size),
                              "--batch", str(batch)], pass_fds=(fd,), capture_output=True, text=True,
                             timeout=STALL_S * 4 + frames)
        m = re.search(r"^SENT back=(\d+) secs=([\d.]+)", out.stdout, re.M)
        if not m:
            raise RuntimeError(f"l2send failed: {out.stdout} {out.stderr}")
        return int(m.group(1)), float(m.group(2))


def closed_loop(sock, send, frames, window, size, flows, csum=False):
    """Sends frames through send, window in flight, each answered on sock;
    returns (frames back, seconds). A frame that does not come back within
    STALL_S of the last one that did is lost. csum: sock speaks virtio's
    header, and each frame leaves with its UDP checksum to fill in."""
    outstanding, sent, back = set(), 0, 0
    t0 = last = time.monotonic()
    while back < frames:
        while sent < frames and len(outstanding) < window:
            f = frame(sent, size, flows, csum)
            send(vnet_out(f) if csum else f)
            outstanding.add(sent)
            sent += 1
        ready, _, _ = select.select([sock], [], [], 1.0)
        if not ready:
            if time.monotonic() - last > STALL_S:
                break
            continue
        data = sock.recv(4096)
        if csum:
            data = vnet_in(data)
        seq = check_echo(data, outstanding, size, flows, csum)
        if seq is not None:
            outstanding.discard(seq)
            back += 1
            last = time.monotonic()
    return back, time.monotonic() - t0


# ---- multiqueue over a tap (root) ---------------------------------------------------

def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class TapGuest:
    """goro with app=l2reflect on a multiqueue virtio-net whose tap lives
    in a network namespace made here; QEMU runs inside the namespace."""

    def __init__(self, opts, group):
        tag = f"{opts.ns_prefix}{os.getpid() % 100000}"
        self.ns, self.tap = tag, (tag + "t")[:15]
        self.queues = opts.queues or opts.smp
        self.group, self.log = group, []
        self.sent = 0                   # frames sent by every run so far
        nic = (f"tap,id=n0,ifname={self.tap},script=no,downscript=no,queues={self.queues},vhost=off")
        device = f"virtio-net-pci,disable-legacy=on,netdev=n0,mq=on,vectors={2 * self.queues + 2}"
        cmd = qemu.argv(opts.smp, "512M", machine=opts.machine, serial="stdio",
                        extra=["-netdev", nic, "-device", device])
        self.csum = opts.csum
        self.l2send, self.batch = l2send_path(opts), opts.batch
        self.cmd = ["ip", "netns", "exec", self.ns] + cmd + \
            qemu.kernel_boot(qemu.image(opts), f"app=l2reflect gomaxprocs={opts.smp}"
                                               f"{' csum=1' if opts.csum else ''}")

    def __enter__(self):
        sh("ip", "netns", "add", self.ns)
        try:
            self.ctx = self.group.started(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.proc = self.ctx.__enter__()
            for raw in self.proc.stdout:
                line = raw.decode(errors="replace").rstrip("\r\n")
                self.log.append(line)
                if line.startswith(READY):
                    break
            else:
                raise RuntimeError("l2reflect never said it was ready:\n  " + "\n  ".join(self.log[-15:]))
            sh("ip", "-n", self.ns, "link", "set", self.tap, "up")
            self.lines = []
            threading.Thread(target=self._read, daemon=True).start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _read(self):
        for raw in self.proc.stdout:
            self.lines.append(raw.decode(errors="replace").rstrip("\r\n"))

    def __exit__(self, *exc):
        if hasattr(self, "ctx"):
            self.ctx.__exit__(*exc)
        subprocess.run(["ip", "netns", "del", self.ns], stderr=subprocess.DEVNULL)

    def run(self, frames, window, size, flows):
        """The sender runs in the namespace (l2send, or with --sender python
        this script again, --tap-sender): (frames back, seconds, the
        sender's CPU seconds)."""
        args = [self.tap, "--frames", str(frames), "--window", str(window), "--size", str(size),
                "--flows", str(flows)] + (["--csum"] if self.csum else [])
        sender = [self.l2send, "--batch", str(self.batch)] if self.l2send else \
            [sys.executable, os.path.abspath(__file__), "--tap-sender"]
        before = os.times()
        out = subprocess.run(["ip", "netns", "exec", self.ns] + sender + args,
                             capture_output=True, text=True, timeout=STALL_S * 4 + frames)
        after = os.times()
        m = re.search(r"^SENT back=(\d+) secs=([\d.]+)", out.stdout, re.M)
        if not m:
            raise RuntimeError(f"the sender failed: {out.stdout} {out.stderr}")
        self.sent += frames
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        return int(m.group(1)), float(m.group(2)), cpu

    def queue_counts(self):
        """From the guest's per-second line, the first to count every frame
        sent so far (or the last within 10 s): its count per queue pair, of
        interrupts off their queue's core, and of checksums known on receive
        and made by the device ((0, 0) without --csum)."""
        found, deadline = ([], -1, (0, 0)), time.monotonic() + 10
        while time.monotonic() < deadline:
            for line in reversed(self.lines):
                m = re.match(r"^l2reflect: \d+ s: .*\((\d+) off their queue's core so far\)"
                             r"(?:, checksums: (\d+) known on receive, (\d+) made by the device)?"
                             r"; per queue:([\d ]+)$", line)
                if m:
                    found = ([int(x) for x in m.group(4).split()], int(m.group(1)),
                             (int(m.group(2) or 0), int(m.group(3) or 0)))
                    break
            if sum(found[0]) >= self.sent:
                break
            time.sleep(0.5)
        return found

    def queue_cores(self):
        """The core each queue pair's interrupt is aimed at, as the guest said."""
        for line in self.lines:
            m = re.match(r"^l2reflect: queue pairs' cores:([\d ]+)$", line)
            if m:
                return [int(x) for x in m.group(1).split()]
        return []


def tap_sender(opts):
    """Inside the namespace: a packet socket on the tap."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    if opts.csum:
        s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    s.bind((opts.tap_sender, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    back, secs = closed_loop(s, s.send, opts.frames, opts.window, opts.size, opts.flows, opts.csum)
    print(f"SENT back={back} secs={secs:.3f}", flush=True)
    return 0


def l2send_path(opts):
    """The C sender (tools/net/l2send.c, built by make beside the image),
    or "" for this script's own (--sender python)."""
    if opts.sender == "python":
        return ""
    path = opts.l2send or os.path.join(os.path.dirname(os.path.abspath(qemu.image(opts))), "tools", "l2send")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"l2floor: no {path} (make l2send), or --sender python")
    return path


def tap_bench(opts):
    group = qemu.Group()
    with TapGuest(opts, group) as g:
        g.run(min(1000, opts.frames), opts.window, opts.size, opts.flows)
        failed = 0
        for _ in range(1 if opts.check else opts.runs):
            load = host_load()
            back, secs, cpu = g.run(opts.frames, opts.window, opts.size, opts.flows)
            per_queue, off_core, (known, made) = g.queue_counts()
            used = sum(1 for c in per_queue if c)
            if opts.check:
                name = f"l2floor/tap-mq{g.queues}-smp{opts.smp}"
                cores, want = g.queue_cores(), list(range(min(g.queues, opts.smp)))
                problems = []
                if back != opts.frames:
                    problems.append(f"{back} of {opts.frames} frames back")
                if used < min(2, g.queues):
                    problems.append(f"{used} queue pairs used ({'/'.join(map(str, per_queue))})")
                if cores != want:
                    problems.append(f"queue pairs' cores {cores}, expected {want}")
                if off_core != 0:
                    problems.append(f"{off_core} interrupts off their queue's core")
                # Only the tool's frames are IPv4 UDP datagrams (the
                # namespace's own are IPv6 neighbour discovery, if any).
                if opts.csum and not (made == g.sent and known >= g.sent):
                    problems.append(f"of {g.sent} datagrams sent, {known} arrived with their checksum "
                                    f"known and {made} left with it made by the device")
                if problems:
                    print(f"FAIL {name}: {'; '.join(problems)}")
                    failed += 1
                else:
                    print(f"PASS {name}: {back} frames back over {used} of {g.queues} queue pairs "
                          f"({'/'.join(map(str, per_queue))}), each interrupt on its pair's core"
                          f"{', checksums offloaded both ways' if opts.csum else ''}")
                continue
            print(f"BENCH l2floor nic=virtio-modern-tap vcpus={opts.smp} queues={g.queues} size={opts.size} "
                  f"window={opts.window} flows={opts.flows} frames={opts.frames} pps={back / secs:.0f} "
                  f"lost={opts.frames - back} queue_frames={'/'.join(map(str, per_queue))} "
                  f"sender={'c' if g.l2send else 'python'} sender_us={cpu * 1e6 / max(back, 1):.1f} "
                  f"host_load={load:.2f}", flush=True)
    return 1 if failed else 0


def host_load():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return -1.0


def start(opts, nic, group, tries=3, args="", plugin=()):
    for i in range(tries):
        g = Guest(qemu.image(opts), nic, opts.smp, opts.machine, group, args, plugin)
        try:
            return g.__enter__()
        except RuntimeError as e:
            if i == tries - 1 or "Address already in use" not in str(e):
                raise
    return None


def bench(opts):
    group, l2send = qemu.Group(), l2send_path(opts)
    for nic in opts.nic.split(","):
        g = start(opts, nic, group)
        try:
            g.run(min(1000, opts.frames), opts.window, opts.size)      # warm: the first frames translate code
            for _ in range(opts.runs):
                load = host_load()
                back, secs = g.run(opts.frames, opts.window, opts.size, l2send, opts.batch)
                print(f"BENCH l2floor nic={nic} vcpus={opts.smp} size={opts.size} window={opts.window} "
                      f"frames={opts.frames} pps={back / secs:.0f} lost={opts.frames - back} "
                      f"sender={'c' if l2send else 'python'} host_load={load:.2f}", flush=True)
        finally:
            g.__exit__(None, None, None)
    return 0


def insn_total(log):
    """The plugin's END count of every instruction every vCPU ran."""
    with open(log) as f:
        m = re.search(r"^INSNCOUNT END total=(\d+)", f.read(), re.M)
    if not m:
        raise RuntimeError(f"{log}: no INSNCOUNT END line")
    return int(m.group(1))


def insn(opts):
    """Guest instructions per reflected frame, each NIC model (see --insn)."""
    plugin = os.path.abspath(opts.plugin)
    if not os.path.exists(plugin):
        print(f"l2floor: no {plugin} (make insncount)", file=sys.stderr)
        return 1
    group = qemu.Group()
    for nic in opts.nic.split(","):
        totals = []
        for frames in (0, opts.frames):
            log = os.path.join(os.path.dirname(plugin), f"l2floor-{nic}-{frames}.log")
            g = start(opts, nic, group, args=f"seconds={opts.insn_seconds}",
                      plugin=qemu.plugin_argv(plugin, log))
            try:
                t0 = time.monotonic()
                back = g.run(frames, opts.window, opts.size)[0] if frames else 0
                if back != frames:
                    raise RuntimeError(f"{nic}: {back} of {frames} frames back")
                if time.monotonic() - t0 > opts.insn_seconds / 2:
                    raise RuntimeError(f"{nic}: the frames took more than half of --insn-seconds; raise it")
                g.proc.stdout.read()                # to the guest's end: seconds= stops it
                g.proc.wait()
            finally:
                g.__exit__(None, None, None)
            totals.append(insn_total(log))
        print(f"INSN l2floor nic={nic} vcpus={opts.smp} size={opts.size} frames={opts.frames} "
              f"insn_per_frame={(totals[1] - totals[0]) / opts.frames:.0f} idle_insn={totals[0]} "
              f"loaded_insn={totals[1]}", flush=True)
    return 0


def check_l2send(opts):
    """The C sender's frames are frame()'s, byte for byte, and its checker
    refuses every damaged one (its --selftest): 0 or 1 failure."""
    name = "l2floor/l2send"
    try:
        path = l2send_path(opts)
        out = subprocess.run([path, "--selftest"], capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"--selftest: {(out.stdout + out.stderr).strip()[-500:]}")
        cases = 0
        for size in (60, 61, 1514):
            for flows in (0, 1, 64):
                for csum in (False, True) if flows else (False,):
                    for seq in (0, 1, 255, 65537, 2**32 - 1):
                        argv = [path, "--print", str(seq), "--size", str(size), "--flows", str(flows)]
                        got = subprocess.run(argv + (["--csum"] if csum else []), capture_output=True,
                                             text=True, timeout=60).stdout.strip()
                        if got != frame(seq, size, flows, csum).hex():
                            raise RuntimeError(f"frame {seq} (size {size}, flows {flows}, csum {csum}) "
                                               f"differs from frame()'s")
                        cases += 1
    except (RuntimeError, SystemExit, OSError) as e:
        print(f"FAIL {name}: {e}")
        return 1
    print(f"PASS {name}: {cases} frames as frame() makes them; every damaged frame refused")
    return 0


def check(opts):
    """Every frame back, each model: counts only; and the C sender's
    frames and checker."""
    group, failed = qemu.Group(), check_l2send(opts)
    try:
        l2send = l2send_path(opts)
    except SystemExit:
        l2send = ""                             # failed above; the script's own sender still runs
    for nic in ("virtio-modern", "virtio-legacy", "e1000e"):
        name = f"l2floor/{nic}"
        try:
            g = start(opts, nic, group)
        except RuntimeError as e:
            print(f"FAIL {name}: {e}")
            failed += 1
            continue
        try:
            sizes = (60, 1514)
            lost = 0
            for size in sizes:
                back, _ = g.run(300, 16, size)
                lost += 300 - back
                if l2send:
                    back, _ = g.run(300, 16, size, l2send)
                    lost += 300 - back
            if lost:
                print(f"FAIL {name}: {lost} frames never came back")
                failed += 1
            else:
                print(f"PASS {name}: {(600 if l2send else 300) * len(sizes)} frames of 60 and 1514 "
                      f"bytes reflected{', half from l2send' if l2send else ''}")
        finally:
            g.__exit__(None, None, None)
    return 1 if failed else 0


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--nic", default="virtio-modern",
                    help="comma-separated NIC models (tools/run/qemu.py NIC_MODELS)")
    ap.add_argument("--smp", default="2", help="vCPUs; a comma-separated list runs each in turn")
    ap.add_argument("--machine", default="q35")
    ap.add_argument("--frames", type=int, default=50000)
    ap.add_argument("--window", type=int, default=0, help="frames in flight (default 32; --tap: 256, 128 with --check)")
    ap.add_argument("--size", type=int, default=64, help="frame bytes, 60..1514")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="make test's check: every frame back")
    ap.add_argument("--tap", action="store_true", help="root: multiqueue virtio-net over a tap in a namespace")
    ap.add_argument("--queues", type=int, default=0, help="--tap: queue pairs (default: one per vCPU)")
    ap.add_argument("--flows", type=int, default=64, help="--tap: UDP source ports the frames come from")
    ap.add_argument("--ns-prefix", default="goro-l2f", help="--tap: the namespace's name starts so")
    ap.add_argument("--insn", action="store_true", help="guest instructions per frame (the insncount plugin)")
    ap.add_argument("--insn-seconds", type=int, default=30, help="--insn: each boot's length")
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "insncount", "libinsncount.so"),
                    help="--insn: the insncount plugin")
    ap.add_argument("--csum", action="store_true",
                    help="--tap: checksum offload both ways (always on with --check)")
    ap.add_argument("--sender", choices=("c", "python"), default="c",
                    help="--tap: the C sender (tools/net/l2send.c) or this script's own")
    ap.add_argument("--l2send", default="", help="--tap: the C sender's path (default: beside the image)")
    ap.add_argument("--batch", type=int, default=32, help="--tap, the C sender: frames per system call")
    ap.add_argument("--tap-sender", default="", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if not 60 <= opts.size <= 1514:
        ap.error("--size: 60..1514")
    # --check over a tap keeps half a ring in flight: QEMU frees a sent
    # frame's descriptor after the tap has it, so the sender can see the
    # frame back first, and with a whole ring in flight the reflector then
    # finds its ring full for a moment and drops the frame it reflects.
    opts.window = opts.window or (128 if opts.tap and opts.check else 256 if opts.tap else 32)
    if opts.tap_sender:
        return tap_sender(opts)
    try:
        smps = [int(x) for x in opts.smp.split(",")]
    except ValueError:
        ap.error("--smp: a vCPU count, or several separated by commas")
    if opts.tap and opts.check:
        opts.csum = True
    if opts.tap and os.geteuid() != 0:
        print("SKIP l2floor/tap: needs root (a network namespace and a tap)")
        return 0
    rc = 0
    for smp in smps:
        opts.smp = smp
        rc |= (tap_bench(opts) if opts.tap else check(opts) if opts.check else insn(opts) if opts.insn
               else bench(opts))
    return rc


if __name__ == "__main__":
    sys.exit(main())
