# SPDX-License-Identifier: MIT
"""The QEMU test matrix: one named configuration per way of booting goro.

tests/run.py boots each configuration, checks the boot and the exit status,
and reports every in-kernel test. A configuration is data only; run.py turns
it into a QEMU command line.

Ordered slowest first, so a small worker pool is not left waiting on one
long run at the end.
"""

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gobench_format  # noqa: E402  (tests/, beside this file)
from tools.bench import latbench, schedlat  # noqa: E402
from tools.trace import metrics, profile2pprof, trace2go, trace2json  # noqa: E402


@dataclass
class NumaNode:
    cpus: str               # QEMU's cpu range, "0-1"; "" for a node without CPUs
    mem: Optional[str]      # "256M" (the nodes' sizes add up to Config.mem); None: no memory
    socket: Optional[int] = None    # CPUs by socket instead (-numa cpu), with Config.smp


@dataclass
class Config:
    name: str
    help: str
    cores: int = 2
    mem: str = "512M"
    machine: str = "pc"                 # pc | q35
    numa: Optional[List[NumaNode]] = None   # None: no -numa, one node
    numa_dist: List[Tuple[int, int, int]] = field(default_factory=list)  # (src, dst, distance)
    smp: str = ""                       # -smp topology, e.g. "3,sockets=3,cores=1"; "" = cores
    firmware: str = "seabios"           # seabios | ovmf (ISO boots only)
    boot: str = "kernel"                # kernel (-kernel goro.elf) | iso (GRUB)
    # | efi (goro-efi.img, the GNU-EFI loader) | efi-nokernel (the same
    # image without goro.elf) | usb (goro-usb.img as a disk)
    accel: str = "tcg"                  # tcg (-cpu max) | kvm (-cpu host)
    # The local APIC: None, as -cpu max offers it (x2APIC from QEMU 9.0,
    # xAPIC before); "xapic" (-x2apic); "x2apic" (+x2apic: skipped on a
    # QEMU before 9.0, as is a run of more than 255 vCPUs). tools/run/qemu.py.
    apic: Optional[str] = None
    build: str = ""                     # "" the build dir; "debug": its debug/ build (make DEBUG=1)
    cmdline: str = "app=ktest"
    exit_status: int = 33               # QEMU's exit status; 33 = app returned 0
    # Regexes that must match somewhere in the serial log, any order.
    expect: List[str] = field(default_factory=list)
    # Regexes that must match in this order, each after the previous match:
    # for a dump, whose lines only mean something after its header.
    expect_seq: List[str] = field(default_factory=list)
    # Regexes that must not match anywhere.
    reject: List[str] = field(default_factory=list)
    # Every core must be reported online (online_cores).
    check_cores: bool = True
    # More QEMU arguments, after the machine's own.
    qemu_extra: List[str] = field(default_factory=list)
    # The log must carry ktest's result lines and its closing count.
    ktest: bool = False
    # Seconds of QEMU's own time the serial log may stay silent before
    # QEMU is killed (and 4 times that in all): a slow host slows a run
    # down, only a hang stops it talking (tools/run/qemu.py, Silence).
    timeout: float = 120.0
    # Optional runs turn every failure into a skip: they depend on the host
    # (this machine's KVM is PVM, which cannot run everything a guest does).
    optional: bool = False
    requires_kvm: bool = False
    # Heavy runs (hundreds of vCPUs, minutes each) come only with run.py
    # --heavy, which make test-stress gives; scale runs (full ktest at 256
    # vCPUs and up, the 1024-vCPU boots: an hour or more each on a 2-core
    # host) only with run.py --scale, alone (make test-scale).
    heavy: bool = False
    scale: bool = False
    # A run that does not end by itself: when this regex matches the serial
    # log, QEMU is stopped through its monitor (exit status 0).
    stop_at: Optional[str] = None
    # With stop_at: drop isa-debug-exit so the kernel halts on its last
    # line, screendump the display, and compare every character cell with
    # the log rendered in the kernel's font (tests/fbshot.py).
    screenshot: bool = False
    # Bytes written to the guest's COM1 once a log line matches serial_after
    # (run.py then connects COM1 through a socket; the log is kept as usual).
    serial_input: Optional[str] = None
    serial_after: str = r"\bready\b"
    # A conversation typed one key at a time (tests/console_typer.py):
    # (expect, send) steps, each typed once its regex matches the output
    # after the previous step's match. console_via: "serial" (COM1, through
    # a socket) or "keyboard" (PS/2 key presses through QEMU's monitor); a
    # step (expect, send, via) overrides it.
    console: Optional[List[Tuple[str, ...]]] = None
    console_via: str = "serial"
    # A NIC (tools/run/qemu.py's NIC_MODELS: virtio, virtio-modern,
    # virtio-legacy, e1000e) on netdev ("user": QEMU's user networking,
    # restricted to its gateway; "none": no backend); None: no NIC at all.
    nic: Optional[str] = None
    netdev: str = "user"
    # QEMU fw_cfg files for the guest: (name, text), e.g.
    # ("opt/goro/script", "run hello\nhalt\n") for the shell's boot script.
    fw_cfg: List[Tuple[str, str]] = field(default_factory=list)
    # A check of the whole serial log: returns its problems, [] when fine.
    log_check: Optional[Callable[[List[str]], List[str]]] = None


def profile_check(lines, tag):
    """tools/trace/profile2pprof.py's check of a profiled app=cpuburn boot, on the
    image of the build being tested (run.py sets GORO_BUILD)."""
    build = os.environ.get("GORO_BUILD", "build")
    return profile2pprof.check_cpuburn(lines, os.path.join(build, "goro.elf"),
                                       os.path.join(build, "test-logs", "profile-" + tag))


def go_trace_check(lines, tag):
    """tools/trace/trace2go.py's check: go tool trace -pprof=sched parses the
    converted trace and counts what goro's trace holds."""
    build = os.environ.get("GORO_BUILD", "build")
    return trace2go.check(lines, os.path.join(build, "test-logs", "trace-" + tag),
                          os.path.join(build, "goro.elf"))


def flight_recorder_check(lines, tag):
    """The flight recorder's dump (the first of two) parses, holds only the
    window it names, and converts into a Go trace that go tool trace reads;
    the dump at exit is whole."""
    import re
    problems = []
    head = [i for i, l in enumerate(lines) if l.startswith("trace: flight recorder:")]
    ends = [i for i, l in enumerate(lines) if l.startswith("TRACE end")]
    if not head or not ends or ends[0] < head[0]:
        return ["flight recorder: no dump"]
    m = re.match(r"trace: flight recorder: (\d+) ms up to (\d+) ns", lines[head[0]])
    ms, upto = int(m.group(1)), int(m.group(2))
    first = lines[head[0]:ends[0] + 1]
    try:
        _, events = trace2json.parse(first)
    except trace2json.TraceError as e:
        return [f"flight recorder: {e}"]
    if not events:
        problems.append("flight recorder: an empty window")
    # The four markers started just before the dump: their GoCreate events
    # are in the window, each naming its start function.
    creates = [l for l in first if re.match(r"TRACE \d+ \d+ GoCreate ", l)]
    if len(creates) < 4:
        problems.append(f"flight recorder: {len(creates)} GoCreate events in the window, fewer than the 4 markers")
    unnamed = [l for l in creates if re.search(r" fn=0$", l)]
    if unnamed:
        problems.append(f"flight recorder: {len(unnamed)} GoCreate events without their start function: {unnamed[0]}")
    lo = upto - ms * 1000000 if ms else 0     # ms=0: all the rings hold
    bad = [e for e in events if not lo <= e["ns"] <= upto]
    if bad:
        problems.append(f"flight recorder: {len(bad)} events outside the window, e.g. line {bad[0]['line']}")
    build = os.environ.get("GORO_BUILD", "build")
    problems += trace2go.check(first, os.path.join(build, "test-logs", "trace-" + tag))
    problems += trace2json.check(lines)        # the last dump: the whole trace at exit
    return problems


def ktest(name, help, **kw):
    kw.setdefault("cmdline", "app=ktest")
    return Config(name, help, ktest=True, **kw)


def fault(name, help, mnemonic, fns):
    """A deliberate fatal error: exit 255 within seconds, the dump's header,
    then a backtrace frame in one of the app's functions fns."""
    return Config(
        name, help,
        cmdline=f"app={name.replace('-', '_')}",
        exit_status=255,
        expect_seq=[rf"EXCEPTION.*{mnemonic}", r"backtrace:",
                    r"\b(" + "|".join(fns) + r")\b"],
        timeout=15,
    )


def one_exception(lines, want):
    """Exactly want EXCEPTION lines: a fault inside a fatal dump must not
    print a second report over the first."""
    n = sum(1 for l in lines if l.startswith("EXCEPTION "))
    return [] if n == want else [f"{n} EXCEPTION lines, expected {want}"]


def wild_rsp(cores):
    """A #PF with the stack pointer at an unmapped address: one report,
    whose backtrace reaches the app; the dump never reads the word at the
    wild rsp (apps/faults.c, app=fault_wild_rsp)."""
    return Config(f"fault-wild-rsp-smp{cores}", f"a push at a wild stack pointer: one #PF report with its backtrace, "
                  f"{cores} vCPU(s)", cores=cores, cmdline="app=fault_wild_rsp", exit_status=255, timeout=15,
                  expect_seq=[r"^EXCEPTION #PF page fault \(vector 14\) on cpu \d+, error code 0x2",
                              r"^  rsp 00007ff000000000 ", r"^backtrace:", r"\bfault_wild_rsp_main\b"],
                  log_check=lambda lines: one_exception(lines, 1))


def fatal(name, help, *expect, timeout=15):
    """An app that must end in a fatal error (exit 255) whose report
    matches expect; the app is named like the configuration, with _."""
    return Config(name, help, cmdline=f"app={name.replace('-', '_')}", exit_status=255,
                  expect=list(expect), timeout=timeout)


