#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make figures: every measured figure the README and docs/ quote, written
between markers from the archived runs in docs/data/.

Each measurement that the docs quote is archived once, as a small dated
JSON file in docs/data/: KIND-YYYYMMDD-HHMMSS.json, where KIND is

  gobench    a full `make bench`: Go's benchmarks beside goro's ports
             (the newest run, and the spread of the runs kept with it);
  boot       a `make bench-boot`: the boot timeline at 1 to 64 vCPUs
             beside a Debian Linux guest;
  net        `make bench-net` runs (tools/net/netbench.py's results.json,
             --net-results names them): each run's servers kept apart,
             since only rows of one run compare.
  bootscale  tools/bench/boot_bench.py --out BUILD/bench/boot-scale.json
             at hundreds of vCPUs, summarized as boot is;
  idlelook   tools/bench/idlelook.py (BUILD/bench/idlelook.json): a failed
             look's instructions at gomaxprocs 1 to 1024, beside Go's.

A document holds a generated part between two lines,

  <!-- FIGURES NAME (make figures writes this from docs/data/KIND-*) -->
  <!-- END FIGURES NAME -->

and BLOCKS says which archive (the newest of its kind) and which
renderer write it. So a figure is written once, in the data, and
`make check-docs` fails when a part no longer matches what its data
gives: a hand edit, or data changed without `make figures`.

    tools/bench/figures.py                 # rewrite every generated part
    tools/bench/figures.py --check         # list the parts that differ
    tools/bench/figures.py --archive       # archive build/bench's newest
                                           # runs into docs/data/, then rewrite
    tools/bench/figures.py --archive --net-results A/results.json,B/results.json

Instructions per op do not move with the host's load (the QEMU plugin
counts them); times under TCG do, which is why each time figure carries
the range over runs. Fewer than --min-runs runs: the part says so, and
quotes no time figure.

Python 3 standard library only.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.net import loadpoint  # noqa: E402  (the saturation rule, netbench's too)
DATA = os.path.join(ROOT, "docs", "data")
# The documents that may hold generated parts.
DOCS = ["README.md", "docs/*.md"]

# The rows the README shows: the ones the field asks about.
ROWS = ["CreateGoroutines", "PingPongHog", "StackGrowth", "ChanSync", "ChanProdCons0",
        "ChanUncontended", "SelectUncontended", "MutexUncontended", "Mutex", "Cond8",
        "WaitGroupUncontended", "Matmult", "After", "TickerReset", "Sleep"]
# The boot's targets: kernel entry to every core online, median of 5 boots.
BOOT_TARGET_US = {"8": 2000, "64": 5000}


def para(text, indent=""):
    """A paragraph (or a list item, indent its continuation) wrapped at 78
    columns, as the docs are written."""
    return textwrap.fill(text, 78, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False).split("\n")


def vcpus(n):
    return f"{n} vCPU{'s' if str(n) != '1' else ''}"


# ---- archiving: build/bench's full results -> docs/data summaries -----------

def med_range(vals):
    v = [x for x in vals if x is not None]
    if not v:
        return None
    return [statistics.median(v), min(v), max(v)]


