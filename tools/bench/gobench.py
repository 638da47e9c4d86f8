#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Go's benchmark suite on both sides: goro's ports (app=gobench) and Go's
own test binaries, unmodified, in Go's benchmark format.

goro:    app=gobench bench=PATTERN benchtime=Nx count=C under QEMU TCG.
Go, TCG: `go test -c` of runtime, sync and time (Debian's golang, built
         into $BUILD/bench/go), run with -test.run=NONE -test.bench=PATTERN
         -test.benchtime=Nx -test.count=C in the Linux guest
         (tools/bench/linux_guest.py) under the same QEMU, -cpu max and vCPUs.
Go, native: the same binaries on the host, pinned to as many CPUs.

Instructions per op, and atomics, halts and IPIs per op, come from
tools/insncount, counted on every vCPU over each benchmark's measured
interval, the same way on both sides: goro brackets each measured loop with
marker NOPs (one pair per result line, in output order); Go's binaries are
unmodified, so the plugin marks the instructions of Go's own timer (testing.B's
runN, ResetTimer, StartTimer's and StopTimer's clock reads), found in each
binary by `go tool objdump`, and timer_runs replays the timer over them.
KnownWork, a RunParallel loop of 10000 instructions an op on both sides,
checks the method at 1, 2 and 4 vCPUs (--known-work).

