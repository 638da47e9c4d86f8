#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The insncount plugin counts a known loop exactly.

Boots tests/insncount/guest.S (a multiboot guest: two marked loops of 1000
and 100000 rounds) under QEMU TCG with the plugin, on 1 and 2 vCPUs, and
checks the MARK pairs' differences (1 + 2*N each, exactly), that the running
total only grows, and that the END line counts at least what the marks saw.

Usage: check.py PLUGIN GUEST_ELF
"""
import os
import re
import subprocess
import sys
import tempfile

EXPECTED = [1 + 2 * 1000, 1 + 2 * 100000]
LINE_RE = re.compile(r"INSNCOUNT (MARK id=(\d+) vcpu=\d+|END) total=(\d+) user=(\d+) kernel=(\d+)")


def run(plugin, guest, smp, log):
    cmd = [os.environ.get("QEMU", "qemu-system-x86_64"), "-accel", "tcg", "-cpu", "max", "-smp", str(smp),
           "-m", "64M", "-display", "none", "-no-reboot", "-serial", "none",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", guest,
           "-plugin", f"{plugin},log={log}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    # isa-debug-exit: the guest wrote 0, QEMU exits with 1.
    if p.returncode != 1:
        return [f"smp={smp}: qemu exited {p.returncode}: {p.stderr.strip()}"]
    marks, end = [], None
    for line in open(log):
        m = LINE_RE.match(line)
        if m and m.group(1) == "END":
            end = int(m.group(3))
        elif m:
            marks.append((int(m.group(2)), int(m.group(3))))
    errs = []
    ids = [i for i, _ in marks]
    if ids != [1, 2, 1, 2]:
        errs.append(f"smp={smp}: marker ids {ids}, want [1, 2, 1, 2]")
    else:
        got = [marks[1][1] - marks[0][1], marks[3][1] - marks[2][1]]
        if got != EXPECTED:
            errs.append(f"smp={smp}: pair counts {got}, want {EXPECTED}")
    totals = [t for _, t in marks]
    if totals != sorted(totals):
        errs.append(f"smp={smp}: totals go backwards: {totals}")
    if end is None or (totals and end < totals[-1]):
        errs.append(f"smp={smp}: END total {end}, last mark {totals[-1] if totals else None}")
    return errs


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    errs = []
    with tempfile.TemporaryDirectory() as d:
        for smp in (1, 2):
            errs += run(argv[1], argv[2], smp, os.path.join(d, f"insn-{smp}.log"))
    for e in errs:
        print(f"insncount-test: FAIL {e}")
    if not errs:
        print(f"insncount-test: ok (pairs of {EXPECTED} instructions counted exactly on 1 and 2 vCPUs)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
