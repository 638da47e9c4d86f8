#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""goro's servers over a real network: app=httpd and app=kvd each booted
under QEMU with a virtio-net NIC on QEMU's user networking, a TCP port of
127.0.0.1 picked free at run time forwarded to the server's port, and
tests/net's checks run against it from the host (check_httpd.py: curl,
Python's and Go's HTTP clients and raw sockets, then check_preempt.py:
short requests answered while every P computes a long one; check_kvd.py:
raw sockets, netcat, memcaslap and memccapable),
once per vCPU count. httpd boots twice: once with timeouts only a hang
reaches, for every check but its deadlines' (under TCG the guest's clock
follows the host's, and a loaded host can take longer than 2 s of it to
carry a body), and once with 2 s ones for check_httpd.DEADLINE_CHECKS
(httpd-deadlines). One line per check, the host tests' format:

    PASS httpd-smp2/curl_get
    PASS httpd-deadlines-smp2/slow_client
    PASS kvd-smp1/memcaslap
    FAIL kvd-smp4/boot: no "kvd: listening" line within 300 s (log: ...)

    tests/net/goro_servers.py [--elf build/goro.elf] [--smp 1,2,4] [--keys 10000]

A server is ready once its log says it listens: user networking accepts a
connection before the guest listens, so a connect proves nothing. When
QEMU cannot bind the port picked (another run took it meanwhile) the boot
is tried again on another, up to PORT_TRIES times. Every wait is a bound
on a hang, never a measurement: the boot's log must not stay silent for
BOOT_S, and each check bounds its own waits; the guest is killed after
its checks. The serial logs are kept in BUILD/test-logs/servers-*.log.

Python 3 standard library only.
"""
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]
import check_httpd  # noqa: E402  (tests/net, beside this file)
import check_kvd  # noqa: E402
import check_preempt  # noqa: E402
from tools.net import netns  # noqa: E402
from tools.run import qemu  # noqa: E402

BOOT_S = 300                # the log may stay silent this long before the boot counts as hung
PORT_TRIES = 5
# The server, its port in the guest, its arguments, the line that says it
# listens.
SERVERS = {
    "httpd": (8080, "idle_timeout=10m read_timeout=10m", r"^httpd: listening on port 8080"),
    "kvd": (11211, "", r"^kvd: listening on port 11211"),
}
HTTPD_DEADLINES = "idle_timeout=2s read_timeout=2s"     # what check_httpd.DEADLINE_CHECKS want
FORWARD_REFUSED = re.compile(r"host forwarding|hostfwd", re.I)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Boot:
    """One guest: QEMU started with its serial log in log; port the host
    side of its forward."""

    def __init__(self, group, elf, smp, app, log, args=None, ns=None):
        """args: the server's own (SERVERS' by default); ns: a namespace's
        info (tools/net/netns.py) to reach the guest through its tap, at
        the guest's address there, instead of a forwarded port."""
        self.group, self.elf, self.smp, self.app, self.log = group, elf, smp, app, log
        self.args, self.ns = args, ns
        self.cm = self.p = None

    def start(self):
        """Boots and waits for the listening line; None when ready, else
        why not."""
        guest_port, args, ready = SERVERS[self.app]
        args = f"app={self.app} {args if self.args is None else self.args}".strip()
        for _ in range(PORT_TRIES):
            if os.path.exists(self.log):
                os.remove(self.log)
            if self.ns:
                self.addr = f"{self.ns['guest_ip']}:{guest_port}"
                cmd = ["ip", "netns", "exec", self.ns["name"]] + \
                    qemu.argv(self.smp, "512M", serial=f"file:{self.log}", extra=netns.qemu_args(self.ns)) + \
                    qemu.kernel_boot(self.elf, f"ip={self.ns['guest_ip']}/{self.ns['prefixlen']} "
                                               f"gw={self.ns['host_ip']} {args}")
            else:
                self.port = free_port()
                self.addr = f"127.0.0.1:{self.port}"
                cmd = qemu.argv(self.smp, "512M", serial=f"file:{self.log}",
                                extra=qemu.nic_argv("virtio", hostfwd=[(self.port, guest_port)])) + \
                    qemu.kernel_boot(self.elf, args)
            self.cm = self.group.started(cmd, stderr=subprocess.PIPE)
            self.p = self.cm.__enter__()
            why = self._wait(ready)
            if why is None:
                return None
            err = self.stop()
            if self.ns or not FORWARD_REFUSED.search(err):
                return why + (f"; qemu: {err.strip().splitlines()[-1]}" if err.strip() else "")
        return f"QEMU could not forward any of {PORT_TRIES} free ports picked"

    def _wait(self, ready):
        silence = qemu.Silence(self.log, BOOT_S, pid=self.p.pid)
        rx = re.compile(ready, re.M)
        while True:
            if rx.search(self.text()):
                return None
            if self.p.poll() is not None:
                return f"QEMU exited ({qemu.describe_status(self.p.returncode)}) before the server listened"
            if silence.expired():
                return f"no /{ready}/ line, the log silent for {BOOT_S} s"
            time.sleep(0.2)

    def text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read().replace("\r", "")
        except OSError:
            return ""

    def stop(self):
        """Kills the guest; QEMU's stderr."""
        err = ""
        if self.cm:
            if self.p.poll() is None:
                qemu.kill_group(self.p)
            err = self.p.communicate()[1].decode(errors="replace")
            self.cm.__exit__(None, None, None)
            self.cm = None
        return err


