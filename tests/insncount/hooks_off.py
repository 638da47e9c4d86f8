#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The observability tools cost nothing measurable when off.

Boots the yield and channel benchmarks (app=bench filter=yield_switch,
app=bench_chan filter=pingpong_1p, quick=1) on one vCPU under the insncount
plugin with -icount shift=0, from the image make test runs and from the
same tree built with every static branch compiled out (make NOHOOKS=1), and
checks that the first's insn/op is within LIMIT of the second's: the hooks
of trace=, metrics= and profile= are one 5-byte NOP each while off, the
only cost they may have. Counts, not time: under icount they repeat to the
last digit.

Prints a PASS or FAIL line per benchmark (the runner's host-test lines;
make test runs this as BUILD/host/test_hooks_off) and a closing count.

Usage: hooks_off.py PLUGIN GORO_ELF NOHOOKS_ELF
"""
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import bench  # noqa: E402

BENCHES = [("bench", "quick=1 filter=yield_switch", "yield_switch"),
           ("bench_chan", "quick=1 filter=pingpong_1p", "pingpong_1p")]
# Measured: +1 insn/op on yield_switch (0.9%), +8 on pingpong_1p (1.7%): the
# NOPs a switch or a hand-off passes. A flag tested by a load and a branch
# at the same sites would cost two to three times that.
LIMIT = 0.03


def insn_per_op(elf, app, args, name, outdir, tag):
    path, ilog, ok = bench.boot(elf, 1, app, args, outdir, 300, tag, os.path.abspath(sys.argv[1]),
                                extra=["-icount", "shift=0"])
    if not ok:
        return None
    for line in bench.insn_lines_for(open(path, errors="replace").read(), ilog):
        words = line.split()
        if words[:2] == ["INSN", name]:
            return float(dict(w.split("=", 1) for w in words[2:] if "=" in w)["insn_per_op"])
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().split("\n")[-1])
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for app, args, name in BENCHES:
            try:
                problem = compare(app, args, name, d)
            except Exception as e:  # noqa: BLE001  a broken check is this benchmark's failure
                problem = f"the check raised {type(e).__name__}: {e}"
            print(f"PASS hooks_cost_nothing_{name}" if not problem else
                  f"FAIL hooks_cost_nothing_{name}: {problem}", flush=True)
            failed += bool(problem)
    print(f"hooks-off: {len(BENCHES) - failed} passed, {failed} failed")
    return 1 if failed else 0


def compare(app, args, name, d):
    """None when the hooks, off, cost at most LIMIT; otherwise why not."""
    on = insn_per_op(sys.argv[2], app, args, name, d, "hooks")
    off = insn_per_op(sys.argv[3], app, args, name, d, "nohooks")
    if on is None or off is None:
        return f"no insn/op (hooks {on}, compiled out {off})"
    verdict = "ok" if on <= off * (1 + LIMIT) else "FAIL"
    print(f"hooks-off: {name}: {on:.1f} insn/op with the hooks off, {off:.1f} compiled out "
          f"({(on / off - 1) * 100:+.2f}%, limit {LIMIT * 100:.0f}%): {verdict}")
    if verdict != "ok":
        return f"{on:.1f} insn/op off against {off:.1f} compiled out"
    return None


if __name__ == "__main__":
    sys.exit(main())
