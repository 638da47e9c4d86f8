#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench's scheduling-latency section: goro's /sched/latencies:seconds
beside Go's own, on the same workloads, under the same QEMU TCG.

goro:  app=schedlat metrics=1 (apps/schedlat.c) under QEMU TCG at each
       vCPU count (tools/bench/bench.py boots it), and once more on one vCPU with
       -icount shift=0, whose guest clock follows the instruction count:
       deterministic figures, independent of the host's load.
Go:    tools/bench/schedlat_go/main.go, the same workloads and parameters, built
       with Debian's go and run in tools/bench/bench.py's Linux guest
       (tools/bench/peer_guest.py's initramfs and QEMU command line) under the
       same TCG, -cpu max and vCPUs; natively too, pinned to as many CPUs.

Both print `BENCH schedlat_NAME impl=... procs=P reps=R count=C p50_us=X
p99_us=Y` (goro adds schedules= and mean_us=), quantiles interpolated
inside the histogram bucket that holds them. Under TCG both are wall-clock
figures of a shared host: noise. Go 1.19 samples one transition to running
in eight per goroutine (gTrackingPeriod), goro every one.

Outputs: $BUILD/bench/schedlat-go-{tcg,native}-V.txt (the goro logs are
tools/bench/bench.py's goro-tcg-V-schedlat.log and goro-tcg-1-icount-schedlat.log).

    tools/bench/bench.py --only schedlat        # this section alone (make bench runs it too)
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import gobench, peer_guest  # noqa: E402
from tools.run import qemu  # noqa: E402

WORKLOADS = ("pool", "pingpong", "yield")
# app=schedlat's and the Go program's arguments: both run each workload
# reps times in one window; a few seconds of TCG per configuration.
REPS = 3
GORO_ARGS = f"metrics=1 reps={REPS}"
ICOUNT = ["-icount", "shift=0"]


def log(msg):
    print(f"schedlat: {msg}", file=sys.stderr, flush=True)


def build_go(build):
    """go build of tools/bench/schedlat_go into $BUILD/bench/schedlat/schedlat."""
    out = os.path.abspath(os.path.join(build, "bench", "schedlat", "schedlat"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["nice", "-n", "10", "go", "build", "-trimpath", "-o", out, "."],
                   cwd=os.path.join(ROOT, "tools", "bench", "schedlat_go"), env=gobench.go_env(build), check=True)
    return out


def run_go_tcg(build, binary, cpus, timeout):
    """The Go side in the Linux guest; returns the result file."""
    pg = peer_guest
    outdir = os.path.join(build, "bench")
    c = pg.busybox_cpio(extra_dirs=("schedlat",))
    with open(binary, "rb") as f:
        c.file("schedlat/schedlat", f.read())
    c.file("init", pg.guest_init(f"/schedlat/schedlat -reps={REPS} 2>&1", "schedlat").encode())
    initrd = os.path.join(outdir, f"schedlat-go-tcg-{cpus}.cpio")
    with open(initrd, "wb") as f:
        f.write(c.bytes())
    status, console, _, secs = qemu.run(pg.guest_argv(cpus, initrd), timeout)
    console = console.replace("\r", "")
    ok = status == 0 and "schedlat: ok" in console
    log(f"Go, TCG, {cpus} vCPU: qemu {qemu.describe_status(status)} after {secs:.0f}s{'' if ok else ' (INCOMPLETE)'}")
    return write(outdir, f"tcg-{cpus}", [qemu.host_line("tcg", cpus)] + console.split("\n"))


def run_go_native(build, binary, cpus, timeout):
    avail = sorted(os.sched_getaffinity(0))
    if cpus > len(avail):
        log(f"native: only {len(avail)} CPUs, not {cpus}")
        return None
    p = subprocess.run(["timeout", str(timeout), binary, f"-reps={REPS}"], capture_output=True, text=True,
                       preexec_fn=lambda: os.sched_setaffinity(0, avail[:cpus]))
    return write(os.path.join(build, "bench"), f"native-{cpus}",
                 [qemu.host_line("native", cpus)] + p.stdout.split("\n"))


def write(outdir, tag, lines):
    path = os.path.join(outdir, f"schedlat-go-{tag}.txt")
    keep = [l for l in lines if l.startswith(("HOST ", "BENCH schedlat_", "schedlat: "))]
    with open(path, "w") as f:
        f.write("\n".join(keep) + "\n")
    return path


def run_go(build, cpus_list, timeout):
    binary = build_go(build)
    for cpus in cpus_list:
        run_go_tcg(build, binary, cpus, timeout)
        run_go_native(build, binary, cpus, timeout)


# ---- the table ------------------------------------------------------------------


def records(run):
    """{workload: BENCH record} of one parsed run (tools/bench/bench.py's parse_lines)."""
    return {r["name"][len("schedlat_"):]: r for r in (run or {}).get("bench", [])
            if r["name"].startswith("schedlat_")}


def table(goro, go_tcg, go_native, icount):
    """Rows: workload and vCPUs, goro (TCG), Go (TCG), Go (native), goro
    (icount, 1 vCPU), each {p50_us, p99_us, count}. goro, go_*: {vCPUs: run}."""
    rows = []
    for cpus in sorted(goro):
        g, o, n = records(goro[cpus]), records(go_tcg.get(cpus)), records(go_native.get(cpus))
        ic = records(icount) if cpus == 1 else {}
        for w in WORKLOADS:
            if w not in g and w not in o:
                continue
            rows.append({"workload": w, "vcpus": cpus, "goro": pick(g.get(w)), "go": pick(o.get(w)),
                         "go_native": pick(n.get(w)), "goro_icount": pick(ic.get(w))})
    return rows


def pick(rec):
    if not rec:
        return None
    return {k: rec.get(k) for k in ("p50_us", "p99_us", "count", "schedules", "mean_us") if k in rec}


def print_table(rows, out):
    if not rows:
        return
    out.write("\nScheduling latency, runnable to running (/sched/latencies:seconds): goro's metrics=1 "
              "(app=schedlat) and Go 1.19's runtime/metrics (tools/bench/schedlat_go) on the same workloads, QEMU TCG, "
              "same -cpu max and vCPUs; p50 / p99 in us (samples; Go samples one in 8); wall-clock figures "
              "of a shared host under TCG: noise. icount: goro on 1 vCPU under -icount shift=0 "
              "(deterministic):\n\n")
    hdr = ["workload", "vCPUs", "goro (TCG)", "Go (TCG)", "Go (native)", "goro (icount)"]
    out.write("| " + " | ".join(hdr) + " |\n|" + " --- |" * len(hdr) + "\n")
    for r in rows:
        cells = [r["workload"], str(r["vcpus"])] + [cell(r[k]) for k in ("goro", "go", "go_native", "goro_icount")]
        out.write("| " + " | ".join(cells) + " |\n")


def cell(f):
    if not f or f.get("p50_us") is None:
        return "-"
    return f"{f['p50_us']:.2f} / {f['p99_us']:.1f} ({f['count']})"


# ---- the check (tests/matrix.py) ---------------------------------------------------------


def check(lines):
    """app=schedlat's output parses: a BENCH line per workload with its
    fields, latency samples equal to schedules (goro samples every start),
    the closing ok. [] when fine; no time is checked."""
    problems, seen = [], set()
    for line in lines:
        if not line.startswith("BENCH schedlat_"):
            continue
        words = line.split()
        name = words[1][len("schedlat_"):]
        kv = dict(w.split("=", 1) for w in words[2:] if "=" in w)
        missing = [k for k in ("impl", "procs", "reps", "count", "schedules", "p50_us", "p99_us", "mean_us")
                   if k not in kv]
        if missing:
            problems.append(f"schedlat: {name}: no {', '.join(missing)}")
            continue
        try:
            count, schedules = int(kv["count"]), int(kv["schedules"])
            p50, p99 = float(kv["p50_us"]), float(kv["p99_us"])
        except ValueError:
            problems.append(f"schedlat: {name}: a field does not parse: {line}")
            continue
        if count != schedules:
            problems.append(f"schedlat: {name}: {count} latency samples, {schedules} schedules")
        if count == 0 or not 0 <= p50 <= p99:
            problems.append(f"schedlat: {name}: count {count}, p50 {p50}, p99 {p99}")
        seen.add(name)
    if seen != set(WORKLOADS):
        problems.append(f"schedlat: workloads {sorted(seen)}, want {sorted(WORKLOADS)}")
    if "schedlat: ok" not in [l.strip() for l in lines]:
        problems.append("schedlat: no 'schedlat: ok'")
    return problems
