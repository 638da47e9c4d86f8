#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""goro's CPU profile (profile=HZ) -> pprof's profile.proto and folded stacks.

goro prints, when profiling stops (kernel/profile.c):

    PROFILE begin cores=2 hz=1000 period_ns=999999 duration_ns=346916717 samples=220 weight=635 dropped=0 unsampled=1
    PROFILE <core> <go|g0|irq|idle> <goroutine id> <weight> <word at rsp> <rip> <return address>...
    PROFILE end

A sample's weight is the number of sampling periods it stands for (more
than one when interrupts were off as it fell due). `profile2pprof.py serial.log
--elf build/goro.elf -o cpu.pb.gz --folded cpu.folded` writes

  - a gzipped profile.proto (encoded here: no protobuf package needed),
    symbolized with binutils' addr2line (inlined frames included), that
    `go tool pprof` opens (-top, -list, -http): sample values samples/count
    and cpu/nanoseconds, labels core, kind and goroutine;
  - folded stacks ("root;...;leaf count") for flame graphs.

Each stack's root is a pseudo-frame naming what the core was running:
[goroutine], [g0], [interrupt] or [idle].

GCC gives no frame to a leaf that needs no stack, so the frame-pointer walk
from inside such a function skips its caller; the word at RSP is then the
caller's return address. The tool reads the function's code (objdump) and
inserts that word only where it must be the return address: at a
function's first instruction, at a `ret`, or anywhere in a function that
never moves RSP.

