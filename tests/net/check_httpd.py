#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""httpd's behaviour as a client sees it, checked over the network: curl
for the plain requests (a real client), raw sockets where the bytes on the
wire are the point (malformed requests, pipelining, a stalled client).

The server is given as HOST:PORT; it must have been started with
idle_timeout=2s read_timeout=2s (httpd's arguments; the Go peer's -flags)
for the deadline checks (DEADLINE_CHECKS), and the others want timeouts
only a hang reaches: under TCG the guest's clock follows the host's, and
a loaded host can take longer than 2 s of it to carry a request's body
(make test checks the two on boots of their own: goro_servers.py). Each
check prints one line, PASS or FAIL with what it saw; the exit status is
the number of failures. Waits are bounds for a hang, never measurements:
a slow host makes a check slower, not failed.

    tests/net/check_httpd.py [--deadlines | --no-deadlines] 127.0.0.1:8080
"""
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from netcheck import Failed, expect, run_checks, send

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")  # where Go's client is built (goro_servers.py sets its --build)
MAX_BODY = 1 << 20                  # the server's largest body: httpd's max_body, the Go peer's

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


def curl(*args, data=None):
    """curl's exit status, stdout and stderr."""
    p = subprocess.run(["curl", "-s", "-S", "-m", str(int(HANG_S))] + list(args), input=data, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def check_curl_clients(addr):
    """curl as its users run it: HTTP/1.0 (closed after, or kept when it
    asks), several URLs on one kept connection, and --data-binary @file:
    a file curl sends with Expect: 100-continue (over 1 MiB, curl 7.88's
    threshold) is refused 413 before any 100 Continue, and one of the
    limit's size sent after the 100 comes back whole."""
    rc, out, err = curl("-0", "-w", "%{http_code} %{num_connects}", f"http://{addr}/")
    expect(rc == 0 and out == b"Hello, World!200 1", f"HTTP/1.0: exit {rc} {out!r} {err.strip()}")
    for extra in ([], ["-0", "-H", "Connection: keep-alive"]):
        rc, out, err = curl(*extra, "-w", "%{num_connects} ", *[f"http://{addr}/work?us={i}" for i in range(4)])
        expect(rc == 0 and out == b"0\n1 1\n0 2\n0 3\n0 ", f"{extra} 4 URLs: exit {rc} {out!r} {err.strip()}")
    with tempfile.TemporaryDirectory() as d:
        for size, hdr, want in ((MAX_BODY + 1, [], 413), (MAX_BODY, ["-H", "Expect: 100-continue"], 200)):
            path = os.path.join(d, "body")
            data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
            with open(path, "wb") as f:
                f.write(data)
            rc, out, err = curl("-v", "--data-binary", f"@{path}", "-w", "%{http_code}", *hdr, f"http://{addr}/echo")
            expect(rc == 0 and "> Expect: 100-continue" in err, f"{size} bytes: exit {rc}, no Expect sent? {err[-300:]}")
            expect(out.endswith(b"%d" % want), f"{size} bytes: status {out[-3:]!r}, want {want}")
            if want == 200:
                expect(out[:-3] == data, f"{size} bytes sent, {len(out) - 3} back, or not equal")
            else:
                expect("< HTTP/1.1 100" not in err, f"{size} bytes: 100 Continue sent for a body then refused")


class HTTP10Connection(http.client.HTTPConnection):
    _http_vsn, _http_vsn_str = 10, "HTTP/1.0"


def check_python_client(addr):
    """Python's http.client: requests on one kept connection, bodies by
    length and chunked (an iterable body), Expect: 100-continue (it sends
    the body at once and skips a 100 answer), a body over the limit (413
    once it has sent it all), HTTP/1.0."""
    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=HANG_S)
    sock = None
    for i in range(5):
        c.request("GET", f"/work?us={i}")
        r = c.getresponse()
        body = r.read()
        expect(r.status == 200 and body == b"%d\n" % i, f"GET {i}: {r.status} {body!r}")
        sock = sock or c.sock
        expect(c.sock is sock, f"request {i} needed a new connection")
    data = bytes(range(256)) * 300
    for what, body, hdrs in (("by length", data, {}), ("chunked", iter([data[:1000], data[1000:50000], data[50000:]]), {}),
                             ("with Expect", data, {"Expect": "100-continue"})):
        c.request("POST", "/echo", body=body, headers=hdrs)
        r = c.getresponse()
        got = r.read()
        expect(r.status == 200 and got == data, f"POST {what}: {r.status}, {len(got)} bytes of {len(data)}")
    expect(c.sock is sock, "the POSTs needed a new connection")
    c.close()
    c = http.client.HTTPConnection(host, int(port), timeout=HANG_S)
    c.request("POST", "/echo", body=b"x" * (MAX_BODY + 1))
    r = c.getresponse()
    r.read()
    expect(r.status == 413, f"a body over the limit: {r.status}")
    c.close()
    c = HTTP10Connection(host, int(port), timeout=HANG_S)
    c.request("GET", "/")
    r = c.getresponse()
    expect(r.status == 200 and r.read() == b"Hello, World!" and r.will_close, f"HTTP/1.0: {r.status} {r.will_close}")
    c.close()


