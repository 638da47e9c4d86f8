# SPDX-License-Identifier: MIT
"""The Python host tests' verdicts: a PASS or FAIL line per check, in the
runner's format, and the count of failures for the exit status."""


class Checks:
    def __init__(self, name):
        self.name = name
        self.failed = 0

    def __call__(self, check, ok, why):
        print(f"PASS {check}" if ok else f"FAIL {check}: {why}")
        self.failed += not ok

    def status(self):
        """The exit status: 1 when any check failed, after a line saying how many."""
        if self.failed:
            print(f"{self.name}: {self.failed} failed")
        return 1 if self.failed else 0
