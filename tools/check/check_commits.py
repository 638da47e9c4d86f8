#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Commit subjects of at most 72 characters (make lint): every commit
HEAD reaches from the one that added this file on. A subject says what
changed in one line a log can show; the why goes in the body. Commits
before the rule are left as they are.

A tree without git history (an archive) or whose history does not reach
the rule's first commit (a shallow clone) has nothing to check, and says
so.

Python 3 standard library only.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX = 72
SELF = "tools/check/check_commits.py"


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)


def main():
    first = git("log", "--diff-filter=A", "--format=%H", "-1", "HEAD", "--", SELF).stdout.strip()
    if not first or git("cat-file", "-e", first + "^{commit}").returncode != 0:
        print("check-commits: no history to check (the rule's first commit is not here)")
        return 0
    out = git("log", "--format=%h %s", f"{first}^..HEAD").stdout
    long = [line for line in out.splitlines() if len(line.split(" ", 1)[1]) > MAX]
    for line in long:
        h, s = line.split(" ", 1)
        print(f"{h}: subject of {len(s)} characters (at most {MAX}): {s}")
    if long:
        print(f"check-commits: {len(long)} commit subject(s) over {MAX} characters: "
              f"reword them (git rebase -i), the why in the body")
        return 1
    print(f"check-commits: every subject since the rule is at most {MAX} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
