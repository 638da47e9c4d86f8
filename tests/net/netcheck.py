# SPDX-License-Identifier: MIT
"""What tests/net's checks share: how a check fails, how a list of them
runs against one server, one PASS or FAIL line each (the host tests'
format, which tests/run.py reads), and how a big request is sent.

Python 3 standard library only.
"""
import subprocess
import sys


CHUNK = 64 * 1024


def send(s, data):
    """All of data on socket s, a CHUNK at a time: Python's sendall bounds
    its whole duration by the socket's timeout, so a big send to a host
    that was slow but never stalled would fail. Each chunk gets the
    socket's timeout.

    >>> class Sock:
    ...     sent = []
    ...     def sendall(self, b): self.sent.append(len(b))
    >>> k = Sock(); send(k, b"x" * (CHUNK * 2 + 5)); k.sent
    [65536, 65536, 5]
    """
    view = memoryview(data)
    for off in range(0, len(data), CHUNK):
        s.sendall(view[off:off + CHUNK])


class Failed(Exception):
    """A check saw the server do something it must not; the message says what."""


def expect(cond, what):
    if not cond:
        raise Failed(what)


def run_checks(checks, addr, out=sys.stdout, prefix=""):
    """Runs each (name, check) of checks against addr, in order, printing
    "PASS prefix/name" or "FAIL prefix/name: why"; a check that fails, or
    whose connection breaks or whose client program hangs, does not stop
    the ones after it. Returns the number that failed.

    >>> import io
    >>> def ok(a): pass
    >>> def bad(a): expect(a == "x", f"got {a}")
    >>> def gone(a): raise ConnectionResetError("reset")
    >>> o = io.StringIO()
    >>> run_checks([("ok", ok), ("bad", bad), ("gone", gone)], "y", o, "srv")
    2
    >>> print(o.getvalue(), end="")
    PASS srv/ok
    FAIL srv/bad: got y
    FAIL srv/gone: reset
    """
    failed = 0
    for name, check in checks:
        try:
            check(addr)
            print(f"PASS {prefix}/{name}", file=out, flush=True)
        except (Failed, OSError, subprocess.SubprocessError) as e:
            print(f"FAIL {prefix}/{name}: {e}", file=out, flush=True)
            failed += 1
    return failed