def overflow_frame(cores):
    """An 8 KiB frame at the bottom of a goroutine's stack: the stack
    overflow error naming that goroutine, never a write into the stack
    below (tests/kernel/test_stack.c, app=stack_overflow_frame)."""
    def same_goroutine(lines):
        text = "\n".join(lines)
        who = re.search(r"^stack_overflow_frame: goroutine (\d+) calls", text, re.M)
        named = re.search(r"fatal error: stack overflow: goroutine (\d+) ", text)
        if not who or not named:
            return []           # expect_seq names what is missing
        if who.group(1) != named.group(1):
            return [f"the overflow names goroutine {named.group(1)}, but goroutine {who.group(1)} overflowed"]
        return []
    return Config(f"stack-overflow-frame-smp{cores}",
                  f"an 8 KiB frame with under 2 KiB of stack left hits the guard page, {cores} vCPU(s)",
                  cores=cores, cmdline="app=stack_overflow_frame", exit_status=255, timeout=30,
                  expect_seq=[r"^stack_overflow_frame: goroutine \d+ calls an 8 KiB frame",
                              r"fatal error: stack overflow: goroutine \d+ \(created by goroutine \d+\) "
                              r"ran past its \d+ KiB stack"],
                  reject=[r"without a fault"], log_check=same_goroutine)


def soak(cores, nodes, quantum, seed, ops=100000):
    """app=soak with a fixed seed: every invariant held, and its count."""
    numa = None
    if nodes > 1:
        per = cores // nodes
        numa = [NumaNode(f"{i * per}-{i * per + per - 1}", f"{512 // nodes}M") for i in range(nodes)]
    return Config(f"soak-smp{cores}-numa{nodes}-{quantum}",
                  f"app=soak, {cores} vCPU(s), {nodes} NUMA node(s), quantum={quantum}, seed={seed}",
                  cores=cores, numa=numa, cmdline=f"app=soak seed={seed} quantum={quantum} ops={ops}",
                  expect=[rf"^soak: [1-9]\d* ops, 0 failures$"], reject=[r"^soak: FAIL"],
                  timeout=120)


def go_tests(cores, seed, timeout):
    """Go's own tests written again in C (tests/kernel/go_*_test.c, all
    named go_*), with a fixed seed: replayable schedules."""
    return Config(f"go-smp{cores}-seed{seed}",
                  f"Go's chan/select/sema/sync/time tests (filter=go_), {cores} vCPU(s), seed={seed}",
                  cores=cores, cmdline=f"seed={seed} app=ktest filter=go_", ktest=True,
                  timeout=timeout)


def go_misuse(name, expect):
    """One of Go's misuse tests: a fatal error naming the misuse."""
    return Config(f"go-misuse-{name.replace('.', '-').lower()}",
                  f"Go's misuse test {name}: a fatal error (app=go_misuse)",
                  cores=1, cmdline=f"app=go_misuse {name}", exit_status=255, timeout=15,
                  expect=[rf"^go_misuse: {re.escape(name)}$", rf"fatal error: .*{expect}"],
                  reject=[r"completed \(expected a fatal error\)"])


# Go's tests run on 1, 2, 4 and 8 vCPUs with three fixed seeds each (the
# ordinary ktest configurations run them too, with a seed of the moment).
# Measured alone on this 2-core host: about 6 s of QEMU wall time for one
# run at 1, 2 or 4 vCPUs and 8-13 s at 8 (the tests mostly sleep on timers,
# so 8 vCPUs cost only about twice as much, not 40 times).
GO_SEEDS = (1, 2, 3)
GO_TESTS_SMP8 = [go_tests(8, s, 300) for s in GO_SEEDS]
GO_TESTS = [go_tests(c, s, 180) for c in (4, 2, 1) for s in GO_SEEDS]
GO_MISUSE = [go_misuse(n, e) for n, e in (
    ("Mutex.Unlock", "unlocked"), ("Mutex.Unlock2", "unlocked"),
    ("RWMutex.Unlock", "unlocked"), ("RWMutex.Unlock2", "unlocked"),
    ("RWMutex.Unlock3", "unlocked"), ("RWMutex.RUnlock", "unlocked"),
    ("RWMutex.RUnlock2", "unlocked"), ("RWMutex.RUnlock3", "unlocked"),
    ("WaitGroup", "sync: negative WaitGroup counter"),
    ("NewTicker", "non-positive interval for ticker_new"),
    ("TickerReset", "non-positive interval for ticker_reset"))]


# ---- the NICs (tests/kernel/test_net.c, drivers/net/, drivers/pci/) -----------

def net(name, nic, machine, cores, boot="kernel", args="", expect=(), **kw):
    """The NIC tests (tests/kernel/test_net.c, filter=net_) with one NIC on
    QEMU's user networking: PCI found it, the driver read its MAC and link,
    and frames made a round trip through slirp's gateway."""
    firmware = "ovmf" if boot in ("efi", "iso-uefi") else "seabios"
    access = r"ECAM at 0x[0-9a-f]+, buses 0-\d+" if machine == "q35" else r"ports 0xcf8/0xcfc"
    kind = {"virtio-modern": "virtio-net \\(modern\\)", "virtio-legacy": "virtio-net \\(legacy\\)",
            "virtio": "virtio-net \\(modern\\)", "e1000e": "e1000e"}[nic]
    return ktest(f"net-{name}", f"NIC tests, {nic}, {machine}, {boot} boot, {cores} vCPU(s) {args}".rstrip(),
                 cmdline=f"app=ktest filter=net_ {args}".rstrip(), nic=nic, machine=machine, cores=cores,
                 boot="iso" if boot == "iso-uefi" else boot, firmware=firmware,
                 expect=[rf"^pci: {access}: \d+ functions", rf"^net0: {kind} at ",
                         r"^TEST PASS net_ping_sizes", r"^TEST PASS net_arp_gateway"] + list(expect),
                 timeout=kw.pop("timeout", 180), **kw)


HUB = ["-netdev", "hubport,id=h0,hubid=0", "-netdev", "hubport,id=h1,hubid=0"]

