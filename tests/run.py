#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Boots goro in QEMU across the configurations of tests/matrix.py, runs the
host unit tests in BUILD/host and a short fixed run of each fuzz harness in
BUILD/fuzz (tests/fuzz/fuzzrun.py), and reports one line per test:

    QEMU 10.0.2 (/usr/bin/qemu-system-x86_64)
    PASS smp4-kernel/boot
    PASS smp4-kernel/ktest/printf_basic
    FAIL iso-uefi/boot: exit 255, expected 33 (log: build/test-logs/iso-uefi.log)
    SKIP kvm-smoke/boot: /dev/kvm is missing
    SKIP x2apic-smp4/boot: needs x2APIC, which QEMU's TCG emulates from 9.0; this QEMU is 7.2.22
    PASS host/test_acpi/madt_basic
    PASS fuzz/acpi
    ...
    41 passed, 1 failed, 1 skipped

The last line is the verdict, always printed; the exit status is 1 on any
failure or timeout. A check that cannot run (a missing program, an
exception in a log check, an unreadable log) is its configuration's
failure with a one-line reason, never the runner's end. Every QEMU run has a timeout, because a hung guest never makes
QEMU exit: its serial log silent for the configuration's timeout (or the
run four times that long in all); the whole process group is killed then.

Python 3 standard library only.
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from fbshot import check_screenshot, run_watched  # noqa: E402
from console_typer import ConsoleTyper  # noqa: E402
import hangdump  # noqa: E402
from tools.run import qemu  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "fuzz"))
import fuzzrun  # noqa: E402
# The matrix imports the observability tools whose checks it runs: a tool
# that cannot load is the matrix's failure, reported like any other.
try:
    from matrix import CONFIGS, online_cores  # noqa: E402
    MATRIX_PROBLEM = None
except Exception as e:  # noqa: BLE001
    CONFIGS, MATRIX_PROBLEM = [], e

OVMF_DIR = "/usr/share/OVMF"
OVMF_CODE = ("OVMF_CODE_4M.fd", "OVMF_CODE.fd")
OVMF_VARS = ("OVMF_VARS_4M.fd", "OVMF_VARS.fd")
# A host test's hang limit: how long its output may stay silent in its own
# time (qemu.Silence; test_hooks_off boots four times under -icount between
# two lines), and a quarter of how long it may run: test_servers' checks
# take minutes on a quiet host and many more on a loaded one.
HOST_TEST_TIMEOUT = 900
TAIL_LINES = 12

# GRUB draws its menu with terminal escapes on the serial line; they would
# otherwise glue themselves to the first kernel line.
ANSI_RE = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|[()][0-9A-Za-z]|[=>78cDEHM])")
# "TEST PASS name (3 ms)", "TEST FAIL name: message": anything after the
# name other than ": message" (a duration) is not part of the result.
TEST_RE = re.compile(r"\bTEST (PASS|FAIL|SKIP) ([^\s:]+)(?::\s*(.*))?")
KTEST_SUMMARY_RE = re.compile(r"\bktest: (\d+) passed, (\d+) failed")
HOST_RE = re.compile(r"^(PASS|FAIL|SKIP) (\S+?)(?::\s*(.*))?$")
SEED_RE = re.compile(r"\bseed=(?:0x[0-9a-fA-F]+|\d+)")
SMP_RE = re.compile(r"\bsmp: (\d+) of (\d+) cores online")
LOADER_OF_BOOT = {"kernel": "multiboot1", "iso": "multiboot2", "efi": "uefi",
                  "efi-nokernel": None}
# Disk images booted from a per-run copy (the firmware may write to them).
DISK_IMAGE = {"efi": "goro-efi.img", "efi-nokernel": "goro-efi.img", "usb": "goro-usb.img"}
FONT_C = os.path.join(HERE, "..", "drivers", "font8x16.c")


