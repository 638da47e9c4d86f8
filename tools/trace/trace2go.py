#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""goro's event trace (trace=1) -> Go's execution trace, 1.19 format.

`trace2go.py serial.log -o trace.out` reads the TRACE lines
(tools/trace/trace2json.py parses them) and writes the binary format that Go
1.19's `go tool trace` reads (internal/trace/parser.go), and Go 1.22 and
later read through their converter of the old formats
(internal/trace/internal/oldtrace): the header "go 1.19 trace", then P 0's
batch holding a Frequency event (1e9: goro's times are nanoseconds), then
the events, each in a batch of the P it happened on. goro's Ps are Go's
Ps; a core with no P (an idle core readying a goroutine from an interrupt,
or the boot core creating main) writes into a P of its own, numbered
FAKE_P + core, that never starts.

Go's parser checks every goroutine's state machine (created -> runnable ->
running -> waiting ...) and orders the per-P batches by per-goroutine
sequence numbers; the converter keeps the same state machine and emits
only transitions it allows. Where goro's trace does not say enough (a
trace whose rings wrapped begins mid-stream) it synthesizes the missing
creation, unblock or stop at the same time, and counts what it dropped.

Unblock and creation events carry a one-frame pseudo-stack naming why the
goroutine was readied ("wake: chan receive", "go: new goroutine"), so
`go tool trace -pprof=sched` attributes scheduling latency to them; a
blocking event carries one naming why it parked ("park: chan receive"), so
`-pprof=sync` attributes blocked time. A
creation also names the goroutine's start function (GoCreate's fn=, named
from goro.elf with --elf; "goroutine" when unknown): go tool trace's
goroutine analysis groups goroutines by it.

