#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The include rules between goro's layers, checked (make check-layers, part
of make test). Layers point down only:

    apps -> kernel's public header (goro.h) -> shell -> kernel -> arch/arch.h, drivers -> lib

Every include names its path from the top of the tree ("kernel/sched.h"),
so the layer of each included file is visible at its line. A file may
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

# Directory (longest prefix wins) -> the includes it may use, as path
# prefixes. A file may always include headers of its own directory.
RULES = {
    "lib/": ["lib/"],
    "arch/": ["lib/", "arch/"],
    "boot/": ["lib/", "boot/"],
    # Port I/O (arch/x86.h) is how a PC's devices are reached.
    "drivers/": ["lib/", "drivers/", "boot/bootinfo.h", "arch/arch.h", "arch/x86.h"],
    # arch/arch.h is the boundary (it includes arch/spinlock.h,
    # arch/static_branch.h and arch/trap_hooks.h itself).
    "kernel/": ["lib/", "kernel/", "drivers/", "boot/bootinfo.h", "arch/arch.h"],
    # The boot table keeps the shell's boot script before the APs run.
    "kernel/main.c": ["lib/", "kernel/", "drivers/", "boot/bootinfo.h", "arch/arch.h",
                      "shell/shell.h"],
    # The shell reads the scheduler's and the allocators' own structures:
    # kernel code above kernel/, which reaches it only from the boot table.
    "shell/": ["lib/", "kernel/", "drivers/", "arch/arch.h", "shell/"],
    # The public API, and the pure C library it names (goro.h).
    "apps/": ["kernel/goro.h", "lib/string.h", "lib/sort.h", "apps/"],
    # In-kernel tests may look at anything below the applications.
    "tests/kernel/": ["lib/", "kernel/", "drivers/", "boot/", "arch/arch.h", "arch/pit.h"],
    # Host tests compile the pure parts on the host.
    "tests/host/": ["lib/", "kernel/", "drivers/", "boot/", "shell/", "tests/host/"],
    "tests/fuzz/": ["lib/", "kernel/", "drivers/", "boot/", "shell/", "tests/host/", "tests/fuzz/"],
    "boot/efi/": ["boot/bootinfo.h", "lib/"],
}

# (file, included header): why it is still allowed. Shrink, never grow.
DEBTS = {
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rule_for(path):
    best = None
    for prefix in RULES:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def tracked_sources(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard",
                          "*.c", "*.h"], capture_output=True, text=True, check=True).stdout
    return [f for f in out.split() if os.path.exists(os.path.join(root, f))]


def check(root):
    problems, used_debts = [], set()
    for path in tracked_sources(root):
        prefix = rule_for(path)
        if prefix is None:
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        here = os.path.dirname(path) + "/"
        for m in INCLUDE_RE.finditer(text):
            inc = m.group(1)
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
