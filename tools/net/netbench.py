#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench-net: goro's servers beside the systems a user would pick
instead, under the same QEMU TCG, vCPU count and NIC, measured by clients
no one here wrote and by the open-loop load generator.

Servers (each in its own guest, one at a time, tools/net/guest.py):
  http       goro's httpd (app=httpd) and Go 1.19's net/http (httpd-go)
  memcache   goro's kvd (app=kvd), the Go memcached-protocol server
             (kvd-go) and memcached 1.6 (Debian's, epoll and threads)
at 1, 2 and 4 vCPUs (goro's rows say "not yet" when the image lacks the
app: no fake number stands in), reached through a tap device in a namespace of our
own (--net tap, root) or user networking (--net user, labelled: its
port forward's backlog of one costs connect timeouts under 64 connects).

Per server and vCPU count:
  wrk        wrk -t2 -c64 -d10s --latency, every answer checked
             (tools/net/wrk_verify.lua): requests/s, p50/p90/p99, errors
  memaslap   memcaslap -T2 -c64 -t10s, every get verified (-v 1.0): ops/s
  memcslap   memcslap with its defaults (one connection, 10,000 keys: set,
             then get) and its get at --concurrency=64: keys/s, errors
  sweep      the same clients over the usual connection counts, looking for
             a cliff: wrk -t2 -d10s at -c 10 (its default), 100, 400, 1000;
             memcaslap -T2 -t10s at -c 16 (its default), 64, 256, 1024
  curve      tools/net/loadgen open loop, Poisson arrivals, at offered
             loads common to every server of a protocol (5% to 115% of the
             fastest one's closed-loop rate above; HTTP: Skyloft's bimodal
             /work?us= mix; memcache: 90% gets of preloaded keys, 10% sets):
             p50/p99/p99.9 and the achieved rate per point, until two points
             in a row are saturated; a point counts only with 0 errors.
             Saturation: the first offered load whose achieved rate falls
             under 95% of it.

Results: BUILD/bench/net/results.json, BUILD/bench/net/netbench.txt (Go's
benchmark format), the plot docs/img/net-latency.png (--plot). Each
guest's console stays in BUILD/bench/net/. --quick: 5 s runs, fewer
points. --report-only reprints the last results.

Examples:
    tools/net/netbench.py --net tap                  # what make bench-net runs
    tools/net/netbench.py --servers httpd-go --cpus 2 --sections wrk
    tools/net/netbench.py --report-only
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import figures  # noqa: E402
from tools.net.guest import Guest, GORO_APPS, PEERS  # noqa: E402
from tools.net.loadpoint import is_saturated, saturation  # noqa: E402
from tools.run import qemu  # noqa: E402

# server -> (protocol, goro app or None)
SERVERS = {
    "goro-httpd": ("http", "httpd"),
    "httpd-go": ("http", None),
    "goro-kvd": ("memcache", "kvd"),
    "kvd-go": ("memcache", None),
    "memcached": ("memcache", None),
}
# Offered loads, as fractions of the fastest server's closed-loop rate.
CURVE_FRACTIONS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.0, 1.15)
CURVE_FRACTIONS_QUICK = (0.1, 0.35, 0.65, 0.9, 1.15)
# Connection counts of the sweep: wrk's default and its README's usual
# counts; memcaslap's default concurrency and the powers of 4 above it.
SWEEP_CONNS = {"http": (10, 100, 400, 1000), "memcache": (16, 64, 256, 1024)}
# A cliff: a step up in connections that loses this much of the rate, or
# that brings the first errors.
CLIFF_DROP = 0.3


def log(msg):
    print(f"netbench: {msg}", file=sys.stderr, flush=True)


# ---- parsing the clients' reports -------------------------------------------------------------

UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1e6}


