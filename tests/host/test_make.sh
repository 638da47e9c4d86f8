#!/bin/sh
# SPDX-License-Identifier: MIT
# The Makefile's promises, tested on the host (make test runs this as
# BUILD/host/test_make):
#   - an APP_SRC app builds against "goro.h" alone and reaches no other
#     header of the tree unless APP_KERNEL_HEADERS=1;
#   - switching APP_SRC relinks, even when the new app's objects are older
#     than the image, and two apps' same-named files never share an object;
#   - an earlier APP_SRC leaves no rule behind ("gcc: fatal error: no input
#     files" from a stale extapp dependency file);
#   - DEBUG=1 in the same BUILD recompiles (the flags are part of the build);
#   - make run and make test install the packages they lack (as root,
#     without recommends, QEMU from bookworm-backports on Debian 12), or
#     print the command and fail (GORO_NO_INSTALL=1); QEMU 7.2 still runs;
#   - the link keeps boot/text_order.txt's promise: the boot core's code
#     before the APs' STARTUP, the APs' check-in path and the boot core's
#     yield and wake lie on the image's first two pages (under TCG a
#     page's first block walks every vCPU's TLB),
#     and everything the boot runs before console_init (the boot core's way
#     to its halt for the check-ins) lies before console_init: the list is
#     not stale (tools/bench/boot_blocks.py --check, one boot under QEMU).
#   - make test-fresh keeps its roots under BUILD, which it makes if missing.
# Usage: test_make.sh TREE BUILD. Builds in a scratch copy of BUILD's
# objects, so only the links run. Prints PASS/FAIL lines.
set -u
tree=$1
build=$2
# Not a sub-make of the make that runs the suite: its jobserver is not ours.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES APP_SRC DEBUG BUILD GORO_NO_INSTALL APT_ETC
scratch=$(mktemp -d /tmp/goro-test-make.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
failed=0

pass() { echo "PASS $1"; }
fail() {
	echo "FAIL $1: $2"
	[ -f "$scratch/out" ] && sed 's/^/    | /' "$scratch/out" | tail -15
	failed=1
}

# make in the tree, into the scratch build, output in $scratch/out
mk() { make -C "$tree" BUILD="$scratch/b" "$@" > "$scratch/out" 2>&1; }

# An app that registers itself under name $2, in file $1.
app() {
	mkdir -p "$(dirname "$1")"
	printf '#include "goro.h"\nstatic int m(int c, char **v) { (void)c, (void)v; return 0; }\nGORO_APP(%s, "test_make", m);\n' "$2" > "$1"
}

has_app() { grep -q "goro_app_$1\b\|[^a-z_]$1\b" "$scratch/b/goro.sym"; }

# The scratch build: BUILD's objects and stamps, copied (not linked: the
# links below rewrite files in place).
mkdir -p "$scratch/b"
for f in obj empty_ksyms.o trampoline.bin cflags.stamp objs.list; do
	[ -e "$build/$f" ] && cp -a "$build/$f" "$scratch/b/"
done

# ---- APP_SRC ----------------------------------------------------------------

app "$scratch/src/a/app.c" test_make_app_a
app "$scratch/src/b/app.c" test_make_app_b
app "$scratch/src/c.c" test_make_app_c
if mk APP_SRC="$scratch/src/a/app.c" "$scratch/b/goro.elf" && has_app test_make_app_a; then
	pass app_src_builds_the_app
else
	fail app_src_builds_the_app "the image has no test_make_app_a"
fi

# The app above includes "goro.h" and nothing else: the documented contract.
# The kernel's own headers are out of its reach unless asked for.
mkdir -p "$scratch/src/internal"
{
	printf '#include "goro.h"\n#include "kernel/sched.h"\n'
	printf 'static int m(int c, char **v) { (void)c, (void)v; return 0; }\n'
	printf 'GORO_APP(test_make_app_i, "test_make", m);\n'
} > "$scratch/src/internal/app.c"
if ! mk APP_SRC="$scratch/src/internal/app.c" "$scratch/b/goro.elf" &&
	grep -q "kernel/sched.h: No such file" "$scratch/out"; then
	pass app_src_reaches_only_goro_h
else
	fail app_src_reaches_only_goro_h "an APP_SRC app could include kernel/sched.h"
fi
if mk APP_SRC="$scratch/src/internal/app.c" APP_KERNEL_HEADERS=1 "$scratch/b/goro.elf" &&
	has_app test_make_app_i; then
	pass app_src_kernel_headers_when_asked
else
	fail app_src_kernel_headers_when_asked "APP_KERNEL_HEADERS=1 did not let it include kernel/sched.h"
fi

# b's source is older than everything built so far, and named like a's.
touch -d '2001-01-01' "$scratch/src/b/app.c"
if mk APP_SRC="$scratch/src/b/app.c" "$scratch/b/goro.elf" && has_app test_make_app_b &&
	! has_app test_make_app_a; then
	pass app_src_switch_relinks_older_same_named_source
else
	fail app_src_switch_relinks_older_same_named_source "after APP_SRC=b/app.c the image does not hold b's app alone"
fi

# A directory as APP_SRC, then none: the image follows.
if mk APP_SRC="$scratch/src" "$scratch/b/goro.elf" 2>/dev/null && has_app test_make_app_c; then
	pass app_src_directory
else
	fail app_src_directory "APP_SRC=dir did not build its c.c"
fi
if mk "$scratch/b/goro.elf" && ! has_app test_make_app_c && ! has_app test_make_app_b; then
	pass no_app_src_drops_the_app
else
	fail no_app_src_drops_the_app "without APP_SRC the image still holds an external app"
fi

# The apps' dependency files are still in the scratch build: no rule may
# come back from them, with or without APP_SRC. (Make used to "remake"
# app.d from app.d.o through the extapp rule once the new APP_SRC was
# newer than it: "gcc: fatal error: no input files".)
rm -f "$scratch/src/a/app.c"
touch "$scratch/src/c.c"
if mk "$scratch/b/goro.elf" && ! grep -q "no input files\|No rule to make" "$scratch/out" &&
	mk APP_SRC="$scratch/src/c.c" "$scratch/b/goro.elf" && ! grep -q "no input files" "$scratch/out"; then
	pass no_stale_rules_from_earlier_apps
else
	fail no_stale_rules_from_earlier_apps "a build after earlier APP_SRCs failed or complained"
fi
if mk APP_SRC="$scratch/src/b/app.c" "$scratch/b/goro.elf" &&
	! grep -q "no input files" "$scratch/out" &&
	mk APP_SRC="$scratch/src/b/app.c" "$scratch/b/goro.elf" && ! grep -q "LD\|CC" "$scratch/out"; then
	pass app_src_build_is_then_up_to_date
else
	fail app_src_build_is_then_up_to_date "a second identical APP_SRC build still had work to do"
fi

# ---- flags ------------------------------------------------------------------

if make -C "$tree" BUILD="$scratch/b" DEBUG=1 -n "$scratch/b/goro.elf" > "$scratch/out" 2>&1 &&
	grep -q -- "-DGORO_DEBUG.*kernel/proc.c" "$scratch/out"; then
	pass debug_flag_change_recompiles
else
	fail debug_flag_change_recompiles "make DEBUG=1 -n in a normal BUILD would not recompile kernel/proc.c"
fi

# ---- packages: make run and make test install what they need ------------------

# A PATH with every command this machine has but QEMU, an apt-get that only
# leaves a mark, and a copy of apt's sources without bookworm-backports.
bin="$scratch/bin"
mkdir -p "$bin"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
	for p in "$d"/*; do
		c=${p##*/}
		[ -e "$bin/$c" ] || ln -s "$p" "$bin/$c"
	done
