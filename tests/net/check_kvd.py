#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kvd's behaviour as memcached's clients see it, checked over the network:
the ASCII protocol's commands with every value read back, its error lines,
noreply, many keys pipelined, commands typed through netcat, memcached's
own load tool (memcaslap) with every value it reads verified, gat/gats,
the protocol's limits, Unix-time exptimes, the meta commands and stats
detail against memcached's own transcripts, stats conns, libmemcached's protocol checker
(memccapable's ASCII tests), and the server still serving after nonsense. memcached 1.6 itself passes the same
checks (their answers are its own).

    tests/net/check_kvd.py 127.0.0.1:11211 [--keys 100000]

Each check prints PASS or FAIL with what it saw; the exit status is the
number of failures. Waits bound a hang; nothing is timed.
"""
import argparse
import os
import random
import re
import socket
import subprocess
import sys

from netcheck import Failed, expect, run_checks, send

HANG_S = 60.0                       # no single answer, and no chunk sent, may take longer than this


class Conn:
    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=HANG_S)
        self.buf = b""

    def send(self, data):
        send(self.s, data)

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise Failed(f"connection closed (have {self.buf[:60]!r})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise Failed("connection closed inside a value")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def get(self, *keys, gets=False):
        """{key: (flags, value, cas)} of a get/gets."""
        self.send((b"gets " if gets else b"get ") + b" ".join(keys) + b"\r\n")
        return self.get_answer(gets)

    def get_answer(self, gets=False):
        """{key: (flags, value, cas)} of a retrieval command sent."""
        out = {}
        while True:
            line = self.line()
            if line == b"END":
                return out
            w = line.split(b" ")
            expect(w[0] == b"VALUE" and len(w) == (5 if gets else 4), f"bad VALUE line {line!r}")
            data = self.exact(int(w[3]) + 2)
            expect(data.endswith(b"\r\n"), "value not followed by CRLF")
            out[w[1]] = (int(w[2]), data[:-2], int(w[4]) if gets else None)

    def stats(self, arg=b""):
        """{name: value} of stats [arg]."""
        self.send(b"stats " + arg + b"\r\n")
        out = {}
        while True:
            line = self.line()
            if line == b"END":
                return out
            w = line.split(b" ", 2)
            expect(w[0] == b"STAT" and len(w) == 3, f"bad stats line {line!r}")
            out[w[1]] = w[2]

    def cmd(self, line, data=None):
        self.send(line + b"\r\n" + (data + b"\r\n" if data is not None else b""))
        return self.line()

    def close(self):
        self.s.close()


def check_set_get(addr):
    c = Conn(addr)
    values = {b"k%d" % i: os.urandom(random.Random(i).randint(0, 3000)) for i in range(50)}
    values[b"crlf"] = b"a\r\nEND\r\nb"               # the protocol's own bytes inside a value
    for i, (k, v) in enumerate(values.items()):
        r = c.cmd(b"set %s %d 0 %d" % (k, i, len(v)), v)
        expect(r == b"STORED", f"set {k!r}: {r!r}")
    got = c.get(*values)
    for i, (k, v) in enumerate(values.items()):
        expect(got.get(k, (None, None))[1] == v, f"{k!r} read back differs")
        expect(got[k][0] == i, f"{k!r}: flags {got[k][0]}, set {i}")
    c.close()


def check_add_replace_append(addr):
    c = Conn(addr)
    c.cmd(b"delete ar")
    expect(c.cmd(b"replace ar 0 0 1", b"x") == b"NOT_STORED", "replace of an absent key stored")
    expect(c.cmd(b"add ar 3 0 2", b"bc") == b"STORED", "add of an absent key")
    expect(c.cmd(b"add ar 0 0 1", b"z") == b"NOT_STORED", "add of a present key stored")
    expect(c.cmd(b"append ar 0 0 2", b"de") == b"STORED", "append")
    expect(c.cmd(b"prepend ar 0 0 1", b"a") == b"STORED", "prepend")
    expect(c.get(b"ar") == {b"ar": (3, b"abcde", None)}, f"after add/append/prepend: {c.get(b'ar')}")
    expect(c.cmd(b"replace ar 4 0 3", b"xyz") == b"STORED", "replace of a present key")
    expect(c.get(b"ar")[b"ar"][:2] == (4, b"xyz"), "replace's value")
    c.close()


def check_cas(addr):
    c = Conn(addr)
    c.cmd(b"set cas 0 0 1", b"1")
    cas = c.get(b"cas", gets=True)[b"cas"][2]
    expect(c.cmd(b"cas cas 0 0 1 %d" % (cas + 1), b"2") == b"EXISTS", "cas with a stale id stored")
    expect(c.cmd(b"cas cas 0 0 1 %d" % cas, b"3") == b"STORED", "cas with the current id")
    expect(c.get(b"cas")[b"cas"][1] == b"3", "cas's value")
    expect(c.cmd(b"cas nocas 0 0 1 1", b"3") == b"NOT_FOUND", "cas of an absent key")
    c.close()


def check_incr_decr_touch_delete(addr):
    c = Conn(addr)
    c.cmd(b"set n 0 0 2", b"10")
    expect(c.cmd(b"incr n 5") == b"15", "incr")
    expect(c.cmd(b"decr n 100") == b"0", "decr below 0")
    expect(c.cmd(b"incr n 18446744073709551615") == b"18446744073709551615", "incr to 2^64-1")
    expect(c.cmd(b"incr n 1") == b"0", "incr wraps")
    expect(c.cmd(b"incr nope 1") == b"NOT_FOUND", "incr of an absent key")
    c.cmd(b"set s 0 0 3", b"abc")
    expect(c.cmd(b"incr s 1") == b"CLIENT_ERROR cannot increment or decrement non-numeric value", "incr of text")
    expect(c.cmd(b"touch n 100") == b"TOUCHED", "touch")
    expect(c.cmd(b"touch nope 100") == b"NOT_FOUND", "touch of an absent key")
    expect(c.cmd(b"touch n -1") == b"TOUCHED", "touch to expire")
    expect(c.get(b"n") == {}, "an item expired by touch still read")
    expect(c.cmd(b"delete s") == b"DELETED", "delete")
    expect(c.cmd(b"delete s") == b"NOT_FOUND", "delete of an absent key")
    c.close()


def check_errors(addr):
    c = Conn(addr)
    for line, want in ((b"bogus", b"ERROR"), (b"get", b"ERROR"), (b"get " + b"k" * 251, b"CLIENT_ERROR bad command line format"),
                       (b"set x 0 0 -1", b"CLIENT_ERROR bad command line format"), (b"incr x y", b"CLIENT_ERROR invalid numeric delta argument"),
                       (b"touch x y", b"CLIENT_ERROR invalid exptime argument")):
        r = c.cmd(line)
        expect(r == want, f"{line[:30]!r}: {r!r}, want {want!r}")
    expect(c.cmd(b"set x 0 0 3", b"abcd") == b"CLIENT_ERROR bad data chunk", "a data block too long")
    expect(c.line() == b"ERROR", "the bad block's leftover byte")
    expect(c.cmd(b"set big 0 0 2000000", b"b" * 2000000) == b"SERVER_ERROR object too large for cache", "a 2 MB value")
    expect(c.cmd(b"version").startswith(b"VERSION "), "still serving after errors")
    c.close()


def check_gat(addr):
    """gat/gats, memcached's get-and-touch: the values, gats' cas ids, a
    negative exptime expiring what was read, a bad exptime refused."""
    c = Conn(addr)
    c.cmd(b"set gt 7 0 2", b"hi")
    c.send(b"gat 100 gt nope\r\n")
    expect(c.get_answer() == {b"gt": (7, b"hi", None)}, "gat's value")
    cas = c.get(b"gt", gets=True)[b"gt"][2]
    c.send(b"gats 0 gt\r\n")
    expect(c.get_answer(gets=True) == {b"gt": (7, b"hi", cas)}, "gats' value and cas id")
    expect(c.cmd(b"gat x gt") == b"CLIENT_ERROR invalid exptime argument", "gat with a bad exptime")
    c.send(b"gat -1 gt\r\n")
    expect(c.get_answer() == {b"gt": (7, b"hi", None)}, "gat -1's value")
    expect(c.get(b"gt") == {}, "an item gat -1 expired still read")
    c.close()


def check_edges(addr):
    """The limits memcached defines: a key of 250 bytes stored, 251
    refused; a value over the item size swallowed whole (the next command
    in the same send answered); an exptime negative or past int64 range;
    verbosity; stats' settings, items and slabs."""
    c = Conn(addr)
    k250 = b"k" * 250
    expect(c.cmd(b"set " + k250 + b" 0 0 1", b"x") == b"STORED", "a 250-byte key")
    expect(c.get(k250) == {k250: (0, b"x", None)}, "a 250-byte key read back")
    expect(c.cmd(b"set " + k250 + b"k 0 0 1", b"x") == b"CLIENT_ERROR bad command line format", "a 251-byte key")
    expect(c.line() == b"ERROR", "the data line of a 251-byte key's set, read as a command")
    c.send(b"set huge 0 0 1048576\r\n" + b"h" * 1048576 + b"\r\nversion\r\n")
    expect(c.line() == b"SERVER_ERROR object too large for cache", "a 1 MiB value")
    expect(c.line().startswith(b"VERSION "), "the command after a too-large value")
    expect(c.cmd(b"set neg 0 -1 1", b"n") == b"STORED" and c.get(b"neg") == {}, "a negative exptime kept the item")
    expect(c.cmd(b"set ovf 0 99999999999999999999 1", b"o") == b"CLIENT_ERROR bad command line format",
           "an exptime past 64 bits")
    expect(c.line() == b"ERROR", "the data line of a refused set, read as a command")
    expect(c.cmd(b"verbosity 1") == b"OK" and c.cmd(b"verbosity") == b"ERROR", "verbosity")
    settings = c.stats(b"settings")
    expect(settings.get(b"item_size_max") == b"1048576", f"stats settings: {settings}")
    items = c.stats(b"items")
    expect(any(k.endswith(b":number") and v != b"0" for k, v in items.items()), f"stats items: {items}")
    expect(b"total_malloced" in c.stats(b"slabs"), "stats slabs without total_malloced")
    expect(c.cmd(b"stats nonsense") == b"ERROR", "stats of an unknown argument")
    c.close()


def check_noreply_pipelined(addr):
    c = Conn(addr)
    c.send(b"".join(b"set nr%d 0 0 4 noreply\r\n%04d\r\n" % (i, i) for i in range(200)) + b"delete nr0 noreply\r\n")
    got = c.get(*[b"nr%d" % i for i in range(200)])
    expect(len(got) == 199 and b"nr0" not in got, f"{len(got)} of 199 noreply sets read back")
    expect(all(got[b"nr%d" % i][1] == b"%04d" % i for i in range(1, 200)), "a noreply value differs")
    c.close()


def check_stats_flush(addr):
    c = Conn(addr)
    c.send(b"stats\r\n")
    stats = {}
    while True:
        line = c.line()
        if line == b"END":
            break
        w = line.split(b" ")
        expect(w[0] == b"STAT" and len(w) >= 3, f"bad stats line {line!r}")
        stats[w[1]] = w[2]
    expect(b"curr_connections" in stats and b"get_hits" in stats, "stats without curr_connections or get_hits")
    c.cmd(b"set fl 0 0 1", b"1")
    expect(c.cmd(b"flush_all") == b"OK", "flush_all")
    expect(c.get(b"fl") == {}, "an item read after flush_all")
    c.close()


def check_unix_exptime(addr):
    """An exptime over 30 days is a Unix time (memcached's rule): one 2 s
    past the server's clock (stats' time, within 5 s of this host's) read
    back while the clock has not reached it and gone once it has; one in
    the past never read. Judged by the server's own clock, not by how
    fast this host is: a hit is required only while stats says the time
    has not come."""
    import time
    c = Conn(addr)
    now = int(c.stats()[b"time"])
    expect(abs(now - time.time()) <= 5, f"stats time {now}, this host's {time.time():.0f}")
    expect(c.cmd(b"set past 0 %d 1" % (now - 10), b"p") == b"STORED", "set with a past Unix exptime")
    expect(c.get(b"past") == {}, "an item whose Unix exptime has passed read")
    for _ in range(5):                  # until a read is seen to land before the time
        at = int(c.stats()[b"time"]) + 2
        expect(c.cmd(b"set abs 0 %d 1" % at, b"a") == b"STORED", "set with a Unix exptime")
        got = c.get(b"abs")
        if int(c.stats()[b"time"]) < at:
            expect(got == {b"abs": (0, b"a", None)}, f"an item read before its Unix exptime ({at}): {got}")
            break
    else:
        raise Failed("each of 5 reads came 2 s after its set, by the server's clock")
    deadline = time.monotonic() + HANG_S
    while int(c.stats()[b"time"]) < at:
        expect(time.monotonic() < deadline, f"stats time never reached {at}")
        time.sleep(0.25)
    expect(c.get(b"abs") == {}, f"an item read at its Unix exptime ({at})")
    c.close()


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "memcached")


