#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The include rules between goro's layers, checked (make check-layers, part
of make test). Layers point down only:

    apps -> the public header (include/goro.h) -> shell, net -> kernel
         -> arch/arch.h, drivers (pci/, net/) -> lib

Every include names its path from the top of the tree ("kernel/sched.h"),
so the layer of each included file is visible at its line; the public
header alone is "goro.h", as applications outside the tree write it. A file may
include a header of its own directory or one that RULES allows it; anything
else fails, naming the file, the line and the rule. DEBTS lists the known
exceptions, each with its reason; one that is no longer needed fails too,
so the list only ever shrinks.

Python 3 standard library only.
"""

import os
import re
import subprocess
import sys

# Directory or file (longest prefix wins) -> the includes it may use, as
# path prefixes. A file may always include headers of its own directory.
# Every folder that holds C must fall under a rule: a new folder gets its
# own line here, with what it may include and why.
# The public header is included as "goro.h" (include/ is on every path).
PUBLIC = "include/goro.h"
KERNEL = ["lib/", "kernel/", "drivers/", "boot/bootinfo.h", "arch/arch.h", PUBLIC]
DRIVERS = ["lib/", "drivers/", "boot/bootinfo.h", "arch/arch.h", "arch/x86.h"]
RULES = {
    # The public API stands alone: applications see nothing else.
    "include/": [],
    "lib/": ["lib/"],
    # Delay points (debug builds) widen race windows in arch/ too; the
    # header is the list and a spin, nothing else of the kernel's.
    "arch/": ["lib/", "arch/", "kernel/debugdelay.h"],
    "boot/": ["lib/", "boot/"],
    "boot/efi/": ["boot/bootinfo.h", "lib/"],
    # Port I/O (arch/x86.h) is how a PC's devices are reached.
    "drivers/": DRIVERS,
    # PCI: config space, BARs, capabilities, MSI-X/MSI/INTx.
    "drivers/pci/": DRIVERS,
    # NIC drivers behind drivers/net/netdev.h, the netdev interface: below
    # kernel/, whose netpoller attaches itself to them.
    "drivers/net/": DRIVERS,
    # arch/arch.h is the boundary (it includes arch/spinlock.h,
    # arch/static_branch.h and arch/trap_hooks.h itself).
    "kernel/": KERNEL,
    # The boot table keeps the shell's boot script before the APs run.
    "kernel/main.c": KERNEL + ["shell/shell.h"],
    # The shell reads the scheduler's and the allocators' own structures:
    # kernel code above kernel/, which reaches it only from the boot table.
    "shell/": ["lib/", "kernel/", "drivers/", "arch/arch.h", "shell/", PUBLIC],
    # lwIP's port and the sockets behind goro.h's net API: above kernel/
    # and the NIC drivers, registered with kernel/ (kernel/netpoll.h), never
    # included by it. lwIP's own headers (lwip/, netif/) are unpacked under
    # the build directory.
    "net/": ["lib/", "kernel/", "drivers/", "arch/arch.h", "net/", "lwip/", "netif/", PUBLIC],
    # Applications include goro.h and their own headers, written beside
    # them, as an application outside the tree does (make APP_SRC=); the
    # network servers also what they share, apps/netserve.
    "apps/": [PUBLIC],
    "apps/netserve/": [PUBLIC],
    "apps/httpd/": [PUBLIC, "apps/netserve/"],
    "apps/kvd/": [PUBLIC, "apps/netserve/"],
    # In-kernel tests may look at anything below the applications.
    "tests/kernel/": ["lib/", "kernel/", "drivers/", "boot/", "arch/arch.h", "arch/pit.h",
                      "net/", PUBLIC],
    # Host tests compile the pure parts on the host, the servers' protocol
    # parsers and table (apps/httpd, apps/kvd) and the CMOS clock's date
    # arithmetic among them.
    "tests/host/": ["lib/", "kernel/", "drivers/", "boot/", "shell/", "net/", "tests/host/",
                    "apps/httpd/", "apps/kvd/", "apps/netserve/", "tools/net/loadgen/", "arch/rtc_time.h",
                    PUBLIC],
    "tests/fuzz/": ["lib/", "kernel/", "drivers/", "boot/", "shell/", "net/", "tests/host/",
                    "tests/fuzz/", "apps/httpd/", "apps/kvd/", PUBLIC],
    # Host programs built against the host's libc: the peers and the tools
    # (the insncount plugin, the load generator) include only their own.
    "tests/peers/": ["tests/peers/"],
    "tools/": ["tools/"],
    "tools/net/": ["tools/"],
}

# (file, included header): why it is still allowed. Shrink, never grow.
DEBTS = {
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def longest_prefix(path, table):
    best = None
    for prefix in table:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def rule_for(path):
    return longest_prefix(path, RULES)


def tracked_sources(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard",
                          "*.c", "*.h"], capture_output=True, text=True, check=True).stdout
    return [f for f in out.split() if os.path.exists(os.path.join(root, f))]


def check(root):
    problems, used_debts, unknown = [], set(), set()
    for path in tracked_sources(root):
        prefix = rule_for(path)
        if prefix is None:
            folder = os.path.dirname(path) or "."
            if folder not in unknown:
                unknown.add(folder)
                problems.append(f"{path}: no layer rule covers {folder}/: give it one in "
                                f"tools/check/check_layers.py's RULES")
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        here = os.path.dirname(path) + "/"
        for m in INCLUDE_RE.finditer(text):
            inc = m.group(1)
            if inc == "goro.h":
                inc = PUBLIC
            line = text.count("\n", 0, m.start()) + 1
            if "/" not in inc:
                if os.path.exists(os.path.join(root, here, inc)):
                    continue        # a header beside the file
                problems.append(f"{path}:{line}: include \"{inc}\" without its path "
                                f"(write it from the top of the tree, e.g. \"kernel/{inc}\")")
                continue
            if inc.startswith(here) or any(inc.startswith(a) for a in RULES[prefix]):
                continue
            if (path, inc) in DEBTS:
                used_debts.add((path, inc))
                continue
            problems.append(f"{path}:{line}: {prefix} may not include \"{inc}\" "
                            f"(allowed: {', '.join(RULES[prefix])})")
    for debt in sorted(set(DEBTS) - used_debts):
        problems.append(f"tools/check/check_layers.py: DEBTS lists {debt[0]} -> {debt[1]}, "
                        f"which is no longer included: remove it")
    return problems


def report(problems, failed, passed):
    """Prints each problem and then failed, or passed when there is none;
    returns the exit status. tools/check/check_atomics.py reports through it too."""
    for p in problems:
        print(p)
    print(failed if problems else passed)
    return 1 if problems else 0


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    problems = check(root)
    return report(problems, f"check-layers: {len(problems)} include(s) break the layer rules "
                            f"(tools/check/check_layers.py says why each rule exists)",
                  "check-layers: every include follows the layer rules")


if __name__ == "__main__":
    sys.exit(main())
