# SPDX-License-Identifier: MIT
"""Where a hung guest is: asked of QEMU's monitor just before the runner
kills it. For every vCPU, its RIP and a frame-pointer walk of its stack
(goro keeps frame pointers), named with goro.elf's symbols. The guest is
identity-mapped at 1 MiB however it booted, so the ELF's addresses hold
for the ISO and UEFI boots too.

And where QEMU is (qemu_side): each of its threads' state on the host,
and a gdb backtrace of them where gdb is installed. A QEMU that stays
after the guest asked it to exit answers no monitor; only this says
which of its threads waits for what."""

import bisect
import collections
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.run import qemu  # noqa: E402

CPU_RE = re.compile(r"^CPU#(\d+)", re.M)
REG_RE = re.compile(r"\b(RIP|RBP|RSP)=([0-9a-f]{16})")
HLT_RE = re.compile(r"\bHLT=(\d)")
WORDS_RE = re.compile(r"^[0-9a-f]{16}: 0x([0-9a-f]{16}) 0x([0-9a-f]{16})", re.M)
MAX_FRAMES = 12
NMI_WAIT_S = 3       # the dump is a few KiB of serial output: TCG prints it in well under a second


class Symbols:
    def __init__(self, elf):
        self.addrs, self.names = [], []
        try:
            out = subprocess.run(["nm", "-n", elf], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                self.addrs.append(int(parts[0], 16))
                self.names.append(parts[2])

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0 or addr - self.addrs[i] > 0x10000:
            return f"0x{addr:x}"
        return f"{self.names[i]}+0x{addr - self.addrs[i]:x}"


def dump(mon_path, elf, out_path):
    """Writes the dump to out_path; returns one line per vCPU ('' if QEMU
    did not answer)."""
    syms = Symbols(elf)
    with qemu.Monitor(mon_path, timeout=5) as mon:
        mon.command("stop")                 # a still picture for the walk
        regs = mon.command("info registers -a")
        if not CPU_RE.search(regs):
            # Its main loop does not run: stuck in QEMU itself (qemu_side says where).
            with open(out_path, "w") as f:
                f.write(regs)
            return ["QEMU's monitor did not answer: QEMU itself is stuck, not the guest"]
        lines = [f"vCPU {n}{' (halted)' if halted else ''}: " + " <- ".join(walk(mon, syms, n, r))
                 for n, r, halted in vcpus(regs)]
        # Then the kernel's own account (arch/trap.c, outside_nmi): every
        # core's place and the scheduler's state, Ps, Ms and every
        # goroutine, written to the serial log before the guest stops.
        mon.command("cont")
        mon.command("nmi")
        time.sleep(NMI_WAIT_S)
        lines.append("the kernel's NMI dump (each core, the scheduler, every goroutine) is at the end of the serial log")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n\n" + regs)
    return lines


def qemu_side(pid, out_path, gdb_timeout=60):
    """Writes QEMU's threads (process pid) to out_path: one line each,
    then gdb's `thread apply all bt` where gdb is installed. Returns a
    few lines that say the same in short: threads alike (a vCPU thread
    each, at hundreds of vCPUs) are one line with their count."""
    threads = [thread_state(pid, tid) for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int)]
    threads = [t for t in threads if t]
    alike = collections.Counter(re.sub(r"^CPU \d+/", "CPU N/", t["name"]) + f": {t['state']} in {t['wchan']}"
                                for t in threads)
    lines = [f"QEMU thread{'s' if n > 1 else ''} {what}" + (f" (x{n})" if n > 1 else "")
             for what, n in alike.most_common(6)]
    text = "\n".join(f"{t['tid']} {t['name']}: {t['state']} in {t['wchan']}, cpu {t['cpu']:.2f}s, "
                     f"waited for a host CPU {t['wait']:.2f}s" for t in threads)
    if shutil.which("gdb"):
        try:
            bt = subprocess.run(["gdb", "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt"],
                                capture_output=True, text=True, timeout=gdb_timeout).stdout
        except subprocess.TimeoutExpired:
            bt = f"gdb: no backtrace within {gdb_timeout}s"
        text += "\n\n" + bt
    else:
        text += "\n\n(no gdb here: no backtrace of QEMU)"
    with open(out_path, "w") as f:
        f.write(text + "\n")
    return lines


def thread_state(pid, tid):
    """{tid, name, state, wchan, cpu, wait} of one thread from /proc; None
    once it is gone. state is the kernel's letter (R runs or waits for a
    CPU, S sleeps, D waits for I/O); wchan the kernel function it sleeps
    in (futex_wait... for a lock or condition variable, do_sys_poll for
    the main loop's poll)."""
    d = f"/proc/{pid}/task/{tid}"
    try:
        with open(f"{d}/comm") as f:
            name = f.read().strip()
        with open(f"{d}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        try:
            with open(f"{d}/wchan") as f:
                wchan = f.read().strip() or "-"
        except OSError:
            wchan = "?"
        wait = qemu.cpu_waits(pid).get(tid, 0.0)
    except (OSError, IndexError):
        return None
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return {"tid": tid, "name": name, "state": fields[0], "wchan": "-" if wchan == "0" else wchan,
            "cpu": cpu, "wait": wait}


def vcpus(regs):
    """(index, {RIP, RBP, RSP}, halted) of each vCPU in `info registers -a`."""
    cpus = []
    chunks = CPU_RE.split(regs)[1:]
    for k in range(0, len(chunks) - 1, 2):
        r = dict(REG_RE.findall(chunks[k + 1]))
        hlt = HLT_RE.search(chunks[k + 1])
        cpus.append((int(chunks[k]), r, bool(hlt and hlt.group(1) == "1")))
    return cpus


def walk(mon, syms, n, r):
    """vCPU n's RIP and return addresses up its frame-pointer chain, named."""
    rip, rbp = int(r.get("RIP", "0"), 16), int(r.get("RBP", "0"), 16)
    frames = [syms.name(rip)]
    mon.command(f"cpu {n}")
    for _ in range(MAX_FRAMES):
        if not rbp or rbp & 7:
            break
        m = WORDS_RE.search(mon.command(f"x /2gx 0x{rbp:x}"))
        if not m:
            break
        rbp, ret = int(m.group(1), 16), int(m.group(2), 16)
        if not ret:
            break
        frames.append(syms.name(ret))
    return frames
