#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Go's promise, checked through an HTTP server: a handler that computes
for a long time does not hold up short requests on other connections
beyond a time slice.

One long computation per P (GET /spin?n=N: N xorshift rounds, work counted
in instructions, not time) keeps every P busy; then short requests (GET /)
go one after another on another connection. With preemption every short
request waits at most a time slice of a long one's computing, so all of
them are answered while the long ones still run; without it, none is
answered until a long one ends. The check is that order, never a time: a
slow host stretches the long ones and the short ones alike, by the same
instructions.

    tests/net/check_preempt.py HOST:PORT --procs 2 [--rounds 400000000] [--short 10]
"""
import argparse
import select
import socket
import sys
import time

HANG_S = 600.0


def connect(addr):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=HANG_S)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def answered(s):
    """Whether s has a whole answer to read now (without blocking)."""
    r, _, _ = select.select([s], [], [], 0)
    return bool(r)


def read_answer(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    while len(body) < n:
        body += s.recv(4096)
    return head.split(b" ")[1], body


def check(addr, procs, rounds=400_000_000, short=10):
    """The problems seen (an empty list when the check holds)."""
    # Each long connection first gets one short answer, which proves it
    # reaches the server, and only then its long request. QEMU's user
    # networking forwards a port through a listen backlog of 1: a connect
    # made before QEMU accepted the one before it loses its SYN and is
    # retried a second later, by which time the long ones started first
    # may have ended, and the check would measure the client's retry.
    # Each connection sends as soon as it is open: the server closes one
    # idle past its idle_timeout (2 s where check_httpd's deadline checks
    # share the server), which a loaded host's connects and answers could
    # outlast. So the short connection is opened while the long ones
    # compute: its accept must get through them too.
    longs, problems = [], []
    for i in range(procs):
        longs.append(connect(addr))
        longs[-1].sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        status, body = read_answer(longs[-1])
        if status != b"200" or body != b"Hello, World!":
            problems.append(f"long connection {i}'s first request: {status!r} {body[:40]!r}")
        longs[-1].sendall(b"GET /spin?n=%d HTTP/1.1\r\nHost: x\r\n\r\n" % rounds)
    time.sleep(0.25)                # let them start computing (any delay will do: only the order is checked)
    if any(answered(s) for s in longs):
        problems.append(f"a long request ({rounds} rounds) ended before the short ones began: raise --rounds")
    shortc = connect(addr)
    before = 0
    for i in range(short):
        shortc.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        status, body = read_answer(shortc)
        if status != b"200" or body != b"Hello, World!":
            problems.append(f"short request {i}: {status!r} {body[:40]!r}")
        if any(answered(s) for s in longs):
            break
        before += 1
    if before < short:
        problems.append(f"only {before} of {short} short requests were answered before a long one "
                        f"({rounds} rounds) ended: the long ones were not preempted")
    for s in longs:
        status, body = read_answer(s)
        if status != b"200" or body != b"%d\n" % rounds:
            problems.append(f"a long request: {status!r} {body[:40]!r}")
        s.close()
    shortc.close()
    return problems


def run(addr, procs, prefix="preempt", rounds=400_000_000, short=10, out=sys.stdout):
    """The check as one PASS or FAIL line; the number failed (0 or 1)."""
    try:
        problems = check(addr, procs, rounds, short)
    except OSError as e:
        problems = [f"{type(e).__name__}: {e}"]
    print(f"{'FAIL' if problems else 'PASS'} {prefix}/short_requests_not_held_by_long_ones"
          + (": " + "; ".join(problems) if problems else ""), file=out, flush=True)
    return int(bool(problems))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("addr")
    ap.add_argument("--procs", type=int, required=True, help="the server's Ps (GOMAXPROCS): one long request each")
    ap.add_argument("--rounds", type=int, default=400_000_000, help="each long request's xorshift rounds")
    ap.add_argument("--short", type=int, default=10, help="short requests, one after another")
    ap.add_argument("--prefix", default="preempt")
    o = ap.parse_args()
    return run(o.addr, o.procs, o.prefix, o.rounds, o.short)


if __name__ == "__main__":
    sys.exit(main())
