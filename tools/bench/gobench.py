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

Instructions per op come from tools/insncount: goro brackets each measured
loop with marker NOPs (one pair per result line, in output order); Go's
binaries are unmodified, so the guest brackets two whole runs of one
benchmark, with M and 5M iterations (SUITE's insn N), by `insnmark 1` /
`insnmark 2`, and insn/op = (count of the 5M run - count of the M run) /
4M: the kernel's and the process's start-up and the N=1 warm-up run cancel.

Outputs, $BUILD/bench/gobench-{goro,go}-{tcg,native}-V.txt (V: vCPUs), in
`go test -bench`'s format with insn/op as an extra unit on each line.
"""
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
# (package, name, N, quick N, insn N, sub-benchmarks, restrict): every benchmark of Go
# 1.19's runtime, sync and time packages that goro ports. N is the fixed
# -test.benchtime=Nx of both sides, sized from a run of Go under TCG on the
# project machine so that one count of Go takes at most about 0.1 s (the
# time package's, a few ops of 1000 timers each, up to 0.2 s); quick N
# (BENCH_QUICK=1) is a fifth. Go's ChanSync and ChanSyncWork do
# b.N / 2000 rounds of 2000 hand-offs, and the producer-consumer benchmarks
# b.N / 1000 batches of 1000: their N (quick and insn too) are multiples of
# that, or the loop runs short or not at all. insn N is the smaller N of Go's two
# instruction-count runs (quick or not): 4 x insn N ops weigh about 20
# million instructions by that run's counts (the noise of a whole-guest
# count is about a million), at most a few seconds of TCG. subs names the
# result lines of a benchmark with sub-benchmarks; restrict=True runs only
# those subs.
SUITE = [
    ("runtime", "CreateGoroutines", 1000, 200, 5000, None, False),
    ("runtime", "CreateGoroutinesParallel", 1000, 200, 2000, None, False),
    ("runtime", "CreateGoroutinesCapture", 500, 100, 500, None, False),
    ("runtime", "PingPongHog", 100000, 20000, 20000, None, False),
    ("runtime", "StackGrowth", 500, 100, 500, None, False),
    ("runtime", "StackGrowthDeep", 1, 1, 1, None, False),
    ("runtime", "WakeupParallelSpinning", 100, 20, 200, ["0s"], True),
    ("runtime", "WakeupParallelSyscall", 10, 2, 50, ["0s"], True),
    ("runtime", "Matmult", 10000, 2000, 50000, None, False),
    ("runtime", "MakeChan", 2000, 400, 20000, ["Byte", "Int", "Ptr", "Struct/0", "Struct/32", "Struct/40"], False),
    ("runtime", "ChanNonblocking", 20000, 4000, 50000, None, False),
    ("runtime", "SelectUncontended", 5000, 1000, 5000, None, False),
    ("runtime", "SelectSyncContended", 1000, 200, 1000, None, False),
    ("runtime", "SelectAsyncContended", 5000, 1000, 5000, None, False),
    ("runtime", "SelectNonblock", 20000, 4000, 20000, None, False),
    ("runtime", "ChanUncontended", 200, 40, 200, None, False),
    ("runtime", "ChanContended", 100, 20, 200, None, False),
    ("runtime", "ChanSync", 2000, 2000, 4000, None, False),
    ("runtime", "ChanSyncWork", 2000, 2000, 2000, None, False),
    ("runtime", "ChanProdCons0", 2000, 1000, 5000, None, False),
    ("runtime", "ChanProdCons10", 5000, 1000, 10000, None, False),
    ("runtime", "ChanProdCons100", 5000, 1000, 10000, None, False),
    ("runtime", "ChanProdConsWork0", 2000, 1000, 2000, None, False),
    ("runtime", "ChanProdConsWork10", 2000, 1000, 2000, None, False),
    ("runtime", "ChanProdConsWork100", 2000, 1000, 2000, None, False),
    ("runtime", "SelectProdCons", 2000, 1000, 2000, None, False),
    ("runtime", "ChanCreation", 2000, 400, 5000, None, False),
    ("runtime", "ChanSem", 5000, 1000, 20000, None, False),
    ("runtime", "ChanPopular", 1, 1, 1, None, False),
    ("runtime", "ChanClosed", 50000, 10000, 100000, None, False),
    ("sync", "Cond1", 5000, 1000, 5000, None, False),
    ("sync", "Cond2", 1000, 200, 2000, None, False),
    ("sync", "Cond4", 1000, 200, 1000, None, False),
    ("sync", "Cond8", 200, 40, 500, None, False),
    ("sync", "Cond16", 200, 40, 500, None, False),
    ("sync", "Cond32", 200, 40, 200, None, False),
    ("sync", "MutexUncontended", 50000, 10000, 200000, None, False),
    ("sync", "Mutex", 50000, 10000, 100000, None, False),
    ("sync", "MutexSlack", 50000, 10000, 100000, None, False),
    ("sync", "MutexWork", 10000, 2000, 10000, None, False),
    ("sync", "MutexWorkSlack", 10000, 2000, 10000, None, False),
    ("sync", "MutexNoSpin", 500, 100, 500, None, False),
    ("sync", "MutexSpin", 500, 100, 500, None, False),
    ("sync", "Once", 100000, 20000, 200000, None, False),
    ("sync", "RWMutexUncontended", 10000, 2000, 50000, None, False),
    ("sync", "RWMutexWrite100", 50000, 10000, 100000, None, False),
    ("sync", "RWMutexWorkWrite100", 5000, 1000, 5000, None, False),
    ("sync", "SemaUncontended", 20000, 4000, 50000, None, False),
    ("sync", "SemaSyntNonblock", 20000, 4000, 50000, None, False),
    ("sync", "SemaSyntBlock", 50000, 10000, 50000, None, False),
    ("sync", "SemaWorkNonblock", 20000, 4000, 20000, None, False),
    ("sync", "SemaWorkBlock", 20000, 4000, 20000, None, False),
    ("sync", "WaitGroupUncontended", 20000, 4000, 50000, None, False),
    ("sync", "WaitGroupAddDone", 50000, 10000, 50000, None, False),
    ("sync", "WaitGroupWait", 100000, 20000, 100000, None, False),
    ("time", "AfterFunc", 2, 1, 2, None, False),
    ("time", "After", 2, 1, 2, None, False),
    ("time", "Stop", 2, 1, 2, None, False),
    ("time", "SimultaneousAfterFunc", 1, 1, 1, None, False),
    ("time", "StartStop", 4, 1, 4, None, False),
    ("time", "Reset", 20, 4, 20, None, False),
    ("time", "Sleep", 1, 1, 1, None, False),
    ("time", "Ticker", 2, 1, 2, None, False),
    ("time", "TickerReset", 20, 4, 20, None, False),
]
PACKAGES = ("runtime", "sync", "time")


def suite(quick, only=None):
    """[(pkg, name, n, subs, restrict, insn n)] of the run; only: regexp on names."""
    out = []
    for pkg, name, n, nq, ni, subs, restrict in SUITE:
        if only and not re.search(only, name):
            continue
        out.append((pkg, name, nq if quick else n, subs, restrict, ni))
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


def insn_n(n):
    """The two N of Go's insn/op runs: insn N and 5 x insn N. The whole
    guest's count of a run varies by about a million instructions (timer
    ticks, the runtime's background work), so the 4N ops between them must
    weigh well above that."""
    return n, 5 * n


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


def add_insn(lines, insn):
    """Appends '<v> insn/op' to the result lines whose name insn maps."""
    out = []
    for line in lines:
        r = parse_result(line)
        if r and r[0] in insn and "insn/op" not in r[3]:
            line = f"{line}\t{insn[r[0]]:.1f} insn/op"
        out.append(line)
    return out


def read_file(path):
    """{name: {'ns': [...], 'insn': [...], 'n': N, 'procs': P}} of a gobench file."""
    res = {}
    if not os.path.exists(path):
        return res
    for line in open(path, errors="replace"):
        r = parse_result(line)
        if not r:
            continue
        name, procs, n, units = r
        d = res.setdefault(name, {"ns": [], "insn": [], "n": n, "procs": procs})
        if "ns/op" in units:
            d["ns"].append(units["ns/op"])
        if "insn/op" in units:
            d["insn"].append(units["insn/op"])
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


def marker_pairs(plog, who, n, what):
    """insncount's marker pairs in the plugin log plog, meant one for each of
    n whats, in order: a count that differs is logged (a guest that died
    leaves the tail unmarked) and zip pairs the first ones. None, logged,
    when plog cannot be read."""
    try:
        pairs = insncount_report.pair_marks(insncount_report.read_marks(plog))
    except OSError as e:
        log(f"{who} insncount: {e}")
        return None
    if len(pairs) != n:
        log(f"{who} insncount: {len(pairs)} marker pairs for {n} {what}; pairing the first ones")
    return pairs


def goro_insn(out, plog):
    """{name: insn/op}: the k-th marker pair of the plugin log belongs to the
    k-th result line (app=gobench marks each measured loop once)."""
    results = [parse_result(l) for l in format_lines(out)]
    results = [r for r in results if r]
    pairs = marker_pairs(plog, "goro", len(results), "result lines")
    if pairs is None:
        return {}
    return {r[0]: p[0] / r[2] for r, p in zip(results, pairs)}


# ---- Go: the test binaries ------------------------------------------------------------------


def go_env(build):
    """Debian's go, static binaries, caches under the build directory."""
    return dict(os.environ, CGO_ENABLED="0", GOFLAGS="-buildvcs=false",
                GOCACHE=os.path.abspath(os.path.join(build, "go-cache")),
                GOPATH=os.path.abspath(os.path.join(build, "gopath")))


def build_go(opts):
    """go test -c of runtime, sync and time into $BUILD/bench/go (kept while
    newer than the go toolchain); insnmark beside them."""
    bindir = os.path.join(opts.build, "bench", "go")
    os.makedirs(bindir, exist_ok=True)
    env = go_env(opts.build)
    gobin = subprocess.run(["sh", "-c", "command -v go"], capture_output=True, text=True).stdout.strip()
    if not gobin:
        sys.exit("gobench: no go on PATH: run make deps-bench (golang-go)")
    stamp = os.path.getmtime(os.path.realpath(gobin))
    for pkg in PACKAGES:
        out = os.path.join(bindir, f"{pkg}.test")
        if os.path.exists(out) and os.path.getmtime(out) > stamp:
            continue
        # time's tests load America/Los_Angeles from GOROOT's zoneinfo.zip,
        # which Debian does not ship: timetzdata embeds the zone database.
        cmd = ["go", "test", "-c", "-tags=timetzdata", "-o", out, pkg]
        log(" ".join(cmd))
        subprocess.run(["nice", "-n", "10"] + cmd, env=env, check=True)
    mark = os.path.join(bindir, "insnmark")
    src = os.path.join(ROOT, "tools", "insncount", "mark.S")
    if not os.path.exists(mark) or os.path.getmtime(mark) < os.path.getmtime(src):
        subprocess.run(["gcc", "-nostdlib", "-static", "-o", mark, src], check=True)
    ver = subprocess.run(["go", "version"], capture_output=True, text=True, env=env).stdout.strip()
    return bindir, ver


def go_argv(pkg, pattern, n, count):
    return [f"./{pkg}.test", "-test.run=NONE", f"-test.bench={pattern}", f"-test.benchtime={n}x",
            f"-test.count={count}"]


def go_init(entries, count, insn):
    """The guest's /init: the timing runs, or (insn) the bracketed pairs."""
    body = []
    if not insn:
        for pkg, n, pat, _ in groups(entries):
            body.append(" ".join(shlex.quote(a) for a in go_argv(pkg, pat, n, count)) + " 2>&1\n"
                        "echo \"### uptime $(cat /proc/uptime)\"")
    else:
        for e in entries:
            pkg, n = e[0], e[5]
            for rname in result_names(e):
                pat = anchored(rname.split("/"))
                for k in insn_n(n):
                    argv = " ".join(shlex.quote(a) for a in go_argv(pkg, pat, k, 1))
                    body.append(f"insnmark 1; {argv} > /tmp/out 2>&1; rc=$?; insnmark 2\n"
                                f"echo \"### insn {rname} {k} rc=$rc lines=$(grep -c '^Benchmark' /tmp/out)\"")
    return f"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev 2>/dev/null
/bin/busybox mount -t tmpfs tmp /tmp
export PATH=/bin:/go HOME=/tmp TMPDIR=/tmp
echo
echo "go-guest: kernel $(cat /proc/sys/kernel/osrelease), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
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
        cmd += ["-plugin", f"{opts.plugin},log={plugin_log}"]
    status, out, _, secs = qemu.run(cmd, opts.go_timeout)
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


INSN_RUN_RE = re.compile(r"^### insn (\S+) (\d+) rc=(\d+) lines=(\d+)")


def go_insn(out, plog):
    """{name: insn/op} from the guest's pairs: (count(N) - count(N/5)) / (N - N/5)."""
    runs = [m.groups() for m in map(INSN_RUN_RE.match, out.split("\n")) if m]
    pairs = marker_pairs(plog, "Go", len(runs), "runs")
    if pairs is None:
        return {}
    by = {}
    for (name, n, rc, nlines), p in zip(runs, pairs):
        if rc != "0" or nlines == "0":
            log(f"Go insncount: {name} N={n} rc={rc} lines={nlines}: dropped")
            continue
        by.setdefault(name, []).append((int(n), p[0]))
    insn = {}
    for name, v in by.items():
        if len(v) == 2 and v[1][0] != v[0][0]:
            insn[name] = (v[1][1] - v[0][1]) / (v[1][0] - v[0][0])
    return insn


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


def run_all(opts):
    """What make bench runs of the suite: goro and Go on each vCPU count."""
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


def add_args(ap):
    ap.add_argument("--gobench-only", dest="only", default="", help="regexp of the suite's names to run")
    ap.add_argument("--count", type=int, default=0, help="-test.count (default 10, 3 with --quick)")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("BENCH_QUICK") == "1",
                    help="a fifth of each N and 3 counts (default when BENCH_QUICK=1)")
    ap.add_argument("--insn-cpus", default="", help="vCPU counts that get insn/op (default 1,2; 1 with --quick)")
    ap.add_argument("--no-goro", action="store_true", help="skip goro's side of the suite")
    ap.add_argument("--no-go", action="store_true", help="skip Go's side of the suite")
    ap.add_argument("--go-timeout", type=int, default=1200, help="seconds per Go guest boot (default 1200)")


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
    opts.elf = qemu.image(opts)
    opts.plugin = None
    if not getattr(opts, "no_insncount", False) and getattr(opts, "insncount", True):
        subprocess.run(["make", "-s", f"BUILD={os.path.abspath(opts.build)}", "insncount"], cwd=ROOT, check=True)
        opts.plugin = os.path.abspath(os.path.join(opts.build, "insncount", "libinsncount.so"))


if __name__ == "__main__":
    sys.exit(main())
