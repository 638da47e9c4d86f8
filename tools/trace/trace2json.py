#!/usr/bin/env python3
"""goro's event trace (trace=1) -> Chrome trace JSON, and its checker.

(tools/trace/trace2go.py writes the same trace in Go's execution-trace format.)

goro prints, when the machine stops:

    TRACE begin cores=4 tsc_hz=2596065036 events=24 dropped=0
    TRACE <core> <ns since trace start> <Event> [key=value ...]
    TRACE end

(kernel/trace.c). `trace2json.py serial.log -o trace.json` writes the
Trace Event Format that chrome://tracing and ui.perfetto.dev open: one
track per core, a slice per stretch a goroutine ran, instants for the
rest, and flow arrows from each wake-up to the woken goroutine's start and
from the core a steal took from to the thief. `check(lines)` is what the test
matrix runs on a traced boot.
"""
import argparse
import json
import re
import sys

LINE_RE = re.compile(r"^TRACE (\d+) (\d+) (\w+)((?: \w+=(?:\"[^\"]*\"|\d+))*)\s*$")
FIELD_RE = re.compile(r"(\w+)=(\"[^\"]*\"|\d+)")
BEGIN_RE = re.compile(r"^TRACE begin cores=(\d+) tsc_hz=(\d+) events=(\d+) dropped=(\d+)\s*$")
EVENTS = {
    "GoCreate": ("g", "parent", "fn"), "GoStart": ("g", "p"), "GoYield": ("g",),
    "GoPreempt": ("g", "why"), "GoPark": ("g", "reason"), "GoUnpark": ("g", "by"),
    "GoEnd": ("g",), "Steal": ("n", "victim"), "Idle": (), "Wake": (),
    "ProcStart": ("p",), "ProcStop": ("p",), "Gomaxprocs": ("procs",),
    "GoSysCall": ("g",), "GoSysExit": ("g", "lost"), "Handoff": ("p",),
    "TimerFire": ("late", "fn"), "WakeIPI": ("core",),
}
STOPS = ("GoYield", "GoPreempt", "GoPark", "GoEnd")     # the running G leaves its core


class TraceError(Exception):
    pass


def parse(lines):
    """(header dict, [event dict]) from a serial log; TraceError names what is wrong."""
    header, events, ended = None, [], False
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.startswith("TRACE "):
            continue
        m = BEGIN_RE.match(line)
        if m and ended:             # a later dump (the flight recorder's) replaces an earlier one
            header, events, ended = None, [], False
        if ended:
            raise TraceError(f"line {n}: TRACE line after 'TRACE end'")
        if m:
            if header:
                raise TraceError(f"line {n}: a second 'TRACE begin'")
            header = dict(zip(("cores", "tsc_hz", "events", "dropped"), map(int, m.groups())))
            continue
        if line.strip() == "TRACE end":
            ended = True
            continue
        if header is None:
            raise TraceError(f"line {n}: event before 'TRACE begin'")
        m = LINE_RE.match(line)
        if not m:
            raise TraceError(f"line {n}: malformed: {line!r}")
        core, ns, name = int(m.group(1)), int(m.group(2)), m.group(3)
        if name not in EVENTS:
            raise TraceError(f"line {n}: unknown event {name}")
        fields = {k: (v[1:-1] if v.startswith('"') else int(v)) for k, v in FIELD_RE.findall(m.group(4))}
        if set(fields) != set(EVENTS[name]):
            raise TraceError(f"line {n}: {name} has fields {sorted(fields)}, expected {sorted(EVENTS[name])}")
        if core >= header["cores"]:
            raise TraceError(f"line {n}: core {core} of a {header['cores']}-core trace")
        events.append(dict(fields, core=core, ns=ns, ev=name, line=n))
    if header is None:
        raise TraceError("no 'TRACE begin' line")
    if not ended:
        raise TraceError("no 'TRACE end' line")
    if len(events) != header["events"]:
        raise TraceError(f"{len(events)} events printed, the header says {header['events']}")
    return header, events


def time_order(events):
    """Problems with a dump's times: goro merges the cores' rings in TSC
    order and converts every record with one rate, so no line's time is
    below the line's before it. [] when none is."""
    problems = []
    for a, b in zip(events, events[1:]):
        if b["ns"] < a["ns"]:
            problems.append(f"trace: line {b['line']} (core {b['core']} {b['ev']}) at {b['ns']} ns, "
                            f"{a['ns'] - b['ns']} ns before line {a['line']} "
                            f"(core {a['core']} {a['ev']}): the dump's times go back")
    return problems


