#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""QEMU's side of the APs' start, counted: uprobes on QEMU's own functions
while goro boots under TCG, then per AP, from its INIT to its check-in
and halt, how often it took QEMU's global lock (and where), how many
blocks it translated, how often it flushed its jump cache, and how many
guest pages it marked as code (each a walk of every vCPU's TLB). Counts do
not move with the host's load, so a change to the APs' path can be
compared by them where wall time is noise (docs/boot.md, "QEMU's side of
an AP" and "QEMU's global lock, per AP").

    tools/bench/boot_qemu_probe.py [--smp N] [--boots K] [--append CMDLINE] ELF

Needs root (uprobes), perf (Debian's linux-perf) and a QEMU that keeps
its dynamic symbols (Debian's does). The probes are added for the run and
removed after it. An AP's window ends at its first halt after its
STARTUP (or, failing that, at its first pause of more than --gap-ms in
its own events). The counts are QEMU 7.2's (the lock's call sites
are its file:line); another QEMU may name them differently.

Python 3 standard library, perf and QEMU.
"""

import argparse
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.run import qemu  # noqa: E402

GROUP = "goro_probe"
# name -> perf probe spec (the function, and the arguments to record)
PROBES = {
    "lock": "qemu_mutex_lock_iothread_impl file=+0(%di):string line=%si:s32",
    "init": "do_cpu_init",
    "sipi": "do_cpu_sipi",
    "translate": "tb_gen_code",
    "jmp_flush": "tcg_flush_jmp_cache",
    "protect": "tlb_protect_code",
}
EVENT_RE = re.compile(r"^\s*(.+?)\s+(\d+)\s+([\d.]+):\s+" + GROUP
                      + r":(\w+):\s*\([0-9a-f]+\)\s*(.*)$")
LOCK_ARGS_RE = re.compile(r'file="(?:\.\./)*([^"]+)" line=(\d+)')


def parse(lines):
    """perf script lines (-F comm,tid,time,event,trace) -> events
    (time, comm, tid, probe, args).

    >>> parse(['  CPU 3/TCG  4242 [001] 10.5: goro_probe:lock: (55d0) file="../../accel/tcg/cpu-exec.c" line=763'])
    []
    >>> parse(['  CPU 3/TCG  4242 10.5: goro_probe:lock: (55d0) file="../../accel/tcg/cpu-exec.c" line=763'])
    [(10.5, 'CPU 3/TCG', 4242, 'lock', 'file="../../accel/tcg/cpu-exec.c" line=763')]
    """
    out = []
    for line in lines:
        m = EVENT_RE.match(line)
        if m:
            comm, tid, t, probe, args = m.groups()
            out.append((float(t), comm, int(tid), probe, args.strip()))
    return out


def site(args):
    """A lock event's call site, file:line.

    >>> site('file="../../accel/tcg/tcg-accel-ops-mttcg.c" line=96')
    'tcg-accel-ops-mttcg.c:96'
    """
    m = LOCK_ARGS_RE.search(args)
    return f"{os.path.basename(m.group(1))}:{m.group(2)}" if m else "?"


def count_key(probe, args):
    """What an event counts as: a lock by its call site, else its probe."""
    return "lock " + site(args) if probe == "lock" else probe


def analyze(events, smp, gap_s=0.002):
    """Per-AP counts over each AP's window, the APs being the threads of the
    last smp - 1 STARTUPs (the firmware started them once before). QEMU
    handles an AP's INIT only once its STARTUP has arrived, both with the
    global lock held, so a window opens at the lock taken for its last INIT
    before that STARTUP, and closes at its first halt after it: the re-lock
    of QEMU's vCPU loop (tcg-accel-ops-mttcg.c), counted; or, failing that,
    at its first pause longer than gap_s. Returns (per_ap: {tid: Counter},
    first_tid, window_start, window_end).

    >>> L = lambda f, n: f'file="../../accel/tcg/{f}" line={n}'
    >>> ev = [(0.0, 'CPU 1/TCG', 11, 'sipi', ''),
    ...       (1.0, 'CPU 1/TCG', 11, 'lock', L('cpu-exec.c', 763)), (1.0, 'CPU 1/TCG', 11, 'init', ''),
    ...       (1.1, 'CPU 1/TCG', 11, 'lock', L('tcg-accel-ops-mttcg.c', 96)),
    ...       (1.2, 'CPU 1/TCG', 11, 'lock', L('cpu-exec.c', 763)), (1.2, 'CPU 1/TCG', 11, 'sipi', ''),
    ...       (1.3, 'CPU 1/TCG', 11, 'translate', ''),
    ...       (1.4, 'CPU 1/TCG', 11, 'lock', L('tcg-accel-ops-mttcg.c', 96)),
    ...       (9.0, 'CPU 1/TCG', 11, 'lock', L('cpu-exec.c', 763))]
    >>> per_ap, first, start, end = analyze(ev, 2)
    >>> sorted(per_ap[11].items()), first, start, end
    ([('init', 1), ('lock cpu-exec.c:763', 2), ('lock tcg-accel-ops-mttcg.c:96', 2), ('sipi', 1), ('translate', 1)], 11, 1.0, 1.4)
    """
    sipis = [e for e in events if e[3] == "sipi"]
    if len(sipis) < smp - 1 or smp < 2:
        raise ValueError(f"{len(sipis)} STARTUPs seen, {smp - 1} APs expected: did the boot start them?")
    mine = sipis[-(smp - 1):]
    by_tid = collections.defaultdict(list)
    for e in events:
        by_tid[e[2]].append(e)
    per_ap, start, end = {}, None, 0.0
    for t_sipi, _, tid, _, _ in mine:
        evs = by_tid[tid]
        k_sipi = max(i for i, e in enumerate(evs) if e[3] == "sipi" and e[0] == t_sipi)
        k0 = max((i for i in range(k_sipi) if evs[i][3] == "init"), default=k_sipi)
        if k0 > 0 and evs[k0 - 1][3] == "lock":
            k0 -= 1                 # the lock QEMU took to handle the INIT
        k1 = next((i for i in range(k_sipi + 1, len(evs)) if evs[i][3] == "lock" and
                   site(evs[i][4]).startswith("tcg-accel-ops-mttcg.c")), None)   # halted: the loop re-locks
        if k1 is None:
            k1 = k_sipi
            while k1 + 1 < len(evs) and evs[k1 + 1][0] - evs[k1][0] <= gap_s:
                k1 += 1
        per_ap[tid] = collections.Counter(count_key(e[3], e[4]) for e in evs[k0:k1 + 1])
        start = evs[k0][0] if start is None else min(start, evs[k0][0])
        end = max(end, evs[k1][0])
    return per_ap, mine[0][2], start, end


def boot_core_counts(events, start, end):
    """The boot core's (CPU 0's) counts from the first AP's INIT handling
    to the last AP's halt."""
    c = collections.Counter()
    for t, comm, _, probe, args in events:
        if comm == "CPU 0/TCG" and start <= t <= end and probe != "sipi":
            c[count_key(probe, args)] += 1
    return c


def perf_probe(args):
    return subprocess.run(["perf", "probe", "-q"] + args, capture_output=True, text=True)


def add_probes(qemu_path):
    """Adds what this QEMU has; returns the names added."""
    perf_probe(["-d", f"{GROUP}:*"])
    added = []
    for name, spec in PROBES.items():
        r = perf_probe(["-x", qemu_path, f"{GROUP}:{name}={spec}"])
        if r.returncode == 0:
            added.append(name)
        else:
            print(f"boot-qemu-probe: no probe {name} ({spec.split()[0]}): {r.stderr.strip()[:200]}", file=sys.stderr)
    return added


def run_boot(elf, smp, append, added, tmp, i):
    data = os.path.join(tmp, f"boot{i}.data")
    cmd = ["perf", "record", "-q", "-k", "mono", "-o", data]
    for name in added:
        cmd += ["-e", f"{GROUP}:{name}"]
    cmd += ["--"] + qemu.argv(smp, "512M", extra=["-name", "goro,debug-threads=on", "-net", "none"]) + \
        qemu.kernel_boot(elf, append)
    serial = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,time,event,trace"],
                            capture_output=True, text=True).stdout
    os.remove(data)
    m = re.search(r"smp: (\d+) of (\d+) cores online", serial)
    return parse(script.splitlines()), m.group(0) if m else "no 'smp:' line"


def spread(xs):
    xs = sorted(xs)
    return f"{statistics.median(xs):g} [{xs[0]}-{xs[-1]}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("elf")
    ap.add_argument("--smp", type=int, default=64, help="vCPUs (default 64)")
    ap.add_argument("--boots", type=int, default=1, help="boots, each counted (default 1)")
    ap.add_argument("--append", default="app=hello", help="command line (default app=hello)")
    ap.add_argument("--gap-ms", type=float, default=2.0, help="an AP's window ends at a pause this long (default 2)")
    opts = ap.parse_args()
    if opts.smp < 2:
        sys.exit("boot-qemu-probe: --smp must be 2 or more: it counts the APs")
    if os.geteuid() != 0:
        sys.exit("boot-qemu-probe: uprobes need root")
    if not shutil.which("perf"):
        sys.exit("boot-qemu-probe: no perf: apt-get install linux-perf")
    qemu_path = shutil.which(qemu.QEMU)
    if not qemu_path:
        sys.exit(f"boot-qemu-probe: no {qemu.QEMU}")
    added = add_probes(qemu_path)
    if "sipi" not in added:
        perf_probe(["-d", f"{GROUP}:*"])
        sys.exit("boot-qemu-probe: QEMU's do_cpu_sipi cannot be probed: the APs' windows start there")
    qemu.thp()              # as every other tool starts QEMU (perf passes the flag on)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(opts.boots):
                events, online = run_boot(opts.elf, opts.smp, opts.append, added, tmp, i)
                per_ap, first, start, end = analyze(events, opts.smp, opts.gap_ms / 1000)
                keys = sorted(set().union(*per_ap.values()))
                print(f"boot {i + 1}: {opts.smp} vCPUs, {online}; per AP, its INIT to its halt, median [min-max]:")
                for k in keys:
                    xs = [per_ap[t][k] for t in per_ap]
                    print(f"  {k:36} {spread(xs):>16}  total {sum(xs)}")
                tr = sorted((per_ap[t]["translate"] for t in per_ap if per_ap[t]["translate"]), reverse=True)
                print(f"  translations: {sum(tr)} by {len(tr)} AP(s), {tr[0] if tr else 0} by the one with most"
                      f" (the first started: {per_ap[first]['translate']})")
                boot = boot_core_counts(events, start, end)
                print(f"  the boot core meanwhile ({(end - start) * 1e3:.1f} ms, probes' overhead included): " +
                      (", ".join(f"{k} {v}" for k, v in sorted(boot.items())) or "nothing counted"))
    finally:
        perf_probe(["-d", f"{GROUP}:*"])


if __name__ == "__main__":
    main()
