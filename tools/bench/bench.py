#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench: Go's benchmark suite on goro and Go, and goro's own suite.

First Go 1.19's runtime, sync and time benchmarks (tools/bench/gobench.py): goro's
ports (app=gobench) and Go's own test binaries, unmodified, under the same
QEMU TCG (-cpu max, 1 and 2 vCPUs, -m 1G), Go also natively, with insn/op
from the project's insncount plugin; written in Go's benchmark format to
$BUILD/bench/gobench-{goro,go}-{tcg,native}-V.txt. Then goro's own suite:
app=bench, bench_chan, bench_mem and bench_time, once more with 1 vCPU under
the plugin, and the peers of tests/peers (tools/bench/peer_guest.py --quick, reused
while fresh). Then the scheduling-latency section (tools/bench/schedlat.py):
app=schedlat metrics=1 at each vCPU count and under -icount shift=0, and
Go's /sched/latencies:seconds on the same workloads (tools/bench/schedlat_go/) in the
Linux guest and natively. Then latency under load (tools/bench/latbench.py:
app=latency and its Go peer, about two minutes). Prints the Go suite's
comparison table, goro's own table and the latency tables, writes
$BUILD/bench/results.json and
draws plots (PNG and SVG) under $BUILD/bench/plots/. --section NAME runs
and reports one section (results-NAME.json). BENCH_QUICK=1 in the
environment is --quick.

On real hardware goro boots from a USB stick with app=bench... on its
command line and prints the same lines on the serial port; a capture of
those runs gives the same table, JSON and plots:

    tools/bench/bench.py --from-serial serial.log [--peers-dir DIR]

Examples:
    tools/bench/bench.py                        # what make bench runs
    tools/bench/bench.py --quick --no-own       # Go's suite only, a fifth of N
    tools/bench/bench.py --no-peers --cpus 2    # goro only
    tools/bench/bench.py --report-only          # re-read the saved logs
    tools/bench/bench.py --section schedlat     # scheduling latency only (about 30 s)
