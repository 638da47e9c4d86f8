# SPDX-License-Identifier: MIT
"""goro's host tools, by purpose: build/ (the image's generated parts and
boot images), check/ (the rules make test enforces on the source), run/
(QEMU as every tool starts it, the soak, the stress wrapper), bench/ (the
benchmarks and their reports), trace/ (trace, profile and metrics
converters), insncount/ (the QEMU instruction-count plugin), net/ (network
namespaces for guests, the load generator, the servers' Go peers). Scripts import
each other as tools.<folder>.<module>, with the tree's root on sys.path."""
