#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per operation from an insncount plugin log.

The insncount QEMU plugin (tools/insncount) prints a line
    INSNCOUNT MARK id=1 vcpu=0 total=T user=U kernel=K cpu0=u/k ...
whenever the guest executes marker NOP 1 or 2. A benchmark brackets each
measured repetition of n operations with marker 1 and marker 2, so
(total at 2 - total at 1) / n is its instructions per operation, summed over
all vCPUs. Benchmarks run one after another, so the marker pairs in the log
are consumed in the order the benchmarks printed their results.

Usage:
    insncount_report.py LOG BENCHFILE     pairs counted from BENCH lines that
                                          carry mark_pairs= and mark_n=
    insncount_report.py LOG NAME:PAIRS:N ...
Prints one `INSN name impl=... insn_per_op=... ...` line per benchmark.

    insncount_report.py --profile PROFILE N SYMFILE...
sums the plugin's profile=PATH output (instructions and atomics per
translation block between markers 1 and 2) by the symbol each block starts
in (SYMFILE: an ELF, read with nm, or a System.map) and prints the top ones
per op (N ops), then every symbol's atomics per op.
"""
import bisect
import re
import statistics
import subprocess
import sys

MARK_RE = re.compile(r"INSNCOUNT MARK id=(\d+) vcpu=\d+ total=(\d+) user=(\d+) kernel=(\d+)")
FIELD_RE = re.compile(r" ([a-z]+)=(\d+)(?= |$)")

# The counters of a MARK line that a measurement reports per op: all
# vCPUs' instructions, atomic read-modify-writes (and by kind), halts,
# PAUSEs and IPIs (absent where the plugin cannot count them), and with
# lines=1 the atomics on a line another vCPU's atomic touched last.
COUNTERS = ("total", "user", "kernel", "atomics", "cmpxchg", "xadd", "xchg", "lockop", "halts", "pauses", "wrmsrs", "ipis",
            "xlines")


def read_marks(log_path):
    """The (id, total, user, kernel) of every marker line, in log order."""
    marks = []
    with open(log_path, errors="replace") as f:
        for line in f:
            m = MARK_RE.search(line)
            if m:
                marks.append(tuple(int(x) for x in m.groups()))
    return marks


def read_mark_fields(log_path):
    """Every MARK line as a dict: its id and the COUNTERS it carries."""
    out = []
    with open(log_path, errors="replace") as f:
        for line in f:
            if not line.startswith("INSNCOUNT MARK "):
                continue
            d = {k: int(v) for k, v in FIELD_RE.findall(line) if k in COUNTERS or k == "id"}
            if "id" in d and "total" in d:
                out.append(d)
    return out


def delta(a, b):
    """The counters from mark a to mark b (those both lines carry)."""
    return {k: b[k] - a[k] for k in COUNTERS if k in a and k in b}


def pair_counts(marks):
    """The counters' deltas of each marker-1/marker-2 pair of marks (dicts
    of read_mark_fields); a 1 with no 2 after it is dropped, as in pair_marks."""
    pairs, begin = [], None
    for m in marks:
        if m["id"] == 1:
            begin = m
        elif m["id"] == 2 and begin is not None:
            pairs.append(delta(begin, m))
            begin = None
    return pairs


def timer_runs(marks, kinds):
    """Go's testing.B timer replayed from address markers in a program that
    cannot be marked (docs/performance.md): marks are read_mark_fields'
    dicts in log order, kinds maps a marker id to what its instruction is:
      run    runN starts a run of the benchmark (its call of ResetTimer)
      reset  ResetTimer: the run's count so far is dropped
      start  the clock read that starts the timer (StartTimer, ResetTimer)
      stop   the clock read that stops it (StopTimer)
      end    runN's run is over (after its StopTimer)
    A run's count is the sum over its timed intervals, as Go's duration.
    A run that others ran inside (a benchmark with sub-benchmarks) is not
    one: returns the counters of the others, in the order they ended."""
    stack, done = [], []
    for m in marks:
        kind = kinds.get(m["id"])
        if kind == "run":
            if stack:
                stack[-1]["leaf"] = False
            stack.append({"acc": {}, "start": None, "leaf": True})
            continue
        if kind is None or not stack:
            continue
        top = stack[-1]
        if kind == "reset":
            top["acc"] = {}
        elif kind == "start":
            top["start"] = m
        elif kind == "stop" and top["start"] is not None:
            d = delta(top["start"], m)
            top["acc"] = {k: top["acc"].get(k, 0) + v for k, v in d.items()}
            top["start"] = None
        elif kind == "end":
            stack.pop()
            if top["leaf"]:
                done.append(top["acc"])
    return done


def pair_marks(marks):
    """(total, user, kernel) deltas of each marker-1/marker-2 pair.

    A marker 1 not followed by a 2 (a benchmark that died) is dropped, so
    that one bad pair does not shift every later benchmark."""
    pairs, begin = [], None
    for mid, total, user, kern in marks:
        if mid == 1:
            begin = (total, user, kern)
        elif mid == 2 and begin is not None:
            pairs.append((total - begin[0], user - begin[1], kern - begin[2]))
            begin = None
    return pairs


def insn_per_op(log_path, groups):
    """groups: [(name, pairs, n)] in the order the benchmarks ran.

    Returns [(name, [(total, user, kernel) per op for each pair])]; raises
    ValueError when the log holds fewer pairs than the groups need."""
    pairs = pair_marks(read_marks(log_path))
    need = sum(g[1] for g in groups)
    if len(pairs) < need:
        raise ValueError(f"{log_path}: {len(pairs)} marker pairs, benchmarks need {need}")
    out, i = [], 0
    for name, npairs, n in groups:
        per = [(t / n, u / n, k / n) for t, u, k in pairs[i:i + npairs]]
        out.append((name, per))
        i += npairs
    return out


def groups_from_lines(lines):
    """(name, pairs, n, impl) of each BENCH line that ran between markers."""
    groups = []
    for line in lines:
        if not line.startswith("BENCH "):
            continue
        words = line.split()
        kv = dict(w.split("=", 1) for w in words[2:] if "=" in w)
        if "mark_pairs" in kv and "mark_n" in kv:
            groups.append((words[1], int(kv["mark_pairs"]), int(kv["mark_n"]), kv.get("impl", "?")))
    return groups


def groups_from_bench(path):
    with open(path, errors="replace") as f:
        return groups_from_lines(f)


def insn_lines(log_path, groups, warn):
    """INSN lines for groups of (name, pairs, n, impl); [] when there are
    none, or after warn(message) when the plugin log does not fit them."""
    if not groups:
        return []
    try:
        results = insn_per_op(log_path, [g[:3] for g in groups])
    except (OSError, ValueError) as e:
        warn(f"insncount: {e}")
        return []
    return format_lines(results, [g[3] for g in groups])


def format_lines(results, impls):
    lines = []
    for (name, per), impl in zip(results, impls):
        tot = [p[0] for p in per]
        lines.append(
            f"INSN {name} impl={impl} pairs={len(per)} insn_per_op={statistics.median(tot):.1f} "
            f"insn_per_op_min={min(tot):.1f} insn_per_op_max={max(tot):.1f} "
            f"user_insn_per_op={statistics.median(p[1] for p in per):.1f} "
            f"kernel_insn_per_op={statistics.median(p[2] for p in per):.1f}")
    return lines


def symbols(paths):
    """Sorted [(addr, name)] of the text symbols of ELF files (nm) and
    System.map files."""
    syms = []
    for path in paths:
        if path.endswith("System.map") or "System.map" in path:
            text = open(path, errors="replace").read()
        else:
            text = subprocess.run(["nm", "-n", "--defined-only", path], capture_output=True, text=True).stdout
        for line in text.split("\n"):
            w = line.split()
            if len(w) >= 3 and w[1] in "tTwW":
                syms.append((int(w[0], 16), w[2]))
    syms.sort()
    return syms


def profile(path, n, symfiles, top=40):
    syms = symbols(symfiles)
    addrs = [a for a, _ in syms]
    by, at = {}, {}
    total = atomics = 0
    for line in open(path, errors="replace"):
        w = line.split()
        if len(w) not in (3, 4) or w[0] != "PROFILE":
            continue
        va, k, a = int(w[1], 16), int(w[2]), int(w[3]) if len(w) == 4 else 0
        i = bisect.bisect_right(addrs, va) - 1
        name = syms[i][1] if i >= 0 else hex(va)
        by[name] = by.get(name, 0) + k
        at[name] = at.get(name, 0) + a
        total += k
        atomics += a
    print(f"{total / n:.1f} instructions and {atomics / n:.2f} atomics per op, by the symbol each block starts in:")
    for name, k in sorted(by.items(), key=lambda x: -x[1])[:top]:
        print(f"{k / n:12.1f} {100 * k / total:5.1f}% {at[name] / n:8.2f}  {name}")
    if atomics:
        print("atomics per op:")
        for name, a in sorted(at.items(), key=lambda x: -x[1]):
            if a:
                print(f"{a / n:12.2f}  {name}")


def main(argv):
    if len(argv) >= 4 and argv[1] == "--profile":
        profile(argv[2], float(argv[3]), argv[4:])
        return 0
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    log = argv[1]
    if len(argv) == 3 and ":" not in argv[2]:
        groups = groups_from_bench(argv[2])
    else:
        groups = []
        for spec in argv[2:]:
            name, pairs, n = spec.rsplit(":", 2)
            groups.append((name, int(pairs), int(n), "?"))
    try:
        results = insn_per_op(log, [g[:3] for g in groups])
    except ValueError as e:
        print(f"insncount_report: {e}", file=sys.stderr)
        return 1
    for line in format_lines(results, [g[3] for g in groups]):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