"""
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import gobench, insncount_report, latbench, schedlat  # noqa: E402
from tools.run import qemu  # noqa: E402

# app=... arguments of the quick runs: about a minute of TCG for all four.
APPS = [
    ("bench", "quick=1"),
    ("bench_chan", "quick=1"),
    ("bench_mem", "reps=5 mb=16"),
    ("bench_time", "quick=1"),
]
# Apps whose measured loops carry insncount markers.
INSN_APPS = [("bench", "quick=1"), ("bench_chan", "quick=1"),
             ("bench_time", "quick=1 filter=sleep_lateness"),
             ("bench_time", "quick=1 filter=timer_latency")]

LINE_RE = re.compile(r"(HOST|GUEST|CONFIG|BENCH|CDF|SKIP|INSN|DONE|NOTE) .*")

def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


# ---- parsing --------------------------------------------------------------------


def kv_of(words):
    """key=value words -> dict; quoted values (cpu="...") rejoined."""
    out, i = {}, 0
    while i < len(words):
        w = words[i]
        if "=" in w:
            k, v = w.split("=", 1)
            if v.startswith('"') and not (len(v) > 1 and v.endswith('"')):
                while i + 1 < len(words) and not words[i].endswith('"'):
                    i += 1
                    v += " " + words[i]
            out[k] = num(v.strip('"'))
        i += 1
    return out


def num(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def parse_lines(text):
    """Result lines of one run -> {config, bench: [...], cdf: [...], insn: [...], skip, host}."""
    run = {"config": {}, "bench": [], "cdf": [], "insn": [], "skip": [], "host": {}, "guest": {}}
    impl = None         # app=bench_mem's lines carry no impl=: the CONFIG's
    for raw in text.replace("\r", "").split("\n"):
        m = LINE_RE.search(raw)
        if not m:
            continue
        words = m.group(0).split()
        kind = words[0]
        if kind in ("CONFIG", "HOST", "GUEST"):
            cfg = kv_of(words[1:])
            key = kind.lower()
            # Peer files hold one CONFIG per peer: keep each impl's.
            if kind == "CONFIG":
                impl = cfg.get("impl", "?")
                run["config"].setdefault(impl, cfg)
            else:
                run[key].update(cfg)
                if kind == "HOST" and "loadavg" in cfg:
                    run.setdefault("loads", []).append(cfg["loadavg"])
        elif kind in ("BENCH", "CDF", "INSN", "SKIP") and len(words) > 1:
            rec = {"name": words[1]}
            if impl:
                rec["impl"] = impl
            rec.update(kv_of(words[2:]))
            if kind == "CDF":
                rec["permille"] = [int(x) for x in str(rec.get("permille", "")).split(",") if x]
                rec["us"] = [float(x) for x in str(rec.get("us", "")).split(",") if x]
            run[kind.lower()].append(rec)
    return run


def merge(into, run):
    for k in ("bench", "cdf", "insn", "skip"):
        into[k] += run[k]
    into.setdefault("loads", []).extend(run.get("loads", []))
    for impl, cfg in run["config"].items():
        into["config"].setdefault(impl, cfg)
    into["host"].update(run["host"])
    into["guest"].update(run["guest"])


def empty_run():
    return {"config": {}, "bench": [], "cdf": [], "insn": [], "skip": [], "host": {}, "guest": {}}


# ---- running goro -----------------------------------------------------------------


def boot(elf, cpus, app, args, outdir, timeout, tag, plugin=None, extra=()):
    cmdline = f"app={app} {args}".strip()
    filt = re.search(r"filter=(\S+)", args)
    logpath = os.path.join(outdir, f"goro-{tag}-{app}{'-' + filt.group(1) if filt else ''}.log")
    insn_log = logpath[:-4] + ".insn.log" if plugin else None
    if insn_log and os.path.exists(insn_log):
        os.unlink(insn_log)
    cmd = qemu.argv(cpus, "1G", extra=extra) + qemu.kernel_boot(elf, cmdline)
    if plugin:
        cmd += qemu.plugin_argv(plugin, insn_log)
    host = qemu.host_line("tcg", cpus)
    status, out, _, secs = qemu.run(cmd, timeout)
    with open(logpath, "w") as f:
        f.write(host + "\n" + out)
    ok = status == qemu.EXIT_OK
    log(f"goro {tag} app={app} {args}: qemu {qemu.describe_status(status)}{'' if ok else ' (FAILED)'} "
        f"after {secs:.0f}s -> {logpath}")
    return logpath, insn_log, ok


def insn_lines_for(text, insn_log):
    """INSN lines from a plugin log and the BENCH lines that marked it."""
    groups = []
    for rec in parse_lines(text)["bench"]:
        if "mark_pairs" in rec and "mark_n" in rec:
            groups.append((rec["name"] + variant_suffix(rec), int(rec["mark_pairs"]), int(rec["mark_n"]),
                           rec.get("impl", "goro")))
    return insncount_report.insn_lines(insn_log, groups, log)


def variant_suffix(rec):
    """Distinguishes lines of one benchmark name (procs=, mode=, size=)."""
    v = variant(rec)
    return f"[{v}]" if v else ""


def variant(rec):
    name = rec["name"]
    if name.startswith("spawn_tree_fib") or name.startswith("quantum_"):
        key = "procs" if name.startswith("spawn_tree") else "quantum_us"
        return f"{key}={rec.get(key)}"
    for key in ("mode", "size", "pages", "from_node"):
        if key in rec:
            v = f"{key}={rec[key]}"
            if key == "from_node":
                v += f",to_node={rec.get('to_node')}"
            return v
    return ""


def run_goro(opts, outdir):
    elf = opts.elf
    results = {}
    for cpus in opts.cpus:
        tag = f"tcg-{cpus}"
        run = empty_run()
        for app, args in APPS:
            path, _, _ = boot(elf, cpus, app, args, outdir, opts.timeout, tag)
            merge(run, parse_lines(open(path, errors="replace").read()))
        results[tag] = run
    if opts.insncount:
        plugin = build_plugin(opts)
        if plugin:
            run = empty_run()
            for app, args in INSN_APPS:
                path, insn_log, ok = boot(elf, 1, app, args, outdir, opts.timeout, "tcg-1-insncount", plugin)
                text = open(path, errors="replace").read()
                lines = insn_lines_for(text, insn_log)
                run["insn"] += parse_lines("\n".join(lines))["insn"]
                with open(path, "a") as f:
                    f.write("\n".join(lines) + "\n")
            results["tcg-1-insncount"] = run
    return results


def build_plugin(opts):
    """The insncount plugin (make insncount), or None."""
    p = subprocess.run(["make", "-s", f"BUILD={os.path.abspath(opts.build)}", "insncount"], cwd=ROOT,
                       stdout=sys.stderr)
    path = os.path.join(opts.build, "insncount", "libinsncount.so")
    if p.returncode != 0 or not os.path.exists(path):
        log("insncount plugin unavailable: no instruction counts")
        return None
    return os.path.abspath(path)


# ---- scheduling latency: goro's metrics beside Go's runtime/metrics ----------------------


def run_schedlat(opts, outdir):
    """app=schedlat at each vCPU count, then on 1 vCPU under -icount
    shift=0; the Go side in the Linux guest and natively (tools/bench/schedlat.py)."""
    for cpus in opts.cpus:
        boot(opts.elf, cpus, "schedlat", schedlat.GORO_ARGS, outdir, opts.timeout, f"tcg-{cpus}")
    boot(opts.elf, 1, "schedlat", schedlat.GORO_ARGS, outdir, opts.timeout, "tcg-1-icount",
         extra=schedlat.ICOUNT)
    if not opts.no_peers:
        schedlat.run_go(opts.build, opts.cpus, opts.timeout)


def read_schedlat(outdir, cpus_list):
    """The section's table rows from the logs in outdir."""
    def run_of(path):
        return parse_lines(open(path, errors="replace").read()) if os.path.exists(path) else None
    goro = {c: run_of(os.path.join(outdir, f"goro-tcg-{c}-schedlat.log")) for c in cpus_list}
    goro = {c: r for c, r in goro.items() if r}
    go_tcg = {c: run_of(os.path.join(outdir, f"schedlat-go-tcg-{c}.txt")) for c in cpus_list}
    go_nat = {c: run_of(os.path.join(outdir, f"schedlat-go-native-{c}.txt")) for c in cpus_list}
    return schedlat.table(goro, go_tcg, go_nat, run_of(os.path.join(outdir, "goro-tcg-1-icount-schedlat.log")))


# ---- peers ----------------------------------------------------------------------------


def peer_files(outdir, cpus):
    files = {f"tcg-{c}": os.path.join(outdir, f"peers-tcg-{c}.txt") for c in cpus}
    files.update({f"native-{c}": os.path.join(outdir, f"peers-native-{c}.txt") for c in cpus})
    return files


def fresh(path, max_age):
    return os.path.exists(path) and time.time() - os.path.getmtime(path) < max_age


def run_peers(opts, outdir):
    env = dict(os.environ, BUILD=opts.build)
    files = peer_files(outdir, opts.cpus)
    stale = [k for k, p in files.items() if not fresh(p, opts.peers_max_age)]
    if stale:
        accels = sorted({k.split("-")[0] for k in stale})
        cpus = sorted({k.split("-")[1] for k in stale})
        cmd = [os.path.join(ROOT, "tools", "bench", "peer_guest.py"), "--quick", "--accel", ",".join(accels),
               "--cpus", ",".join(cpus)]
        log("peers: " + " ".join(cmd))
        if subprocess.run(cmd, env=env).returncode != 0:
            log("peers: peer-guest.py reported a failure; the table shows what it wrote")
    else:
        log(f"peers: reusing results younger than {opts.peers_max_age}s in {outdir}")
    insn = os.path.join(outdir, "peers-tcg-1-insncount.txt")
    if opts.insncount and not fresh(insn, opts.peers_max_age):
        plugin = build_plugin(opts)
        if plugin:
            cmd = [os.path.join(ROOT, "tools", "bench", "peer_guest.py"), "--quick", "--accel", "tcg",
                   "--cpus", "1", "--peers", "pthread", "--insncount", plugin, "--no-build"]
            log("peers: " + " ".join(cmd))
            subprocess.run(cmd, env=env)


