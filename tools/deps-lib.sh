# SPDX-License-Identifier: MIT
# What tools/deps.sh and tools/deps-bench.sh share, sourced by both: the
# --check/--install switch, and what becomes of the packages the caller
# found missing ($missing: each name with a space before it).

deps_mode() {
	case "${1:---check}" in
	--check) mode=check ;;
	--install) mode=install ;;
	*) echo "usage: $0 [--check|--install]" >&2; exit 2 ;;
	esac
}

# deps_finish TARGET WHO APT_OPTS [HINT]: with nothing missing, exits 0.
# --check names the missing packages and how to install them (make TARGET,
# or apt-get) and fails; --install installs them with apt-get, as root.
deps_finish() {
	target=$1 who=$2 opts=$3 hint=$4
	[ -z "$missing" ] && exit 0
	if [ "$mode" = check ]; then
		echo "$target: $who needs these Debian packages, which are missing:$missing" >&2
		echo "$target: install them with 'make $target' (as root), or:" >&2
		echo "$target:   sudo apt-get update && sudo apt-get install -y$opts$missing" >&2
		if [ -n "$hint" ]; then
			echo "$target: $hint" >&2
		fi
		exit 1
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "$target: missing:$missing; as root, run: apt-get update && apt-get install -y$opts$missing" >&2
		exit 1
	fi
	echo "$target: installing$missing"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y$opts $missing
}
