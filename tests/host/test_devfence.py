#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The virtqueue's store-load fences, as the kernel was compiled: each
function of drivers/net/virtqueue.c that stores a ring index or event and
then reads the device's (vq_kick_prepare, vq_enable_cb,
vq_enable_cb_delayed) holds an mfence, and no function there fences with
a locked instruction. make test runs this as the host test
BUILD/host/test_devfence, on BUILD/obj/drivers/net/virtqueue.o.

Why the instruction matters and not only the C: QEMU's TCG with one vCPU
translates a locked instruction (GCC's seq-cst fence, `lock or
$0,(%rsp)`) as a plain load and store with no host barrier, while the
device models run in QEMU's I/O thread; mfence it always translates as
one. With the locked fence, virtio-net's receive queue at 1 vCPU stopped
for good under wrk and memcaslap (the device filled the ring while the
driver's used_event store sat in the host's store buffer, so neither
side saw the other: no interrupt, and the driver waiting for one).
The ordering itself is test_virtqueue's; this is its compiled form.

Usage: test_devfence.py OBJECT. Prints PASS/FAIL lines. Python 3
standard library and objdump.
"""

import re
import subprocess
import sys

from checks import Checks  # this folder: sys.path[0]

NEED_MFENCE = ("vq_kick_prepare", "vq_enable_cb", "vq_enable_cb_delayed")


def functions(obj):
    """Each function's instructions (mnemonic and operands), by name."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
        elif cur is not None and re.match(r"^\s+[0-9a-f]+:\t", line):
            cur.append(line.split("\t", 1)[1].strip())
    return funcs


def main():
    if len(sys.argv) != 2:
        print("usage: test_devfence.py OBJECT", file=sys.stderr)
        return 2
    c = Checks("test_devfence")
    funcs = functions(sys.argv[1])
    for name in NEED_MFENCE:
        insns = funcs.get(name)
        c(f"{name}_has_mfence", insns is not None and any(i.startswith("mfence") for i in insns),
          "not in the object" if insns is None else "no mfence: " + "; ".join(insns))
    locked = [f"{n}: {i}" for n, insns in funcs.items() for i in insns if i.startswith("lock")]
    c("no_locked_fence", not locked, "; ".join(locked))
    return c.status()


if __name__ == "__main__":
    sys.exit(main())