def read_peers(outdir, cpus, peers_dir=None):
    d = peers_dir or outdir
    out = {}
    for tag in [f"tcg-{c}" for c in cpus] + [f"native-{c}" for c in cpus] + ["tcg-1-insncount"]:
        p = os.path.join(d, f"peers-{tag}.txt")
        if os.path.exists(p):
            out[tag] = parse_lines(open(p, errors="replace").read())
            out[tag]["file"] = p
    return out


# ---- from a serial capture ---------------------------------------------------------------


def split_serial(text):
    """A capture of several boots: each CONFIG line starts a run; runs are
    grouped by the core count and accel they report."""
    runs, cur = {}, None
    for raw in text.replace("\r", "").split("\n"):
        m = LINE_RE.search(raw)
        if not m:
            continue
        line = m.group(0)
        if line.startswith("CONFIG "):
            cfg = kv_of(line.split()[1:])
            accel = cfg.get("accel", "hw")
            tag = f"{'hw' if accel in ('native',) else accel}-{cfg.get('cores', '?')}"
            cur = runs.setdefault(tag, empty_run())
            merge(cur, parse_lines(line))
        elif cur is not None:
            merge(cur, parse_lines(line))
    return runs


# ---- the table ---------------------------------------------------------------------------------


def find(run, name, impl=None, **match):
    if not run:
        return None
    for rec in run["bench"]:
        if rec["name"] != name or (impl and rec.get("impl") != impl):
            continue
        if all(str(rec.get(k)) == str(v) for k, v in match.items()):
            return rec
    return None


# (label, name, match, metric) where metric picks the figure compared.
ROWS = [
    ("yield_switch", "yield_switch", {}, "ns"),
    ("spawn_exit", "spawn_exit", {}, "ns"),
    ("spawn_tree_fib procs=1", "spawn_tree_fib", {"procs": 1}, "fib"),
    ("spawn_tree_fib procs=2", "spawn_tree_fib", {"procs": 2}, "fib"),
    ("uneven_work", "uneven_work", {}, "uneven"),
    ("wake_latency runnext", "wake_latency", {"mode": "runnext"}, "lat"),
    ("wake_latency runq", "wake_latency", {"mode": "runq"}, "lat"),
    ("raw_ipi_roundtrip", "raw_ipi_roundtrip", {}, "lat"),
    ("timer_latency busy", "timer_latency", {"mode": "busy"}, "lat"),
    ("timer_latency idle", "timer_latency", {"mode": "idle"}, "lat"),
    ("sleep_lateness_1us", "sleep_lateness_1us", {}, "lat"),
    ("sleep_lateness_100us", "sleep_lateness_100us", {}, "lat"),
    ("sleep_lateness_1ms", "sleep_lateness_1ms", {}, "lat"),
    ("ticker_lateness_hogs", "ticker_lateness_hogs", {}, "lat"),
    ("quantum_tradeoff 10ms", "quantum_tradeoff", {"quantum_us": 10000}, "quantum"),
    ("quantum_tradeoff 1ms", "quantum_tradeoff", {"quantum_us": 1000}, "quantum"),
    ("quantum_tradeoff 100us", "quantum_tradeoff", {"quantum_us": 100}, "quantum"),
    ("quantum_tradeoff 50us", "quantum_tradeoff", {"quantum_us": 50}, "quantum"),
    ("chan_sync", "chan_sync", {}, "ns"),
    ("pingpong_1p", "pingpong_1p", {}, "ns"),
    ("pingpong_2p", "pingpong_2p", {}, "ns"),
    ("chan_buffered", "chan_buffered", {}, "ns"),
    ("select_uncontended", "select_uncontended", {}, "ns"),
    ("mutex_uncontended", "mutex_uncontended", {}, "ns"),
    ("mutex_contended", "mutex_contended", {}, "ns"),
    ("malloc_free 64B", "malloc_free", {"size": 64}, "ns"),
    ("malloc_free 4KiB", "malloc_free", {"size": 4096}, "ns"),
    ("page_alloc_free 1p", "page_alloc_free", {"pages": 1}, "ns"),
    ("parked_g_bytes", "parked_g_bytes", {}, "bytes"),
    ("boot_time", "boot_time", {}, "boot"),
]
UNITS = {"ns": "ns/op", "fib": "ms (speedup)", "uneven": "ms (x ideal)", "lat": "p50/p99 us",
         "quantum": "p50/p99 us, hog loss", "bytes": "bytes/G", "boot": "ms"}


def figure(rec, metric):
    """(text, value compared in ratios) of one result."""
    if rec is None:
        return "-", None
    if metric == "ns":
        v = rec.get("ns_per_op")
        return f"{v:.1f} [{rec.get('ns_per_op_min', 0):.0f}-{rec.get('ns_per_op_max', 0):.0f}]", v
    if metric == "fib":
        v, sp = rec.get("ms"), rec.get("speedup")
        return f"{v:.1f} (x{sp:.2f})" if v is not None and sp is not None else "?", v
    if metric == "uneven":
        v = rec.get("makespan_ms")
        return f"{v:.1f} (x{rec.get('ratio', 0):.2f})", v
    if metric == "lat":
        p50, p99 = rec.get("p50_us"), rec.get("p99_us")
        return f"{p50:.1f} / {p99:.0f}", p50
    if metric == "quantum":
        return (f"{rec['sleeper_p50_us']:.0f} / {rec['sleeper_p99_us']:.0f}, "
                f"{rec['hog_loss_pct']:.1f}%"), rec["sleeper_p50_us"]
    if metric == "bytes":
        v = rec.get("bytes_per_g")
        return f"{v:.0f}", v
    if metric == "boot":
        v = rec.get("ms")
        return f"{v:.1f}", v
    return "?", None


def ratio(a, b):
    if a is None or b is None or not b:
        return "-"
    return f"{a / b:.2f}"


