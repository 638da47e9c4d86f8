#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench-readme: the README's Performance results, regenerated from
the last full `make bench` run and the spread of the runs before it.

`make bench` keeps each full run's results (build/bench/runs/results-*.json,
with the boot figures of the same run beside them). This script takes the
newest run as *the* run (its machine, load, its goro/Go ratios) and every
archived run for the spread: for each figure, the median over the runs and
the range of the runs' own medians. It writes the Markdown between the
README's `<!-- PERFORMANCE RESULTS` and `<!-- END PERFORMANCE RESULTS -->`
lines (--readme), or prints it.

Instructions per op do not move with the host's load (the QEMU plugin
counts them); times under TCG do, which is why each time figure carries
the range over runs. Fewer than --min-runs runs: the section says so, and
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The rows the README shows: the ones the issues and the field ask about.
ROWS = ["CreateGoroutines", "PingPongHog", "StackGrowth", "ChanSync", "ChanProdCons0",
        "ChanUncontended", "SelectUncontended", "MutexUncontended", "Mutex", "Cond8",
        "WaitGroupUncontended", "Matmult", "After", "TickerReset", "Sleep"]
BEGIN, END = "<!-- PERFORMANCE RESULTS", "<!-- END PERFORMANCE RESULTS -->"


def load_runs(pattern):
    runs = []
    for path in sorted(glob.glob(pattern)):
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            print(f"bench-readme: {path}: {e}", file=sys.stderr)
            continue
        if d.get("gobench"):
            d["_path"] = path
            runs.append(d)
    return runs


def by_key(run):
    return {(r["benchmark"], r["vcpus"]): r for r in run["gobench"]}


def med_range(vals):
    v = [x for x in vals if x is not None]
    if not v:
        return None
    return statistics.median(v), min(v), max(v)


def fmt_ratio(t, with_range):
    if not t:
        return "-"
    m, lo, hi = t
    return f"{m:.2f} [{lo:.2f}-{hi:.2f}]" if with_range else f"{m:.2f}"


def summary_lines(run, runs, enough):
    rows = run["gobench"]
    out = []
    for cpus in sorted({r["vcpus"] for r in rows}):
        rs = [r for r in rows if r["vcpus"] == cpus]
        both = [r for r in rs if r.get("goro_ns") and r.get("go_ns")]
        ins = [r["goro_go_insn"] for r in rs if r.get("goro_go_insn") is not None]
        line = (f"- **{cpus} vCPU{'s' if cpus > 1 else ''}:** {len(both)} of Go's benchmarks ran on both sides; "
                f"instructions per op: {sum(1 for x in ins if x <= 0.25)} of {len(ins)} at or under 0.25x Go's, "
                f"{sum(1 for x in ins if x > 1)} above Go's, median ratio {statistics.median(ins):.2f}" if ins else
                f"- **{cpus} vCPUs:** {len(both)} of Go's benchmarks ran on both sides (no instruction counts)")
        if enough:
            # faster in time: the row's ratio below 1 in every run
            keys = [(r["benchmark"], cpus) for r in both]
            per = {k: [by_key(x).get(k, {}).get("goro_go_time") for x in runs] for k in keys}
            always = sum(1 for v in per.values() if v and all(x is not None and x < 1 for x in v))
            never = sum(1 for v in per.values() if v and all(x is not None and x >= 1 for x in v))
            line += (f"; time: faster than Go in all {len(runs)} runs on {always}, "
                     f"slower in all on {never}, the rest either way")
        out.append(line + ".")
    return out