NET_CONFIGS = [
    net("virtio-modern-q35-smp8", "virtio-modern", "q35", 8, timeout=240),
    net("virtio-legacy-pc-smp8", "virtio-legacy", "pc", 8, timeout=240),
    net("e1000e-q35-smp8", "e1000e", "q35", 8, timeout=240),
] + [net(f"virtio-modern-q35-smp{c}", "virtio-modern", "q35", c) for c in (4, 2, 1)] + [
    net(f"virtio-legacy-pc-smp{c}", "virtio-legacy", "pc", c) for c in (4, 2, 1)] + [
    net(f"e1000e-q35-smp{c}", "e1000e", "q35", c) for c in (4, 2, 1)] + [
    net("e1000e-pc-smp2", "e1000e", "pc", 2),
    net("e1000e-efi-smp4", "e1000e", "q35", 4, boot="efi"),
    net("e1000e-msi-pc-smp2", "e1000e", "pc", 2, args="nic_irq=msi", expect=[r"^net0: e1000e .* msi, "]),
    net("e1000e-intx-q35-smp2", "e1000e", "q35", 2, args="nic_irq=intx",
        expect=[r"^ioapic: PCI line \d+ -> GSI", r"^net0: e1000e .* intx, "]),
    net("virtio-pc-smp2", "virtio", "pc", 2),
    net("virtio-legacy-q35-smp2", "virtio-legacy", "q35", 2),
    net("virtio-modern-efi-smp4", "virtio-modern", "q35", 4, boot="efi"),
    net("virtio-legacy-efi-smp2", "virtio-legacy", "q35", 2, boot="efi"),
    net("virtio-modern-iso-uefi-smp2", "virtio-modern", "q35", 2, boot="iso-uefi"),
    # The fallbacks: INTx through the IOAPIC (virtio-net has no MSI), and
    # no interrupt at all (the tests poll).
    net("virtio-intx-pc-smp2", "virtio-legacy", "pc", 2, args="nic_irq=intx",
        expect=[r"^ioapic: PCI line \d+ -> GSI", r"^TEST PASS net_every_queue"]),
    net("virtio-intx-q35-smp4", "virtio-modern", "q35", 4, args="nic_irq=intx"),
    net("virtio-polled-q35-smp2", "virtio-modern", "q35", 2, args="nic_irq=none"),
    net("virtio-debug-q35-smp4", "virtio-modern", "q35", 4, build="debug"),
    # The L2 reflector between two NICs joined by a QEMU hub: net1 sends,
    # net0 reflects from its interrupt, net1 checks every frame back.
    ktest("net-l2reflect-virtio-e1000e-q35-smp2", "the L2 reflector on virtio-net, e1000e sending, q35",
          cores=2, machine="q35", cmdline="app=ktest filter=net_l2reflect",
          qemu_extra=HUB + ["-device", "virtio-net-pci,disable-legacy=on,netdev=h0", "-device", "e1000e,netdev=h1"],
          expect=[r"^TEST PASS net_l2reflect"]),
    ktest("net-l2reflect-e1000e-virtio-pc-smp4", "the L2 reflector on e1000e, legacy virtio-net sending, i440FX",
          cores=4, cmdline="app=ktest filter=net_l2reflect",
          qemu_extra=HUB + ["-device", "e1000e,netdev=h0", "-device", "virtio-net-pci,disable-modern=on,netdev=h1"],
          expect=[r"^TEST PASS net_l2reflect"]),
    # Jumbo frames: two virtio-nets whose device MTU is 9000 (F_MTU). The
    # longest frames span five 2 KiB receive buffers (mergeable buffers,
    # joined by the driver) and a transmit buffer of their own size.
    ktest("net-l2reflect-virtio-jumbo-q35-smp2", "the L2 reflector, two virtio-nets with MTU 9000: mergeable buffers",
          cores=2, machine="q35", cmdline="app=ktest filter=net_l2reflect",
          qemu_extra=HUB + ["-device", "virtio-net-pci,disable-legacy=on,host_mtu=9000,netdev=h0",
                            "-device", "virtio-net-pci,disable-legacy=on,host_mtu=9000,netdev=h1"],
          expect=[r"^net0: virtio-net \(modern\) .* mtu 9000, .* mergeable buffers",
                  r"^ktest: net_l2reflect: virtio-net reflected 500 frames of 74 to 9018 bytes",
                  r"^TEST PASS net_l2reflect"]),
    # Frames longer than the reflector's MTU between ones it takes, from a
    # virtio-net with MTU 9000: dropped, never delivered, the rest back.
    ktest("net-l2reflect-oversize-virtio-q35-smp2", "frames past a virtio-net's MTU: dropped and counted",
          cores=2, machine="q35", cmdline="app=ktest filter=net_l2reflect",
          qemu_extra=HUB + ["-device", "virtio-net-pci,disable-legacy=on,netdev=h0",
                            "-device", "virtio-net-pci,disable-legacy=on,host_mtu=9000,netdev=h1"],
          expect=[r"^ktest: net_l2reflect_oversize: virtio-net reflected 250 frames, 250 of 250 too long",
                  r"^TEST PASS net_l2reflect_oversize", r"^TEST PASS net_l2reflect "]),
    ktest("net-l2reflect-oversize-e1000e-pc-smp2", "frames past an e1000e's MTU: dropped by the device",
          cores=2, cmdline="app=ktest filter=net_l2reflect",
          qemu_extra=HUB + ["-device", "e1000e,netdev=h0",
                            "-device", "virtio-net-pci,disable-modern=on,host_mtu=9000,netdev=h1"],
          expect=[r"^ktest: net_l2reflect_oversize: e1000e reflected 250 frames",
                  r"^TEST PASS net_l2reflect_oversize", r"^TEST PASS net_l2reflect "]),
    # The shell's pci and net commands: every function, its driver and
    # capabilities; -v its BARs and interrupts; each NIC and its queues.
    Config("shell-pci-net-q35", "the shell's pci, pci -v and net on q35 (ECAM): e1000e and virtio-net",
           cores=2, machine="q35", nic="virtio-modern", cmdline='script="pci; pci -v; net; halt"',
           qemu_extra=["-netdev", "hubport,id=h1,hubid=1", "-device", "e1000e,netdev=h1"],
           expect_seq=[r"^goro> pci$", r"^pci: ECAM at 0x[0-9a-f]+, buses 0-255: 7 functions$",
                       r"^ADDRESS\s+ID\s+CLASS\s+KIND\s+DRIVER\s+CAPABILITIES$",
                       r"^00:00\.0  8086:29c0 0600   bridge\s+-",
                       r"^00:02\.0  8086:10d3 0200   network\s+e1000e\s+01 05 10 11$",
                       r"^00:03\.0  1af4:1041 0200   network\s+virtio-net\s+11( 09)+$",
                       r"^goro> pci -v$", r"^00:02\.0  8086:10d3", r"^\s+BAR 0: mem32 0x[0-9a-f]+, 128K$",
                       r"^\s+BAR 2: io 0x[0-9a-f]+, 32$", r"^\s+MSI-X: 5 vectors, table in BAR 3 at 0x0$",
                       r"^\s+MSI: 64-bit$", r"^00:03\.0  1af4:1041",
                       r"^\s+BAR 4: mem64 0x[0-9a-f]+, 16K, prefetchable$",
                       r"^\s+MSI-X: 4 vectors, table in BAR 1 at 0x0$", r"^\s+INTx: pin A, line \d+$",
                       r"^goro> net$",
                       r"^net0: e1000e at pci 0000:00:02\.0, mac 52:54:00:12:34:56, mtu 1500, 1 queue pair, "
                       r"msi-x, link (up|down), tx checksum, rx checksum$",
                       r"^\s+QUEUE\s+CORE\s+VECTOR\s+RX FRAMES",
                       r"^\s+0\s+0\s+0x[5-9a-d][0-9a-f](\s+\d+){8}$",
                       r"^net1: virtio-net at pci 0000:00:03\.0, mac 52:54:00:12:34:57, mtu 1500, "
                       r"1 queue pair, msi-x, link up$",
                       r"^\s+0\s+0\s+0x[5-9a-d][0-9a-f](\s+\d+){8}$",
                       r"^shell: halting, exit code 0$"], timeout=60),
    Config("shell-pci-net-pc", "the shell's pci and net on i440FX (ports 0xCF8/0xCFC): legacy virtio-net, INTx",
           cores=2, nic="virtio-legacy", cmdline='nic_irq=intx script="pci -v; net; halt"',
           expect_seq=[r"^goro> pci -v$", r"^pci: ports 0xcf8/0xcfc: \d+ functions$",
                       r"^00:00\.0  8086:1237 0600   bridge",
                       r"^00:03\.0  1af4:1000 0200   network\s+virtio-net",
                       r"^\s+BAR 0: io 0x[0-9a-f]+, 32$", r"^\s+INTx: pin A, line \d+$",
                       r"^goro> net$",
                       r"^net0: virtio-net at pci 0000:00:03\.0, mac 52:54:00:12:34:56, mtu 1500, "
                       r"1 queue pair, intx, link up$",
                       r"^\s+0\s+0\s+0x[5-9a-d][0-9a-f](\s+\d+){8}$",
                       r"^shell: halting, exit code 0$"], timeout=60),
    Config("l2reflect-app", "app=l2reflect for a second on a virtio-net with no traffic: ready, counts, done",
           cores=2, nic="virtio-modern", cmdline="app=l2reflect seconds=1",
           expect=[r"^l2reflect: reflecting on net0 \(virtio-net, 1 queue pair, msi-x, mac [0-9a-f:]+\): ready$",
                   r"^l2reflect: queue pairs' cores: 0$",
                   r"^l2reflect: 1 s: 0 frames/s reflected, 0 dropped",
                   r"^l2reflect: done: 0 frames reflected, 0 dropped, .*; per queue: 0$"], timeout=60),
]


# ---- the shell (app=shell, shell/shell*.c) ------------------------------------

PROMPT = r"^goro> "

# Ten different apps, the benchmark apps among them, back to back in one
# boot, then two of them again: (app, arguments, exit value, a line that
# shows its result). The exit values are those the same apps give in a boot
# of their own (the demos, exit-code and bench configurations).
SHELL_RUNS = [
    ("hello", "", 0, r"^hello from goro: "),
    ("exit_code", "7", 7, r"^exit_code: returning 7$"),
    ("demo_worker_pool", "", 0, r"^worker_pool: ok$"),
    ("demo_task_pool", "", 0, r"^task_pool: ok$"),
    ("demo_prodcons", "", 0, r"^prodcons: ok$"),
    ("demo_locked_counter", "", 0, r"^locked_counter: ok$"),
    ("demo_cancel", "", 0, r"^cancel: ok$"),
    ("bench", "quick=1 filter=spawn_exit", 0, r"^BENCH spawn_exit impl=goro "),
    ("bench_chan", "quick=1 filter=chan_sync", 0, r"^BENCH chan_sync impl=goro "),
    ("bench_mem", "reps=3 mb=1 filter=malloc_free", 0, r"^BENCH malloc_free size=16 "),
    ("bench_time", "quick=1 filter=sleep_lateness_1ms", 0, r"^BENCH sleep_lateness_1ms impl=goro "),
    # the demos that kept counts in static memory, again: same results
    ("demo_task_pool", "", 0, r"^task_pool: ok$"),
    ("demo_locked_counter", "", 0, r"^locked_counter: ok$"),
]
SHELL_SCRIPT = "".join(f"run {a} {args}\n" for a, args, _, _ in SHELL_RUNS) + "ps\nhalt\n"


def shell_runs_check(lines):
    """Each run of SHELL_RUNS, in order: its result line, its exit value,
    and nothing left behind."""
    problems, i = [], 0
    for app, args, code, result in SHELL_RUNS:
        cmd = f"goro> run {app} {args}".rstrip()
        while i < len(lines) and lines[i].rstrip() != cmd:
            i += 1
        if i == len(lines):
            return problems + [f"no '{cmd}' line (in order)"]
        j = i + 1
        while j < len(lines) and not lines[j].startswith("goro> "):
            j += 1
        part = lines[i + 1:j]
        if not any(re.search(result, l) for l in part):
            problems.append(f"run {app}: no line matches /{result}/")
        if not any(re.match(rf"run: {app} returned {code} after ", l) for l in part):
            problems.append(f"run {app}: no 'run: {app} returned {code}' line")
        if not any(l.startswith("run: left behind: 0 goroutines,") for l in part):
            problems.append(f"run {app}: goroutines left behind")
        i = j
    return problems


def each_trace(lines):
    """tools/trace/trace2json.py's check on every TRACE block of the log."""
    problems, block = [], None
    for l in lines:
        if l.startswith("TRACE begin"):
            block = []
        if block is not None:
            block.append(l)
        if l.startswith("TRACE end") and block is not None:
            problems += trace2json.check(block)
            block = None
    return problems


ONLINE_RE = re.compile(r"^cpus? (\d+)(?:-(\d+))?: apic ids? \d+(?:-\d+)? online$")


def online_cores(lines):
    """The core indexes the boot reports online: "cpu 3: apic id 3 online",
    or for a run of cores beyond 64, "cpus 0-1023: apic ids 0-1023 online"."""
    cores = set()
    for l in lines:
        m = ONLINE_RE.match(l)
        if m:
            lo = int(m.group(1))
            cores.update(range(lo, int(m.group(2) or lo) + 1))
    return cores


def late_aps_check(lines):
    """With APs late on purpose: the cores online and the ones reported
    missing add up to the MADT's, and the machine runs on those online."""
    text = "\n".join(lines)
    smp = re.search(r"^smp: (\d+) of (\d+) cores online", text, re.M)
    if not smp:
        return ["no 'smp: K of N cores online' line"]
    up, planned = int(smp.group(1)), int(smp.group(2))
    online = len(online_cores(lines))
    late = len(re.findall(r"^smp: core with APIC id \d+ did not come up; continuing without it$", text, re.M))
    problems = []
    if online != up:
        problems.append(f"{online} 'cpu N online' lines for {up} cores online")
    if up + late != planned:
        problems.append(f"{up} online + {late} reported missing != {planned}")
    if not re.search(rf"^sched: {up} cores,", text, re.M):
        problems.append(f"the scheduler did not start on the {up} cores online")
    return problems


