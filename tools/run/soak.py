#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make soak: app=soak (apps/soak/) booted again and again for a while,
over machine shapes, seeds and time slices, until the time is up or a run
fails.

    tools/run/soak.py [--build DIR] [--minutes N] [--seed S] [--ops N] [--smp 1,2,4,...]
                      [--jobs N] [--fresh]

Each run takes the next of 1/2/4/8/16/32 vCPUs, the next seed, the next
time slice (20 us to 10 ms), the next round width (16, 32 or 64 programs)
and the next NUMA shape its vCPUs allow (1, 2 or 4 nodes, CPUs and memory
split evenly), prints its operations and operations per second, and adds
them to the total. --jobs runs (default 2, one per host core) boot at once;
the soak runs at the lowest priority, so it takes only what the host has
spare. The first failure stops the soak: its log's tail, the CPU time
the host gave its QEMU (over the run and its last 120 s: a stall on a host
that starved the niced QEMU is told from a hang by it), then the one
command that replays it (`make run APP=soak SMP=.. NUMA=.. ARGS="seed=..
quantum=.."`); exit 1.

A soak goes on across boots of the host: its progress (the next run, the
runs, operations and seconds so far) is kept in BUILD/soak-logs/state.json
after every run, and the next `make soak` continues from there and reports
the total of all of them, until --fresh starts over. A run that failed
stays the next one, so the next soak starts by replaying it.

Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.run import qemu  # noqa: E402

SMPS = (1, 2, 4, 8, 16, 32)
QUANTA = ("20us", "50us", "100us", "500us", "1ms", "3ms", "10ms")
NUMAS = (1, 2, 4)
# Programs per round. A round waits for its slowest program (often a
# sleep of a few ms), so a wider one keeps the vCPUs busier: on one vCPU
# 64 ran about three times the operations a second of 16.
WIDTHS = (16, 32, 64)
# The guest's network: no NIC. The soak's network programs
# (apps/soak/soak_ops_net.c) connect over the machine's own loopback,
# 127.0.0.1, which needs none, and nothing of the host's network is used.
NET_ARGV = ["-net", "none"]


# A run that prints nothing for this long has hung (the guest's own
# watchdog reports a stall after 120 s of no operation at all). Booting
# 16 or 32 vCPUs on a small loaded host is silent for minutes: longer.
# Silence and a run's whole length (4 times this) count QEMU's own time,
# not wall time (qemu.Silence): a niced run on a host that gives it 0.6%
# of a core is slow, not hung, and talks all along.
def silence_s(smp):
    return 300 if smp <= 8 else 900


DONE_RE = re.compile(r"^soak: (\d+) ops, (\d+) failures$", re.M)
REPLAY_RE = re.compile(r"^soak: replay: (.*)$", re.M)