def parse_wrk(text):
    r"""wrk --latency's report (with wrk_verify.lua) -> dict. A report with
    no verdict from the script, or no request answered, counts as -1 errors
    (never as 0).

    >>> out = '''  Latency Distribution
    ...      50%  376.00ms
    ...      99%    1.40s
    ...   1834 requests in 10.03s, 227.26KB read
    ...   Socket errors: connect 0, read 2, write 0, timeout 5
    ... Requests/sec:    182.81
    ... VERIFY bad=0'''
    >>> r = parse_wrk(out); (r["rps"], r["requests"], r["p50_us"], r["p99_us"], r["errors"])
    (182.81, 1834, 376000.0, 1400000.0, 7)
    >>> parse_wrk(out.replace("VERIFY bad=0", ""))["errors"]
    -1
    >>> parse_wrk("  0 requests in 10.00s, 0B read\nRequests/sec:      0.00\nVERIFY bad=0")["errors"]
    -1
    """
    r = {"rps": None, "errors": 0, "raw_errors": {}}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if m:
        r["rps"] = float(m.group(1))
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+),", text)
    if m:
        r["requests"] = int(m.group(1))
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if m:
            r[f"p{pct}_us"] = float(m.group(1)) * UNIT_US[m.group(2)]
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        r["raw_errors"].update(zip(("connect", "read", "write", "timeout"), map(int, m.groups())))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        r["raw_errors"]["non2xx"] = int(m.group(1))
    m = re.search(r"VERIFY bad=(\d+)", text)
    r["raw_errors"]["bad_body"] = int(m.group(1)) if m else -1
    if r["raw_errors"]["bad_body"] < 0 or not r["rps"]:
        r["errors"] = -1                    # no verdict (or nothing answered): does not count
    else:
        # A bad body includes the non-2xx answers: count them once.
        e = dict(r["raw_errors"])
        e.pop("non2xx", None)
        r["errors"] = sum(e.values())
    return r


def parse_memaslap(text):
    r = {"ops": None, "errors": 0}
    m = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text)
    if m:
        r["ops"], r["seconds"] = int(m.group(2)), float(m.group(1))
        r["tps"] = int(m.group(3))
    for k in ("get_misses", "verify_misses", "verify_failed"):
        m = re.search(rf"^{k}: (\d+)", text, re.M)
        r[k] = int(m.group(1)) if m else -1
    r["errors"] = -1 if not r["ops"] or r["verify_failed"] < 0 else \
        r["get_misses"] + r["verify_misses"] + r["verify_failed"]
    return r


def parse_loadgen(text):
    r = {}
    for line in text.splitlines():
        w = line.split()
        if not w or w[0] not in ("LOADGEN", "LAT"):
            continue
        kv = dict(x.split("=", 1) for x in w[1:] if "=" in x)
        for k, v in kv.items():
            try:
                kv[k] = float(v) if "." in v else int(v)
            except ValueError:
                pass
        if w[0] == "LOADGEN":
            r.update(kv)
        else:
            r.setdefault("lat", {})[kv["class"]] = kv
    return r


# ---- running ------------------------------------------------------------------------------------


def loadgen_bin(build):
    path = os.path.join(build, "tools", "loadgen")
    if not os.path.exists(path):
        subprocess.run(["make", "-s", f"BUILD={build}", "loadgen"], cwd=ROOT, check=True)
    return os.path.abspath(path)


def run_client(g, argv, timeout, what=None):
    """g.client(argv): its stdout, its stdout and stderr together, and
    facts of the run: qemu_own, QEMU's own time over the run's wall time
    (tools/run/qemu.py's own_seconds: the wall time less the longest wait
    of any one of QEMU's threads for a host CPU; 1.0 when none waited; the
    client's threads compete for the same CPUs, so a quiet host's runs
    read under 1 too, and a loaded one's far under), and
    timeout, why it was ended when it was still running after timeout
    seconds (what: the client's name there). That run then gives no
    verdict, and the guest goes on to the next: a bound outlasted is that
    run's failure, not the server's (memcslap's fixed count of round trips
    on a loaded host)."""
    base, t0 = qemu.cpu_waits(g.proc.pid), time.monotonic()
    facts = {}
    try:
        p = g.client(argv, timeout=timeout)
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        err = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        facts["timeout"] = f"{what or os.path.basename(argv[0])} timed out after {timeout} s"
        log(f"  {g.label} {g.cpus} vCPU: {facts['timeout']}")
    wall = time.monotonic() - t0
    facts["qemu_own"] = round(qemu.own_seconds(wall, qemu.cpu_waits(g.proc.pid), base) / wall, 3)
    return out, out + err, facts