def expected_loader(cfg):
    # The USB image boots GRUB on BIOS and the GNU-EFI loader on UEFI.
    if cfg.boot == "usb":
        return "uefi" if cfg.firmware == "ovmf" else "multiboot2"
    return LOADER_OF_BOOT[cfg.boot]


class Result:
    """One reported line: status is PASS, FAIL or SKIP."""

    def __init__(self, status, name, reason=""):
        self.status, self.name, self.reason = status, name, reason

    def line(self):
        return f"{self.status} {self.name}" + (f": {self.reason}" if self.reason else "")


# ---- QEMU ------------------------------------------------------------------

def find_firmware(names):
    for n in names:
        p = os.path.join(OVMF_DIR, n)
        if os.path.exists(p):
            return p
    return None


# The kernel's line before it asks QEMU to exit (kernel/main.c): a
# timeout after it is QEMU's hang, not the guest's.
EXITED_RE = re.compile(r"^goro: main returned -?\d+$")


def qemu_argv(cfg, build, log, vars_copy, extra_cmdline, disk, monitor, com1=None, com1_log=None):
    cmdline = " ".join(w for w in (cfg.cmdline, extra_cmdline) if w)
    serial, extra = f"file:{log}", []
    if com1:
        # QEMU connects to the runner's socket at start-up, before the guest
        # runs, and its chardev logfile keeps the log what -serial file: made.
        serial = "chardev:com1"
        extra = ["-chardev", f"socket,id=com1,path={qemu.option_string(com1)},"
                 f"logfile={qemu.option_string(com1_log or log)}"]
    for name, text in cfg.fw_cfg:
        extra += ["-fw_cfg", f"name={name},string={qemu.option_string(text)}"]
    extra += cfg.qemu_extra
    # Thread names ("ALL CPUs/TCG", "CPU 3/TCG") for the hang dump's view of QEMU.
    extra += ["-name", "goro,debug-threads=on"]
    # A screenshot run has no exit device: the kernel halts after its last
    # line and the screen stays as it left it.
    argv = qemu.argv(cfg.smp or cfg.cores, cfg.mem, accel=cfg.accel, machine=cfg.machine,
                     serial=serial, exit_device=not cfg.screenshot, apic=cfg.apic,
                     extra=extra + qemu.monitor_argv(monitor) + nic_argv(cfg))
    return argv + numa_argv(cfg) + firmware_argv(cfg, vars_copy) + boot_argv(cfg, build, disk, cmdline)


def nic_argv(cfg):
    """The configuration's NIC, or none at all (QEMU's default NIC left out)."""
    if not cfg.nic:
        return ["-net", "none"]
    return qemu.nic_argv(cfg.nic, cfg.netdev)


def numa_argv(cfg):
    argv = []
    for i, node in enumerate(cfg.numa or []):
        opts = f"node,nodeid={i}" + (f",cpus={node.cpus}" if node.cpus else "")
        if node.mem:
            argv += ["-object", f"memory-backend-ram,id=mem{i},size={node.mem}"]
            opts += f",memdev=mem{i}"
        argv += ["-numa", opts]
    for i, node in enumerate(cfg.numa or []):
        if node.socket is not None:
            argv += ["-numa", f"cpu,node-id={i},socket-id={node.socket}"]
    for src, dst, val in cfg.numa_dist:
        argv += ["-numa", f"dist,src={src},dst={dst},val={val}"]
    return argv


def firmware_argv(cfg, vars_copy):
    if cfg.firmware != "ovmf":
        return []           # SeaBIOS, QEMU's default
    return ["-drive", f"if=pflash,format=raw,readonly=on,file={find_firmware(OVMF_CODE)}",
            "-drive", f"if=pflash,format=raw,file={vars_copy}"]


def boot_argv(cfg, build, disk, cmdline):
    if cfg.boot == "kernel":
        return qemu.kernel_boot(os.path.join(build, "goro.elf"), cmdline)
    if disk:
        return qemu.disk_boot(disk, cmdline)
    return qemu.cdrom_boot(os.path.join(build, "goro.iso"), cmdline)