def build_table(goro_runs, peers, goro_label):
    """Rows: benchmark, unit, cores, goro, Go, pthread, goro/Go, goro/pthread,
    Go native, pthread native."""
    rows = []
    for label, name, match, metric in ROWS:
        for tag in sorted(goro_runs):
            if tag.endswith("insncount"):
                continue
            cores = tag.split("-")[-1]
            g = find(goro_runs[tag], name, "goro", **match)
            if g is None and name == "pingpong_2p":
                continue
            # same setting: TCG peers beside goro under TCG; on hardware, the
            # peers run natively on that machine (--peers-dir)
            same = peers.get(tag)
            nat = peers.get(f"native-{cores}")
            go_rec = find(same, name, "go", **match)
            pt_rec = find(same, name, "pthread", **match)
            if g is None and go_rec is None and pt_rec is None:
                continue
            gt, gv = figure(g, metric)
            got, gov = figure(go_rec, metric)
            ptt, ptv = figure(pt_rec, metric)
            nt_go, _ = figure(find(nat, name, "go", **match), metric)
            nt_pt, _ = figure(find(nat, name, "pthread", **match), metric)
            rows.append({"benchmark": label, "unit": UNITS[metric], "cores": cores,
                         "goro": gt, "go": got, "pthread": ptt,
                         "goro_go": ratio(gv, gov), "goro_pthread": ratio(gv, ptv),
                         "go_native": nt_go, "pthread_native": nt_pt,
                         "goro_value": gv, "go_value": gov, "pthread_value": ptv})
    return rows


def print_table(rows, goro_label, out):
    hdr = ["benchmark", "unit", "cores", f"goro ({goro_label})", f"Go ({goro_label})",
           f"pthread ({goro_label})", "goro/Go", "goro/pthread", "Go (native)", "pthread (native)"]
    keys = ["benchmark", "unit", "cores", "goro", "go", "pthread", "goro_go", "goro_pthread",
            "go_native", "pthread_native"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + " --- |" * len(hdr)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[k]) for k in keys) + " |")
    out.write("\n".join(lines) + "\n")


def insn_table(goro_runs, peers, out):
    goro_insn = {}
    for rec in goro_runs.get("tcg-1-insncount", {"insn": []})["insn"]:
        goro_insn[rec["name"]] = rec["insn_per_op"]
    pt_insn = {}
    for rec in peers.get("tcg-1-insncount", {"insn": []})["insn"]:
        if rec.get("impl") == "pthread":
            pt_insn[rec["name"]] = rec["insn_per_op"]
    names = list(dict.fromkeys(list(goro_insn) + [n for n in pt_insn if n not in goro_insn]))
    if not names:
        return []
    rows = []
    for n in names:
        base = n.split("[")[0]
        g, pt = goro_insn.get(n), pt_insn.get(base)
        rows.append({"benchmark": n, "goro": g, "pthread": pt, "goro_pthread": ratio(g, pt)})
    out.write("\nInstructions per op, goro's own suite (insncount plugin, TCG, 1 vCPU, all vCPUs "
              "counted; Go's side: the Go suite's table above):\n\n")
    out.write("| benchmark | goro | pthread | goro/pthread |\n|" + " --- |" * 4 + "\n")
    fmt = lambda v: "-" if v is None else f"{v:.0f}"     # noqa: E731
    for r in rows:
        out.write(f"| {r['benchmark']} | {fmt(r['goro'])} | {fmt(r['pthread'])} | {r['goro_pthread']} |\n")
    return rows



# ---- Go's suite: goro's ports against Go's own test binaries ---------------------------

# Go benchmarks whose workload the pthread peer (tests/peers/pthread) also runs.
PTHREAD_OF = {"CreateGoroutines": "spawn_exit", "MutexUncontended": "mutex_uncontended",
              "Mutex": "mutex_contended"}


def spread(vals):
    """{median, min, max, n} of the counts' values, or None."""
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def fmt_spread(sp):
    if not sp:
        return "-"
    return f"{fmt_num(sp['median'])} [{fmt_num(sp['min'])}-{fmt_num(sp['max'])}]"


def fmt_num(v):
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def pthread_figures(peers, cpus):
    """{Go name: (ns/op, insn/op)} of the pthread peer's matching workloads."""
    out = {}
    run, ins = peers.get(f"tcg-{cpus}"), peers.get("tcg-1-insncount") if cpus == 1 else None
    for goname, ptname in PTHREAD_OF.items():
        rec = find(run, ptname, "pthread")
        insn = None
        for r in (ins or {"insn": []})["insn"]:
            if r["name"] == ptname and r.get("impl") == "pthread":
                insn = r["insn_per_op"]
        if rec or insn:
            out[goname] = (rec.get("ns_per_op") if rec else None, insn)
    return out


def gobench_rows(outdir, cpus_list, peers):
    """One row per Go benchmark and vCPU count: goro against Go (TCG),
    medians and spreads over the counts, the ratios, Go native, pthread."""
    rows = []
    for cpus in cpus_list:
        goro = gobench.read_file(os.path.join(outdir, f"gobench-goro-tcg-{cpus}.txt"))
        go = gobench.read_file(os.path.join(outdir, f"gobench-go-tcg-{cpus}.txt"))
        nat = gobench.read_file(os.path.join(outdir, f"gobench-go-native-{cpus}.txt"))
        pt = pthread_figures(peers, cpus)
        floors = gobench.read_floors(outdir, cpus)
        order = [n for e in gobench.suite(False) for n in gobench.result_names(e)]
        for name in dict.fromkeys([n for n in order if n in goro or n in go] + list(goro) + list(go)):
            g, o = goro.get(name, {}), go.get(name, {})
            gs, os_ = spread(g.get("ns")), spread(o.get("ns"))
            gi, oi = spread(g.get("insn")), spread(o.get("insn"))
            overlap = bool(gs and os_ and gs["min"] <= os_["max"] and os_["min"] <= gs["max"])
            pns, pinsn = pt.get(name.split("/")[0], (None, None))
            unit = lambda d, u: (spread(d.get("units", {}).get(u)) or {}).get("median")    # noqa: E731
            counts = {f"{side}_{k}": unit(d, u) for side, d in (("goro", g), ("go", o))
                      for k, u in (("atomics", "atomics/op"), ("halts", "halts/op"), ("ipis", "ipis/op"),
                                   ("kinsn", "kinsn/op"), ("cmpxchg", "cmpxchg/op"), ("xadd", "xadd/op"),
                                   ("xchg", "xchg/op"), ("lockop", "lockop/op"))}
            rows.append({
                "benchmark": name, "vcpus": cpus,
                "goro_ns": gs, "go_ns": os_, "spread_overlap": overlap,
                "goro_go_time": rratio(gs and gs["median"], os_ and os_["median"]),
                "goro_insn": gi and gi["median"], "go_insn": oi and oi["median"],
                "goro_go_insn": rratio(gi and gi["median"], oi and oi["median"]),
                **counts,
                "goro_go_atomics": rratio(counts["goro_atomics"], counts["go_atomics"]),
                "floor_insn": floors.get(name, {}).get("insn"), "floor_atomics": floors.get(name, {}).get("atomics"),
                "goro_floor_insn": rratio(gi and gi["median"], floors.get(name, {}).get("insn")),
                "go_floor_insn": rratio(oi and oi["median"], floors.get(name, {}).get("insn")),
                "go_native_ns": spread(nat.get(name, {}).get("ns")),
                "pthread_ns": pns, "pthread_insn": pinsn,
                "goro_pthread_time": rratio(gs and gs["median"], pns),
                "goro_pthread_insn": rratio(gi and gi["median"], pinsn),
            })
    return rows