Outputs, $BUILD/bench/gobench-{goro,go}-{tcg,native}-V.txt (V: vCPUs), in
`go test -bench`'s format with insn/op as an extra unit on each line.
"""
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import insncount_report  # noqa: E402
from tools.bench.linux_guest import GUEST_APPEND, Cpio, find_kernel  # noqa: E402
from tools.run import qemu  # noqa: E402


def log(msg):
    print(f"gobench: {msg}", file=sys.stderr, flush=True)


# ---- the suite ------------------------------------------------------------------
#
# (package, name, N, quick N, sub-benchmarks, restrict): every benchmark of Go
# 1.19's runtime, sync and time packages that goro ports. N is the fixed
# -test.benchtime=Nx of both sides, sized from a run of Go under TCG on the
# project machine so that one count of Go takes at most about 0.1 s (the
# time package's, a few ops of 1000 timers each, up to 0.2 s); quick N
# (BENCH_QUICK=1) is a fifth. Go's ChanSync and ChanSyncWork do
# b.N / 2000 rounds of 2000 hand-offs, and the producer-consumer benchmarks
# b.N / 1000 batches of 1000: their N (quick too) are multiples of that, or
# the loop runs short or not at all. The instruction counts use the same N
# on both sides. subs names the result lines of a benchmark with
# sub-benchmarks; restrict=True runs only those subs. The last entry is not
# Go's: KnownWork, the counts' yardstick (tools/bench/knownwork_go, and
# app=gobench's twin in apps/gobench_goro.c).
SUITE = [
    ("runtime", "CreateGoroutines", 1000, 200, None, False),
    ("runtime", "CreateGoroutinesParallel", 1000, 200, None, False),
    ("runtime", "CreateGoroutinesCapture", 500, 100, None, False),
    ("runtime", "PingPongHog", 100000, 20000, None, False),
    ("runtime", "StackGrowth", 500, 100, None, False),
    ("runtime", "StackGrowthDeep", 1, 1, None, False),
    ("runtime", "WakeupParallelSpinning", 100, 20, ["0s"], True),
    ("runtime", "WakeupParallelSyscall", 10, 2, ["0s"], True),
    ("runtime", "Matmult", 10000, 2000, None, False),
    ("runtime", "MakeChan", 2000, 400, ["Byte", "Int", "Ptr", "Struct/0", "Struct/32", "Struct/40"], False),
    ("runtime", "ChanNonblocking", 20000, 4000, None, False),
    ("runtime", "SelectUncontended", 5000, 1000, None, False),
    ("runtime", "SelectSyncContended", 1000, 200, None, False),
    ("runtime", "SelectAsyncContended", 5000, 1000, None, False),
    ("runtime", "SelectNonblock", 20000, 4000, None, False),
    ("runtime", "ChanUncontended", 200, 40, None, False),
    ("runtime", "ChanContended", 100, 20, None, False),
    ("runtime", "ChanSync", 2000, 2000, None, False),
    ("runtime", "ChanSyncWork", 2000, 2000, None, False),
    ("runtime", "ChanProdCons0", 2000, 1000, None, False),
    ("runtime", "ChanProdCons10", 5000, 1000, None, False),
    ("runtime", "ChanProdCons100", 5000, 1000, None, False),
    ("runtime", "ChanProdConsWork0", 2000, 1000, None, False),
    ("runtime", "ChanProdConsWork10", 2000, 1000, None, False),
    ("runtime", "ChanProdConsWork100", 2000, 1000, None, False),
    ("runtime", "SelectProdCons", 2000, 1000, None, False),
    ("runtime", "ChanCreation", 2000, 400, None, False),
    ("runtime", "ChanSem", 5000, 1000, None, False),
    ("runtime", "ChanPopular", 1, 1, None, False),
    ("runtime", "ChanClosed", 50000, 10000, None, False),
    ("sync", "Cond1", 5000, 1000, None, False),
    ("sync", "Cond2", 1000, 200, None, False),
    ("sync", "Cond4", 1000, 200, None, False),
    ("sync", "Cond8", 200, 40, None, False),
    ("sync", "Cond16", 200, 40, None, False),
    ("sync", "Cond32", 200, 40, None, False),
    ("sync", "MutexUncontended", 50000, 10000, None, False),
    ("sync", "Mutex", 50000, 10000, None, False),
    ("sync", "MutexSlack", 50000, 10000, None, False),
    ("sync", "MutexWork", 10000, 2000, None, False),
    ("sync", "MutexWorkSlack", 10000, 2000, None, False),
    ("sync", "MutexNoSpin", 500, 100, None, False),
    ("sync", "MutexSpin", 500, 100, None, False),
    ("sync", "Once", 100000, 20000, None, False),
    ("sync", "RWMutexUncontended", 10000, 2000, None, False),
    ("sync", "RWMutexWrite100", 50000, 10000, None, False),
    ("sync", "RWMutexWorkWrite100", 5000, 1000, None, False),
    ("sync", "SemaUncontended", 20000, 4000, None, False),
    ("sync", "SemaSyntNonblock", 20000, 4000, None, False),
    ("sync", "SemaSyntBlock", 50000, 10000, None, False),
    ("sync", "SemaWorkNonblock", 20000, 4000, None, False),
    ("sync", "SemaWorkBlock", 20000, 4000, None, False),
    ("sync", "WaitGroupUncontended", 20000, 4000, None, False),
    ("sync", "WaitGroupAddDone", 50000, 10000, None, False),
    ("sync", "WaitGroupWait", 100000, 20000, None, False),
    ("time", "AfterFunc", 2, 1, None, False),
    ("time", "After", 2, 1, None, False),
    ("time", "Stop", 2, 1, None, False),
    ("time", "SimultaneousAfterFunc", 1, 1, None, False),
    ("time", "StartStop", 4, 1, None, False),
    ("time", "Reset", 20, 4, None, False),
    ("time", "Sleep", 1, 1, None, False),
    ("time", "Ticker", 2, 1, None, False),
    ("time", "TickerReset", 20, 4, None, False),
]
KNOWN_WORK = ("knownwork", "KnownWork", 2000, 400, None, False)
KNOWN_WORK_INSNS = 10000         # 5000 rounds of DEC+JNZ an op, on both sides
PACKAGES = ("runtime", "sync", "time", "knownwork")


def suite(quick, only=None):
    """[(pkg, name, n, subs, restrict)] of the run, KnownWork last; only:
    regexp on names."""
    out = []
    for pkg, name, n, nq, subs, restrict in SUITE + [KNOWN_WORK]:
        if only and not re.search(only, name):
            continue
        out.append((pkg, name, nq if quick else n, subs, restrict))
    return out


def result_names(entry):
    """The result-line names (without Benchmark and -P) a suite entry prints."""
    name, subs = entry[1], entry[3]
    return [f"{name}/{s}" for s in subs] if subs else [name]


def anchored(levels):
    """Go's -test.bench pattern for one name: each '/' level matched whole."""
    return "/".join(f"^{re.escape(x)}$" if i else f"^Benchmark{re.escape(x)}$" for i, x in enumerate(levels))


def groups(entries):
    """Runs of one binary with one N: [(pkg, n, pattern, entries)].

    Benchmarks that run only some of their subs get a run of their own (a
    pattern's sub level would apply to every benchmark in it)."""
    out = {}
    for e in entries:
        pkg, name, n, subs, restrict = e[:5]
        key = (pkg, n, name if restrict else "")
        out.setdefault(key, []).append(e)
    res = []
    for (pkg, n, only), es in out.items():
        pat = "|".join(f"^Benchmark{re.escape(e[1])}$" for e in es)
        if only:
            pat += "/" + "|".join(f"^{re.escape(s)}$" for s in es[0][3])
        res.append((pkg, n, pat, es))
    order = {p: i for i, p in enumerate(PACKAGES)}
    res.sort(key=lambda g: (order[g[0]], -g[1]))
    return res


# ---- Go's benchmark format -------------------------------------------------------------

RESULT_RE = re.compile(r"^Benchmark(\S+?)(?:-(\d+))?\s+(\d+)\s+(\d.*)$")
CONFIG_RE = re.compile(r"^[a-z][a-z0-9-]*: \S")


