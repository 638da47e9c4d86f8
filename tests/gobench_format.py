# SPDX-License-Identifier: MIT
"""The check of an app=gobench log: Go's `go test -bench` format, every
benchmark of the list ran.

Between a package's `goos:` line and its `ok` line every line must be one
that Go's benchmark format (and so benchstat) reads: a `key: value`
configuration line, a result line `BenchmarkName[-P] <TAB> N <TAB> x ns/op
[<TAB> y unit ...]`, `PASS`, or a `--- SKIP:` line with its indented reason.
Every benchmark in REQUIRED must have a result line or a SKIP (with a
reason) at the run's gomaxprocs. Timings are never checked.
"""

import re

CONFIG_RE = re.compile(r"^[a-z][a-z0-9-]*: \S.*$")
RESULT_RE = re.compile(r"^(Benchmark\S+?)(?:-(\d+))? *\t *(\d+)\t *\d+(?:\.\d+)? ns/op(?:\t *\d+(?:\.\d+)? [a-zA-Z/]+)*$")
SKIP_RE = re.compile(r"^--- SKIP: (Benchmark\S+)$")
OK_RE = re.compile(r"^ok  \t(\S+)\t\d+\.\d+s$")

# Go 1.19's benchmark names (sub-benchmarks as Go names them) that the
# issue asks for, and the few more the app runs beside them.
_WAKE = ["0s", "1µs", "2µs", "5µs", "10µs", "20µs", "50µs", "100µs"]
REQUIRED = {
    "runtime": ["PingPongHog", "StackGrowth", "StackGrowthDeep", "CreateGoroutines",
                "CreateGoroutinesParallel", "CreateGoroutinesCapture", "CreateGoroutinesSingle"]
    + [f"WakeupParallelSpinning/{d}" for d in _WAKE] + [f"WakeupParallelSyscall/{d}" for d in _WAKE]
    + ["Matmult", "MakeChan/Byte", "MakeChan/Int", "MakeChan/Ptr", "MakeChan/Struct/0",
       "MakeChan/Struct/32", "MakeChan/Struct/40", "ChanNonblocking", "ChanUncontended",
       "ChanContended", "ChanSync", "ChanSyncWork", "ChanProdCons0", "ChanProdCons10",
       "ChanProdCons100", "ChanProdConsWork0", "ChanProdConsWork10", "ChanProdConsWork100",
       "ReceiveDataFromClosedChan", "ChanCreation", "ChanSem", "ChanPopular", "ChanClosed",
       "SelectUncontended", "SelectSyncContended", "SelectAsyncContended", "SelectNonblock",
       "SelectProdCons"],
    "sync": ["Cond1", "Cond2", "Cond4", "Cond8", "Cond16", "Cond32", "MutexUncontended", "Mutex",
             "MutexSlack", "MutexWork", "MutexWorkSlack", "MutexNoSpin", "MutexSpin", "Once",
             "RWMutexUncontended", "RWMutexWrite100", "RWMutexWrite10", "RWMutexWorkWrite100",
             "RWMutexWorkWrite10", "WaitGroupUncontended", "WaitGroupAddDone",
             "WaitGroupAddDoneWork", "WaitGroupWait", "WaitGroupWaitWork", "SemaUncontended",
             "SemaSyntNonblock", "SemaSyntBlock", "SemaWorkNonblock", "SemaWorkBlock"],
    "time": ["AfterFunc", "After", "Stop", "SimultaneousAfterFunc", "StartStop", "Reset", "Sleep",
             "Ticker", "TickerReset", "TickerResetNaive"],
    "goro": ["KnownWork"] + [f"SpawnBatch/{b}" for b in (10, 100, 300, 1000, 3000, 10000)],
    # apps/gobench_floor.c: the floors of the rows whose op needs no switch,
    # and of the hand-off, Cond and firing-timer rows on one core.
    "floor": [f"Floor/{n}" for n in (
        "ChanNonblocking", "SelectNonblock", "SelectUncontended", "ChanUncontended", "ChanContended", "ChanSem", "ChanClosed",
        "MutexUncontended", "Mutex", "MutexSlack", "MutexWork", "MutexWorkSlack", "Once",
        "RWMutexUncontended", "RWMutexWrite100", "RWMutexWorkWrite100", "SemaUncontended",
        "SemaSyntNonblock", "SemaSyntBlock", "SemaWorkNonblock", "SemaWorkBlock",
        "WaitGroupUncontended", "WaitGroupAddDone", "WaitGroupWait",
        "ChanSync", "ChanProdCons0", "ChanProdCons10", "ChanProdCons100", "ChanSyncWork",
        "ChanProdConsWork0", "ChanProdConsWork10", "ChanProdConsWork100", "SelectProdCons",
        "PingPongHog", "MutexNoSpin", "MutexSpin", "CreateGoroutinesCapture", "MakeChan/Byte",
        "MakeChan/Int", "MakeChan/Ptr", "MakeChan/Struct/0", "MakeChan/Struct/32", "MakeChan/Struct/40",
        "ChanCreation", "SelectAsyncContended", "Matmult", "SelectSyncContended", "Cond1", "Cond2",
        "Cond4", "Cond8", "Cond16", "Cond32", "WakeupParallelSpinning/0s", "CreateGoroutines",
        "CreateGoroutinesParallel", "WakeupParallelSyscall/0s", "StackGrowth")] +
    ["FloorLarge/ChanPopular"] +
    [f"FloorTime/{n}" for n in ("StartStop", "Stop", "Reset", "TickerReset", "AfterFunc", "After",
                                "SimultaneousAfterFunc", "Sleep", "Ticker")],
}