done
rm -f "$bin/qemu-system-x86_64" "$bin/apt-get"
printf '#!/bin/sh\necho "apt-get $*" >> %s/apt-called\n' "$scratch" > "$bin/apt-get"
chmod +x "$bin/apt-get"
mkdir -p "$scratch/apt/sources.list.d"
uri=$(sh "$tree/tools/apt_sources.sh" uri "$(. /etc/os-release && echo "$VERSION_CODENAME")" 2>/dev/null ||
	echo http://archive.invalid/debian)
printf 'deb %s bookworm main\n' "$uri" > "$scratch/apt/sources.list"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")

rm -f "$scratch/apt-called"
if PATH="$bin" GORO_NO_INSTALL=1 APT_ETC="$scratch/apt" mk deps-for-run; then
	fail deps_missing_fails_with_the_command "deps-for-run passed without qemu"
elif ! grep -q "qemu-system-x86: boots goro" "$scratch/out" ||
	! grep -q "apt-get install -y --no-install-recommends.* qemu-system-x86" "$scratch/out"; then
	fail deps_missing_fails_with_the_command "the message does not say what is missing, why, and the command"
elif [ -e "$scratch/apt-called" ]; then
	fail deps_missing_fails_with_the_command "GORO_NO_INSTALL=1 still ran apt-get"
else
	pass deps_missing_fails_with_the_command
fi

# As root, make run installs QEMU itself, without recommends; on Debian 12
# from bookworm-backports, added to apt's sources from their own address.
if [ "$(id -u)" = 0 ]; then
	rm -f "$scratch/apt-called"
	PATH="$bin" APT_ETC="$scratch/apt" mk deps-for-run
	if ! grep -q "^apt-get install -y --no-install-recommends.* qemu-system-x86" "$scratch/apt-called" 2>/dev/null; then
		fail deps_installed_by_make_run "make run as root did not ask apt-get for qemu-system-x86 without recommends"
	elif ! grep -q "installing what it needs.*" "$scratch/out" || ! grep -q "qemu-system-x86: boots goro" "$scratch/out"; then
		fail deps_installed_by_make_run "no line saying what is installed and why"
	elif [ "$codename" = bookworm ] && { ! grep -q -- "-t bookworm-backports.* qemu-system-x86" "$scratch/apt-called" ||
		! grep -qx "deb $uri bookworm-backports main" "$scratch/apt/sources.list.d/goro-bookworm-backports.list"; }; then
		fail deps_installed_by_make_run "on Debian 12, QEMU not from bookworm-backports at $uri"
	else
		pass deps_installed_by_make_run
	fi
else
	echo "SKIP deps_installed_by_make_run: not root"
fi

# QEMU 7.2 (Debian 12's own) with GORO_NO_INSTALL=1: make run boots with
# it; make test wants the project's QEMU and says so.
printf '#!/bin/sh\necho "QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u13)"\n' > "$bin/qemu-system-x86_64"
chmod +x "$bin/qemu-system-x86_64"
if ! PATH="$bin" GORO_NO_INSTALL=1 mk deps-for-run; then
	fail deps_qemu72_runs "deps-for-run refused QEMU 7.2"
elif PATH="$bin" GORO_NO_INSTALL=1 mk deps-for-test || ! grep -q "7.2.15 is older than 10.0" "$scratch/out"; then
	fail deps_qemu72_runs "deps-for-test took QEMU 7.2, or did not say why not"
else
	pass deps_qemu72_runs
fi
rm -f "$bin/qemu-system-x86_64"

if make -C "$tree" -n run test soak > "$scratch/out" 2>&1 && [ "$(grep -c "deps.sh --auto" "$scratch/out")" = 3 ] &&
	make -C "$tree" -n deps deps-bench > "$scratch/out" 2>&1 && [ "$(grep -c "deps.sh --install" "$scratch/out")" = 2 ] &&
	grep -q "^make test" "$tree/.ci/run"; then
	pass deps_step_first_in_each_target
else
	fail deps_step_first_in_each_target "make run, test and soak do not start with tools/deps.sh --auto"
fi

# make test-fresh in a fresh clone, where BUILD does not exist yet: the
# roots go under BUILD/fresh, never under /fresh. FRESH_ROOTS=" " makes no
# root; the script stops early when not root or without debootstrap, after
# BUILD is settled.
FRESH_ROOTS=" " sh "$tree/tools/run/test_fresh.sh" "$scratch/nobuild" "$tree" > "$scratch/out" 2>&1
if [ -d "$scratch/nobuild" ]; then
	pass test_fresh_makes_its_build_dir
else
	fail test_fresh_makes_its_build_dir "tools/run/test_fresh.sh did not make a missing BUILD"
fi

# ---- the boot's first two pages -----------------------------------------------

# BUILD's image (the scratch links above may hold a test app). Everything the
# order list puts before boot_after_startup runs before the STARTUP, on an
# AP's way to its check-in, or in the boot core's yield and wake after it;
# the code before the STARTUP fills more than a page, so the boot core walks
# the second before the APs start, and a function past it costs a walk of
# every vCPU's TLB while they come up (docs/boot.md).
head_max=8192
sym_addr() { awk -v n="$1" '$3 == n { print $1; exit }' "$build/goro.sym"; }
img=$(sym_addr _image_start)
after=$(sym_addr boot_after_startup)
if [ -z "$img" ] || [ -z "$after" ]; then
	fail boot_first_pages "no _image_start or boot_after_startup in $build/goro.sym"
elif [ $((0x$after - 0x$img)) -le $head_max ]; then
	pass boot_first_pages
else
	# Each function of the head that ends past the page, the first of them
	# the one that crossed it (nm -S: address, size, type, name).
	crossed=$(nm -n -S "$build/goro.elf" | while read -r a s t n; do
		case $t in [tT]) ;; *) continue ;; esac
		if [ $((0x$a)) -lt $((0x$after)) ] && [ $((0x$a + 0x$s - 0x$img)) -gt $head_max ]; then
			printf ' %s (%d-%d)' "$n" $((0x$a - 0x$img)) $((0x$a + 0x$s - 0x$img))
		fi
	done)
	fail boot_first_pages "the code before the STARTUP, the APs' check-in and the boot core's yield and wake end $((0x$after - 0x$img)) bytes into the image, past its first two pages; past byte $head_max:$crossed: shrink them, or move what no longer runs there out of boot/text_order.txt's head"
