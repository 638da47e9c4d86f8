#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/run.py never dies of a check. make test runs this as the host test
BUILD/host/test_runner: the runner over a made-up matrix, with QEMU
replaced by a stand-in that writes a good boot log:

  - a log check that raises, one that runs a program nobody installed, a
    log that cannot be read and a matrix that cannot load each become
    their configuration's one FAIL line with a one-line reason;
  - the good configuration beside them still passes;
  - the closing "N passed, N failed" line is printed, and the exit
    status says failed.

And its silence limit counts QEMU's own time (tools/run/qemu.py,
Silence), shown with stand-ins for QEMU: one the host holds back (pinned
to a core beside two busy loops) outlives its limit in wall time and is
not killed; one that spins without a word, one that sleeps for ever and
one that talks for ever are killed. One that stays after the guest's
exit line is named QEMU's hang, and its threads are dumped
(tests/hangdump.py, qemu_side). A QEMU started through qemu.Group dies
with the tool that started it when that tool is killed with SIGKILL. A
host test's limit is its output's silence: one that talks past it runs
on, one that falls silent is killed.

Prints PASS/FAIL lines. Python 3 standard library only.
"""

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import run  # noqa: E402
import hangdump  # noqa: E402
from matrix import Config  # noqa: E402
from checks import Checks  # noqa: E402  (this folder: sys.path[0])
qemu = run.qemu

GOOD_LOG = ("goro: booted by multiboot1\ncpu 0: apic id 0 online\ncpu 1: apic id 1 online\n"
            "smp: 2 of 2 cores online\ngoro: main returned 0\n")


class FakeQemu:
    """qemu.Group's stand-in: each boot writes GOOD_LOG and exits 33; the
    boot of fake-unreadable leaves a directory where its log should be."""

    def run(self, argv, timeout, on_timeout=None, log=None, **kw):
        if log and "fake-unreadable" in log:
            os.makedirs(log)
        elif log:
            with open(log, "w") as f:
                f.write(GOOD_LOG)
        return 33, "", "", 0.0

    def stop(self):
        pass


def raises(lines):
    raise ValueError("a bug in the check")


def runs_missing_program(lines):
    nobody_installed = "goro-no-such-program"     # (a variable: tools/check/check_deps.py would want it listed)
    subprocess.run([nobody_installed, "--version"], capture_output=True)
    return []


def runner_over(configs, build, matrix_problem=None):
    """(stdout, exit status) of run.main over configs, QEMU faked."""
    saved = run.CONFIGS, run.MATRIX_PROBLEM, run.qemu.Group, sys.argv
    run.CONFIGS, run.MATRIX_PROBLEM, run.qemu.Group = configs, matrix_problem, FakeQemu
    sys.argv = ["run.py", "--build", build, "--filter", "fake-"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = run.main()
    except BaseException as e:  # noqa: BLE001  the property under test: it must not get here
        return out.getvalue() + f"\nRUNNER DIED: {type(e).__name__}: {e}\n", None
    finally:
        run.CONFIGS, run.MATRIX_PROBLEM, run.qemu.Group, sys.argv = saved
    return out.getvalue(), status


# The stand-ins for QEMU: argv[1] is the serial log, argv[2] a number.
# held_back spins until it has had that many CPU seconds on the core it
# shares with two busy loops, then says so and exits 0.
HELD_BACK = """import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[2])})
while time.process_time() < 0.5:
    pass
open(sys.argv[1], "w").write("done\\n")
"""
SPINS = "while True: pass"
SLEEPS = "import time; time.sleep(3600)"
TALKS = """import sys, time
with open(sys.argv[1], "w", buffering=1) as f:
    while True:
        f.write("tick\\n"); time.sleep(0.1)
"""
SILENCE_S = 1.0
BUSY = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); print(flush=True)\nwhile True: pass"


def watched(code, log, arg="0"):
    """(exit status or None once killed, wall seconds) of a stand-in for
    QEMU under qemu.wait's silence limit."""
    open(log, "w").close()
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", code, log, arg], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    status, _, _ = qemu.wait(p, SILENCE_S, log=log)
    return status, time.monotonic() - t0


