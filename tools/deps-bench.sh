#!/bin/sh
# SPDX-License-Identifier: MIT
# What the peer benchmarks need (Go toolchain, a Debian kernel to boot
# under TCG, busybox for the guest's /init, cpio for the initramfs,
# matplotlib for make bench's plots).
#
#   tools/deps-bench.sh --check     (make bench): names what is missing
#                                   and how to install it; never installs.
#   tools/deps-bench.sh --install   (make deps-bench, GORO_INSTALL_DEPS=1):
#                                   asks apt only for what is missing.
set -e

. "$(dirname "$0")/deps-lib.sh"
deps_mode "$1"

missing=""
for p in golang-go linux-image-amd64 busybox-static cpio python3-matplotlib; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

deps_finish deps-bench "make bench" " --no-install-recommends"
