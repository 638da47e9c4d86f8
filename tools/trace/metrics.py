#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""goro's scheduler metrics (metrics=1) from a serial log, and their check.

goro prints, when the machine stops (kernel/metrics.c), under Go's
runtime/metrics names where Go has one and /goro/... otherwise:

    METRIC begin cores=2 elapsed_ns=480687512
    METRIC /sched/goroutines:goroutines 2
    METRIC /sched/latencies:seconds histogram count=25 sum=0.000143434 buckets=0.000002048:1,...
    METRIC /cpu/classes/idle:cpu-seconds 0.283584527
    ...
    METRIC end

A histogram's buckets are lower bound (seconds) : count, empty ones left
out; a bucket runs to the next power-of-two half step. `metrics.py
serial.log` prints them, with p50/p99 of each histogram; `--json` as JSON.

Python 3 standard library only.
"""
import argparse
import json
import re
import sys

NAME_RE = re.compile(r"^/[a-z0-9/_\-]+:[a-z\-]+$")
HIST_RE = re.compile(r"^histogram count=(\d+) sum=([\d.]+) buckets=(.*)$")


class MetricsError(Exception):
    pass


def parse(lines):
    """{name: value} (a histogram: {"count", "sum", "buckets": [(lo, n)]})."""
    out, begun, ended = {}, False, False
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.startswith("METRIC "):
            continue
        rest = line[len("METRIC "):]
        if rest.startswith("begin "):
            begun = True
            continue
        if rest == "end":
            ended = True
            continue
        if not begun or ended:
            raise MetricsError(f"line {n}: METRIC line outside begin .. end")
        name, _, value = rest.partition(" ")
        if not NAME_RE.match(name):
            raise MetricsError(f"line {n}: {name!r} is not a runtime/metrics name")
        m = HIST_RE.match(value)
        if m:
            buckets = []
            for b in filter(None, m.group(3).split(",")):
                lo, _, cnt = b.partition(":")
                buckets.append((float(lo), int(cnt)))
            out[name] = {"count": int(m.group(1)), "sum": float(m.group(2)), "buckets": buckets}
        else:
            try:
                out[name] = float(value) if "." in value else int(value)
            except ValueError:
                raise MetricsError(f"line {n}: bad value {value!r}") from None
    if not begun:
        raise MetricsError("no 'METRIC begin' line (was metrics=1 given?)")
    if not ended:
        raise MetricsError("no 'METRIC end' line")
    return out


def quantile(h, q):
    """The lower bound of the bucket holding quantile q (0..1)."""
    want, seen = q * h["count"], 0
    for lo, n in h["buckets"]:
        seen += n
        if seen >= want:
            return lo
    return h["buckets"][-1][0] if h["buckets"] else 0.0


def check(lines):
    """metrics=1 output parses; each histogram's buckets add up to its count;
    the latency histogram holds one sample per schedule, and, with a whole
    event trace in the same log, one per GoStart. [] when fine."""
    try:
        m = parse(lines)
    except MetricsError as e:
        return [f"metrics: {e}"]
    problems = []
    for name in ("/sched/goroutines:goroutines", "/sched/gomaxprocs:threads",
                 "/sched/latencies:seconds", "/goro/sched/schedules:events",
                 "/cpu/classes/idle:cpu-seconds", "/cpu/classes/user:cpu-seconds"):
        if name not in m:
            problems.append(f"metrics: no {name}")
    for name, v in m.items():
        if isinstance(v, dict) and sum(n for _, n in v["buckets"]) != v["count"]:
            problems.append(f"metrics: {name}: buckets add up to {sum(n for _, n in v['buckets'])}, "
                            f"count {v['count']}")
    lat = m.get("/sched/latencies:seconds")
    if lat and lat["count"] != m.get("/goro/sched/schedules:events"):
        problems.append(f"metrics: {lat['count']} latency samples, "
                        f"{m.get('/goro/sched/schedules:events')} schedules")
    trace = [l for l in lines if l.startswith("TRACE ")]
    if lat and trace and any(re.match(r"TRACE begin .* dropped=0\s*$", l) for l in trace):
        starts = sum(1 for l in trace if re.match(r"TRACE \d+ \d+ GoStart ", l))
        if starts != lat["count"]:
            problems.append(f"metrics: {lat['count']} latency samples, the event trace has {starts} GoStarts")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="serial log holding the METRIC lines")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    with open(args.log, errors="replace") as f:
        lines = f.readlines()
    try:
        m = parse(lines)
    except MetricsError as e:
        sys.exit(f"metrics.py: {args.log}: {e}")
    if args.json:
        json.dump(m, sys.stdout, indent=1)
        print()
        return
    for name, v in m.items():
        if isinstance(v, dict):
            print(f"{name}: count {v['count']}, mean {v['sum'] / max(v['count'], 1) * 1e6:.1f} us, "
                  f"p50 >= {quantile(v, 0.5) * 1e6:.1f} us, p99 >= {quantile(v, 0.99) * 1e6:.1f} us")
        else:
            print(f"{name}: {v}")


if __name__ == "__main__":
    main()