def run_wrk(g, opts, conns=64):
    out, both, facts = run_client(g, ["env", "WRK_EXPECT=Hello, World!", "wrk", "-t2", f"-c{conns}",
                                      f"-d{opts.seconds}s", "--latency", "-s",
                                      os.path.join(ROOT, "tools", "net", "wrk_verify.lua"), "http://{addr}/"],
                                  opts.seconds * 4 + 60, "wrk")
    r = parse_wrk(out)
    r["out"] = both
    r.update(facts)
    if "timeout" in facts:
        r["errors"] = -1
    return r


def server_stats(g):
    """An HTTP server's GET /stats, "name value" lines, as a dict of ints."""
    p = g.client(["curl", "-s", "-m", "60", "http://{addr}/stats"], timeout=90)
    return {w[0]: int(w[1]) for w in (line.split() for line in p.stdout.splitlines())
            if len(w) == 2 and w[1].isdigit()}


def run_memaslap(g, opts, conns=64):
    # 64 connections over 2 threads, a window of 2k keys each (memaslap
    # wants the k): 131,072 keys, every get verified against what was set.
    out, both, facts = run_client(g, ["memcaslap", "-s", "{addr}", "-T", "2", "-c", str(conns), "-t",
                                      f"{opts.seconds}s", "-X", "32", "-w", "2k", "-v", "1.0"],
                                  opts.seconds * 4 + 60)
    r = parse_memaslap(out)
    r["out"] = both
    r.update(facts)
    if "timeout" in facts:
        r["errors"] = -1
    return r


def parse_memcslap(text, keys):
    r"""memcslap's report: the seconds its test took over keys keys, and the
    errors it printed (one "Fatal error" line each, or fewer keys done).
    The get test loads its keys first; that line is not the test's.

    >>> out = ("Time to set           10000 keys:                     0.182 seconds.\n"
    ...        "Time to get           10000 keys by    1 threads:     0.415 seconds.\n")
    >>> r = parse_memcslap(out, 10000); (r["keys"], r["seconds"], round(r["rate"]), r["errors"])
    (10000, 0.415, 24096, 0)
    >>> out = ("Fatal error for key 'y46X': SERVER HAS FAILED AND IS DISABLED UNTIL TIMED RETRY\n"
    ...        "Time to get               0 keys by    1 threads:     0.484 seconds.\n")
    >>> parse_memcslap(out, 10000)["errors"]
    10001
    >>> parse_memcslap("can't connect", 10000)["errors"]
    -1
    """
    r = {"keys": None, "seconds": None, "errors": len(re.findall(r"^Fatal error", text, re.M))}
    m = re.search(r"^Time to (?:get|set)\s+(\d+) keys by\s+\d+ threads:\s+([\d.]+) seconds", text, re.M)
    if m:
        r["keys"], r["seconds"] = int(m.group(1)), float(m.group(2))
        if r["keys"] != keys:
            r["errors"] += keys - r["keys"]
        r["rate"] = r["keys"] / r["seconds"] if r["seconds"] else None
    if r["keys"] is None:
        r["errors"] = -1
    return r


# memcslap's bound: its runs are a fixed count of keys, each a round trip
# on one connection, and take as long as the host makes them.
MEMCSLAP_TIMEOUT = 600


def run_memcslap(g, opts):
    """libmemcached's memcslap as it comes: its defaults (one connection,
    10,000 keys set then read back), then its get at 64 connections of
    1,000 keys each. Each get test first sets its 10,000 keys over one
    connection, as the set test does: after a set test past the bound they
    are not run (they would outlast it too)."""
    out, late = {}, None
    for name, argv, keys in (("set", ["--test=set"], 10000), ("get", ["--test=get"], 10000),
                             ("get64", ["--test=get", "--concurrency=64", "--execute-number=1000"], 64000)):
        if late:
            out[name] = {"keys": None, "seconds": None, "errors": -1, "not_run": f"the set test {late}"}
            continue
        _, both, facts = run_client(g, ["memcslap", "--servers={addr}"] + argv, MEMCSLAP_TIMEOUT,
                                    " ".join(["memcslap"] + argv))
        r = parse_memcslap(both, keys)
        r["out"] = both[-3000:]
        r.update(facts)
        if "timeout" in facts:
            r["errors"] = -1
            late = facts["timeout"][facts["timeout"].index("timed out"):]
        out[name] = r
    return out