class VcpuBudget:
    """Caps the vCPUs running at once. TCG runs one host thread per vCPU, and
    a guest whose vCPU threads are starved spins in its scheduler: on this
    2-core host the 8-vCPU ktest took 10-13 s alone and 80-93 s beside a
    4-vCPU run. A run asks for min(cores, limit), so a big one runs alone.
    Requests are served in arrival order, so small runs cannot starve it."""

    def __init__(self, limit):
        self.limit, self.used = limit, 0
        self.next_ticket = self.serving = 0
        self.cond = threading.Condition()

    def acquire(self, n):
        n = min(n, self.limit)
        with self.cond:
            ticket = self.next_ticket
            self.next_ticket += 1
            self.cond.wait_for(lambda: self.serving == ticket and self.used + n <= self.limit)
            self.used += n
            self.serving += 1
            self.cond.notify_all()
        return n

    def release(self, n):
        with self.cond:
            self.used -= n
            self.cond.notify_all()


class SerialFeeder:
    """Config.serial_input: the listening end of the guest's COM1. Reads
    (and drops: the chardev logs it) everything the guest writes, so it never
    waits on a full socket, and sends the input once the output matches
    serial_after."""

    def __init__(self, cfg):
        self.dir = tempfile.mkdtemp(prefix="goro-com1-")   # short: sun_path has 108 bytes
        self.path = os.path.join(self.dir, "com1")
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(self.path)
        self.listener.listen(1)
        self.after = re.compile(cfg.serial_after, re.M)
        self.data = cfg.serial_input.encode()
        self.sent = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def start(self):
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(60)
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        with conn:
            seen = ""
            while True:
                try:
                    d = conn.recv(4096)
                except OSError:
                    return
                if not d:
                    return
                if not self.sent:
                    text = ANSI_RE.sub("", (seen + d.decode(errors="replace")).replace("\r", ""))
                    if self.after.search(text):
                        conn.sendall(self.data)
                        self.sent = True
                    seen = text[-4096:]

    def close(self):
        self.listener.close()
        self.thread.join(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- checking a log ----------------------------------------------------------

class LogError(Exception):
    """A log that exists but cannot be read."""


def read_log(path):
    try:
        with open(path, "rb") as f:
            text = f.read().decode(errors="replace")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise LogError(f"cannot read {os.path.relpath(path)}: {e.strerror or e}") from e
    return [ANSI_RE.sub("", l).rstrip("\r") for l in text.split("\n")]


def tail(lines, n=TAIL_LINES):
    body = [l for l in lines if l.strip()][-n:]
    return "\n".join("    | " + l for l in body) if body else "    | (serial log empty)"


def find_seed(lines):
    for l in lines:
        if SEED_RE.search(l):
            return l.strip()
    return None


def qemu_error(err):
    """The line of QEMU's stderr that says what went wrong: after a KVM
    failure it goes on with a register dump."""
    lines = err.splitlines()
    for l in lines:
        if "error" in l.lower():
            return l.strip()
    return lines[0].strip()


def boot_problems(cfg, lines, status, timeout):
    """What is wrong with a run apart from individual tests; [] when fine."""
    problems = []
    if status is None:
        problems.append(f"timeout: serial log silent for {timeout:.0f}s or run over "
                        f"{qemu.HARD_LIMIT * timeout:.0f}s of QEMU's own time, QEMU killed" +
                        (" after the guest asked it to exit" if any(EXITED_RE.match(l) for l in lines) else ""))
    elif status != cfg.exit_status:
        problems.append(f"{qemu.describe_status(status)}, expected {cfg.exit_status}")
    if not any(l.strip() for l in lines):
        # Every other check would fail too and say nothing more.
        return problems + ["serial log empty"]
    if cfg.check_cores:
        online = online_cores(lines)
        missing = [n for n in range(cfg.cores) if n not in online]
        if missing:
            problems.append("no online line for cpu " + ",".join(map(str, missing)))
        smp = [SMP_RE.search(l) for l in lines]
        smp = [m for m in smp if m]
        if not smp:
            problems.append("no 'smp: K of K cores online' line")
        elif (int(smp[-1].group(1)), int(smp[-1].group(2))) != (cfg.cores, cfg.cores):
            problems.append(f"'{smp[-1].group(0)}', expected {cfg.cores} of {cfg.cores}")
    loader = expected_loader(cfg)
    if loader and not any(f"booted by {loader}" in l for l in lines):
        problems.append(f"no 'booted by {loader}' line")
    for rx in cfg.expect:
        if not any(re.search(rx, l) for l in lines):
            problems.append(f"no line matches /{rx}/")
    i = 0
    for rx in cfg.expect_seq:
        while i < len(lines) and not re.search(rx, lines[i]):
            i += 1
        if i == len(lines):
            problems.append(f"no line matches /{rx}/ in order")
            break
        i += 1
    for rx in cfg.reject:
        bad = [l for l in lines if re.search(rx, l)]
        if bad:
            problems.append(f"unexpected line: {bad[0].strip()}")
    if cfg.log_check:
        problems += cfg.log_check(lines)
    return problems


def ktest_results(cfg, lines):
    """Per-test results from TEST lines, and problems with the whole set."""
    results, problems = [], []
    seen = set()
    for l in lines:
        m = TEST_RE.search(l)
        if not m:
            continue
        status, name, msg = m.group(1), m.group(2), m.group(3) or ""
        full = f"{cfg.name}/ktest/{name}"
        if full in seen:
            problems.append(f"test {name} reported twice")
        seen.add(full)
        results.append(Result(status, full, msg))
    summary = [m for m in map(KTEST_SUMMARY_RE.search, lines) if m]
    passed = sum(r.status == "PASS" for r in results)
    failed = sum(r.status == "FAIL" for r in results)
    if not summary:
        problems.append("no 'ktest: N passed, N failed' line")
    elif (int(summary[-1].group(1)), int(summary[-1].group(2))) != (passed, failed):
        problems.append(f"'{summary[-1].group(0)}' but the log has {passed} PASS "
                        f"and {failed} FAIL lines")
    if not results:
        problems.append("no TEST lines")
    return results, problems


# ---- one configuration ------------------------------------------------------

def kvm_usable():
    if not os.path.exists("/dev/kvm"):
        return "/dev/kvm is missing"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "/dev/kvm is not accessible"
    return None


def run_config(cfg, args, runner):
    """Returns (results, notes): notes are lines printed after the results."""
    log = os.path.join(args.logs, f"{cfg.name}.log")
    if os.path.exists(log):
        os.remove(log)
    why = cfg.requires_kvm and kvm_usable() or cfg.accel == "tcg" and qemu.x2apic_missing(cfg.cores, cfg.apic)
    if why:
        return [Result("SKIP", f"{cfg.name}/boot", why)], []
    try:
        disk, vars_copy = prepare_images(cfg, args)
    except SetupError as e:
        return [Result("FAIL", f"{cfg.name}/boot", str(e))], []
    run = boot(cfg, args, runner, Run(cfg, log), disk, vars_copy)
    lines = read_log(log)
    problems, results = judge(cfg, run, lines, cfg.timeout * args.timeout_scale)
    return report_run(cfg, args, run, lines, problems, results)


class SetupError(Exception):
    """A run that cannot start: a missing image or firmware."""


def config_build(cfg, args):
    """The build directory a configuration boots: its own (cfg.build, e.g.
    the debug build) below the main one, or the main one."""
    return os.path.join(args.build, cfg.build) if cfg.build else args.build


def prepare_images(cfg, args):
    """(the per-run disk copy or None, the per-run OVMF variables or None)."""
    image = os.path.join(config_build(cfg, args), DISK_IMAGE.get(cfg.boot) or
                         ("goro.elf" if cfg.boot == "kernel" else "goro.iso"))
    if not os.path.exists(image):
        raise SetupError(f"{image} not built")
    disk = None
    if cfg.boot in DISK_IMAGE:
        disk = os.path.join(args.logs, f"{cfg.name}.img")
        shutil.copyfile(image, disk)
        if cfg.boot == "efi-nokernel":
            rm = subprocess.run(["mdel", "-i", disk, "::/goro.elf"], capture_output=True, text=True)
            if rm.returncode:
                raise SetupError(f"mdel: {rm.stderr.strip()}")
    vars_copy = None
    if cfg.firmware == "ovmf":
        code, vars_src = find_firmware(OVMF_CODE), find_firmware(OVMF_VARS)
        if not code or not vars_src:
            raise SetupError(f"no OVMF firmware in {OVMF_DIR}")
        # Variables persist across boots (boot order, failed attempts), so
        # each run starts from the pristine file.
        vars_copy = os.path.join(args.logs, f"{cfg.name}.vars.fd")
        shutil.copyfile(vars_src, vars_copy)
    return disk, vars_copy


class Run:
    """One boot: its serial log, QEMU's exit status (None: timed out), its
    stderr and wall time, and what else it left: the hang dump, the
    screenshot, whether the serial input was sent."""

    def __init__(self, cfg, log):
        self.log = log
        self.status, self.err, self.secs = None, "", 0.0
        self.hang = []
        self.shot = os.path.join(os.path.dirname(log), f"{cfg.name}.ppm") if cfg.screenshot else None
        if self.shot and os.path.exists(self.shot):
            os.remove(self.shot)
        self.feeder = SerialFeeder(cfg) if cfg.serial_input is not None else None
        self.typer = None           # cfg.console's ConsoleTyper, made with the monitor's path


def boot(cfg, args, runner, run, disk, vars_copy):
    """Runs QEMU once and returns run with its outcome."""
    log = run.log
    # Every run has a monitor in a short path (sun_path has 108 bytes): a
    # watched run stops QEMU through it, and a run that times out is asked
    # where its vCPUs are first.
    mon_dir = tempfile.mkdtemp(prefix="goro-mon-")
    monitor = os.path.join(mon_dir, "m")

    def dump_hang(pid):
        # QEMU's side first, before the monitor stops the guest: a QEMU
        # that hangs in its own exit answers no monitor.
        try:
            run.hang.extend(hangdump.qemu_side(pid, log + ".qemu"))
        except (OSError, ValueError) as e:
            run.hang.append(f"no dump of QEMU's threads: {e}")
        try:
            run.hang.extend(hangdump.dump(monitor, os.path.join(config_build(cfg, args), "goro.elf"),
                                          log + ".hang"))
        except (OSError, ValueError) as e:
            run.hang.append(f"no hang dump: {e}")
    run.typer = ConsoleTyper(cfg, log, monitor) if cfg.console else None
    com1 = run.feeder.path if run.feeder else run.typer.com1 if run.typer else None
    argv = qemu_argv(cfg, config_build(cfg, args), log, vars_copy, args.append, disk, monitor, com1,
                     run.typer.qemu_log if run.typer else None)
    with open(log + ".cmd", "w") as f:
        f.write(" ".join(shlex.quote(a) for a in argv) + "\n")
    timeout = cfg.timeout * args.timeout_scale
    held = args.budget.acquire(cfg.cores)
    try:
        if run.feeder:
            run.feeder.start()
        if run.typer:
            run.typer.start()
        if cfg.stop_at:
            status, err, secs = run_watched(runner, argv, log, monitor, cfg.stop_at, run.shot, timeout)
        else:
            status, _, err, secs = runner.run(argv, timeout, dump_hang, log=log)
        run.status, run.err, run.secs = status, err.strip(), secs
    finally:
        args.budget.release(held)
        shutil.rmtree(mon_dir, ignore_errors=True)
        if run.feeder:
            run.feeder.close()
        if run.typer:
            run.typer.close()
    return run


def judge(cfg, run, lines, timeout):
    """(problems with the run as a whole, per-test results)."""
    results, problems = [], []
    if cfg.ktest and any(l.strip() for l in lines):
        results, problems = ktest_results(cfg, lines)
    problems = boot_problems(cfg, lines, run.status, timeout) + problems
    if run.feeder and not run.feeder.sent:
        problems.append(f"serial input never sent: no output matched /{cfg.serial_after}/")
    if run.typer:
        problems += run.typer.problems()
    if run.shot and not problems:
        problems = check_screenshot(run.shot, run.log, FONT_C)
    if run.err and run.status != cfg.exit_status:
        problems.append("qemu: " + qemu_error(run.err))
    return problems, results


def report_run(cfg, args, run, lines, problems, results):
    """The boot's own result first, then the tests'; notes say where to look."""
    boot_name = f"{cfg.name}/boot"
    notes = []
    if args.verbose:
        notes.append(f"# {cfg.name}: {qemu.describe_status(run.status)} in {run.secs:.1f}s")
    if cfg.optional and problems:
        # Never a failure: the host may not run this configuration at all.
        return [Result("SKIP", boot_name, "optional run unusable here: " + "; ".join(problems))], notes
    rel = os.path.relpath(run.log)
    if problems:
        results.insert(0, Result("FAIL", boot_name, "; ".join(problems) + f" (log: {rel})"))
        notes.append(tail(lines))
        if run.hang:
            notes.append("\n".join(f"    {cfg.name}: {h}" for h in run.hang) +
                         f"\n    (registers: {rel}.hang; QEMU's threads: {rel}.qemu)")
        notes.append(f"    qemu command: {rel}.cmd")
        if run.err:
            notes.append("\n".join("    qemu: " + l for l in run.err.splitlines()[-5:]))
    else:
        results.insert(0, Result("PASS", boot_name))
    for r in results:
        if r.status == "FAIL" and r.name != boot_name:
            r.reason = (r.reason or "failed") + f" (log: {rel})"
    if any(r.status == "FAIL" for r in results):
        seed = find_seed(lines)
        if seed:
            notes.append(f"    {cfg.name}: {seed}")
    return results, notes


# ---- host unit tests ---------------------------------------------------------

def host_tests(build):
    d = os.path.join(build, "host")
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.startswith("test_") and os.access(os.path.join(d, f), os.X_OK)
                  and os.path.isfile(os.path.join(d, f)))


