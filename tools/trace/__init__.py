# SPDX-License-Identifier: MIT
"""Converters of the kernel's trace, profile and metrics output (make trace, make profile)."""