def mark_cliffs(pts):
    """Marks each sweep point whose step up lost CLIFF_DROP of the rate, or
    brought the first errors.

    >>> pts = [{"rate": 100, "errors": 0}, {"rate": 90, "errors": 0}, {"rate": 50, "errors": 0},
    ...        {"rate": 60, "errors": 3}]
    >>> [p.get("cliff") for p in mark_cliffs(pts)]
    [None, False, True, True]
    """
    for prev, p in zip(pts, pts[1:]):
        p["cliff"] = bool((prev["rate"] and (p["rate"] or 0) < (1 - CLIFF_DROP) * prev["rate"])
                          or (prev["errors"] == 0 and p["errors"] != 0))
    return pts


def run_sweep(g, proto, opts):
    """The closed-loop client at each of the protocol's usual connection
    counts; a cliff is a step that loses CLIFF_DROP of the rate or brings
    the first errors."""
    pts = []
    for c in SWEEP_CONNS[proto]:
        r = run_wrk(g, opts, c) if proto == "http" else run_memaslap(g, opts, c)
        rate = r.get("rps") if proto == "http" else r.get("tps")
        pts.append({"conns": c, "rate": rate, "errors": r["errors"], "p99_us": r.get("p99_us"),
                    "out": r.get("out", "")[-1500:]})
        log(f"  {g.label} {g.cpus} vCPU: {c} connections: {rate} /s, errors {r['errors']}")
    return mark_cliffs(pts)


def curve_argv(proto, rate, opts, lg):
    argv = [lg, "-q", "-R", str(int(rate)), "-c", "64", "-t", "2", "-d", str(opts.curve_seconds), "--drain", "5"]
    if proto == "http":
        argv += ["--bimodal"]
    else:
        argv += ["-P", "memcache", "--keys", "10000", "--preload", "--hits-only"]
    return argv + ["{addr}"]


def run_curve(g, proto, grid, opts):
    """The open-loop points of grid (offered rates), lowest first, until
    two in a row are saturated: beyond that a server only queues."""
    lg = loadgen_bin(opts.build)
    points, saturated = [], 0
    for rate in grid:
        out, both, facts = run_client(g, curve_argv(proto, rate, opts, lg), opts.curve_seconds * 4 + 120)
        r = parse_loadgen(out)
        if "offered_rps" not in r or "timeout" in facts:
            r = {"offered_rps": rate, "errors": -1, "out": both[-2000:]}
        r.update(facts)
        points.append(r)
        cls = "short" if proto == "http" else "all"
        lat = r.get("lat", {}).get(cls, {})
        log(f"  {g.label} {g.cpus} vCPU: offered {rate:.0f}/s achieved {r.get('achieved_rps', 0):.0f}/s "
            f"p50 {lat.get('p50_us', 0):.0f} us p99 {lat.get('p99_us', 0):.0f} us errors {r.get('errors')}")
        saturated = saturated + 1 if is_saturated(r) else 0
        if saturated == 2:
            break
    return points


def grid_for(caps, opts):
    """The offered loads every server of a protocol is measured at: the
    same for all, so that their curves compare point by point, up past
    the fastest one's closed-loop rate."""
    hi = max(caps)
    rates = [max(10.0, round(hi * f)) for f in (CURVE_FRACTIONS_QUICK if opts.quick else CURVE_FRACTIONS)]
    return sorted(set(rates))           # a slow server's lowest fractions all round up to 10/s


def boot(server, cpus, opts, rec, body, key="failed"):
    """Boots server's guest and runs body(guest) in it; a failure lands in
    rec[key], with the end of the guest's console (results.json keeps it:
    a guest's directory may be gone by the time someone asks why)."""
    proto, app = SERVERS[server]
    kw = {"goro": opts.goro, "app": app} if app else {"peer": server}
    g = None
    try:
        g = Guest(opts.build, cpus, opts.net, opts.name, nic=opts.nic, ready_timeout=opts.ready_timeout, **kw)
        with g:
            rec.setdefault("ready_s", []).append(round(g.ready_s, 1))
            rec.setdefault("ready_own_s", []).append(round(g.ready_own_s, 1))
            body(g)
            rec.setdefault("consoles", []).append(g.console)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        rec[key] = str(e)
        rec[key + "_console"] = g.console_text()[-4000:] if g else ""
        log(f"{server} {cpus} vCPU: FAILED: {e}")
        for line in rec[key + "_console"].strip().splitlines()[-8:]:
            log(f"  console: {line}")