def run_host_test(path, args, runner):
    base = os.path.basename(path)
    prefix = f"host/{base}"
    log = os.path.join(args.logs, f"host-{base}.log")
    with open(log, "wb") as f:
        status, _, _, secs = runner.run([path], HOST_TEST_TIMEOUT, stdout=f, stderr=subprocess.STDOUT, log=log)
    with open(log, errors="replace") as f:
        text = f.read()
    rel = os.path.relpath(log)
    results = []
    for l in text.splitlines():
        m = HOST_RE.match(l)
        if m:
            results.append(Result(m.group(1), f"{prefix}/{m.group(2)}", m.group(3) or ""))
    for r in results:
        if r.status == "FAIL":
            r.reason += f" (log: {rel})"
    notes = []
    if args.verbose:
        notes.append(f"# {prefix}: exit {status} in {secs:.1f}s")
    failed = any(r.status == "FAIL" for r in results)
    # A crash (sanitizer report, signal) after the last PASS line, or a
    # non-zero exit that no FAIL line explains, is a failure of its own.
    if status is None:
        results.append(Result("FAIL", f"{prefix}/exit", f"timeout: output silent for {HOST_TEST_TIMEOUT}s "
                                                         f"or run over {qemu.HARD_LIMIT * HOST_TEST_TIMEOUT}s "
                                                         f"of its own time, killed (log: {rel})"))
    elif status != 0 and not failed:
        results.append(Result("FAIL", f"{prefix}/exit", f"{describe_host_status(status)} (log: {rel})"))
    elif not results:
        results.append(Result("FAIL", f"{prefix}/exit", f"no PASS/FAIL lines (log: {rel})"))
    if status != 0 and not failed or status is None:
        notes.append(tail(text.splitlines()))
    return results, notes