def summarize_gobench(runs, min_runs):
    """The newest run's figures and, per row, the spread of the time ratios
    over every run: what the README quotes."""
    run = runs[-1]
    enough = len(runs) >= min_runs
    by_key = [{(r["benchmark"], r["vcpus"]): r for r in x["gobench"]} for x in runs]
    cpus_list = sorted({r["vcpus"] for r in run["gobench"]})
    out = {"kind": "gobench", "run": os.path.basename(run["_path"]), "runs": len(runs),
           "min_runs": min_runs, "minutes": round(run.get("seconds", 0) / 60),
           "machine": re.sub(r"; \d{4}-\d\d-\d\d \d\d:\d\d$", "", run.get("machine", "")),
           "vcpus": {}, "rows": []}
    for cpus in cpus_list:
        rs = [r for r in run["gobench"] if r["vcpus"] == cpus]
        both = [r for r in rs if r.get("goro_ns") and r.get("go_ns")]
        ins = [r["goro_go_insn"] for r in rs if r.get("goro_go_insn") is not None]
        v = {"both": len(both), "insn_n": len(ins),
             "insn_quarter": sum(1 for x in ins if x <= 0.25),
             "insn_above": sum(1 for x in ins if x > 1),
             "insn_median": round(statistics.median(ins), 2) if ins else None}
        if enough:
            per = [[bk.get((r["benchmark"], cpus), {}).get("goro_go_time") for bk in by_key]
                   for r in both]
            v["time_faster_all"] = sum(1 for p in per if all(x is not None and x < 1 for x in p))
            v["time_slower_all"] = sum(1 for p in per if all(x is not None and x >= 1 for x in p))
        out["vcpus"][str(cpus)] = v
    for name in ROWS:
        r1 = by_key[-1].get((name, cpus_list[0]))
        if r1 is None:
            continue
        row = {"benchmark": name, "insn": None, "time": {}}
        if r1.get("goro_go_insn") is not None:
            row["insn"] = [round(r1["goro_go_insn"], 2), round(r1["goro_insn"]),
                           round(r1["go_insn"])]
        for c in cpus_list:
            times = [bk.get((name, c), {}).get("goro_go_time") for bk in by_key]
            t = med_range(times) if enough else None
            row["time"][str(c)] = [round(x, 2) for x in t] if t else None
        out["rows"].append(row)
    out["table"] = gobench_table(runs) if enough else []
    return out


# What the table keeps of a row, from the newest run: the counts do not
# move with the host's load.
TABLE_KEYS = ("goro_insn", "go_insn", "go_kinsn", "floor_insn", "goro_atomics", "go_atomics",
              "floor_atomics", "goro_halts", "go_halts", "goro_ipis", "go_ipis")


def gobench_table(runs):
    """Every row of the newest run: its counts, and its time ratio in each
    run (None where a side did not run it)."""
    by_key = [{(r["benchmark"], r["vcpus"]): r for r in x["gobench"]} for x in runs]
    out = []
    for r in runs[-1]["gobench"]:
        key = (r["benchmark"], r["vcpus"])
        row = {"benchmark": r["benchmark"], "vcpus": r["vcpus"],
               "time": [None if bk.get(key, {}).get("goro_go_time") is None
                        else round(bk[key]["goro_go_time"], 2) for bk in by_key]}
        for k in TABLE_KEYS:
            v = r.get(k)
            row[k] = None if v is None else round(v, 3 if v < 10 else 1)
        out.append(row)
    return out


def summarize_boot(d, kind="boot"):
    """make bench-boot's boot.json without its per-boot records."""
    keep = ("host_entry_ms", "host_main_ms", "entry_to_online_us", "entry_to_online_spread_us",
            "entry_to_ready_us", "entry_to_ready_spread_us", "entry_to_main_us",
            "entry_to_main_spread_us", "boots", "failed")
    lkeep = ("host_init_ms", "run_init_ms", "boots", "failed")
    goro = {k: {"load": round(v["load"], 2), **{x: v["summary"].get(x) for x in keep}}
            for k, v in d["goro"].items()}
    linux = {}
    for k, v in d.get("linux", {}).items():
        s = v["summary"]
        linux[k] = {"load": round(v["load"], 2), **{x: s.get(x) for x in lkeep},
                    "smp_bringup_ms": (None if s.get("smp_done_ms") is None else
                                       s["smp_done_ms"] - (s.get("smp_start_ms") or 0))}
    return {"kind": kind, "date": d["date"], "qemu": d.get("qemu", ""),
            "host_cpus": d.get("host_cpus"), "goro": goro, "linux": linux}


