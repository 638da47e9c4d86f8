#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""10,000 idle keep-alive connections on goro's httpd at 2 vCPUs, Go's
promise for its net/http: tests/net/check_conns.py against app=httpd,
booted by tools/net/guest.py with a virtio-net NIC. One line per check,
the host tests' format:

    PASS conns-tap-smp2/open
    PASS conns-tap-smp2/idle_costs_nothing
    PASS conns-tap-smp2/each_served
    PASS conns-tap-smp2/all_closed
    PASS conns-tap-smp2/all_let_go

As root the guest is reached over a tap in a network namespace of its own
("conns<pid>", removed after), where the client's connects reach the
guest as they come, and the check opens --conns (10,000). Without root
there is no tap: the check runs over QEMU's user networking instead,
whose port forward accepts about 70 connections a second through a
listen backlog of one, so it opens --user-conns (1,000) there, labelled
conns-user-smp2; the 10,000 are then not shown, and a line says so.

httpd runs with idle and read timeouts of 30 minutes: the first
connections wait idle all through the opening of the rest. Every wait
bounds a hang (check_conns.py's PROGRESS_S without progress; the boot's
silence limit), never the run's length. After the checks the guest must
still be up with no fatal error in its log (.../alive); the log stays in
BUILD/test-logs/conns-*.log.

    tests/net/goro_conns.py --build build [--conns 10000] [--smp 2]

Python 3 standard library only.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]
from goro_servers import Boot  # noqa: E402  (tests/net, beside this file)
from tools.net import netns  # noqa: E402
from tools.run import qemu  # noqa: E402

ARGS = "idle_timeout=30m read_timeout=30m"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--conns", type=int, default=10000, help="connections over a tap (root)")
    ap.add_argument("--user-conns", type=int, default=1000, help="connections over user networking (not root)")
    ap.add_argument("--ns-prefix", default="conns", help="the namespace's name before the pid (root)")
    o = ap.parse_args()
    tap = os.geteuid() == 0
    net, conns = ("tap", o.conns) if tap else ("user", o.user_conns)
    name = f"conns-{net}-smp{o.smp}"
    if not tap:
        print(f"SKIP conns-tap-smp{o.smp}: needs root (a namespace and a tap); "
              f"{conns} connections over user networking instead", flush=True)
    log = os.path.join(o.build, "test-logs", f"{name}.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    group, ns, b = qemu.Group(), None, None
    try:
        if tap:
            ns = netns.create(f"{o.ns_prefix}{os.getpid() % 100000}", o.smp)
        b = Boot(group, os.path.join(o.build, "goro.elf"), o.smp, "httpd", log, args=ARGS, ns=ns)
        why = b.start()
        if why:
            print(f"FAIL {name}/boot: {why} (log: {os.path.relpath(log)})", flush=True)
            return 1
        print(f"PASS {name}/boot", flush=True)
        client = [sys.executable, os.path.join(HERE, "check_conns.py"), b.addr, "--conns", str(conns),
                  "--prefix", name]
        failed = subprocess.run((["ip", "netns", "exec", ns["name"]] if ns else []) + client).returncode != 0
        bad = [l for l in b.text().splitlines() if re.match(r"(EXCEPTION|PANIC|panic|fatal)", l)]
        if bad or b.p.poll() is not None:
            print(f"FAIL {name}/alive: {bad[0] if bad else 'QEMU exited'} (log: {os.path.relpath(log)})", flush=True)
            failed = True
        else:
            print(f"PASS {name}/alive", flush=True)
        return 1 if failed else 0
    except netns.Failed as e:
        print(f"FAIL {name}/boot: {e}", flush=True)
        return 1
    finally:
        if b:
            b.stop()
        group.stop()
        if ns:
            netns.destroy(ns["name"], quiet=True)


if __name__ == "__main__":
    sys.exit(main())