def go_client():
    """tools/net/httpclient_go built into BUILD/tools/httpclient-go (again
    when its sources or the toolchain are newer), in Go's own build cache."""
    src = os.path.join(ROOT, "tools", "net", "httpclient_go")
    out = os.path.abspath(os.path.join(BUILD, "tools", "httpclient-go"))
    go = shutil.which("go")
    expect(go, "no go on PATH (golang-go)")
    newest = max([os.path.getmtime(os.path.realpath(go))] + [os.path.getmtime(os.path.join(src, f)) for f in os.listdir(src)])
    if not os.path.exists(out) or os.path.getmtime(out) < newest:
        env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-buildvcs=false")
        if not (env.get("GOCACHE") or env.get("XDG_CACHE_HOME") or env.get("HOME")):
            env["GOCACHE"] = os.path.abspath(os.path.join(BUILD, "go-cache"))
        p = subprocess.run(["go", "build", "-trimpath", "-o", out, "."], cwd=src, env=env, capture_output=True,
                           text=True, timeout=20 * HANG_S)
        expect(p.returncode == 0, f"go build of the client: {p.stderr.strip()[-300:]}")
    return out


def check_go_client(addr):
    """Go's net/http client (tools/net/httpclient_go): pooled keep-alive,
    bodies by length, chunked (a body of unknown length) and after 100
    Continue, bodies over the limit answered 413, requests at once."""
    p = subprocess.run([go_client(), "-limit", str(MAX_BODY), addr], capture_output=True, text=True,
                       timeout=20 * HANG_S)
    lines = p.stdout.splitlines()
    failed = [l for l in lines if not l.startswith("PASS ")]
    expect(p.returncode == 0 and lines and not failed, f"exit {p.returncode}: {'; '.join(failed)} {p.stderr.strip()[-200:]}")


def check_pipeline_splits(addr):
    """Four pipelined requests (a GET, bodies by length, chunked with an
    extension, and after Expect: 100-continue) sent in two pieces, split at
    every byte boundary in turn on one kept connection: every answer, in
    order (a 100 Continue may come first when the split ends a head)."""
    reqs = (b"GET /work?us=7 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nxyz")
    want = [b"7\n", b"hello", b"abcde", b"xyz"]
    s = connect(addr)
    rest = b""
    for i in range(1, len(reqs)):
        send(s, reqs[:i])
        time.sleep(0.002)           # the two pieces in two segments, most of the time
        send(s, reqs[i:])
        for k, w in enumerate(want):
            st, _, body, rest = read_answer(s, rest)
            while st == 100:
                st, _, body, rest = read_answer(s, rest)
            expect(st == 200 and body == w, f"split at {i}, answer {k}: {st} {body!r}, want {w!r}")
    expect(not rest, f"split pipelines: {rest[:60]!r} more")
    s.close()


def check_still_serving(addr):
    check_curl_get(addr)


CHECKS = [check_curl_get, check_curl_work_and_sleep, check_curl_echo, check_bad_request_line,
          check_headers_too_large, check_other_statuses, check_keep_alive, check_pipelining, check_curl_clients,
          check_python_client, check_go_client, check_pipeline_splits]
# The server's own deadlines: these want idle_timeout=2s read_timeout=2s.
DEADLINE_CHECKS = [check_idle_timeout, check_slow_client]


def run(addr, out=sys.stdout, prefix="httpd", checks=CHECKS + DEADLINE_CHECKS):
    """checks against the server at addr, then that it still serves; the
    number that failed."""
    return run_checks([(c.__name__[len("check_"):], c) for c in checks + [check_still_serving]], addr, out, prefix)


if __name__ == "__main__":
    flags = {"--deadlines": DEADLINE_CHECKS, "--no-deadlines": CHECKS}
    if not 2 <= len(sys.argv) <= 3 or len(sys.argv) == 3 and sys.argv[1] not in flags:
        sys.exit(__doc__)
    sys.exit(run(sys.argv[-1], checks=flags.get(sys.argv[1], CHECKS + DEADLINE_CHECKS)))
