#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what the peer benchmarks need (Go toolchain, a Debian kernel to
# boot under TCG, busybox for the guest's /init, cpio for the initramfs,
# matplotlib for make bench's plots).
# Idempotent: asks apt only for packages that are missing.
set -e

missing=""
for p in golang-go linux-image-amd64 busybox-static cpio python3-matplotlib; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps-bench: missing:$missing; run as root:"
	echo "  apt-get update && apt-get install -y --no-install-recommends$missing"
	exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
