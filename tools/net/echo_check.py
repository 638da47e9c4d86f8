#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A host client against goro's echo server over a real NIC: app=netecho
boots with a NIC on QEMU's user networking, a TCP port forwarded from
127.0.0.1 (picked free at run time) to the guest's port 7, and this tool
connects from the host, sends, and checks that every byte comes back.

    tools/net/echo_check.py [--nic virtio-modern,virtio-legacy,e1000e]
                            [--smp 2] [--mib 4] [--conns 100] [--boot kernel]
                            [--jobs 1] [--table FILE]

--smp and --boot take comma-separated lists, each combination run in
turn: --boot kernel is QEMU's -kernel (multiboot), --boot efi the UEFI
boot (OVMF on q35, goro-efi.img from make efi, the command line through
fw_cfg). The full matrix (make test-net-matrix; --jobs runs that many
guests at once):

    tools/net/echo_check.py --boot kernel,efi --smp 1,2,4,8 --mib 100 --conns 1000

Per NIC model: one connection carries --mib MiB both ways (sent and read
back at once, every byte compared), then --conns connections, opened one
after another and all kept open, each send 4 KiB at once and read it
back; the guest must still answer a last connection. A last run does the
same with the first model given a static address (ip= gw=) instead of
DHCP. Prints one PASS or FAIL line per run (the runner's host-test
format); counts and bytes only, never a rate. --table writes a Markdown
table of the runs: bytes back on the one connection, connections that got
theirs back, and the CPU seconds QEMU used (user + system, all threads).