def run_fuzz(name, args, runner):
    """A fuzz harness over its corpus plus a short fixed run (tests/fuzz/fuzzrun.py)."""
    status, reason = fuzzrun.replay(args.build, name, args.logs, runner)
    notes = [f"# fuzz/{name}: {reason}"] if args.verbose and status == "PASS" else []
    return [Result(status, f"fuzz/{name}", "" if status == "PASS" else reason)], notes


def describe_host_status(status):
    if status < 0:
        return f"killed by signal {-status}"
    return f"exit {status}"


# ---- a check that cannot run ----------------------------------------------------

DEPS_LIST = os.path.join(HERE, "..", "tools", "deps.list")


def package_of(program):
    """The Debian package tools/deps.list names for a program, or None."""
    try:
        with open(DEPS_LIST) as f:
            for line in f:
                w = line.split()
                if len(w) >= 3 and not w[0].startswith("#") and w[0] != "-" and \
                        program in [c.split(">=")[0] for c in w[2].split(",")]:
                    return w[0].split("@")[0]
    except OSError:
        pass
    return None


def why_it_broke(e):
    """One line for an exception a check raised: what failed, and where."""
    if isinstance(e, LogError):
        return str(e)
    if isinstance(e, FileNotFoundError) and e.filename and "/" not in str(e.filename):
        pkg = package_of(e.filename)
        return (f"cannot run {e.filename}: not installed" +
                (f" (Debian's {pkg}; make test installs it as root)" if pkg else
                 " (and tools/deps.list does not name it: add it there)"))
    tb = e.__traceback__
    while tb and tb.tb_next:
        tb = tb.tb_next
    where = f" at {os.path.relpath(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}" if tb else ""
    return f"the check raised {type(e).__name__}: {e}{where}"


