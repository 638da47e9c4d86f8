# SPDX-License-Identifier: MIT
"""The checks make test runs on the source (make check-layers, check-atomics)."""
