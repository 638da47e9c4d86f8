#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the QEMU TCG instruction-count plugin from ../shared/tools/insncount
# (beside the repository, here and in CI) into $BUILD/insncount.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
src=${INSNCOUNT_SRC:-$root/../shared/tools/insncount}
out=${BUILD:-build}/insncount

if [ ! -f "$src/insncount.c" ]; then
	echo "build-insncount: $src/insncount.c not found; skipping the plugin (instruction counts unavailable)"
	exit 0
fi
mkdir -p "$out"
# The header is QEMU 7.2's plugin API re-declared (Debian ships none); -I
# lets insncount.c include it by its own name from the source directory.
gcc -O2 -shared -fPIC -Wall -I "$src" -o "$out/libinsncount.so" "$src/insncount.c"
echo "build-insncount: $out/libinsncount.so"