Python 3 standard library and binutils only.
"""
import argparse
import bisect
import collections
import gzip
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.trace.varint import varint as wire_varint  # noqa: E402

BEGIN_RE = re.compile(r"^PROFILE begin cores=(\d+) hz=(\d+) period_ns=(\d+) duration_ns=(\d+) "
                      r"samples=(\d+) weight=(\d+) dropped=(\d+) unsampled=(\d+)\s*$")
SAMPLE_RE = re.compile(r"^PROFILE (\d+) (go|g0|irq|idle) (\d+) (\d+) ([0-9a-f]+)"
                       r"((?: [0-9a-f]+)+)\s*$")
ROOTS = {"go": "[goroutine]", "g0": "[g0]", "irq": "[interrupt]", "idle": "[idle]"}


class ProfileError(Exception):
    pass


def parse(lines):
    """(header dict, [sample dict]) from a serial log; ProfileError names what is wrong."""
    header, samples, ended = None, [], False
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.startswith("PROFILE "):
            continue
        m = BEGIN_RE.match(line)
        if m:
            if header and not ended:
                raise ProfileError(f"line {n}: 'PROFILE begin' inside a profile")
            header = dict(zip(("cores", "hz", "period_ns", "duration_ns", "samples", "weight",
                               "dropped", "unsampled"), map(int, m.groups())))
            samples, ended = [], False       # a later run replaces an earlier one
            continue
        if line.strip() == "PROFILE end":
            if header is None:
                raise ProfileError(f"line {n}: 'PROFILE end' before 'PROFILE begin'")
            ended = True
            continue
        if header is None or ended:
            raise ProfileError(f"line {n}: sample outside 'PROFILE begin' .. 'PROFILE end'")
        m = SAMPLE_RE.match(line)
        if not m:
            raise ProfileError(f"line {n}: malformed: {line!r}")
        samples.append({"core": int(m.group(1)), "kind": m.group(2), "g": int(m.group(3)),
                        "weight": int(m.group(4)), "atsp": int(m.group(5), 16),
                        "pcs": [int(x, 16) for x in m.group(6).split()]})
    if header is None:
        raise ProfileError("no 'PROFILE begin' line (was profile=HZ given?)")
    if not ended:
        raise ProfileError("no 'PROFILE end' line (the log is cut short)")
    if len(samples) != header["samples"]:
        raise ProfileError(f"{len(samples)} samples, the header says {header['samples']}")
    if sum(s["weight"] for s in samples) != header["weight"]:
        raise ProfileError("the samples' weights do not add up to the header's")
    return header, samples


# ---- the ELF: functions, their code, symbols ------------------------------------

def functions(path):
    """[(start, end, name)] of the ELF's sized functions, sorted (binutils' nm)."""
    out = subprocess.run(["nm", "-S", "-n", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    funcs = []
    for l in out.splitlines():
        parts = l.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            start, size = int(parts[0], 16), int(parts[1], 16)
            if size:
                funcs.append((start, start + size, parts[3]))
    return sorted(funcs)


class Elf:
    def __init__(self, path):
        self.path = path
        self.funcs = []                     # (start, end, name), sorted
        self.starts = []
        self.insns = {}                     # address -> mnemonic text, for the leaf rule
        self.moves_rsp = set()              # starts of functions that push or move rsp
        self.text = (0, 0, 0)               # vaddr, end, file offset of the executable segment
        self._lines = {}
        self._load_functions()
        self._load_code()
        self._load_segment()

    def _load_functions(self):
        self.funcs = functions(self.path)
        self.starts = [f[0] for f in self.funcs]

    def func(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i >= 0 and self.funcs[i][0] <= addr < self.funcs[i][1]:
            return self.funcs[i]
        return None

    def _load_code(self):
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", self.path], check=True,
                             capture_output=True, text=True).stdout
        cur = None
        insn_re = re.compile(r"^\s*([0-9a-f]+):\s+(\S.*)$")
        for l in out.splitlines():
            m = insn_re.match(l)
            if not m:
                continue
            addr, text = int(m.group(1), 16), m.group(2).strip()
            self.insns[addr] = text
            f = self.func(addr)
            if f is None:
                continue
            if f[0] != cur:
                cur = f[0]
            if text.startswith(("push", "call", "enter")) or re.search(r",%rsp$", text):
                self.moves_rsp.add(f[0])

    def _load_segment(self):
        out = subprocess.run(["readelf", "-lW", self.path], check=True, capture_output=True,
                             text=True).stdout
        for l in out.splitlines():
            parts = l.split()
            if parts[:1] == ["LOAD"] and "E" in "".join(parts[6:-1]):
                off, vaddr, memsz = int(parts[1], 16), int(parts[2], 16), int(parts[5], 16)
                self.text = (vaddr, vaddr + memsz, off)
                return
        if self.funcs:
            self.text = (self.funcs[0][0], self.funcs[-1][1], 0)

    def leaf_return(self, rip, atsp):
        """The caller's return address a frame-pointer walk from rip skips, or None."""
        f = self.func(rip)
        if f is None or not atsp or self.func(atsp) is None:
            return None
        if rip == f[0] or self.insns.get(rip, "").startswith("ret") or f[0] not in self.moves_rsp:
            return atsp
        return None

    def symbolize(self, addrs):
        """addr -> [(function, file, line)], innermost first; addrs already adjusted."""
        todo = sorted(a for a in set(addrs) if a not in self._lines)
        if todo:
            out = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", self.path] +
                                 [hex(a) for a in todo], check=True, capture_output=True,
                                 text=True).stdout.splitlines()
            cur = None
            i = 0
            while i < len(out):
                l = out[i]
                if l.startswith("0x") and re.fullmatch(r"0x[0-9a-f]+", l):
                    cur = int(l, 16)
                    self._lines[cur] = []
                    i += 1
                    continue
                fn = l
                fl = out[i + 1] if i + 1 < len(out) else "??:0"
                i += 2
                path, _, num = fl.rpartition(":")
                num = re.match(r"\d*", num).group(0)
                self._lines[cur].append((fn, path if path != "??" else "",
                                         int(num) if num else 0))
        res = {}
        for a in addrs:
            frames = [(fn, p, ln) for fn, p, ln in self._lines.get(a, []) if fn != "??"]
            if not frames:
                f = self.func(a)
                frames = [(f[2] if f else f"0x{a:x}", "", 0)]
            res[a] = frames
        return res


# ---- stacks -------------------------------------------------------------------

def stacks(samples, elf, drop_idle=False):
    """[(kind, [pc leaf first], [is_return], sample)] with the leaf rule applied."""
    res = []
    for s in samples:
        if drop_idle and s["kind"] == "idle":
            continue
        pcs = list(s["pcs"])
        if s["kind"] != "irq":
            extra = elf.leaf_return(pcs[0], s["atsp"])
            if extra is not None and (len(pcs) < 2 or pcs[1] != extra):
                pcs.insert(1, extra)
        res.append((s["kind"], pcs, s))
    return res