def table(run, runs, enough):
    keys = by_key(run)
    cpus_list = sorted({r["vcpus"] for r in run["gobench"]})
    hdr = ["benchmark"] + [f"{c} vCPU{'s' if c > 1 else ''}: insn goro/Go" for c in cpus_list[:1]] + \
          [f"{c} vCPU{'s' if c > 1 else ''}: time goro/Go" for c in cpus_list]
    lines = ["| " + " | ".join(hdr) + " |", "|" + " --- |" * len(hdr)]
    for name in ROWS:
        if not any((name, c) in keys for c in cpus_list):
            continue
        r1 = keys.get((name, cpus_list[0]), {})
        ins = r1.get("goro_go_insn")
        cells = [name, "-" if ins is None else f"{ins:.2f} ({r1['goro_insn']:.0f}/{r1['go_insn']:.0f})"]
        for c in cpus_list:
            if enough:
                t = med_range([by_key(x).get((name, c), {}).get("goro_go_time") for x in runs])
                cells.append(fmt_ratio(t, True))
            else:
                cells.append("-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


# Issue 17's targets: kernel entry to every core online, median of 5 boots.
BOOT_TARGET_US = {"8": 2000, "64": 5000}


def boot_lines(runs):
    boots = []
    for x in runs:
        path = os.path.join(os.path.dirname(x["_path"]), os.path.basename(x["_path"]).replace("results-", "boot-"))
        try:
            with open(path) as f:
                boots.append(json.load(f))
        except (OSError, ValueError):
            pass
    if not boots:
        return []
    parts, verdicts = [], []
    for cpus in ("1", "2", "8", "32", "64"):
        meds = [b["goro"][cpus]["summary"].get("entry_to_online_us") for b in boots if cpus in b.get("goro", {})]
        meds = [m for m in meds if m is not None]
        t = med_range(meds)
        if not t:
            continue
        parts.append(f"{cpus} vCPU{'s' if cpus != '1' else ''} {t[0] / 1000:.2f} ms "
                     f"[{t[1] / 1000:.2f}-{t[2] / 1000:.2f}]")
        if cpus in BOOT_TARGET_US:
            within = sum(1 for m in meds if m <= BOOT_TARGET_US[cpus])
            verdicts.append(f"{BOOT_TARGET_US[cpus] // 1000} ms at {cpus} vCPUs, met in {within} of {len(meds)}")
    if not parts:
        return []
    return [f"- **Boot** (`make bench-boot`: kernel entry to every core online, TCG, median of 5 boots; over the "
            f"{len(boots)} run{'s' if len(boots) != 1 else ''}: median [range]): " + ", ".join(parts) +
            (". The targets: " + "; ".join(verdicts) if verdicts else "") +
            ". Under TCG the time is QEMU's: translating the boot's code, and starting the APs one after "
            "another ([docs/boot.md](docs/boot.md#measurements))."]


def render(runs, min_runs):
    run = runs[-1]
    enough = len(runs) >= min_runs
    m = run.get("machine", "")
    out = [BEGIN + " (tools/bench/bench_readme.py writes this part from build/bench/runs/) -->", "",
           f"The last full `make bench` ({os.path.basename(run['_path'])}; {run.get('seconds', 0) / 60:.0f} "
           f"min for its benchmark sections, after the boot section; {m}). Ratios are goro/Go: under 1, goro does less. "
           "Instructions per op come from the QEMU plugin and do not move with the host's load; "
           "time ratios are the median over "
           + (f"{len(runs)} full runs on this machine, with their range [min-max]." if enough else
              f"the runs, but only {len(runs)} exist (at least {min_runs} are needed): no time figure is quoted."),
           ""]
    out += summary_lines(run, runs, enough)
    out += boot_lines(runs)
    out += ["", "Selected rows (every row, its spread over the counts and Go native: "
            "`build/bench/results.json`, or `make bench` prints them; "
            "[docs/performance.md](docs/performance.md) says how each is taken):", ""]
    out += table(run, runs, enough)
    out += ["", END]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--runs", default=os.path.join(ROOT, "build", "bench", "runs", "results-*.json"),
                    help="the archived runs (glob; the newest is the run shown)")
    ap.add_argument("--min-runs", type=int, default=3, help="runs needed before time figures are quoted (3)")
    ap.add_argument("--readme", default="", help="replace the section in this file instead of printing it")
    opts = ap.parse_args()
    runs = load_runs(opts.runs)
    if not runs:
        print(f"bench-readme: no full make bench run under {opts.runs}", file=sys.stderr)
        return 1
    text = render(runs, opts.min_runs)
    if not opts.readme:
        sys.stdout.write(text)
        return 0
    with open(opts.readme) as f:
        readme = f.read()
    pat = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n", re.S)
    if not pat.search(readme):
        print(f"bench-readme: {opts.readme} has no '{BEGIN} ... {END}' section", file=sys.stderr)
        return 1
    with open(opts.readme, "w") as f:
        f.write(pat.sub(lambda _: text, readme, count=1))
    print(f"bench-readme: {opts.readme}: {len(runs)} run(s), the newest {os.path.basename(runs[-1]['_path'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