def normalize_cas(answer):
    """A transcript's answer with each meta c flag's and gets line's cas id
    as * (every server numbers its own), and each meta t (TTL left) and l
    (seconds since read) as * too: the recording's clock stood still, a
    live server's may pass a second mid-answer (test_kvd checks them); me's
    cas=, la= and size= (each server's item is its own size) likewise.

    >>> normalize_cas(b"VA 2 f0 c123 kk t30 l0\\r\\nab\\r\\nHD c9 t-1\\r\\nVALUE k 0 1 77\\r\\n")
    b'VA 2 f0 c* kk t* l*\\r\\nab\\r\\nHD c* t-1\\r\\nVALUE k 0 1 *\\r\\n'
    >>> normalize_cas(b"ME k exp=-1 la=3 cas=12 fetch=no cls=1 size=64\\r\\n")
    b'ME k exp=-1 la=* cas=* fetch=no cls=1 size=*\\r\\n'
    """
    answer = re.sub(rb"(?m)^(VALUE \S+ [0-9]+ [0-9]+) [0-9]+\r$", rb"\1 *\r", answer)
    return re.sub(rb"(?m)^([A-Z]{2}(?: [^\r\n]*)?)",
                  lambda m: re.sub(rb" ([ctl]|la=|cas=|size=)[0-9]+", rb" \1*", m.group(1)), answer)


