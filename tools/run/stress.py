#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a command while the host runs one CPU-bound process per core beside
it (make test-stress: the test suite on a host that is busy with something
else). A test that fails only here assumes the host is fast.

    tools/run/stress.py [--hogs N] -- COMMAND [ARG...]

The hogs are plain busy loops at the default priority, started before the
command and killed when it ends (or when this is interrupted, or killed:
tools/run/qemu.py, spawn). The exit
status is the command's.

Python 3 standard library only.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.run import qemu  # noqa: E402

HOG = "while True: pass"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 1, metavar="N",
                    help="CPU-bound processes beside the command (default: one per core)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given")

    hogs = []

    def stop_hogs():
        for h in hogs:
            try:
                os.killpg(h.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for h in hogs:
            h.wait()
        hogs.clear()

    def terminate(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)

    t0 = time.monotonic()
    child = None
    try:
        for _ in range(max(0, args.hogs)):
            hogs.append(qemu.spawn([sys.executable, "-c", HOG], stdin=subprocess.DEVNULL))
        print(f"stress: {len(hogs)} CPU-bound processes beside: {' '.join(cmd)}", flush=True)
        child = subprocess.Popen(cmd)
        status = child.wait()
    except KeyboardInterrupt:
        if child and child.poll() is None:
            child.send_signal(signal.SIGTERM)
            child.wait()
        status = 130
    finally:
        stop_hogs()
    print(f"stress: exit {status} after {time.monotonic() - t0:.0f} s beside {args.hogs} hogs",
          flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
