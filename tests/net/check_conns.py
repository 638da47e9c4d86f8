#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Many connections at once against an HTTP server: N connections opened
and held, all left idle while the server's own counters are read twice
(its count of open connections shows every one reached it), then each
serves one request, all sent before any answer is read, then all are
closed and the server must let every one go. With --no-idle (a server
without goro's /stats) each connection is first answered once instead.

The idle check reads /stats (goro's httpd: scheduler counters) before and
after a quiet spell: with every connection parked, the goroutine runs
between the two reads must be a handful, not one per connection, and the
cores must have halted (the halts counter moved). Counts, not times: a
slow host stretches the spell, it does not change what runs in it. The
same /stats says how many connections the server holds: after the close
it must come down to the one asking.

Connects go out as a client fleet's or wrk's do, many in flight at once
(256), never paced to suit the server. Every wait bounds a hang, not the
whole run: a phase fails only when PROGRESS_S pass with nothing new
(no connection opened, no answer completed, no connection let go), so a
slow host makes the check longer, never failed.

    tests/net/check_conns.py 127.0.0.1:8080 [--conns 10000] [--no-idle]

Opening ten thousand connections to a guest under TCG takes minutes, and
the first ones wait idle all that time: the server must be started with
its idle and read timeouts longer than that (httpd: idle_timeout=10m
read_timeout=10m; the Go peer: -idle_timeout=10m -read_timeout=10m, since
Go's read timeout runs from the accept).

Prints PASS/FAIL lines; the exit status is the number of failures.
"""
import argparse
import collections
import resource
import selectors
import socket
import sys
import time

HANG_S = 120.0              # one connect, or one /stats read, may take this long
PROGRESS_S = 600.0          # a phase may go this long without any progress (lwIP backs off to minutes)


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
    progress = time.monotonic()
    # A refusal comes back at once: a server gone must not be asked again
    # millions of times.
    while len(conns) < n and failures <= n and time.monotonic() - progress < PROGRESS_S:
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
                progress = now
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
    how many were answered right, and a count of what befell the rest
    (not sent, ended by the server, reset, a wrong answer, no answer)."""
    sel = selectors.DefaultSelector()
    for s in conns:
        s.setblocking(False)
    pending, fates = {}, collections.Counter()
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
            fates["not sent"] += 1
            continue
        pending[s] = b""
        sel.register(s, selectors.EVENT_READ)
    ok, progress = 0, time.monotonic()
    while pending and time.monotonic() - progress < PROGRESS_S:
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk, fates["reset"] = None, fates["reset"] + 1
            buf = pending[s] + (chunk or b"")
            done = not chunk or (b"\r\n\r\n" in buf and buf.endswith(want_body))
            if done:
                right = buf.startswith(b"HTTP/1.1 200") and buf.endswith(want_body)
                ok += right
                if chunk == b"" and not right:
                    fates["ended by the server"] += 1
                elif chunk and not right:
                    fates["a wrong answer"] += 1
                sel.unregister(s)
                del pending[s]
                progress = time.monotonic()
            else:
                pending[s] = buf
    fates["no answer"] += len(pending)
    sel.close()
    return ok, fates


def fates_text(fates):
    return ", ".join(f"{n} {what}" for what, n in fates.items() if n) or "none lost"


def close_all(conns):
    """Ends the client's side of each connection (a FIN, which TCP repeats
    until it is acknowledged: a socket closed outright would leave its
    FIN, or the reset its unread data makes, to a single try) and waits
    for the server's end (EOF, or a reset) on each; returns how many
    ended. Then closes them all."""
    sel = selectors.DefaultSelector()
    for s in conns:
        try:
            s.shutdown(socket.SHUT_WR)
            sel.register(s, selectors.EVENT_READ)
        except OSError:
            pass                    # already reset: not ended by the server
    ended, progress = 0, time.monotonic()
    while sel.get_map() and time.monotonic() - progress < PROGRESS_S:
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            try:
                if s.recv(65536):
                    continue        # nothing is owed: read past it
            except BlockingIOError:
                continue
            except OSError:
                pass
            ended += 1
            sel.unregister(s)
            progress = time.monotonic()
    sel.close()
    for s in conns:
        s.close()
    return ended


def stats(addr, timeout=HANG_S):
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    body = buf.split(b"\r\n\r\n", 1)[-1].decode()
    return {w[0]: int(w[1]) for w in (line.split() for line in body.splitlines()) if len(w) == 2 and w[1].isdigit()}


def settle(addr, done):
    """Reads the server's count of open connections until done(count), or
    until it stops moving for PROGRESS_S; the last count."""
    last, progress = None, time.monotonic()
    while True:
        try:
            n = stats(addr, timeout=10.0).get("connections_open", 0)
        except OSError:
            n = last            # busy with the others (a connect not yet answered): ask again
        if n is not None and done(n):
            return n
        if n != last:
            last, progress = n, time.monotonic()
        elif time.monotonic() - progress >= PROGRESS_S:
            return n
        time.sleep(1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("addr")
    ap.add_argument("--conns", type=int, default=10000)
    ap.add_argument("--idle-seconds", type=float, default=3.0)
    ap.add_argument("--no-idle", action="store_true", help="skip the idle check (a server without goro's /stats)")
    ap.add_argument("--prefix", default="conns")
    o = ap.parse_args()
    failed = 0

    def report(ok, name, what, always=False):
        nonlocal failed
        print(f"{'PASS' if ok else 'FAIL'} {o.prefix}/{name}" + (f": {what}" if always or not ok else ""),
              flush=True)
        failed += not ok

    limit = raise_fd_limit(o.conns)
    if limit < o.conns + 64:
        report(False, "open", f"the file limit ({limit}) is under {o.conns} connections")
        return 1
    conns, retries = open_conns(o.addr, o.conns)
    report(len(conns) == o.conns, "open", f"{len(conns)} of {o.conns} connections opened ({retries} retries)")
    if o.no_idle:
        # Without the server's own count, an answer is what shows that a
        # connection reached the server.
        first, fates = exchange_all(conns, b"GET /work?us=1 HTTP/1.1\r\nHost: x\r\n\r\n", b"1\n")
        report(first == len(conns), "first_request", f"{first} of {len(conns)} answered ({fates_text(fates)})")
    else:
        # Connected is not yet accepted: the server takes the last ones
        # (and starts their goroutines) after the client saw them open.
        settle(o.addr, lambda n: n > len(conns))
        a = stats(o.addr)
        time.sleep(o.idle_seconds)
        b = stats(o.addr)
        runs, halts = b.get("runs", 0) - a.get("runs", 0), b.get("halts", 0) - a.get("halts", 0)
        # The /stats request itself, the listener, timers: a few dozen runs
        # at most, never one per parked connection.
        report(b.get("connections_open", 0) > len(conns) and runs < min(200, len(conns) // 4 + 50) and halts > 0,
               "idle_costs_nothing",
               f"{b.get('connections_open')} open; over the idle spell {runs} goroutine runs, {halts} halts",
               always=True)
    second, fates = exchange_all(conns, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"Hello, World!")
    report(second == len(conns), "each_served",
           f"{second} of {len(conns)} answered after being held ({fates_text(fates)})")
    ended = close_all(conns)
    report(ended == len(conns), "all_closed", f"{ended} of {len(conns)} closed by the server after the client's end")
    if not o.no_idle:
        # The /stats request's own connection is the one left.
        left = settle(o.addr, lambda n: n <= 1)
        report(left is not None and left <= 1, "all_let_go",
               f"{left} connections still open on the server after the client closed them all")
    return failed


if __name__ == "__main__":
    sys.exit(main())