def check_meta(addr):
    """memcached 1.6's meta commands (mg, ms, md, ma, mn, me), their flags and
    their error lines, and stats detail: each of tests/data/memcached's
    meta.in, meta_errors.in, stats_detail.in, meta_base64.in (keys sent
    in base64, b), meta_hit.in (mg's h and l), meta_vivify.in (mg's N
    and R, W and Z), meta_stale.in (I, X) and meta_debug.in (me), the last
    five with keys none of the others use, sent whole on a fresh
    connection (after a flush_all and a stats reset), the answer until the
    server closes compared byte for byte with what memcached 1.6.18
    answered (NAME.out, recorded by tools/net/mctranscript.py), cas ids
    aside."""
    c = Conn(addr)
    expect(c.cmd(b"flush_all") == b"OK" and c.cmd(b"stats reset") == b"RESET", "flush_all, stats reset")
    expect(c.cmd(b"stats detail off") == b"OK", "stats detail off")
    c.close()
    for name in ("meta", "meta_errors", "stats_detail", "meta_base64", "meta_hit",
                 "meta_vivify", "meta_stale", "meta_debug"):
        with open(os.path.join(DATA, name + ".in"), "rb") as f:
            sent = f.read()
        with open(os.path.join(DATA, name + ".out"), "rb") as f:
            want = normalize_cas(f.read())
        c = Conn(addr)
        c.send(sent)
        c.s.shutdown(socket.SHUT_WR)
        got = c.buf
        while True:
            chunk = c.s.recv(65536)
            if not chunk:
                break
            got += chunk
        c.close()
        got = normalize_cas(got)
        k = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
        expect(got == want, f"{name}: differs from memcached's at byte {k}: {got[k:k + 40]!r}, want {want[k:k + 40]!r}")
    c = Conn(addr)                      # a value over the item size: refused, swallowed, the key dropped
    expect(c.cmd(b"ms big 1 T0", b"b") == b"HD", "ms of a small value")
    c.send(b"ms big 2000000 T0\r\n" + b"b" * 2000000 + b"\r\nmn\r\n")
    expect(c.line() == b"SERVER_ERROR object too large for cache", "ms of a 2 MB value")
    expect(c.line() == b"MN", "the command after a refused ms")
    expect(c.cmd(b"mg big v") == b"EN", "a key whose ms was refused still read")
    c.close()