def archive(build, min_runs, net_results=()):
    """build/bench/runs/results-*.json (make bench), build/bench/boot.json
    (make bench-boot), boot-scale.json and idlelook.json (above) into
    docs/data/, each under its own run's time."""
    os.makedirs(DATA, exist_ok=True)
    written = []
    runs = []
    for path in sorted(glob.glob(os.path.join(build, "bench", "runs", "results-*.json"))):
        with open(path) as f:
            d = json.load(f)
        if d.get("gobench"):
            d["_path"] = path
            runs.append(d)
    if runs:
        stamp = re.search(r"(\d{8}-\d{6})", os.path.basename(runs[-1]["_path"]))
        s = summarize_gobench(runs, min_runs)
        s["date"] = time.strftime("%Y-%m-%d %H:%M", time.strptime(stamp.group(1), "%Y%m%d-%H%M%S"))
        written.append(write_json(f"gobench-{stamp.group(1)}.json", s))
    boot = os.path.join(build, "bench", "boot.json")
    if os.path.exists(boot):
        with open(boot) as f:
            d = json.load(f)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.strptime(d["date"], "%Y-%m-%dT%H:%M:%S"))
        written.append(write_json(f"boot-{stamp}.json", summarize_boot(d)))
    nets = [p for p in net_results if os.path.exists(p)]
    if nets:
        runs = []
        for path in nets:
            with open(path) as f:
                runs.append(summarize_net(json.load(f)))
        runs.sort(key=lambda r: r["date"])
        stamp = time.strftime("%Y%m%d-%H%M%S", time.strptime(runs[-1]["date"], "%Y-%m-%d %H:%M"))
        written.append(write_json(f"net-{stamp}.json", {"kind": "net", "date": runs[-1]["date"], "runs": runs}))
    scale = os.path.join(build, "bench", "boot-scale.json")
    if os.path.exists(scale):
        with open(scale) as f:
            d = json.load(f)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.strptime(d["date"], "%Y-%m-%dT%H:%M:%S"))
        written.append(write_json(f"bootscale-{stamp}.json", summarize_boot(d, "bootscale")))
    looks = os.path.join(build, "bench", "idlelook.json")
    if os.path.exists(looks):
        with open(looks) as f:
            d = json.load(f)
        written.append(write_json(f"idlelook-{d['date'].replace('-', '')}.json", d))
    return written


def failure(why):
    """A failed row's reason in a line, without the run's own paths."""
    why = why.split("; console:")[0].split("\n")[0]
    m = re.match(r"Command '\[(.*?)\]' timed out after (\d+)", why)
    if m:
        client = [a.strip("'") for a in m.group(1).split(", ")]
        if client[:3] == ["ip", "netns", "exec"]:
            client = client[4:]         # the namespace the client ran in
        why = f"{' '.join(a for a in client if not a.startswith('--servers'))} timed out after {m.group(2)} s"
    return why[:120]


def summarize_net(d):
    """One netbench run: per server and vCPU count what the tables show."""
    rows = []
    for r in d["runs"]:
        row = {"server": r["server"], "vcpus": r["vcpus"], "net": r.get("net"), "proto": r.get("proto")}
        if r.get("skipped") or r.get("failed"):
            row["failed"] = failure(r.get("why") or r.get("skipped") or str(r.get("failed")))
        w, m = r.get("wrk"), r.get("memaslap")
        if w:
            row.update(closed=w.get("rps"), unit="req/s (wrk -t2 -c64)", rates=w.get("rates"),
                       errors=w.get("errors"), p50_us=w.get("p50_us"), p99_us=w.get("p99_us"))
        elif m:
            row.update(closed=m.get("tps"), unit="ops/s (memaslap -T2 -c64)", rates=m.get("rates"),
                       errors=m.get("errors"))
        if r.get("memcslap"):
            row["memcslap"] = {k: [v.get("rate"), v.get("errors")] for k, v in r["memcslap"].items()}
        cls = "short" if r.get("proto") == "http" else "all"
        if r.get("curve"):
            row["curve"] = [[p["offered_rps"], p.get("achieved_rps"), p.get("errors"),
                             *(p.get("lat", {}).get(cls, {}).get(k) for k in ("p50_us", "p99_us", "p999_us"))]
                            for p in r["curve"]]
            row["saturation"] = loadpoint.saturation(r["curve"])
        a, b = r.get("loadavg_before"), r.get("loadavg_after_curve") or r.get("loadavg_after")
        row["load"] = [float(a[0]) if a else None, float(b[0]) if b else None]
        rows.append(row)
    floors = [[f["vcpus"], f.get("pps")] for f in d.get("floors", []) if f.get("pps")]
    return {"date": d["date"], "machine": d["machine"], "rows": rows, "floors": floors}


def write_json(name, obj):
    path = os.path.join(DATA, name)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
    return path


def newest(kind):
    paths = sorted(glob.glob(os.path.join(DATA, f"{kind}-*.json")))
    if not paths:
        return None, None
    with open(paths[-1]) as f:
        return os.path.relpath(paths[-1], ROOT), json.load(f)