def boots(opts):
    """(name, app, the server's arguments or None for SERVERS', its checks
    as a function of (address, vCPUs, prefix)): the boots at each vCPU
    count."""
    return [("httpd", "httpd", None,
             lambda addr, smp, name: check_httpd.run(addr, prefix=name, checks=check_httpd.CHECKS) +
             check_preempt.run(addr, smp, prefix=name)),
            ("httpd-deadlines", "httpd", HTTPD_DEADLINES,
             lambda addr, smp, name: check_httpd.run(addr, prefix=name, checks=check_httpd.DEADLINE_CHECKS)),
            ("kvd", "kvd", None, lambda addr, smp, name: check_kvd.run(addr, opts.keys, prefix=name))]


def run_one(group, opts, smp, boot):
    """Boots one of boots() on smp vCPUs and runs its checks; the number
    failed."""
    what, app, args, checks = boot
    name = f"{what}-smp{smp}"
    log = os.path.join(opts.build, "test-logs", f"servers-{name}.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    b = Boot(group, qemu.image(opts), smp, app, log, args=args)
    try:
        why = b.start()
        if why:
            print(f"FAIL {name}/boot: {why} (log: {os.path.relpath(log)})", flush=True)
            return 1
        print(f"PASS {name}/boot", flush=True)
        failed = checks(b.addr, smp, name)
        # Whatever the checks did, the guest must not have fallen over.
        bad = [l for l in b.text().splitlines() if re.match(r"(EXCEPTION|PANIC|panic|fatal)", l)]
        if bad or b.p.poll() is not None:
            print(f"FAIL {name}/alive: {bad[0] if bad else 'QEMU exited'} (log: {os.path.relpath(log)})", flush=True)
            failed += 1
        else:
            print(f"PASS {name}/alive", flush=True)
        return failed
    finally:
        b.stop()


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--smp", default="1,2,4", help="vCPU counts, comma-separated (default 1,2,4)")
    ap.add_argument("--apps", default="httpd,kvd", help="the servers (httpd boots twice)")
    ap.add_argument("--keys", type=int, default=10000, help="check_kvd.py's many_keys count")
    opts = ap.parse_args()
    check_httpd.BUILD = opts.build          # Go's client is built there
    group, failed = qemu.Group(), 0
    try:
        for smp in [int(s) for s in opts.smp.split(",")]:
            for boot in boots(opts):
                if boot[1] in opts.apps.split(","):
                    failed += run_one(group, opts, smp, boot)
    finally:
        group.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