def parse_result(line):
    """'BenchmarkChanSync-2  20000  310 ns/op  258 insn/op' ->
    (name 'ChanSync', procs 2, n 20000, {'ns/op': 310.0, 'insn/op': 258.0})."""
    m = RESULT_RE.match(line.rstrip())
    if not m:
        return None
    words = m.group(4).split()
    units = {}
    for v, u in zip(words[::2], words[1::2]):
        try:
            units[u] = float(v)
        except ValueError:
            pass
    return m.group(1), int(m.group(2) or 1), int(m.group(3)), units


def format_lines(text):
    """The lines of go test -bench output in text, which may hold other
    console output too: each block from its goos: line to its ok/FAIL line."""
    keep, inside = [], False
    for raw in text.replace("\r", "").split("\n"):
        line = raw.rstrip()
        if line.startswith("goos: "):
            inside = True
        if inside and (RESULT_RE.match(line) or CONFIG_RE.match(line) or line in ("PASS", "FAIL")
                       or line.startswith(("ok  \t", "--- SKIP", "--- FAIL", "    "))):
            keep.append(line)
        if line.startswith(("ok  \t", "FAIL\t")) or line == "FAIL":
            inside = False
    return keep


# The plugin's counters per op, as units on a result line: instructions
# (insn/op), atomic read-modify-writes and each kind of them, halts, PAUSEs,
# IPIs.
# kinsn/op: the part of insn/op above 2^63, a higher-half kernel's (Linux's
# under Go; goro runs low, so its kernel counts in insn/op alone).
COUNT_UNITS = {"total": "insn/op", "kernel": "kinsn/op", "atomics": "atomics/op", "cmpxchg": "cmpxchg/op",
               "xadd": "xadd/op", "xchg": "xchg/op", "lockop": "lockop/op", "halts": "halts/op",
               "pauses": "pauses/op", "wrmsrs": "wrmsrs/op", "ipis": "ipis/op", "xlines": "xlines/op"}


def fmt_count(v):
    return f"{v:.1f}" if v >= 100 else f"{v:.3g}" if v >= 0.001 else f"{v:.6f}".rstrip("0").rstrip(".") or "0"


def add_insn(lines, counts):
    """Appends the counters per op of counts ({name: {counter: per op}})
    to the result lines of those names, in COUNT_UNITS' order."""
    out = []
    for line in lines:
        r = parse_result(line)
        if r and r[0] in counts and "insn/op" not in r[3]:
            c = counts[r[0]]
            line += "".join(f"\t{fmt_count(c[k])} {u}" for k, u in COUNT_UNITS.items() if k in c)
        out.append(line)
    return out


def read_file(path):
    """{name: {'ns': [...], 'insn': [...], 'n': N, 'procs': P, 'units':
    {unit: [...]}}} of a gobench file ('units' holds every unit but ns/op)."""
    res = {}
    if not os.path.exists(path):
        return res
    for line in open(path, errors="replace"):
        r = parse_result(line)
        if not r:
            continue
        name, procs, n, units = r
        d = res.setdefault(name, {"ns": [], "insn": [], "n": n, "procs": procs, "units": {}})
        if "ns/op" in units:
            d["ns"].append(units["ns/op"])
        if "insn/op" in units:
            d["insn"].append(units["insn/op"])
        for u, v in units.items():
            if u != "ns/op":
                d["units"].setdefault(u, []).append(v)
    return res


def host_load():
    """A configuration line: the host's load averages as the run starts."""
    return "host-loadavg: " + " ".join(qemu.loadavg())


def write(path, head, lines):
    with open(path, "w") as f:
        f.write("\n".join(head + lines) + "\n")
    log(f"{sum(1 for l in lines if RESULT_RE.match(l))} result lines -> {path}")


# ---- goro ----------------------------------------------------------------------------------


def goro_boot(opts, cpus, pattern, n, count, plugin_log=None):
    cmdline = f"app=gobench bench={pattern} benchtime={n}x count={count}"
    cmd = qemu.argv(cpus, "1G") + qemu.kernel_boot(opts.elf, cmdline)
    if plugin_log:
        cmd += ["-plugin", f"{opts.plugin},log={plugin_log}"]
    status, out, _, secs = qemu.run(cmd, opts.timeout)
    ok = status == qemu.EXIT_OK
    if not ok:
        log(f"goro {cpus} vCPU {cmdline}: qemu {qemu.describe_status(status)} after {secs:.0f}s (FAILED)")
    return out, ok, secs


