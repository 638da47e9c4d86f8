#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memcached's own answers, recorded for kvd's host test (tests/host/test_kvd.c).

Each case is tests/data/memcached/NAME.in, bytes a client sends; this tool
starts Debian's memcached (a fresh one per case, on a free port of
127.0.0.1), sends the whole file, closes its sending side, and writes what
memcached answered until it closed the connection as NAME.out. The test
feeds NAME.in to kvd's parser and table and compares the answer with
NAME.out (cas ids and the version aside).

--client captures a real client's bytes as a new case: the client runs
against a recording proxy in front of memcached, and the first connection
that sent anything becomes NAME.in (at most --max bytes, cut at a command's
end), whose answers are then recorded as above.

Examples:
    tools/net/mctranscript.py                       # every case's .out again
    tools/net/mctranscript.py --client memcslap_set -- \\
        memcslap --servers=127.0.0.1:{port} --test=set --execute-number=20 --concurrency=1
    tools/net/mctranscript.py --client memcaslap -- \\
        memcaslap -s 127.0.0.1:{port} -x 40 -T 1 -c 1 -X 16 -v 1.0 -w 1k

Needs memcached (Debian's package; its daemon may stay stopped: this starts
its own, never on 11211, and ends it). Python 3 standard library only.
"""
import argparse
import glob
import os
import select
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "memcached")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Memcached:
    """A memcached of our own on a free port; ends with the block."""

    def __enter__(self):
        for _ in range(20):
            self.port = free_port()
            argv = ["memcached", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", "64"]
            if os.geteuid() == 0:
                argv += ["-u", "root"]
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(100):
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                        s.sendall(b"version\r\n")
                        if s.recv(64).startswith(b"VERSION "):
                            return self
                except OSError:
                    pass
                if self.proc.poll() is not None:
                    break
                time.sleep(0.02)
            self.__exit__()
        sys.exit("mctranscript: memcached did not start")

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def answer(port, data, idle=1.0):
    """Sends data, shuts the sending side, returns everything until EOF (or
    idle seconds of silence)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            r, _, _ = select.select([s], [], [], idle)
            if not r:
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out


def record(path):
    with open(path, "rb") as f:
        data = f.read()
    with Memcached() as mc:
        out = answer(mc.port, data)
    with open(path[:-3] + ".out", "wb") as f:
        f.write(out)
    print(f"mctranscript: {os.path.relpath(path)}: {len(data)} bytes in, {len(out)} out")


def proxy_capture(argv, max_bytes):
    """Runs argv (with {port} replaced) against a proxy to memcached; the
    first connection's client bytes."""
    captured = []
    with Memcached() as mc:
        lsock = socket.socket()
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(64)
        port = lsock.getsockname()[1]
        stop = threading.Event()

        def pump(client):
            up = socket.create_connection(("127.0.0.1", mc.port))
            buf = b""
            socks = [client, up]
            while not stop.is_set():
                r, _, _ = select.select(socks, [], [], 0.2)
                for s in r:
                    d = s.recv(65536)
                    if not d:
                        client.close(), up.close()
                        if buf:
                            captured.append(buf)
                        return
                    if s is client:
                        buf += d
                        up.sendall(d)
                    else:
                        client.sendall(d)
            if buf:
                captured.append(buf)

        def accept():
            lsock.settimeout(0.2)
            while not stop.is_set():
                try:
                    c, _ = lsock.accept()
                except socket.timeout:
                    continue
                threading.Thread(target=pump, args=(c,), daemon=True).start()

        t = threading.Thread(target=accept, daemon=True)
        t.start()
        subprocess.run([a.replace("{port}", str(port)) for a in argv], timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        stop.set()
        t.join()
        lsock.close()
    if not captured:
        sys.exit("mctranscript: the client sent nothing")
    data = captured[0]
    if len(data) > max_bytes:
        data = cut(data, max_bytes)
    return data


def cut(data, max_bytes):
    """data up to the end of the last whole command (with its data block)
    that ends within max_bytes."""
    pos, end = 0, 0
    while pos < len(data):
        lf = data.find(b"\n", pos)
        if lf < 0:
            break
        words = data[pos:lf].split()
        nxt = lf + 1
        if words and words[0] in (b"set", b"add", b"replace", b"append", b"prepend", b"cas") and len(words) >= 5:
            try:
                nxt += int(words[4]) + 2
            except ValueError:
                pass
        if nxt > max_bytes:
            break
        end = pos = nxt
    return data[:end]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--client", metavar="NAME", help="capture a client's bytes as case NAME (command after --)")
    ap.add_argument("--max", type=int, default=16384, help="--client: at most this many bytes (default 16384)")
    ap.add_argument("cases", nargs="*", help="case names to record again (default all); with --client: the command")
    opts = ap.parse_args()
    os.makedirs(DATA, exist_ok=True)
    if opts.client:
        argv = opts.cases[1:] if opts.cases[:1] == ["--"] else opts.cases
        data = proxy_capture(argv, opts.max)
        path = os.path.join(DATA, opts.client + ".in")
        with open(path, "wb") as f:
            f.write(data)
        record(path)
        return 0
    paths = [os.path.join(DATA, c + ".in") for c in opts.cases] or sorted(glob.glob(os.path.join(DATA, "*.in")))
    for p in paths:
        record(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
