#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""goro's event trace (trace=1) -> Go's execution trace, 1.19 format.

`trace2go.py serial.log -o trace.out` reads the TRACE lines
(tools/trace/trace2json.py parses them) and writes the binary format that Go
1.19's `go tool trace` reads (internal/trace/parser.go): the header
"go 1.19 trace", a Frequency event (1e9: goro's times are nanoseconds),
then the events, each in a batch of the P it happened on. goro's Ps are
Go's Ps; a core with no P (an idle core readying a goroutine from an
interrupt, or the boot core creating main) writes into a P of its own,
numbered FAKE_P + core, that never starts.

Go's parser checks every goroutine's state machine (created -> runnable ->
running -> waiting ...) and orders the per-P batches by per-goroutine
sequence numbers; the converter keeps the same state machine and emits
only transitions it allows. Where goro's trace does not say enough (a
trace whose rings wrapped begins mid-stream) it synthesizes the missing
creation, unblock or stop at the same time, and counts what it dropped.

Unblock and creation events carry a one-frame pseudo-stack naming why the
goroutine was readied ("wake: chan receive", "go: new goroutine"), so
`go tool trace -pprof=sched` attributes scheduling latency to them. A
creation also names the goroutine's start function (GoCreate's fn=, named
from goro.elf with --elf; "goroutine" when unknown): go tool trace's
goroutine analysis groups goroutines by it.

Python 3 standard library only.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.trace import profile2pprof, trace2json  # noqa: E402
from tools.trace.varint import varint  # noqa: E402  (refuses negatives: the trace format has none)

# internal/trace's event types (runtime/trace.go)
EV_BATCH, EV_FREQUENCY, EV_STACK, EV_GOMAXPROCS, EV_PROC_START, EV_PROC_STOP = 1, 2, 3, 4, 5, 6
EV_GO_CREATE, EV_GO_START, EV_GO_END = 13, 14, 15
EV_GO_SCHED, EV_GO_PREEMPT, EV_GO_SLEEP, EV_GO_BLOCK, EV_GO_UNBLOCK = 17, 18, 19, 20, 21
EV_GO_BLOCK_SEND, EV_GO_BLOCK_RECV, EV_GO_BLOCK_SELECT, EV_GO_BLOCK_SYNC, EV_GO_BLOCK_COND = 22, 23, 24, 25, 26
EV_GO_SYSCALL, EV_GO_SYSEXIT, EV_GO_SYSBLOCK = 28, 29, 30
EV_STRING = 37

FAKE_P = 1000
CREATE_STACK = "go: new goroutine"
START_STACK = "goroutine"           # a G's start function: goro's trace does not name it


def block_event(reason):
    """The Go blocking event for a goro wait reason."""
    r = reason.lower()
    if "select" in r:
        return EV_GO_BLOCK_SELECT
    if "chan send" in r:
        return EV_GO_BLOCK_SEND
    if "chan receive" in r or "chan recv" in r:
        return EV_GO_BLOCK_RECV
    if "cond" in r:
        return EV_GO_BLOCK_COND
    if "sleep" in r:
        return EV_GO_SLEEP
    if "mutex" in r or "sema" in r or "waitgroup" in r or "sync" in r:
        return EV_GO_BLOCK_SYNC
    return EV_GO_BLOCK


class Writer:
    """Go 1.19's wire format: events in per-P batches, timestamps as deltas."""

    def __init__(self):
        self.out = bytearray(b"go 1.19 trace\x00\x00\x00")
        self.cur_p = None
        self.last_ts = 0
        self.strings = {}
        self.stacks = {}
        self.count = collections.Counter()

    def raw(self, typ, args):
        if 1 <= len(args) <= 3:
            self.out.append(typ | (len(args) - 1) << 6)
            for a in args:
                self.out += varint(a)
        else:
            body = b"".join(varint(a) for a in args)
            self.out.append(typ | 3 << 6)
            self.out += varint(len(body)) + body

    def string(self, s):
        if s not in self.strings:
            sid = len(self.strings) + 1
            self.strings[s] = sid
            b = s.encode()
            self.out.append(EV_STRING)
            self.out += varint(sid) + varint(len(b)) + b
        return self.strings[s]

    def stack(self, name):
        """A one-frame pseudo-stack named name; its id."""
        if name not in self.stacks:
            sid = len(self.stacks) + 1
            fn, file = self.string(name), self.string("goro")
            self.stacks[name] = sid
            self.raw(EV_STACK, [sid, 1, 0x1000 + sid, fn, file, 0])
        return self.stacks[name]

    def event(self, p, typ, ts, *args):
        if p != self.cur_p:
            self.raw(EV_BATCH, [p, ts])
            self.cur_p, self.last_ts = p, ts
        if ts < self.last_ts:
            # A core's events out of time order (a flight-recorder copy
            # made while the core kept writing): Go's deltas cannot go
            # back, so the event takes its predecessor's time. Counted.
            self.count["clamped"] += 1
            ts = self.last_ts
        self.raw(typ, [ts - self.last_ts] + list(args))
        self.last_ts = ts
        self.count[typ] += 1


