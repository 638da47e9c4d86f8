#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the static peer binaries into $1 (default build/bench/peers).
# Static, so the same files run on the host and in the initramfs of the
# TCG guest, which has no libc.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/bench/peers}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# CI may have no HOME; keep Go's caches beside the binaries then.
if [ -z "$HOME" ] || [ ! -w "$HOME" ]; then
	export GOCACHE="${GOCACHE:-$out/go-cache}" GOPATH="${GOPATH:-$out/go-path}"
fi
(cd "$here/go" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$out/peers-go" .)
gcc -static -O2 -pthread -Wall -Wextra -o "$out/peers-pthread" "$here/pthread/peers.c"
