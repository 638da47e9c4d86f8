#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The insncount plugin counts a known loop exactly.

Boots tests/insncount/guest.S (a multiboot guest: two marked loops of 1000
and 100000 rounds, and a third of 1000 rounds of one atomic of each kind)
under QEMU TCG with the plugin, on 1 and 2 vCPUs, and checks the MARK pairs'
differences (1 + 2*N instructions each, exactly; the third 1 + 7*N with N
atomics of each kind, N PAUSEs and no halts), that the running total only
grows, that the END line counts at least what the marks saw, and that the plugin
chose the API version the QEMU running it supports (its START line:
version 1 for QEMU before 9.0, 3 after). Once more on 1 vCPU with lines=1:
the same counts, and no atomic on a line another vCPU touched (xlines 0:
there is none).

Prints a PASS or FAIL line per vCPU count (the runner's host-test lines;
make test runs this as BUILD/host/test_insncount) and a closing count. A
QEMU that cannot start, hangs or leaves no log is that count's failure.

Usage: check.py PLUGIN GUEST_ELF
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.run import qemu  # noqa: E402

EXPECTED = [1 + 2 * 1000, 1 + 2 * 100000, 1 + 7 * 1000]
# The third pair's counters besides total.
EXPECTED_ATOMICS = {"atomics": 4000, "cmpxchg": 1000, "xadd": 1000, "xchg": 1000, "lockop": 1000, "halts": 0,
                    "pauses": 1000}
LINE_RE = re.compile(r"INSNCOUNT (MARK id=(\d+) vcpu=\d+|END) total=(\d+) user=(\d+) kernel=(\d+)")
FIELD_RE = re.compile(r" ([a-z]+)=(\d+)")
START_RE = re.compile(r"INSNCOUNT START api=(\d+) qemu_api=(\d+)-(\d+) vcpus=(\d+)")


def run(plugin, guest, smp, log, lines=False):
    cmd = [qemu.QEMU, "-accel", "tcg", "-cpu", "max", "-smp", str(smp),
           "-m", "64M", "-display", "none", "-no-reboot", "-serial", "none",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", guest,
           "-plugin", f"{plugin},log={log}" + (",lines=1" if lines else "")]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        return [f"cannot run {cmd[0]}: not installed"]
    except subprocess.TimeoutExpired:
        return ["qemu still running after 600 s: killed"]
    # isa-debug-exit: the guest wrote 0, QEMU exits with 1.
    if p.returncode != 1:
        err = p.stderr.strip().splitlines()
        return [f"qemu exited {p.returncode}: {err[0] if err else 'nothing on stderr'}"]
    try:
        text = open(log).read()
    except OSError as e:
        err = p.stderr.strip().splitlines()
        return [f"no plugin log ({e.strerror})" + (f"; qemu: {err[0]}" if err else "")]
    marks, fields, end, start = [], [], None, None
    for line in text.splitlines():
        start = start or START_RE.match(line)
        m = LINE_RE.match(line)
        if m and m.group(1) == "END":
            end = int(m.group(3))
        elif m:
            marks.append((int(m.group(2)), int(m.group(3))))
            fields.append({k: int(v) for k, v in FIELD_RE.findall(line)})
    errs = []
    if not start:
        errs.append("no INSNCOUNT START line")
    else:
        api, lo, hi, vcpus = map(int, start.groups())
        want = 1 if hi < 3 else 3
        if api != want or not lo <= api <= hi or vcpus != smp:
            errs.append(f"'{start.group(0)}', want api={want} within qemu_api and vcpus={smp}")
    ids = [i for i, _ in marks]
    if ids != [1, 2] * len(EXPECTED):
        errs.append(f"marker ids {ids}, want {[1, 2] * len(EXPECTED)}")
    else:
        got = [marks[k + 1][1] - marks[k][1] for k in range(0, len(marks), 2)]
        if got != EXPECTED:
            errs.append(f"pair counts {got}, want {EXPECTED}")
        want = dict(EXPECTED_ATOMICS, **({"xlines": 0} if lines else {}))
        third = {k: fields[5].get(k, -1) - fields[4].get(k, 0) for k in want}
        if third != want:
            errs.append(f"the atomics loop counted {third}, want {want}")
    totals = [t for _, t in marks]
    if totals != sorted(totals):
        errs.append(f"totals go backwards: {totals}")
    if end is None or (totals and end < totals[-1]):
        errs.append(f"END total {end}, last mark {totals[-1] if totals else None}")
    return errs


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for smp, lines in ((1, False), (2, False), (1, True)):
            try:
                errs = run(argv[1], argv[2], smp, os.path.join(d, f"insn-{smp}-{lines}.log"), lines)
            except Exception as e:  # noqa: BLE001  a broken check is this count's failure
                errs = [f"the check raised {type(e).__name__}: {e}"]
            name = f"counts_loops_exactly_smp{smp}" + ("_lines" if lines else "")
            print(f"PASS {name}" if not errs else f"FAIL {name}: " + "; ".join(errs), flush=True)
            failed += bool(errs)
    print(f"insncount-test: {3 - failed} passed, {failed} failed (pairs of {EXPECTED} instructions and "
          f"the atomics loop's {EXPECTED_ATOMICS['atomics']} atomics, counted exactly on 1 and 2 vCPUs "
          f"and with lines=1; "
          f"QEMU {qemu.version()})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