def held_back(log):
    """watched(HELD_BACK) beside two busy loops on its core, each in a
    session (and so a scheduling group) of its own."""
    core = min(os.sched_getaffinity(0))
    busy = [subprocess.Popen([sys.executable, "-c", BUSY, str(core)], stdout=subprocess.PIPE,
                             start_new_session=True) for _ in range(2)]
    try:
        for b in busy:
            b.stdout.readline()    # pinned and spinning
        return watched(HELD_BACK, log, str(core))
    finally:
        for b in busy:
            qemu.kill_group(b)
            b.wait()


def silence_checks(check, tmp):
    log = os.path.join(tmp, "standin.log")
    status, secs = held_back(log)
    check("silence_slow_host_is_not_a_hang", status == 0,
          f"killed after {secs:.1f}s of wall time, with 0.5 s of CPU to use")
    check("silence_slow_host_outlived_its_wall_limit", secs > SILENCE_S,
          f"ran {secs:.1f}s: not held back, so this proves nothing")
    for name, code in (("spinning", SPINS), ("sleeping", SLEEPS), ("talking", TALKS)):
        status, secs = watched(code, log)
        check(f"silence_{name}_stand_in_is_killed", status is None, f"exit status {status}")


EXIT_HANGS = """import sys, time
open(sys.argv[1], "w").write("goro: main returned 0\\n")
time.sleep(3600)
"""