def parse(lines):
    """(results {pkg: {name: [(procs, n)]}}, skips {pkg: set}, problems)."""
    results, skips, problems = {}, {}, []
    pkg, in_block, pending_skip = None, False, None
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        if line.startswith("goos: "):
            in_block, pkg = True, None
            continue
        if not in_block:
            continue
        where = f"line {i + 1}: {line!r}"
        if pending_skip:
            if not line.startswith("    ") or not line.strip():
                problems.append(f"{where}: a SKIP without its indented reason")
            pending_skip = None
            continue
        m = OK_RE.match(line)
        if m:
            if m.group(1) != pkg:
                problems.append(f"{where}: ok for {m.group(1)}, the block is {pkg}")
            in_block = False
            continue
        if line == "PASS":
            continue
        m = RESULT_RE.match(line)
        if m:
            if pkg is None:
                problems.append(f"{where}: a result before the pkg: line")
                continue
            name = m.group(1)[len("Benchmark"):]
            results.setdefault(pkg, {}).setdefault(name, []).append((int(m.group(2) or 1), int(m.group(3))))
            continue
        m = SKIP_RE.match(line)
        if m:
            skips.setdefault(pkg, set()).add(m.group(1)[len("Benchmark"):])
            pending_skip = True
            continue
        if CONFIG_RE.match(line):
            if line.startswith("pkg: "):
                pkg = line[5:]
            continue
        problems.append(f"{where}: not in Go's benchmark format")
    if in_block:
        problems.append("the last package has no ok line")
    return results, skips, problems


def check(lines, procs=None, required=REQUIRED):
    """Problems with a gobench log; [] when fine. procs: the expected -P."""
    results, skips, problems = parse(lines)
    for pkg, names in required.items():
        for name in names:
            runs = results.get(pkg, {}).get(name)
            if runs:
                if procs is not None and any(p != procs for p, _ in runs):
                    problems.append(f"{pkg} Benchmark{name}: ran at -P {sorted({p for p, _ in runs})}, expected {procs}")
            elif name not in skips.get(pkg, set()):
                problems.append(f"{pkg} Benchmark{name}: neither ran nor was skipped")
    return problems


def checker(procs):
    """A log_check for tests/matrix.py."""
    return lambda lines: check(lines, procs)
