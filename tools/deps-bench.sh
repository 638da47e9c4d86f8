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

case "${1:---check}" in
--check) mode=check ;;
--install) mode=install ;;
*) echo "usage: $0 [--check|--install]" >&2; exit 2 ;;
esac

missing=""
for p in golang-go linux-image-amd64 busybox-static cpio python3-matplotlib; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$mode" = check ]; then
	echo "deps-bench: make bench needs these Debian packages, which are missing:$missing" >&2
	echo "deps-bench: install them with 'make deps-bench' (as root), or:" >&2
	echo "deps-bench:   sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps-bench: missing:$missing; run as root:" >&2
	echo "  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