def check_stats_conns(addr):
    """stats conns as memcached lists its connections: the listener
    (conn_listening), one idle after a command (conn_read), one inside a
    value it has not finished sending (conn_nread: asked again until the
    server has read that far), and the one asking (conn_parse_cmd), each
    with addr and secs_since_last_cmd."""
    import time
    idle, half, c = Conn(addr), Conn(addr), Conn(addr)
    expect(idle.cmd(b"version").startswith(b"VERSION "), "version")
    half.send(b"set half 0 0 10\r\nabc")
    deadline = time.monotonic() + HANG_S
    while True:
        st = c.stats(b"conns")
        states = [v for k, v in st.items() if k.endswith(b":state")]
        if b"conn_nread" in states or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for want in (b"conn_listening", b"conn_read", b"conn_nread", b"conn_parse_cmd"):
        expect(want in states, f"no connection in {want.decode()}: {sorted(set(states))}")
    ids = {k.split(b":")[0] for k in st}
    expect(all(i + b":addr" in st and i + b":secs_since_last_cmd" in st for i in ids), f"incomplete: {st}")
    half.send(b"defghij\r\n")
    expect(half.line() == b"STORED", "the value finished after stats conns")
    for x in (idle, half, c):
        x.close()


def value_of(k):
    """Key k's value: 10 to 59 bytes that name it."""
    return ((b"%010d" % k) * 6)[:10 + k % 50]


