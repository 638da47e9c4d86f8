#!/bin/sh
# SPDX-License-Identifier: MIT
# Reads the machine's own apt sources (/etc/apt/sources.list and
# sources.list.d/, one-line *.list and deb822 *.sources files), so that no
# archive address is written in the tree: the Debian archive this machine
# uses is the one goro's tools use too.
#
#   tools/apt_sources.sh entries           every "TYPE URI SUITE" apt has on, one a line
#   tools/apt_sources.sh uri SUITE         the URI of the first deb entry with SUITE
#   tools/apt_sources.sh has SUITE         exit 0 when a deb entry carries SUITE
#   tools/apt_sources.sh ensure SUITE      adds SUITE (e.g. bookworm-backports, as
#                                          root) with the URI of its release's entry
#                                          (bookworm) when apt lacks it
#
# APT_ETC (default /etc/apt) reads another root's sources.
set -e
etc=${APT_ETC:-/etc/apt}

# One-line format: deb [opts] URI SUITE COMPONENT...
oneline() {
	awk '$1 == "deb" || $1 == "deb-src" {
		i = 2
		if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
		print $1, $i, $(i + 1)
	}' "$@"
}

# deb822: stanzas of "Field: value" lines, separated by blank lines; one
# stanza may name several types, URIs and suites. Enabled: no turns it off.
deb822() {
	awk 'BEGIN { RS = ""; FS = "\n" }
	{
		types = uris = suites = ""; enabled = "yes"
		for (i = 1; i <= NF; i++) {
			line = $i
			if (line ~ /^#/) continue
			k = tolower(substr(line, 1, index(line, ":") - 1))
			v = substr(line, index(line, ":") + 1)
			if (k == "types") types = v
			else if (k == "uris") uris = v
			else if (k == "suites") suites = v
			else if (k == "enabled") enabled = v
		}
		gsub(/[ \t]/, "", enabled)
		if (tolower(enabled) == "no") next
		nt = split(types, T, " "); nu = split(uris, U, " "); ns = split(suites, S, " ")
		for (a = 1; a <= nt; a++) for (b = 1; b <= nu; b++) for (c = 1; c <= ns; c++)
			print T[a], U[b], S[c]
	}' "$@"
}

entries() {
	[ -f "$etc/sources.list" ] && oneline "$etc/sources.list"
	for f in "$etc"/sources.list.d/*.list; do
		[ -f "$f" ] && oneline "$f"
	done
	for f in "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] && deb822 "$f"
	done
	return 0
}

uri_of() {
	entries | awk -v s="$1" '$1 == "deb" && $3 == s { print $2; found = 1; exit } END { exit !found }'
}

case "$1" in
entries)
	entries ;;
uri)
	[ -n "$2" ] || { echo "usage: $0 uri SUITE" >&2; exit 2; }
	uri_of "$2" || { echo "apt-sources: no deb entry for $2 in $etc" >&2; exit 1; } ;;
has)
	[ -n "$2" ] || { echo "usage: $0 has SUITE" >&2; exit 2; }
	uri_of "$2" > /dev/null ;;
ensure)
	[ -n "$2" ] || { echo "usage: $0 ensure SUITE" >&2; exit 2; }
	uri_of "$2" > /dev/null && exit 0
	release=${2%%-*}
	uri=$(uri_of "$release") || {
		echo "apt-sources: cannot add $2: no deb entry for $release in $etc to take the archive from" >&2
		exit 1
	}
	file=$etc/sources.list.d/goro-$2.list
	echo "apt-sources: adding $2 from $uri to apt's sources ($file)"
	echo "deb $uri $2 main" > "$file" ;;
*)
	echo "usage: $0 entries | uri SUITE | has SUITE | ensure SUITE" >&2
	exit 2 ;;
esac
