#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed inputs of the fuzz harnesses into tests/fuzz/corpus/NAME/
(seed-*; the fuzzer's own finds and the crash regressions sit beside them):

  acpi, acpi_numa   the QEMU dumps of tests/data/acpi, laid out as
                    tests/fuzz/acpi_image.h says (flags byte, then a memory
                    image with the RSDP at 0 and the tables packed after it;
                    the DSDT and FACS, which no parser reads, left out)
  multiboot1/2      what QEMU's -kernel and GRUB hand over
  uefi_mmap         an OVMF-like memory map, and a loader's boot_info
  efi_elf           build/goro.elf's headers and first segment bytes, cut to
                    a few hundred bytes (a synthetic image without it)
  efi_cmdline       an EFI shell's load options and a goro.cmdline file
  cmdline           command lines from the docs and tests
  keys              what the shell tests type: serial bytes with VT100
                    sequences, and PS/2 set-1 scancodes
  http              requests as curl and wrk send them, pipelined, chunked,
                    and the malformed ones of tests/host/test_http_parse.c
  memcache          tests/data/memcached/*.in: protocol cases and bytes
                    memcslap and memcaslap sent
  pci               the QEMU dumps of tests/data/pci, laid out as
                    tests/fuzz/fuzz_pci.c says (each BAR's write mask from
                    Linux's resource lines), through ports and through ECAM
  netrx             frames from a host at 10.0.0.1 to the harness's net0
                    (tests/fuzz/fuzz_netrx.c's records): ARP, a ping, UDP
                    echo, a whole TCP connection (its acknowledgements
                    computed from the harness's sequence numbers), fragments,
                    a DHCP offer to net1

Run from the top of the tree: python3 tests/fuzz/mkcorpus.py

Python 3 standard library only.
"""

import glob
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")

FIX_SUMS, RSDP_V1, SCAN, NO_WARN = 1, 2, 4, 0x40
LOOKUP_SHIFT = 3


def write(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"seed-{name}"), "wb") as f:
        f.write(data)


def write_regress(harness, name, data):
    """An input that once hung or crashed a parser: kept in the corpus for
    good (fuzzrun.py --merge --install never drops a regress-* file)."""
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"regress-{name}"), "wb") as f:
        f.write(data)


# ---- ACPI ------------------------------------------------------------------------

def load_dump(path):
    """{(sig, phys): bytearray} from ACPIDUMP lines."""
    regions = {}
    for line in open(path):
        w = line.split()
        if len(w) != 5 or w[0] != "ACPIDUMP":
            continue
        key = (w[1], int(w[2], 16))
        regions.setdefault(key, bytearray()).extend(bytes.fromhex(w[4]))
    return regions


def checksum(b, off, length, at):
    b[off + at] = 0
    b[off + at] = (-sum(b[off:off + length])) & 0xff


def acpi_image(regions, rsdp_at=0, scan=False):
    """The memory image: RSDP at rsdp_at (36 bytes kept free), then the root
    tables and every table they list, each 16-byte aligned, with the
    addresses rewritten and every checksum made good."""
    by_phys = {phys: (sig, data) for (sig, phys), data in regions.items()}
    rsdp = next(bytearray(d) for (s, _), d in regions.items() if s == "RSDP")
    rsdp = rsdp + bytearray(36 - len(rsdp))
    rev = rsdp[15]
    roots = [("RSDT", struct.unpack_from("<I", rsdp, 16)[0], 4)]
    if rev >= 2:
        roots.append(("XSDT", struct.unpack_from("<Q", rsdp, 24)[0], 8))
    img = bytearray(rsdp_at + 48)
    placed = {}                 # old phys -> new offset

    def place(phys):
        if phys in placed:
            return placed[phys]
        sig, data = by_phys[phys]
        off = (len(img) + 15) & ~15
        img.extend(bytearray(off - len(img)))
        img.extend(data)
        placed[phys] = off
        return off

    for _, phys, _ in roots:
        if phys in by_phys:
            place(phys)
    for _, phys, esize in roots:
        if phys not in by_phys:
            continue
        root = placed[phys]
        length = struct.unpack_from("<I", img, root + 4)[0]
        fmt = "<I" if esize == 4 else "<Q"
        for e in range(36, length, esize):
            target = struct.unpack_from(fmt, img, root + e)[0]
            new = place(target) if target in by_phys else 0
            struct.pack_into(fmt, img, root + e, new)
    for old, off in placed.items():
        sig, data = by_phys[old]
        checksum(img, off, len(data), 9)
    # The roots last: they hold the others' addresses.
    for _, phys, _ in roots:
        if phys in placed:
            checksum(img, placed[phys], len(by_phys[phys][1]), 9)
    img[rsdp_at:rsdp_at + 36] = rsdp
    struct.pack_into("<I", img, rsdp_at + 16, placed.get(roots[0][1], 0))
    if rev >= 2:
        struct.pack_into("<Q", img, rsdp_at + 24, placed.get(roots[1][1], 0))
    checksum(img, rsdp_at, 20, 8)
    if rev >= 2:
        checksum(img, rsdp_at, 36, 32)
    if scan:
        struct.pack_into("<H", img, 0x40e, rsdp_at >> 4)    # the BDA's EBDA segment
    return img


def sdt(sig, body, rev=1):
    """An ACPI table: the 36-byte header (checksum left to acpi_image), then body."""
    return bytearray(struct.pack("<4sIBB6s8sI4sI", sig.encode(), 36 + len(body), rev, 0,
                                 b"GORO  ", b"FUZZLIMS", 1, b"GORO", 1) + body)


def limits_regions(base):
    """A machine past every capacity the parsers have: 260 processors (200
    xAPIC, 60 x2APIC), 10 IOAPICs, 18 overrides, SRAT entries for all of
    them and 70 memory ranges in 20 domains, and a 20x20 SLIT."""
    madt = struct.pack("<II", 0xfee00000, 1)
    for i in range(200):
        madt += struct.pack("<BBBBI", 0, 8, i, i, 1)
    for i in range(60):
        madt += struct.pack("<BBHIII", 9, 16, 0, 1000 + i, 1, 200 + i)
    for i in range(10):
        madt += struct.pack("<BBBBII", 1, 12, i, 0, 0xfec00000 + i * 0x1000, i * 24)
    for i in range(18):
        madt += struct.pack("<BBBBIH", 2, 10, 0, i, i + 2, 5)
    madt += struct.pack("<BBHQ", 5, 12, 0, 0xfee00000)
    srat = struct.pack("<I8s", 1, bytes(8))
    for i in range(200):
        srat += struct.pack("<BBBBIB3sI", 0, 16, i % 20, i, 1, 0, bytes(3), 0)
    for i in range(60):
        srat += struct.pack("<BBHIIIII", 2, 24, 0, i % 20, 1000 + i, 1, 0, 0)
    for i in range(70):
        srat += struct.pack("<BBIHQQIIQ", 1, 40, i % 20, 0, i << 24, 1 << 24, 0, 1 | (i % 3) << 1, 0)
    n = 20
    slit = struct.pack("<Q", n) + bytes(10 if a == b else 20 + abs(a - b) for a in range(n) for b in range(n))
    tables = [("APIC", sdt("APIC", madt, 4)), ("SRAT", sdt("SRAT", srat, 3)), ("SLIT", sdt("SLIT", slit))]
    return {(sig, base + 0x10000 * k): t for k, (sig, t) in enumerate(tables)}


def acpi_limits(dump):
    """The FADT and HPET of a real dump, with limits_regions' tables."""
    regions = {k: v for k, v in dump.items() if k[0] in ("FACP", "HPET")}
    regions.update(limits_regions(0x7000000))
    listed = [phys for (sig, phys) in regions]
    rsdt = sdt("RSDT", b"".join(struct.pack("<I", p) for p in listed))
    regions[("RSDT", 0x6000000)] = rsdt
    rsdp = bytearray(struct.pack("<8sB6sBI", b"RSD PTR ", 0, b"GORO  ", 0, 0x6000000))
    regions[("RSDP", 0)] = rsdp
    return regions


def acpi_seeds():
    dumps = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "acpi", "*.txt")))
    for i, path in enumerate(dumps):
        name = os.path.basename(path)[:-4]
        regions = load_dump(path)
        img = acpi_image(regions)
        numa = any(s == "SRAT" for s, _ in regions)
        write("acpi", name, bytes([FIX_SUMS | (i % 8) << LOOKUP_SHIFT]) + img)
        if numa:
            write("acpi_numa", name, bytes([FIX_SUMS]) + img)
        if i == 0:
            write("acpi", name + "-nofix", bytes([NO_WARN]) + img)
            write("acpi", name + "-v1", bytes([RSDP_V1 | FIX_SUMS]) + img)
            write("acpi_numa", name, bytes([FIX_SUMS]) + img)
        if i == 1:
            # The BIOS scan: the RSDP in an EBDA at 0x600 that the BDA names.
            write("acpi", name + "-scan", bytes([SCAN | FIX_SUMS]) + acpi_image(regions, 0x600, True))
            # ... and in the BIOS ROM area: an image too short to hold the BDA.
            write("acpi", name + "-rom", bytes([SCAN | FIX_SUMS]) + acpi_image(regions, 0x10))
            limits = acpi_image(acpi_limits(regions))
            write("acpi", "limits", bytes([FIX_SUMS]) + limits)
            write("acpi_numa", "limits", bytes([FIX_SUMS]) + limits)


# ---- multiboot -------------------------------------------------------------------

QEMU_MMAP = [
    (0x0, 0x9fc00, 1), (0x9fc00, 0x400, 2), (0xf0000, 0x10000, 2),
    (0x100000, 0x1fee0000, 1), (0x1ffe0000, 0x20000, 2), (0xfffc0000, 0x40000, 2),
]


def mb1_seeds():
    cmdline = b"build/goro.elf app=ktest filter=chan seed=7\0"
    mmap = b"".join(struct.pack("<IQQI", 20, b, l, t) for b, l, t in QEMU_MMAP)
    info = bytearray(0x40)
    flags = 1 | 2 | 4 | 0x40
    struct.pack_into("<III", info, 0, flags, 639, 523136)
    struct.pack_into("<I", info, 16, 0x40)
    struct.pack_into("<II", info, 44, len(mmap), 0x40 + len(cmdline))
    write("multiboot1", "qemu", bytes(info) + cmdline + mmap)
    # More entries than boot_info holds.
    many = b"".join(struct.pack("<IQQI", 20, i << 20, 1 << 20, 1 + i % 2) for i in range(130))
    struct.pack_into("<II", info, 44, len(many), 0x40 + len(cmdline))
    write("multiboot1", "full", bytes(info) + cmdline + many)
    # Only mem_lower/mem_upper, no command line.
    info = bytearray(52)
    struct.pack_into("<III", info, 0, 1, 639, 130048)
    write("multiboot1", "meminfo", bytes(info))
    # A map entry of size 0xfffffffc: size + 4 wrapped to 0 in 32 bits and
    # the walk stood still (a hang at boot, fixed in boot/multiboot.c).
    info = bytearray(0x40)
    struct.pack_into("<I", info, 0, 0x40)
    bad = struct.pack("<IQQI", 0xfffffffc, 0, 0x9fc00, 1) + struct.pack("<IQQI", 20, 0x100000, 1 << 20, 1)
    struct.pack_into("<II", info, 44, len(bad), 0x40)
    write_regress("multiboot1", "mmap-size-wraps", bytes(info) + bad)


def mb2_tag(t, payload):
    body = struct.pack("<II", t, 8 + len(payload)) + payload
    return body + bytes((-len(body)) % 8)


def mb2_seeds(rsdp_v1, rsdp_v2):
    tags = [
        mb2_tag(1, b"/boot/goro.elf app=hello gomaxprocs=2\0"),
        mb2_tag(2, b"GRUB 2.06\0"),
        mb2_tag(4, struct.pack("<II", 639, 523136)),
        mb2_tag(5, struct.pack("<III", 0xe0, 0xffffffff, 0xffffffff)),
        mb2_tag(6, struct.pack("<II", 24, 0) +
                b"".join(struct.pack("<QQII", b, l, t, 0) for b, l, t in QEMU_MMAP)),
        mb2_tag(8, struct.pack("<QIIIBBH", 0xfd000000, 4096, 1024, 768, 32, 1, 0) +
                bytes([16, 8, 8, 8, 0, 8])),
        mb2_tag(14, rsdp_v1),
        mb2_tag(15, rsdp_v2),
    ]
    body = b"".join(tags) + mb2_tag(0, b"")
    write("multiboot2", "grub", struct.pack("<II", 8 + len(body), 0) + body)
    # More entries than boot_info holds.
    body = mb2_tag(6, struct.pack("<II", 24, 0) +
                   b"".join(struct.pack("<QQII", i << 20, 1 << 20, 1, 0) for i in range(130))) + mb2_tag(0, b"")
    write("multiboot2", "full", struct.pack("<II", 8 + len(body), 0) + body)
    # An EGA text console and no ACPI.
    body = tags[0] + tags[4] + mb2_tag(8, struct.pack("<QIIIBBH", 0xb8000, 160, 80, 25, 16, 2, 0)) \
        + mb2_tag(0, b"")
    write("multiboot2", "ega", struct.pack("<II", 8 + len(body), 0) + body)
    # A tag of size 0 before the end tag: the walk stood still (a hang).
    body = tags[0] + struct.pack("<II", 4, 0) + tags[4] + mb2_tag(0, b"")
    write_regress("multiboot2", "tag-size-0", struct.pack("<II", 8 + len(body), 0) + body)
    # An RSDP tag too short for an RSDP, and a memory map whose entries are
    # shorter than the 20 bytes read from each: both were read past.
    body = mb2_tag(14, b"RSD PTR") + mb2_tag(6, struct.pack("<II", 8, 0) + bytes(16)) + mb2_tag(0, b"")
    write_regress("multiboot2", "short-tags", struct.pack("<II", 8 + len(body), 0) + body)


# ---- UEFI ------------------------------------------------------------------------

OVMF_MMAP = [   # (EFI type, base, pages): a 512 MiB q35 guest's map, shortened
    (3, 0x0, 0xa0), (7, 0x100000, 0x700), (10, 0x800000, 0x8), (7, 0x808000, 0x8),
    (10, 0x810000, 0xf0), (4, 0x900000, 0xe00), (7, 0x1700000, 0xd000), (1, 0xe700000, 0x40),
    (2, 0xe740000, 0x300), (4, 0xea40000, 0x200), (9, 0xf7f0000, 0x10), (10, 0xf800000, 0x80),
    (5, 0xf880000, 0x100), (6, 0xf980000, 0x100), (0, 0xfa80000, 0x4), (4, 0xfa84000, 0x57c),
    (11, 0xffc00000, 0x400),
]
BOOT_INFO_LEN = 5216        # sizeof(struct boot_info); fuzz_uefi_mmap.c pads or cuts


def uefi_seeds(rsdp_v2):
    desc = b"".join(struct.pack("<IIQQQQ", t, 0, b, 0, p, 0xf) + bytes(8) for t, b, p in OVMF_MMAP)
    keep, keep_len = 0xe741000, 0x2000
    write("uefi_mmap", "ovmf", bytes([0]) + struct.pack("<HQQ", 48, keep, keep_len) + desc)
    # More ranges than boot_info holds: usable and reserved by turns.
    desc = b"".join(struct.pack("<IIQQQQ", 7 if i % 2 else 0, 0, i << 12, 0, 1, 0) for i in range(130))
    write("uefi_mmap", "full", bytes([0]) + struct.pack("<HQQ", 40, 0, 0) + desc)
    # Descriptor sizes of 0 and of 39 (under the 40 bytes read from each):
    # the walk had no guard for either.
    write_regress("uefi_mmap", "desc-size-0", bytes([0]) + struct.pack("<HQQ", 0, 0, 0) + desc[:80])
    write_regress("uefi_mmap", "desc-size-39", bytes([0]) + struct.pack("<HQQ", 39, 0, 0) + desc[:80])
    bi = bytearray(BOOT_INFO_LEN)
    cmd = b"app=ktest seed=3"
    bi[16:16 + len(cmd)] = cmd
    mm = [(0, 0x9f000, 1), (0x100000, 0xe640000, 1), (0xe740000, 0x2000, 2), (0xf7f0000, 0x10000, 3)]
    struct.pack_into("<I", bi, 1040, len(mm))
    for i, (b, l, t) in enumerate(mm):
        struct.pack_into("<QQI", bi, 1048 + 24 * i, b, l, t)
    bi[4120:4156] = rsdp_v2
    struct.pack_into("<IQ", bi, 4156, 36, 0xf77e014)
    write("uefi_mmap", "bootinfo", bytes([1]) + bytes(bi))


def elf_seeds():
    path = os.path.join(ROOT, "build", "goro.elf")
    eh = bytearray(64)
    eh[0:16] = b"\x7fELF\x02\x01\x01" + bytes(9)
    struct.pack_into("<HHIQQQIHHHHHH", eh, 16, 2, 62, 1, 0x100080, 64, 0, 0, 64, 56, 1, 64, 0, 0)
    seg = bytearray(0x100)
    struct.pack_into("<QQQ", seg, 0x30, 0x314948464f524f47, 1, 0x100090)
    filesz, memsz = len(seg), 0x353000
    if os.path.exists(path):
        with open(path, "rb") as f:
            real = f.read()
        ph = struct.unpack_from("<IIQQQQQQ", real, struct.unpack_from("<Q", real, 32)[0])
        seg = bytearray(real[ph[2]:ph[2] + 0x100])
        memsz = ph[6]
    ph = struct.pack("<IIQQQQQQ", 1, 7, 64 + 56, 0x100000, 0x100000, filesz, memsz, 0x1000)
    write("efi_elf", "goro", bytes(eh) + ph + bytes(seg))
    # Two segments, the second all .bss, the header deeper in the first.
    eh2 = bytearray(eh)
    struct.pack_into("<H", eh2, 56, 2)
    seg2 = bytearray(0x200)
    struct.pack_into("<QQQ", seg2, 0x1f8 - 16, 0x314948464f524f47, 1, 0x100100)
    ph0 = struct.pack("<IIQQQQQQ", 1, 5, 64 + 112, 0x100000, 0x100000, len(seg2), len(seg2), 0x1000)
    ph1 = struct.pack("<IIQQQQQQ", 1, 6, 64 + 112, 0x200000, 0x200000, 0, 0x4000, 0x1000)
    write("efi_elf", "two-segments", bytes(eh2) + ph0 + ph1 + bytes(seg2))


def efi_cmdline_seeds():
    write("efi_cmdline", "shell", bytes([0]) + "BOOTX64.EFI app=ktest seed=3\0".encode("utf-16-le"))
    write("efi_cmdline", "options", bytes([0]) + "app=hello".encode("utf-16-le"))
    write("efi_cmdline", "file", bytes([1]) + b"app=bench\tgomaxprocs=2\r\nignored\n")


def cmdline_seeds():
    lines = [
        b"app=ktest filter=chan seed=42",
        b"gomaxprocs=4 quantum=250us schedtrace=1000 scheddetail=1 trace=1 steal=flat "
        b"idle=mwait numa=off seed=0x2a simd=off app=echo a b c",
        b"quantum=10 schedtrace=2s gomaxprocs=0 app= idle=spin bogus x=1",
        b"app=hello " + b" ".join(b"a%d" % i for i in range(40)),
    ]
    for i, line in enumerate(lines):
        write("cmdline", str(i), line)


def keys_seeds():
    serial = [
        b"run hello\r", b"gomaxprocs 9\x7f1\r\n", b"run exit_cod 3\x1b[D\x1b[De\r",
        b"ab\r\x1b[A\x1b[A\x1b[B\r", b"abc\x15xyz\x01\x0b\r", b"hello\x03",
        b"\x1bOH\x1bOF\x1b[3~\x1b[1;5C\x1b[H\x1b[F\r",
    ]
    for i, b in enumerate(serial):
        write("keys", f"serial{i}", b)
    # set 1: "hello" Enter; Shift+a, Up, Left, Backspace, Ctrl+c, Enter; Pause, Caps Lock, a
    write("keys", "ps2-0", bytes([0x23, 0xA3, 0x12, 0x92, 0x26, 0xA6, 0x26, 0xA6, 0x18, 0x98, 0x1C, 0x9C]))
    write("keys", "ps2-1", bytes([0x2A, 0x1E, 0x9E, 0xAA, 0xE0, 0x48, 0xE0, 0xC8, 0xE0, 0x4B, 0xE0, 0xCB,
                                  0x0E, 0x8E, 0x1D, 0x2E, 0xAE, 0x9D, 0x1C, 0x9C]))
    write("keys", "ps2-2", bytes([0xE1, 0x1D, 0x45, 0xE1, 0x9D, 0xC5, 0x3A, 0xBA, 0x1E, 0x9E]))


def http_seeds():
    get = b"GET /work?us=4 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n"
    post = (b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 11\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n\r\nhello world")
    chunked = (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5;e=1\r\nhello\r\n13\r\n hello chunked world\r\n0\r\nT: x\r\n\r\n")
    wrk = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
    bad = [b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\n folded\r\n\r\n",
           b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
           b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
           b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", b"GET http://h:1/p?q HTTP/1.1\r\nHost: h\r\n\r\n"]
    # first byte: the header limit and the pieces' size (fuzz_http.c)
    write("http", "curl", b"\x00" + get)
    write("http", "pipelined", b"\x00" + wrk + post + get + chunked)
    write("http", "chunked-pieces", b"\x43" + chunked)
    write("http", "small-limit", b"\x84" + get + get)
    for i, b in enumerate(bad):
        write("http", f"bad{i}", b"\x00" + b)


def memcache_seeds():
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "memcached", "*.in"))):
        name = os.path.basename(path)[:-3]
        with open(path, "rb") as f:
            data = f.read()[:4096]
        # first byte: the pieces' size and whether the clock moves (fuzz_memcache.c)
        write("memcache", name, b"\x25" + data)


def pci_functions(path):
    """tests/data/pci/NAME.txt: [(bus, dev, fn, config bytes, [(start, end, flags)])]."""
    funcs = []
    for line in open(path):
        w = line.split()
        if w[:2] == ["PCIDUMP", "DEV"]:
            seg_bus, devfn = w[2].rsplit(":", 1)
            dev, fn = devfn.split(".")
            funcs.append((int(seg_bus.split(":")[1], 16), int(dev, 16), int(fn, 16), bytearray(), []))
        elif w[:2] == ["PCIDUMP", "CFG"]:
            funcs[-1][3].extend(bytes.fromhex(w[3]))
        elif w[:2] == ["PCIDUMP", "RES"]:
            funcs[-1][4].append(tuple(int(x, 16) for x in w[2:5]))
    return funcs


def pci_masks(cfg, res):
    """BARs 0-5's write masks, as tests/host/pci_fake.h derives them."""
    masks, i = [0] * 6, 0
    while i < 6 and i < len(res):
        start, end, flags = res[i]
        if flags and not flags & 0x10 and end >= start:
            m = ~(end - start) & (1 << 64) - 1
            masks[i] = m & 0xFFFFFFFF & (~3 if flags & 0x100 else ~0xF)
            if flags & 0x100000 and not flags & 0x100 and i < 5:
                masks[i + 1] = m >> 32
                i += 1
        i += 1
    return masks


def pci_seeds():
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "pci", "*.txt"))):
        body = b""
        for bus, dev, fn, cfg, res in pci_functions(path)[:32]:
            body += bytes([bus, dev, fn]) + struct.pack("<6I", *pci_masks(cfg, res)) + bytes(cfg[:256])
        name = os.path.basename(path)[:-4]
        write("pci", name, b"\x00" + body)
        write("pci", name + "-ports", b"\x01" + body)


# ---- the network receive path (tests/fuzz/fuzz_netrx.c) --------------------------

def netrx_isns(n):
    """The first n initial sequence numbers the harness's stack picks: its
    generator (net/sys_arch.c, xorshift64*) seeded from cputicks() = 1."""
    x, out = 0x9E3779B97F4A7C15, []
    for _ in range(n):
        x ^= x >> 12
        x ^= (x << 25) & (2**64 - 1)
        x ^= x >> 27
        out.append(((x * 2685821657736338717) & (2**64 - 1)) >> 32)
    return out


def netrx_seeds():
    sys.path.insert(0, ROOT)
    from tools.net import badframes as b
    me, guest, port = "10.0.0.1", "10.0.0.2", 7
    mymac, g0, g1 = bytes.fromhex("020000000001"), bytes.fromhex("525400123456"), bytes.fromhex("525400123457")

    def rec(frame, ms=0, net1=False, csum_ok=False, more=False, close=False, shut=False):
        ctl = ms | (8 if net1 else 0) | (16 if csum_ok else 0) | (32 if more else 0) | \
            (64 if close else 0) | (128 if shut else 0)
        return struct.pack("<BH", ctl, len(frame)) + frame

    def ip(payload_ip, dst=g0):
        return b.eth(dst, mymac, b.ETH_IP, payload_ip)

    def seg(sport, seq, ack, flags, data=b"", **kw):
        return ip(b.ipv4(me, guest, b.PROTO_TCP, b.tcp(me, guest, sport, port, seq, ack, flags, data, **kw)))

    arp = b.eth(b.BCAST, mymac, b.ETH_ARP, b.arp(1, mymac, me, b"\0" * 6, guest))
    write("netrx", "arp", rec(arp))
    write("netrx", "ping", rec(ip(b.ipv4(me, guest, b.PROTO_ICMP, b.icmp_echo(1, 1, b"p" * 56)))))
    write("netrx", "udp", rec(arp) + rec(ip(b.ipv4(me, guest, b.PROTO_UDP, b.udp(me, guest, 5000, port, b"hi")))))
    write("netrx", "udp-csum-ok", rec(ip(b.ipv4(me, guest, b.PROTO_UDP, b.udp(me, guest, 5000, port, b"x" * 99))),
                                     csum_ok=True))
    # A whole connection: SYN, the handshake's ACK, data, the echo's ACK,
    # FIN; the guest's ISN is the second number of the harness's generator.
    isn = netrx_isns(3)[1:]
    mss = struct.pack("!BBH", 2, 4, 1460)
    conn = (rec(arp) + rec(seg(40000, 1000, 0, b.SYN, options=mss)) +
            rec(seg(40000, 1001, isn[0] + 1, b.ACK)) +
            rec(seg(40000, 1001, isn[0] + 1, b.ACK | b.PSH, b"hello, goro\n")) +
            rec(seg(40000, 1013, isn[0] + 13, b.ACK), ms=2) +
            rec(seg(40000, 1013, isn[0] + 13, b.FIN | b.ACK)) +
            rec(seg(40000, 1014, isn[0] + 14, b.ACK), ms=2))
    write("netrx", "tcp-conn", conn)
    two = (rec(arp) + rec(seg(40001, 5000, 0, b.SYN, options=mss)) + rec(seg(40002, 9000, 0, b.SYN, options=mss), more=True) +
           rec(seg(40001, 5001, isn[0] + 1, b.ACK)) + rec(seg(40002, 9001, isn[1] + 1, b.ACK)) +
           rec(seg(40001, 5001, isn[0] + 1, b.ACK | b.PSH, b"a" * 1400), shut=True) +
           rec(seg(40002, 9001, isn[1] + 1, b.ACK | b.PSH, b"b" * 700), close=True) +
           rec(seg(40002, 9701, isn[1] + 1, b.RST)) + rec(b"", ms=7))
    write("netrx", "tcp-two", two)
    write("netrx", "tcp-ooo", rec(arp) + rec(seg(40003, 100, 0, b.SYN, options=mss)) + rec(seg(40003, 101, isn[0] + 1, b.ACK)) +
          rec(seg(40003, 601, isn[0] + 1, b.ACK, b"z" * 500)) + rec(seg(40003, 101, isn[0] + 1, b.ACK, b"y" * 500)))
    body = b.udp(me, guest, 5001, port, bytes(range(256)) * 8)
    frags = (rec(arp) + rec(ip(b.ipv4(me, guest, b.PROTO_UDP, body[:1480], ident=9, frag=0x2000))) +
             rec(ip(b.ipv4(me, guest, b.PROTO_UDP, body[1480:], ident=9, frag=185))))
    write("netrx", "frags", frags)
    write("netrx", "frag-lost", rec(ip(b.ipv4(me, guest, b.PROTO_UDP, body[:1480], ident=10, frag=0x2000))) +
          rec(b"", ms=7) + rec(b"", ms=7) + rec(b"", ms=7) + rec(b"", ms=7))
    # A DHCP offer and ack to net1, whose discover carries the generator's
    # first number as its transaction id.
    xid = netrx_isns(1)[0]

    def dhcp(kind):
        opts = bytes([53, 1, kind, 54, 4]) + b.ip4("10.1.0.1") + bytes([51, 4, 0, 0, 14, 16, 1, 4, 255, 255, 255, 0,
                                                                       3, 4]) + b.ip4("10.1.0.1") + b"\xff"
        msg = struct.pack("!BBBBIHH4s4s4s4s16s64s128s4s", 2, 1, 6, 0, xid, 0, 0, b"\0" * 4, b.ip4("10.1.0.9"),
                          b.ip4("10.1.0.1"), b"\0" * 4, g1 + b"\0" * 10, b"", b"", bytes([99, 130, 83, 99])) + opts
        return b.eth(b.BCAST, mymac, b.ETH_IP, b.ipv4("10.1.0.1", "255.255.255.255", b.PROTO_UDP,
                                                    b.udp("10.1.0.1", "255.255.255.255", 67, 68, msg)))
    write("netrx", "dhcp", rec(b"", ms=4) + rec(dhcp(2), net1=True) + rec(dhcp(5), net1=True, ms=1))


def main():
    acpi_seeds()
    pci_seeds()
    mb1_seeds()
    ovmf = load_dump(os.path.join(ROOT, "tests", "data", "acpi", "ovmf-q35-smp2.txt"))
    rsdp_v2 = bytes(next(d for (s, _), d in ovmf.items() if s == "RSDP"))
    mb2_seeds(rsdp_v2[:20], rsdp_v2)
    uefi_seeds(rsdp_v2)
    elf_seeds()
    efi_cmdline_seeds()
    cmdline_seeds()
    keys_seeds()
    http_seeds()
    memcache_seeds()
    netrx_seeds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
