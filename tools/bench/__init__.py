# SPDX-License-Identifier: MIT
"""The benchmarks (make bench, make bench-boot) and their reports."""