class Converter:
    """goro's events, in time order, through Go's goroutine and P state machines."""

    def __init__(self, w, names=None):
        self.w = w
        self.names = names or {}    # start function address -> name
        self.gstate = {}            # g -> "runnable" | "running" | "waiting" | "syscall" | "dead"
        self.seq = {}               # g -> Go's per-goroutine sequence number
        self.reason = {}            # g -> why it last parked
        self.g_p = {}               # running g -> the P it runs on
        self.p_g = {}               # P -> the g running on it (absent: none)
        self.p_on = set()           # Ps started (ProcStart emitted)
        self.p_owner = {}           # P -> the core holding it
        self.core_p = {}            # core -> the P it holds
        self.dropped = collections.Counter()
        self.created = 0

    def p_of(self, core):
        return self.core_p.get(core, FAKE_P + core)

    # ---- transitions, each valid in Go's model --------------------------------

    def create(self, p, ts, g, fn=0):
        # Args: the G, its start stack (go tool trace names and groups
        # goroutines by its frame, and refuses a create without one), then
        # the event's own stack (the creation, for -pprof=sched).
        start = self.names.get(fn) or (f"0x{fn:x}" if fn else START_STACK)
        self.w.event(p, EV_GO_CREATE, ts, g, self.w.stack(start), self.w.stack(CREATE_STACK))
        self.gstate[g], self.seq[g] = "runnable", 1
        self.created += 1

    def stop_running(self, ts, g, typ, *args):
        p = self.g_p.pop(g)
        del self.p_g[p]
        self.w.event(p, typ, ts, *args)

    def unblock(self, p, ts, g):
        why = self.reason.get(g, "")
        self.w.event(p, EV_GO_UNBLOCK, ts, g, self.seq[g], self.w.stack("wake: " + (why or "?")))
        self.seq[g] += 1
        self.gstate[g] = "runnable"

    def proc_start(self, core, ts, p):
        if self.p_owner.get(p) not in (None, core) and p in self.p_on:
            self.proc_stop(self.p_owner[p], ts, p)
        self.core_p[core], self.p_owner[p] = p, core
        if p not in self.p_on:
            self.w.event(p, EV_PROC_START, ts, core)
            self.p_on.add(p)

    def proc_stop(self, core, ts, p):
        if self.p_owner.get(p) != core:
            return                  # handed off already: its new holder owns it
        g = self.p_g.get(p)
        if g is not None:           # the G is still on it in Go's model: it leaves first
            self.stop_running(ts, g, EV_GO_PREEMPT, 0)
            self.gstate[g] = "runnable"
        if p in self.p_on:
            self.w.event(p, EV_PROC_STOP, ts)
            self.p_on.discard(p)
        del self.p_owner[p]
        if self.core_p.get(core) == p:
            del self.core_p[core]

    # ---- goro's events -------------------------------------------------------------

    def on(self, e):
        handler = getattr(self, "on_" + e["ev"], None)
        if handler:
            handler(e, e["core"], e["ns"], e.get("g"))
        # Steal, Idle, Wake, TimerFire, WakeIPI: no Go event (trace.json shows them)

    def on_ProcStart(self, e, core, ts, g):
        self.proc_start(core, ts, e["p"])

    def on_ProcStop(self, e, core, ts, g):
        self.proc_stop(core, ts, e["p"])

    def on_Gomaxprocs(self, e, core, ts, g):
        self.w.event(self.p_of(core), EV_GOMAXPROCS, ts, e["procs"], 0)

    def on_GoCreate(self, e, core, ts, g):
        if self.gstate.get(g) is not None:
            self.dropped["GoCreate"] += 1
            return
        self.create(self.p_of(core), ts, g, e["fn"])

    def on_GoStart(self, e, core, ts, g):
        p, state = e["p"], self.gstate.get(g)
        if self.core_p.get(core) != p:
            self.proc_start(core, ts, p)
        if p in self.p_g:           # the one before left without a word (gosched)
            prev = self.p_g[p]
            self.stop_running(ts, prev, EV_GO_SCHED, 0)
            self.gstate[prev] = "runnable"
        if state == "dead":
            self.dropped["GoStart"] += 1
            return
        if state is None:
            self.create(p, ts, g)
            self.dropped["synthesized GoCreate"] += 1
        elif state == "running":
            self.stop_running(ts, g, EV_GO_PREEMPT, 0)
            self.dropped["synthesized GoPreempt"] += 1
        elif state in ("waiting", "syscall"):
            if state == "syscall":
                self.w.event(self.p_of(core), EV_GO_SYSEXIT, ts, g, self.seq[g], 0)
                self.seq[g] += 1
            else:
                self.unblock(p, ts, g)
            self.dropped["synthesized unblock"] += 1
        self.w.event(p, EV_GO_START, ts, g, self.seq[g])
        self.seq[g] += 1
        self.gstate[g] = "running"
        self.g_p[g], self.p_g[p] = p, g

    # The running G leaves its core: Go's event for each of goro's (a park's
    # depends on its reason), its arguments, and the state the G is left in.
    LEAVES = {"GoYield": (EV_GO_SCHED, (0,), "runnable"),
              "GoPreempt": (EV_GO_PREEMPT, (0,), "runnable"),
              "GoPark": (None, (0,), "waiting"),
              "GoEnd": (EV_GO_END, (), "dead")}

    def on_leave(self, e, core, ts, g):
        if self.gstate.get(g) != "running":
            self.dropped[e["ev"]] += 1
            return
        typ, args, state = self.LEAVES[e["ev"]]
        if e["ev"] == "GoPark":
            self.reason[g] = e["reason"]
            typ = block_event(e["reason"])
        self.stop_running(ts, g, typ, *args)
        self.gstate[g] = state

    on_GoYield = on_GoPreempt = on_GoPark = on_GoEnd = on_leave

    def on_GoSysCall(self, e, core, ts, g):
        if self.gstate.get(g) != "running":
            self.dropped["GoSysCall"] += 1
            return
        self.w.event(self.g_p[g], EV_GO_SYSCALL, ts, 0)

    def on_GoUnpark(self, e, core, ts, g):
        if self.gstate.get(g) != "waiting":
            self.dropped["GoUnpark"] += 1
            return
        self.unblock(self.p_of(core), ts, g)

    def on_Handoff(self, e, core, ts, g):
        p = e["p"]
        g1 = self.p_g.get(p)
        if g1 is not None:
            self.stop_running(ts, g1, EV_GO_SYSBLOCK)
            self.gstate[g1] = "syscall"
        owner = self.p_owner.get(p)
        if owner is not None:
            self.proc_stop(owner, ts, p)

    def on_GoSysExit(self, e, core, ts, g):
        if not e["lost"]:
            return
        state = self.gstate.get(g)
        if state == "running":      # a stop-the-world took the P
            self.stop_running(ts, g, EV_GO_SYSBLOCK)
            state = self.gstate[g] = "syscall"
        if state != "syscall":
            self.dropped["GoSysExit"] += 1
            return
        self.w.event(self.p_of(core), EV_GO_SYSEXIT, ts, g, self.seq[g], 0)
        self.seq[g] += 1
        self.gstate[g] = "runnable"