def guarded(name, fn, *args):
    """fn(*args)'s (results, notes); an exception becomes name's FAIL."""
    try:
        return fn(*args)
    except Exception as e:      # noqa: BLE001  any exception: one test's failure, not the run's
        return [Result("FAIL", name, why_it_broke(e))], []


# ---- main ------------------------------------------------------------------

def selected(name, filters):
    return not filters or any(f in name for f in filters)


def main():
    args = parse_args()
    os.environ["GORO_BUILD"] = args.build     # the image log checks symbolize against (matrix.profile_check)
    if args.list:
        for c in CONFIGS:
            print(f"{c.name:20} {c.help}" + (" [--heavy]" if c.heavy else " [--scale]" if c.scale else ""))
        print(f"{'host':20} host unit tests: every {args.build}/host/test_* binary")
        print(f"{'fuzz':20} fuzz harnesses over their corpus (tests/fuzz/fuzzrun.py)")
        return 0
    filters = [f for arg in args.filter for f in arg.split(",") if f]
    if args.scale:
        configs, hosts, fuzzes = [c for c in CONFIGS if c.scale and selected(c.name, filters)], [], []
    else:
        configs = [c for c in CONFIGS if selected(c.name, filters) and (args.heavy or not c.heavy) and not c.scale]
        hosts = host_tests(args.build) if selected("host", filters) else []
        fuzzes = [n for n in fuzzrun.harnesses() if selected(f"fuzz/{n}", filters)]
    if not configs and not hosts and not fuzzes and not MATRIX_PROBLEM:
        print("run.py: nothing selected", file=sys.stderr)
        return 2
    if configs:
        qemu.announce(file=sys.stdout)      # "QEMU 10.0.2 (/usr/bin/qemu-system-x86_64)"
    t0 = time.monotonic()
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0, "failures": []}
    if MATRIX_PROBLEM:
        line = Result("FAIL", "matrix/load", why_it_broke(MATRIX_PROBLEM)).line()
        print(line)
        counts["FAIL"] += 1
        counts["failures"].append(line)
    if run_all(configs, hosts, fuzzes, args, counts) is None:
        print("interrupted", file=sys.stderr)
        return 130
    if args.verbose:
        print(f"# wall time {time.monotonic() - t0:.1f}s")
    if counts["failures"]:
        # Again at the end, where a truncated CI log still shows them: a
        # boot's FAIL line comes before its tests' lines, and its reason
        # ("app returned 1") does not name the test that failed.
        print(f"# FAIL lines again ({len(counts['failures'])}):")
        for line in counts["failures"]:
            print("#   " + line)
    summary = f"{counts['PASS']} passed, {counts['FAIL']} failed"
    if counts["SKIP"]:
        summary += f", {counts['SKIP']} skipped"
    print(summary)
    return 1 if counts["FAIL"] else 0


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build directory (default build)")
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="QEMU runs in parallel (default 2)")
    ap.add_argument("--vcpus", type=int, default=4 * (os.cpu_count() or 1), metavar="N",
                    help="at most N vCPUs running at once (default 4 per host CPU)")
    ap.add_argument("--filter", action="append", default=[],
                    help="run only configurations whose name contains this "
                         "(repeatable, or comma-separated; 'host' is the host tests, 'fuzz' the fuzz harnesses)")
    ap.add_argument("--list", action="store_true", help="list the configurations")
    ap.add_argument("--heavy", action="store_true",
                    help="also the heavy configurations (hundreds of vCPUs, minutes each; make test-stress)")
    ap.add_argument("--scale", action="store_true",
                    help="only the scale configurations (full ktest at 256 vCPUs and up, 1024-vCPU boots: "
                         "20 minutes to hours each here; make test-scale)")
    ap.add_argument("--append", default="",
                    help="words added to every command line, e.g. 'seed=42 filter=chan'")
    ap.add_argument("--seed", help="add seed=N to every command line (replay a run)")
    ap.add_argument("--timeout-scale", type=float, default=1.0, metavar="F",
                    help="multiply every hard timeout by F (a slow host)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also print each run's exit status and wall time")
    args = ap.parse_args()
    if args.seed:
        args.append = f"{args.append} seed={args.seed}".strip()
    args.logs = os.path.join(args.build, "test-logs")
    args.budget = VcpuBudget(max(1, args.vcpus))
    return args