def shape(smps, seed0, i):
    """Run i: (smp, numa nodes, quantum, width, seed)."""
    smp = smps[i % len(smps)]
    fits = [n for n in NUMAS if n <= smp]
    numa = fits[(i // len(smps)) % len(fits)]
    return smp, numa, QUANTA[i % len(QUANTA)], WIDTHS[(i // len(QUANTA)) % len(WIDTHS)], seed0 + i


def mem_for(smp):
    return "1G" if smp >= 16 else "512M"


def replay_command(smp, numa, quantum, width, seed, ops):
    numa_arg = f" NUMA={numa}" if numa > 1 else ""
    return (f'make run APP=soak SMP={smp}{numa_arg} MEM={mem_for(smp)} '
            f'ARGS="seed={seed} quantum={quantum} ops={ops} width={width}"')


def run_one(group, cpulog, build, smp, numa, quantum, width, seed, ops, logdir):
    cmdline = f"app=soak seed={seed} quantum={quantum} ops={ops} width={width}"
    log = os.path.join(logdir, f"soak-smp{smp}-numa{numa}-{quantum}-w{width}-seed{seed}.log")
    argv = qemu.argv(smp, mem_for(smp), serial=f"file:{log}",
                     extra=qemu.numa_even_argv(numa, smp, mem_for(smp)) + NET_ARGV)
    argv += qemu.kernel_boot(os.path.join(build, "goro.elf"), cmdline)
    open(log, "w").close()
    status, _, err, secs = group.run(argv, silence_s(smp), log=log)
    text = open(log, errors="replace").read()
    return status, text, err, secs, log, cpulog.take(log)


class CpuLog:
    """The CPU time each QEMU of the group has had, read every few seconds
    (/proc/PID/stat: every thread's user and system time), so that a
    failure's report says how much the host gave the guest: a stall on a
    host that starved the niced QEMU is told from a hang by it."""

    PERIOD_S = 5
    WINDOW_S = 120          # the guest watchdog's stall limit

    def __init__(self, group):
        self.group, self.samples, self.lock = group, {}, threading.Lock()
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            for pid, argv in self.group.running():
                log = next((a[5:] for a in argv if a.startswith("file:")), None)
                cpu = qemu.cpu_seconds(pid)
                if log and cpu is not None:
                    with self.lock:
                        self.samples.setdefault(log, []).append((time.monotonic(), cpu))
            time.sleep(self.PERIOD_S)

    def take(self, log):
        """A line on log's run: its CPU seconds over the run and over its
        last WINDOW_S (None with fewer than two samples); forgets the run."""
        with self.lock:
            s = self.samples.pop(log, [])
        if len(s) < 2:
            return None
        (t0, c0), (t1, c1) = s[0], s[-1]
        tw, cw = next((t, c) for t, c in s if t >= t1 - self.WINDOW_S)
        return (f"host: QEMU had {c1 - c0:.1f} s of CPU in the {t1 - t0:.0f} s sampled, "
                f"{c1 - cw:.1f} s in the last {t1 - tw:.0f} s (load average "
                f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")


class State:
    """The soak's progress, kept across runs of make soak (state.json)."""

    def __init__(self, path, smps, seed, fresh):
        self.path = path
        self.d = {"smp": smps, "seed0": seed, "next": 0, "runs": 0, "ops": 0, "secs": 0.0,
                  "since": time.strftime("%Y-%m-%d %H:%M"), "sessions": 0}
        self.resumed = False
        if not fresh:
            try:
                with open(path) as f:
                    old = json.load(f)
                if old.get("smp") == smps:
                    self.d, self.resumed = old, True
            except (OSError, ValueError):
                pass
        self.d["sessions"] += 1

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1)
        os.replace(tmp, self.path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=10.0, help="how long to soak (default 10)")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 1000000,
                    help="the first run's seed (default: from the clock; each run takes the next); "
                         "a continued soak keeps its own")
    ap.add_argument("--ops", type=int, default=10000000,
                    help="operations per run (default 10^7: a boot of 32 vCPUs costs seconds)")
    ap.add_argument("--smp", default=",".join(map(str, SMPS)),
                    help="vCPU counts to cycle over (default 1,2,4,8,16,32)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--fresh", action="store_true", help="start over instead of continuing the last soak")
    args = ap.parse_args()
    smps = [int(x) for x in args.smp.split(",")]
    logdir = os.path.join(args.build, "soak-logs")
    os.makedirs(logdir, exist_ok=True)
    state = State(os.path.join(logdir, "state.json"), smps, args.seed, args.fresh)
    st = state.d
    if state.resumed:
        print(f"soak: continuing the soak of {st['since']} at run {st['next']}: {st['runs']} runs, "
              f"{st['ops']} ops so far; --fresh starts over", flush=True)
    print(f"soak: {args.minutes:g} minutes over {args.smp} vCPUs from seed {st['seed0'] + st['next']}, "
          f"{args.ops} operations a run, {args.jobs} at once; logs in {logdir}/", flush=True)
    print(qemu.host_line("tcg", 0), flush=True)

    group = qemu.Group()
    cpulog = CpuLog(group)
    lock = threading.Condition()
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    session = {"runs": 0, "ops": 0}
    failure = []                # the first failed run's report lines, and its index
    pending = set()             # indexes of runs in flight

    def worker():
        while True:
            with lock:
                if failure or time.monotonic() >= end:
                    return
                i = st["next"]
                st["next"] += 1
                pending.add(i)
            smp, numa, quantum, width, seed = shape(smps, st["seed0"], i)
            status, text, err, secs, log, cpu = run_one(group, cpulog, args.build, smp, numa, quantum, width,
                                                        seed, args.ops, logdir)
            done = DONE_RE.search(text)
            ok = status == qemu.EXIT_OK and done and done.group(2) == "0"
            with lock:
                pending.discard(i)
                if not ok:
                    if failure:         # another run failed first, and stopped this one
                        return
                    failure.extend(fail_report(smp, numa, quantum, width, seed, args.ops, status, secs,
                                               log, text, err, cpu))
                    failure.append(i)
                    group.stop()
                    return
                ops = int(done.group(1))
                os.remove(log)
                st["runs"] += 1
                st["ops"] += ops
                st["secs"] += secs
                session["runs"] += 1
                session["ops"] += ops
                # Continue after the last run that finished with every
                # earlier one finished too; runs still in flight come again.
                st_next = min(pending) if pending else st["next"]
                saved, st["next"] = st["next"], st_next
                state.save()
                st["next"] = saved
                print(f"soak run {st['runs']}: smp={smp} numa={numa} quantum={quantum} width={width} "
                      f"seed={seed}: {ops} ops in {secs:.1f} s ({ops / secs:.0f} ops/s); "
                      f"total {st['ops']} ops", flush=True)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, args.jobs))]
    try:
        for t in threads:
            t.start()
            time.sleep(1)       # staggered: two boots at once on a loaded host wait on each other
        for t in threads:
            while t.is_alive():
                t.join(timeout=1)
    except KeyboardInterrupt:
        group.stop()
        print("soak: interrupted; the next make soak continues", file=sys.stderr)
        return 130
    wall = time.monotonic() - t0
    if failure:
        st["next"] = failure.pop()     # the next soak replays it first
        state.save()
        for line in failure:
            print(line)
        print(f"soak: after {session['runs']} good runs and {session['ops']} operations this time "
              f"({st['runs']} runs, {st['ops']} ops in all)")
        return 1
    state.save()
    rate = session["ops"] / wall if wall else 0
    print(f"soak: {session['runs']} runs, {session['ops']} ops in {wall:.0f} s ({rate:.0f} ops/s), 0 failures")
    if state.resumed or st["sessions"] > 1:
        print(f"soak: in all since {st['since']}: {st['runs']} runs, {st['ops']} ops over {st['sessions']} "
              f"soaks, 0 failures")
    return 0


def fail_report(smp, numa, quantum, width, seed, ops, status, secs, log, text, err, cpu):
    lines = [f"soak: FAIL: smp={smp} numa={numa} quantum={quantum} width={width} seed={seed}: "
             f"{qemu.describe_status(status)} after {secs:.1f} s (log: {log})"]
    if cpu:
        lines.append(f"soak: {cpu}")
    lines += [f"    {line}" for line in text.splitlines()[-25:]]
    if err.strip():
        lines.append(f"    qemu: {err.strip()[-500:]}")
    lines.append(f"soak: replay: {replay_command(smp, numa, quantum, width, seed, ops)}")
    guest = REPLAY_RE.search(text)
    if guest:
        lines.append(f"soak: (the guest's own line: {guest.group(1)})")
    return lines


if __name__ == "__main__":
    sys.exit(main())