# ---- renderers: one archive -> Markdown lines ---------------------------------

def fmt_time(t):
    return "-" if not t else f"{t[0]:.2f} [{t[1]:.2f}-{t[2]:.2f}]"


def readme_performance(src, s):
    enough = s["runs"] >= s["min_runs"]
    out = para(f"The last full `make bench` ({s['date']}; {s['minutes']} min for its benchmark "
               f"sections; {s['machine']}; `{src}`). Ratios are goro/Go: under 1, goro does less. "
               "Instructions per op come from the QEMU plugin and do not move with the host's "
               "load; time ratios are the median over "
               + (f"{s['runs']} full runs on this machine, with their range [min-max]."
                  if enough else
                  f"the runs, but only {s['runs']} exist (at least {s['min_runs']} are needed): "
                  "no time figure is quoted.")) + [""]
    for cpus, v in sorted(s["vcpus"].items(), key=lambda kv: int(kv[0])):
        line = f"- **{vcpus(cpus)}:** {v['both']} of Go's benchmarks ran on both sides"
        if v["insn_n"]:
            line += (f"; instructions per op: {v['insn_quarter']} of {v['insn_n']} at or "
                     f"under 0.25x Go's, {v['insn_above']} above Go's, median ratio "
                     f"{v['insn_median']:.2f}")
        if enough:
            line += (f"; time: faster than Go in all {s['runs']} runs on {v['time_faster_all']}, "
                     f"slower in all on {v['time_slower_all']}, the rest either way")
        out += para(line + ".", "  ")
    cpus_list = sorted(s["vcpus"], key=int)
    out += [""] + para("Selected rows (every row, its spread over the counts and Go native: "
                       "`build/bench/results.json`, or `make bench` prints them; "
                       "[docs/performance.md](docs/performance.md) says how each is taken):") + [""]
    hdr = (["benchmark", f"{vcpus(cpus_list[0])}: insn goro/Go"]
           + [f"{vcpus(c)}: time goro/Go" for c in cpus_list])
    out += ["| " + " | ".join(hdr) + " |", "|" + " --- |" * len(hdr)]
    for r in s["rows"]:
        ins = "-" if not r["insn"] else f"{r['insn'][0]:.2f} ({r['insn'][1]}/{r['insn'][2]})"
        out.append("| " + " | ".join([r["benchmark"], ins] + [fmt_time(r["time"].get(c))
                                                              for c in cpus_list]) + " |")
    return out