def run_goro(opts, cpus, entries, count, outdir):
    """Times (count runs), then instructions (one run under the plugin)."""
    head = ["goro-accel: tcg", f"goro-vcpus: {cpus}", f"goro-command: app=gobench benchtime=<N>x count={count}",
            host_load()]
    lines, insn, t0 = [], {}, time.time()
    raw = open(os.path.join(outdir, f"gobench-goro-tcg-{cpus}.console.log"), "w")
    for pkg, n, pat, _ in groups(entries):
        out, ok, _ = goro_boot(opts, cpus, pat, n, count)
        raw.write(out)
        lines += format_lines(out)
    if opts.plugin and cpus in opts.insn_cpus:
        for pkg, n, pat, _ in groups(entries):
            plog = os.path.join(outdir, f"gobench-goro-tcg-{cpus}.insn.log")
            out, ok, _ = goro_boot(opts, cpus, pat, n, 1, plog)
            raw.write(out)
            insn.update(goro_insn(out, plog))
    raw.close()
    log(f"goro, {cpus} vCPU: {time.time() - t0:.0f}s")
    write(os.path.join(outdir, f"gobench-goro-tcg-{cpus}.txt"), head, add_insn(lines, insn))


def read_marks(plog, who):
    """The plugin log's MARK lines (insncount_report.read_mark_fields); None,
    logged, when plog cannot be read."""
    try:
        return insncount_report.read_mark_fields(plog)
    except OSError as e:
        log(f"{who} insncount: {e}")
        return None


def per_op(counts, n):
    return {k: v / n for k, v in counts.items()}


def goro_insn(out, plog):
    """{name: {counter: per op}}: the k-th marker pair of the plugin log
    belongs to the k-th result line (app=gobench marks each measured loop
    once); a count that differs is logged (a guest that died leaves the
    tail unmarked) and the first ones are paired."""
    results = [parse_result(l) for l in format_lines(out)]
    results = [r for r in results if r]
    marks = read_marks(plog, "goro")
    if marks is None:
        return {}
    pairs = insncount_report.pair_counts(marks)
    if len(pairs) != len(results):
        log(f"goro insncount: {len(pairs)} marker pairs for {len(results)} result lines; pairing the first ones")
    return {r[0]: per_op(p, r[2]) for r, p in zip(results, pairs)}


# ---- Go: the test binaries ------------------------------------------------------------------


def go_env(build):
    """Debian's go, static binaries, caches under the build directory."""
    return dict(os.environ, CGO_ENABLED="0", GOFLAGS="-buildvcs=false",
                GOCACHE=os.path.abspath(os.path.join(build, "go-cache")),
                GOPATH=os.path.abspath(os.path.join(build, "gopath")))


KNOWN_WORK_SRC = os.path.join(ROOT, "tools", "bench", "knownwork_go")


def build_go(opts):
    """go test -c of runtime, sync and time, and of tools/bench/knownwork_go,
    into $BUILD/bench/go (kept while newer than the go toolchain and their
    sources); insnmark beside them, and the address markers of Go's timer
    in each (go_timer_marks) in insnmarks.txt."""
    bindir = os.path.join(opts.build, "bench", "go")
    os.makedirs(bindir, exist_ok=True)
    env = go_env(opts.build)
    gobin = subprocess.run(["sh", "-c", "command -v go"], capture_output=True, text=True).stdout.strip()
    if not gobin:
        sys.exit("gobench: no go on PATH: run make deps-bench (golang-go)")
    stamp = os.path.getmtime(os.path.realpath(gobin))
    for pkg in PACKAGES:
        out = os.path.join(bindir, f"{pkg}.test")
        cwd, target, newest = None, pkg, stamp
        if pkg == "knownwork":
            cwd, target = KNOWN_WORK_SRC, "."
            newest = max([stamp] + [os.path.getmtime(os.path.join(cwd, f)) for f in os.listdir(cwd)])
        if os.path.exists(out) and os.path.getmtime(out) > newest:
            continue
        # time's tests load America/Los_Angeles from GOROOT's zoneinfo.zip,
        # which Debian does not ship: timetzdata embeds the zone database.
        cmd = ["go", "test", "-c", "-tags=timetzdata", "-o", os.path.abspath(out), target]
        log(" ".join(cmd))
        subprocess.run(["nice", "-n", "10"] + cmd, env=env, check=True, cwd=cwd)
    mark = os.path.join(bindir, "insnmark")
    src = os.path.join(ROOT, "tools", "insncount", "mark.S")
    if not os.path.exists(mark) or os.path.getmtime(mark) < os.path.getmtime(src):
        subprocess.run(["gcc", "-nostdlib", "-static", "-o", mark, src], check=True)
    with open(os.path.join(bindir, "insnmarks.txt"), "w") as f:
        f.write("# Go's benchmark timer in each test binary (tools/bench/gobench.py, go_timer_marks)\n")
        for i, pkg in enumerate(PACKAGES):
            for vaddr, mid, kind, code in go_timer_marks(os.path.join(bindir, f"{pkg}.test"), i):
                f.write(f"{vaddr:x} {mid} {code}  # {pkg} {kind}\n")
    ver = subprocess.run(["go", "version"], capture_output=True, text=True, env=env).stdout.strip()
    return bindir, ver


