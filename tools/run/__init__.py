# SPDX-License-Identifier: MIT
"""QEMU as every tool starts it (make run), the soak and the stress wrapper."""
