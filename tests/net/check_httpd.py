#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""httpd's behaviour as a client sees it, checked over the network: curl
for the plain requests (a real client), raw sockets where the bytes on the
wire are the point (malformed requests, pipelining, a stalled client).

The server is given as HOST:PORT; it must have been started with
idle_timeout=2s read_timeout=2s (httpd's arguments; the Go peer's -flags)
for the two timeout checks. Each check prints one line, PASS or FAIL with
what it saw; the exit status is the number of failures. Waits are bounds
for a hang, never measurements: a slow host makes a check slower, not
failed.

    tests/net/check_httpd.py 127.0.0.1:8080
"""
import re
import socket
import subprocess
import sys
import time

from netcheck import Failed, expect, run_checks, send

HANG_S = 60.0                       # no single answer, and no chunk sent, may take longer than this


def connect(addr):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=HANG_S)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_answer(s, buf=b""):
    """One HTTP/1.1 answer from s: (status, headers dict, body, rest)."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise Failed(f"connection closed before a whole head ({buf[:80]!r})")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ", lines[0] + " ")
    if not m:
        raise Failed(f"bad status line {lines[0]!r}")
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    n = int(hdrs.get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise Failed("connection closed inside a body")
        rest += chunk
    return int(m.group(1)), hdrs, rest[:n], rest[n:]


def closed(s, within=HANG_S):
    """Does the server close s (EOF, or a reset) within `within` seconds?"""
    s.settimeout(within)
    try:
        while True:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


# ---- the checks -----------------------------------------------------------------------------


def check_curl_get(addr):
    p = subprocess.run(["curl", "-s", "-S", "-m", str(int(HANG_S)), "-w", "\n%{http_code}", f"http://{addr}/"],
                       capture_output=True, text=True)
    expect(p.returncode == 0, f"curl exit {p.returncode}: {p.stderr.strip()}")
    body, _, code = p.stdout.rpartition("\n")
    expect(code == "200" and body == "Hello, World!", f"curl got {code} {body!r}")


def check_curl_work_and_sleep(addr):
    for path, body in (("/work?us=1000", "1000\n"), ("/sleep?ms=100", "100\n")):
        p = subprocess.run(["curl", "-s", "-S", "-m", str(int(HANG_S)), f"http://{addr}{path}"], capture_output=True,
                           text=True)
        expect(p.returncode == 0 and p.stdout == body, f"{path}: curl exit {p.returncode}, {p.stdout!r}")


def check_curl_echo(addr):
    data = bytes(range(256)) * 40                   # every byte value, 10 KiB
    for extra in ([], ["-H", "Transfer-Encoding: chunked"], ["-H", "Expect: 100-continue"]):
        p = subprocess.run(["curl", "-s", "-S", "-m", str(int(HANG_S)), "--data-binary", "@-"] + extra +
                           [f"http://{addr}/echo"], input=data, capture_output=True)
        expect(p.returncode == 0 and p.stdout == data,
               f"POST /echo {' '.join(extra) or 'Content-Length'}: exit {p.returncode}, {len(p.stdout)} bytes back")


def check_bad_request_line(addr):
    for req in (b"GET /\r\n\r\n", b"BLAH\r\n\r\n", b"GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n",
                b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n"):
        s = connect(addr)
        send(s, req)
        st, _, _, _ = read_answer(s)
        expect(st == 400, f"{req!r}: {st}")
        expect(closed(s), f"{req!r}: connection left open after 400")
        s.close()


def check_headers_too_large(addr):
    # Over httpd's limit (16 KiB) and over Go's (1 MiB) alike. The server
    # answers 431 and closes with the rest of the head unread, so its TCP
    # resets the connection, and the reset may reach the client before the
    # answer is read (then the client's kernel drops the answer): 431, or a
    # reset, is a refusal; an answer of another status, or the whole head
    # taken, is not. check_still_serving shows the server survived.
    s = connect(addr)
    big = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1100 * 1024) + b"\r\n\r\n"
    try:
        send(s, big)
    except (ConnectionResetError, BrokenPipeError):
        pass                        # the server answered and closed while we still sent
    try:
        st, _, _, _ = read_answer(s)
    except ConnectionResetError:
        st = "reset"
    except Failed as e:
        st = "closed" if "before a whole head" in str(e) else str(e)
    expect(st in (431, "reset", "closed"), f"status {st}")
    s.close()


def check_other_statuses(addr):
    for req, want in ((b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404), (b"POST / HTTP/1.1\r\nHost: x\r\n\r\n", 405),
                      (b"GET /echo HTTP/1.1\r\nHost: x\r\n\r\n", 405), (b"GET /work?us=x HTTP/1.1\r\nHost: x\r\n\r\n", 400),
                      (b"GET / HTTP/1.1\r\n\r\n", 400), (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
                      (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501)):
        s = connect(addr)
        send(s, req)
        st, _, _, _ = read_answer(s)
        expect(st == want, f"{req[:30]!r}: {st}, want {want}")
        s.close()


def check_keep_alive(addr):
    s = connect(addr)
    for i in range(5):
        send(s, b"GET /work?us=%d HTTP/1.1\r\nHost: x\r\n\r\n" % i)
        st, hdrs, body, rest = read_answer(s)
        expect(st == 200 and body == b"%d\n" % i and not rest, f"request {i} on one connection: {st} {body!r}")
        expect("close" not in hdrs.get("connection", "").lower(), "Connection: close on a keep-alive request")
    send(s, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    st, hdrs, body, _ = read_answer(s)
    expect(st == 200 and body == b"Hello, World!", f"close request: {st}")
    expect(closed(s), "connection open after Connection: close")
    s.close()
    s = connect(addr)                # HTTP/1.0 closes unless asked not to
    send(s, b"GET / HTTP/1.0\r\n\r\n")
    st, _, body, _ = read_answer(s)
    expect(st == 200 and closed(s), "HTTP/1.0 connection left open")
    s.close()


def check_pipelining(addr):
    s = connect(addr)
    n = 50
    send(s, b"".join(b"GET /work?us=%d HTTP/1.1\r\nHost: x\r\n\r\n" % i for i in range(n)) +
              b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
              b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    rest = b""
    for i in range(n):
        st, _, body, rest = read_answer(s, rest)
        expect(st == 200 and body == b"%d\n" % i, f"pipelined answer {i}: {st} {body!r} (out of order?)")
    st, _, body, rest = read_answer(s, rest)
    expect(body == b"hello", f"pipelined echo: {body!r}")
    st, _, body, rest = read_answer(s, rest)
    expect(body == b"Hello, World!", f"last pipelined answer: {body!r}")
    s.close()


def check_idle_timeout(addr):
    s = connect(addr)
    send(s, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    read_answer(s)
    expect(closed(s), f"an idle keep-alive connection still open after {HANG_S} s (idle_timeout=2s)")
    s.close()


def check_slow_client(addr):
    # A head that never ends: the read deadline closes the connection.
    s = connect(addr)
    send(s, b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    t0 = time.monotonic()
    while time.monotonic() - t0 < HANG_S:
        try:
            send(s, b"a")
        except (ConnectionResetError, BrokenPipeError):
            break
        if closed(s, within=0.5):
            break
    else:
        raise Failed(f"a client sending a byte each 0.5 s still held its connection after {HANG_S} s")
    s.close()


def check_still_serving(addr):
    check_curl_get(addr)


CHECKS = [check_curl_get, check_curl_work_and_sleep, check_curl_echo, check_bad_request_line,
          check_headers_too_large, check_other_statuses, check_keep_alive, check_pipelining, check_idle_timeout,
          check_slow_client, check_still_serving]


def run(addr, out=sys.stdout, prefix="httpd"):
    """Every check against the server at addr; the number that failed."""
    return run_checks([(c.__name__[len("check_"):], c) for c in CHECKS], addr, out, prefix)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(run(sys.argv[1]))
