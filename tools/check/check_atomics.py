#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every __atomic builtin in kernel/, arch/, lib/, drivers/, shell/ and
net/ says its memory ordering and what it pairs with (HACKING.md), in a
comment on its own line or on the line just above (make check-atomics,
part of make test). A call that spans lines carries it on the line that names the
builtin, so a reader of that line sees why the ordering is enough. This
check sees only that a comment is there; what it says is the reviewer's.

Python 3 standard library only.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from tools.check import check_layers  # noqa: E402  (tracked_sources and report)

DIRS = ["kernel", "arch", "lib", "drivers", "shell", "net"]
BUILTIN_RE = re.compile(r"\b__atomic_\w+\s*\(")


def code_part(line):
    """The line before any comment on it (strings hold no __atomic here)."""
    return re.split(r"//|/\*", line, maxsplit=1)[0]


def is_comment_line(line):
    s = line.strip()
    return s.startswith(("//", "/*", "*"))


def check_file(path, lines):
    problems = []
    for i, line in enumerate(lines):
        if not BUILTIN_RE.search(code_part(line)):
            continue
        if "//" in line or "/*" in line:
            continue
        if i > 0 and is_comment_line(lines[i - 1]):
            continue
        problems.append(f"{path}:{i + 1}: {line.strip()}")
    return problems


def main():
    root = ROOT
    problems = []
    for path in check_layers.tracked_sources(root):
        if path.split("/")[0] not in DIRS:
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            problems += check_file(path, f.read().split("\n"))
    return check_layers.report(
        problems, f"check-atomics: {len(problems)} __atomic call(s) without their ordering "
                  f"and what it pairs with, in a comment on the line or the line above",
        "check-atomics: every __atomic call says its ordering")


if __name__ == "__main__":
    sys.exit(main())
