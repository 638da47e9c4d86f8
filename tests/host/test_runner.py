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

Prints PASS/FAIL lines. Python 3 standard library only.
"""

import contextlib
import io
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import run  # noqa: E402
from matrix import Config  # noqa: E402

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


def main():
    failed = 0

    def check(name, ok, why):
        nonlocal failed
        print(f"PASS {name}" if ok else f"FAIL {name}: {why}")
        failed += not ok

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
    if failed:
        print(f"test_runner: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
