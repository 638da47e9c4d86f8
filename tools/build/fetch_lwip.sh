#!/bin/sh
# SPDX-License-Identifier: MIT
# lwIP's sources from Debian's source package `lwip`, for the build.
#
#   tools/build/fetch_lwip.sh DIR
#
# Downloads the source package with apt's own source download into DIR,
# checks each of its files against the sha256 written below for that
# version, unpacks it (with Debian's patches) into DIR/src and writes the
# version to DIR/fetched, the Makefile's stamp. Nothing of lwIP is ever
# committed.
#
# apt is pointed at a configuration of our own under DIR/apt: a deb-src
# entry in its own sources list (Dir::Etc::sourcelist, with an empty
# Dir::Etc::sourceparts), its own state and cache. The archive's address
# is the one this machine's apt already uses for its release (apt-get
# indextargets, read at run time); no address is written in the tree and
# /etc/apt is only read. The archive's signature is checked by apt with
# the machine's trusted keys, as for any other download.
#
# LWIP_SUITE=trixie fetches another release's package from the same
# archive (to check that the port builds with both versions below).
# Needs apt-get and dpkg-source (dpkg-dev); tools/deps.sh checks for them.
set -eu

# The versions the port is written for, and each file's sha256: Debian 12
# (bookworm) and Debian 13 (trixie). A release whose archive offers neither
# fails, naming what it offers; adding a version here is checking that the
# port builds and the tests pass with it.
KNOWN='
2.1.3+dfsg1-2 lwip_2.1.3+dfsg1-2.dsc 8d8f944db8e6d542fc2d6f01559078fb1b5dda71651c67ee5fa3571ed1342c50
2.1.3+dfsg1-2 lwip_2.1.3+dfsg1.orig.tar.xz 0a8276d09fc4e97bbba2f953d74af2388fc2195ea156be9d7589e297a68fde24
2.1.3+dfsg1-2 lwip_2.1.3+dfsg1-2.debian.tar.xz c5a48413d362cc757032cdd58f528f75eb64ee781ca46ca24f010b49b0e62a90
2.2.1+dfsg1-1+deb13u1 lwip_2.2.1+dfsg1-1+deb13u1.dsc 07ecb7122b2882a5265c6d1413947dd9a054d5ae25150b7042885d3f3d0b5aad
2.2.1+dfsg1-1+deb13u1 lwip_2.2.1+dfsg1.orig.tar.xz 83729c274c499d3348e9fbbe043a3113f3fa8953e7efddc7c21c7fcbb1f2b7b1
2.2.1+dfsg1-1+deb13u1 lwip_2.2.1+dfsg1-1+deb13u1.debian.tar.xz faa343b3c76d69080240ae1323932b7348fa1d0042f6ad29bd286246660720a9
'

die() {
	echo "fetch_lwip: $*" >&2
	exit 1
}

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

command -v apt-get >/dev/null 2>&1 || die "needs apt-get (lwIP comes from Debian's source package lwip)"
command -v dpkg-source >/dev/null 2>&1 ||
	die "needs dpkg-source to unpack Debian's lwip source package: apt-get install dpkg-dev (or make deps)"

# The release this machine runs, and the archive its apt uses for it.
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release: which Debian release is this?"
suite=${LWIP_SUITE:-$codename}
uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(CODENAME) $(COMPONENT)' 2>/dev/null |
	awk -v c="$codename" '($2 == c || $3 == c) && $4 == "main" { print $1; exit }')
[ -n "$uri" ] || die "this machine's apt has no source for $codename main (apt-get indextargets lists none): \
add the Debian archive to /etc/apt/sources.list(.d) as for any package"

# apt's configuration of our own: only the sources, the lists and the
# cache move; keys, proxies and the rest stay the machine's.
apt="$dir/apt"
mkdir -p "$apt/sources.list.d" "$apt/state/lists/partial" "$apt/cache/archives/partial"
echo "deb-src $uri $suite main" > "$apt/sources.list"
set -- -o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts="$apt/sources.list.d" \
	-o Dir::State="$apt/state" -o Dir::Cache="$apt/cache"
# As root, apt downloads as the user _apt, who cannot write here.
[ "$(id -u)" != 0 ] || set -- "$@" -o APT::Sandbox::User=root

echo "fetch_lwip: the source index of $uri $suite main"
apt-get "$@" -q update > "$apt/update.log" 2>&1 ||
	{ cat "$apt/update.log" >&2; die "apt-get update of $uri $suite (deb-src) failed"; }
offered=$(apt-cache "$@" showsrc lwip 2>/dev/null | awk '/^Version:/ { print $2 }')
version=
for v in $offered; do
	if echo "$KNOWN" | awk -v v="$v" '$1 == v { found = 1 } END { exit !found }'; then
		version=$v
		break
	fi
done
[ -n "$version" ] || die "$uri $suite offers lwip $(echo $offered | tr ' ' ','); \
this tree knows $(echo "$KNOWN" | awk 'NF { print $1 }' | sort -u | tr '\n' ' ')(tools/build/fetch_lwip.sh)"

dl="$dir/download"
rm -rf "$dl"
mkdir -p "$dl"
echo "fetch_lwip: lwip $version"
(cd "$dl" && apt-get "$@" -q source --download-only "lwip=$version" > "$apt/source.log" 2>&1) ||
	{ cat "$apt/source.log" >&2; die "apt-get source lwip=$version failed"; }

# Every file of the package, checked against the tree's hash.
echo "$KNOWN" | awk -v v="$version" '$1 == v { print $3 "  " $2 }' > "$dl/SHA256SUMS"
for f in "$dl"/*; do
	name=${f##*/}
	[ "$name" = SHA256SUMS ] || grep -q "  $name\$" "$dl/SHA256SUMS" ||
		die "lwip $version brought $name, which the tree has no hash for"
done
(cd "$dl" && sha256sum --quiet -c SHA256SUMS) ||
	die "lwip $version: a file's sha256 differs from the tree's (tools/build/fetch_lwip.sh)"

# Checked above, file by file, so dpkg-source need not check the .dsc's
# signature (it would only warn: the uploader's key is not ours to have).
rm -rf "$dir/src"
dpkg-source --no-check -x "$dl"/lwip_"$version".dsc "$dir/src" > "$apt/unpack.log" 2>&1 ||
	{ cat "$apt/unpack.log" >&2; die "dpkg-source -x of lwip $version failed"; }
[ -f "$dir/src/src/core/tcp.c" ] || die "lwip $version has no src/core/tcp.c"

echo "$version" > "$dir/fetched"
echo "fetch_lwip: lwip $version in $dir/src"