def folded(header, samples, elf, drop_idle=False):
    """Folded stacks: 'root;caller;...;leaf weight', heaviest first."""
    st = stacks(samples, elf, drop_idle)
    sym = elf.symbolize([pc if i == 0 else pc - 1 for _, pcs, _ in st for i, pc in enumerate(pcs)])
    count = collections.Counter()
    for kind, pcs, s in st:
        names = []
        for i, pc in enumerate(pcs):
            frames = sym[pc if i == 0 else pc - 1]
            names += [fn for fn, _, _ in frames]       # innermost first
        count[";".join([ROOTS[kind]] + names[::-1])] += s["weight"]
    return [f"{k} {v}" for k, v in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))]


# ---- profile.proto ------------------------------------------------------------

def varint(n):
    """protobuf's: a negative int64 wraps to 64 bits (tools/trace/varint.py)."""
    return wire_varint(n, wrap_negative=True)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def field_packed(num, values):
    return field_bytes(num, b"".join(varint(v) for v in values))


class Strings:
    def __init__(self):
        self.table, self.index = [""], {"": 0}

    def __call__(self, s):
        if s not in self.index:
            self.index[s] = len(self.table)
            self.table.append(s)
        return self.index[s]


def pprof(header, samples, elf, drop_idle=False):
    """The profile.proto message (not yet gzipped)."""
    strs = Strings()
    out = bytearray()

    def value_type(t, unit):
        return field_varint(1, strs(t)) + field_varint(2, strs(unit))

    out += field_bytes(1, value_type("samples", "count"))
    out += field_bytes(1, value_type("cpu", "nanoseconds"))
    st = stacks(samples, elf, drop_idle)
    keys = {(pc, i > 0) for _, pcs, _ in st for i, pc in enumerate(pcs)}
    sym = elf.symbolize([pc - 1 if ret else pc for pc, ret in keys])
    functions, locations = {}, {}
    func_msgs, loc_msgs = bytearray(), bytearray()

    def function_id(name, path):
        if (name, path) not in functions:
            fid = len(functions) + 1
            functions[(name, path)] = fid
            func_msgs.extend(field_bytes(5, field_varint(1, fid) + field_varint(2, strs(name)) +
                                         field_varint(3, strs(name)) + field_varint(4, strs(path))))
        return functions[(name, path)]

    def location_id(key, frames, address=0):
        if key not in locations:
            lid = len(locations) + 1
            locations[key] = lid
            msg = field_varint(1, lid)
            if address:
                msg += field_varint(2, 1) + field_varint(3, address)
            for fn, path, line in frames:       # innermost first, as profile.proto's Line
                msg += field_bytes(4, field_varint(1, function_id(fn, path)) +
                                   field_varint(2, line))
            loc_msgs.extend(field_bytes(4, msg))
        return locations[key]

    period = header["period_ns"]
    for kind, pcs, s in st:
        ids = [location_id((pc, i > 0), sym[pc - 1 if i > 0 else pc], pc)
               for i, pc in enumerate(pcs)]
        ids.append(location_id(("root", kind), [(ROOTS[kind], "", 0)]))
        msg = field_packed(1, ids) + field_packed(2, [s["weight"], s["weight"] * period])
        for k, v in (("core", s["core"]), ("goroutine", s["g"])):
            msg += field_bytes(3, field_varint(1, strs(k)) + field_varint(3, v))
        msg += field_bytes(3, field_varint(1, strs("kind")) + field_varint(2, strs(kind)))
        out += field_bytes(2, msg)
    lo, hi, off = elf.text
    out += field_bytes(3, field_varint(1, 1) + field_varint(2, lo) + field_varint(3, hi) +
                       field_varint(4, off) + field_varint(5, strs("goro.elf")) +
                       field_varint(7, 1) + field_varint(8, 1) + field_varint(9, 1) +
                       field_varint(10, 1))
    out += loc_msgs
    out += func_msgs
    pre = bytearray()
    for s in strs.table:
        pre += field_bytes(6, s.encode())
    tail = field_varint(10, header["duration_ns"])
    tail += field_bytes(11, value_type("cpu", "nanoseconds"))
    tail += field_varint(12, period)
    # the string table must hold every string referenced above: encode it last
    return bytes(out + pre + tail)


# ---- the test (tests/matrix.py) ------------------------------------------------

