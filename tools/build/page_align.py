#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Aligns each code section of an object (one a function with
-ffunction-sections) to its size rounded up to a power of two, so that
no function of 4 KiB or less straddles a page, whatever the link puts
before it.

Used on Go's benchmark ports (the Makefile's apps/gobench*.c objects).
Under QEMU's TCG an instruction that straddles a page gets a translated
block of its own spanning two pages, and QEMU never chains a jump into
such a block: a loop over one returns to QEMU's main loop every round,
which in a benchmark's op costs more than the op's own instructions
(docs/notes/2026-11-29-bench.md, "Loops across pages"). The padding
lies between functions and is never run.

    tools/build/page_align.py OBJ

Python 3 standard library and binutils (readelf, objcopy).
"""

import re
import subprocess
import sys

PAGE = 4096
# readelf -SW: name, type, address, offset, size ... alignment (the last field)
SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\.text\S*)\s+PROGBITS\s+\S+\s+\S+\s+([0-9a-f]+)\s.*\s(\d+)$")


def alignments(obj):
    """(section, alignment) for each code section of obj up to a page
    whose alignment is below its rounded size."""
    out = subprocess.run(["readelf", "-SW", obj], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = SECTION.match(line)
        if not m:
            continue
        size, align = int(m.group(2), 16), int(m.group(3))
        want = 1 << (size - 1).bit_length() if size else 1
        if size <= PAGE and want > align:
            yield m.group(1), want


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    args = []
    for name, align in alignments(argv[1]):
        args += ["--set-section-alignment", f"{name}={align}"]
    if args:
        subprocess.run(["objcopy"] + args + [argv[1]], check=True)


if __name__ == "__main__":
    main(sys.argv)
