#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Linux guest the peers run in under QEMU TCG: Debian's kernel
(linux-image-amd64) booting an initramfs written here (busybox-static as
/bin/busybox, the peer binaries, an /init script), console on ttyS0."""
import glob
import stat
import sys

from tools.run import qemu

# The kernel marks the TSC unstable under multi-vCPU TCG and falls back to
# HPET, making every clock read an emulated device access; goro reads the
# TSC, so the guest must too. no_timer_check: on a loaded host the kernel's
# check that the IO-APIC delivers the timer can miss its window under TCG,
# and the kernel then panics at boot ("IO-APIC + timer doesn't work").
GUEST_APPEND = "console=ttyS0 quiet clocksource=tsc tsc=reliable no_timer_check panic=-1"

# Linux uses x2APIC, and so APIC ids from 255 up, only with interrupt
# remapping; without it each such core is "smpboot: native_cpu_up: bad cpu
# N" and the guest runs on 255. QEMU's intel-iommu (q35) remaps, and with
# its extended interrupt mode (eim) names 32-bit APIC ids; at 255 vCPUs and
# below the guest stays as every other figure measured it.


def many_cores_argv(cpus):
    """QEMU's options for a Linux guest of cpus vCPUs on q35.

    >>> many_cores_argv(64)
    []
    >>> many_cores_argv(256)
    ['-device', 'intel-iommu,intremap=on,eim=on']
    """
    return ["-device", "intel-iommu,intremap=on,eim=on"] if cpus > qemu.XAPIC_MAX_VCPUS else []


# initramfs (cpio "newc"), written here so that device nodes need no root


class Cpio:
    def __init__(self):
        self.parts, self.ino = [], 1

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        name_b = name.encode() + b"\0"
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0]
        self.ino += 1
        hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
        self.parts += [hdr, name_b, b"\0" * (-(len(hdr) + len(name_b)) % 4), data, b"\0" * (-len(data) % 4)]

    def dir(self, name):
        self._entry(name, stat.S_IFDIR | 0o755)

    def file(self, name, data, mode=0o755):
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name, target):
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name, major, minor):
        self._entry(name, stat.S_IFCHR | 0o600, rdev=(major, minor))

    def bytes(self):
        self._entry("TRAILER!!!", 0)
        out = b"".join(self.parts)
        return out + b"\0" * (-len(out) % 512)


def find_kernel():
    kernels = sorted(glob.glob("/boot/vmlinuz-*"))
    if not kernels:
        sys.exit("linux_guest: no /boot/vmlinuz-*: run make deps-bench (linux-image-amd64)")
    return kernels[-1]