def check_many_keys(addr, keys):
    """keys values set pipelined, then every one read back equal."""
    c = Conn(addr)
    batch = 500
    for start in range(0, keys, batch):
        n = min(batch, keys - start)
        c.send(b"".join(b"set mk:%d 0 0 %d\r\n%s\r\n" % (k, 10 + k % 50, value_of(k))
                        for k in range(start, start + n)))
        for k in range(n):
            r = c.line()
            expect(r == b"STORED", f"set mk:{start + k}: {r!r}")
    for start in range(0, keys, batch):
        n = min(batch, keys - start)
        got = c.get(*[b"mk:%d" % k for k in range(start, start + n)])
        for k in range(start, start + n):
            expect(got.get(b"mk:%d" % k, (0, None))[1] == value_of(k), f"mk:{k} read back differs or missing")
    c.close()


def check_netcat(addr):
    """Commands typed through netcat, a client that knows nothing of the
    protocol: memcached's answers, then the connection closed once the
    input ends (nc -N shuts its side down)."""
    host, port = addr.rsplit(":", 1)
    typed = b"set nc 5 0 2\r\nhi\r\nget nc\r\nincr nc 1\r\ndelete nc\r\nget nc\r\n"
    want = b"STORED\r\nVALUE nc 5 2\r\nhi\r\nEND\r\n" \
           b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\nDELETED\r\nEND\r\n"
    p = subprocess.run(["nc", "-N", "-w", str(int(HANG_S)), host, port], input=typed, capture_output=True,
                       timeout=2 * HANG_S)
    expect(p.returncode == 0 and p.stdout == want, f"nc exit {p.returncode}: {p.stdout!r} {p.stderr.strip()!r}")