Python 3 standard library only.
"""
import argparse
import os
import shutil
import socket
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.run import qemu  # noqa: E402

BOOT_TIMEOUT = 120          # seconds to the guest's address and listener, TCG, a loaded host
EFI_BOOT_TIMEOUT = 420      # the same through OVMF, whose own start takes minutes on a loaded host
IO_TIMEOUT = 120            # seconds a transfer may make no progress
CHUNK = 1 << 16             # bytes sent per call, each within IO_TIMEOUT
STATIC = "ip=10.0.2.15/24 gw=10.0.2.2"     # QEMU's user network, without its DHCP
OVMF = "/usr/share/OVMF"
OVMF_CODE = ("OVMF_CODE_4M.fd", "OVMF_CODE.fd")
OVMF_VARS = ("OVMF_VARS_4M.fd", "OVMF_VARS.fd")


def ovmf(names):
    for n in names:
        if os.path.exists(os.path.join(OVMF, n)):
            return os.path.join(OVMF, n)
    raise RuntimeError(f"no {names[0]} in {OVMF} (make deps installs ovmf)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Guest(qemu.Console):
    """app=netecho with one NIC; lines of its serial log in self.lines."""

    def __init__(self, elf, nic, smp, group, cmdline="app=netecho", boot="kernel"):
        self.port = free_port()
        self.tmp = None
        nic_args = qemu.nic_argv(nic, hostfwd=[(self.port, 7)])
        if boot == "efi":
            # A copy of the image and of OVMF's variables for this boot alone.
            self.tmp = tempfile.mkdtemp(prefix="goro-echo-")
            img = os.path.join(self.tmp, "goro-efi.img")
            shutil.copyfile(os.path.join(os.path.dirname(elf), "goro-efi.img"), img)
            vars_copy = os.path.join(self.tmp, "vars.fd")
            shutil.copyfile(ovmf(OVMF_VARS), vars_copy)
            fw = ["-drive", f"if=pflash,format=raw,readonly=on,file={ovmf(OVMF_CODE)}",
                  "-drive", f"if=pflash,format=raw,file={vars_copy}"]
            cmd = qemu.argv(smp, "512M", machine="q35", extra=fw + nic_args) + qemu.disk_boot(img, cmdline)
        else:
            cmd = qemu.argv(smp, "512M", extra=nic_args) + qemu.kernel_boot(elf, cmdline)
        super().__init__(group, cmd)

    def tail(self):
        with self.cond:
            return " | ".join(str(x) for x in self.lines[-4:])

    def close(self):
        super().close()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def echo(port, data):
    """Sends data on a new connection while reading it back; the bytes read."""
    s = socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT)
    got = bytearray()
    err = []

    def read():
        try:
            while len(got) < len(data):
                b = s.recv(1 << 16)
                if not b:
                    break
                got.extend(b)
        except OSError as e:
            err.append(e)

    t = threading.Thread(target=read)
    t.start()
    try:
        # In chunks: Python's sendall bounds its whole duration by the
        # timeout, so 100 MiB sent in one call failed on a loaded host
        # that was slow but never stalled. Each chunk gets IO_TIMEOUT.
        view = memoryview(data)
        for off in range(0, len(data), CHUNK):
            s.sendall(view[off:off + CHUNK])
        t.join()
    except OSError as e:
        err.append(e)
        s.shutdown(socket.SHUT_RDWR)
        t.join()
    finally:
        s.close()
    if err:
        raise RuntimeError(f"{err[0]} with {len(got)} of {len(data)} bytes back")
    return bytes(got)


def pattern(n, seed):
    block = bytes((i * 131 + seed) & 0xFF for i in range(4096))
    return (block * (n // len(block) + 1))[:n]


def check_model(opts, nic, smp, boot, group, static=False, stats=None):
    """None, or why the run failed; stats (a dict) gets bytes (back on the
    one connection), conns (connections that got theirs back) and cpu
    (QEMU's CPU seconds, read before it is stopped)."""
    stats = {} if stats is None else stats
    stats.update(bytes=0, conns=0, cpu=None)
    cmdline = (STATIC + " " if static else "") + "app=netecho"
    g = Guest(qemu.image(opts), nic, smp, group, cmdline, boot)
    boot_timeout = EFI_BOOT_TIMEOUT if boot == "efi" else BOOT_TIMEOUT
    try:
        g.wait_for(r"^net: net0 10\.0\.2\.15/24 gw 10\.0\.2\.2$" if static else
                   r"^net: net0 \d+\.\d+\.\d+\.\d+/\d+", boot_timeout)
        g.wait_for(r"^netecho: tcp and udp echo on port 7", boot_timeout)
        big = pattern(opts.mib << 20, 1)
        try:
            got = echo(g.port, big)
        except (RuntimeError, OSError) as e:
            return f"{opts.mib} MiB on one connection: {e}; the guest's last lines: {g.tail()}"

        stats["bytes"] = len(got) if got == big else 0
        if got != big:
            same = next((i for i, (a, b) in enumerate(zip(got, big)) if a != b), min(len(got), len(big)))
            return f"{opts.mib} MiB: {len(got)} bytes back, first difference at byte {same}"
        # The connections are opened one at a time, each checked by a
        # first round trip, then all echo at once: QEMU's user networking
        # drops some of many connects made at once before the guest sees
        # any SYN (a frame capture of the guest's NIC shows none), which
        # is not what this checks.
        conns = []
        try:
            for i in range(opts.conns):
                try:
                    s = socket.create_connection(("127.0.0.1", g.port), timeout=IO_TIMEOUT)
                    conns.append(s)
                    s.sendall(b"x")
                    first = s.recv(1)
                except OSError as e:
                    return f"connection {i}: {e}; the guest's last lines: {g.tail()}"
                if first != b"x":
                    return f"connection {i}: no first echo"
            results, errors = [False] * opts.conns, []

            def one(i):
                d = pattern(4096, i)
                got = bytearray()
                try:
                    conns[i].sendall(d)
                    while len(got) < len(d):
                        b = conns[i].recv(1 << 16)
                        if not b:
                            break
                        got.extend(b)
                    results[i] = bytes(got) == d
                except OSError as e:
                    errors.append(f"connection {i}: {e}")
            threads = [threading.Thread(target=one, args=(i,)) for i in range(opts.conns)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            for s in conns:
                s.close()
        bad = sum(1 for r in results if not r)
        stats["conns"] = opts.conns - bad
        if bad:
            return f"{bad} of {opts.conns} concurrent connections wrong or failed ({'; '.join(errors[:3])})"
        try:
            last = echo(g.port, b"still up\n")
        except (RuntimeError, OSError) as e:
            return f"the last connection: {e}; the guest's last lines: {g.tail()}"
        if last != b"still up\n":
            return "the last connection got nothing back"
        return None
    finally:
        stats["cpu"] = qemu.cpu_seconds(g.p.pid)
        g.close()


def write_table(path, opts, rows):
    """rows: (name, nic, smp, boot, why, stats), in the order run."""
    order = {n: i for i, n in enumerate(opts.nic.split(","))}
    rows = sorted(rows, key=lambda r: (r[3] != "kernel", order.get(r[1], 99), int(r[2])))
    with open(path, "w") as f:
        f.write(f"| boot | NIC | vCPUs | bytes back of {opts.mib} MiB | connections of {opts.conns} "
                "| QEMU CPU s | result |\n| --- | --- | --- | --- | --- | --- | --- |\n")
        for name, nic, smp, boot, why, st in rows:
            cpu = "-" if st.get("cpu") is None else f"{st['cpu']:.0f}"
            boot_name = "UEFI (OVMF, q35)" if boot == "efi" else "-kernel"
            f.write(f"| {boot_name} | {nic} | {smp} | {st.get('bytes', 0)} | {st.get('conns', 0)} | {cpu} | "
                    f"{'FAIL: ' + why.replace('|', '/') if why else 'PASS'} |\n")


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--nic", default="virtio-modern,virtio-legacy,e1000e")
    ap.add_argument("--smp", default="2")
    ap.add_argument("--mib", type=int, default=4)
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--boot", default="kernel", help="kernel, efi, or both: kernel,efi")
    ap.add_argument("--no-static", action="store_true", help="leave out the last run's static address")
    ap.add_argument("--jobs", type=int, default=1, help="guests run at once (default 1)")
    ap.add_argument("--table", default="", help="write a Markdown table of the runs to this file")
    opts = ap.parse_args()
    group = qemu.Group()
    nics = opts.nic.split(",")
    runs = [(nic, smp, boot, False) for boot in opts.boot.split(",") for smp in opts.smp.split(",") for nic in nics]
    if not opts.no_static:
        runs.append((nics[0], opts.smp.split(",")[0], opts.boot.split(",")[0], True))
    rows, lock, todo = [], threading.Lock(), list(runs)

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                nic, smp, boot, static = todo.pop(0)
            name = f"netecho/{nic}-smp{smp}" + ("-efi" if boot == "efi" else "") + ("-static" if static else "")
            st = {}
            try:
                why = check_model(opts, nic, smp, boot, group, static, st)
            except (RuntimeError, OSError) as e:
                why = str(e)
            with lock:
                rows.append((name, nic, smp, boot, why, st))
                cpu = "" if st.get("cpu") is None else f", QEMU {st['cpu']:.0f} CPU s"
                if why:
                    print(f"FAIL {name}: {why}{cpu}", flush=True)
                else:
                    print(f"PASS {name}: {opts.mib} MiB echoed from the host, then {opts.conns} connections "
                          f"at once{cpu}", flush=True)
    threads = [threading.Thread(target=worker) for _ in range(max(1, opts.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if opts.table:
        write_table(opts.table, opts, rows)
    return 1 if any(r[4] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