def check(lines):
    """Problems with a traced run's log; [] when the trace is whole and consistent."""
    try:
        header, events = parse(lines)
    except TraceError as e:
        return [f"trace: {e}"]
    problems = time_order(events)
    # With nothing dropped, every G is created before it runs, runs on one
    # core at a time, and leaves the core it runs on.
    if header["dropped"] == 0:
        created, running = set(), {}
        for e in events:
            ev, g = e["ev"], e.get("g")
            if ev == "GoCreate":
                if g in created:
                    problems.append(f"trace: line {e['line']}: goroutine {g} created twice")
                created.add(g)
            elif ev == "GoStart":
                if g not in created:
                    problems.append(f"trace: line {e['line']}: goroutine {g} started, never created")
                if g in running:
                    problems.append(f"trace: line {e['line']}: goroutine {g} started on core {e['core']} "
                                    f"while running on core {running[g]}")
                running[g] = e["core"]
            elif ev in STOPS:
                if running.get(g) != e["core"]:
                    problems.append(f"trace: line {e['line']}: {ev} of goroutine {g}, "
                                    f"which was not running on core {e['core']}")
                running.pop(g, None)
    return problems[:10]


def to_chrome(header, events):
    """Trace Event Format: a slice per run of a goroutine, instants for the rest."""
    out = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "goro"}}]
    for c in range(header["cores"]):
        out.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": c, "args": {"name": f"core {c}"}})
    running = {}                    # core -> (g, start ns)

    def close(core, ns):
        if core in running:
            g, t0 = running.pop(core)
            out.append({"ph": "X", "name": f"g{g}", "pid": 0, "tid": core,
                        "ts": t0 / 1000, "dur": (ns - t0) / 1000, "args": {"goroutine": g}})

    # Flow arrows: a wake-up from the readier to the woken G's next start,
    # a steal from the core holding the victim P to the thief.
    flows = []                      # (id, core from, ns from, core to, ns to, name)
    woken = {}                      # g -> (core, ns) of its pending wake-up
    p_core = {}                     # P -> the core holding it last
    for e in events:
        ev = e["ev"]
        if ev in ("GoStart", "ProcStart"):
            p_core[e["p"]] = e["core"]
        if ev == "GoUnpark":
            woken[e["g"]] = (e["core"], e["ns"])
        elif ev == "GoStart" and e["g"] in woken:
            c0, t0 = woken.pop(e["g"])
            flows.append((c0, t0, e["core"], e["ns"], "wake-up"))
        elif ev == "Steal" and p_core.get(e["victim"], e["core"]) != e["core"]:
            flows.append((p_core[e["victim"]], e["ns"], e["core"], e["ns"], "steal"))
    for i, (c0, t0, c1, t1, name) in enumerate(flows, 1):
        out.append({"ph": "s", "id": i, "name": name, "cat": "flow", "pid": 0, "tid": c0, "ts": t0 / 1000})
        out.append({"ph": "f", "bp": "e", "id": i, "name": name, "cat": "flow", "pid": 0, "tid": c1,
                    "ts": t1 / 1000})
    for e in events:
        core, ns, ev = e["core"], e["ns"], e["ev"]
        if ev == "GoStart":
            close(core, ns)
            running[core] = (e["g"], ns)
            continue
        if ev in STOPS or ev == "Idle":
            close(core, ns)
        args = {k: v for k, v in e.items() if k not in ("core", "ns", "ev", "line")}
        out.append({"ph": "i", "s": "t", "name": ev, "pid": 0, "tid": core, "ts": ns / 1000, "args": args})
    end = max((e["ns"] for e in events), default=0)
    for core in list(running):
        close(core, end)
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"cores": header["cores"], "dropped": header["dropped"]}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="serial log holding the TRACE lines")
    ap.add_argument("-o", "--output", default="-", help="JSON file (default: stdout)")
    ap.add_argument("--check", action="store_true", help="only check the trace; exit 1 on a problem")
    args = ap.parse_args()
    with open(args.log, errors="replace") as f:
        lines = f.readlines()
    if args.check:
        problems = check(lines)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    try:
        header, events = parse(lines)
    except TraceError as e:
        print(f"trace2json: {args.log}: {e}", file=sys.stderr)
        return 1
    doc = to_chrome(header, events)
    if args.output == "-":
        json.dump(doc, sys.stdout)
    else:
        with open(args.output, "w") as f:
            json.dump(doc, f)
        print(f"trace2json: {len(events)} events from {header['cores']} cores "
              f"({header['dropped']} dropped) -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
