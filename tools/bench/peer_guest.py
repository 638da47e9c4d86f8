#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run goro's peer benchmarks (tests/peers) in a Linux guest under QEMU TCG
and natively on the host, and collect their result lines.

goro runs under TCG on this machine, so the fair comparison runs the Go and
pthread peers under the same TCG, CPU model and vCPU count: Debian's kernel
boots an initramfs whose /init runs the static peer binaries, prints their
output on the serial console and powers off. Natively the same binaries run
on the host, labelled accel=native.

Results go to $BUILD/bench/peers-<accel>-<cores>.txt (BUILD defaults to
build); the raw console of a guest run sits beside it as .console.log.

Examples:
    tools/bench/peer_guest.py --quick                      # TCG 1 and 2 vCPUs, native
    tools/bench/peer_guest.py --accel tcg --cpus 2 --filter 'pingpong|chan'
    tools/bench/peer_guest.py --accel tcg --cpus 1 --insncount --peers pthread
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench import insncount_report  # noqa: E402
from tools.bench.linux_guest import GUEST_APPEND, Cpio, find_kernel  # noqa: E402
from tools.run import qemu  # noqa: E402

PEERS = ("go", "pthread")
RESULT_RE = re.compile(r"^(GUEST|CONFIG|BENCH|SKIP|DONE) ")


def log(msg):
    print(f"peer-guest: {msg}", file=sys.stderr, flush=True)


def init_script(peers, args):
    return guest_init("\n".join(
        f"echo '### peer {p}'\n/peers/peers-{p} -accel=tcg {args} 2>&1" for p in peers), "peers")


def guest_init(body, what):
    """The guest's /init: mounts, a GUEST line, '### WHAT begin', body (shell),
    '### WHAT end', power-off (tools/bench/schedlat.py uses it too)."""
    return f"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev 2>/dev/null
export PATH=/bin
# The firmware leaves escape sequences without a newline on the console.
echo
# Guest time is only as good as the TSC calibration done at boot.
echo "GUEST clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \\
     "kernel=$(cat /proc/sys/kernel/osrelease)" \\
     "tsc_mhz=$(dmesg | sed -n 's/.*tsc: Detected \\([0-9.]*\\) MHz.*/\\1/p' | tail -1)"
echo '### {what} begin'
{body}
echo '### {what} end'
/bin/busybox poweroff -f
echo o > /proc/sysrq-trigger
"""


def guest_argv(cpus, initrd):
    """QEMU's command line for the Linux guest: same TCG, -cpu and memory as
    goro's runs; Linux powers it off (exit status 0): no isa-debug-exit."""
    return qemu.argv(cpus, "1G", exit_device=False) + \
        ["-kernel", find_kernel(), "-initrd", initrd, "-append", GUEST_APPEND]


APPLETS = ("sh", "mount", "poweroff", "echo", "cat", "dmesg", "sed", "tail")


def busybox_cpio(extra_dirs=()):
    """An initramfs with busybox and its applets, /dev/console and /dev/null;
    the caller adds /init (tools/bench/boot_bench.py uses it too)."""
    busybox = "/bin/busybox"
    if not os.path.exists(busybox):
        sys.exit("peer-guest: /bin/busybox missing: run make deps-bench")
    c = Cpio()
    for d in ("bin", "dev", "proc", "sys", "tmp") + tuple(extra_dirs):
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    c.chardev("dev/null", 1, 3)
    with open(busybox, "rb") as f:
        c.file("bin/busybox", f.read())
    for applet in APPLETS:
        c.symlink(f"bin/{applet}", "busybox")
    return c


def build_initramfs(path, bindir, peers, args):
    c = busybox_cpio(extra_dirs=("peers",))
    for p in peers:
        with open(os.path.join(bindir, f"peers-{p}"), "rb") as f:
            c.file(f"peers/peers-{p}", f.read())
    c.file("init", init_script(peers, args).encode())
    with open(path, "wb") as f:
        f.write(c.bytes())


# ---- running


def peer_args(opts):
    a = []
    if opts.quick:
        a.append("-quick")
    if opts.filter:
        a.append(f"-filter={opts.filter}")
    if opts.reps:
        a.append(f"-reps={opts.reps}")
    return a


