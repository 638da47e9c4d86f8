#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the QEMU TCG instruction-count plugin (tools/insncount) into
# $BUILD/insncount/libinsncount.so. `make insncount` runs it.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/tools/insncount
out=${BUILD:-build}/insncount
mkdir -p "$out"
${HOSTCC:-gcc} -O2 -shared -fPIC -Wall -Wextra -Werror -o "$out/libinsncount.so" "$src/insncount.c"
echo "build-insncount: $out/libinsncount.so"