# Address markers: where in a Go test binary testing.B's timer runs, so that
# the plugin counts what Go's ns/op times (docs/performance.md). Each kind
# is one instruction of Go 1.19's testing/benchmark.go, found by
# disassembly; insncount_report.timer_runs says what each does.
MARK_KINDS = ("run", "end", "reset", "start", "stop")
MARK_ID_BASE = 16                # ids below are the marker NOPs'; 8 a binary


def go_mark_id(binary_index, kind):
    return MARK_ID_BASE + 8 * binary_index + MARK_KINDS.index(kind)


OBJDUMP_RE = re.compile(r"^\s+\S+\s+0x([0-9a-f]+)\s+([0-9a-f]+)\s+(.*?)\s*$")


def go_timer_marks(binary, index):
    """[(vaddr, id, kind, hex bytes)] of the binary's timer instructions:
    run    runN's call of ResetTimer (once a run, before its timer starts)
    end    the instruction after runN's call of StopTimer
    reset  ResetTimer's first instruction
    start  the calls of time.Now in StartTimer and ResetTimer (inside their
           `if timerOn` / `if !timerOn`: only when the timer starts)
    stop   StopTimer's call of time.Since (only when the timer is on)
    The bytes (up to 8) make a marker fire in this binary only."""
    out = subprocess.run(["go", "tool", "objdump", "-s", r"^testing\.\(\*B\)\.(runN|StartTimer|StopTimer|ResetTimer)$",
                          binary], capture_output=True, text=True, check=True).stdout
    fn, insns = None, {}
    for line in out.split("\n"):
        if line.startswith("TEXT "):
            fn = line.split()[1].split(".")[-1].replace("(SB)", "")
            insns[fn] = []
        else:
            m = OBJDUMP_RE.match(line)
            if m and fn:
                insns[fn].append((int(m.group(1), 16), m.group(2), m.group(3)))
    want = {"run": 1, "end": 1, "reset": 1, "start": 2, "stop": 1}
    found = []

    def add(kind, insn):
        found.append((insn[0], go_mark_id(index, kind), kind, insn[1][:16]))

    run_n = insns.get("runN", [])
    for k, insn in enumerate(run_n):
        if insn[2].startswith("CALL testing.(*B).ResetTimer("):
            add("run", insn)
        if insn[2].startswith("CALL testing.(*B).StopTimer(") and k + 1 < len(run_n):
            add("end", run_n[k + 1])
    if insns.get("ResetTimer"):
        add("reset", insns["ResetTimer"][0])
    for fn in ("StartTimer", "ResetTimer"):
        for insn in insns.get(fn, []):
            if insn[2].startswith("CALL time.Now("):
                add("start", insn)
    for insn in insns.get("StopTimer", []):
        if insn[2].startswith("CALL time.Since("):
            add("stop", insn)
    got = {k: sum(1 for f in found if f[2] == k) for k in want}
    if got != want:
        sys.exit(f"gobench: {binary}: testing.B's timer is not where Go 1.19 has it "
                 f"(found {got}, want {want}): the address markers need updating")
    return found


def go_argv(pkg, pattern, n, count):
    return [f"./{pkg}.test", "-test.run=NONE", f"-test.bench={pattern}", f"-test.benchtime={n}x",
            f"-test.count={count}"]


def go_init(entries, count, insn):
    """The guest's /init: the timing runs, or (insn) one run of each result
    line's benchmark, count 1, between insnmark 1 and 2."""
    body = []
    if not insn:
        for pkg, n, pat, _ in groups(entries):
            body.append(" ".join(shlex.quote(a) for a in go_argv(pkg, pat, n, count)) + " 2>&1\n"
                        "echo \"### uptime $(cat /proc/uptime)\"")
    else:
        for e in entries:
            pkg, n = e[0], e[2]
            for rname in result_names(e):
                argv = " ".join(shlex.quote(a) for a in go_argv(pkg, anchored(rname.split("/")), n, 1))
                body.append(f"insnmark 1; {argv} > /tmp/out 2>&1; rc=$?; insnmark 2\n"
                            f"echo \"### insn {pkg} {rname} {n} rc=$rc lines=$(grep -c '^Benchmark' /tmp/out)\"")
    return f"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev 2>/dev/null