fi

# The image's loaded span, .bss included: the GNU-EFI loader places it at its
# link address, 1 MiB, and OVMF on QEMU holds memory from 8 MiB up (an image
# ending at 24 MiB, 1024 cores' arrays in .bss, did not boot). Per-core
# arrays sized by MAX_CPUS belong in memory allocated for the cores found.
span_max=$((7 << 20))
end=$(sym_addr _image_end)
if [ -z "$img" ] || [ -z "$end" ]; then
	fail image_span "no _image_start or _image_end in $build/goro.sym"
elif [ $((0x$end - 0x$img)) -le $span_max ]; then
	pass image_span
else
	largest=$(nm --size-sort -S -r "$build/goro.elf" | awk '$3 ~ /^[bB]$/ { print $4, $2 }' | head -8 |
		while read -r name size; do printf '%s %d KiB; ' "$name" $((0x$size / 1024)); done)
	fail image_span "the image spans $((0x$end - 0x$img)) bytes, past $span_max; the largest in .bss: $largest"
fi

# The APs' check-in path (tools/bench/boot_blocks.py's AP_CHECK_IN) must be in the
# order list's head: a function left out lands elsewhere in .text, and the
# first AP to reach it walks every vCPU's TLB while the others wait.
far=""
names=$(sed -n 's/^AP_CHECK_IN = (\(.*\))$/\1/p' "$tree/tools/bench/boot_blocks.py" |
	tr -d '"' | tr ',' ' ')
for f in $names; do
	a=$(sym_addr "$f")
	if [ -z "$a" ] || [ -z "$after" ] || [ $((0x$a)) -ge $((0x$after)) ]; then
		far="$far $f"
	fi
done
if [ -z "$names" ]; then
	fail ap_check_in_in_boot_head "no AP_CHECK_IN in tools/bench/boot_blocks.py"
elif [ -z "$far" ]; then
	pass ap_check_in_in_boot_head
else
	fail ap_check_in_in_boot_head "not before boot_after_startup in $build/goro.sym:$far (add them to boot/text_order.txt after the boot core's last function before the STARTUP)"
fi

# The list must be current for the boot core's whole way to its halt for the
# APs' check-ins, not only for the first page: a function new on that way
# and missing from the list is linked past everything the list places, and
# at 64 vCPUs its page's first block walks every vCPU's TLB (0.25-0.6 ms)
# while the APs come up. One boot at 8 vCPUs, its translations logged.
if out=$(python3 "$tree/tools/bench/boot_blocks.py" --check "$build/goro.elf" 2>&1); then
	pass boot_wait_path_ordered
else
	fail boot_wait_path_ordered "$(printf '%s\n' "$out" | tail -1)"
fi

exit $failed