def exit_hang_checks(check, tmp):
    """A stand-in that stays after the guest's exit line, as a QEMU stuck
    in its own exit: the timeout says so and the dump shows its threads."""
    log = os.path.join(tmp, "exit.log")
    open(log, "w").close()
    dumped = []
    p = subprocess.Popen([sys.executable, "-c", EXIT_HANGS, log], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    status, _, _ = qemu.wait(p, SILENCE_S, lambda pid: dumped.extend(hangdump.qemu_side(pid, log + ".qemu")),
                             log=log)
    with open(log) as f:
        problems = run.boot_problems(Config("fake-exit", "stays after its exit line"), f.read().splitlines(),
                                     status, SILENCE_S)
    check("exit_hang_is_named_qemus", status is None and
          any(x.endswith("QEMU killed after the guest asked it to exit") for x in problems), problems)
    with open(log + ".qemu") as f:
        threads = f.read()
    check("exit_hang_dumps_qemus_threads", any(re.match(r"QEMU thread .+: S in \S+$", l) for l in dumped) and
          re.search(rf"^{p.pid} \S+: S in \S+, cpu ", threads, re.M), f"{dumped} / {threads[:200]!r}")


# Host tests for run.run_host_test: one that talks, a line at a time, for
# twice its silence limit (half its run's), and one that falls silent.
TALKS_LONG = """import sys, time
t0 = time.monotonic()
while time.monotonic() - t0 < 2 * float(sys.argv[1]):
    print("PASS talking", flush=True)
    time.sleep(0.1)
"""
FALLS_SILENT = """import time
print("PASS first", flush=True)
time.sleep(3600)
"""


def host_test_checks(check, tmp):
    """A host test's limit is its silence, not its run (test_servers'
    checks take minutes, more on a loaded host)."""
    args = types.SimpleNamespace(logs=tmp, verbose=False)
    run.HOST_TEST_TIMEOUT, limit = SILENCE_S, run.HOST_TEST_TIMEOUT
    try:
        out = {}
        for name, code in (("test_talks_long", TALKS_LONG), ("test_falls_silent", FALLS_SILENT)):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\nexec {sys.executable} -c '{code}' {SILENCE_S}\n")
            os.chmod(path, 0o755)
            out[name] = [r.line() for r in run.run_host_test(path, args, qemu.Group())[0]]
    finally:
        run.HOST_TEST_TIMEOUT = limit
    talks, silent = out["test_talks_long"], out["test_falls_silent"]
    check("host_test_talking_past_its_limit_runs_on", len(talks) >= 4 and
          all(l == "PASS host/test_talks_long/talking" for l in talks), talks[-3:])
    check("host_test_silent_for_its_limit_is_killed", silent[:1] == ["PASS host/test_falls_silent/first"] and
          any(l.startswith("FAIL host/test_falls_silent/exit: timeout: output silent") for l in silent), silent)


# A tool that starts QEMU as tests/net/goro_servers.py does (qemu.Group)
# and waits: QEMU's pid on stdout.
STARTS_QEMU = """import sys, time
sys.path.insert(0, sys.argv[1])
from tools.run import qemu
with qemu.Group().started([qemu.QEMU, "-machine", "none", "-display", "none", "-nodefaults"]) as p:
    print(p.pid, flush=True)
    time.sleep(3600)
"""
GONE_S = 60     # a hang limit: how long a killed process may take to vanish


def alive(pid):
    """pid runs (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def orphan_checks(check):
    """A host test killed with SIGKILL (run.py's HOST_TEST_TIMEOUT) runs no
    cleanup: the QEMU it started in a session of its own must die with
    it, not live on holding its forwarded port."""
    root = os.path.dirname(os.path.dirname(HERE))
    tool = subprocess.Popen([sys.executable, "-c", STARTS_QEMU, root], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = tool.stdout.readline().strip()
    pid = int(line) if line.isdigit() else None
    try:
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read().strip()
        own = os.getsid(pid) == pid != os.getsid(tool.pid)
    except (TypeError, OSError):
        comm, own = "", False
    check("orphan_qemu_runs_in_a_session_of_its_own", comm.startswith("qemu") and own,
          f"pid {line!r}, {comm!r}: the tool's kill must not reach it, or this proves nothing; "
          f"{tool.stderr.read() if pid is None else ''}")
    qemu.kill_group(tool)
    tool.wait()
    deadline = time.monotonic() + GONE_S
    while pid and alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = bool(pid) and alive(pid)
    if survived:
        os.kill(pid, signal.SIGKILL)
    check("orphan_qemu_dies_with_its_killed_starter", pid and not survived,
          f"QEMU {pid} still ran {GONE_S} s after its starter was killed")


def main():
    check = Checks("test_runner")

    with tempfile.TemporaryDirectory(prefix="goro-test-runner-") as build:
        open(os.path.join(build, "goro.elf"), "w").close()
        configs = [Config("fake-good", "passes", log_check=lambda lines: []),
                   Config("fake-raises", "its check raises", log_check=raises),
                   Config("fake-missing-program", "its check runs no program", log_check=runs_missing_program),
                   Config("fake-unreadable", "its log is a directory")]
        out, status = runner_over(configs, build)
        lines = out.splitlines()

        def line_of(name):
            return next((l for l in lines if l.startswith(("PASS ", "FAIL ")) and f" {name}/boot" in l), "")

        check("runner_lives", "RUNNER DIED" not in out, out.strip().splitlines()[-1:])
        check("closing_line", bool(lines) and lines[-1] == "1 passed, 3 failed", f"last line {lines[-1:]}")
        check("exit_status_failed", status == 1, f"exit status {status}")
        check("good_config_passes", line_of("fake-good").startswith("PASS"), line_of("fake-good") or "no line")
        l = line_of("fake-raises")
        check("raising_check_is_one_failure", l.startswith("FAIL") and "ValueError: a bug in the check" in l
              and "test_runner.py:" in l, l or "no line")
        l = line_of("fake-missing-program")
        check("missing_program_is_one_failure", l.startswith("FAIL") and
              "cannot run goro-no-such-program: not installed" in l, l or "no line")
        l = line_of("fake-unreadable")
        check("unreadable_log_is_one_failure", l.startswith("FAIL") and "cannot read" in l, l or "no line")
        check("one_line_reasons", all(len(line_of(n).splitlines()) == 1 for n in
                                      ("fake-raises", "fake-missing-program", "fake-unreadable")), "")

        out, status = runner_over([], build, matrix_problem=ImportError("no module named frob"))
        lines = out.splitlines()
        check("matrix_that_cannot_load_is_a_failure",
              any(l.startswith("FAIL matrix/load: the check raised ImportError") for l in lines) and
              lines[-1:] == ["0 passed, 1 failed"] and status == 1, out.strip()[-300:])
    with tempfile.TemporaryDirectory(prefix="goro-test-runner-") as tmp:
        silence_checks(check, tmp)
        exit_hang_checks(check, tmp)
        host_test_checks(check, tmp)
    orphan_checks(check)
    return check.status()


if __name__ == "__main__":
    sys.exit(main())
