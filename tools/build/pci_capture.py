#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PCI configuration spaces from QEMU's machines, as Debian's Linux sees
them, for the PCI parser's host tests (tests/data/pci/).

    tools/build/pci_capture.py [--out tests/data/pci] [--only NAME]

Boots Debian's kernel (linux-image-amd64) under the same TCG as goro's
runs, once per machine in MACHINES, with an /init that prints, for every
function in /sys/bus/pci/devices: its config space (as root: 256 bytes, or
4096 for PCI Express) and Linux's resource file (each BAR's start, end and
flags, which is how the tests learn the sizes that BAR sizing must find).
Linux's own drivers for the NICs are kept from binding
(initcall_blacklist), so the config spaces are as the firmware left them.

Each machine's output is NAME.txt:

    PCIDUMP DEV 0000:00:03.0
    PCIDUMP CFG <offset, hex> <32 bytes, hex>
    PCIDUMP RES <start> <end> <flags>      (one per line of resource)
    PCIDUMP END <functions dumped>

Python 3 standard library only.
"""

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.bench.linux_guest import GUEST_APPEND, Cpio, find_kernel  # noqa: E402
from tools.run import qemu  # noqa: E402

# name -> (machine, devices). Every machine has QEMU's default devices
# too (host bridge, ISA/LPC bridge, IDE or SATA, VGA); the NICs and the
# bridges below are the ones goro's drivers and bus walk must handle.
MACHINES = {
    "q35": ("q35", [
        "-device", "virtio-net-pci,disable-legacy=on,netdev=n0,mq=on,vectors=10",
        "-device", "virtio-net-pci,disable-modern=on,netdev=n1",
        "-device", "e1000e,netdev=n2",
        "-device", "pcie-root-port,id=rp1,chassis=1",
        "-device", "virtio-net-pci,bus=rp1,netdev=n3",
    ]),
    # OVMF places 64-bit BARs above 4 GiB, SeaBIOS below.
    "q35-ovmf": ("q35", [
        "-bios", "/usr/share/ovmf/OVMF.fd",
        "-device", "virtio-net-pci,disable-legacy=on,netdev=n0",
        "-device", "e1000e,netdev=n1",
    ]),
    "pc": ("pc", [
        "-device", "virtio-net-pci,netdev=n0",
        "-device", "virtio-net-pci,disable-legacy=on,netdev=n1",
        "-device", "e1000e,netdev=n2",
        "-device", "pci-bridge,id=b1,chassis_nr=1",
        "-device", "virtio-net-pci,disable-modern=on,bus=b1,addr=3,netdev=n3",
    ]),
}

INIT = r"""#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
export PATH=/bin
echo
n=0
for d in /sys/bus/pci/devices/*; do
  echo "PCIDUMP DEV ${d##*/}"
  od -An -tx1 -v -w32 "$d/config" | sed 's/^/PCIDUMP OD /'
  sed 's/^/PCIDUMP RES /' "$d/resource"
  n=$((n + 1))
done
echo "PCIDUMP END $n"
/bin/busybox poweroff -f
"""

APPLETS = ("sh", "mount", "od", "sed", "echo", "poweroff")

# Linux's NIC drivers would enable MSI-X and bus mastering: keep them out.
APPEND = GUEST_APPEND + " initcall_blacklist=e1000_init_module,virtio_pci_driver_init"


def initramfs(path):
    c = Cpio()
    for d in ("bin", "dev", "proc", "sys"):
        c.dir(d)
    c.chardev("dev/console", 5, 1)
    with open("/bin/busybox", "rb") as f:
        c.file("bin/busybox", f.read())
    for a in APPLETS:
        c.symlink(f"bin/{a}", "busybox")
    c.file("init", INIT.encode())
    with open(path, "wb") as f:
        f.write(c.bytes())


def capture(name, out, initrd):
    machine, devices = MACHINES[name]
    netdevs = []
    for i in range(4):
        netdevs += ["-netdev", f"user,id=n{i},restrict=on"]
    cmd = qemu.argv(2, "512M", machine=machine, exit_device=False,
                    extra=netdevs + devices) + \
        ["-kernel", find_kernel(), "-initrd", initrd, "-append", APPEND]
    status, console, _, secs = qemu.run(cmd, 180)
    lines, off = [], 0
    for l in console.replace("\r", "").split("\n"):
        l = l.strip()
        if l.startswith("PCIDUMP OD "):
            data = "".join(l.split()[2:])
            lines.append(f"PCIDUMP CFG {off:04x} {data}")
            off += len(data) // 2
        elif l.startswith("PCIDUMP "):
            lines.append(l)
            off = 0
    if not lines or not lines[-1].startswith("PCIDUMP END"):
        sys.exit(f"pci_capture: {name}: no complete dump (qemu {qemu.describe_status(status)})")
    with open(os.path.join(out, f"{name}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"pci_capture: {name}: {lines[-1].split()[-1]} functions, {secs:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="tests/data/pci")
    ap.add_argument("--only", default="")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        initrd = os.path.join(d, "pci.cpio")
        initramfs(initrd)
        for name in MACHINES:
            if not opts.only or opts.only == name:
                capture(name, opts.out, initrd)


if __name__ == "__main__":
    main()