def closed_loop(server, cpus, opts):
    proto, app = SERVERS[server]
    rec = {"server": server, "proto": proto, "vcpus": cpus, "net": opts.net, "nic": opts.nic,
           "loadavg_before": qemu.loadavg(), "date": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if app and not opts.goro:
        rec["skipped"] = "not yet"
        rec["why"] = f"no goro image with app={app}"
        return rec

    def body(g):
        if proto == "http" and "wrk" in opts.sections:
            rec["wrk"] = repeated(lambda: run_wrk(g, opts), "rps", opts.repeat)
            # The server's own counters after the runs: Go's peer reports
            # Linux's listen-queue drops, which tell a full backlog from a
            # slow answer when wrk counts timeouts.
            rec["stats"] = server_stats(g)
            log(f"{server} {cpus} vCPU: wrk {rec['wrk'].get('rps')} req/s, p99 "
                f"{rec['wrk'].get('p99_us')} us, errors {rec['wrk']['errors']}, QEMU's own time "
                f"{rec['wrk'].get('qemu_own')} of the wall's, server: {rec['stats']}")
        if proto == "memcache" and "memaslap" in opts.sections:
            rec["memaslap"] = repeated(lambda: run_memaslap(g, opts), "tps", opts.repeat)
            log(f"{server} {cpus} vCPU: memaslap {rec['memaslap'].get('tps')} ops/s, errors "
                f"{rec['memaslap']['errors']}, QEMU's own time {rec['memaslap'].get('qemu_own')} of the wall's")
        if proto == "memcache" and "memcslap" in opts.sections:
            rec["memcslap"] = run_memcslap(g, opts)
            log(f"{server} {cpus} vCPU: memcslap " + ", ".join(
                f"{k} {v.get('rate') or 0:.0f} keys/s (errors {v['errors']})"
                + (f" {v['timeout']}" if v.get("timeout") else " not run" if v.get("not_run") else "")
                for k, v in rec["memcslap"].items()))
        if "sweep" in opts.sections:
            rec["sweep"] = run_sweep(g, proto, opts)
    if any(s in opts.sections for s in ("wrk", "memaslap", "memcslap", "sweep")):
        boot(server, cpus, opts, rec, body)
    rec["loadavg_after"] = qemu.loadavg()
    return rec


def repeated(run, key, n):
    """run() n times in the same guest: the run with the median rate, the
    rates of all (the spread) in "rates", and the errors of all added up
    (-1 when any run had no verdict)."""
    rs = [run() for _ in range(n)]
    errs = [r["errors"] for r in rs]
    ok = sorted((r for r in rs if r.get(key)), key=lambda r: r[key])
    med = dict(ok[len(ok) // 2]) if ok else dict(rs[0])
    med["rates"] = [r.get(key) for r in rs]
    med["errors"] = -1 if -1 in errs else sum(errs)
    return med


def capacity(rec):
    return (rec.get("wrk") or {}).get("rps") or (rec.get("memaslap") or {}).get("tps")


def open_loop(rec, grid, opts):
    def body(g):
        rec["curve"] = run_curve(g, rec["proto"], grid, opts)
        rec["saturation_rps"] = saturation(rec["curve"])
    rec["grid"] = grid
    boot(rec["server"], rec["vcpus"], opts, rec, body, key="curve_failed")
    rec["loadavg_after_curve"] = qemu.loadavg()


def run_floor(cpus, opts):
    """The L2 reflector's frames per second at this vCPU count
    (tools/bench/l2floor.py: app=l2reflect, a window of frames in
    flight), over the same kind of path as the servers: a multiqueue tap in
    a namespace, or QEMU's dgram backend for --net user. Three runs, the
    median the floor, as a server's row is its median of three."""
    tool = os.path.join(ROOT, "tools", "bench", "l2floor.py")
    if not os.path.exists(tool):
        log(f"floor, {cpus} vCPU: not yet (no tools/bench/l2floor.py: the L2 reflector is not in this tree)")
        return {"vcpus": cpus, "not_yet": "no L2 reflector in this tree"}
    cmd = [sys.executable, tool, "--smp", str(cpus), "--runs", "3",
           "--frames", "20000" if opts.quick else "50000"]
    if opts.goro:
        cmd += ["--elf", opts.goro]         # the servers' image, wherever it was built
    if opts.net == "tap":
        cmd += ["--tap", "--ns-prefix", f"{opts.name}-l2f"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=dict(os.environ, BUILD=opts.build))
    lines = re.findall(r"^BENCH l2floor .*$", p.stdout, re.M)
    if not lines:
        log(f"floor, {cpus} vCPU: no BENCH line ({(p.stdout + p.stderr).strip()[-300:]})")
        return {"vcpus": cpus, "failed": (p.stdout + p.stderr)[-2000:]}
    runs = [(dict(w.split("=", 1) for w in line.split() if "=" in w), line) for line in lines]
    runs.sort(key=lambda r: float(r[0].get("pps", 0)))
    kv, line = runs[len(runs) // 2]
    log(f"floor, {cpus} vCPU: {kv.get('pps')} frames/s (runs: {', '.join(r[0].get('pps', '?') for r in runs)})")
    return {"vcpus": cpus, "pps": float(kv.get("pps", 0)), "line": line, "lines": lines}


def run_all(opts):
    """Per vCPU count: the floor, every server's closed loop, then every
    server's open-loop curve on its protocol's common grid."""
    runs, floors = [], []
    for cpus in [int(c) for c in opts.cpus.split(",")]:
        if "floor" in opts.sections:
            floors.append(run_floor(cpus, opts))
        recs = [closed_loop(s, cpus, opts) for s in opts.servers.split(",")]
        if "curve" in opts.sections:
            for proto in ("http", "memcache"):
                # Every server of the protocol, also one whose closed loop
                # failed: the curve boots a guest of its own, and a server
                # left out of it leaves the figure without its column.
                mine = [r for r in recs if r.get("proto") == proto and not r.get("skipped")]
                caps = [capacity(r) for r in mine if capacity(r)] or ([opts.capacity] if opts.capacity else [])
                if not caps:
                    continue
                grid = grid_for(caps, opts)
                for r in mine:
                    open_loop(r, grid, opts)
        runs += recs
    return runs, floors


# ---- reporting ------------------------------------------------------------------------------------


def gobench_lines(res):
    """Go's benchmark format: one line per measurement."""
    out = ["goarch: amd64", "pkg: goro/bench/net"]
    for r in res["runs"]:
        name = f"{r['server']}/vcpus={r['vcpus']}"
        w = r.get("wrk")
        if w and w.get("rps"):
            out.append(f"BenchmarkNetWrk/{name} {w.get('requests', 0)} {1e9 / w['rps']:.0f} ns/op "
                       f"{w['rps']:.0f} req/s {w.get('p50_us', 0):.0f} p50-us {w.get('p99_us', 0):.0f} p99-us "
                       f"{w['errors']} errors")
        m = r.get("memaslap")
        if m and m.get("tps"):
            out.append(f"BenchmarkNetMemaslap/{name} {m['ops']} {1e9 / m['tps']:.0f} ns/op {m['tps']} ops/s "
                       f"{m['errors']} errors")
        for k, m in (r.get("memcslap") or {}).items():
            if m.get("rate"):
                out.append(f"BenchmarkNetMemcslap/{name}/{k} {m['keys']} {1e9 / m['rate']:.0f} ns/op "
                           f"{m['rate']:.0f} keys/s {m['errors']} errors")
        for p in r.get("sweep", []):
            if p.get("rate"):
                out.append(f"BenchmarkNetSweep/{name}/conns={p['conns']} 1 {1e9 / p['rate']:.0f} ns/op "
                           f"{p['rate']:.0f} ops/s {p['errors']} errors")
        for p in r.get("curve", []):
            cls = "short" if r["proto"] == "http" else "all"
            lat = p.get("lat", {}).get(cls, {})
            if p.get("achieved_rps"):
                out.append(f"BenchmarkNetOpenLoop/{name}/offered={p['offered_rps']:.0f} {lat.get('n', 0)} "
                           f"{1e9 / p['achieved_rps']:.0f} ns/op {p['achieved_rps']:.0f} achieved-rps "
                           f"{lat.get('p50_us', 0):.0f} p50-us {lat.get('p99_us', 0):.0f} p99-us "
                           f"{lat.get('p999_us', 0):.0f} p999-us {p.get('errors', -1)} errors")
    return out


def load(r):
    """The host's 1-minute load average before and after the server's runs:
    under TCG every rate is wall-clock, and moves with what else runs. Then
    the closed-loop run's qemu_own (run_client): how much of its wall time
    the guest was not held back, where the load average counts every task
    of the host, blocked ones included."""
    a, b = r.get("loadavg_before"), r.get("loadavg_after_curve") or r.get("loadavg_after")
    own = (r.get("wrk") or r.get("memaslap") or {}).get("qemu_own")
    return (f"{a[0]}/{b[0]}" if a and b else "-") + (f", QEMU {own:.0%}" if own is not None else "")


def table(res):
    floor = {f["vcpus"]: f.get("pps") for f in res.get("floors", []) if f.get("pps")}
    rows = ["| server | vCPUs | net | closed loop [spread] | of the floor | p50 | p99 | errors | saturation (open loop) "
            "| host load |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c, pps in sorted(floor.items()):
        rows.append(f"| L2 reflector (floor) | {c} | | {pps:,.0f} frames/s | 1 | | | | | |")
    for f in res.get("floors", []):
        if f.get("not_yet"):
            rows.append(f"| L2 reflector (floor) | {f['vcpus']} | | not yet ({f['not_yet']}) | | | | | | |")
    for r in res["runs"]:
        if r.get("skipped") or r.get("failed"):
            what = f"{r['skipped']} ({r['why']})" if r.get("why") else r.get("skipped") or "failed"
            rows.append(f"| {r['server']} | {r['vcpus']} | - | {what} | | | | | | |")
            continue
        w, m = r.get("wrk"), r.get("memaslap")
        spread = (lambda x: "" if len(x.get("rates") or []) < 2 or None in x["rates"] else
                  f" [{min(x['rates']):,.0f}-{max(x['rates']):,.0f}]")
        if w:
            closed = f"{w.get('rps') or 0:,.0f} req/s{spread(w)} (wrk)"
            p50, p99, err = w.get("p50_us"), w.get("p99_us"), w["errors"]
        elif m:
            closed, p50, p99, err = f"{m.get('tps') or 0:,} ops/s{spread(m)} (memaslap)", None, None, m["errors"]
        else:
            closed, p50, p99, err = "-", None, None, "-"
        rate, pps = capacity(r), floor.get(r["vcpus"])
        frac = f"{rate / pps:.2f}" if rate and pps else "-"
        fmt = (lambda v: "-" if v is None else f"{v / 1000:.1f} ms" if v >= 1000 else f"{v:.0f} us")
        sat = r.get("saturation_rps")
        rows.append(f"| {r['server']} | {r['vcpus']} | {r['net']} | {closed} | {frac} | {fmt(p50)} | {fmt(p99)} | {err} | "
                    f"{'-' if sat is None else f'{sat:,.0f}/s'} | {load(r)} |")
    # The archive's renderer, over the archive's shape of these runs.
    ms = figures.memcslap_table(figures.summarize_net(res)["rows"])
    if ms:
        rows += [""] + ms
    sw = [r for r in res["runs"] if r.get("sweep")]
    if sw:
        rows += ["", "| server | vCPUs | " + " | ".join(["connections: rate (errors)"] * 4) + " |",
                 "| --- | --- | --- | --- | --- | --- |"]
        for r in sw:
            cells = [f"{p['conns']}: {p['rate'] or 0:,.0f}/s ({p['errors']}){' CLIFF' if p.get('cliff') else ''}"
                     for p in r["sweep"]]
            rows.append(f"| {r['server']} | {r['vcpus']} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


COLORS = {"goro-httpd": "tab:blue", "httpd-go": "tab:orange", "goro-kvd": "tab:blue", "kvd-go": "tab:orange",
          "memcached": "tab:green"}


def plot(res, path):
    """p50 and p99 (short requests for HTTP) against offered load, one panel
    per protocol and vCPU count; each server's saturation a dashed line.
    Points with errors do not count and are not drawn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib: no plot (make deps-bench installs python3-matplotlib; run Debian's python3)")
        return False
    runs = [r for r in res["runs"] if r.get("curve")]
    protos = [p for p in ("http", "memcache") if any(r["proto"] == p for r in runs)]
    cpus = sorted({r["vcpus"] for r in runs})
    if not protos or not cpus:
        return False
    fig, axes = plt.subplots(len(protos), len(cpus), figsize=(max(6.0, 4.2 * len(cpus)), 3.6 * len(protos)),
                             squeeze=False)
    for i, proto in enumerate(protos):
        for j, c in enumerate(cpus):
            ax = axes[i][j]
            for r in (r for r in runs if r["proto"] == proto and r["vcpus"] == c):
                cls = "short" if proto == "http" else "all"
                pts = [(p["offered_rps"], p["lat"][cls]) for p in r["curve"]
                       if p.get("errors") == 0 and cls in p.get("lat", {})]
                if not pts:
                    continue
                x = [p[0] for p in pts]
                color = COLORS.get(r["server"])
                ax.plot(x, [p[1]["p99_us"] for p in pts], "o-", color=color, label=f"{r['server']} p99")
                ax.plot(x, [p[1]["p50_us"] for p in pts], ".:", color=color, label=f"{r['server']} p50")
                if r.get("saturation_rps"):
                    ax.axvline(r["saturation_rps"], color=color, linestyle="--", linewidth=1)
            ax.set_yscale("log")
            ax.set_xlabel("offered load (requests/s)")
            ax.set_ylabel("latency (us)" + (", short requests" if proto == "http" else ""))
            ax.set_title(f"{'HTTP, bimodal /work' if proto == 'http' else 'memcached protocol'}, {c} vCPU")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle(f"Open-loop latency against offered load (dashed: saturation)\n{res['machine']}, {res['date']}",
                 fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    log(f"plot: {path}")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--goro", default="", help="goro's image (default BUILD/goro.elf when it has the apps)")
    ap.add_argument("--servers", default=",".join(SERVERS), help="comma list (default all)")
    ap.add_argument("--cpus", default="1,2,4")
    ap.add_argument("--net", choices=("tap", "user"), default="tap")
    ap.add_argument("--nic", default="virtio-net-pci")
    ap.add_argument("--name", default="netbench", help="namespace name (default netbench)")
    ap.add_argument("--sections", default="floor,wrk,memaslap,memcslap,sweep,curve")
    ap.add_argument("--seconds", type=int, default=10, help="closed-loop runs (default 10)")
    ap.add_argument("--curve-seconds", type=int, default=8, help="each open-loop point (default 8)")
    ap.add_argument("--capacity", type=float, default=0, help="size the curve by this rate when no closed loop ran")
    ap.add_argument("--repeat", type=int, default=3, help="closed-loop runs per guest: the median counts (default 3)")
    ap.add_argument("--quick", action="store_true", help="5 s runs, fewer points, one closed-loop run")
    # A hang bound, not a measurement, in QEMU's own time (what the host
    # did not withhold): Debian's Linux answers within about 10 s of it.
    ap.add_argument("--ready-timeout", type=int, default=180,
                    help="seconds of QEMU's own time a guest may take to answer (default 180)")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--plot", default="", metavar="PNG",
                    help="draw the curves there (make bench-net: docs/img/net-latency.png)")
    opts = ap.parse_args()
    outdir = os.path.join(opts.build, "bench", "net")
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "results.json")
    if opts.report_only:
        res = json.load(open(path))
    else:
        if opts.quick:
            opts.seconds, opts.curve_seconds, opts.repeat = 5, 5, 1
        opts.sections = opts.sections.split(",")
        elf = opts.goro or os.path.join(opts.build, "goro.elf")
        opts.goro = elf if os.path.exists(elf) and has_apps(elf) else ""
        if not opts.goro:
            log(f"{elf}: no image with app=httpd and app=kvd: goro's rows are skipped")
        t0 = time.time()
        runs, floors = run_all(opts)
        res = {"floors": floors, "machine": f"{os.cpu_count()} host CPUs, qemu {qemu.version()}, -accel tcg -cpu max -m 1G, "
                          f"{opts.nic}, net={opts.net}",
               "date": time.strftime("%Y-%m-%d %H:%M"), "seconds": round(time.time() - t0), "runs": runs}
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
        with open(os.path.join(outdir, "netbench.txt"), "w") as f:
            f.write("\n".join(gobench_lines(res)) + "\n")
    if opts.plot:
        plot(res, opts.plot)
    print(res["machine"])
    print(table(res))
    return 0


def has_apps(elf):
    syms = subprocess.run(["nm", elf], capture_output=True, text=True).stdout
    return all(re.search(rf"\b\w*{a}_main\b", syms) for a in GORO_APPS)


if __name__ == "__main__":
    sys.exit(main())
