#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a failed look for work costs at 1 to 1024 Ps, a wake-up's cross-core
latency beside it, and the same for Go's scheduler in a Linux guest
(docs/performance.md, "Hundreds of cores").

For each vCPU count V (gomaxprocs V, q35, QEMU TCG -cpu max, 8 MiB a vCPU,
at least 1 GiB):

  - goro, app=bench_idle under the insncount plugin: every P but the main
    goroutine's idle, the main goroutine sleeps reps times (500 us), and
    each time its M looks for work and halts. The kernel's probe markers 3
    and 4 (sched_probe_marks, goro.h) bracket each look: the instructions
    between them on the core that looked are one failed look, exactly.
    Markers 1 and 2 bracket the loop: every core's instructions per sleep.
  - goro, app=latency wl=wakeup (schbench's wake-up: a message goroutine
    wakes four workers over channels every 1 ms; a sample is the send to
    the worker running): with V > 1 the workers wake on other cores. Guest
    time under TCG: the host's scheduling of its 2 CPUs among V vCPU
    threads is in it, so it is a figure of this host, not of the kernel.
  - Go 1.19 (--go-cpus, default 64 and 256) in Debian's Linux guest:
    tools/bench/idlelook_go sleeps reps times between its markers 1 and 2:
    every core's instructions per sleep, as goro's figure (Go's runtime,
    user mode, and Linux's kernel, both shown). And tools/bench/latency_go's
    wl=wakeup, as goro's.

    tools/bench/idlelook.py [--build DIR] [--cpus 1,8,64,256,1024] [--go-cpus 64,256] [--reps N]

prints a table row per count and system. --no-wake skips the latency
boots, --go-cpus '' the Linux guest. The rows are also written to
BUILD/bench/idlelook.json (--json), which `make figures-archive` keeps
in docs/data/ for docs/performance.md's table. --keep F carries F's rows
(an earlier run's JSON) for the counts this run did not measure, each
with the date of its run: a full run takes this host hours, so one row
can be measured again without the others. Python 3
standard library, QEMU, Debian's go, kernel and busybox
(tools/deps-bench.sh).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import gobench, peer_guest  # noqa: E402
from tools.bench.linux_guest import GUEST_APPEND, find_kernel, many_cores_argv  # noqa: E402
from tools.run import qemu  # noqa: E402

MARK_RE = re.compile(r"^INSNCOUNT MARK id=(\d+) vcpu=(\d+) total=(\d+) user=(\d+) ")
LAT_RE = re.compile(r"^LAT impl=(?:goro|go) wl=wakeup .*\bp50_ns=(\d+) p99_ns=(\d+)")
SLEEP_US = 500


class Failed(Exception):
    """A configuration that gave no figure: its row says why, the rest run."""


def marks(insn_log):
    """(id, vcpu, the machine's (total, user), that vCPU's own user +
    kernel) of every MARK line, in order."""
    out = []
    with open(insn_log, errors="replace") as f:
        for line in f:
            m = MARK_RE.match(line)
            if not m:
                continue
            vcpu = m.group(2)
            own = re.search(rf" cpu{vcpu}=(\d+)/(\d+)", line)
            out.append((int(m.group(1)), vcpu, (int(m.group(3)), int(m.group(4))),
                        int(own.group(1)) + int(own.group(2)) if own else None))
    return out


def looks(ms):
    """The instructions of each failed look: for each vCPU, a marker 3
    followed by a marker 4 with no other 3 between, the difference of that
    vCPU's own count at the two."""
    pending, samples = {}, []
    for mid, vcpu, _, own in ms:
        if own is None or mid not in (3, 4):
            continue
        if mid == 3:
            pending[vcpu] = own
        elif vcpu in pending:
            samples.append(own - pending.pop(vcpu))
    return samples


def pairs(ms):
    """The machine's (total, user) between each marker 1 and the marker 2
    after it."""
    out, start = [], None
    for mid, _, count, _ in ms:
        if mid == 1:
            start = count
        elif mid == 2 and start is not None:
            out.append((count[0] - start[0], count[1] - start[1]))
            start = None
    return out


def mem_for(cpus):
    return f"{max(1024, 8 * cpus)}M"


def goro_argv(elf, cpus, cmdline):
    return qemu.argv(cpus, mem_for(cpus), machine="q35") + qemu.kernel_boot(elf, cmdline)


def goro_idle(elf, plugin, cpus, reps, outdir, timeout):
    """(the looks' instructions, every core's instructions per sleep)."""
    insn_log = os.path.join(outdir, f"idle-{cpus}.insn.log")
    cmd = goro_argv(elf, cpus, f"app=bench_idle reps={reps} sleep_us={SLEEP_US}") + \
        qemu.plugin_argv(plugin, insn_log)
    status, out, err, secs = qemu.run(cmd, timeout)
    if status != qemu.EXIT_OK or "IDLELOOK impl=goro" not in out:
        raise Failed(f"goro, {cpus} vCPUs: {qemu.describe_status(status)} after {secs:.0f} s{last_words(out, err)}")
    ms = marks(insn_log)
    loop = pairs(ms)
    return looks(ms), loop[0][0] / reps if loop else None


def last_words(out, err):
    """The guest's last console line and QEMU's last complaint, for a
    failed row: where the guest stopped, and why QEMU did.

    >>> last_words("boot\\r\\n[ 48.1] smpboot: native_cpu_up: bad cpu 255\\n",
    ...            "qemu: iotlb_to_section: Assertion failed.\\n")
    "; console: '[ 48.1] smpboot: native_cpu_up: bad cpu 255'; QEMU: 'qemu: iotlb_to_section: Assertion failed.'"
    >>> last_words("", None)
    ''
    """
    said = [l.strip() for l in (out or "").replace("\r", "").splitlines() if l.strip()]
    why = [l.strip() for l in (err or "").splitlines() if l.strip()]
    return "".join(f"; {w}: {x[-1][:200]!r}" for w, x in (("console", said), ("QEMU", why)) if x)


def latency(out, who, cpus):
    m = [x for x in (LAT_RE.match(l) for l in out.replace("\r", "").splitlines()) if x]
    if not m:
        raise Failed(f"{who} wake-up, {cpus} vCPUs: no LAT line")
    return int(m[0].group(1)) / 1000, int(m[0].group(2)) / 1000


def goro_wake(elf, cpus, timeout):
    status, out, _, _ = qemu.run(goro_argv(elf, cpus, "app=latency wl=wakeup ms=1000"), timeout)
    return latency(out, "goro", cpus)


def linux_argv(cpus, initrd):
    return qemu.argv(cpus, mem_for(cpus), machine="q35", exit_device=False, extra=many_cores_argv(cpus)) + \
        ["-kernel", find_kernel(), "-initrd", initrd, "-append", GUEST_APPEND]


def go_build(opts):
    """idlelook-go and latency-go, built with Debian's go."""
    env = gobench.go_env(opts.build)
    outdir = os.path.abspath(os.path.join(opts.build, "bench", "idlelook"))
    os.makedirs(outdir, exist_ok=True)
    bins = {}
    for name, src in (("idlelook-go", "idlelook_go"), ("latency-go", "latency_go")):
        bins[name] = os.path.join(outdir, name)
        subprocess.run(["nice", "-n", "10", "go", "build", "-o", bins[name], "."],
                       cwd=os.path.join(ROOT, "tools", "bench", src), env=env, check=True)
    ver = subprocess.run(["go", "version"], capture_output=True, text=True, env=env).stdout.strip()
    return bins, ver


def go_guest(bins, cpus, body, outdir, timeout, plugin=None, insn_log=None):
    c = peer_guest.busybox_cpio(extra_dirs=("idle",))
    for name, path in bins.items():
        with open(path, "rb") as f:
            c.file(f"idle/{name}", f.read())
    c.file("init", peer_guest.guest_init(body, "idlelook").encode())
    initrd = os.path.join(outdir, f"go-{cpus}.cpio")
    with open(initrd, "wb") as f:
        f.write(c.bytes())
    cmd = linux_argv(cpus, initrd) + (qemu.plugin_argv(plugin, insn_log) if plugin else [])
    status, out, err, secs = qemu.run(cmd, timeout)
    if status != 0 or "### idlelook end" not in out:
        raise Failed(f"Go, {cpus} vCPUs: {qemu.describe_status(status)} after {secs:.0f} s{last_words(out, err)}")
    return out


def go_idle(bins, plugin, cpus, reps, outdir, timeout):
    """Every core's instructions per sleep, and the user-mode part (Go's
    runtime) of them: the program's markers 1 and 2 bracket its loop."""
    insn_log = os.path.join(outdir, f"go-{cpus}.insn.log")
    go_guest(bins, cpus, f"/idle/idlelook-go -n {reps} -sleep_us {SLEEP_US}", outdir, timeout, plugin, insn_log)
    p = pairs(marks(insn_log))
    if len(p) != 1:
        raise Failed(f"Go, {cpus} vCPUs: {len(p)} marker pairs, want 1")
    return p[0][0] / reps, p[0][1] / reps


def go_wake(bins, cpus, outdir, timeout):
    out = go_guest(bins, cpus, "/idle/latency-go -wl wakeup -ms 1000 2>&1", outdir, timeout)
    return latency(out, "Go", cpus)


def keep_rows(data, earlier):
    """data with earlier's rows for the (system, gomaxprocs) it lacks, each
    dated by its run (and its sleeps when they differ); the rows in
    gomaxprocs order.

    >>> new = {"date": "2026-11-29", "goro": [], "go": [{"gomaxprocs": 256, "per_sleep": 9}]}
    >>> old = {"date": "2026-11-28", "goro": [{"gomaxprocs": 1, "looks": 1}],
    ...        "go": [{"gomaxprocs": 64, "per_sleep": 7}, {"gomaxprocs": 256, "per_sleep": 8}]}
    >>> keep_rows(new, old)["go"]
    [{'gomaxprocs': 64, 'per_sleep': 7, 'date': '2026-11-28'}, {'gomaxprocs': 256, 'per_sleep': 9}]
    >>> keep_rows(new, old)["goro"]
    [{'gomaxprocs': 1, 'looks': 1, 'date': '2026-11-28'}]
    """
    for system in ("goro", "go"):
        have = {r["gomaxprocs"] for r in data[system]}
        kept = [dict(r, date=r.get("date", earlier["date"])) for r in earlier.get(system, [])
                if r["gomaxprocs"] not in have]
        for r in kept:
            if "reps" not in r and earlier.get("reps") != data.get("reps") and "failed" not in r:
                r["reps"] = earlier.get("reps")
        data[system] = sorted(data[system] + kept, key=lambda r: r["gomaxprocs"])
    return data


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--cpus", default="1,8,64,256,1024", help="goro's vCPU counts (gomaxprocs the same)")
    ap.add_argument("--go-cpus", default="64,256", help="Go's vCPU counts, '' for none")
    ap.add_argument("--reps", type=int, default=100, help="sleeps per boot (default 100)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per boot (default 1800)")
    ap.add_argument("--no-wake", dest="wake", action="store_false", help="skip the wake-up latency boots")
    ap.add_argument("--json", help="the rows as JSON (default BUILD/bench/idlelook.json)")
    ap.add_argument("--keep", metavar="F", help="an earlier run's JSON: its rows for the counts not measured")
    opts = ap.parse_args()
    earlier = None
    if opts.keep:
        try:
            with open(opts.keep) as f:
                earlier = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"idlelook: --keep {opts.keep}: {e}")
        if earlier.get("kind") != "idlelook":
            sys.exit(f"idlelook: --keep {opts.keep}: not an idlelook run (kind {earlier.get('kind')!r})")
    counts = [int(c) for c in opts.cpus.split(",") if c]
    go_counts = [int(c) for c in opts.go_cpus.split(",") if c]
    for c in counts + go_counts:
        why = qemu.x2apic_missing(c)
        if why:
            sys.exit(f"idlelook: {c} vCPUs {why}")
    if subprocess.run(["make", "-s", f"BUILD={os.path.abspath(opts.build)}", "insncount"], cwd=ROOT).returncode:
        sys.exit("idlelook: make insncount failed")
    plugin = os.path.join(opts.build, "insncount", "libinsncount.so")
    elf = qemu.image(opts)
    qemu.announce(sys.stdout)
    bins, gover = go_build(opts) if go_counts else (None, None)
    if gover:
        print(gover)
    data = {"kind": "idlelook", "date": time.strftime("%Y-%m-%d"), "qemu": f"QEMU {qemu.version()}",
            "reps": opts.reps, "goro": [], "go": []}
    print("| system | gomaxprocs | failed looks | insns per look, median [min-max] | "
          "every core's insns per sleep | wake-up p50 / p99 us |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        for c in counts:
            try:
                s, per_sleep = goro_idle(elf, plugin, c, opts.reps, d, opts.timeout)
                if not s:
                    raise Failed(f"goro, {c} vCPUs: no look bracketed by markers 3 and 4")
                w = goro_wake(elf, c, opts.timeout) if opts.wake else None
            except Failed as e:
                data["goro"].append({"gomaxprocs": c, "failed": str(e)})
                print(f"| goro | {c} | no row: {e} |", flush=True)
                continue
            data["goro"].append({"gomaxprocs": c, "looks": len(s), "per_sleep": round(per_sleep),
                                 "insn": [round(statistics.median(s)), min(s), max(s)],
                                 "wake_us": [round(w[0]), round(w[1])] if w else None})
            print(f"| goro | {c} | {len(s)} | {statistics.median(s):.0f} [{min(s)}-{max(s)}] | "
                  f"{per_sleep:.0f} | {f'{w[0]:.0f} / {w[1]:.0f}' if w else '-'} |", flush=True)
        for c in go_counts:
            try:
                per_sleep, user = go_idle(bins, plugin, c, opts.reps, d, opts.timeout)
                w = go_wake(bins, c, d, opts.timeout) if opts.wake else None
            except Failed as e:
                data["go"].append({"gomaxprocs": c, "failed": str(e)})
                print(f"| Go | {c} | no row: {e} |", flush=True)
                continue
            data["go"].append({"gomaxprocs": c, "per_sleep": round(per_sleep), "user": round(user),
                               "wake_us": [round(w[0]), round(w[1])] if w else None})
            print(f"| Go | {c} | - | - | {per_sleep:.0f} (runtime {user:.0f}, Linux {per_sleep - user:.0f}) | "
                  f"{f'{w[0]:.0f} / {w[1]:.0f}' if w else '-'} |", flush=True)
    if earlier:
        keep_rows(data, earlier)
    out = opts.json or os.path.join(opts.build, "bench", "idlelook.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    return 1 if any("failed" in r for r in data["goro"] + data["go"]) else 0


if __name__ == "__main__":
    sys.exit(main())