def rratio(a, b):
    if a is None or b is None or b <= 0 or a < 0:
        return None
    return a / b


def print_gobench(rows, out):
    if not rows:
        return
    out.write("\nGo's benchmarks: goro (app=gobench) and Go 1.19's own test binaries, QEMU TCG, "
              "same -cpu max and vCPUs; ns/op median [min-max] over the counts; ~: the spreads overlap; "
              "insn/op, atomic read-modify-writes, halts and IPIs per op from tools/insncount, every vCPU "
              "over the measured interval (Go's kernel column: Linux's share of its insn/op):\n\n")
    hdr = ["benchmark", "vCPUs", "goro ns/op", "Go ns/op", "~", "goro/Go time", "goro insn/op",
           "Go insn/op (kernel)", "goro/Go insn", "atomics/op goro/Go", "halts/op goro/Go", "IPIs/op goro/Go",
           "floor insn/op (atomics)", "goro/floor", "Go/floor", "Go native ns/op", "pthread ns/op", "goro/pthread time", "pthread insn/op", "goro/pthread insn"]
    out.write("| " + " | ".join(hdr) + " |\n|" + " --- |" * len(hdr) + "\n")
    r2 = lambda v: "-" if v is None else f"{v:.2f}"     # noqa: E731
    pair = lambda r, k: f"{fmt_num(r.get('goro_' + k))}/{fmt_num(r.get('go_' + k))}"     # noqa: E731
    for r in rows:
        go_insn = fmt_num(r["go_insn"]) + (f" ({fmt_num(r['go_kinsn'])})" if r.get("go_kinsn") is not None else "")
        cells = [r["benchmark"], str(r["vcpus"]), fmt_spread(r["goro_ns"]), fmt_spread(r["go_ns"]),
                 "~" if r["spread_overlap"] else "", r2(r["goro_go_time"]), fmt_num(r["goro_insn"]),
                 go_insn, r2(r["goro_go_insn"]), pair(r, "atomics"), pair(r, "halts"), pair(r, "ipis"),
                 "-" if r.get("floor_insn") is None else f"{fmt_num(r['floor_insn'])} ({fmt_num(r['floor_atomics'])})",
                 r2(r.get("goro_floor_insn")), r2(r.get("go_floor_insn")),
                 fmt_num(r["go_native_ns"] and r["go_native_ns"]["median"]), fmt_num(r["pthread_ns"]),
                 r2(r["goro_pthread_time"]), fmt_num(r["pthread_insn"]), r2(r["goro_pthread_insn"])]
        out.write("| " + " | ".join(cells) + " |\n")
    both = [r for r in rows if r["goro_go_time"] is not None]
    ins = [r for r in rows if r["goro_go_insn"] is not None]
    out.write(f"\n{len({r['benchmark'] for r in both})} benchmarks ran on both sides; "
              f"goro faster in time: {sum(r['goro_go_time'] < 1 and not r['spread_overlap'] for r in both)}"
              f" of {len(both)} rows (slower: {sum(r['goro_go_time'] > 1 and not r['spread_overlap'] for r in both)}, "
              f"spreads overlap: {sum(r['spread_overlap'] for r in both)}); insn/op at most 0.25x Go: "
              f"{sum(r['goro_go_insn'] <= 0.25 for r in ins)} of {len(ins)} rows; with a floor "
              f"(docs/performance.md, *Floors*), within 1.5x of it: "
              f"{sum((r.get('goro_floor_insn') or 9) <= 1.5 for r in ins)} of "
              f"{sum(r.get('goro_floor_insn') is not None for r in ins)}.\n")


def print_known_work(kw, out):
    """The known-work check (gobench.run_known_work): KnownWork's counted
    insn/op against the K instructions its op is, on both sides."""
    if not kw or not kw.get("rows"):
        return
    k, tol = kw["k"], kw["tolerance"]
    out.write(f"\nKnown work: a RunParallel op of exactly K = {k} instructions (KnownWork, both sides), counted "
              f"as every row is; the program's count must read K within {tol:.0%}: goro's whole count, Go's "
              "user-mode count (Go's kernel column: Linux's share, its timer tick and the like, which grows "
              "with the wall time an op takes under TCG):\n\n")
    out.write("| vCPUs | goro insn/op | goro/K | Go insn/op (kernel) | Go user/K | within |\n"
              "| --- | --- | --- | --- | --- | --- |\n")
    for r in kw["rows"]:
        g, o = r.get("goro") or {}, r.get("go") or {}
        ok = [s for s in ("goro", "go") if r.get(f"{s}_ok") is not None]
        out.write(f"| {r['vcpus']} | {fmt_num(g.get('total'))} | "
                  f"{'-' if r.get('goro_ratio') is None else format(r['goro_ratio'], '.3f')} | "
                  f"{fmt_num(o.get('total'))} ({fmt_num(o.get('kernel'))}) | "
                  f"{'-' if r.get('go_ratio') is None else format(r['go_ratio'], '.3f')} | "
                  f"{', '.join(s + (' yes' if r[s + '_ok'] else ' NO') for s in ok) or '-'} |\n")


