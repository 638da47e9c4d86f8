#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Many connections at once against an HTTP server: N connections opened
and held (each answered once, so every one is known to be real), then
all left idle while the server's own counters are read twice, then each
serves one more request, all sent before any answer is read.

The idle check reads /stats (goro's httpd: scheduler counters) before and
after a quiet spell: with every connection parked, the goroutine runs
between the two reads must be a handful, not one per connection, and the
cores must have halted (the halts counter moved). Counts, not times: a
slow host stretches the spell, it does not change what runs in it.

    tests/net/check_conns.py 127.0.0.1:8080 [--conns 10000] [--no-idle]

Opening ten thousand connections to a guest under TCG takes minutes, and
the first ones wait idle all that time: the server must be started with
its idle and read timeouts longer than that (httpd: idle_timeout=10m
read_timeout=10m; the Go peer: -idle_timeout=10m -read_timeout=10m, since
Go's read timeout runs from the accept).

Prints PASS/FAIL lines; the exit status is the number of failures.
"""
import argparse
import resource
import selectors
import socket
import sys
import time

HANG_S = 120.0


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, n + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


def open_conns(addr, n, parallel=256):
    """n connected sockets, up to `parallel` connects in flight at once; a
    connect refused or timed out is tried again. In flight, not one after
    another: a listener with a short backlog (QEMU's user networking
    forwards through one of 1) drops the SYNs that find it full, and a
    client waiting out each dropped SYN's retransmission (1 s, then 3 s)
    alone would take hours over ten thousand connections."""
    host, port = addr.rsplit(":", 1)
    sel = selectors.DefaultSelector()
    conns, failures, pending = [], 0, {}
    deadline = time.monotonic() + HANG_S * 4
    # A refusal comes back at once: a server gone must not be asked again
    # millions of times.
    while len(conns) < n and failures <= n and time.monotonic() < deadline:
        while len(pending) < parallel and len(conns) + len(pending) < n:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((host, int(port)))
            pending[s] = time.monotonic() + HANG_S
            sel.register(s, selectors.EVENT_WRITE)
        now = time.monotonic()
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            sel.unregister(s)
            del pending[s]
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conns.append(s)
            else:
                s.close()
                failures += 1
        for s in [s for s, t in pending.items() if t < now]:
            sel.unregister(s)
            del pending[s]
            s.close()
            failures += 1
    for s in pending:
        s.close()
    sel.close()
    return conns, failures


def exchange_all(conns, request, want_body):
    """Sends request on every connection, then reads every answer; returns
    how many were answered right."""
    sel = selectors.DefaultSelector()
    for s in conns:
        s.setblocking(False)
    pending = {}
    for s in conns:
        data = request
        while data:
            try:
                data = data[s.send(data):]
            except BlockingIOError:
                time.sleep(0.001)
            except OSError:
                break               # the server closed it: not answered
        if data:
            continue
        pending[s] = b""
        sel.register(s, selectors.EVENT_READ)
    ok, deadline = 0, time.monotonic() + HANG_S * 2
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            buf = pending[s] + chunk
            done = not chunk or (b"\r\n\r\n" in buf and buf.endswith(want_body))
            if done:
                ok += buf.startswith(b"HTTP/1.1 200") and buf.endswith(want_body)
                sel.unregister(s)
                del pending[s]
            else:
                pending[s] = buf
    sel.close()
    return ok


def stats(addr):
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=HANG_S) as s:
        s.sendall(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    body = buf.split(b"\r\n\r\n", 1)[-1].decode()
    return {w[0]: int(w[1]) for w in (line.split() for line in body.splitlines()) if len(w) == 2 and w[1].isdigit()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("addr")
    ap.add_argument("--conns", type=int, default=10000)
    ap.add_argument("--idle-seconds", type=float, default=3.0)
    ap.add_argument("--no-idle", action="store_true", help="skip the idle check (a server without goro's /stats)")
    ap.add_argument("--prefix", default="conns")
    o = ap.parse_args()
    failed = 0

    def report(ok, name, what):
        nonlocal failed
        print(f"{'PASS' if ok else 'FAIL'} {o.prefix}/{name}" + ("" if ok else f": {what}"), flush=True)
        failed += not ok

    limit = raise_fd_limit(o.conns)
    if limit < o.conns + 64:
        report(False, "open", f"the file limit ({limit}) is under {o.conns} connections")
        return 1
    conns, retries = open_conns(o.addr, o.conns)
    report(len(conns) == o.conns, "open", f"{len(conns)} of {o.conns} connections opened ({retries} retries)")
    first = exchange_all(conns, b"GET /work?us=1 HTTP/1.1\r\nHost: x\r\n\r\n", b"1\n")
    report(first == len(conns), "first_request", f"{first} of {len(conns)} answered")
    if not o.no_idle:
        a = stats(o.addr)
        time.sleep(o.idle_seconds)
        b = stats(o.addr)
        runs, halts = b.get("runs", 0) - a.get("runs", 0), b.get("halts", 0) - a.get("halts", 0)
        # The /stats request itself, the listener, timers: a few dozen runs
        # at most, never one per parked connection.
        report(b.get("connections_open", 0) >= len(conns) and runs < min(200, len(conns) // 4 + 50) and halts > 0,
               "idle_costs_nothing",
               f"{b.get('connections_open')} open; over the idle spell {runs} goroutine runs, {halts} halts")
    second = exchange_all(conns, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"Hello, World!")
    report(second == len(conns), "each_served", f"{second} of {len(conns)} answered after being held")
    for s in conns:
        s.close()
    return failed


if __name__ == "__main__":
    sys.exit(main())