def check_memcaslap(addr, ops=4000):
    """memcached's own load tool: ops sets and gets (a tenth sets) from 8
    connections at once, every value a get returns compared with the one
    set (--verify=1.0); none may miss or differ."""
    p = subprocess.run(["memcaslap", f"--servers={addr}", "--threads=2", "--concurrency=8", f"--execute_number={ops}",
                        "--verify=1.0", "--fixed_size=200"], capture_output=True, text=True, timeout=10 * HANG_S)
    got = {}
    for line in p.stdout.splitlines():
        k, sep, v = line.partition(":")
        if sep and v.strip().isdigit():
            got[k.strip()] = int(v)
    expect(p.returncode == 0, f"memcaslap exit {p.returncode}: {p.stderr.strip()[-200:]}")
    expect(got.get("cmd_get", 0) + got.get("cmd_set", 0) == ops, f"{got.get('cmd_get')} gets and "
           f"{got.get('cmd_set')} sets, not {ops} operations")
    bad = {k: got.get(k) for k in ("get_misses", "verify_misses", "verify_failed") if got.get(k) != 0}
    expect(not bad, f"memcaslap counted {bad}")


def check_memccapable(addr):
    """libmemcached's protocol checker, its ASCII tests (it flushes the
    server): every one must pass."""
    host, port = addr.rsplit(":", 1)
    p = subprocess.run(["memccapable", "-h", host, "-p", port, "-a", "-t", str(int(HANG_S))], capture_output=True,
                       text=True, timeout=10 * HANG_S)
    results = [l for l in p.stdout.splitlines() if l.startswith("ascii ")]
    failed = [l.split("  ")[0] for l in results if not l.endswith("[pass]")]
    expect(p.returncode == 0 and results and not failed,
           f"memccapable exit {p.returncode}, {len(results)} tests, failed: {failed} {p.stderr.strip()[-200:]}")


def check_still_serving(addr):
    c = Conn(addr)
    expect(c.cmd(b"version").startswith(b"VERSION "), "no answer to version")
    c.close()


def run(addr, keys=10000, out=sys.stdout, prefix="kvd"):
    """Every check against the server at addr; the number that failed."""
    checks = [("set_get", check_set_get), ("add_replace_append", check_add_replace_append), ("cas", check_cas),
              ("incr_decr_touch_delete", check_incr_decr_touch_delete), ("errors", check_errors),
              ("noreply_pipelined", check_noreply_pipelined), ("stats_flush", check_stats_flush),
              (f"many_keys_{keys}", lambda a: check_many_keys(a, keys)), ("netcat", check_netcat),
              ("memcaslap", check_memcaslap), ("gat", check_gat), ("edges", check_edges), ("unix_exptime", check_unix_exptime), ("meta", check_meta), ("stats_conns", check_stats_conns),
              ("memccapable", check_memccapable), ("still_serving", check_still_serving)]
    return run_checks(checks, addr, out, prefix)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("addr")
    ap.add_argument("--keys", type=int, default=10000)
    a = ap.parse_args()
    sys.exit(run(a.addr, a.keys))
