#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How many basic blocks QEMU translates on goro's way to each boot phase.

Under TCG a boot's wall time is mostly QEMU translating code it runs for
the first time (5-8 us of host time per translation block here, whatever
the block's instructions: docs/boot.md, "Where the time goes"). The count
does not move with the host's load, so it is the steady figure to compare
boot orders with. This boots ELF once with `-d in_asm` (every block logged
at its translation, in the order translated), maps each block to the
function holding it (`nm`), and prints:

- the block count from kernel entry (`_start` or `boot_efi64`) to the
  first translation of each function named with --at (default: the boot's
  landmarks, the APs' among them);
- the functions with the most blocks, with --top N;
- with --order FILE, every C function run from kernel entry to the main
  goroutine, in the order of its first translation, one per line, the
  APs' check-in path and the boot core's yield and wake (AP_CHECK_IN,
  BOOT_WAKE) moved up to the STARTUP: the linker places them first, in
  that order (boot/text_order.txt, the Makefile's $(BUILD)/text_order.ld),
  so the boot's code lies on as few pages as it can (docs/boot.md, "Where
  the time goes");
- with --check, whether the image is laid out by a current list: every
  function the boot runs before `console_init` (the boot core's way to
  its halt for the APs' check-ins, and the APs' check-in) must lie before
  `console_init` in the image, and AP_CHECK_IN and BOOT_WAKE before
  `boot_after_startup`, whether or not the logged boot ran them. A
  function new on that way and missing from the list lands past
  everything the list places, on a page of its own that every vCPU's TLB
  is walked for while the APs come up. Exit 1, naming them, if one does
  not.

Blocks below 1 MiB are named `trampoline` (the APs' start-up page) or
`low` (firmware). The APs share the boot core's translations (one cache for
all vCPUs), so an AP's count is only the code the boot core had not run;
their blocks interleave with the boot core's in the log.

    tools/bench/boot_blocks.py [--smp N] [--append CMDLINE] [--at F,G,...] [--top N] [--order FILE] [--check] ELF

Python 3 standard library, binutils' nm and QEMU.
"""

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.run import qemu  # noqa: E402

LANDMARKS = ("kmain,acpi_init,arch_start_aps,trampoline,ap_entry,console_init,cmdline_parse,"
             "arch_clock_begin,numa_init,page_init,paging_init,ioapic_init,arch_clock_end,"
             "arch_finish_aps,ap_setup,sched_init,main_goroutine")
TRAMPOLINE = (0x8000, 0x9000)       # arch/smp.c's AP_TRAMPOLINE page
BLOCK_RE = re.compile(r"^IN:[^\n]*\n0x([0-9a-f]+):", re.M)
# The functions an AP runs from the trampoline to its check-in and halt
# (arch/smp.c's ap_entry up to wait_for_go) that must lie on a page the
# boot core ran before its STARTUP. --order puts those the boot core does
# not run before its STARTUP right after its last function there
# (lapic_enable, which it runs, stays where it first ran): with 64 vCPUs
# the first block on a fresh page costs 0.25-0.6 ms of TLB walks, which on
# the AP side every AP waits behind (docs/boot.md).
# tests/host/test_make.sh checks that every one lies there.
AP_CHECK_IN = ("ap_entry", "lapic_enable", "smp_nudge_boot_core", "arch_idle_halt")
# The boot core's first halt after the broadcast (arch/smp.c's
# arch_boot_yield_to_aps) and its wake from a halt (its timer, or an AP's
# nudge in arch_wait_checked_in), which --order moves up to right after
# AP_CHECK_IN, whether or not the boot it logged ran them there: the yield
# comes while the APs come up, and each fresh page it or the first
# interrupt's path ran would cost a walk of every vCPU's TLB then (4.4 ms
# at 256 vCPUs, the boot core's host CPU taken from the APs).
# The two stubs are the timer's and the nudge's vectors, read from the
# headers that name them, so that a vector renumbered there moves them too.
VECTOR_SOURCES = (("VEC_TIMER", "arch/arch.h"), ("VEC_SMP_NUDGE", "arch/arch_private.h"))


def vector_value(name, text):
    r"""The value a header gives a vector, as an enum member or a #define.

    >>> vector_value("VEC_TIMER", "enum {\n    VEC_TIMER = 0xF0,\n    VEC_WAKE = 0xF1,\n};")
    240
    >>> vector_value("VEC_SMP_NUDGE", "#define VEC_SMP_NUDGE 0xF4\n")
    244
    >>> vector_value("VEC_GONE", "#define VEC_SMP_NUDGE 0xF4\n")
    Traceback (most recent call last):
    ...
    SystemExit: boot-blocks: no value for VEC_GONE in its header
    """
    m = re.search(r"\b" + name + r"\b\s*(?:=\s*)?(0[xX][0-9a-fA-F]+|\d+)", text)
    if not m:
        sys.exit(f"boot-blocks: no value for {name} in its header")
    return int(m.group(1), 0)


def wake_stubs():
    """isr.asm's stub names for the vectors that end the boot core's halt."""
    stubs = []
    for name, header in VECTOR_SOURCES:
        with open(os.path.join(ROOT, header)) as f:
            stubs.append(f"isr_stub_{vector_value(name, f.read())}")
    return tuple(stubs)


BOOT_WAKE = ("arch_boot_yield_to_aps", "lapic_timer_oneshot") + wake_stubs() + (
    "isr_common", "trap_dispatch", "nudged", "lapic_eoi", "trap_switch_hook")
PSEUDO = ("trampoline", "low", "?")     # namer's names for what is not the image's code
# Where the check-in path goes in the list: right before the boot core's
# first function after its STARTUP (kmain hands over to it).
AFTER_STARTUP = "boot_after_startup"
# The first function the boot runs after its wait for the check-ins; --check
# wants all that runs before it placed before it.
CHECK_END = "console_init"
# GCC's clones keep the section of their origin's name
CLONE_RE = re.compile(r"\.(constprop|isra|part|cold)(\.\d+)?$")
ORDER_HEADER = """\
# The C functions the boot runs, from kernel entry to the main goroutine,
# in the order QEMU first translated them (8 vCPUs, app=hello), with the
# APs' check-in path and the boot core's yield and wake
# (tools/bench/boot_blocks.py's AP_CHECK_IN, BOOT_WAKE) moved up to right
# after the boot core's last function before the STARTUP. The linker places
# them first, in this order (linker.ld, the Makefile's text_order.ld), so
# that the boot's code lies on few pages: under TCG every page that gets
# its first translated block costs a walk of every vCPU's TLB
# (docs/boot.md).
# A name missing here, or one no longer in the code, only moves code.
# Regenerate with: python3 tools/bench/boot_blocks.py --order boot/text_order.txt build/goro.elf
"""


def symbols(elf):
    """(address, name) of every text symbol, sorted."""
    out = subprocess.run(["nm", "-n", elf], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            syms.append((int(f[0], 16), f[2]))
    return syms


def namer(syms):
    addrs = [a for a, _ in syms]

    def name(addr):
        if addr < 0x100000:
            return "trampoline" if TRAMPOLINE[0] <= addr < TRAMPOLINE[1] else "low"
        i = bisect.bisect_right(addrs, addr) - 1
        return syms[i][1] if i >= 0 else "?"
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("elf")
    ap.add_argument("--smp", type=int, default=8)
    ap.add_argument("--append", default="app=hello")
    ap.add_argument("--at", default=LANDMARKS, help="comma-separated functions (default: the boot's landmarks)")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--order", metavar="FILE", help="write the boot's C functions in first-run order to FILE")
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 if a function run before {CHECK_END} lies after it in the image")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="goro-blocks-") as d:
        log = os.path.join(d, "in_asm.log")
        cmd = qemu.argv(opts.smp, "512M", serial="null", extra=["-net", "none", "-d", "in_asm", "-D", log])
        status, _, _, _ = qemu.run(cmd + qemu.kernel_boot(opts.elf, opts.append), opts.timeout)
        if status != qemu.EXIT_OK:
            print(f"boot-blocks: QEMU exit {status}: {qemu.describe_status(status)}", file=sys.stderr)
        with open(log, errors="replace") as f:
            blocks = [int(m.group(1), 16) for m in BLOCK_RE.finditer(f.read())]
    syms = symbols(opts.elf)
    name = namer(syms)
    names = [name(a) for a in blocks]
    start = next((i for i, n in enumerate(names) if n in ("_start", "boot_efi64")), None)
    if start is None:
        sys.exit("boot-blocks: no block of _start or boot_efi64 in the log")
    names = names[start:]
    first, per = {}, collections.Counter(names)
    for i, n in enumerate(names):
        first.setdefault(n, i)
    print(f"{len(names)} blocks translated from kernel entry ({opts.smp} vCPUs, {opts.append})")
    for f in opts.at.split(","):
        print(f"  {f:20} first at block {first.get(f, '-')}")
    for n, c in per.most_common(opts.top):
        print(f"  {c:5} blocks in {n}")
    if opts.order:
        write_order(opts.order, names)
    if opts.check:
        far = misplaced(names, syms)
        if far is None:
            sys.exit(f"boot-blocks: no block of {CHECK_END} in the log: the boot did not get that far")
        if far:
            print(f"boot-blocks: run before {CHECK_END} but linked after it, or on the APs' check-in or the "
                  f"boot core's yield and wake but linked after {AFTER_STARTUP}: {' '.join(far)} "
                  f"(regenerate boot/text_order.txt: python3 tools/bench/boot_blocks.py --order boot/text_order.txt ELF)")
            sys.exit(1)
        late = pages_first_run_late(blocks[start:], names, syms)
        if late:
            print(f"boot-blocks: the APs' check-in or the boot core's yield and wake lie on "
                  f"{', '.join(hex(p) for p in late)}, no block of which ran before the APs started: "
                  f"the first to run there walks every vCPU's TLB while they come up")
            sys.exit(1)
        print(f"boot-blocks: every function run before {CHECK_END} is linked before it, and the APs' "
              f"check-in and the boot core's yield and wake lie on pages run before the STARTUP")


def pages_first_run_late(blocks, names, syms):
    """The pages holding code of AP_CHECK_IN or BOOT_WAKE on which no block
    was translated before the APs started, as addresses, sorted. The first
    block of ap_entry or of AFTER_STARTUP, whichever came first, marks the
    STARTUP (the boot core runs nothing new between the two). A function
    spans from its symbol to the next.

    >>> syms = [(0x100000, "_start"), (0x100f00, "ap_entry"), (0x101100, "boot_after_startup"),
    ...         (0x101200, "nudged"), (0x101210, "lapic_eoi"), (0x102100, "late")]
    >>> blocks = [0x100000, 0x100f00, 0x101100, 0x101200]
    >>> [hex(p) for p in pages_first_run_late(blocks, ["_start", "ap_entry", "boot_after_startup", "nudged"], syms)]
    ['0x101000', '0x102000']
    >>> [hex(p) for p in pages_first_run_late([0x100000, 0x102010] + blocks[1:], ["_start", "late"] + ["ap_entry"] * 3, syms)]
    ['0x101000']
    """
    cut = next((i for i, n in enumerate(names) if n in ("ap_entry", AFTER_STARTUP)), len(names))
    run = {a >> 12 for a in blocks[:cut]}
    pages = set()
    for i, (a, n) in enumerate(syms):
        if n in AP_CHECK_IN + BOOT_WAKE:
            end = syms[i + 1][0] if i + 1 < len(syms) else a + 1
            pages.update(range(a >> 12, ((end - 1) >> 12) + 1))
    return sorted(p << 12 for p in pages - run)


def misplaced(names, syms):
    """The functions first run before CHECK_END that lie past it in the
    image, in first-run order, then those of AP_CHECK_IN and BOOT_WAKE that
    lie past AFTER_STARTUP, whether or not the logged boot ran them (which
    AP nudges the boot core varies); None if CHECK_END never ran.

    >>> syms = [(0x100000, "_start"), (0x100100, "kmain"), (0x100800, "boot_after_startup"),
    ...         (0x101000, "console_init"), (0x10e000, "late")]
    >>> misplaced(["_start", "trampoline", "kmain", "late", "kmain", "console_init", "late"], syms)
    ['late']
    >>> misplaced(["_start", "kmain", "console_init"], syms + [(0x10f000, "trampoline")])
    []
    >>> misplaced(["_start", "kmain", "console_init"], syms + [(0x100200, "isr_stub_240"), (0x100c00, "isr_stub_244")])
    ['isr_stub_244']
    >>> misplaced(["_start", "kmain"], syms) is None
    True
    """
    if CHECK_END not in names:
        return None
    addr = {n: a for a, n in syms}
    far = []
    bounds = [(n, CHECK_END) for n in names[:names.index(CHECK_END)]]
    bounds += [(n, AFTER_STARTUP) for n in AP_CHECK_IN + BOOT_WAKE]
    for n, bound in bounds:
        if n not in PSEUDO and n in addr and addr[n] > addr[bound] and n not in far:
            far.append(n)
    return far


def write_order(path, names):
    """The C functions among names, up to the main goroutine, first run first;
    the APs' check-in path and then the boot core's yield and wake moved up
    to where the boot core starts the APs: before AFTER_STARTUP's first
    block or the first AP's, whichever came first. Both mark the same place
    (the boot core runs nothing new between its STARTUP and AFTER_STARTUP),
    but at 64 vCPUs the first AP comes after AFTER_STARTUP's first block,
    at 8 usually before. Without either (no STARTUP logged), the yield and
    wake go right before CHECK_END."""
    end = names.index("main_goroutine") if "main_goroutine" in names else len(names)
    order = []
    startup = None          # functions first run before the STARTUP
    for n in names[:end]:
        if n in ("trampoline", AFTER_STARTUP) and startup is None:
            startup = len(order)
        n = CLONE_RE.sub("", n)
        if "." not in n and n not in PSEUDO and n not in order:
            order.append(n)     # a name with a dot left is an assembly label (_start.pdpt)
    if startup is not None:
        late = [n for n in AP_CHECK_IN if n in order[startup:]]
        late += [n for n in BOOT_WAKE if n not in order[:startup]]
        order = order[:startup] + late + [n for n in order[startup:] if n not in late]
    elif CHECK_END in order:
        rest = [n for n in order if n not in BOOT_WAKE]
        at = rest.index(CHECK_END)
        order = rest[:at] + list(BOOT_WAKE) + rest[at:]
    with open(path, "w") as f:
        f.write(ORDER_HEADER + "".join(n + "\n" for n in order))
    print(f"{len(order)} functions in first-run order to {path}")


if __name__ == "__main__":
    main()
