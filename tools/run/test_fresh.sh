#!/bin/sh
# SPDX-License-Identifier: MIT
# make test-fresh: the README's two commands on fresh machines. For each of
# Debian 12 (bookworm) and 13 (trixie): a minimal root made by debootstrap
# (minbase plus git and make, from the archive address the machine's own
# apt sources use), the tree cloned into it, then exactly `make run` (hello
# must boot and exit 0) and `make test` (its last line must say 0 failed),
# as root under chroot. Prints each step's time; exit 1 if any step failed.
#
#   tools/run/test_fresh.sh BUILD TREE
#     FRESH_ROOTS="bookworm trixie"   the releases to try
#     FRESH_KEEP=1                    keep the roots (BUILD/fresh/NAME) to look into
#
# debootstrap's downloads are kept in BUILD/fresh/NAME.tgz (a tarball made
# once per release), so a rerun starts from them in seconds. The clone is
# of TREE's HEAD: what is committed is what is tested.
set -u
# BUILD may not exist yet (a fresh clone): made here, never left as "".
mkdir -p "${1:?usage: $0 BUILD TREE}" && build=$(cd "$1" && pwd) || exit 2
tree=$(cd "${2:?usage: $0 BUILD TREE}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
roots=${FRESH_ROOTS:-bookworm trixie}
dir=$build/fresh

[ "$(id -u)" = 0 ] || { echo "test-fresh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap > /dev/null || { echo "test-fresh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
release=$(. /etc/os-release && echo "$VERSION_CODENAME")
mirror=$(sh "$here/apt_sources.sh" uri "$release") || exit 2
mkdir -p "$dir"

failed=0
report=""
say() { echo "test-fresh: $*"; }
# step ROOT NAME COMMAND...: runs it, logs to $dir/ROOT-NAME.log, times it
step() {
	r=$1 name=$2
	shift 2
	log=$dir/$r-$name.log
	t0=$(date +%s)
	say "$r: $name ..."
	"$@" > "$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	line="$r: $name: $(printf '%dm%02ds' $((secs / 60)) $((secs % 60)))"
	if [ $rc = 0 ]; then
		line="$line, ok"
	else
		line="$line, FAILED (exit $rc; log: $log)"
		tail -n 15 "$log" | sed 's/^/    | /'
	fi
	say "$line"
	report="$report
  $line"
	return $rc
}

# The root is bound onto itself, so that it is a mount point: `ip netns
# exec` (the tap tests) makes "/" rslave in the namespace it enters, which
# fails on a chroot's "/" that is not one. Everything mounted in it (proc,
# sys, dev, and /run/netns with its namespaces, which `ip netns add` binds
# and leaves) is unmounted with it, the deepest first, and nothing is
# removed while anything is still mounted under it (rm would reach into
# the host's /dev).
mounted=""
mounts_under() {
	awk -v r="$1" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts
}
unmount_root() {
	for m in $(mounts_under "$1" | sort -r); do   # the deepest first
		umount -l "$m" 2>/dev/null
	done
	[ -z "$(mounts_under "$1")" ]
}
unmount_all() {
	for m in $mounted; do
		unmount_root "$m" || say "cannot unmount everything under $m: kept"
	done
	mounted=""
}
remove_root() {
	unmount_root "$1" || { say "$1: something is still mounted under it: not removed"; return 1; }
	rm -rf --one-file-system "$1"
}
trap 'unmount_all' EXIT INT TERM

# In the root: a clean environment, as a user's login shell would have.
in_root() {
	root=$1
	shift
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c "cd /root/goro && $*" < /dev/null
}

make_root() {
	r=$1 root=$2 tgz=$dir/$1.tgz
	if [ ! -s "$tgz" ]; then
		rm -rf "$root.tarball"
		debootstrap --variant=minbase --include=git,make --make-tarball="$tgz.tmp" "$r" "$root.tarball" "$mirror" &&
			mv "$tgz.tmp" "$tgz" || return 1
		rm -rf "$root.tarball"
	fi
	debootstrap --variant=minbase --include=git,make --unpack-tarball="$tgz" "$r" "$root" "$mirror"
}

boots_hello() {
	in_root "$1" make run > "$dir/$2-make-run.out" 2>&1
	rc=$?
	cat "$dir/$2-make-run.out"
	[ $rc = 0 ] || return $rc
	grep -q "^hello from goro" "$dir/$2-make-run.out" || { echo "test-fresh: no 'hello from goro' line"; return 1; }
}

passes_tests() {
	in_root "$1" make test > "$dir/$2-make-test.out" 2>&1
	rc=$?
	cat "$dir/$2-make-test.out"
	last=$(tail -n 1 "$dir/$2-make-test.out")
	echo "test-fresh: last line: $last"
	echo "$last" | grep -Eq '^[0-9]+ passed, 0 failed' || return 1
	return $rc
}

for r in $roots; do
	root=$dir/$r
	remove_root "$root" || { failed=1; continue; }
	say "$r: from $mirror, into $root"
	if ! step "$r" debootstrap make_root "$r" "$root"; then
		failed=1
		continue
	fi
	mount --bind "$root" "$root" && mounted="$root" || { failed=1; continue; }
	mount -t proc proc "$root/proc" &&
		mount -t sysfs sys "$root/sys" &&
		mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" ||
		{ failed=1; unmount_all; continue; }
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	step "$r" clone git clone -q "$tree" "$root/root/goro" || { failed=1; unmount_all; continue; }
	# Which commit the verdicts below are for.
	say "$r: testing $(git -C "$root/root/goro" log -1 --format='%h %s')"
	step "$r" make-run boots_hello "$root" "$r" || failed=1
	step "$r" make-test passes_tests "$root" "$r" || failed=1
	unmount_all
	[ "${FRESH_KEEP:-}" = 1 ] || remove_root "$root"
done

say "times:$report"
[ $failed = 0 ] && say "ok" || say "FAILED"
exit $failed