def start_names(elf):
    """{address: name} of goro.elf's functions (None or missing: {})."""
    if not elf or not os.path.exists(elf):
        return {}
    return {start: name for start, _, name in profile2pprof.functions(elf)}


def convert(header, events, elf=None):
    """(trace bytes, Converter) for parsed TRACE events; elf names start functions."""
    w = Writer()
    w.raw(EV_FREQUENCY, [1000000000])
    w.stack(CREATE_STACK)
    w.stack(START_STACK)
    c = Converter(w, start_names(elf))
    for e in events:
        c.on(e)
    # As Go's StopTrace ends its caller's run (traceGoSched), each G still
    # running stops at the end: go tool trace's views need every start's end.
    end = max((e["ns"] for e in events), default=0)
    for g in sorted(c.g_p):
        c.stop_running(end, g, EV_GO_SCHED, 0)
        c.gstate[g] = "runnable"
    return bytes(w.out), c


# ---- go tool trace's web views ---------------------------------------------------


class TraceServer:
    """`go tool trace -http` on a free port of 127.0.0.1: it parses the
    trace and builds the timeline before it serves (.url then)."""

    def __init__(self, trace_out):
        self.p = subprocess.Popen(["go", "tool", "trace", "-http=127.0.0.1:0", trace_out],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url, said = None, []
        for line in self.p.stderr:
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                break
            said.append(line.strip())
        if not self.url:
            self.close()
            raise RuntimeError("go tool trace did not serve: " + " | ".join(said)[-300:])

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=120) as r:
            return r.read().decode(errors="replace")

    def close(self):
        self.p.terminate()
        self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


GROUP_RE = re.compile(r'href="/goroutine\?id=\d+">([^<]*)</a> N=(\d+)')


