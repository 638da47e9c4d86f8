#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Reads `nm -n` output on stdin and writes NASM source for the .ksyms
# section: a sorted table of (address, name offset) pairs and the names,
# which arch/symbols.c searches for backtraces. With empty input it writes
# an empty table (the first link).
import sys

syms = []
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 3 and parts[1] in "tTwW" and not parts[2].startswith("."):
        syms.append((int(parts[0], 16), parts[2]))
syms.sort()

out = ["section .ksyms", "global ksyms_count, ksyms_table, ksyms_names", "align 16",
       "ksyms_count: dq %d" % len(syms), "ksyms_table:"]
offset = 0
names = []
for addr, name in syms:
    out.append("    dq 0x%x, %d" % (addr, offset))
    names.append(name)
    offset += len(name) + 1
out.append("ksyms_names:")
for name in names:
    out.append('    db "%s", 0' % name)
out.append("    db 0")
print("\n".join(out))
