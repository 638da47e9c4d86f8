#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench-boot: how long goro takes to boot, phase by phase, under QEMU
TCG at 1, 2, 8, 32 and 64 vCPUs (and with --cpus up to 1024: q35, x2APIC,
QEMU 9.0 or later), beside a Debian Linux guest booted by the
same QEMU in the same run, and beside the published figures of OSv and
Unikraft.

Two clocks. Inside the guest, goro's boot timeline (boot_timeline=1) gives
each phase's start in microseconds from kernel entry, by the TSC. Outside,
this script timestamps what the guest writes to QEMU's debug console
(-device isa-debugcon at port 0x402, on QEMU's stdout): SeaBIOS's log,
then goro's "goro:entry" (the first instructions of boot/entry.asm) and
"goro:main" (the main goroutine starts), each on the host's monotonic clock
from the moment QEMU was started. The Linux guest is Debian's kernel with
a busybox initramfs (tools/bench/peer_guest.py's); its /init prints a marker
first thing on the serial console, timestamped the same way, then Linux's
own printk times of its CPU bring-up.

goro is booted --boots times per configuration (default 5), Linux
--linux-boots times (default 1; a boot that has not reached init after
--linux-timeout seconds counts as hung and is reported so); the table gives
the median and the spread (min-max) of kernel entry to all cores online, to
all cores ready (docs/boot.md defines both) and
to the main goroutine, and of QEMU start to init for Linux, with the
host's 1-minute load average before each configuration (the host is
shared: wall-clock time under TCG moves with its load; --quiet-wait waits
for a quiet moment before each boot). QEMU is started the way every tool
starts it (tools/run/qemu.py): without transparent huge pages, whose first
touch on a host that hands free memory back to its own hypervisor stalls
a vCPU thread for milliseconds at random (qemu.thp(); --qemu-thp keeps
them, to measure what they cost). Nothing outside the repository is read but
QEMU, the Debian kernel and busybox that make deps-bench installs, and
/proc for the host's load.

Examples:
    tools/bench/boot_bench.py                         # what make bench-boot runs
    tools/bench/boot_bench.py --cpus 8 --boots 3 --no-linux
    tools/bench/boot_bench.py --elf old/goro.elf --label before --no-linux
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import peer_guest  # noqa: E402
from tools.bench.linux_guest import many_cores_argv  # noqa: E402
from tools.run import qemu  # noqa: E402

# Published boot figures of other unikernels, quoted (this machine has no
# internet: what the projects state, from memory of their own pages; not
# re-measured here, and all under KVM, not TCG).
PUBLISHED = [
    ("OSv", "about 5 ms from VMM start to the application (ramfs image, one vCPU) on Firecracker/KVM; "
            "about 10 ms with ROFS/ZFS", "OSv's README and wiki, its own boot-time breakdown (`--bootchart`)"),
    ("Unikraft", "tens of microseconds (helloworld) to a few hundred (nginx) from guest entry to main, on "
                 "KVM; the VMM's own start dominates (QEMU tens of ms, Firecracker a few ms)",
     "Kuenzer et al., \"Unikraft: Fast, Specialized Unikernels the Easy Way\", EuroSys 2021, "
     "boot-time figure, guest and VMM parts measured apart"),
]

TIMELINE_RE = re.compile(r"^boot: us from entry:(.*)$", re.M)
CORE_RE = re.compile(r"^boot: cpu (\d+) \(apic id (\d+)\) online at (\d+) us"
                     r"(?:, ready at (\d+) us)?$", re.M)
SMP_RE = re.compile(r"^smp: (\d+) of (\d+) cores online", re.M)
LINUX_RE = re.compile(r"^LINUX (\w+)=([\d.]+)", re.M)
LINUX_MARK = b"LINUX-INIT"


def log(msg):
    print(f"boot-bench: {msg}", file=sys.stderr, flush=True)


def loadavg():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except OSError:
        return float("nan")


def cpu_times():
    """pid -> (CPU ticks used, nice) of every process but this one."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12]), int(fields[16]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def busy_neighbours():
    """Processes that used over a fifth of a CPU in the last second, not
    counting those at nice 19 (which barely take CPU from ours)."""
    hz = os.sysconf("SC_CLK_TCK")
    before = cpu_times()
    time.sleep(1)
    after = cpu_times()
    return sum(1 for pid, (t, nice) in after.items()
               if nice < 19 and pid in before and t - before[pid][0] > hz / 5)


def wait_quiet(max_seconds):
    """Waits (up to max_seconds) until no other process keeps a CPU busy;
    returns how many still do."""
    deadline = time.monotonic() + max_seconds
    busy = busy_neighbours() if max_seconds else 0
    while busy and time.monotonic() < deadline:
        time.sleep(4)
        busy = busy_neighbours()
    return busy


def run_timed(cmd, timeout):
    """Runs cmd (in a session of its own, killed whole on a timeout);
    returns (stdout chunks [(seconds since start, bytes)], exit status).
    Each chunk is stamped when the read returns."""
    chunks = []
    t0 = time.monotonic()
    with qemu.Group().started(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:

        def reader():
            fd = p.stdout.fileno()
            while True:
                b = os.read(fd, 65536)
                if not b:
                    return
                chunks.append((time.monotonic() - t0, b))

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        try:
            status = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            qemu.kill_group(p)
            status = p.wait()
            log(f"timed out after {timeout}s: {' '.join(cmd[:6])} ...")
        th.join(5)
        err = p.stderr.read().decode(errors="replace").strip()
    if err:
        log(f"qemu: {err[:300]}")
    return chunks, status


def marker_time(chunks, marker):
    """The host time of the chunk in which marker begins; None if absent."""
    data, starts = b"", []
    for t, b in chunks:
        starts.append((len(data), t))
        data += b
    at = data.find(marker)
    if at < 0:
        return None
    when = None
    for off, t in starts:
        if off <= at:
            when = t
    return when


def machine_for(cpus):
    """pc and 512 MiB up to 64 vCPUs, as the figures always had; q35 (more
    than 255 vCPUs need it) and 4 MiB a vCPU beyond."""
    return (None, "512M") if cpus <= 64 else ("q35", f"{max(512, 4 * cpus)}M")


def boot_goro(elf, cpus, app, logdir, tag, timeout, quiet_wait, icount=False):
    others = wait_quiet(quiet_wait)
    serial = os.path.join(logdir, f"{tag}.serial.log")
    machine, mem = machine_for(cpus)
    cmd = qemu.argv(cpus, mem, machine=machine, serial=f"file:{serial}", extra=[
        "-net", "none", "-chardev", "stdio,id=dbg,signal=off",
        "-device", "isa-debugcon,iobase=0x402,chardev=dbg"] + (["-icount", "shift=0,sleep=off"] if icount else [])) + \
        qemu.kernel_boot(elf, f"app={app} boot_timeline=1")
    chunks, status = run_timed(cmd, timeout)
    with open(os.path.join(logdir, f"{tag}.debugcon.log"), "wb") as f:
        f.write(b"".join(b for _, b in chunks))
    text = open(serial, errors="replace").read() if os.path.exists(serial) else ""
    r = {"status": status, "others": others, "load": loadavg(),
         "host_entry_ms": ms(marker_time(chunks, b"goro:entry")),
         "host_main_ms": ms(marker_time(chunks, b"goro:main")), "host_exit_ms": ms(chunks[-1][0]) if chunks else None}
    m = TIMELINE_RE.search(text)
    if m:
        r["phases_us"] = {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}
    r["cores_us"] = [int(c[2]) for c in CORE_RE.findall(text)]
    s = SMP_RE.search(text)
    r["cores"] = int(s.group(1)) if s else 0
    if status != 33 or not m or r["cores"] != cpus:
        log(f"{tag}: exit {status}, {r['cores']} cores online, timeline {'found' if m else 'missing'} ({serial})")
    return r


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 3)


LINUX_INIT = """#!/bin/busybox sh
echo LINUX-INIT
/bin/busybox mount -t proc proc /proc
# Linux's own clock (printk time, seconds) at its CPU bring-up and at /init.
dmesg | sed -n -e 's/^\\[ *\\([0-9.]*\\)\\] smp: Bringing up.*/LINUX smp_start=\\1/p' \\
               -e 's/^\\[ *\\([0-9.]*\\)\\] smp: Brought up.*/LINUX smp_done=\\1/p' \\
               -e 's/^\\[ *\\([0-9.]*\\)\\] Run \\/init.*/LINUX run_init=\\1/p'
/bin/busybox poweroff -f
"""


def linux_initrd(path):
    pg = peer_guest
    c = pg.busybox_cpio()
    c.file("init", LINUX_INIT.encode())
    with open(path, "wb") as f:
        f.write(c.bytes())
    return pg.find_kernel(), pg.GUEST_APPEND


def boot_linux(kernel, initrd, append, cpus, logdir, tag, timeout, quiet_wait):
    others = wait_quiet(quiet_wait)
    machine, mem = machine_for(cpus)
    cmd = qemu.argv(cpus, mem, machine=machine, exit_device=False,
                    extra=["-net", "none"] + many_cores_argv(cpus)) + [
        "-kernel", kernel, "-initrd", initrd, "-append", append]
    chunks, status = run_timed(cmd, timeout)
    out = b"".join(b for _, b in chunks)
    with open(os.path.join(logdir, f"{tag}.console.log"), "wb") as f:
        f.write(out)
    text = out.decode(errors="replace").replace("\r", "")
    r = {"status": status, "others": others, "load": loadavg(), "host_init_ms": ms(marker_time(chunks, LINUX_MARK))}
    for k, v in LINUX_RE.findall(text):
        r[k + "_ms"] = round(float(v) * 1000, 3)
    if r["host_init_ms"] is None:
        log(f"{tag}: no {LINUX_MARK.decode()} on the console (exit {status})")
    return r


def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def spread(values):
    v = [x for x in values if x is not None]
    return (min(v), max(v)) if v else None


def summarize(runs):
    """Medians over boots of one configuration, and the spread (min, max)
    of the headline figures."""
    s = {"boots": len(runs),
         "failed": sum(1 for r in runs if r.get("status") != 33 and r.get("host_init_ms") is None)}
    for k in ("online", "ready", "main"):
        s[f"entry_to_{k}_spread_us"] = spread([r.get("phases_us", {}).get(k) for r in runs])
    if any("host_init_ms" in r for r in runs):
        s["host_init_spread_ms"] = spread([r.get("host_init_ms") for r in runs])
    keys = set()
    for r in runs:
        keys |= set(r.get("phases_us", {}))
    for k in keys:
        s["entry_to_" + k + "_us"] = med([r.get("phases_us", {}).get(k) for r in runs])
    for k in ("host_entry_ms", "host_main_ms", "host_init_ms", "smp_start_ms", "smp_done_ms", "run_init_ms"):
        if any(k in r for r in runs):
            s[k] = med([r.get(k) for r in runs])
    return s


def fmt(v, scale=1.0, digits=1):
    return "-" if v is None else f"{v * scale:.{digits}f}"


def fmt_spread(med_v, sp, scale=1.0, digits=2):
    if med_v is None:
        return "-"
    if not sp:
        return fmt(med_v, scale, digits)
    return f"{fmt(med_v, scale, digits)} [{fmt(sp[0], scale, digits)}-{fmt(sp[1], scale, digits)}]"


def linux_init(lx):
    """Linux's QEMU->init cell: the median and spread of the boots that got
    there, and how many did not (a hung or timed-out boot)."""
    cell = fmt_spread(lx.get("host_init_ms"), lx.get("host_init_spread_ms"), 1.0, 0)
    return f"{cell} ({lx['failed']} of {lx['boots']} hung)" if lx.get("failed") else cell


def report(results, linux, label):
    print(f"\ngoro boot, {label}: median [min-max] of the boots, QEMU TCG -cpu max, -m 512M up to 64 vCPUs "
          f"(beyond: q35, 4 MiB a vCPU), ms "
          f"('entry' = kernel entry; load: the host's 1-min load average before the configuration; "
          f"busy: most other busy processes at a boot, with --quiet-wait)\n")
    hdr = ("vCPUs", "boots", "load", "busy", "QEMU->entry", "entry->all online", "entry->all ready", "entry->main", "QEMU->main",
           "Linux QEMU->init", "Linux printk->init", "Linux smp bring-up")
    print("| " + " | ".join(hdr) + " |")
    print("|" + " --- |" * len(hdr))
    for cpus in sorted(results):
        s, load = results[cpus]["summary"], results[cpus]["load"]
        lx = linux.get(cpus, {}).get("summary", {})
        busy = max(r.get("others", 0) for r in results[cpus]["runs"])
        row = (str(cpus), str(s["boots"]), f"{load:.2f}", str(busy), fmt(s.get("host_entry_ms")),
               fmt_spread(s.get("entry_to_online_us"), s.get("entry_to_online_spread_us"), 1e-3),
               fmt_spread(s.get("entry_to_ready_us"), s.get("entry_to_ready_spread_us"), 1e-3),
               fmt_spread(s.get("entry_to_main_us"), s.get("entry_to_main_spread_us"), 1e-3),
               fmt(s.get("host_main_ms")),
               linux_init(lx), fmt(lx.get("run_init_ms")),
               fmt(None if lx.get("smp_done_ms") is None else lx["smp_done_ms"] - (lx.get("smp_start_ms") or 0)))
        print("| " + " | ".join(row) + " |")
    print("\nPhases (median us from kernel entry to each phase's start):")
    for cpus in sorted(results):
        s = results[cpus]["summary"]
        ph = sorted(((v, k[len("entry_to_"):-len("_us")]) for k, v in s.items()
                     if k.startswith("entry_to_") and not k.endswith("_spread_us") and v is not None))
        print(f"  {cpus:>2} vCPUs: " + " ".join(f"{k}={v:.0f}" for v, k in ph))
    print("\nPublished (quoted, not measured here; KVM, not TCG):")
    for name, fig, how in PUBLISHED:
        print(f"  {name}: {fig}. Source: {how}.")


def main():
    ap = qemu.image_argparser(__doc__)
    ap.add_argument("--label", default="this tree", help="name of the image in the report")
    ap.add_argument("--cpus", default="1,2,8,32,64", help="vCPU counts (default 1,2,8,32,64)")
    ap.add_argument("--boots", type=int, default=5, help="boots per configuration (default 5)")
    ap.add_argument("--app", default="hello", help="the app booted (default hello)")
    ap.add_argument("--no-linux", dest="linux", action="store_false", help="skip the Linux guest")
    ap.add_argument("--linux-boots", type=int, default=1,
                    help="Linux boots per configuration (default 1: the reference beside goro's target, "
                         "and at 64 vCPUs one takes 90-180 s under TCG here)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per goro boot (default 600)")
    ap.add_argument("--linux-timeout", type=int, default=120,
                    help="seconds per Linux boot (default 120: it reaches init in 8-60 s here at 1-64 vCPUs; "
                         "at 32 and 64 vCPUs under TCG it sometimes hangs before printing anything, and "
                         "such a boot is counted as hung, not waited for)")
    ap.add_argument("--quiet-wait", type=int, default=0, metavar="S",
                    help="before each boot, wait up to S seconds until no other process keeps a CPU busy "
                         "(nice-19 ones aside: a shared host)")
    ap.add_argument("--out", default="", help="JSON results (default BUILD/bench/boot.json)")
    ap.add_argument("--icount", action="store_true",
                    help="goro under -icount shift=0,sleep=off: the guest's clock counts its instructions "
                         "(1 ns each) and skips its halts, so the timeline is the host's load taken out; "
                         "meaningful with 1 vCPU (more run round-robin on one thread); implies --no-linux")
    ap.add_argument("--qemu-thp", action="store_true",
                    help="leave QEMU its transparent huge pages (GORO_QEMU_THP=1; the report says which)")
    ap.add_argument("--from-json", default="", metavar="PATH", help="print the report of an earlier run's JSON")
    opts = ap.parse_args()
    if opts.from_json:
        d = json.load(open(opts.from_json))
        report({int(k): v for k, v in d["goro"].items()}, {int(k): v for k, v in d["linux"].items()}, d["label"])
        print(f"\n{d['qemu']} (transparent huge pages {d.get('qemu_thp', 'on')}); {d['host_cpus']} host CPUs; "
              f"{d['date']}")
        return 0

    elf = qemu.image(opts)
    if opts.qemu_thp:
        os.environ["GORO_QEMU_THP"] = "1"
    thp = qemu.thp()
    if opts.icount:
        opts.linux = False
    outdir = os.path.join(opts.build, "bench")
    logdir = os.path.join(outdir, "boot-logs")
    os.makedirs(logdir, exist_ok=True)
    cpu_list = [int(c) for c in opts.cpus.split(",") if c]
    for cpus in cpu_list:
        why = qemu.x2apic_missing(cpus)
        if why:
            sys.exit(f"boot_bench: {cpus} vCPUs {why}")
    results, linux = {}, {}
    kernel = initrd = append = None
    if opts.linux:
        initrd = os.path.join(outdir, "boot-linux.cpio")
        kernel, append = linux_initrd(initrd)
    for cpus in cpu_list:
        load = loadavg()
        runs = []
        for i in range(opts.boots):
            runs.append(boot_goro(elf, cpus, opts.app, logdir, f"goro{'-icount' if opts.icount else ''}-{cpus}-{i}", opts.timeout, opts.quiet_wait,
                                  opts.icount))
        results[cpus] = {"load": load, "runs": runs, "summary": summarize(runs)}
        s = results[cpus]["summary"]
        log(f"goro {cpus} vCPUs (load {load:.2f}): entry->online {fmt(s.get('entry_to_online_us'), 1e-3, 2)} ms, "
            f"QEMU->main {fmt(s.get('host_main_ms'))} ms")
        if opts.linux:
            lload = loadavg()
            lruns = [boot_linux(kernel, initrd, append, cpus, logdir, f"linux-{cpus}-{i}", opts.linux_timeout,
                                opts.quiet_wait)
                     for i in range(opts.linux_boots)]
            linux[cpus] = {"load": lload, "runs": lruns, "summary": summarize(lruns)}
            log(f"linux {cpus} vCPUs (load {lload:.2f}): QEMU->init {fmt(linux[cpus]['summary'].get('host_init_ms'))} ms")
    qemu_version = f"QEMU {qemu.version()}"
    out = {"label": opts.label, "elf": elf, "qemu": qemu_version, "qemu_thp": thp, "host_cpus": os.cpu_count(),
           "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "goro": results, "linux": linux,
           "published": [{"name": n, "figure": f, "source": s} for n, f, s in PUBLISHED]}
    path = opts.out or os.path.join(outdir, "boot.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    report(results, linux, opts.label)
    print(f"\n{qemu_version} (transparent huge pages {thp}); {os.cpu_count()} host CPUs; results in {path}, "
          f"logs in {logdir}")
    ok = all(r["status"] == 33 for v in results.values() for r in v["runs"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