def run_all(configs, hosts, fuzzes, args, counts):
    """Runs everything selected, printing results as they come and adding
    them to counts (by status, and the FAIL lines); returns counts, or None
    when interrupted."""
    os.makedirs(args.logs, exist_ok=True)
    runner = qemu.Group()
    out_lock = threading.Lock()

    def print_results(future, name):
        try:
            results, notes = future.result()
        except Exception as e:      # noqa: BLE001  guarded() let one through: still one failure
            results, notes = [Result("FAIL", name, why_it_broke(e))], []
        with out_lock:
            for r in results:
                counts[r.status] += 1
                if r.status == "FAIL":
                    counts["failures"].append(r.line())
                print(r.line())
            for n in notes:
                print(n)
            sys.stdout.flush()

    # A CI job that is cancelled sends SIGTERM; QEMU runs in sessions of
    # their own, so they would outlive the runner unless killed here.
    def terminate(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        futures = {pool.submit(guarded, f"{c.name}/boot", run_config, c, args, runner): f"{c.name}/boot"
                   for c in configs}
        # Host tests are CPU-bound too; they queue behind the QEMU runs.
        futures.update({pool.submit(guarded, f"host/{os.path.basename(h)}/exit", run_host_test, h, args, runner):
                        f"host/{os.path.basename(h)}/exit" for h in hosts})
        futures.update({pool.submit(guarded, f"fuzz/{n}", run_fuzz, n, args, runner): f"fuzz/{n}"
                        for n in fuzzes})
        for f in concurrent.futures.as_completed(futures):
            print_results(f, futures[f])
    except KeyboardInterrupt:
        runner.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        return None
    pool.shutdown(wait=True)
    return counts


if __name__ == "__main__":
    sys.exit(main())
