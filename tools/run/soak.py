#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make soak: app=soak (apps/soak/) booted again and again for a while,
over machine shapes, seeds and time slices, until the time is up or a run
fails.

    tools/run/soak.py [--build DIR] [--minutes N] [--seed S] [--ops N] [--smp 1,2,4,...]

Each run takes the next of 1/2/4/8/16/32 vCPUs, the next seed, the next
time slice (20 us to 10 ms) and the next NUMA shape its vCPUs allow (1, 2
or 4 nodes, CPUs and memory split evenly), prints its operations and
operations per second, and adds them to the total. The first failure
stops the soak: its log's tail, then the one command that replays it
(`make run APP=soak SMP=.. NUMA=.. ARGS="seed=.. quantum=.."`); exit 1.

Python 3 standard library only.
"""

import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.run import qemu  # noqa: E402

SMPS = (1, 2, 4, 8, 16, 32)
QUANTA = ("20us", "50us", "100us", "500us", "1ms", "3ms", "10ms")
NUMAS = (1, 2, 4)
# A run that prints nothing for this long has hung (the guest's own
# watchdog reports a stall after 120 s of no operation at all). Booting
# 16 or 32 vCPUs on a small loaded host is silent for minutes: longer.
def silence_s(smp):
    return 300 if smp <= 8 else 900

DONE_RE = re.compile(r"^soak: (\d+) ops, (\d+) failures$", re.M)
REPLAY_RE = re.compile(r"^soak: replay: (.*)$", re.M)


def shapes(smps, seed0):
    """The runs, forever: (smp, numa nodes, quantum, seed)."""
    i = 0
    while True:
        smp = smps[i % len(smps)]
        fits = [n for n in NUMAS if n <= smp]
        numa = fits[(i // len(smps)) % len(fits)]
        yield smp, numa, QUANTA[i % len(QUANTA)], seed0 + i
        i += 1


def mem_for(smp):
    return "1G" if smp >= 16 else "512M"


def replay_command(smp, numa, quantum, seed, ops):
    numa_arg = f" NUMA={numa}" if numa > 1 else ""
    return (f'make run APP=soak SMP={smp}{numa_arg} MEM={mem_for(smp)} '
            f'ARGS="seed={seed} quantum={quantum} ops={ops}"')


def run_one(build, smp, numa, quantum, seed, ops, logdir):
    cmdline = f"app=soak seed={seed} quantum={quantum} ops={ops}"
    log = os.path.join(logdir, f"soak-smp{smp}-numa{numa}-{quantum}-seed{seed}.log")
    argv = qemu.argv(smp, mem_for(smp), serial=f"file:{log}",
                     extra=qemu.numa_even_argv(numa, smp, mem_for(smp)) + ["-net", "none"])
    argv += qemu.kernel_boot(os.path.join(build, "goro.elf"), cmdline)
    open(log, "w").close()
    status, _, err, secs = qemu.Group().run(argv, silence_s(smp), log=log)
    text = open(log, errors="replace").read()
    return status, text, err, secs, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=10.0, help="how long to soak (default 10)")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 1000000,
                    help="the first run's seed (default: from the clock; each run takes the next)")
    ap.add_argument("--ops", type=int, default=1000000, help="operations per run (default 1000000)")
    ap.add_argument("--smp", default=",".join(map(str, SMPS)),
                    help="vCPU counts to cycle over (default 1,2,4,8,16,32)")
    args = ap.parse_args()
    smps = [int(x) for x in args.smp.split(",")]
    logdir = os.path.join(args.build, "soak-logs")
    os.makedirs(logdir, exist_ok=True)
    print(f"soak: {args.minutes:g} minutes over {args.smp} vCPUs from seed {args.seed}, "
          f"{args.ops} operations a run; logs in {logdir}/", flush=True)
    print(qemu.host_line("tcg", 0), flush=True)
    end = time.monotonic() + args.minutes * 60
    total_ops = total_secs = runs = 0
    for smp, numa, quantum, seed in shapes(smps, args.seed):
        if time.monotonic() >= end:
            break
        status, text, err, secs, log = run_one(args.build, smp, numa, quantum, seed, args.ops,
                                               logdir)
        done = DONE_RE.search(text)
        ok = status == qemu.EXIT_OK and done and done.group(2) == "0"
        if not ok:
            print(f"soak: FAIL: smp={smp} numa={numa} quantum={quantum} seed={seed}: "
                  f"{qemu.describe_status(status)} after {secs:.1f} s (log: {log})")
            for line in text.splitlines()[-25:]:
                print(f"    {line}")
            if err.strip():
                print(f"    qemu: {err.strip()[-500:]}")
            guest = REPLAY_RE.search(text)
            print(f"soak: after {runs} good runs and {total_ops} operations")
            print(f"soak: replay: {replay_command(smp, numa, quantum, seed, args.ops)}")
            if guest:
                print(f"soak: (the guest's own line: {guest.group(1)})")
            return 1
        ops = int(done.group(1))
        os.remove(log)
        runs += 1
        total_ops += ops
        total_secs += secs
        print(f"soak run {runs}: smp={smp} numa={numa} quantum={quantum} seed={seed}: "
              f"{ops} ops in {secs:.1f} s ({ops / secs:.0f} ops/s); total {total_ops} ops",
              flush=True)
    rate = total_ops / total_secs if total_secs else 0
    print(f"soak: {runs} runs, {total_ops} ops in {total_secs:.0f} s ({rate:.0f} ops/s), "
          f"0 failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
