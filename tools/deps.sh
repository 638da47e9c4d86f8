#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages a make target needs (tools/deps.list, the one list):
# checked, and installed when missing.
#
#   tools/deps.sh [MODE] TARGET...
#     --auto      (make run, make test, make soak, ...): silent when all is
#                 there; as root installs what is missing, saying what and
#                 why; otherwise, or with GORO_NO_INSTALL=1, prints the
#                 exact command that installs it and fails.
#     --check     never installs: names what is missing and the command.
#     --install   (make deps, make deps-bench): as --auto, but installs even
#                 with GORO_NO_INSTALL=1.
#     --packages  prints the packages TARGET needs, one a line.
#
# What is checked is the command, file or module itself (tools/deps.list's
# CHECKS), so a machine that has the tools from elsewhere passes too. On
# Debian 12 the entries marked @backports (QEMU and its BIOS) come from
# bookworm-backports; when apt's sources lack that suite, it is added with
# the archive address the machine's own sources use (tools/apt_sources.sh).
set -e

here=$(dirname "$0")
list=$here/deps.list

mode=auto
case "$1" in
--auto | --check | --install | --packages) mode=${1#--}; shift ;;
-*) echo "usage: $0 [--auto|--check|--install|--packages] TARGET..." >&2; exit 2 ;;
esac
[ $# -gt 0 ] || { echo "usage: $0 [--auto|--check|--install|--packages] TARGET..." >&2; exit 2; }
targets="$*"
who="make $(echo "$targets" | sed 's/ /, make /g')"

codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")

# The Python the modules are checked with: Debian's (python3-matplotlib
# belongs to it), which need not be the first python3 on PATH.
pycheck=python3
[ -x /usr/bin/python3 ] && pycheck=/usr/bin/python3

# applies TARGETS: does this line's comma-separated list name one of ours?
applies() {
	for t in $(echo "$1" | tr ',' ' '); do
		for w in $targets; do
			[ "$t" = "$w" ] && return 0
		done
	done
	return 1
}

# version_at_least HAVE WANT
version_at_least() {
	[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# check ONE: succeeds when what it names is there; otherwise prints why not.
# A|B: either will do (a file that moved between Debian releases).
check() {
	case "$1" in
	*'|'*)
		for alt in $(echo "$1" | tr '|' ' '); do
			check "$alt" > /dev/null && return 0
		done
		echo "none of $1"
		return 1 ;;
	py:*)
		"$pycheck" -c "import ${1#py:}" 2>/dev/null || { echo "no Python module ${1#py:}"; return 1; } ;;
	/*)
		# a glob: the first match, if any, exists
		set -- $1
		[ -e "$1" ] || { echo "no $1"; return 1; } ;;
	*'>='*)
		cmd=${1%%>=*} want=${1#*>=}
		command -v "$cmd" >/dev/null 2>&1 || { echo "no $cmd"; return 1; }
		have=$("$cmd" --version 2>/dev/null | head -n 1 | grep -o '[0-9][0-9]*\.[0-9][0-9.]*' | head -n 1)
		if [ -z "$have" ] || ! version_at_least "$have" "$want"; then
			echo "$cmd ${have:-of unknown version} is older than $want"
			return 1
		fi ;;
	*)
		command -v "$1" >/dev/null 2>&1 || { echo "no $1"; return 1; } ;;
	esac
}

# scan: sets $missing (package names, each once, @backports kept), $base
# (base programs missing: nothing to install), and writes the reasons.
scan() {
	missing="" base="" reasons=""
	while read -r pkg tlist checks why; do
		case "$pkg" in '' | '#'*) continue ;; esac
		applies "$tlist" || continue
		if [ "$mode" = packages ]; then
			[ "$pkg" != - ] && echo "${pkg%@backports}"
			continue
		fi
		for c in $(echo "$checks" | tr ',' ' '); do
			if ! r=$(check "$c"); then
				if [ "$pkg" = - ]; then
					base="$base $c"
				else
					case " $missing " in *" $pkg "*) ;; *) missing="$missing $pkg" ;; esac
					reasons="$reasons
  ${pkg%@backports}: $why ($r)"
				fi
				break
			fi
		done
	done < "$list"
}

# The apt-get line(s) for $missing: plain packages, and on Debian 12 the
# @backports ones from bookworm-backports (with the suite, from its own
# line, when apt's sources lack it).
plain="" bpo=""
split_missing() {
	plain="" bpo=""
	for p in $missing; do
		case "$p" in
		*@backports)
			if [ "$codename" = bookworm ]; then bpo="$bpo ${p%@backports}"; else plain="$plain ${p%@backports}"; fi ;;
		*) plain="$plain $p" ;;
		esac
	done
}

opts="-y --no-install-recommends"

print_command() {
	echo "$who: as root:" >&2
	if [ -n "$bpo" ] && ! sh "$here/apt_sources.sh" has bookworm-backports; then
		uri=$(sh "$here/apt_sources.sh" uri bookworm) || uri=URI-OF-YOUR-DEBIAN-MIRROR
		echo "$who:   echo 'deb $uri bookworm-backports main' > /etc/apt/sources.list.d/bookworm-backports.list" >&2
	fi
	line="apt-get update"
	[ -n "$plain" ] && line="$line && apt-get install $opts$plain"
	[ -n "$bpo" ] && line="$line && apt-get install $opts -t bookworm-backports$bpo"
	echo "$who:   $line" >&2
}

scan
[ "$mode" = packages ] && exit 0
if [ -n "$base" ]; then
	echo "$who: the base system lacks:$base (every Debian has them; is this one?)" >&2
	exit 1
fi
[ -z "$missing" ] && exit 0
split_missing

if [ "$mode" = check ] || [ "$(id -u)" != 0 ] || { [ "$mode" = auto ] && [ "${GORO_NO_INSTALL:-}" = 1 ]; }; then
	echo "$who: these Debian packages are missing or too old:$reasons" >&2
	print_command
	if [ "$mode" = auto ] && [ "${GORO_NO_INSTALL:-}" = 1 ]; then
		echo "$who: GORO_NO_INSTALL=1: nothing installed" >&2
	elif [ "$mode" != check ]; then
		echo "$who: (run as root, make installs them itself)" >&2
	fi
	exit 1
fi

echo "$who: installing what it needs from Debian, without recommended extras:$reasons"
if [ -n "$bpo" ]; then
	sh "$here/apt_sources.sh" ensure bookworm-backports
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
[ -z "$plain" ] || apt-get install $opts $plain
[ -z "$bpo" ] || apt-get install $opts -t bookworm-backports $bpo
# What apt installed must now pass the same checks.
scan
if [ -n "$missing" ]; then
	echo "$who: still missing after apt-get install:$reasons" >&2
	exit 1
fi
echo "$who: installed$plain$bpo"