BUSY_RE = re.compile(r"^cpuburn: (\d+) workers .* busy_us=(\d+)")


def check_cpuburn(lines, elf_path, outdir, hot="cpuburn_hot", tolerance=0.10):
    """A profiled app=cpuburn boot: the profile parses, `go tool pprof -top`
    lists the hot function first, the samples under the workers stand for
    hz x their busy time (the workers measure it) and all of them for hz x
    the profile's duration x cores, within tolerance.
    Returns problems, [] when fine."""
    try:
        header, samples = parse(lines)
    except ProfileError as e:
        return [f"profile: {e}"]
    busy = [BUSY_RE.match(l) for l in lines]
    busy = [m for m in busy if m]
    if not busy:
        return ["profile: no 'cpuburn: ... busy_us=' line"]
    problems = []
    if header["dropped"]:
        problems.append(f"profile: {header['dropped']} samples dropped")
    elf = Elf(elf_path)
    os.makedirs(outdir, exist_ok=True)
    pb = os.path.join(outdir, "cpu.pb.gz")
    with gzip.open(pb, "wb") as out:
        out.write(pprof(header, samples, elf))
    top = subprocess.run(["go", "tool", "pprof", "-top", elf_path, pb], capture_output=True,
                         text=True)
    rows = [l.split() for l in top.stdout.splitlines()]
    rows = [r for r in rows if len(r) >= 6 and r[1].endswith("%") and r[0] != "flat"]
    if top.returncode or not rows:
        problems.append(f"profile: go tool pprof -top failed: {top.stderr.strip()[:200]}")
    elif rows[0][5] != hot:
        problems.append(f"profile: pprof -top lists {rows[0][5]} first, not {hot}")
    hz = header["hz"]
    in_workers = sum(s["weight"] for _, pcs, s in stacks(samples, elf)
                     if any((f := elf.func(pc)) and f[2] == "cpuburn_worker" for pc in pcs))
    # The periods due at the stop whose interrupt had not come yet
    # (header's unsampled: a loaded host delays a core's timer interrupts
    # by tens of ms, and the last delay has no sample to carry its
    # weight) may be missing from the workers' share, never added to it.
    tail = header["unsampled"]
    want = hz * int(busy[-1].group(2)) / 1e6
    if not want - tail - tolerance * want <= in_workers <= want + tolerance * want:
        problems.append(f"profile: the workers' samples stand for {in_workers} periods, "
                        f"want {want:.0f} (hz x busy time) within {tolerance:.0%}"
                        + (f", less at most {tail} unsampled at the stop" if tail else ""))
    # every core, busy or idle, stands for hz x the profile's duration
    total = hz * header["duration_ns"] / 1e9 * header["cores"]
    if abs(header["weight"] + tail - total) > tolerance * total:
        problems.append(f"profile: the samples stand for {header['weight']} periods and {tail} were "
                        f"unsampled at the stop, want {total:.0f} (hz x duration x cores) within {tolerance:.0%}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="serial log holding PROFILE lines ('-': stdin)")
    ap.add_argument("--elf", default="build/goro.elf", help="the kernel image the log came from")
    ap.add_argument("-o", "--output", help="gzipped profile.proto to write")
    ap.add_argument("--folded", help="folded stacks to write")
    ap.add_argument("--drop-idle", action="store_true", help="leave the idle samples out")
    args = ap.parse_args()
    f = sys.stdin if args.log == "-" else open(args.log, errors="replace")
    with f:
        try:
            header, samples = parse(f)
        except ProfileError as e:
            sys.exit(f"profile2pprof.py: {args.log}: {e}")
    elf = Elf(args.elf)
    if args.output:
        with gzip.open(args.output, "wb") as out:
            out.write(pprof(header, samples, elf, args.drop_idle))
    if args.folded:
        with open(args.folded, "w") as out:
            out.write("\n".join(folded(header, samples, elf, args.drop_idle)) + "\n")
    kinds = collections.Counter()
    for s in samples:
        kinds[s["kind"]] += s["weight"]
    print(f"profile: {header['samples']} samples standing for {header['weight']} periods "
          f"of {header['period_ns']} ns over {header['duration_ns'] / 1e9:.3f} s on "
          f"{header['cores']} cores ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), "
          f"{header['dropped']} dropped")


if __name__ == "__main__":
    main()