def check_views(out, created, unstarted):
    """go tool trace serves out: the timeline's data parses, and the goroutine
    analysis lists created goroutines, each that ran under its named start
    function (go tool trace names a goroutine at its first start: the
    unstarted ones, still runnable when the trace ended, have no name)."""
    import json
    try:
        with TraceServer(out) as srv:
            groups = GROUP_RE.findall(srv.get("/goroutines"))
            json.loads(srv.get("/jsontrace"))
    except (RuntimeError, OSError, ValueError) as e:
        return [f"trace2go: go tool trace's views: {e}"]
    problems = []
    n = sum(int(c) for _, c in groups)
    if n != created:
        problems.append(f"trace2go: go tool trace's goroutine analysis lists {n} goroutines, {created} created")
    nameless = sum(int(c) for name, c in groups if name in ("", START_STACK))
    if not groups or nameless != unstarted:
        problems.append(f"trace2go: {nameless} goroutines without a start function, {unstarted} never "
                        f"started: {groups[:5]}")
    return problems


# ---- the test (tests/matrix.py) ------------------------------------------------

def check(lines, outdir, elf=None):
    """A traced boot: the Go trace converts with nothing left out, `go tool
    trace -pprof=sched` parses it whole, and the scheduling-latency profile
    it prints counts as many creations and wake-ups followed by a start as
    goro's trace holds; with elf, go tool trace's web views (timeline,
    goroutine analysis) load too. Returns problems, [] when fine."""
    try:
        header, events = trace2json.parse(lines)
    except trace2json.TraceError as e:
        return [f"trace2go: {e}"]
    data, c = convert(header, events, elf)
    problems = []
    if header["dropped"] == 0 and c.dropped:
        problems.append(f"trace2go: events left out or synthesized in a whole trace: {dict(c.dropped)}")
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "trace.out")
    with open(out, "wb") as f:
        f.write(data)
    sched = subprocess.run(["go", "tool", "trace", "-pprof=sched", out], capture_output=True)
    if sched.returncode:
        return problems + [f"trace2go: go tool trace -pprof=sched failed: "
                           f"{sched.stderr.decode(errors='replace').strip()[:300]}"]
    pb = os.path.join(outdir, "sched.pb")
    with open(pb, "wb") as f:
        f.write(sched.stdout)
    raw = subprocess.run(["go", "tool", "pprof", "-raw", pb], capture_output=True, text=True)
    counts = collections.Counter()
    loc = {}
    samples = []
    for l in raw.stdout.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\d+): (\d+)\s*$", l)
        if m:
            samples.append((int(m.group(1)), int(m.group(3))))
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*) goro:0", l)
        if m:
            loc[int(m.group(1))] = m.group(2)
    for n, lid in samples:
        counts["create" if loc.get(lid) == CREATE_STACK else "wake"] += n
    # what goro's trace says: creations and wake-ups that a start followed
    created, woken, want = set(), set(), collections.Counter()
    for e in events:
        if e["ev"] == "GoCreate":
            created.add(e["g"])
        elif e["ev"] == "GoUnpark":
            woken.add(e["g"])
        elif e["ev"] == "GoStart":
            if e["g"] in created:
                want["create"] += 1
                created.discard(e["g"])
            if e["g"] in woken:
                want["wake"] += 1
                woken.discard(e["g"])
    for k in ("create", "wake") if header["dropped"] == 0 else ():
        if counts[k] != want[k]:
            problems.append(f"trace2go: go tool trace counts {counts[k]} {k}s followed by a start, "
                            f"goro's trace {want[k]}")
    if elf and header["dropped"] == 0:
        started = {e["g"] for e in events if e["ev"] == "GoStart"}
        unstarted = len({e["g"] for e in events if e["ev"] == "GoCreate"} - started)
        problems += check_views(out, c.created, unstarted)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="serial log holding the TRACE lines")
    ap.add_argument("-o", "--output", required=True, help="Go execution trace to write")
    ap.add_argument("--elf", default="", help="goro.elf, to name the goroutines' start functions")
    args = ap.parse_args()
    with open(args.log, errors="replace") as f:
        lines = f.readlines()
    try:
        header, events = trace2json.parse(lines)
    except trace2json.TraceError as e:
        sys.exit(f"trace2go: {args.log}: {e}")
    data, c = convert(header, events, args.elf)
    with open(args.output, "wb") as f:
        f.write(data)
    fixed = ", ".join(f"{k} {v}" for k, v in sorted(c.dropped.items())) or "none"
    print(f"trace2go: {len(events)} events from {header['cores']} cores, {c.created} goroutines "
          f"-> {args.output} ({len(data)} bytes); left out or synthesized: {fixed}", file=sys.stderr)


if __name__ == "__main__":
    main()