def run_tcg(opts, cpus, bindir, outdir):
    tag = f"tcg-{cpus}" + ("-insncount" if opts.insncount else "")
    initrd = os.path.join(outdir, f"peers-{tag}.cpio")
    args = " ".join(shlex.quote(a) for a in peer_args(opts))
    build_initramfs(initrd, bindir, opts.peers, args)
    cmd = guest_argv(cpus, initrd)
    insn_log = None
    if opts.insncount:
        insn_log = os.path.join(outdir, f"peers-{tag}.insn.log")
        if os.path.exists(insn_log):
            os.unlink(insn_log)
        cmd += qemu.plugin_argv(opts.insncount, insn_log)
    log(f"TCG, {cpus} vCPU: {' '.join(shlex.quote(c) for c in cmd)}")
    status, console, _, secs = qemu.run(cmd, opts.timeout)
    console = console.replace("\r", "")
    with open(os.path.join(outdir, f"peers-{tag}.console.log"), "w") as f:
        f.write(console)
    log(f"TCG, {cpus} vCPU: qemu {qemu.describe_status(status)} after {secs:.0f}s")
    if status is None:
        log("timed out: raise --timeout, or use --quick / --filter")
    lines = [qemu.host_line("tcg", cpus)] + [l for l in console.split("\n") if RESULT_RE.match(l)]
    if insn_log:
        lines += insn_lines(insn_log, lines)
    return tag, lines, status == 0 and all(
        any(l.startswith(f"DONE impl={p}") for l in lines) for p in opts.peers)


def insn_lines(insn_log, lines):
    return insncount_report.insn_lines(insn_log, insncount_report.groups_from_lines(lines), log)


def run_native(opts, cpus, bindir):
    avail = sorted(os.sched_getaffinity(0))
    if cpus > len(avail):
        log(f"native: only {len(avail)} CPUs, not {cpus}")
        cpus = len(avail)
    lines, ok = [qemu.host_line("native", cpus)], True
    for peer in opts.peers:
        cmd = [os.path.join(bindir, f"peers-{peer}"), "-accel=native"] + peer_args(opts)
        log(f"native, {cpus} CPU: {' '.join(cmd)}")
        # The peers size themselves by their affinity mask (Go's NumCPU too).
        p = subprocess.run(["timeout", str(opts.timeout)] + cmd, capture_output=True, text=True,
                           preexec_fn=lambda: os.sched_setaffinity(0, avail[:cpus]))
        sys.stderr.write(p.stderr)
        lines += [l for l in p.stdout.split("\n") if RESULT_RE.match(l)]
        ok = ok and p.returncode == 0
    return f"native-{cpus}", lines, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--accel", default="tcg,native", help="comma list of tcg, native (default both)")
    ap.add_argument("--cpus", default="1,2", help="comma list of vCPU / CPU counts (default 1,2)")
    ap.add_argument("--filter", default="", help="regexp of benchmark names, passed to the peers")
    ap.add_argument("--quick", action="store_true", help="shorter runs (-quick to the peers)")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per benchmark (peers' default otherwise)")
    ap.add_argument("--peers", default="go,pthread", help="comma list of peers (default go,pthread)")
    ap.add_argument("--out", default="", help="output file (only with one accel and one cpu count)")
    ap.add_argument("--insncount", nargs="?", const="", default=None, metavar="PLUGIN",
                    help="TCG only: load the insncount plugin (default $BUILD/insncount/libinsncount.so) "
                         "and add INSN lines; timings of such a run are perturbed by the plugin")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per QEMU or native run (default 600)")
    ap.add_argument("--no-build", action="store_true", help="use the peer binaries already built")
    opts = ap.parse_args()

    build = os.environ.get("BUILD", "build")
    outdir = os.path.join(build, "bench")
    bindir = os.path.join(outdir, "peers")
    os.makedirs(outdir, exist_ok=True)
    opts.peers = [p for p in opts.peers.split(",") if p]
    if any(p not in PEERS for p in opts.peers):
        ap.error(f"--peers: choose from {', '.join(PEERS)}")
    accels = [a for a in opts.accel.split(",") if a]
    cpu_list = [int(c) for c in opts.cpus.split(",") if c]
    if opts.out and len(accels) * len(cpu_list) != 1:
        ap.error("--out needs one --accel and one --cpus value")
    if opts.insncount is not None:
        opts.insncount = opts.insncount or os.path.join(build, "insncount", "libinsncount.so")
        if not os.path.exists(opts.insncount):
            ap.error(f"{opts.insncount} missing: run tools/build/build_insncount.sh")
        opts.insncount = os.path.abspath(opts.insncount)
        accels = [a for a in accels if a == "tcg"]

    if not opts.no_build:
        subprocess.run([os.path.join(ROOT, "tests", "peers", "build.sh"), bindir], check=True)

    all_ok = True
    for accel in accels:
        for cpus in cpu_list:
            if accel == "tcg":
                tag, lines, ok = run_tcg(opts, cpus, bindir, outdir)
            elif accel == "native":
                tag, lines, ok = run_native(opts, cpus, bindir)
            else:
                ap.error(f"unknown accel {accel}")
            path = opts.out or os.path.join(outdir, f"peers-{tag}.txt")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            nbench = sum(l.startswith("BENCH ") for l in lines)
            log(f"{tag}: {nbench} BENCH lines -> {path}" + ("" if ok else " (INCOMPLETE)"))
            all_ok = all_ok and ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