def check_in_wait_check(lines):
    """Under a hypervisor the boot core halts until every AP has checked in
    (arch_wait_checked_in): when it says all were in, none came online
    after its halt ended. Its bound coming first (a slow host) is allowed:
    then the line says so and there is nothing to check."""
    text = "\n".join(lines)
    m = re.search(r"^smp: the boot core waited for the check-ins from (\d+) to (\d+) us: (all in|its bound came first|"
                  r"the first round in; .*)$",
                  text, re.M)
    if not m:
        return ["no 'smp: the boot core waited for the check-ins' line"]
    if m.group(3) != "all in":
        return []
    end = int(m.group(2))
    late = [(c, t) for c, t in re.findall(r"^boot: cpu (\d+) \(apic id \d+\) online at (\d+) us", text, re.M)
            if int(t) > end]
    if not re.search(r"^boot: cpu \d+ ", text, re.M):
        return ["no 'boot: cpu N ... online at' lines (boot_timeline=1)"]
    return [f"cpu {c} online at {t} us, after the boot core's wait for every check-in ended at {end} us"
            for c, t in late]


# arch/arch.h's: the cores goro takes, and the broadcast start's tickets + 2.
MAX_CPUS = 1024


# ---- hundreds of cores (q35, x2APIC: QEMU 9.0 and later) ----------------------

def many(name, help, cores, cmdline, scale=False, **kw):
    """A boot of `cores` vCPUs on q35 in x2APIC mode, about 8 MiB a vCPU
    (at least 2 GiB): skipped on a QEMU before 9.0 (tools/qemu.py). Heavy,
    or with scale a scale run (Config.scale)."""
    kw.setdefault("mem", f"{max(2048, cores * 8)}M")
    kw.setdefault("timeout", 600)
    return Config(name, help, cores=cores, machine="q35", apic="x2apic", cmdline=cmdline, heavy=not scale,
                  scale=scale, **kw)


def online_summary(cores):
    """Every core online in x2APIC mode, the APIC ids in one run."""
    return [rf"^smp: {cores} of {cores} cores online \(x2apic, ",
            rf"^cpus 0-{cores - 1}: apic ids 0-{cores - 1} online$"]


def numa_many(nodes, cores, memless, mem_mib):
    """nodes NUMA nodes sharing cores vCPUs evenly, the last memless of them
    without memory, the rest sharing mem_mib MiB; distances 10 + 10 * the
    nodes' distance on a ring (a machine's sockets wired in a circle).
    Returns (NumaNode list, distances, the boot's numa line as a regex, the
    machine's memory: what the nodes share, as QEMU wants their sum)."""
    per, with_mem = cores // nodes, nodes - memless
    layout = [NumaNode(f"{i * per}-{i * per + per - 1}", f"{mem_mib // with_mem}M" if i < with_mem else None)
              for i in range(nodes)]

    def ring(a, b):
        return 10 + 10 * min(abs(a - b), nodes - abs(a - b))
    dist = [(a, b, ring(a, b)) for a in range(nodes) for b in range(a + 1, nodes)]
    line = (rf"^numa: {nodes} nodes: " +
            ", ".join(rf"node {i} cpus {i * per}-{i * per + per - 1} mem "
                      + (r"\d+" if i < with_mem else "0") + " MiB" for i in range(nodes)) +
            "; distances " + " / ".join(" ".join(str(10 if a == b else ring(a, b)) for b in range(nodes))
                                        for a in range(nodes)) + "$")
    return layout, dist, line, f"{mem_mib // with_mem * with_mem}M"


NUMA8 = numa_many(8, 256, 0, 2048)
NUMA16 = numa_many(16, 256, 2, 2048)


# None of them in make test: under a heavily loaded host a 256-vCPU boot has
# come up with the boot core alone, the APs stalled in their TSC checks
# (docs/boot.md, "Hundreds of cores"), and make test must not fail for the
# host's load. make test-stress (--heavy) runs those of minutes; make
# test-scale (--scale) those that take this 2-CPU host an hour or more (full
# ktest on an otherwise idle host took 21 minutes at 256 vCPUs, 50 at 512
# and 99 at 1024, at 256 over 48 on a loaded one) and the 1024-vCPU boots
# but tickets-smp1026, whose boot checks 1024 cores online too. A hello at
# 512 is the boot soak-smp512 checks.
MANY_CORES = [
    many("x2apic-smp256", "256 vCPUs, q35, x2APIC: every core online, hello", 256,
         "app=hello",
         expect=online_summary(256) + [r"^hello from goro: 256 cores"]),
] + [
    many(f"hello-smp{n}", f"{n} vCPUs, q35, x2APIC: every core online, hello", n, "app=hello", scale=True,
         expect=online_summary(n) + [rf"^hello from goro: {n} cores"])
    for n in (512, 1024)
] + [
    many(f"ktest-smp{n}", f"ktest on {n} vCPUs (q35, x2APIC)", n, "app=ktest", ktest=True, scale=True,
         timeout=900, expect=online_summary(n))
    for n in (256, 512, 1024)
] + [
    many(f"soak-smp{n}", f"the soak's short run on {n} vCPUs (q35, x2APIC), seed=31", n,
         "app=soak seed=31 quantum=1ms ops=100000", scale=n > 512,
         expect=online_summary(n) + [r"^soak: [1-9]\d* ops, 0 failures$"], reject=[r"^soak: FAIL"])
    for n in (256, 512, 1024)
] + [
    many("go-smp256", "Go's chan/select/sema/sync/time tests (filter=go_) on 256 vCPUs, seed=1", 256,
         "seed=1 app=ktest filter=go_", ktest=True, timeout=900),
    # NUMA at scale: 8 nodes of 32 vCPUs; 16 of 16, two of them without
    # memory; ring distances (SRAT and SLIT from QEMU's -numa). ktest's
    # NUMA tests check the nodes, node-local memory and the steal order
    # by distance.
    many("numa8-smp256", "ktest, 256 vCPUs in 8 NUMA nodes (ring distances)", 256, "app=ktest",
         ktest=True, timeout=900, scale=True, numa=NUMA8[0], numa_dist=NUMA8[1], mem=NUMA8[3],
         expect=online_summary(256) + [NUMA8[2]]),
    many("numa16-smp256", "ktest's NUMA tests, 256 vCPUs in 16 NUMA nodes, 2 without memory",
         256, "app=ktest filter=numa", ktest=True, numa=NUMA16[0], numa_dist=NUMA16[1], mem=NUMA16[3],
         expect=online_summary(256) + [NUMA16[2]]),
]


# inject=ap-silent's diagnosis, however the word reached the kernel.
AP_SILENT_SEQ = [r"^inject: ap-silent: the core with APIC id 1 will not answer INIT-SIPI-SIPI$",
                 r"^smp: core with APIC id 1 did not come up; continuing without it$",
                 r"^smp: 1 of 2 cores online",
                 r"^TEST FAIL boot_every_madt_core_online: 1 of the MADT's 2 cores are not online, "
                 r"the first with APIC id 1"]