Python 3 standard library only.
"""
import argparse
import collections
import html
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
EV_GO_BLOCK_SEND, EV_GO_BLOCK_RECV, EV_GO_BLOCK_SELECT = 22, 23, 24
EV_GO_BLOCK_SYNC, EV_GO_BLOCK_COND = 25, 26
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
        # Every record, the frequency, stacks and strings too, sits in a
        # batch: Go 1.22's reader of the old formats refuses one before the
        # first batch header (1.19's takes either). P 0's batch at time 0
        # holds them up to the first event.
        self.raw(EV_BATCH, [0, 0])
        self.cur_p = 0
        self.last_ts = 0
        self.p_ts = {}              # P -> its latest event's time
        self.line = None            # the goro line whose events are being written
        self.events = []            # (P, type, time, args, goro line) as written, for go_order
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
        if ts < self.p_ts.get(p, 0):
            # Out of time order on its P (goro's dumps are not: trace2json's
            # time_order says where one is): Go's parser reads a P's batches
            # as one stream, whose times cannot go back, so the event takes
            # its predecessor's time. Counted.
            self.count["clamped"] += 1
            ts = self.p_ts[p]
        if p != self.cur_p:
            self.raw(EV_BATCH, [p, ts])
            self.cur_p, self.last_ts = p, ts
        self.raw(typ, [ts - self.last_ts] + list(args))
        self.last_ts = self.p_ts[p] = ts
        self.count[typ] += 1
        self.events.append((p, typ, ts, args, self.line))


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
        self.unnamed = 0            # created with no start function known

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
        self.unnamed += start == START_STACK

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
        self.w.line = e["line"]
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
            args = (self.w.stack("park: " + (e["reason"] or "?")),)
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


# Go 1.19's internal/trace/order.go: the state a G must be in for an event
# to be merged (sequence or None for any, status), and the state it leaves;
# None as the next sequence keeps the current one.
DEAD, RUNNABLE, RUNNING, WAITING = range(4)
EV_NAMES = {EV_GOMAXPROCS: "Gomaxprocs", EV_PROC_START: "ProcStart", EV_PROC_STOP: "ProcStop",
            EV_GO_CREATE: "GoCreate", EV_GO_START: "GoStart", EV_GO_END: "GoEnd",
            EV_GO_SCHED: "GoSched", EV_GO_PREEMPT: "GoPreempt", EV_GO_SLEEP: "GoSleep",
            EV_GO_BLOCK: "GoBlock", EV_GO_UNBLOCK: "GoUnblock", EV_GO_BLOCK_SEND: "GoBlockSend",
            EV_GO_BLOCK_RECV: "GoBlockRecv", EV_GO_BLOCK_SELECT: "GoBlockSelect",
            EV_GO_BLOCK_SYNC: "GoBlockSync", EV_GO_BLOCK_COND: "GoBlockCond",
            EV_GO_SYSCALL: "GoSysCall", EV_GO_SYSEXIT: "GoSysExit", EV_GO_SYSBLOCK: "GoSysBlock"}
BLOCKS = (EV_GO_SLEEP, EV_GO_BLOCK, EV_GO_BLOCK_SEND, EV_GO_BLOCK_RECV, EV_GO_BLOCK_SELECT,
          EV_GO_BLOCK_SYNC, EV_GO_BLOCK_COND, EV_GO_SYSBLOCK)


def go_transition(typ, running, args):
    """(g, (seq, status) needed, (seq, status) after) of an event, as order.go's
    stateTransition; g None: no ordering. running: the G its P runs."""
    if typ == EV_GO_CREATE:
        return args[0], (0, DEAD), (1, RUNNABLE)
    if typ == EV_GO_START:
        return args[0], (args[1], RUNNABLE), (args[1] + 1, RUNNING)
    if typ in BLOCKS:
        return running, (None, RUNNING), (None, WAITING)
    if typ in (EV_GO_SCHED, EV_GO_PREEMPT):
        return running, (None, RUNNING), (None, RUNNABLE)
    if typ in (EV_GO_UNBLOCK, EV_GO_SYSEXIT):
        return args[0], (args[1], WAITING), (args[1] + 1, RUNNABLE)
    return None, None, None


def go_order(events):
    """What Go 1.19's parser makes of the written events' order (order1007):
    each P's events in the order written, merged by taking, among the Ps'
    next events that each goroutine's state allows, the earliest; then the
    merged times must not go back. None when they do not, else which two
    events do, with the goro lines they came from."""
    batches, running = collections.defaultdict(list), {}
    for p, typ, ts, args, line in events:
        g, need, after = go_transition(typ, running.get(p, 0), args)
        batches[p].append((ts, typ, p, g, need, after, line))
        if typ == EV_GO_START:
            running[p] = args[0]
        elif typ in BLOCKS or typ in (EV_GO_SCHED, EV_GO_PREEMPT, EV_GO_END):
            running[p] = 0
    queues = [collections.deque(b) for b in batches.values()]
    gs = collections.defaultdict(lambda: (0, DEAD))
    frontier, taken, last = [], [False] * len(queues), None
    for _ in range(sum(map(len, queues))):
        for i, q in enumerate(queues):
            if taken[i] or not q:
                continue
            g, need = q[0][3], q[0][4]
            if g is None or need[0] in (None, gs[g][0]) and need[1] == gs[g][1]:
                frontier.append((q.popleft(), i))
                taken[i] = True
        if not frontier:
            return "no order of the events is consistent (Go: no consistent ordering of events possible)"
        frontier.sort(key=lambda f: f[0][0])
        ev, i = frontier.pop(0)
        taken[i] = False
        ts, typ, p, g, need, after, line = ev
        if g is not None:
            gs[g] = (gs[g][0] if after[0] is None else after[0], after[1])
        if last and ts < last[0]:
            def name(e):
                where = f"line {e[6]}" if e[6] else "the end"
                return f"{EV_NAMES.get(e[1], e[1])} on P {e[2]} at {e[0]} ns ({where})"
            return (f"Go's parser merges {name(ev)} after {name(last)}, which is {last[0] - ts} ns "
                    f"later (Go: time stamps out of order)")
        last = ev
    return None


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
    w.line = None
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


def go_minor():
    """The minor version of the `go` on PATH (19 for go1.19.8), 0 when unknown."""
    r = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True)
    m = re.match(r"go1\.(\d+)", r.stdout.strip())
    return int(m.group(1)) if m else 0


# The goroutine analysis' groups: Go 1.19 lists `<a href="/goroutine?id=PC">name</a> N=n`;
# 1.22 and later a table row per group, the unnamed shown in words.
GROUP_RES = (re.compile(r'href="(/goroutine\?id=\d+)">([^<]*)</a> N=(\d+)'),
             re.compile(r'href="(/goroutine\?name=[^"]*)">([^<]*)</a></code></td>\s*<td>(\d+)</td>'))
UNNAMED = ("", START_STACK, "(Inactive, no stack trace sampled)")


def goroutine_groups(page):
    """[(link, name, count)] of the goroutine analysis page (/goroutines)."""
    for rx in GROUP_RES:
        groups = [(m.group(1), html.unescape(m.group(2)), int(m.group(3))) for m in rx.finditer(page)]
        if groups:
            return groups
    return []


def check_views(out, created, unnamed):
    """go tool trace serves out: the timeline's data parses, and the goroutine
    analysis lists the created goroutines, unnamed as many as expected."""
    import json
    try:
        with TraceServer(out) as srv:
            groups = goroutine_groups(srv.get("/goroutines"))
            json.loads(srv.get("/jsontrace"))
    except (RuntimeError, OSError, ValueError) as e:
        return [f"trace2go: go tool trace's views: {e}"]
    problems = []
    n = sum(c for _, _, c in groups)
    if n != created:
        problems.append(f"trace2go: go tool trace's goroutine analysis lists {n} goroutines, {created} created")
    nameless = sum(c for _, name, c in groups if name in UNNAMED)
    if not groups or nameless != unnamed:
        problems.append(f"trace2go: {nameless} goroutines without a start function, {unnamed} expected: "
                        f"{groups[:5]}")
    return problems


def pprof_counts(out, outdir, kind):
    """`go tool trace -pprof=kind` on out: ({frame name: samples}, problem or None)."""
    r = subprocess.run(["go", "tool", "trace", "-pprof=" + kind, out], capture_output=True)
    if r.returncode:
        return {}, (f"trace2go: go tool trace -pprof={kind} failed: "
                    f"{r.stderr.decode(errors='replace').strip()[:300]}")
    pb = os.path.join(outdir, kind + ".pb")
    with open(pb, "wb") as f:
        f.write(r.stdout)
    raw = subprocess.run(["go", "tool", "pprof", "-raw", pb], capture_output=True, text=True)
    loc, samples = {}, []
    for l in raw.stdout.splitlines():
        m = re.match(r"^\s+(\d+)\s+(\d+): (\d+)\s*$", l)
        if m:
            samples.append((int(m.group(1)), int(m.group(3))))
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*) goro:0", l)
        if m:
            loc[int(m.group(1))] = m.group(2)
    counts = collections.Counter()
    for n, lid in samples:
        counts[loc.get(lid, "?")] += n
    return counts, None


# The blocking events Go's sync profile (-pprof=sync) counts, in 1.19 by
# event type and from 1.22 by the reason the old format's type maps to.
SYNC_BLOCKS = (EV_GO_BLOCK_SEND, EV_GO_BLOCK_RECV, EV_GO_BLOCK_SELECT, EV_GO_BLOCK_SYNC, EV_GO_BLOCK_COND)


def expected(events):
    """What go tool trace's profiles must count of goro's whole trace:
    creations and wake-ups that a start followed (-pprof=sched), parks on
    channels, selects and sync that a wake-up ended (-pprof=sync)."""
    created, woken, parked, want = set(), set(), set(), collections.Counter()
    for e in events:
        if e["ev"] == "GoCreate":
            created.add(e["g"])
        elif e["ev"] == "GoPark" and block_event(e["reason"]) in SYNC_BLOCKS:
            parked.add(e["g"])
        elif e["ev"] == "GoUnpark":
            woken.add(e["g"])
            if e["g"] in parked:
                want["sync"] += 1
                parked.discard(e["g"])
        elif e["ev"] == "GoStart":
            if e["g"] in created:
                want["create"] += 1
                created.discard(e["g"])
            if e["g"] in woken:
                want["wake"] += 1
                woken.discard(e["g"])
    return want


# ---- the test (tests/matrix.py) ------------------------------------------------

def check(lines, outdir, elf=None):
    """A traced boot: the Go trace converts with nothing left out, and go tool
    trace (Go 1.19, or 1.22 and later through their reader of the old
    formats) parses it whole. When nothing was dropped, its profiles count
    goro's trace: the sync profile each park on a channel, select or sync
    primitive that a wake-up ended; the scheduling-latency profile, in 1.19,
    each creation and wake-up that a start followed (1.22's counts a
    runnable stretch only when the goroutine next blocks, so there at most
    that many, and only under those frames); with elf, go tool trace's web
    views (timeline, goroutine analysis) load too. Returns problems, []
    when fine."""
    try:
        header, events = trace2json.parse(lines)
    except trace2json.TraceError as e:
        return [f"trace2go: {e}"]
    data, c = convert(header, events, elf)
    problems = ["trace2go: " + p for p in trace2json.time_order(events)[:5]]
    order = go_order(c.w.events)
    if problems or order:
        return problems + (["trace2go: " + order] if order else [])
    if header["dropped"] == 0 and c.dropped:
        problems.append(f"trace2go: events left out or synthesized in a whole trace: {dict(c.dropped)}")
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "trace.out")
    with open(out, "wb") as f:
        f.write(data)
    sched, err = pprof_counts(out, outdir, "sched")
    if err:
        return problems + [err]
    if header["dropped"]:
        return problems
    sync, err = pprof_counts(out, outdir, "sync")
    if err:
        return problems + [err]
    want, v2 = expected(events), go_minor() >= 22
    got = {"create": sched.pop(CREATE_STACK, 0),
           "wake": sum(sched.pop(k) for k in list(sched) if k.startswith("wake: ")),
           "sync": sum(sync.pop(k) for k in list(sync) if k.startswith("park: "))}
    for k in ("create", "wake", "sync"):
        if got[k] > want[k] or got[k] < want[k] and (k == "sync" or not v2):
            problems.append(f"trace2go: go tool trace counts {got[k]} {k}s, goro's trace "
                            f"{'at most ' if v2 and k != 'sync' else ''}{want[k]}")
    if sched or sync:
        problems.append(f"trace2go: go tool trace's profiles name frames goro's trace has not: "
                        f"{dict(sched + sync)}")
    if elf:
        started = {e["g"] for e in events if e["ev"] == "GoStart"}
        unstarted = len({e["g"] for e in events if e["ev"] == "GoCreate"} - started)
        # 1.19 names a goroutine at its first start, 1.22 at its creation.
        problems += check_views(out, c.created, c.unnamed if v2 else unstarted)
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
