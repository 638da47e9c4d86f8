#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How every host tool starts QEMU: the command line, the exit-status rule,
a launch in a session of its own that dies with its starter (spawn), the
kill of that whole session, and the human monitor (screenshots, a hung
guest's hang dump).

Used by tests/run.py (with tests/fbshot.py and tests/hangdump.py),
tools/bench/bench.py, tools/bench/peer_guest.py, and the Makefile's run and debug
targets through the command below:

    tools/run/qemu.py [--smp N] [--mem SIZE] [--numa N] [--gdb] ELF [CMDLINE]

boots ELF under TCG with the serial port on this terminal, prints QEMU's
exit status and what it means, and exits 0 only when the application
returned 0. Every QEMU started through this module runs without
transparent huge pages (thp(), below; GORO_QEMU_THP=1 keeps them), and
the first one a process starts is announced on stderr with QEMU's version
(announce()). $QEMU names the binary (default qemu-system-x86_64).

Python 3 standard library only.
"""

import argparse
import contextlib
import ctypes
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

QEMU = os.environ.get("QEMU", "qemu-system-x86_64")

# goro's result leaves QEMU through the isa-debug-exit device: a write of v
# makes QEMU exit with (v << 1) | 1. The kernel writes 16 for a main that
# returned 0, v for 1..15, and 127 for a fatal error.
EXIT_DEVICE = ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
EXIT_OK = 33
EXIT_FATAL = 255


def describe_status(status):
    """QEMU's exit status (None: killed after a timeout) in words."""
    if status is None:
        return "timeout"
    if status == 0:
        return "exit 0 (triple fault or ACPI power-off)"
    if status == 1:
        return "exit 1 (QEMU failed)"
    if status == EXIT_OK:
        return "exit 33 (app returned 0)"
    if status == EXIT_FATAL:
        return "exit 255 (kernel fatal error)"
    if 3 <= status <= 31 and status & 1:
        return f"exit {status} (app returned {status >> 1})"
    if status < 0:
        return f"killed by signal {-status}"
    return f"exit {status}"


# ---- the command line ----------------------------------------------------------

def argv(smp, mem, accel="tcg", machine=None, serial="stdio", exit_device=True, extra=(),
         apic=None):
    """The options every boot shares: the machine, its vCPUs (a count or a
    -smp topology), memory, the accelerator and its CPU (apic: see
    accel_argv), no display, no reboot (a triple fault ends the run) and
    the serial port (a -serial value). Append the image to boot:
    kernel_boot, disk_boot or cdrom_boot.

    A run under -icount gets xAPIC unless apic says otherwise: QEMU's TCG
    counts an instruction that reads the virtual clock only when it ends
    its translation block as I/O does, which port and MMIO accesses do and
    RDMSR/WRMSR do not (QEMU 10.0), so the x2APIC timer's MSRs (initial
    count 0x838, current count 0x839) stop QEMU with "Bad icount read"."""
    if apic is None and "-icount" in extra:
        apic = "xapic"
    cmd = [QEMU]
    if machine:
        cmd += ["-machine", machine]
    cmd += ["-smp", str(smp), "-m", mem, "-no-reboot", "-display", "none",
            "-serial", serial] + accel_argv(accel, apic)
    if exit_device:
        cmd += EXIT_DEVICE
    return cmd + list(extra)


def image_argparser(doc):
    """The command line of a tool that boots the image: doc (its module
    docstring) as description and epilog, and --build and --elf, the ELF
    that image(opts) names."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0], epilog=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"),
                    help="build directory (default $BUILD or build)")
    ap.add_argument("--elf", default="", help="goro image (default BUILD/goro.elf)")
    return ap


def image(opts):
    return opts.elf or os.path.join(opts.build, "goro.elf")


# The CPU's local APIC mode: None, what the CPU model offers (-cpu max:
# x2APIC on QEMU 9.0 and later, xAPIC before); "xapic", without x2APIC;
# "x2apic", with it (only QEMU 9.0 and later: x2apic_missing()).
APIC_FLAGS = {None: "", "xapic": ",-x2apic", "x2apic": ",+x2apic"}


def accel_argv(accel, apic=None):
    if apic not in APIC_FLAGS:
        raise ValueError(f"unknown APIC mode {apic!r}")
    if accel == "kvm":
        # This host's KVM refuses IA32_ARCH_CAPABILITIES (MSR 0x10a), and
        # QEMU 7.2 then aborts at start-up with -cpu host alone.
        return ["-accel", "kvm", "-cpu", "host,-arch-capabilities" + APIC_FLAGS[apic]]
    if accel == "tcg":
        # -cpu max: the APIC one-shot timer (no TSC-deadline under TCG),
        # XSAVE and AVX2; x2APIC from QEMU 9.0.
        return ["-accel", "tcg", "-cpu", "max" + APIC_FLAGS[apic]]
    raise ValueError(f"unknown accelerator {accel!r}")


def option_string(s):
    """s inside a QEMU option value: a comma ends a value, ",," is a literal one."""
    return s.replace(",", ",,")


def mem_mib(mem):
    """A QEMU memory size ("512M", "1G", "2048") in MiB."""
    m = re.fullmatch(r"(\d+)([MG]?)", mem.upper())
    if not m:
        raise ValueError(f"memory size {mem!r}: a number of MiB, or with M or G")
    return int(m.group(1)) * (1024 if m.group(2) == "G" else 1)


def numa_even_argv(nodes, cpus, mem):
    """-numa options for `nodes` nodes sharing cpus vCPUs and mem evenly (the
    first nodes take what does not divide), 20 between any two nodes: the
    NUMA shapes of make run NUMA=N and tools/run/soak.py."""
    if nodes <= 1:
        return []
    if nodes > cpus:
        raise ValueError(f"{nodes} NUMA nodes need at least as many vCPUs ({cpus})")
    argv, cpu, left = [], 0, mem_mib(mem)
    for i in range(nodes):
        n = cpus // nodes + (1 if i < cpus % nodes else 0)
        size = left // (nodes - i)
        left -= size
        argv += ["-object", f"memory-backend-ram,id=mem{i},size={size}M",
                 "-numa", f"node,nodeid={i},cpus={cpu}-{cpu + n - 1},memdev=mem{i}"]
        cpu += n
    for a in range(nodes):
        for b in range(a + 1, nodes):
            argv += ["-numa", f"dist,src={a},dst={b},val=20"]
    return argv


# ---- NICs -------------------------------------------------------------------------

# The NICs goro drives (drivers/net/): QEMU's device for each model name.
NIC_MODELS = {
    "virtio": "virtio-net-pci",                             # transitional: modern and legacy
    "virtio-modern": "virtio-net-pci,disable-legacy=on",
    "virtio-legacy": "virtio-net-pci,disable-modern=on",
    "e1000e": "e1000e",
}


def nic_argv(model, netdev="user", hostfwd=(), mq=0, dgram=None):
    """One NIC of model (NIC_MODELS) on a backend: "user" (QEMU's user
    networking, restricted: the guest reaches 10.0.2.2 and what hostfwd
    forwards to it from 127.0.0.1, nothing outside), "dgram" (every frame
    a UDP datagram between QEMU's port and a host program's on 127.0.0.1:
    dgram=(QEMU's port, the program's)) or "none" (the NIC with no
    backend: its link is down). hostfwd: (host port, guest port) TCP pairs.
    mq: queue pairs to offer (virtio; the backend must have as many
    queues, which user networking and dgram have not).

    >>> nic_argv("virtio-modern")
    ['-netdev', 'user,id=n0,restrict=on', '-device', 'virtio-net-pci,disable-legacy=on,netdev=n0']
    >>> nic_argv("e1000e", hostfwd=[(22501, 8080)])
    ['-netdev', 'user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:22501-:8080', '-device', 'e1000e,netdev=n0']
    >>> nic_argv("virtio-legacy", netdev="none")
    ['-device', 'virtio-net-pci,disable-modern=on']
    >>> nic_argv("e1000e", netdev="dgram", dgram=(22602, 22601))[1]
    'dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=22602,remote.type=inet,remote.host=127.0.0.1,remote.port=22601'
    """
    if model not in NIC_MODELS:
        raise ValueError(f"unknown NIC {model!r}: one of {', '.join(NIC_MODELS)}")
    device = NIC_MODELS[model]
    if mq > 1:
        device += f",mq=on,vectors={2 * mq + 2}"
    if netdev == "none":
        return ["-device", device]
    if netdev == "dgram":
        mine, theirs = dgram
        opts = (f"dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port={mine},"
                f"remote.type=inet,remote.host=127.0.0.1,remote.port={theirs}")
        return ["-netdev", opts, "-device", device + ",netdev=n0"]
    if netdev != "user":
        raise ValueError(f"unknown NIC backend {netdev!r}: user, dgram or none")
    opts = "user,id=n0,restrict=on" + "".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in hostfwd)
    return ["-netdev", opts, "-device", device + ",netdev=n0"]


def fw_cfg_cmdline(cmdline):
    # The kernel appends opt/goro/cmdline to its loader's command line, so
    # this reaches every boot path. None for an empty line: QEMU refuses an
    # empty string=, and the image's own line (goro.cmdline, GRUB's) stands.
    if not cmdline:
        return []
    return ["-fw_cfg", f"name=opt/goro/cmdline,string={option_string(cmdline)}"]


def kernel_boot(elf, cmdline):
    """QEMU's multiboot v1 loader: the fast path."""
    return ["-kernel", elf, "-append", cmdline]


def disk_boot(image, cmdline):
    """A raw disk image (goro-efi.img, goro-usb.img) as the first drive."""
    return ["-drive", f"format=raw,file={image}"] + fw_cfg_cmdline(cmdline)


def cdrom_boot(iso, cmdline):
    return ["-cdrom", iso, "-boot", "d"] + fw_cfg_cmdline(cmdline)


def plugin_argv(plugin, log):
    """A TCG plugin (insncount) whose output goes to log."""
    return ["-plugin", plugin, "-d", "plugin", "-D", log]


def monitor_argv(path):
    """The human monitor on a unix socket (see Monitor)."""
    return ["-monitor", f"unix:{path},server,nowait"]


_version = None


def version():
    """QEMU's version as it prints it ("10.0.2"), "?" when it does not run."""
    global _version
    if _version is None:
        try:
            out = subprocess.run([QEMU, "--version"], capture_output=True, text=True).stdout
        except OSError:
            out = ""
        m = re.search(r"version (\S+)", out)
        _version = m.group(1) if m else "?"
    return _version


def version_tuple():
    """(major, minor) of version(); (0, 0) when unknown."""
    m = re.match(r"(\d+)\.(\d+)", version())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


# QEMU's TCG emulates x2APIC from 9.0; without it QEMU refuses APIC ids
# above 254, so no more than 255 vCPUs either.
X2APIC_SINCE = (9, 0)
XAPIC_MAX_VCPUS = 255


def x2apic_missing(vcpus=0, apic=None):
    """Why this QEMU cannot run a boot of vcpus vCPUs in APIC mode apic
    (accel_argv) under TCG, or None when it can."""
    need = [w for w, needed in (("x2APIC", apic == "x2apic"),
                                (f"{vcpus} vCPUs (more than {XAPIC_MAX_VCPUS}: x2APIC)",
                                 vcpus > XAPIC_MAX_VCPUS)) if needed]
    if not need or version_tuple() >= X2APIC_SINCE:
        return None
    return (f"needs {' and '.join(need)}, which QEMU's TCG emulates from "
            f"{X2APIC_SINCE[0]}.{X2APIC_SINCE[1]}; this QEMU is {version()}")


def describe():
    """Which QEMU runs: "QEMU 10.0.2 (/usr/bin/qemu-system-x86_64)"."""
    return f"QEMU {version()} ({shutil.which(QEMU) or QEMU})"


_announced = False


def announce(file=None):
    """Says once per process which QEMU runs (describe()), on file (stderr)."""
    global _announced
    if not _announced:
        _announced = True
        print(describe(), file=file or sys.stderr, flush=True)


def loadavg():
    """The host's 1, 5 and 15-minute load averages, as text."""
    try:
        return open("/proc/loadavg").read().split()[:3]
    except OSError:
        return ["?"] * 3


def host_line(accel, cores):
    """The HOST result line: what the numbers of one run were measured on."""
    return (f"HOST accel={accel} cores={cores} host_cpus={os.cpu_count()} "
            f"loadavg={'/'.join(loadavg())} qemu={version()} "
            f"date={time.strftime('%Y-%m-%dT%H:%M:%S')}")


# ---- the host's memory ---------------------------------------------------------
#
# QEMU asks for transparent huge pages (MADV_HUGEPAGE) on guest RAM and on
# its translation buffer, so the first write to each 2 MiB of either is a
# fault that zeroes 2 MiB. Where the host is itself a virtual machine that
# hands its free memory back to its hypervisor (virtio-balloon free page
# reporting, in 2 MiB blocks: Firecracker, and this project's machine),
# such a fault on a block handed back takes 4-6 ms, the outer host backing
# the block again, where a block still backed takes 60-100 us and a 4 KiB
# page 2 us. Under TCG each vCPU thread translates into a region of the
# buffer of its own, so an AP's first translation stalls it that long,
# at random, in the middle of the boot (docs/boot.md, "A huge page per
# vCPU thread"). So every QEMU started here runs without them: the flag is
# set on this process (PR_SET_THP_DISABLE is inherited across fork and
# kept across exec), before its first QEMU. GORO_QEMU_THP=1 leaves QEMU's
# choice alone, to measure what it costs.

PR_SET_THP_DISABLE = 41
_thp = None                 # None: not decided yet; else "off" or "on"


def thp():
    """Transparent huge pages for the QEMU processes this one starts: turns
    them off unless GORO_QEMU_THP=1 (once), and says which, "off" or "on".

    >>> import subprocess
    >>> state = thp()
    >>> want = "on" if os.environ.get("GORO_QEMU_THP") == "1" else "off"
    >>> state == want
    True
    >>> line = [l for l in open("/proc/self/status") if l.startswith("THP_enabled:")]
    >>> child = subprocess.run(["grep", "^THP_enabled:", "/proc/self/status"], capture_output=True, text=True)
    >>> not line or state == "on" or child.stdout.split()[1] == "0"   # "on" keeps what this process has
    True
    """
    global _thp
    if _thp is None:
        _thp = "on"
        if os.environ.get("GORO_QEMU_THP") != "1":
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0:
                _thp = "off"
            else:
                print(f"qemu.py: PR_SET_THP_DISABLE failed ({os.strerror(ctypes.get_errno())}): "
                      f"QEMU keeps transparent huge pages", file=sys.stderr)
    return _thp


# ---- launching and killing -----------------------------------------------------

class Stopped(Exception):
    """The group was stopped: nothing new starts."""


PR_SET_PDEATHSIG = 1


def spawn(cmd, **kw):
    """subprocess.Popen(cmd, **kw) in a session of its own, so that
    kill_group reaches every thread and child it has, and killed by the
    kernel once its starter is gone: a tool killed with SIGKILL (a host
    test past its time limit, a cancelled CI job) runs none of its
    cleanup, and a QEMU in a session of its own would outlive it, holding
    its forwarded port and its share of the host. The kernel's parent
    here is the thread that starts the process, not its whole process
    (PR_SET_PDEATHSIG): start it from the thread that waits for it."""
    parent = os.getpid()
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def die_with_parent():
        if prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
        if os.getppid() != parent:     # the starter died before the prctl
            os._exit(1)
    return subprocess.Popen(cmd, start_new_session=True, preexec_fn=die_with_parent, **kw)


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# A guest's serial log as its sign of life: a run watched through it times
# out once the log has been silent for its timeout, or after HARD_LIMIT
# times that in all (a guest that prints forever). Both count QEMU's own
# time when its pid is known (own_seconds): a slow host makes a guest
# slower, not silent, so only a hang ends a run that way. BACKSTOP times
# the timeout of wall time is the last word.
HARD_LIMIT = 4
BACKSTOP = 24


def cpu_seconds(pid):
    """CPU seconds process pid has had, every thread, user and system
    (/proc/PID/stat); None once it is gone.

    >>> cpu_seconds(os.getpid()) >= 0
    True
    >>> cpu_seconds(-1) is None
    True
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cpu_waits(pid):
    """{thread id: seconds it has waited, runnable, for a host CPU} of
    process pid (/proc/PID/task/TID/schedstat, its second field in ns; the
    kernel adds a wait once the thread runs again); {} once it is gone or
    where the kernel keeps no schedstat.

    >>> len(cpu_waits(os.getpid())) >= 1 or not os.path.exists("/proc/self/schedstat")
    True
    >>> cpu_waits(-1)
    {}
    """
    waits = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return waits
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                waits[tid] = int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            pass
    return waits


def remembered(seen, now):
    """now (cpu_waits) with each thread of seen that has ended kept at its
    last wait; seen takes now's. QEMU's vCPU threads end before the
    process does, and the wait they carried must still count: forgotten,
    an exiting run's whole silence on a loaded host would count as its
    own time (under -icount one vCPU thread holds nearly all of it).

    >>> seen = {}
    >>> remembered(seen, {"1": 5.0, "2": 0.1})
    {'1': 5.0, '2': 0.1}
    >>> remembered(seen, {"2": 0.2})
    {'1': 5.0, '2': 0.2}
    """
    seen.update(now)
    return dict(seen)


def own_seconds(wall, waits, base):
    """QEMU's own time over wall seconds: the wall time less the longest
    any one of its threads waited for a host CPU since base (cpu_waits
    then and now). What the host withholds does not count; what the guest
    spends running or halted does, since a halted guest's clock runs on
    wall time. The longest wait is of the thread the host held back most,
    a vCPU with work to do; an idle vCPU or QEMU's I/O thread sleeps and
    waits for nothing. The usb-bios run that taught it: silent for 120 s
    of wall time on a loaded host, SeaBIOS still in its disk code.

    >>> own_seconds(120.0, {"1": 110.0, "2": 0.5}, {"1": 5.0})
    15.0
    >>> own_seconds(120.0, {"1": 0.0, "2": 0.1}, {"1": 0.0, "2": 0.1})
    120.0
    """
    return wall - max((w - base.get(t, 0.0) for t, w in waits.items()), default=0.0)


class Silence:
    """expired() once the file at path has not grown for timeout seconds,
    or HARD_LIMIT times that since t0; given process pid, both in its own
    time (own_seconds), with BACKSTOP times timeout of wall time as the
    last word."""

    def __init__(self, path, timeout, t0=None, pid=None):
        self.path, self.timeout, self.pid = path, timeout, pid
        self.t0 = time.monotonic() if t0 is None else t0
        self.size, self.spoke = -1, self.t0
        self.seen = {}
        self.waits_t0 = self.waits() if pid is not None else {}
        self.waits_spoke = None

    def expired(self):
        now = time.monotonic()
        try:
            n = os.path.getsize(self.path)
        except OSError:
            n = 0
        if n != self.size:
            self.size, self.spoke, self.waits_spoke = n, now, None
        elif self.waits_spoke is None and self.pid is not None:
            # The silence counts from the first look that finds the log
            # still, not from each line: a run at 1024 vCPUs has as many
            # threads to read.
            self.spoke, self.waits_spoke = now, self.waits()
        silent, age = now - self.spoke, now - self.t0
        if silent <= self.timeout and age <= HARD_LIMIT * self.timeout:
            return False  # own time is never more than wall time
        if self.pid is None or max(silent, age) > BACKSTOP * self.timeout:
            return True
        waits = self.waits()
        return (own_seconds(silent, waits, self.waits_spoke or {}) > self.timeout or
                own_seconds(age, waits, self.waits_t0) > HARD_LIMIT * self.timeout)

    def waits(self):
        """cpu_waits of the process, threads that ended included (remembered)."""
        return remembered(self.seen, cpu_waits(self.pid))


def wait(p, timeout, on_timeout=None, log=None):
    """Waits for p at most timeout seconds (with log: until log has been
    silent that long in p's own time, see Silence); returns (exit status,
    or None after a timeout, stdout bytes, stderr bytes). on_timeout(pid)
    runs before a timed-out process group is killed (the hang dump). With
    log, stdout and stderr are read only at the end: they must stay
    small."""
    try:
        if log is not None:
            silence = Silence(log, timeout, pid=p.pid)
            while True:
                try:
                    p.wait(timeout=0.25)
                    break
                except subprocess.TimeoutExpired:
                    if silence.expired():
                        raise
        out, err = p.communicate(timeout=None if log is not None else timeout)
        return p.returncode, out or b"", err or b""
    except subprocess.TimeoutExpired:
        if on_timeout:
            on_timeout(p.pid)
        kill_group(p)
        out, err = p.communicate()
        return None, out or b"", err or b""


class Group:
    """Processes started by spawn(): in sessions of their own, so that a
    kill reaches every thread and child QEMU has, and gone with the thread
    that started them; stop() kills all of them (a cancelled CI job, ^C)."""

    def __init__(self):
        self.procs = set()
        self.lock = threading.Lock()
        self.stopping = False

    @contextlib.contextmanager
    def started(self, cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE):
        """Starts cmd; the process is killed on leaving the block if it
        still runs. Raises Stopped once stop() was called."""
        with self.lock:
            if self.stopping:
                raise Stopped()
            announce()
            thp()
            p = spawn(cmd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
            self.procs.add(p)
        try:
            yield p
        finally:
            if p.poll() is None:
                kill_group(p)
                p.wait()
            with self.lock:
                self.procs.discard(p)

    def run(self, cmd, timeout, on_timeout=None, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            log=None):
        """Returns (exit status or None on timeout, stdout text, stderr
        text, seconds). With log, timeout is how long it may stay silent
        in QEMU's own time (Silence)."""
        t0 = time.monotonic()
        try:
            with self.started(cmd, stdout, stderr) as p:
                status, out, err = wait(p, timeout, on_timeout, log)
        except Stopped:
            return None, "", "runner stopped", 0.0
        return (status, out.decode(errors="replace"), err.decode(errors="replace"),
                time.monotonic() - t0)

    def running(self):
        """[(pid, argv)] of the processes running now."""
        with self.lock:
            return [(p.pid, p.args) for p in self.procs]

    def stop(self):
        with self.lock:
            self.stopping = True
            for p in list(self.procs):
                kill_group(p)


class ConsoleError(RuntimeError):
    """A Console's wait that failed: QEMU ended, or no line matched in time."""


class Console:
    """A guest started in group with its serial log on stdout, which a
    reader thread keeps line by line in self.lines (None once QEMU has
    ended); wait_for() waits for a line. close() kills it if it still runs.
    The network checks (tools/net/echo_check.py, badframes.py) watch
    their guests through it."""

    def __init__(self, group, cmd):
        self.cm = group.started(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.p = self.cm.__enter__()
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for raw in self.p.stdout:
            with self.cond:
                self.lines.append(raw.decode(errors="replace").rstrip("\r\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)
            self.cond.notify_all()

    def tail(self, n=5):
        """The last n lines, joined for an error message."""
        with self.cond:
            return " | ".join(str(x) for x in self.lines[-n:])

    def wait_for(self, regex, timeout):
        """The first line matching regex, waiting up to timeout seconds."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line is None:
                        raise ConsoleError("QEMU ended: " + self.tail())
                    if re.search(regex, line):
                        return line
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ConsoleError(f"no line matching {regex!r} in {timeout} s; "
                                       f"the last lines: {self.tail()}")
                self.cond.wait(left)

    def close(self):
        self.cm.__exit__(None, None, None)


def run(cmd, timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT):
    """One process with a hard timeout: (status or None, stdout, stderr, seconds)."""
    return Group().run(cmd, timeout, stdout=stdout, stderr=stderr)


# ---- the monitor ------------------------------------------------------------------

PROMPT = b"(qemu)"
ESC_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Monitor:
    """QEMU's human monitor on a unix socket (monitor_argv): one command at
    a time, each answered when QEMU prompts again."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.read(PROMPT, timeout)          # the banner and first prompt

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def read(self, until, timeout=10.0):
        """Reads until `until` (or EOF when None) or the timeout."""
        self.sock.settimeout(timeout)
        buf = b""
        try:
            while until is None or until not in buf:
                chunk = self.sock.recv(4096)
                if not chunk:
                    break
                buf += chunk
        except socket.timeout:
            pass
        return buf

    def command(self, cmd):
        """The answer's text, without the terminal escapes QEMU adds."""
        self.sock.sendall(cmd.encode() + b"\n")
        return ESC_RE.sub("", self.read(PROMPT).decode(errors="replace"))

    def quit(self):
        """Ends QEMU (exit status 0); returns once it has closed the socket."""
        self.sock.sendall(b"quit\n")
        self.read(None)


# ---- make run, make debug ----------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smp", default="2", help="vCPUs (default 2)")
    ap.add_argument("--mem", default="512M", help="memory (default 512M)")
    ap.add_argument("--numa", type=int, default=1,
                    help="NUMA nodes sharing the vCPUs and memory evenly (default 1)")
    ap.add_argument("--gdb", action="store_true", help="wait for gdb on :1234 (-s -S)")
    ap.add_argument("--nic", default="", choices=[""] + list(NIC_MODELS),
                    help="a NIC on QEMU's user networking (default none)")
    ap.add_argument("--hostfwd", action="append", default=[], metavar="HOST:GUEST",
                    help="with --nic: forward TCP port HOST on 127.0.0.1 to the guest's GUEST (repeatable)")
    ap.add_argument("--tap", default="", metavar="NAME",
                    help="with --nic: the NIC on the tap of namespace NAME (tools/net/netns.py), a queue pair "
                         "per tap queue; run inside NAME (netns.py run NAME -- tools/run/qemu.py ...)")
    ap.add_argument("--machine", default="", help="pc or q35 (default QEMU's: pc)")
    ap.add_argument("--ctrl-c-to-guest", action="store_true",
                    help="Ctrl-C is a key for the guest (the shell's), not a signal; Ctrl-A x quits")
    ap.add_argument("elf")
    ap.add_argument("cmdline", nargs="?", default="")
    args = ap.parse_args()
    serial, extra = "stdio", []
    if args.ctrl_c_to_guest:
        serial, extra = "chardev:com1", ["-chardev", "stdio,id=com1,signal=off"]
    why = x2apic_missing(int(args.smp.split(",")[0]))
    if why:
        print(f"qemu.py: this boot {why}", file=sys.stderr)
        return 1
    extra += numa_even_argv(args.numa, int(args.smp.split(",")[0]), args.mem)
    fwd = []
    for pair in args.hostfwd:
        h, _, g = pair.partition(":")
        if not (h.isdigit() and g.isdigit() and 0 < int(h) < 65536 and 0 < int(g) < 65536):
            ap.error(f"--hostfwd {pair}: want HOST:GUEST, two TCP ports")
        fwd.append((int(h), int(g)))
    if (fwd or args.tap) and not args.nic:
        ap.error("--hostfwd and --tap need --nic")
    if fwd and args.tap:
        ap.error("--hostfwd is QEMU's user networking's; a tap's guest is reached at its own address")
    if args.tap:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        from tools.net import netns
        try:
            extra += netns.qemu_args(netns.read_info(args.tap), NIC_MODELS[args.nic])
        except netns.Failed as e:
            ap.error(f"--tap {args.tap}: {e}")
    elif args.nic:
        extra += nic_argv(args.nic, hostfwd=fwd)
    cmd = argv(args.smp, args.mem, machine=args.machine or None, serial=serial, extra=extra) + \
        (["-s", "-S"] if args.gdb else []) + \
        kernel_boot(args.elf, args.cmdline)
    if args.gdb:
        print(f"gdb {args.elf} -ex 'target remote :1234'", file=sys.stderr)
    announce()
    print(" ".join(shlex.quote(a) for a in cmd), file=sys.stderr, flush=True)
    # QEMU shares this terminal (the serial port is stdio): ^C is its to
    # take, and this process only reports what became of it. (A handler,
    # not SIG_IGN, which QEMU would inherit.)
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    thp()
    status = subprocess.call(cmd)
    print(f"qemu {describe_status(status)}")
    return 0 if status == EXIT_OK else 1


if __name__ == "__main__":
    sys.exit(main())
