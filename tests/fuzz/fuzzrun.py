#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the libFuzzer harnesses (BUILD/fuzz/fuzz_NAME, built by make
fuzz-build) and reports one line per harness in the test runner's format:

    PASS fuzz/acpi: 20000 runs (5120/s), corpus 12 + 3 new
    FAIL fuzz/cmdline: crash, input saved as build/fuzz/artifacts/cmdline-crash-... (log: ...)
    SKIP fuzz/efi_elf: not built (clang missing: make deps)

Three uses:
  - make test (tests/run.py calls replay()): each harness runs its corpus,
    tests/fuzz/corpus/NAME, then REPLAY_RUNS more inputs from a fixed seed:
    the same inputs on every run, a few seconds each.
  - make fuzz (this file's main): each harness fuzzes for --seconds (or
    --runs inputs) under nice -n 19, --jobs at a time, keeping what it
    finds in BUILD/fuzz/corpus/NAME for the next run. The checked-in corpus
    changes only on purpose: --merge --install minimizes those finds with
    the seeds (libFuzzer's -merge=1) and makes the result the corpus.
  - make fuzz-coverage (--coverage): what the checked-in corpus reaches of
    the parsers, lines and branches, with llvm-cov.

A crash, a sanitizer report, a broken promise (FUZZ_CHECK), a slow input or
a leak is a failure; libFuzzer saves the input under BUILD/fuzz/artifacts/.
Replay it with BUILD/fuzz/fuzz_NAME FILE.

Python 3 standard library only.
"""

import argparse
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
from tools.run import qemu  # noqa: E402  (process groups that die with the runner)
REPLAY_RUNS = 20000
# Harnesses whose inputs cost more: the receive path runs a whole network
# stack per input (about 1,000 a second where the parsers run 10,000 and
# more), so make test's short run gives it fewer, for a similar time.
REPLAY_RUNS_FOR = {"netrx": 4000}
INPUT_TIMEOUT_S = 10
STAT_RE = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)
ARTIFACT_RE = re.compile(r"Test unit written to (\S+)")
# The longest input worth trying, where it is less than libFuzzer's 4096:
# the kernel's command line is at most CMDLINE_MAX (1024) bytes, so longer
# inputs only repeat the truncation that 1100 bytes already reach.
MAX_LEN = {"cmdline": 1100}
ERROR_RE = re.compile(r"(ERROR: \w+Sanitizer: [\w-]+|ERROR: libFuzzer: [\w-]+|"
                      r"runtime error: .*|fuzz: broken promise: .*)")


def harnesses():
    """Every harness with a source, tests/fuzz/fuzz_NAME.c -> NAME."""
    return sorted(os.path.basename(p)[5:-2] for p in glob.glob(os.path.join(HERE, "fuzz_*.c")))


def binary(build, name):
    return os.path.join(build, "fuzz", f"fuzz_{name}")


def seed_corpus(name):
    return os.path.join(HERE, "corpus", name)


def argv_for(build, name, workdir, extra):
    art = os.path.join(build, "fuzz", "artifacts")
    os.makedirs(art, exist_ok=True)
    os.makedirs(workdir, exist_ok=True)
    argv = [binary(build, name), f"-artifact_prefix={art}/{name}-", "-print_final_stats=1",
            f"-timeout={INPUT_TIMEOUT_S}"] + extra
    if name in MAX_LEN:
        argv.append(f"-max_len={MAX_LEN[name]}")
    dict_path = os.path.join(HERE, f"{name}.dict")
    if os.path.exists(dict_path):
        argv.append(f"-dict={dict_path}")
    # New inputs go to the first directory: never the checked-in corpus.
    return argv + [workdir, seed_corpus(name)]


def run_one(build, name, extra, workdir, log, timeout, group, wrap=()):
    """Runs one harness in group (a tools/run/qemu.py Group, which kills it when
    the caller stops), under the command wrap (nice, setarch); returns
    (status, reason) with status PASS, FAIL or SKIP."""
    if not os.access(binary(build, name), os.X_OK):
        return "SKIP", "not built (clang with libFuzzer missing: make deps)"
    argv = list(wrap) + argv_for(build, name, workdir, extra)
    t0 = time.monotonic()
    with open(log, "w") as f:
        status, _, _, _ = group.run(argv, timeout, stdout=f, stderr=subprocess.STDOUT)
    with open(log, errors="replace") as f:
        text = f.read()
    rel = os.path.relpath(log)
    if status is None:
        return "FAIL", f"no result after {timeout}s (log: {rel})"
    stats = {k: int(v) for k, v in STAT_RE.findall(text)}
    if status != 0:
        what = ERROR_RE.search(text)
        art = ARTIFACT_RE.search(text)
        reason = what.group(1) if what else f"exit {status}"
        if art:
            reason += f", input saved as {os.path.relpath(art.group(1))}"
        return "FAIL", f"{reason} (log: {rel})"
    runs = stats.get("number_of_executed_units", 0)
    secs = max(time.monotonic() - t0, 1e-3)
    corpus = len(os.listdir(seed_corpus(name)))
    rate = stats.get("average_exec_per_sec") or int(runs / secs)
    return "PASS", (f"{runs} runs ({rate}/s), "
                    f"corpus {corpus} + {stats.get('new_units_added', 0)} new")


def replay(build, name, logs, group, timeout=300):
    """make test's short run: the corpus, then REPLAY_RUNS fixed inputs."""
    work = os.path.join(build, "fuzz", "replay", name)
    shutil.rmtree(work, ignore_errors=True)
    log = os.path.join(logs, f"fuzz-{name}.log")
    # The same inputs on every run: the comparisons libFuzzer traces include
    # pointers, which address-space randomization moves (setarch -R turns
    # it off), and it rereads its corpus every second unless -reload=0.
    wrap = ["setarch", "-R"] if shutil.which("setarch") else []
    runs = REPLAY_RUNS_FOR.get(name, REPLAY_RUNS)
    return run_one(build, name, [f"-runs={runs}", "-seed=1", "-reload=0"], work, log,
                   timeout, group, wrap)


def install_corpus(name, merged):
    """Makes tests/fuzz/corpus/NAME the seed-* and regress-* files (kept as
    they are) plus the merged inputs that are not one of them."""
    d = seed_corpus(name)
    keep, seen = set(), set()
    for f in os.listdir(d):
        path = os.path.join(d, f)
        if f.startswith(("seed-", "regress-")):
            keep.add(f)
            with open(path, "rb") as fh:
                seen.add(hashlib.sha1(fh.read()).hexdigest())
        else:
            os.unlink(path)
    added = 0
    for f in sorted(os.listdir(merged)):
        with open(os.path.join(merged, f), "rb") as fh:
            data = fh.read()
        h = hashlib.sha1(data).hexdigest()
        if h in seen:
            continue
        seen.add(h)
        with open(os.path.join(d, h), "wb") as fh:
            fh.write(data)
        added += 1
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    return f"{len(keep)} seeds and regressions + {added} merged inputs, {size} bytes in {d}"


def coverage(build, names, llvm_suffix):
    """make fuzz-coverage: each BUILD/fuzz/cov/fuzz_NAME over its checked-in
    corpus, then one llvm-cov report of the parsers (not the harnesses)
    over all of them: a source file two harnesses share counts once."""
    out = os.path.abspath(os.path.join(build, "fuzz", "cov"))
    raws, objects = [], []
    for name in names:
        binpath = os.path.join(out, f"fuzz_{name}")
        raw = os.path.join(out, f"{name}.profraw")
        env = dict(os.environ, LLVM_PROFILE_FILE=raw)
        subprocess.run([binpath, "-runs=0", seed_corpus(name)], env=env, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        raws.append(raw)
        objects.append(binpath)
    data = os.path.join(out, "all.profdata")
    subprocess.run([f"llvm-profdata{llvm_suffix}", "merge", "-sparse", "-o", data] + raws, check=True)
    argv = [f"llvm-cov{llvm_suffix}", "report", objects[0], f"-instr-profile={data}",
            "-ignore-filename-regex=(^|/)tests/"]
    for o in objects[1:]:
        argv += ["-object", o]
    return subprocess.call(argv, cwd=ROOT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=60, help="fuzz each harness this long")
    ap.add_argument("--runs", type=int, default=0, help="or this many inputs each")
    ap.add_argument("--jobs", type=int, default=1, help="harnesses at once (default 1)")
    ap.add_argument("--filter", default="", help="only harnesses whose name contains this")
    ap.add_argument("--replay", action="store_true", help="make test's short run instead")
    ap.add_argument("--coverage", action="store_true",
                    help="report the parsers' coverage by the checked-in corpus (make fuzz-coverage)")
    ap.add_argument("--llvm-suffix", default="", help="of llvm-cov and llvm-profdata, e.g. -14 (default: none, Debian's default LLVM)")
    ap.add_argument("--merge", action="store_true",
                    help="minimize BUILD/fuzz/corpus/NAME plus the seeds into BUILD/fuzz/merged/NAME")
    ap.add_argument("--install", action="store_true",
                    help="with --merge: make that the checked-in corpus (seed-* and regress-* kept)")
    args = ap.parse_args()
    names = [n for n in harnesses() if args.filter in n]
    logs = os.path.join(args.build, "fuzz", "logs")
    os.makedirs(logs, exist_ok=True)
    if args.coverage:
        return coverage(args.build, names, args.llvm_suffix)

    def one(name):
        if args.replay:
            return replay(args.build, name, logs, group)
        log = os.path.join(logs, f"{name}.log")
        if args.merge:
            out = os.path.join(args.build, "fuzz", "merged", name)
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            work = os.path.join(args.build, "fuzz", "corpus", name)
            os.makedirs(work, exist_ok=True)
            argv = [binary(args.build, name), "-merge=1", out, seed_corpus(name), work]
            with open(log, "w") as f:
                rc = subprocess.call(["nice", "-n", "19"] + argv, stdout=subprocess.DEVNULL,
                                     stderr=f)
            if rc != 0:
                return "FAIL", f"merge failed (log: {os.path.relpath(log)})"
            if args.install:
                return "PASS", install_corpus(name, out)
            return "PASS", f"{len(os.listdir(out))} inputs in {out}"
        extra = [f"-runs={args.runs}"] if args.runs else [f"-max_total_time={args.seconds}"]
        limit = None if args.runs else args.seconds * 2 + 120
        work = os.path.join(args.build, "fuzz", "corpus", name)
        return run_one(args.build, name, extra, work, log, limit, group, ["nice", "-n", "19"])

    group = qemu.Group()
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    # The harnesses run in sessions of their own: stopping this script
    # stops them too.
    def terminate(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        futures = {pool.submit(one, n): n for n in names}
        for f in concurrent.futures.as_completed(futures):
            status, reason = f.result()
            counts[status] += 1
            print(f"{status} fuzz/{futures[f]}: {reason}", flush=True)
    except KeyboardInterrupt:
        group.stop()
        pool.shutdown(wait=False, cancel_futures=True)
        print("interrupted", file=sys.stderr)
        return 130
    pool.shutdown(wait=True)
    summary = f"{counts['PASS']} passed, {counts['FAIL']} failed"
    if counts["SKIP"]:
        summary += f", {counts['SKIP']} skipped"
    print(summary)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
