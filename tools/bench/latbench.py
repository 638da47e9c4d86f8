#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Latency under load: goro's app=latency and its Go peer, same QEMU TCG run.

Three workloads (apps/latency.c says what each measures):
  timers  golang/go#38860: sleepers at 1, 10 and 100 ms among gomaxprocs
          CPU-bound goroutines; how late each wake-up runs.
  wakeup  schbench: message goroutines wake workers over channels; the
          time from the send to the worker running.
  open    Skyloft (SOSP'24): Poisson arrivals of 99.5% 4 us and 0.5% 10 ms
          requests, one goroutine each; the short requests' arrival to
          completion, at offered loads given in percent of gomaxprocs /
          the mean service time (53.98 us).

Per vCPU count (1, 2), under QEMU TCG, -cpu max, -m 1G:
  goro     app=latency wl=timers,wakeup,open (the default 10 ms quantum)
  goro     quantum=30us app=latency wl=open (Skyloft's quantum)
  Go       tools/bench/latency_go (Debian's go, built here at bench time) in the
           Linux guest (tools/bench/linux_guest.py); Go's time slice is its fixed
           10 ms, it has no quantum to set.
and goro once more on 1 vCPU under -icount shift=0,sleep=off (all three,
1 s each; --no-icount skips it): the guest's clock counts instructions
(1 ns each), so those rows do not move with the host's load; they are
instruction time, not wall time: compare them with each other.

Prints the tables, writes $BUILD/bench/latency.json and each run's console
as $BUILD/bench/latency-<run>.log. Under TCG on a shared host, wall-clock
tails (p99.9, max) are decided as much by the host's scheduling of QEMU's
threads as by the guest's: the load average is recorded beside each run.

Examples:
    tools/bench/latbench.py                          # what make bench runs
    tools/bench/latbench.py --cpus 1 --no-go
    tools/bench/latbench.py --report-only
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import gobench, peer_guest  # noqa: E402
from tools.run import qemu  # noqa: E402

LAT_RE = re.compile(r"^(LATCONFIG|LAT|LATDONE) (.*)$")
WORKLOADS = ("timers", "wakeup", "open")


def log(msg):
    print(f"latbench: {msg}", file=sys.stderr, flush=True)


def parse(text):
    """([LAT records as dicts], {LATCONFIG fields}, done) of a console log."""
    recs, config, done = [], {}, False
    for raw in text.replace("\r", "").split("\n"):
        m = LAT_RE.match(raw.strip())
        if not m:
            continue
        kv = dict(w.split("=", 1) for w in m.group(2).split() if "=" in w)
        for k, v in kv.items():
            if re.fullmatch(r"\d+", v):
                kv[k] = int(v)
        if m.group(1) == "LATCONFIG":
            config = kv
        elif m.group(1) == "LAT":
            recs.append(kv)
        else:
            done = True
    return recs, config, done


# ---- the runs ------------------------------------------------------------------


def goro_runs(opts, cpus):
    """(label, kernel command line, extra QEMU options) of goro's boots."""
    ms = f" ms={opts.ms}" if opts.ms else ""
    loads = f" loads={opts.loads}"
    runs = [("goro", f"app=latency wl=timers,wakeup,open{ms}{loads}", []),
            ("goro-q30us", f"quantum=30us app=latency wl=open{ms}{loads}", [])]
    if opts.icount and cpus == 1:
        # 1 s a case, about 4 s of this host's time for all three:
        # sleep=off makes the clock jump to the next deadline when the vCPU
        # idles, so every figure repeats to the last digit.
        runs.append(("goro-icount", f"app=latency wl=timers,wakeup,open ms={opts.icount_ms}{loads}",
                     ["-icount", "shift=0,sleep=off"]))
    return runs


def run_goro(opts, cpus, label, cmdline, extra):
    cmd = qemu.argv(cpus, "1G", extra=extra) + qemu.kernel_boot(opts.elf, cmdline)
    load = qemu.loadavg()
    status, out, _, secs = qemu.run(cmd, opts.timeout)
    tag = f"{label}-tcg-{cpus}"
    with open(os.path.join(opts.outdir, f"latency-{tag}.log"), "w") as f:
        f.write(out)
    log(f"{tag}: {cmdline}: qemu {qemu.describe_status(status)} after {secs:.0f}s")
    return record(tag, label, cpus, cmdline, out, load, secs, status == qemu.EXIT_OK)


def record(tag, label, cpus, command, out, load, secs, ok):
    recs, config, done = parse(out)
    return {"tag": tag, "label": label, "vcpus": cpus, "command": command, "config": config,
            "loadavg": load, "seconds": round(secs, 1), "ok": ok and done, "lat": recs,
            "problems": check_lines(out.split("\n"))}


def build_go(opts):
    """tools/bench/latency_go with Debian's go into $BUILD/bench/latency (kept while newer
    than its sources and the toolchain)."""
    env = gobench.go_env(opts.build)
    gobin = subprocess.run(["sh", "-c", "command -v go"], capture_output=True, text=True).stdout.strip()
    if not gobin:
        sys.exit("latbench: no go on PATH: run make deps-bench (golang-go)")
    stamp = os.path.getmtime(os.path.realpath(gobin))
    src = os.path.join(ROOT, "tools", "bench", "latency_go")
    out = os.path.abspath(os.path.join(opts.outdir, "latency", "latency-go"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    newest = max([stamp] + [os.path.getmtime(os.path.join(src, f)) for f in os.listdir(src)])
    if not os.path.exists(out) or os.path.getmtime(out) < newest:
        subprocess.run(["nice", "-n", "10", "go", "build", "-o", out, "."], cwd=src, env=env, check=True)
    ver = subprocess.run(["go", "version"], capture_output=True, text=True, env=env).stdout.strip()
    return out, ver


def run_go(opts, cpus, binary, gover):
    ms = f" -ms {opts.ms}" if opts.ms else ""
    args = f"-wl timers,wakeup,open{ms} -loads {shlex.quote(opts.loads)}"
    pg = peer_guest
    c = pg.busybox_cpio(extra_dirs=("lat",))
    with open(binary, "rb") as f:
        c.file("lat/latency-go", f.read())
    c.file("init", pg.guest_init(f"/lat/latency-go {args} 2>&1", "latency").encode())
    tag = f"go-tcg-{cpus}"
    initrd = os.path.join(opts.outdir, f"latency-{tag}.cpio")
    with open(initrd, "wb") as f:
        f.write(c.bytes())
    load = qemu.loadavg()
    status, out, _, secs = qemu.run(pg.guest_argv(cpus, initrd), opts.go_timeout)
    out = out.replace("\r", "")
    with open(os.path.join(opts.outdir, f"latency-{tag}.log"), "w") as f:
        f.write(out)
    log(f"{tag}: latency-go {args}: qemu {qemu.describe_status(status)} after {secs:.0f}s")
    rec = record(tag, "go", cpus, f"latency-go {args} ({gover}, Linux guest)", out, load, secs, status == 0)
    os.unlink(initrd)
    return rec


def run_all(opts):
    """Runs every row; returns and saves the results (latency.json)."""
    os.makedirs(opts.outdir, exist_ok=True)
    binary, gover = (None, None) if opts.no_go else build_go(opts)
    runs, t0 = [], time.time()
    for cpus in opts.cpus:
        if not opts.no_goro:
            for label, cmdline, extra in goro_runs(opts, cpus):
                runs.append(run_goro(opts, cpus, label, cmdline, extra))
        if not opts.no_go:
            runs.append(run_go(opts, cpus, binary, gover))
    res = {"machine": f"{os.cpu_count()} host CPUs, qemu {qemu.version()}, -accel tcg -cpu max -m 1G",
           "date": time.strftime("%Y-%m-%d %H:%M"), "seconds": round(time.time() - t0, 1), "runs": runs}
    with open(os.path.join(opts.outdir, "latency.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


# ---- the tables ----------------------------------------------------------------------


def us(ns):
    if ns is None:
        return "-"
    return f"{ns / 1000:.0f}" if ns >= 100000 else f"{ns / 1000:.1f}"


def find(runs, label, cpus, wl, case):
    for r in runs:
        if r["label"] == label and r["vcpus"] == cpus:
            for rec in r["lat"]:
                if rec.get("wl") == wl and str(rec.get("case")) == case:
                    return rec
    return None


def cases(runs, wl):
    out = []
    for r in runs:
        for rec in r["lat"]:
            if rec.get("wl") == wl and str(rec["case"]) not in out:
                out.append(str(rec["case"]))
    return out


def dist_cells(rec, keys=("p50_ns", "p99_ns", "p999_ns", "max_ns")):
    if not rec:
        return ["-"] * (len(keys) + 1)
    return [str(rec.get("n", 0))] + [us(rec.get(k)) for k in keys]


def print_report(res, out=sys.stdout):
    runs = res["runs"]
    labels = [l for l in ("goro", "go", "goro-icount") if any(r["label"] == l for r in runs)]
    cpus_list = sorted({r["vcpus"] for r in runs})
    out.write(f"\nLatency under load (tools/bench/latbench.py; {res['machine']}; {res['date']}); times in us, "
              "wall clock of the guest; n = samples:\n")
    for r in runs:
        la = " ".join(r["loadavg"][:1])
        out.write(f"  {r['tag']}: {r['command']}; host load {la} at start, {r['seconds']}s"
                  f"{'' if r['ok'] else ' (INCOMPLETE)'}\n")
    for wl, title in (("timers", "timer lateness among CPU-bound goroutines (golang/go#38860), quantum 10 ms"),
                      ("wakeup", "wake-up latency, schbench-style (2 messages x 4 workers, 50 us work)")):
        out.write(f"\n{title}:\n")
        head = f"{'vCPU':>4} {'case':>6} {'side':>11} {'n':>6} {'p50':>8} {'p99':>8} {'p99.9':>8} {'max':>8}\n"
        out.write(head)
        for cpus in cpus_list:
            for case in cases(runs, wl):
                for label in labels:
                    rec = find(runs, label, cpus, wl, case)
                    if rec:
                        out.write(f"{cpus:>4} {case:>6} {label:>11} " +
                                  " ".join(f"{c:>{6 if i == 0 else 8}}" for i, c in enumerate(dist_cells(rec))) + "\n")
    out.write("\nopen loop after Skyloft: short (4 us) requests' arrival to completion, p99 / p99.9; "
              "achieved = completed per second / offered:\n")
    sides = [("goro-q30us", "goro q=30us"), ("goro", "goro q=10ms"), ("go", "Go (10 ms)"),
             ("goro-icount", "goro q=10ms, icount")]
    sides = [s for s in sides if any(r["label"] == s[0] for r in runs)]
    out.write(f"{'vCPU':>4} {'load':>5} " + " ".join(f"{t:>26}" for _, t in sides) + "\n")
    for cpus in cpus_list:
        for case in cases(runs, "open"):
            cells = []
            for label, _ in sides:
                rec = find(runs, label, cpus, "open", case)
                if not rec or not rec.get("n"):
                    cells.append("-")
                    continue
                ach = rec["achieved_per_s"] / max(rec["rate_per_s"], 1)
                cells.append(f"{us(rec['p99_ns'])} / {us(rec['p999_ns'])} ({ach:.2f})")
            if any(c != "-" for c in cells):
                out.write(f"{cpus:>4} {case[4:] + '%':>5} " + " ".join(f"{c:>26}" for c in cells) + "\n")


def check_lines(lines, ms=None):
    """Problems in one app=latency (or latency-go) output, [] when sane: the
    counts and orders each workload must show, no wall-clock bounds. ms: the
    run's ms=, which bounds the timers' and wakeup's sample counts."""
    recs, config, done = parse("\n".join(lines))
    bad = [] if config else ["no LATCONFIG line"]
    if not done:
        bad.append("no LATDONE line")
    by = {}
    for r in recs:
        by.setdefault(r.get("wl"), []).append(r)
        name = f"{r.get('wl')} {r.get('case')}"
        if not r.get("n"):
            bad.append(f"{name}: no samples")
            continue
        qs = [r.get(k) for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns")]
        if None in qs or qs != sorted(qs):
            bad.append(f"{name}: percentiles out of order: {qs}")
        if r.get("wl") == "timers" and ms:
            period = {"1ms": 1, "10ms": 10, "100ms": 100}.get(str(r.get("case")))
            if not period or r["n"] > r["sleepers"] * (ms // period + 2):
                bad.append(f"{name}: {r['n']} samples, more than {r.get('sleepers')} sleepers can give")
        if r.get("wl") == "open" and r["n"] + r.get("long", 0) != r.get("sent"):
            bad.append(f"{name}: {r['n']} short + {r.get('long')} long != {r.get('sent')} sent (a request lost)")
    if len(by.get("timers", [])) not in (0, 3):
        bad.append(f"{len(by['timers'])} timers cases, not 3")
    return bad


def check(res):
    """Complaints about the runs: incomplete ones, and check_lines' findings."""
    bad = []
    for r in res["runs"]:
        if not r["ok"]:
            bad.append(f"{r['tag']}: incomplete")
        bad += [f"{r['tag']}: {p}" for p in r.get("problems", [])]
    return bad


# ---- options --------------------------------------------------------------------------


def add_args(ap):
    ap.add_argument("--lat-ms", dest="ms", type=int, default=0,
                    help="milliseconds per case (default the app's: 2000, and 1000 per load point)")
    ap.add_argument("--lat-loads", dest="loads", default="10,30,50,80",
                    help="offered loads of the open loop, percent (default 10,30,50,80)")
    ap.add_argument("--no-icount", dest="icount", action="store_false",
                    help="skip goro's deterministic rows (1 vCPU, -icount shift=0)")
    ap.add_argument("--icount-ms", type=int, default=1000, help="ms of each -icount case (default 1000)")


def finish_opts(opts):
    opts.outdir = os.path.join(opts.build, "bench")
    opts.elf = opts.elf or os.path.join(opts.build, "goro.elf")
    if isinstance(opts.cpus, str):
        opts.cpus = [int(c) for c in opts.cpus.split(",") if c]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--elf", default="")
    ap.add_argument("--cpus", default="1,2")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per goro boot")
    ap.add_argument("--go-timeout", type=int, default=600, help="seconds per Go guest boot")
    ap.add_argument("--no-goro", action="store_true")
    ap.add_argument("--no-go", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="re-print the last latency.json")
    add_args(ap)
    opts = ap.parse_args()
    finish_opts(opts)
    if opts.report_only:
        res = json.load(open(os.path.join(opts.outdir, "latency.json")))
    else:
        res = run_all(opts)
    print_report(res)
    bad = check(res)
    for b in bad:
        log(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