CONFIGS = MANY_CORES + [
    # The slowest run of all (90 s alone, 170 s beside CPU hogs): first.
    Config("park-million", "1,000,000 parked goroutines fit in a 6 GiB guest (4.5 KiB each) and all finish",
           cores=2, mem="6G", cmdline="app=park_million", timeout=240,
           expect=[r"park_million: 1000000 goroutines parked in \d+ ms, 46\d\d bytes each",
                   r"park_million: all 1000000 finished"]),
] + GO_TESTS_SMP8 + NET_CONFIGS + [
    # 8 vCPUs on this 2-core host run the scheduler tests about 40 times
    # slower than 2 vCPUs do (measured: 93 s against 2 s).
    ktest("smp8-kernel", "ktest, -kernel, 8 vCPUs", cores=8, timeout=240),
    # The APIC modes, explicit: q35 in x2APIC mode (skipped on a QEMU before
    # 9.0), the PC in xAPIC mode; the other configurations take what -cpu
    # max offers (x2APIC from QEMU 9.0).
    ktest("smp4-q35", "ktest, -kernel, q35, 4 vCPUs, x2APIC", cores=4, machine="q35", apic="x2apic",
          expect=[r"cores online \(x2apic, "], timeout=180),
    # Cores above APIC id 255 in a short run: two vCPUs from -smp and two
    # plugged in before the start into the second socket of 256 (APIC ids
    # 256 and 511), which is NUMA node 1. The MADT names them in x2APIC
    # entries and the SRAT in x2APIC affinities, among 508 absent slots;
    # their device interrupts go to cores below 256 (arch_irq_cpu).
    ktest("x2apic-above255-smp4", "ktest, q35, x2APIC, 4 vCPUs with APIC ids 0, 1, 256 and 511 in 2 NUMA nodes",
          cores=4, machine="q35", apic="x2apic", smp="2,maxcpus=512,sockets=2,cores=256,threads=1",
          qemu_extra=["-device", "max-x86_64-cpu,socket-id=1,core-id=0,thread-id=0",
                      "-device", "max-x86_64-cpu,socket-id=1,core-id=255,thread-id=0"],
          numa=[NumaNode("", "256M", socket=0), NumaNode("", "256M", socket=1)],
          expect=[r"^cpu 2: apic id 256 online$", r"^cpu 3: apic id 511 online$",
                  r"^numa: 2 nodes: node 0 cpus 0-1 mem 256 MiB, node 1 cpus 2-3 mem 256 MiB; distances",
                  r"^irq: core 2 \(APIC id 256\) is beyond a device message's 8-bit destination",
                  r"^TEST PASS irq_cpu_names_a_core_below_256 "],
          timeout=180),
    ktest("smp4-kernel", "ktest, -kernel, 4 vCPUs, xAPIC", cores=4, apic="xapic",
          expect=[r"cores online \(xapic, "], timeout=180),
    ktest("iso-uefi-q35", "ktest, GRUB ISO under OVMF on q35, 4 vCPUs",
          boot="iso", firmware="ovmf", machine="q35", cores=4, timeout=180),
    ktest("iso-bios", "ktest, GRUB ISO under SeaBIOS, fw_cfg command line",
          boot="iso"),
    # The GNU-EFI loader: OVMF boots goro-efi.img's
    # EFI/BOOT/BOOTX64.EFI, which loads goro.elf from the same FAT volume.
    ktest("efi-smp4", "ktest, GNU-EFI loader under OVMF, 4 vCPUs",
          boot="efi", firmware="ovmf", cores=4, timeout=180),
    ktest("efi-smp2", "ktest, GNU-EFI loader under OVMF, 2 vCPUs",
          boot="efi", firmware="ovmf", cores=2),
    ktest("efi-smp1", "ktest, GNU-EFI loader under OVMF, 1 vCPU",
          boot="efi", firmware="ovmf", cores=1),
    ktest("usb-uefi", "ktest, goro-usb.img as a disk under OVMF (GNU-EFI loader)",
          boot="usb", firmware="ovmf"),
    ktest("usb-bios", "ktest, goro-usb.img as a disk under SeaBIOS (GRUB)",
          boot="usb"),
    Config("efi-nokernel", "GNU-EFI loader without goro.elf: message, back to OVMF",
           boot="efi-nokernel", firmware="ovmf", cores=1, check_cores=False,
           stop_at=r"BdsDxe: failed to start Boot", exit_status=0, timeout=60,
           expect_seq=[r"goro loader: cannot read \\goro\.elf", r"BdsDxe: failed to start Boot"]),
    # Screenshots: the framebuffer console must show exactly the serial log.
    Config("fb-efi", "framebuffer console under the GNU-EFI loader (GOP), screendump",
           boot="efi", firmware="ovmf", cmdline="app=hello", screenshot=True,
           stop_at=r"machine halted", exit_status=0, timeout=60,
           expect=[r"hello from goro"]),
    Config("fb-iso-bios", "framebuffer console under GRUB/SeaBIOS (multiboot2 tag), screendump",
           boot="iso", cmdline="app=hello", screenshot=True,
           stop_at=r"machine halted", exit_status=0, timeout=60,
           expect=[r"hello from goro"]),
    ktest("iso-uefi", "ktest, GRUB ISO under OVMF (UEFI), fw_cfg command line",
          boot="iso", firmware="ovmf"),
    # Until the kernel reads the SRAT this only proves that a NUMA machine
    # boots; the NUMA tests will check the nodes it finds.
    ktest("numa2-smp4", "ktest, -kernel, 2 NUMA nodes of 2 vCPUs", cores=4,
          numa=[NumaNode("0-1", "256M"), NumaNode("2-3", "256M")], numa_dist=[(0, 1, 20)],
          expect=[r"numa: 2 nodes: node 0 cpus 0-1 mem 256 MiB, node 1 cpus 2-3 mem 256 MiB; "
                  r"distances 10 20 / 20 10"], timeout=180),
    ktest("numa4-q35", "ktest, q35, 4 NUMA nodes of 1 vCPU, SLIT distances 20/30/40",
          cores=4, machine="q35", mem="1G",
          numa=[NumaNode(str(i), "256M") for i in range(4)],
          numa_dist=[(0, 1, 20), (0, 2, 30), (0, 3, 40), (1, 2, 20), (1, 3, 30), (2, 3, 20)],
          expect=[r"numa: 4 nodes: node 0 cpus 0 mem 256 MiB, node 1 cpus 1 mem 256 MiB, "
                  r"node 2 cpus 2 mem 256 MiB, node 3 cpus 3 mem 256 MiB; "
                  r"distances 10 20 30 40 / 20 10 20 30 / 30 20 10 20 / 40 30 20 10"],
          timeout=180),
    # Node 2 has a CPU and no memory, node 3 memory and no CPU; no SLIT.
    ktest("numa4-memless", "ktest, 4 NUMA nodes: one without memory, one without CPUs",
          cores=3, smp="3,sockets=3,cores=1", mem="768M",
          numa=[NumaNode("", "256M", socket=0), NumaNode("", "256M", socket=1),
                NumaNode("", None, socket=2), NumaNode("", "256M")],
          expect=[r"numa: 4 nodes: node 0 cpus 0 mem 256 MiB, node 1 cpus 1 mem 256 MiB, "
                  r"node 2 cpus 2 mem 0 MiB, node 3 cpus none mem 256 MiB; "
                  r"distances 10 20 20 20 / 20 10 20 20 / 20 20 10 20 / 20 20 20 10"],
          timeout=180),
    Config("numa-off", "numa=off on a 2-node machine: one node, NUMA tests still pass",
           cores=2, numa=[NumaNode("0", "256M"), NumaNode("1", "256M")],
           cmdline="numa=off app=ktest filter=numa", ktest=True,
           expect=[r"numa: 1 node \(numa=off\): node 0 cpus 0-1 mem \d+ MiB; distances 10$"],
           timeout=60),
    # Boot: every core online at 16 and 32 vCPUs (the APs start all at
    # once), a forced wait after INIT, and APs made late on purpose.
    Config("boot-smp32", "32 vCPUs: every core online, the boot timeline printed",
           cores=32, cmdline="app=hello boot_timeline=1", timeout=120, log_check=check_in_wait_check,
           expect=[r"^hello from goro: 32 cores", r"^boot: us from entry: .*\bonline=\d+ .*\bmain=\d+$",
                   r"^boot: cpu 31 \(apic id 31\) online at \d+ us, ready at \d+ us$"]),
    Config("boot-smp16", "16 vCPUs, xAPIC: every core online", cores=16, apic="xapic", cmdline="app=hello",
           timeout=90, expect=[r"cores online \(xapic, ", r"^hello from goro: 16 cores"]),
    Config("init-delay-smp4", "init_delay=10ms forces the wait after INIT; every core still comes up (xAPIC)",
           cores=4, apic="xapic", cmdline="init_delay=10ms app=hello", timeout=60,
           expect=[r"cores online \(xapic, 10000 us INIT wait\)", r"^hello from goro: 4 cores"]),
    Config("init-delay-x2apic-smp4", "init_delay=10ms in x2APIC mode (INIT and STARTUP through the ICR MSR)",
           cores=4, apic="x2apic", cmdline="init_delay=10ms app=hello", timeout=60,
           expect=[r"cores online \(x2apic, 10000 us INIT wait\)", r"^hello from goro: 4 cores"]),
    Config("late-aps-smp8", "ap_timeout=2ms: APs late on purpose are reported and halt; the rest run ktest",
           cores=8, cmdline="ap_timeout=2ms app=ktest filter=stack", ktest=True, check_cores=False,
           timeout=180, log_check=late_aps_check),
    # Fewer start-up tickets than APs (arch/smp.c's second round): the
    # planned APs the broadcast left without one are started again by APIC
    # id. inject=tickets:N limits the first round on purpose; past
    # MAX_CPUS + 1 vCPUs the APs race for MAX_CPUS - 1 tickets, and the
    # APs the plan does not use (the MADT's last) that won one are evicted
    # from their slots for the planned ones that did not (by chance: at
    # MAX_CPUS + 2 vCPUs in nearly every boot; make test-stress only).
] + [Config(f"tickets{t}-smp{c}", f"inject=tickets:{t} at {c} vCPUs: the APs left out start in a second round",
            cores=c, cmdline=f"inject=tickets:{t} app=ktest filter=boot_", ktest=True, timeout=120,
            expect_seq=[rf"^inject: tickets: the APs' broadcast start had {t} tickets?$",
                        rf"^smp: {c - 1} APs started for {t} tickets?; second round: {c - 1 - t} planned APs? "
                        r"restarted, 0 unplanned APs evicted from their slots$",
                        rf"^smp: {c} of {c} cores online"],
            reject=[r"did not come up"]) for c, t in ((4, 1), (8, 2))] + [
] + [
    # inject=evict:S at S + 1 vCPUs: the second round takes a slot from an
    # unplanned AP every time (past MAX_CPUS + 1 vCPUs only by chance). In
    # the debug build that AP is slow to leave it, as on a loaded host,
    # longer than the check-in wait's bound (7.7 ms here): the round's
    # wait must be the AP timeout's.
    Config(f"evict{debug}-smp5", f"inject=evict:4 at 5 vCPUs{help}: an unplanned AP leaves its slot to a planned one",
           cores=5, build=build, cmdline=f"inject=evict:4{delay} app=hello", check_cores=False, timeout=120,
           expect_seq=[r"^inject: evict: the APs' broadcast start had 4 slots; the first ticket's holder leaves",
                       r"^smp: 4 APs started for 3 tickets; second round: 1 planned AP restarted, 1 unplanned AP "
                       r"evicted from its slot$",
                       r"^smp: 4 of 4 cores online", r"^hello from goro: 4 cores"],
           reject=[r"did not come up"])
    for debug, build, delay, help in (("", "", "", ""),
                                      ("-debug", "debug", " delay=smp_evict_leave:100000",
                                       ", debug build, the AP 100 ms slow to leave"))] + [
    Config("tickets-fwcfg", "inject=tickets: through fw_cfg comes after the broadcast start: named, nothing limited",
           cores=2, boot="iso", cmdline="inject=tickets:1 app=hello", timeout=60,
           expect=[r"^inject: tickets: nothing limited: the APs were not started by one broadcast with the "
                   r"loader's command line", r"^hello from goro: 2 cores"]),
    many(f"tickets-smp{MAX_CPUS + 2}", f"{MAX_CPUS + 1} APs race for {MAX_CPUS - 1} tickets: every planned AP "
         "comes up", MAX_CPUS + 2, "app=hello", check_cores=False,
         expect_seq=[rf"^smp: {MAX_CPUS + 1} APs started for {MAX_CPUS - 1} tickets; second round: (\d+) planned "
                     r"APs? restarted, \1 unplanned APs? evicted from (its|their) slots?$",
                     rf"^smp: {MAX_CPUS} of {MAX_CPUS} cores online"],
         reject=[r"did not come up"]),
    ktest("smp2-kernel", "ktest, -kernel, 2 vCPUs", cores=2),
    ktest("smp1-kernel", "ktest, -kernel, 1 vCPU", cores=1),
    # Under -icount an APIC timer tick is one instruction and the clock
    # jumps to the next deadline while every vCPU idles (sleep=off): a
    # deadline re-armed in the past fires before the code it interrupted
    # can act on it, a livelock that real TCG's slow timer hides. In xAPIC
    # mode: QEMU's TCG does not count RDMSR/WRMSR as I/O, so under -icount
    # the x2APIC timer's MSRs stop QEMU ("Bad icount read", tools/run/qemu.py).
    ktest("icount-smp1", "ktest, 1 vCPU, -icount shift=0,sleep=off (guest time counts instructions), xAPIC",
          cores=1, apic="xapic", qemu_extra=["-icount", "shift=0,sleep=off"]),
    ktest("icount-smp2", "ktest, 2 vCPUs, -icount shift=0,sleep=off (one thread runs both, in turn), xAPIC",
          cores=2, apic="xapic", qemu_extra=["-icount", "shift=0,sleep=off"]),
    ktest("icount-debug-smp2", "ktest, debug build, 2 vCPUs, -icount shift=0,sleep=off, xAPIC",
          build="debug", cores=2, apic="xapic", qemu_extra=["-icount", "shift=0,sleep=off"]),
    # sysmon's bounds in guest time: under -icount the guest's clock counts
    # instructions and stops with its vCPU, so "within two time slices" is
    # asserted (clock=exact), not only printed. xAPIC, as the runs above.
    *[ktest(f"sysmon-icount-smp{n}", f"sysmon's bounds in guest time, -icount, {n} vCPU(s), xAPIC", cores=n,
            apic="xapic", cmdline="app=ktest clock=exact filter=irqwait_readied_g_runs,netpoll_packet_reaches,preempt_sleep_beside,go_TestPreemptionAfterSyscall",
            qemu_extra=["-icount", "shift=0,sleep=off"],
            expect=[r"^ktest: guest time .*asserted: the clock counts instructions"], timeout=120)
      for n in (1, 2, 4, 8)],
    # The scheduler race regressions in the debug build (make DEBUG=1), whose
    # delay points widen each race's window (tests/kernel/test_sched_races.c).
    ktest("race-debug-smp2", "race regressions, debug build (delay points), 2 vCPUs",
          build="debug", cores=2, cmdline="app=ktest filter=race_"),
    ktest("race-debug-smp4", "race regressions, debug build (delay points), 4 vCPUs",
          build="debug", cores=4, cmdline="app=ktest filter=race_", timeout=180),
    # The faulting helpers are frameless leaves, so the frame-pointer walk
    # may skip their caller: either name proves the backtrace reached the app.
    fault("fault-pf", "deliberate #PF: dump and backtrace into apps/faults.c",
          "#PF", ["touch_unmapped", "fault_pf_main"]),
    fault("fault-ud", "deliberate #UD: dump and backtrace into apps/faults.c",
          "#UD", ["run_ud2", "fault_ud_main"]),
    fault("fault-null", "NULL dereference: page 0 is unmapped, so a #PF dump",
          "#PF", ["fault_null_main"]),
] + [wild_rsp(c) for c in (1, 2, 4, 8)] + [
    Config("fault-in-panic-report", "a fault while a panic prints its report: one line naming it, exit 255",
           cmdline="app=panic_bad_string", exit_status=255, timeout=15,
           expect_seq=[r"^panic on cpu \d+: the message is ",
                       r"^EXCEPTION #PF page fault \(vector 14\) on cpu \d+ inside the fatal report at "
                       r"[0-9a-f]+ <\w+\+0x[0-9a-f]+>, address 00007ff000000000: the report stops here$"],
           log_check=lambda lines: one_exception(lines, 1)),
    fatal("malloc-double-free", "free() of a block twice is a fatal error naming it",
          r"free\(0x[0-9a-f]+\): double free of a block of 112 bytes"),
    Config("malloc-double-free-remote", "free() on another core, then on the block's own: a fatal error",
           cores=2, cmdline="app=malloc_double_free_remote", exit_status=255, timeout=15,
           expect_seq=[r"^malloc_double_free_remote: freed on another core$",
                       r"free\(0x[0-9a-f]+\): double free of a block of 112 bytes"]),
    # The AP's M joins the idle list 200 ms after main's go()s found no idle
    # M to wake: it must look for them itself (mstart), or main, pinned
    # and waiting for another core, hangs.
    Config("malloc-double-free-late-ap-debug", "the same with the AP 200 ms late to go idle (debug build): "
           "it finds the freers itself",
           build="debug", cores=2, cmdline="app=malloc_double_free_remote delay=ap_mstart:200000",
           exit_status=255, timeout=15,
           expect_seq=[r"^malloc_double_free_remote: freed on another core$",
                       r"free\(0x[0-9a-f]+\): double free of a block of 112 bytes"]),
    fatal("panic", "panic() prints its message and exits 255", r"deliberate panic with 0 argument"),
    # Many cores to stop: the stop goes to the cores that checked in, by
    # APIC id. A broadcast NMI reached an AP halted in the trampoline
    # without an IDT, which triple-faulted: QEMU reset (exit 0) and the
    # report was lost.
] + [Config(f"panic-smp{c}", f"a panic at {c} vCPUs: its report and exit 255, never a triple fault",
            cores=c, machine=m, cmdline="app=panic", exit_status=255, check_cores=False, timeout=120,
            expect_seq=[r"^panic on cpu \d+: deliberate panic with 0 argument", r"^backtrace:",
                        r"\bpanic_main\b"]) for c, m in ((65, "pc"), (256, "q35"))] + [
    Config("exit-code", "an app returning 5 makes QEMU exit (5 << 1) | 1",
           cmdline="app=exit_code 5", exit_status=11, timeout=30),
    Config("badarg-gomaxprocs",
           "gomaxprocs=0 is rejected with a message naming the key and range",
           cmdline="gomaxprocs=0 app=hello",
           expect=[r"gomaxprocs.*\b1\b.*\b1024\b"], timeout=30),
    # Scheduler: the fatal reports, Go's schedtrace format, seeded schedules,
    # and a small quantum so preemption strikes inside channels and locks.
    Config("deadlock", "every goroutine parked: Go's deadlock report and a G dump, exit 255",
           cmdline="app=deadlock", exit_status=255, timeout=30,
           expect_seq=[r"fatal error: all goroutines are asleep - deadlock!",
                       r"goroutine \d+ \[waiting, test: (main )?waits forever\]: created by goroutine \d+"]),
    fatal("stack-overflow", "recursion past a goroutine's stack hits its guard page",
          r"fatal error: stack overflow: goroutine \d+ \(created by goroutine \d+\) "
          r"ran past its \d+ KiB stack", timeout=30),
] + [overflow_frame(c) for c in (1, 2, 4, 8)] + [
    Config("schedtrace", "schedtrace=20 prints Go's SCHED lines while hogs run",
           cores=2, cmdline="schedtrace=20 scheddetail=1 app=ktest filter=preempt_hogs", ktest=True,
           expect=[r"^SCHED \d+ms: gomaxprocs=\d+ idleprocs=\d+ threads=\d+ spinningthreads=\d+ "
                   r"idlethreads=\d+ runqueue=\d+ \[\d+( \d+)*\]$",
                   r"^  P0: status=\d+ schedtick=\d+ m=-?\d+ runqsize=\d+"], timeout=60),
    Config("seed7-smp4-sched", "scheduler tests with seed=7 (randomized runnext), 4 vCPUs",
           cores=4, cmdline="seed=7 app=ktest filter=sched", ktest=True, timeout=180),
    Config("seed99-smp8-chan", "channel and select tests with seed=99, 8 vCPUs",
           cores=8, cmdline="seed=99 app=ktest filter=chan", ktest=True, timeout=240),
    Config("quantum50us-smp2", "channels and sync under a 50 us quantum (preemption everywhere)",
           cores=2, cmdline="quantum=50us seed=5 app=ktest filter=sync", ktest=True, timeout=180),
    Config("quantum50us-chan-smp4", "channels under a 50 us quantum, 4 vCPUs",
           cores=4, cmdline="quantum=50us seed=6 app=ktest filter=chan", ktest=True, timeout=240),
    # The event trace: printed whole when the app returns, and consistent
    # (every G created before it runs, on one core at a time). The ktest run
    # wraps the rings, so its dump begins mid-stream and counts the dropped.
    Config("trace-smp4", "trace=1: worker pool's event trace, whole and consistent, 4 vCPUs; go tool trace reads it",
           cores=4, cmdline="trace=1 app=demo_worker_pool", timeout=60,
           expect=[r"^worker_pool: ok", r"^TRACE begin cores=4 .* dropped=0$", r"^TRACE \d+ \d+ GoStart g=([2-9]|\d\d+) "],
           log_check=lambda lines: trace2json.check(lines) + go_trace_check(lines, "smp4")),
    Config("trace-go-smp1", "trace=1, 1 vCPU: the worker pool's Go execution trace parses; counts match",
           cores=1, cmdline="trace=1 app=demo_worker_pool", timeout=60,
           expect=[r"^worker_pool: ok", r"^TRACE begin cores=1 .* dropped=0$"],
           log_check=lambda lines: trace2json.check(lines) + go_trace_check(lines, "smp1")),
    Config("trace-go-smp2", "trace=1, 2 vCPUs: the worker pool's Go execution trace parses; counts match",
           cores=2, cmdline="trace=1 app=demo_worker_pool", timeout=60,
           expect=[r"^worker_pool: ok", r"^TRACE begin cores=2 .* dropped=0$"],
           log_check=lambda lines: trace2json.check(lines) + go_trace_check(lines, "smp2")),
    Config("trace-efi", "trace=1 under the GNU-EFI loader: hooks patched in the image OVMF loaded",
           boot="efi", firmware="ovmf", cores=2, cmdline="trace=1 app=demo_worker_pool", timeout=90,
           expect=[r"^worker_pool: ok", r"^trace: \d+ hooks on$", r"^TRACE begin cores=2 .* dropped=0$"],
           log_check=trace2json.check),
    ktest("trace-sched-smp2", "trace=1 while the scheduler tests run: rings wrap, dump parses",
          cores=2, cmdline="trace=1 app=ktest filter=sched", timeout=180,
          expect=[r"^TRACE begin cores=2 .* dropped=[1-9]\d*$"],
          log_check=lambda lines: trace2json.check(lines) + go_trace_check(lines, "sched")),
    # Go's benchmarks (app=gobench) with a short fixed count: every line in
    # go test's format, every benchmark of the list ran; no timing is checked.
    Config("gobench-smp2", "app=gobench benchtime=10x: Go's benchmark format, every benchmark ran",
           cores=2, cmdline="app=gobench benchtime=10x", timeout=300,
           expect=[r"^ok  \ttime\t"], log_check=gobench_format.checker(2)),
    # Latency under load (app=latency, tools/bench/latbench.py): each workload runs
    # briefly; its lines parse, every open-loop request completed, the
    # percentiles are ordered. No time is checked.
    Config("latency-smp2", "app=latency, all three workloads briefly: lines parse, counts sane, no request lost",
           cores=2, cmdline="quantum=30us app=latency wl=timers,wakeup,open ms=200 loads=20,60", timeout=120,
           expect=[r"^LATDONE impl=goro$"], log_check=lambda lines: latbench.check_lines(lines, 200)),
    # The short soak (make soak is the long one): app=soak with fixed seeds
    # over three machine shapes and time slices; each finds every
    # invariant held (docs/testing.md, *Soak*). About 5 to 20 s each here.
    soak(1, 1, "20us", 11), soak(4, 2, "50us", 12), soak(8, 4, "1ms", 13),
    # ... and its checks catch what they look for: a message lost, a
    # goroutine finished twice, each named, then the replay command.
    Config("soak-break-msg", "app=soak break=msg: the lost message is named, then the replay",
           cmdline="app=soak seed=21 quantum=50us ops=100000 break=msg", exit_status=3,
           expect_seq=[r"^soak: FAIL: messages: \d+ sent, 1 never received",
                       r"^soak: FAILED with seed=21$",
                       r'^soak: replay: make run APP=soak SMP=2 ARGS="seed=21 quantum=50us '
                       r'ops=100000 break=msg"$']),
    Config("soak-break-g", "app=soak break=g: a goroutine finished twice is named, then the replay",
           cmdline="app=soak seed=22 ops=100000 break=g", exit_status=3,
           expect_seq=[r"^soak: FAIL: goroutine of slot \d+ finished 2 times",
                       r'^soak: replay: make run APP=soak SMP=2 ARGS="seed=22 quantum=10000us '
                       r'ops=100000 break=g"$']),
    # The CPU profiler: go tool pprof reads the profile and finds the hot
    # function; the samples stand for hz x time x cores.
    Config("profile-smp2", "profile=1000 on app=cpuburn: pprof -top lists cpuburn_hot first, counts within 10%",
           cores=2, cmdline="profile=1000 app=cpuburn ms=1000", timeout=90,
           expect=[r"^profile: 2 hooks on$"], log_check=lambda lines: profile_check(lines, "smp2")),
    Config("profile-10khz-smp1", "profile=10000 on app=cpuburn, 1 vCPU: the same at the highest rate",
           cores=1, cmdline="profile=10000 app=cpuburn ms=500", timeout=90,
           log_check=lambda lines: profile_check(lines, "10khz")),
    Config("profile-live-smp2", "profile_start(1000)/profile_stop() from code, no profile= at boot: the hooks patched in live",
           cores=2, cmdline="app=cpuburn ms=800 live=1000", timeout=90,
           reject=[r"^profile: \d+ hooks on$"], log_check=lambda lines: profile_check(lines, "live")),
    # ms=0 (all the rings hold): a window of the last N ms can be empty when
    # the host deschedules the vCPUs for that long.
    Config("trace-flightrec-smp2", "trace_dump_recent(0) while ping-pong pairs run: the dump parses, go tool trace reads it",
           cores=2, cmdline="trace=1 app=flightrec ms=0", timeout=120,
           expect=[r"^flightrec: ok"], log_check=lambda lines: flight_recorder_check(lines, "flightrec")),
    # ms whose nanoseconds overflow 64 bits (2^64 / 10^6, rounded up):
    # all the rings hold, as ms=0; wrapped, the window was 0.45 ms and
    # left out the markers started 20 ms before the dump.
    Config("trace-flightrec-huge-ms", "trace_dump_recent(18446744073710) keeps the whole rings: no overflow",
           cores=2, cmdline="trace=1 app=flightrec ms=18446744073710 quiet=1", timeout=120,
           expect=[r"^flightrec: ok"], log_check=lambda lines: flight_recorder_check(lines, "flightrec-huge-ms")),
    # Scheduler metrics: they parse, and the latency histogram holds one
    # sample per schedule (per GoStart of the event trace booted with them).
    Config("metrics-smp2", "metrics=1 trace=1 on the timeout demo: METRIC lines parse, one latency per GoStart",
           cores=2, cmdline="metrics=1 trace=1 app=demo_timeout", timeout=60,
           expect=[r"^metrics: on"], log_check=lambda lines: metrics.check(lines) + trace2json.check(lines)),
    Config("metrics-smp4", "metrics=1 alone on the worker pool, 4 vCPUs: METRIC lines parse and add up",
           cores=4, cmdline="metrics=1 app=demo_worker_pool", timeout=60,
           expect=[r"^metrics: on", r"^METRIC /sched/gomaxprocs:threads 4"], reject=[r"^TRACE "],
           log_check=metrics.check),
    # make bench's scheduling-latency app: its lines parse, each workload's
    # window holds one latency sample per schedule; no time is checked.
    Config("schedlat-smp2", "app=schedlat metrics=1: BENCH lines parse, latency samples = schedules per workload",
           cores=2, cmdline="metrics=1 app=schedlat reps=1", timeout=60,
           expect=[r"^schedlat: ok$"], log_check=lambda lines: schedlat.check(lines) + metrics.check(lines)),
    Config("demos", "the seeds' examples as demos that check themselves",
           cores=4, cmdline="app=demos", expect=[r"demos: [1-9]\d* passed, 0 failed"], timeout=180),
    # Typed one key at a time, each line after the previous answer: the echo
    # must show each line as typed although the reader moves between cores
    # while it waits (a lost echo once showed "hello" as "lo").
    Config("echo", "app=echo: lines typed on COM1 arrive by its interrupt (IOAPIC) and come back",
           cores=2, cmdline="app=echo",
           console=[(r"^echo: ready", "hello\n"), (r"^echo: hello$", "world\n"),
                    (r"^echo: world$", "quit\n")],
           expect_seq=[r"^hello$", r"^echo: hello$", r"^world$", r"^echo: world$", r"^quit$",
                       r"goro: main returned 0"],
           timeout=60),
    # The shell: typed on COM1 and on the PS/2 keyboard under SeaBIOS and
    # OVMF, a boot script from fw_cfg, ten apps back to back, the prompt on
    # the framebuffer.
    Config("shell-serial", "app=shell typed on COM1: run, ps, gomaxprocs, sched, a failing app, "
           "editing, history, Ctrl-C, halt",
           cores=2, cmdline="app=shell",
           console=[(PROMPT, "run hello\n"),
                    (PROMPT, "ps\n"),
                    (PROMPT, "gomaxprocs 9\x7f1\n"),
                    (PROMPT, "run demo_worker_pool\n"),
                    (PROMPT, "sched\n"),
                    (PROMPT, "run exit_cod 3\x1b[D\x1b[De\n"),
                    (PROMPT, "run echo\n"),
                    (r"^echo: ready", "typed\n"),
                    (r"^echo: typed", "\x03"),
                    (PROMPT, "\x1b[A\x1b[A\n"),
                    (PROMPT, "halt\n")],
           expect_seq=[r"^goro shell: 2 cores, gomaxprocs=2",
                       r"^goro> run hello$", r"^hello from goro", r"^run: hello returned 0 after ",
                       r"^run: left behind: 0 goroutines, ",
                       r"^goro> ps$", r"^\s+GOID\s+STATE\s+WAITING FOR\s+CREATOR\s+P\s+CORE",
                       r"^\s+\d+\s+(waiting\s+irq wait|running|runnable)\s+1 .* key_reader$",   # running: it may be taking the next typed line
                       r"^\s+1\s+running\s+0\s+\d+\s+\d+ .* main_goroutine$",
                       r"^gomaxprocs 2 -> 1$",
                       r"^worker_pool: ok$", r"^run: demo_worker_pool returned 0 after ",
                       r"^gomaxprocs=1 cores=2 quantum=10.0 ms ", r"^\s+0 running\s+\d+ ",
                       r"^SCHED \d+ms: gomaxprocs=1 idleprocs=0 threads=2 ",
                       r"^exit_code: returning 3$", r"^run: exit_code returned 3 after ",
                       r"^echo: typed$", r"^run: echo interrupted after ",
                       # the history's line replaces the one shown: the log keeps both,
                       # with the backspaces between them
                       r"^goro> run echo\x08+run exit_code 3$", r"^run: exit_code returned 3 after ",
                       r"^shell: halting, exit code 0$"],
           timeout=120),
    Config("shell-kbd", "app=shell typed on the PS/2 keyboard (SeaBIOS): history, a deadlocked app "
           "and Ctrl-C, exit code",
           cores=2, cmdline="app=shell", console_via="keyboard",
           console=[(PROMPT, "run hello Keys\n"),
                    (PROMPT, "run deadlock\n"),
                    (r"^deadlock: ", "\x03"),
                    (PROMPT, "\x1b[A\x1b[A\n"),
                    (PROMPT, "halt 4\n")],
           expect_seq=[r"^goro> run hello Keys$", r"^hello from goro: .* Keys$",
                       r"^run: deadlock interrupted after ",
                       r"^run: left behind: [1-9]\d* goroutines",
                       r"^\s+goroutine \d+ \[waiting, .*\] created by \d+, entry main of deadlock",
                       r"^goro> run deadlock\x08+run hello Keys$", r"^run: hello returned 0 after ",
                       r"^shell: halting, exit code 4$"],
           exit_status=9, timeout=120),
    # The USB image without APP= boots the shell (its goro.cmdline and GRUB
    # line say app=shell): both inputs, under OVMF and under SeaBIOS.
    Config("shell-usb-uefi", "goro-usb.img under OVMF: the default shell, keyboard and COM1",
           boot="usb", firmware="ovmf", cores=2, cmdline="",
           console=[(PROMPT, "run hello\n", "keyboard"), (PROMPT, "cpus\n", "serial"),
                    (PROMPT, "halt\n", "keyboard")],
           expect_seq=[r"^goro: running shell$", r"^goro> run hello$", r"^run: hello returned 0 ",
                       r"^goro> cpus$", r"^\s+1\s+1\s+0\s+", r"^shell: halting, exit code 0$"],
           timeout=150),
    Config("shell-usb-bios", "goro-usb.img under SeaBIOS (GRUB): the default shell, COM1 and keyboard",
           boot="usb", cores=2, cmdline="",
           console=[(PROMPT, "numa\n", "serial"), (PROMPT, "mem\n", "keyboard"),
                    (PROMPT, "halt\n", "serial")],
           expect_seq=[r"^goro: running shell$", r"^goro> numa$", r"^node 0: cores 0-1, ",
                       r"^goro> mem$", r"^malloc: \d+ blocks in use", r"^shell: halting, exit code 0$"],
           timeout=120),
    Config("shell-ten-apps", "app=shell runs 10 apps (4 benchmark apps) back to back from a "
           "fw_cfg script: each as in a boot of its own",
           cores=2, cmdline="app=shell", fw_cfg=[("opt/goro/script", SHELL_SCRIPT)],
           expect=[r"^shell: a script of \d+ bytes in fw_cfg opt/goro/script$",
                   r"^shell: halting, exit code 0$"],
           log_check=shell_runs_check, timeout=300),
    Config("shell-script-cmdline", "script= alone starts the shell; trace on (hooks patched in live), "
           "ps run times, dump, off, on, steal, quantum, metrics, reboot",
           cores=2, cmdline='script="trace on; run demo_worker_pool; ps; trace dump; trace off; '
                            'run hello; trace on; run hello; trace dump; quantum 2ms; steal flat; '
                            'metrics; reboot"',
           expect_seq=[r"^goro: running shell$", r"^goro> trace on$", r"^trace: \d+ hooks patched in$",
                       r"^goro> run demo_worker_pool$",
                       r"^\s+1\s+running\s+0\s+\d+\s+\d+\s+\d+(\.\d)? (s|ms|us)\s+main_goroutine$",
                       r"^goro> trace dump$", r"^TRACE begin cores=2 .* dropped=0$",
                       r"^TRACE \d+ \d+ GoCreate g=1 parent=0 fn=\d+$", r"^TRACE end$",
                       r"^trace: recording on -> off, hooks patched out$",
                       r"^trace: \d+ hooks patched in$", r"^TRACE begin cores=2 .* dropped=[1-9]",
                       r"^quantum 10.0 ms -> 2.0 ms$", r"^steal numa -> flat",
                       r"^metrics: ", r"^shell: rebooting$"],
           log_check=each_trace, exit_status=0, timeout=90),
    Config("shell-profile-metrics", "the shell's profile start/stop and metrics (metrics=1): samples and runtime/metrics lines",
           cores=2, cmdline='metrics=1 script="profile start 1000; run demo_worker_pool; profile stop; metrics; halt"',
           expect_seq=[r"^goro> profile start 1000$", r"^profile: sampling every core at 1000 Hz",
                       r"^run: demo_worker_pool returned 0 ", r"^goro> profile stop$",
                       r"^PROFILE begin cores=2 hz=1000 ", r"^goro> metrics$",
                       r"^METRIC /sched/latencies:seconds histogram count=\d+ ",
                       r"^shell: halting, exit code 0$"],
           timeout=90),
    Config("fb-shell", "the shell's prompt and typed keys on the framebuffer (GRUB, SeaBIOS), screendump",
           boot="iso", cmdline='app=shell script="help"', screenshot=True, console_via="keyboard",
           console=[(PROMPT, "run hello\n")],
           stop_at=r"run: hello returned 0[^\n]*\n[^\n]*left behind[^\n]*\ngoro> $",
           exit_status=0, timeout=90),
    Config("exit-in-goroutine", "exit(6) from a goroutine while main waits: the machine exits 6",
           cmdline="app=exit_in_goroutine 6", exit_status=13, timeout=30,
           expect=[r"^exit_in_goroutine: goroutine \d+ calls exit\(6\)$"]),
    fatal("chan-send-closed", "send on a closed channel is fatal, naming the goroutine and call site",
          r"fatal error: send on closed channel \(goroutine \d+, called from send_closed_main\+0x[0-9a-f]+\)"),
    fatal("chan-close-closed", "close of a closed channel is fatal",
          r"fatal error: close of closed channel \(goroutine \d+, called from close_closed_main\+0x[0-9a-f]+\)"),
    fatal("chan-close-blocked-sender", "closing a channel under a blocked sender makes its send fatal",
          r"fatal error: send on closed channel \(goroutine \d+, called from blocked_sender\+0x"),
    fatal("chan-nil-recv", "a receive from a nil channel blocks forever: the deadlock report says so",
          r"all goroutines are asleep - deadlock!", r"\[waiting, chan receive \(nil chan\)\]"),
    fatal("mutex-unlock-unlocked", "unlock of an unlocked mutex is fatal",
          r"fatal error: sync: unlock of unlocked mutex \(goroutine \d+, called from unlock_unlocked_main\+0x"),
    fatal("wg-negative", "a negative WaitGroup counter is fatal",
          r"fatal error: sync: negative WaitGroup counter \(goroutine \d+, called from wg_negative_main\+0x"),
    fatal("syscall-go", "go() between entersyscall and exitsyscall is fatal, naming the call site",
          r"fatal error: go between entersyscall and exitsyscall \(the goroutine's M holds no P there\) "
          r"\(goroutine \d+, called from syscall_go_main\+0x"),
    fatal("syscall-sleep", "a sleep between entersyscall and exitsyscall is fatal: the goroutine may not block",
          r"fatal error: sleep with the preempt count held \(inside preempt_disable or between "
          r"entersyscall and exitsyscall\) \(goroutine \d+, called from sleep_ns\+0x"),
    # Fault injection (inject=, kernel/inject.c): each fault ends in its
    # named diagnosis and a non-zero exit, never a hang or a reboot.
    Config("inject-ap-silent", "inject=ap-silent: an AP never answers INIT-SIPI-SIPI; named, and ktest fails",
           cores=2, check_cores=False, cmdline="inject=ap-silent app=ktest filter=boot_", exit_status=3,
           timeout=30,
           expect_seq=AP_SILENT_SEQ),
    Config("inject-acpi-madt", "inject=acpi:MADT: a corrupt MADT is named and ignored; ktest fails",
           cores=2, check_cores=False, cmdline="inject=acpi:MADT app=ktest filter=boot_", exit_status=3,
           timeout=30,
           expect_seq=[r"^inject: acpi: corrupted the APIC table at 0x[0-9a-f]+ before parsing$",
                       r"^acpi: ACPI MADT: checksum of the \d+-byte table at 0x[0-9a-f]+ is wrong; ignoring it$",
                       r"^smp: 1 of 1 cores online",
                       r"^TEST FAIL boot_acpi_tables_parse_cleanly: 1 ACPI warning\(s\), the first: ACPI MADT: "
                       r"checksum"]),
    # The same two faults given through fw_cfg (an ISO boot's command
    # line): the loader's line has no inject=, so under a hypervisor every
    # AP was started at once before the words were read (arch/smp.c's
    # broadcast). The silenced AP halts at go; with the MADT corrupted the
    # plan is the boot core alone, and the AP that came up halts unnamed.
    Config("inject-ap-silent-fwcfg", "inject=ap-silent through fw_cfg, after the broadcast start: named, ktest fails",
           cores=2, boot="iso", check_cores=False, cmdline="inject=ap-silent app=ktest filter=boot_",
           exit_status=3, timeout=60,
           expect_seq=AP_SILENT_SEQ),
    Config("inject-acpi-madt-fwcfg", "inject=acpi:MADT through fw_cfg, after the broadcast start: the AP is unused",
           cores=4, boot="iso", check_cores=False, cmdline="inject=acpi:MADT app=ktest filter=boot_",
           exit_status=3, timeout=60,
           expect_seq=[r"^inject: acpi: corrupted the APIC table at 0x[0-9a-f]+ before parsing$",
                       r"^smp: 1 of 1 cores online",
                       r"^TEST FAIL boot_acpi_tables_parse_cleanly: 1 ACPI warning\(s\)"],
           reject=[r"did not come up"]),
    # fw_cfg's byte-per-read interface, where the device has no DMA (QEMU
    # before 2.9): the command line still arrives (drivers/fw_cfg.c).
    Config("fwcfg-no-dma", "fw_cfg without its DMA interface: the command line read a byte at a time",
           cores=2, boot="iso", cmdline="app=hello", timeout=120,
           qemu_extra=["-global", "fw_cfg_io.dma_enabled=off"],
           expect=[r"^cmdline: .*\bapp=hello$", r"^hello from goro: 2 cores"]),
    Config("init-delay-fwcfg", "init_delay= through fw_cfg finds the APs started: named, every core up",
           cores=4, boot="iso", cmdline="init_delay=10ms app=hello", timeout=60,
           expect=[r"^cmdline: init_delay= has nothing to delay: the APs were started under a hypervisor"]),
    Config("inject-node-full", "inject=node-full: node 0's pages all taken: out of memory, named, exit 255",
           cores=2, cmdline="inject=node-full app=ktest", exit_status=255, timeout=30,
           expect_seq=[r"^inject: node-full: took all \d+ free pages of node 0$",
                       r"out of memory: \d+ pages wanted on node 0; node 0: 0 of \d+ pages free",
                       r"backtrace:"]),
    Config("inject-stack-full", "inject=stack-full: no goroutine stack left: named, exit 255",
           cores=2, cmdline="inject=stack-full app=ktest", exit_status=255, timeout=30,
           expect_seq=[r"^inject: stack-full: the goroutine stack region is used up$",
                       r"fatal error: out of goroutine stacks: the 512 GiB stack region is used up",
                       r"backtrace:", r"\bg_alloc\b"]),
    # simd=off under TCG: no SSE state, but the x87 unit works, and a
    # preempted goroutine's x87 registers are saved with FNSAVE
    # (tests/kernel/test_x87.c: general registers only, so it runs here).
] + [ktest(f"x87-simd-off-smp{c}", f"simd=off: x87 state across preemptions at a 20 us quantum, {c} vCPU(s)",
           cores=c, cmdline="simd=off app=ktest filter=x87", timeout=120) for c in (1, 2, 4, 8)] + [
    # PVM emulates guest ring 0 one instruction at a time and kills the
    # guest on SSE/AVX, xgetbv, monitor, int3 and fninit while QEMU hangs:
    # hence simd=off, an integer-only app and a short timeout.
    Config("kvm-smoke", "KVM (-cpu host): x2APIC and TSC-deadline paths",
           accel="kvm", cmdline="simd=off app=hello", timeout=25,
           expect=[r"cores online \(x2apic,", r"timer: TSC-deadline one-shot"],
           optional=True, requires_kvm=True),
] + GO_TESTS + GO_MISUSE