def num(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def rat(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}"


def gobench_table_md(src, s):
    """docs/performance.md's table: every row of the archived runs."""
    rows = s.get("table") or []
    if not rows:
        return para(f"`{src}` holds fewer than {s['min_runs']} runs: no table.")
    slow = [r for r in rows if any(t is not None and t > 1 for t in r["time"])]
    out = para(f"The {s['runs']} full runs of `{src}` ({s['date']}; the counts from the newest, "
               "time goro/Go in each run, in order, bold where goro was slower; "
               f"{len(slow)} row{'s' if len(slow) != 1 else ''} slower than Go in at least one run). "
               "insn/op goro / Go / floor; atomic read-modify-writes per op the same; "
               "halts and IPIs per op goro / Go:") + [""]
    out += ["| benchmark | vCPUs | insn/op | goro/Go | goro/floor | Go/floor | atomics/op "
            "| halts/op | IPIs/op | time goro/Go |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        times = ", ".join("-" if t is None else (f"**{t:.2f}**" if t > 1 else f"{t:.2f}")
                          for t in r["time"])
        out.append("| " + " | ".join([
            r["benchmark"], str(r["vcpus"]),
            f"{num(r['goro_insn'])} / {num(r['go_insn'])} / {num(r['floor_insn'])}",
            rat(r["goro_insn"], r["go_insn"]), rat(r["goro_insn"], r["floor_insn"]),
            rat(r["go_insn"], r["floor_insn"]),
            f"{num(r['goro_atomics'])} / {num(r['go_atomics'])} / {num(r['floor_atomics'])}",
            f"{num(r['goro_halts'])} / {num(r['go_halts'])}",
            f"{num(r['goro_ipis'])} / {num(r['go_ipis'])}", times]) + " |")
    return out


def ms(us):
    return "-" if us is None else f"{us / 1000:.2f}"


def spread_ms(med_us, sp):
    if med_us is None:
        return "-"
    return ms(med_us) + (f" [{ms(sp[0])}-{ms(sp[1])}]" if sp else "")


def readme_boot(src, b):
    g = b["goro"]
    online = ", ".join(ms(g[c]["entry_to_online_us"]) for c in sorted(g, key=int))
    counts = ", ".join(c for c in sorted(g, key=int))
    mains = [g[c]["entry_to_main_us"] for c in g if g[c]["entry_to_main_us"] is not None]
    targets = [f"{BOOT_TARGET_US[c] // 1000} ms at {c} vCPUs "
               + ("met" if g[c]["entry_to_online_us"] <= BOOT_TARGET_US[c] else "missed")
               for c in sorted(BOOT_TARGET_US, key=int) if c in g and g[c]["entry_to_online_us"]]
    line = (f"**Boot** (`make bench-boot` of {b['date'][:10]}, {b['qemu']} TCG on this "
            f"{b['host_cpus']}-CPU host, median of {g[min(g, key=int)]['boots']} boots; `{src}`): "
            f"kernel entry to every core online {online} ms at {counts} vCPUs; to the main "
            f"goroutine {min(mains) / 1000:.1f}-{max(mains) / 1000:.1f} ms.")
    lx = b["linux"]
    bring = [(c, lx[c]["smp_bringup_ms"]) for c in sorted(lx, key=int)
             if lx[c].get("smp_bringup_ms") is not None and c in ("8", "64")]
    if bring:
        line += (" The Linux guest's CPU bring-up alone, in the same run: "
                 + " and ".join(f"{v / 1000:.2f} s at {c} vCPUs" for c, v in bring) + ".")
    if targets:
        line += " The targets: " + "; ".join(targets) + "."
    line += (" [docs/boot.md](docs/boot.md#measurements) has the table and where the "
             "time goes.")
    return para(line)


def boot_table(src, b, what="`make bench-boot`"):
    load = ("load the host's 1-minute load average before each configuration" if "load" not in b
            else f"the host's 1-minute load average {b['load']} over the run")
    out = para(f"{what} of {b['date'].replace('T', ' ')[:16]} ({b['qemu']}, TCG, "
               f"{b['host_cpus']} host CPUs; `{src}`), ms, median [min-max] of the boots; "
               f"`QEMU->` on the host's clock, `entry->` on the guest's TSC from kernel entry; "
               f"{load}:") + ["",
           "| vCPUs | load | QEMU->entry | entry->all online | entry->all ready | entry->main "
           "| QEMU->main | Linux QEMU->init | Linux smp bring-up |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    g, lx = b["goro"], b["linux"]
    for c in sorted(g, key=int):
        s, lv = g[c], lx.get(c, {})
        bring = "-" if lv.get("smp_bringup_ms") is None else f"{lv['smp_bringup_ms']:.1f}"
        init = "-" if lv.get("host_init_ms") is None else f"{lv['host_init_ms']:.0f}"
        if lv.get("failed"):
            init += f" ({lv['failed']} of {lv['boots']} hung)"
        out.append("| " + " | ".join([
            c, "-" if s.get("load") is None else f"{s['load']:.1f}",
            "-" if s.get("host_entry_ms") is None else f"{s['host_entry_ms']:.1f}",
            spread_ms(s.get("entry_to_online_us"), s.get("entry_to_online_spread_us")),
            spread_ms(s.get("entry_to_ready_us"), s.get("entry_to_ready_spread_us")),
            spread_ms(s.get("entry_to_main_us"), s.get("entry_to_main_spread_us")),
            "-" if s.get("host_main_ms") is None else f"{s['host_main_ms']:.1f}",
            init, bring]) + " |")
    return out


def rate(v):
    return "-" if v is None else f"{v:,.0f}"


def lat_ms(us):
    return "-" if us is None else f"{us / 1000:,.1f}"


def net_closed(row):
    if row.get("closed") is None:
        return "no row: " + row["failed"] if row.get("failed") else "-"
    rs = [x for x in row.get("rates") or [] if x is not None]
    spread = f" [{min(rs):,.0f}-{max(rs):,.0f} of {len(rs)}]" if len(rs) > 1 else ""
    return f"{rate(row['closed'])}{spread} {row['unit']}" + (f"; then {row['failed']}" if row.get("failed") else "")


def net_targets(run):
    """The issue's targets, read from one run: httpd at least 2x Go's
    net/http, kvd at least memcached, goro's p99 at most half Go's at every
    offered load under Go's saturation (HTTP)."""
    out = []
    by = {(r["server"], r["vcpus"]): r for r in run["rows"]}
    for c in sorted({r["vcpus"] for r in run["rows"]}):
        pairs = [("goro-httpd", "httpd-go", 2.0, "httpd at least 2x Go net/http"),
                 ("goro-kvd", "memcached", 1.0, "kvd at least memcached")]
        for g, peer, want, what in pairs:
            a, b = by.get((g, c)), by.get((peer, c))
            if not a or not b:
                continue
            if not a.get("closed") or not b.get("closed"):
                out.append(f"{c} vCPU, {what}: not measured (a row missing)")
                continue
            x = a["closed"] / b["closed"]
            bad = [f"{r['server']}'s row has {r.get('errors')} errors" for r in (a, b) if r.get("errors") != 0]
            out.append(f"{c} vCPU, {what}: {x:.2f}x, "
                       + (f"unsettled ({', '.join(bad)}: it does not count)" if bad
                          else "met" if x >= want else "missed"))
        a, b = by.get(("goro-httpd", c)), by.get(("httpd-go", c))
        if a and b and a.get("curve") and b.get("curve"):
            sat = b.get("saturation") or float("inf")
            gp = {p[0]: p for p in a["curve"] if p[2] == 0}
            pts = [(p, gp.get(p[0])) for p in b["curve"] if p[0] < sat and p[2] == 0]
            pts = [(q, p) for q, p in pts if p and p[4] is not None and q[4] is not None]
            if pts:
                met = sum(p[4] <= q[4] / 2 for q, p in pts)
                out.append(f"{c} vCPU, goro's p99 at most half Go's below Go's saturation: "
                           f"{met} of {len(pts)} loads")
    return out


def memcslap_table(rows):
    r"""memcslap's keys/s per server and vCPU count, from rows in the
    archive's shape (summarize_net's): the net-table's and netbench.py's
    report alike. Errors: -1 when a run gave no verdict.

    >>> rows = [{"server": "goro-kvd", "vcpus": 2, "memcslap": {"set": [5120.4, 0], "get": [6000, 0]}},
    ...         {"server": "memcached", "vcpus": 2, "memcslap": {"set": [None, -1]}}, {"server": "x", "vcpus": 1}]
    >>> print("\n".join(memcslap_table(rows)[2:]))
    | goro-kvd | 2 | 5,120 | 6,000 | - | 0 |
    | memcached | 2 | - | - | - | -1 |
    """
    cs = [r for r in rows if r.get("memcslap")]
    if not cs:
        return []
    out = ["| server | vCPUs | memcslap set (1 conn), keys/s | get (1 conn) | get (64 conns) | errors |",
           "| --- | --- | --- | --- | --- | --- |"]
    for r in cs:
        m = r["memcslap"]
        errs = [v[1] for v in m.values()]
        out.append(f"| {r['server']} | {r['vcpus']} | " + " | ".join(
            rate((m.get(k) or [None])[0]) for k in ("set", "get", "get64"))
            + f" | {-1 if -1 in errs else sum(e or 0 for e in errs)} |")
    return out


def net_table(src, n):
    out = []
    for run in n["runs"]:
        if not out:
            out += para(f"{run['machine']}; `{src}`. Closed loop: the median run [the spread "
                        "of the runs]; errors over all runs (a row counts only with 0); host "
                        "load: the 1-minute load average before/after each guest.") + [""]
        out += [f"Run of {run['date']}:", "",
                    "| server | vCPUs | closed loop | errors | p50 / p99 (ms) | saturation | host load |",
                    "| --- | --- | --- | --- | --- | --- | --- |"]
        for c, pps in run["floors"]:
            out.append(f"| L2 reflector (floor) | {c} | {pps:,.0f} frames/s | | | | |")
        for r in run["rows"]:
            lat = "-" if r.get("p50_us") is None else f"{lat_ms(r['p50_us'])} / {lat_ms(r['p99_us'])}"
            sat = "-" if not r.get("curve") else (f"{rate(r['saturation'])}/s" if r.get("saturation")
                                                  else "none up to the last load")
            ld = "/".join("-" if x is None else f"{x:.0f}" for x in r["load"])
            err = "-" if r.get("errors") is None else str(r["errors"])
            out.append(f"| {r['server']} | {r['vcpus']} | {net_closed(r)} | {err} | {lat} | {sat} | {ld} |")
        ms = memcslap_table(run["rows"])
        if ms:
            out += [""] + ms
        for proto, what in (("http", "short requests of the bimodal /work mix"),
                            ("memcache", "90% gets, 10% sets")):
            cv = [r for r in run["rows"] if r.get("proto") == proto and r.get("curve")]
            for c in sorted({r["vcpus"] for r in cv}):
                rs = [r for r in cv if r["vcpus"] == c]
                loads = sorted({p[0] for r in rs for p in r["curve"]})
                out += [""] + para(f"Open loop, {c} vCPUs, {what}: achieved rate, p50 / p99 / "
                                   "p99.9 (ms); \"errors\" marks a point that does not count.") + ["",
                        "| offered/s | " + " | ".join(r["server"] for r in rs) + " |",
                        "| --- |" + " --- |" * len(rs)]
                for ld in loads:
                    cells = []
                    for r in rs:
                        p = next((p for p in r["curve"] if p[0] == ld), None)
                        if not p:
                            cells.append("")
                        elif p[2] != 0:
                            cells.append(f"{rate(p[1])}/s, errors")
                        else:
                            cells.append(f"{rate(p[1])}/s: {lat_ms(p[3])} / {lat_ms(p[4])} / {lat_ms(p[5])}")
                    out.append(f"| {rate(ld)} | " + " | ".join(cells) + " |")
        t = net_targets(run)
        if t:
            out += [""] + para("Targets in this run: " + "; ".join(t) + ".")
        out.append("")
    return out[:-1]


def readme_net(src, n):
    out = []
    for run in n["runs"]:
        rows = [r for r in run["rows"] if r.get("closed") is not None or r.get("failed")]
        cells = "; ".join(f"{r['server']} at {r['vcpus']}: " + (
            "no row" if r.get("failed") else f"{rate(r['closed'])} {r['unit'].split(' ')[0]}"
            + ("" if r.get("errors") == 0 else f" ({r.get('errors')} errors: does not count)"))
            for r in rows)
        t = net_targets(run)
        out += para(f"- **Servers** (`make bench-net`, run of {run['date']}, over tap; `{src}`): "
                    + cells + "." + (" " + "; ".join(t) + "." if t else ""), "  ")
    out += [""] + para("[docs/performance.md](docs/performance.md#network-servers) has the tables, "
                "the open-loop curves and why each missed target is missed.")
    return out


def idlelook_table(src, d):
    """The table's rows, a failed one with its reason, one kept from an
    earlier run (idlelook.py --keep) with that run's date.

    >>> d = {"date": "2026-11-29", "qemu": "QEMU 10.0.2", "reps": 100, "goro": [
    ...      {"gomaxprocs": 8, "looks": 9, "insn": [400, 300, 500], "per_sleep": 6000, "wake_us": [1, 2],
    ...       "date": "2026-11-28"}],
    ...      "go": [{"gomaxprocs": 256, "failed": "Go, 256 vCPUs: killed by signal 6"}]}
    >>> idlelook_table("x.json", d)[-2:]
    ['| goro | 8 (2026-11-28) | 9 | 400 [300-500] | 6000 | 1 / 2 |', '| Go on Linux | 256 | - | - | no row: Go, 256 vCPUs: killed by signal 6 | - |']
    """
    out = para(f"{d['date']}, {d['qemu']} TCG, one boot per row ({d['reps']} sleeps of 500 us "
               f"unless the row says otherwise; a row measured in an earlier run has its date; "
               f"`{src}`):") + ["",
           "| system | gomaxprocs | failed looks | insns per look, median [min-max] "
           "| every core's insns per sleep | wake-up p50 / p99 us |",
           "| --- | --- | --- | --- | --- | --- |"]

    def wake(r):
        return "-" if not r.get("wake_us") else f"{r['wake_us'][0]} / {r['wake_us'][1]}"

    def procs(r):
        return f"{r['gomaxprocs']} ({r['date']})" if r.get("date", d["date"]) != d["date"] else str(r["gomaxprocs"])
    for r in d["goro"]:
        if "failed" in r:
            out.append(f"| goro | {procs(r)} | - | - | no row: {r['failed']} | - |")
            continue
        i = r["insn"]
        looks = f"{r['looks']} ({r['reps']} sleeps)" if r.get("reps") else str(r["looks"])
        out.append(f"| goro | {procs(r)} | {looks} | {i[0]} [{i[1]}-{i[2]}] "
                   f"| {r['per_sleep']} | {wake(r)} |")
    for r in d["go"]:
        if "failed" in r:
            out.append(f"| Go on Linux | {procs(r)} | - | - | no row: {r['failed']} | - |")
            continue
        out.append(f"| Go on Linux | {procs(r)} | - | - | {r['per_sleep']} (runtime "
                   f"{r['user']}, Linux {r['per_sleep'] - r['user']}) | {wake(r)} |")
    return out


# name -> (the archive kind it reads, its renderer)
BLOCKS = {
    "readme-performance": ("gobench", readme_performance),
    "gobench-table": ("gobench", gobench_table_md),
    "readme-boot": ("boot", readme_boot),
    "boot-table": ("boot", boot_table),
    "net-table": ("net", net_table),
    "readme-net": ("net", readme_net),
    "idlelook-table": ("idlelook", idlelook_table),
    "boot-scale-table": ("bootscale", lambda src, b: boot_table(src, b, "`tools/bench/boot_bench.py`")),
}

BLOCK_RE = re.compile(r"^<!-- FIGURES ([\w-]+) .*?-->\n(.*?)^<!-- END FIGURES \1 -->\n",
                      re.S | re.M)


def render(name):
    kind, fn = BLOCKS[name]
    src, data = newest(kind)
    if data is None:
        return None
    note = f"<!-- FIGURES {name} (make figures writes this from docs/data/{kind}-*) -->\n"
    return note + "\n".join(fn(src, data)) + "\n" + f"<!-- END FIGURES {name} -->\n"


def doc_paths():
    out = []
    for pat in DOCS:
        out += sorted(glob.glob(os.path.join(ROOT, pat)))
    return out


def regenerate(write):
    """Every generated part, rewritten (write) or compared; returns the
    problems: parts that differ, unknown parts, archives missing."""
    problems = []
    for path in doc_paths():
        with open(path) as f:
            text = f.read()
        rel = os.path.relpath(path, ROOT)

        def sub(m):
            name = m.group(1)
            if name not in BLOCKS:
                problems.append(f"{rel}: FIGURES {name}: no such part "
                                f"(tools/bench/figures.py BLOCKS)")
                return m.group(0)
            new = render(name)
            if new is None:
                problems.append(f"{rel}: FIGURES {name}: no docs/data/{BLOCKS[name][0]}-*.json")
                return m.group(0)
            if new != m.group(0) and not write:
                problems.append(f"{rel}: FIGURES {name} differs from what its data gives "
                                f"(edited by hand, or the data changed): make figures rewrites it")
            return new
        new_text = BLOCK_RE.sub(sub, text)
        if write and new_text != text:
            with open(path, "w") as f:
                f.write(new_text)
            print(f"figures: {rel} rewritten")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 when a part differs")
    ap.add_argument("--archive", action="store_true",
                    help="first archive BUILD/bench's newest make bench and make bench-boot runs")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="the build directory (build)")
    ap.add_argument("--net-results", default="",
                    help="with --archive: netbench results.json files, comma-separated "
                         "(default BUILD/bench/net/results.json)")
    ap.add_argument("--min-runs", type=int, default=3,
                    help="runs needed before time figures are quoted (3)")
    opts = ap.parse_args()
    if opts.archive:
        nets = (opts.net_results.split(",") if opts.net_results
                else [os.path.join(opts.build, "bench", "net", "results.json")])
        written = archive(opts.build, opts.min_runs, nets)
        if not written:
            print(f"figures: nothing to archive under {opts.build}/bench", file=sys.stderr)
            return 1
        for p in written:
            print(f"figures: archived {os.path.relpath(p, ROOT)}")
    problems = regenerate(write=not opts.check)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