def plot_gobench(plt, rows):
    """goro/Go per benchmark, time and instructions, one panel per vCPU count."""
    cpus = sorted({r["vcpus"] for r in rows})
    fig, axes = plt.subplots(1, len(cpus), figsize=(7 * len(cpus), 0.22 * max(10, len(rows) // max(1, len(cpus))) + 1.5),
                             squeeze=False)
    names = list(dict.fromkeys(r["benchmark"] for r in rows))
    for ax, c in zip(axes[0], cpus):
        by = {r["benchmark"]: r for r in rows if r["vcpus"] == c}
        ys = range(len(names))
        for key, style, lab in (("goro_go_time", "o", "time"), ("goro_go_insn", "s", "instructions")):
            pts = [(by[n][key], y) for y, n in zip(ys, names) if n in by and by[n][key]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, ms=4, label=lab)
        ax.axvline(1, color="grey", lw=0.8)
        ax.axvline(0.25, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yticks(list(ys))
        ax.set_yticklabels(names, fontsize=6)
        ax.invert_yaxis()
        ax.set_xlabel("goro / Go (log scale; 1: equal, dotted: 0.25)")
        ax.set_title(f"TCG, {c} vCPU{'s' if c > 1 else ''}")
        ax.grid(alpha=0.3, axis="x")
        ax.legend(fontsize=7)
    fig.suptitle("Go's benchmarks: goro against Go 1.19", y=1.0)
    fig.tight_layout()
    return fig


# ---- plots -----------------------------------------------------------------


def plots(goro_runs, peers, plotdir, goro_label, grows=()):
    """Draws the speedup, latency CDF and quantum plots; returns the files."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (make deps-bench installs python3-matplotlib): no plots")
        return []
    os.makedirs(plotdir, exist_ok=True)
    made = []

    def save(fig, stem):
        for ext in ("png", "svg"):
            p = os.path.join(plotdir, f"{stem}.{ext}")
            fig.savefig(p, dpi=110, bbox_inches="tight")
            made.append(p)
        plt.close(fig)

    goro_tags = [t for t in sorted(goro_runs) if not t.endswith("insncount")]
    save(plot_speedup(plt, goro_runs, goro_tags, peers, goro_label), "speedup")
    for stem, title, names in LATENCY_PLOTS:
        save(plot_latency(plt, goro_runs, goro_tags, peers, title, names), stem)
    save(plot_quantum(plt, goro_runs, goro_tags, goro_label), "quantum_tradeoff")
    if grows:
        save(plot_gobench(plt, grows), "gobench_ratios")
    return made


def plot_speedup(plt, goro_runs, goro_tags, peers, goro_label):
    """spawn_tree_fib's speedup against cores: goro's widest run, Go's."""
    fig, ax = plt.subplots(figsize=(6, 4))
    series = []
    if goro_tags:
        series.append((f"goro ({goro_label})", goro_runs[goro_tags[-1]], "goro", "o-"))
    tcg_top = max((t for t in peers if t.startswith("tcg-") and not t.endswith("insncount")), default=None)
    nat_top = max((t for t in peers if t.startswith("native-")), default=None)
    if tcg_top:
        series.append(("Go (TCG)", peers[tcg_top], "go", "s--"))
    if nat_top:
        series.append(("Go (native)", peers[nat_top], "go", "^:"))
    maxp = 1
    for label, run, impl, style in series:
        pts = sorted((r["procs"], r.get("speedup")) for r in run["bench"]
                     if r["name"] == "spawn_tree_fib" and r.get("impl") == impl and r.get("speedup"))
        if pts:
            ax.plot([p for p, _ in pts], [s for _, s in pts], style, label=label)
            maxp = max(maxp, pts[-1][0])
    ax.plot([1, maxp], [1, maxp], color="grey", lw=0.8, label="ideal")
    ax.set_xlabel("cores (gomaxprocs / vCPUs)")
    ax.set_ylabel("speedup over 1 core (x)")
    ax.set_title("spawn_tree_fib: speedup against cores")
    ax.set_xticks(range(1, maxp + 1))
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


# The latency CDF figures: (file stem, title, benchmark names drawn).
LATENCY_PLOTS = [
    ("latency_wakeup", "wake-up latency", ["wake_latency", "raw_ipi_roundtrip", "timer_latency"]),
    ("latency_sleep", "sleep lateness",
     ["sleep_lateness_1us", "sleep_lateness_100us", "sleep_lateness_1ms"]),
    ("latency_preempt", "lateness among CPU hogs (ticker; 1 ms sleeper by quantum)",
     ["ticker_lateness_hogs", "quantum_sleeper"]),
]
LATENCY_STYLES = {"goro": "-", "go": "--", "pthread": ":"}


def plot_latency(plt, goro_runs, goro_tags, peers, title, names):
    """One panel per machine setting (goro's and the native peers'), one
    CDF per benchmark and implementation."""
    envs = goro_tags + [t for t in sorted(peers) if t.startswith("native-")]
    fig, axes = plt.subplots(1, len(envs), figsize=(5.2 * len(envs), 4.6), sharey=True, squeeze=False)
    for ax, env in zip(axes[0], envs):
        drawn = sum(latency_panel(ax, run, names) for run in panel_runs(env, goro_runs, peers))
        ax.set_xscale("log")
        ax.set_xlabel("latency (us, log scale)")
        ax.set_title(env.replace("tcg-", "TCG, vCPUs=").replace("native-", "native, CPUs=")
                     .replace("hw-", "hardware, cores="))
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=6, loc="lower right")
    axes[0][0].set_ylabel("fraction of samples <= latency")
    fig.suptitle(title + " (goro solid, Go dashed, pthread dotted)")
    return fig


def panel_runs(env, goro_runs, peers):
    """The runs measured in one setting: goro's, and the peers' beside it."""
    runs = []
    if env in goro_runs:
        runs.append(goro_runs[env])
    peer_env = env if env in peers else env.replace("hw-", "native-")
    if peer_env in peers and (env in goro_runs or env.startswith("native-")):
        runs.append(peers[peer_env])
    return runs


def latency_panel(ax, run, names):
    """Draws run's CDFs of the benchmarks in names; returns how many."""
    cdfs = {(c["name"], variant(c)): c for c in run["cdf"]}
    drawn = 0
    for r in run["bench"]:
        if r["name"] not in names or "p50_us" not in r:
            continue
        c = cdfs.get((r["name"], variant(r)))
        if c and c["us"]:
            xs, ys = c["us"], [p / 1000 for p in c["permille"]]
        else:       # only the summary quantiles were printed
            xs = [r["min_us"], r["p50_us"], r["p90_us"], r["p99_us"], r["max_us"]]
            ys = [0, 0.5, 0.9, 0.99, 1.0]
        impl = r.get("impl", "?")
        lab = f"{impl} {r['name'].replace('sleep_lateness_', 'sleep ')} {variant(r)}".strip()
        ax.plot([max(v, 0.1) for v in xs], ys, LATENCY_STYLES.get(impl, "-."), marker=".",
                ms=3, drawstyle="steps-post", label=lab)
        drawn += 1
    return drawn


def plot_quantum(plt, goro_runs, goro_tags, goro_label):
    """The 1 ms sleeper's lateness against the hogs' lost throughput, one
    point per quantum."""
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for tag in goro_tags:
        pts = [r for r in goro_runs[tag]["bench"] if r["name"] == "quantum_tradeoff"]
        if not pts:
            continue
        xs = [r["hog_loss_pct"] for r in pts]
        # horizontal bars: half the disagreement of the two hogs-alone runs
        xerr = [r.get("base_spread_pct", 0) / 2 for r in pts]
        for key, style in (("sleeper_p50_us", "o-"), ("sleeper_p99_us", "s--")):
            ax.errorbar(xs, [r[key] for r in pts], xerr=xerr, fmt=style, capsize=3,
                        label=f"{key.split('_')[1]} ({tag})")
        for r in pts:
            ax.annotate(f"{r['quantum_us']} us", (r["hog_loss_pct"], r["sleeper_p50_us"]), fontsize=7,
                        textcoords="offset points", xytext=(4, 4))
    ax.set_yscale("log")
    ax.set_xlabel("hogs' throughput lost (% of hogs alone)")
    ax.set_ylabel("1 ms sleeper lateness (us, log scale)")
    ax.set_title(f"quantum trade-off, goro ({goro_label}); labels: quantum")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


# ---- main ------------------------------------------------------------------


def main():
    opts = parse_args()
    outdir = os.path.join(opts.build, "bench")
    os.makedirs(outdir, exist_ok=True)
    t_start = time.time()
    load_start = qemu.loadavg()
    if opts.from_serial:
        goro_runs, peers, goro_label = from_serial(opts, outdir)
    else:
        goro_runs, peers, goro_label = from_qemu(opts, outdir)
    resdir = opts.out or (os.path.join(outdir, "serial") if opts.from_serial else outdir)
    os.makedirs(resdir, exist_ok=True)
    res = report(opts, goro_runs, peers, goro_label, resdir, load_start)
    res["seconds"] = round(time.time() - t_start, 1)
    # a section alone leaves the whole run's results.json as it was
    path = os.path.join(resdir, f"results-{opts.section}.json" if opts.section else "results.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1, default=str)
    if not (opts.section or opts.from_serial or opts.report_only or opts.quick) and res.get("gobench"):
        archive_run(outdir, path)
    sys.stdout.write(f"\nresults: {path}; plots: {os.path.join(resdir, 'plots')}/ "
                     f"({len(res['plots'])} files); {time.time() - t_start:.0f}s\n")
    return 0


def archive_run(outdir, path):
    """Keeps a full run's results, and the boot figures make bench took
    just before, under BUILD/bench/runs/: make figures-archive
    (tools/bench/figures.py) summarizes the runs there into docs/data/."""
    runs = os.path.join(outdir, "runs")
    os.makedirs(runs, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    shutil.copyfile(path, os.path.join(runs, f"results-{stamp}.json"))
    boot = os.path.join(outdir, "boot.json")
    if os.path.exists(boot):
        shutil.copyfile(boot, os.path.join(runs, f"boot-{stamp}.json"))


def parse_args():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--cpus", default="1,2", help="vCPU counts (default 1,2; never more than host cores)")
    ap.add_argument("--no-peers", action="store_true", help="goro only")
    ap.add_argument("--no-insncount", dest="insncount", action="store_false", help="skip instruction counts")
    ap.add_argument("--peers-max-age", type=int, default=6 * 3600,
                    help="reuse peer result files younger than this many seconds (default 6 h)")
    ap.add_argument("--peers-dir", default="", help="read peer results from here (with --from-serial)")
    ap.add_argument("--from-serial", default="", metavar="LOG",
                    help="parse a serial capture of app=bench* runs on real hardware instead of running QEMU")
    ap.add_argument("--out", default="", help="where results.json and plots/ go (default BUILD/bench, "
                    "or BUILD/bench/serial with --from-serial)")
    ap.add_argument("--report-only", action="store_true", help="re-read the logs of the last run")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per QEMU boot (default 300)")
    ap.add_argument("--no-gobench", action="store_true", help="skip Go's suite (goro's ports and Go's binaries)")
    ap.add_argument("--no-own", action="store_true",
                    help="skip goro's own suite (app=bench, bench_chan, bench_mem, bench_time and their peers)")
    ap.add_argument("--no-schedlat", action="store_true",
                    help="skip the scheduling-latency section (app=schedlat beside tools/bench/schedlat_go)")
    ap.add_argument("--section", choices=("gobench", "own", "schedlat", "latency"), default="",
                    help="run and report this section alone")
    ap.add_argument("--no-latency", action="store_true", help="skip latency under load (tools/bench/latbench.py)")
    gobench.add_args(ap)
    latbench.add_args(ap)
    opts = ap.parse_args()
    opts.cpus = [int(c) for c in opts.cpus.split(",") if c]
    opts.elf = qemu.image(opts)
    if opts.section:
        opts.no_gobench = opts.section != "gobench"
        opts.no_own = opts.section != "own"
        opts.no_schedlat = opts.section != "schedlat"
        opts.no_latency = opts.section != "latency"
    latbench.finish_opts(opts)
    return opts


def from_serial(opts, outdir):
    """(goro's runs, the peers', goro's label) from a real machine's capture."""
    goro_runs = split_serial(open(opts.from_serial, errors="replace").read())
    if not goro_runs:
        sys.exit(f"bench: no CONFIG/BENCH lines in {opts.from_serial}")
    goro_label = "hw" if any(t.startswith("hw-") for t in goro_runs) else "serial"
    cores = sorted({int(t.split("-")[1]) for t in goro_runs if t.split("-")[1].isdigit()})
    peers = read_peers(outdir, cores, opts.peers_dir or None) if opts.peers_dir else {}
    # Peers measured natively on the same machine compare with goro there.
    for c in cores:
        if f"native-{c}" in peers:
            peers[f"hw-{c}"] = peers[f"native-{c}"]
    return goro_runs, peers, goro_label


def from_qemu(opts, outdir):
    """(goro's runs, the peers', goro's label): boots goro and runs the
    peers unless --report-only, then reads the logs they left in outdir."""
    if not opts.report_only:
        if not os.path.exists(opts.elf):
            sys.exit(f"bench: {opts.elf} missing: make BUILD={opts.build} first")
        if not opts.no_gobench:
            gobench.finish_opts(opts)
            opts.no_go = opts.no_go or opts.no_peers
            gobench.run_all(opts)
        if not opts.no_own:
            run_goro(opts, outdir)
            if not opts.no_peers:
                run_peers(opts, outdir)
        if not opts.no_schedlat:
            run_schedlat(opts, outdir)
        if not opts.no_latency:
            latbench.run_all(opts)
    goro_runs = {}
    for c in opts.cpus:
        run = empty_run()
        for app in [a for a, _ in APPS] + ["schedlat"]:
            p = os.path.join(outdir, f"goro-tcg-{c}-{app}.log")
            if os.path.exists(p):
                merge(run, parse_lines(open(p, errors="replace").read()))
        goro_runs[f"tcg-{c}"] = run
    ins = empty_run()
    for p in sorted(glob.glob(os.path.join(outdir, "goro-tcg-1-insncount-*.log"))):
        ins["insn"] += parse_lines(open(p, errors="replace").read())["insn"]
    goro_runs["tcg-1-insncount"] = ins
    peers = {} if opts.no_peers else read_peers(outdir, opts.cpus)
    return goro_runs, peers, "TCG"


def report(opts, goro_runs, peers, goro_label, resdir, load_start):
    """Prints the tables, draws the plots; returns what results.json holds."""
    rows = build_table(goro_runs, peers, goro_label)
    load_end = qemu.loadavg()
    machine = machine_line(goro_runs, load_start, load_end, opts.from_serial, peers)
    out = sys.stdout
    out.write(f"\n{machine}\n\n")
    shown = lambda sec: opts.section in ("", sec)     # noqa: E731
    grows = [] if opts.from_serial else gobench_rows(os.path.join(opts.build, "bench"), opts.cpus, peers)
    kw = None if opts.from_serial else gobench.read_known_work(os.path.join(opts.build, "bench"))
    if shown("gobench"):
        print_gobench(grows, out)
        print_known_work(kw, out)
    irows, made = [], []
    if shown("own"):
        out.write("\ngoro's own benchmarks (app=bench, bench_chan, bench_mem, bench_time) beside the Go and "
                  "pthread peers of tests/peers:\n\n")
        print_table(rows, goro_label, out)
        irows = insn_table(goro_runs, peers, out)
    srows = [] if opts.from_serial else read_schedlat(os.path.join(opts.build, "bench"), opts.cpus)
    if shown("schedlat"):
        schedlat.print_table(srows, out)
    lat = os.path.join(opts.build, "bench", "latency.json")
    if shown("latency") and not opts.from_serial and os.path.exists(lat):
        latbench.print_report(json.load(open(lat)), out)
    if not opts.section:
        made = plots(goro_runs, peers, os.path.join(resdir, "plots"), goro_label, grows)
    return {"machine": machine, "loadavg_start": load_start, "loadavg_end": load_end,
            "goro_label": goro_label, "gobench": grows, "known_work": kw, "goro": goro_runs, "peers": peers, "table": rows,
            "insn_table": irows, "schedlat": srows, "plots": made}


def machine_line(goro_runs, l0, l1, serial="", peers=None):
    cfg = {}
    for tag, run in goro_runs.items():
        cfg = run["config"].get("goro") or cfg
        if cfg:
            break
    if serial:
        cores = ",".join(t.split("-")[1] for t in goro_runs)
        return (f"machine: serial capture {serial}: goro cpu=\"{cfg.get('cpu', '?')}\" "
                f"cores={cores} accel={cfg.get('accel', '?')} tsc_mhz={cfg.get('tsc_mhz', '?')}")
    # The 1-minute load average at each boot (HOST lines of the saved logs).
    def span(runs):
        ls = [float(str(h).split("/")[0]) for h in host_loads(runs)]
        return f"{min(ls):.1f}-{max(ls):.1f}" if ls else "?"
    return (f"machine: {os.cpu_count()} host CPUs, goro cpu=\"{cfg.get('cpu', '?')}\" "
            f"accel={cfg.get('accel', '?')} tsc_mhz={cfg.get('tsc_mhz', '?')}, "
            f"qemu {qemu.version()}; 1-min load average {span(goro_runs)} at goro's boots, "
            f"{span(peers or {})} at the peers' runs; {time.strftime('%Y-%m-%d %H:%M')}")


def host_loads(goro_runs):
    return [la for run in goro_runs.values() for la in run.get("loads", [])]


if __name__ == "__main__":
    sys.exit(main())