/bin/busybox mount -t tmpfs tmp /tmp
export PATH=/bin:/go HOME=/tmp TMPDIR=/tmp
echo
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
echo "go-guest: kernel $(cat /proc/sys/kernel/osrelease), clocksource $(cat $cs)"
cd /go
echo "### uptime $(cat /proc/uptime)"
echo '### gobench begin'
{chr(10).join(body)}
echo '### gobench end'
/bin/busybox poweroff -f
"""


def go_initramfs(path, bindir, init):
    c = Cpio()
    for d in ("bin", "dev", "proc", "sys", "tmp", "go"):
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3)
    with open("/bin/busybox", "rb") as f:
        c.file("bin/busybox", f.read())
    for applet in ("sh", "mount", "poweroff", "echo", "cat", "grep"):
        c.symlink(f"bin/{applet}", "busybox")
    for name in [f"{p}.test" for p in PACKAGES] + ["insnmark"]:
        with open(os.path.join(bindir, name), "rb") as f:
            c.file(f"go/{name}", f.read())
    c.file("init", init.encode())
    with open(path, "wb") as f:
        f.write(c.bytes())


def go_guest(opts, cpus, bindir, init, tag, plugin_log=None):
    outdir = os.path.join(opts.build, "bench")
    initrd = os.path.join(outdir, f"gobench-go-{tag}.cpio")
    go_initramfs(initrd, bindir, init)
    cmd = qemu.argv(cpus, "1G", exit_device=False) + \
        ["-kernel", find_kernel(), "-initrd", initrd, "-append", GUEST_APPEND]
    if plugin_log:
        marks = os.path.abspath(os.path.join(bindir, "insnmarks.txt"))
        cmd += ["-plugin", f"{opts.plugin},log={plugin_log},marks={marks}"]
    # QEMU 10.0.2's MTTCG can abort on an assertion of its own
    # (iotlb_to_section) while Linux boots on 2+ vCPUs: a QEMU failure, not
    # the guest's, so the run is taken again, once.
    for attempt in range(2):
        status, out, _, secs = qemu.run(cmd, opts.go_timeout)
        if not (status is not None and status < 0 and "Assertion" in out and attempt == 0):
            break
        log(f"Go {tag}: qemu {qemu.describe_status(status)} ({out.strip().splitlines()[0][:120]}): again")
    out = out.replace("\r", "")
    with open(os.path.join(outdir, f"gobench-go-{tag}.console.log"), "w") as f:
        f.write(out)
    if status != 0 or "### gobench end" not in out:
        log(f"Go {tag}: qemu {qemu.describe_status(status)} after {secs:.0f}s (INCOMPLETE)")
    return out, secs


def run_go_tcg(opts, cpus, entries, count, bindir, gover):
    outdir = os.path.join(opts.build, "bench")
    head = [f"go-peer: {gover}, go test -c (unmodified), Linux guest", "go-accel: tcg", f"go-vcpus: {cpus}",
            host_load()]
    out, secs = go_guest(opts, cpus, bindir, go_init(entries, count, False), f"tcg-{cpus}")
    log(f"Go TCG, {cpus} vCPU: {secs:.0f}s")
    insn = {}
    if opts.plugin and cpus in opts.insn_cpus:
        plog = os.path.join(outdir, f"gobench-go-tcg-{cpus}.insn.log")
        iout, isecs = go_guest(opts, cpus, bindir, go_init(entries, count, True), f"tcg-{cpus}-insn", plog)
        insn = go_insn(iout, plog)
        log(f"Go TCG insn, {cpus} vCPU: {isecs:.0f}s")
    write(os.path.join(outdir, f"gobench-go-tcg-{cpus}.txt"), head, add_insn(format_lines(out), insn))


INSN_RUN_RE = re.compile(r"^### insn (\S+) (\S+) (\d+) rc=(\d+) lines=(\d+)")


def go_insn(out, plog):
    """{name: {counter: per op}}: each insnmark 1/2 pair of the plugin log
    brackets one run of the guest's /init (its ### insn line, in order);
    within it, Go's timer replayed (insncount_report.timer_runs) over the
    markers of that run's binary gives the counts of each benchmark run,
    and the last is the N-iteration run of the result line. (Another
    binary's marker may sit at an address where this one has the same
    instruction: its firing is not this binary's timer.)"""
    runs = [m.groups() for m in map(INSN_RUN_RE.match, out.split("\n")) if m]
    marks = read_marks(plog, "Go")
    if marks is None:
        return {}
    segments, cur = [], None
    for m in marks:
        if m["id"] == 1:
            cur = []
        elif m["id"] == 2 and cur is not None:
            segments.append(cur)
            cur = None
        elif cur is not None:
            cur.append(m)
    if len(segments) != len(runs):
        log(f"Go insncount: {len(segments)} marked runs for {len(runs)} runs; pairing the first ones")
    counts = {}
    for (pkg, name, n, rc, nlines), seg in zip(runs, segments):
        i = PACKAGES.index(pkg)
        kinds = {go_mark_id(i, k): k for k in MARK_KINDS}
        timed = insncount_report.timer_runs(seg, kinds)
        if rc != "0" or nlines == "0" or not timed or "total" not in timed[-1]:
            if rc != "0" or nlines != "0":     # lines=0, rc=0: the benchmark skipped (its --- SKIP line)
                log(f"Go insncount: {name} N={n} rc={rc} lines={nlines}, {len(timed)} timed runs: dropped")
            continue
        counts[name] = per_op(timed[-1], int(n))
    return counts


def run_go_native(opts, cpus, entries, count, bindir, gover):
    avail = sorted(os.sched_getaffinity(0))
    if cpus > len(avail):
        log(f"native: only {len(avail)} CPUs, not {cpus}")
        return
    head = [f"go-peer: {gover}, go test -c (unmodified)", "go-accel: native", f"go-cpus: {cpus}", host_load()]
    lines, t0 = [], time.time()
    for pkg, n, pat, _ in groups(entries):
        p = subprocess.run(["timeout", str(opts.go_timeout)] + go_argv(pkg, pat, n, count), cwd=bindir,
                           capture_output=True, text=True,
                           preexec_fn=lambda: os.sched_setaffinity(0, avail[:cpus]))
        lines += format_lines(p.stdout)
    log(f"Go native, {cpus} CPU: {time.time() - t0:.0f}s")
    write(os.path.join(opts.build, "bench", f"gobench-go-native-{cpus}.txt"), head, lines)


# ---- the known-work check -----------------------------------------------------------------
#
# KnownWork's op is KNOWN_WORK_INSNS instructions on both sides, so its
# counted insn/op must read that at every vCPU count, plus the loop's own
# few (pb.Next, the call) and what the machine does meanwhile without being
# asked: on Go's side Linux's timer tick and the runtime's sysmon, whose
# share grows with the wall time an op takes under TCG (its kernel column).
# A count that missed a vCPU would read a half or a quarter of it, one that
# counted a vCPU twice double. The check judges what the benchmark's program
# executes: goro's whole count (its kernel is the program) and Go's
# user-mode count (Linux's share, shown beside it, follows the wall time,
# not the work: 2% of K at 1 vCPU, 9% at 4 vCPUs on 2 host cores).

KNOWN_WORK_TOLERANCE = 0.02
KNOWN_WORK_JUDGED = {"goro": "total", "go": "user"}


def run_known_work(opts, bindir):
    """KnownWork under the plugin on both sides at each of opts.known_work_cpus;
    writes and returns $BUILD/bench/knownwork.json's rows."""
    outdir = os.path.join(opts.build, "bench")
    name, n = KNOWN_WORK[1], KNOWN_WORK[2]
    entry = suite(False, f"^{name}$")
    rows = []
    for cpus in opts.known_work_cpus:
        row = {"vcpus": cpus, "n": n, "k": KNOWN_WORK_INSNS}
        if not opts.no_goro:
            plog = os.path.join(outdir, f"gobench-goro-knownwork-{cpus}.insn.log")
            out, ok, _ = goro_boot(opts, cpus, f"^Benchmark{name}$", n, 1, plog)
            row["goro"] = goro_insn(out, plog).get(name) if ok else None
        if not opts.no_go:
            plog = os.path.join(outdir, f"gobench-go-knownwork-{cpus}.insn.log")
            out, _ = go_guest(opts, cpus, bindir, go_init(entry, 1, True), f"knownwork-{cpus}-insn", plog)
            row["go"] = go_insn(out, plog).get(name)
        for side in ("goro", "go"):
            c = row.get(side)
            if c:
                row[f"{side}_ratio"] = c[KNOWN_WORK_JUDGED[side]] / KNOWN_WORK_INSNS
                row[f"{side}_ok"] = abs(row[f"{side}_ratio"] - 1) <= KNOWN_WORK_TOLERANCE
        log(f"known work, {cpus} vCPU: " + ", ".join(
            f"{s} {row[s]['total']:.0f} insn/op, {KNOWN_WORK_JUDGED[s]} {row[s + '_ratio']:.3f} K"
            for s in ("goro", "go") if row.get(s)))
        rows.append(row)
    with open(os.path.join(outdir, "knownwork.json"), "w") as f:
        json.dump({"k": KNOWN_WORK_INSNS, "tolerance": KNOWN_WORK_TOLERANCE, "rows": rows}, f, indent=1)
    return rows


def read_known_work(outdir):
    try:
        with open(os.path.join(outdir, "knownwork.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---- the floors ----------------------------------------------------------------------
#
# app=gobench's package "floor" (apps/gobench_floor.c): for each row whose
# op needs no goroutine switch, Floor/<row> is a loop in the row's own
# harness making only the op's unavoidable atomics and memory accesses.
# Counted as the rows are, under the plugin, on each vCPU count of
# --insn-cpus; $BUILD/bench/gobench-floor-V.txt, one line per floor (its
# ns/op, from a run under the plugin, is no claim: the counts are). The
# time rows' floors, FloorTime/<row>, a thousand timers an op, and
# FloorLarge/ChanPopular, a thousand goroutines an op, run apart with an N
# as small as the rows'.

FLOOR_N = 20000
FLOOR_RUNS = (("^BenchmarkFloor$", FLOOR_N), ("^BenchmarkFloorTime$", 20), ("^BenchmarkFloorLarge$", 1))
FLOOR_PREFIXES = ("Floor/", "FloorTime/", "FloorLarge/")


def floor_file(outdir, cpus):
    return os.path.join(outdir, f"gobench-floor-{cpus}.txt")


def run_floors(opts, outdir):
    for cpus in opts.insn_cpus:
        plog = os.path.join(outdir, f"gobench-floor-{cpus}.insn.log")
        lines = []
        for pattern, n in FLOOR_RUNS:
            out, ok, _ = goro_boot(opts, cpus, pattern, n, 1, plog)
            counts = goro_insn(out, plog) if ok else {}
            lines += add_insn([line for line in format_lines(out) if RESULT_RE.match(line)], counts)
        write(floor_file(outdir, cpus), [f"goro-vcpus: {cpus}", "goro-floor: apps/gobench_floor.c"], lines)


def read_floors(outdir, cpus):
    """{row name: {'insn': insn/op, 'atomics': atomics/op}} of the floors."""
    out = {}
    for name, d in read_file(floor_file(outdir, cpus)).items():
        prefix = next((p for p in FLOOR_PREFIXES if name.startswith(p)), None)
        if prefix and d["insn"]:
            out[name[len(prefix):]] = {"insn": d["insn"][0], "atomics": (d["units"].get("atomics/op") or [None])[0]}
    return out


def run_all(opts):
    """What make bench runs of the suite: goro and Go on each vCPU count,
    then the floors (the whole suite only) and the known-work check."""
    entries = suite(opts.quick, opts.only)
    count = opts.count or (3 if opts.quick else 10)
    outdir = os.path.join(opts.build, "bench")
    os.makedirs(outdir, exist_ok=True)
    bindir, gover = (None, None) if opts.no_go else build_go(opts)
    for cpus in opts.cpus:
        if not opts.no_goro:
            run_goro(opts, cpus, entries, count, outdir)
        if not opts.no_go:
            run_go_tcg(opts, cpus, entries, count, bindir, gover)
            run_go_native(opts, cpus, entries, count, bindir, gover)
    if opts.plugin and not opts.no_goro and not opts.only:
        run_floors(opts, outdir)
    if opts.plugin and opts.known_work_cpus and (not opts.only or re.search(opts.only, KNOWN_WORK[1])):
        run_known_work(opts, bindir)


def add_args(ap):
    ap.add_argument("--gobench-only", dest="only", default="", help="regexp of the suite's names to run")
    ap.add_argument("--count", type=int, default=0, help="-test.count (default 10, 3 with --quick)")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("BENCH_QUICK") == "1",
                    help="a fifth of each N and 3 counts (default when BENCH_QUICK=1)")
    ap.add_argument("--insn-cpus", default="", help="vCPU counts that get insn/op (default 1,2; 1 with --quick)")
    ap.add_argument("--no-goro", action="store_true", help="skip goro's side of the suite")
    ap.add_argument("--no-go", action="store_true", help="skip Go's side of the suite")
    ap.add_argument("--go-timeout", type=int, default=1200, help="seconds per Go guest boot (default 1200)")
    ap.add_argument("--lines", action="store_true",
                    help="also count xlines/op, atomics on a line another vCPU touched last (insncount lines=1; slower)")
    ap.add_argument("--known-work-cpus", default="1,2,4",
                    help="vCPU counts of the known-work check (default 1,2,4; empty: none)")


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--cpus", default="1,2")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per goro boot")
    ap.add_argument("--no-insncount", action="store_true")
    add_args(ap)
    opts = ap.parse_args()
    finish_opts(opts)
    run_all(opts)
    return 0


def finish_opts(opts):
    opts.cpus = [int(c) for c in str(opts.cpus).split(",") if c] if isinstance(opts.cpus, str) else opts.cpus
    opts.insn_cpus = [int(c) for c in (opts.insn_cpus or ("1" if opts.quick else "1,2")).split(",") if c]
    opts.known_work_cpus = [int(c) for c in str(getattr(opts, "known_work_cpus", "1,2,4")).split(",") if c]
    opts.elf = qemu.image(opts)
    opts.plugin = None
    if not getattr(opts, "no_insncount", False) and getattr(opts, "insncount", True):
        subprocess.run(["make", "-s", f"BUILD={os.path.abspath(opts.build)}", "insncount"], cwd=ROOT, check=True)
        opts.plugin = os.path.abspath(os.path.join(opts.build, "insncount", "libinsncount.so"))
        if getattr(opts, "lines", False):
            opts.plugin += ",lines=1"


if __name__ == "__main__":
    sys.exit(main())
