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
"""
import re
import statistics
import sys

MARK_RE = re.compile(r"INSNCOUNT MARK id=(\d+) vcpu=\d+ total=(\d+) user=(\d+) kernel=(\d+)")


def read_marks(log_path):
    """The (id, total, user, kernel) of every marker line, in log order."""
    marks = []
    with open(log_path, errors="replace") as f:
        for line in f:
            m = MARK_RE.search(line)
            if m:
                marks.append(tuple(int(x) for x in m.groups()))
    return marks


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


def main(argv):
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
