#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages that building and testing goro need.
#
#   tools/deps.sh --check     (make run, make test): silent when all is
#                             there; otherwise names the missing packages
#                             and how to install them, and fails. Never
#                             installs anything.
#   tools/deps.sh --install   (make deps, .ci/run, GORO_INSTALL_DEPS=1):
#                             installs the missing ones with apt-get (as
#                             root; otherwise prints the command and fails).
#
# Checks the files and commands themselves rather than package names, so a
# tree built on another distro with the tools in place passes too.
set -e

. "$(dirname "$0")/deps-lib.sh"
deps_mode "$1"

missing=""
need() {
	case " $missing " in
	*" $1 "*) ;;
	*) missing="$missing $1" ;;
	esac
}
have_cmd() { command -v "$1" >/dev/null 2>&1; }

have_cmd qemu-system-x86_64 || need qemu-system-x86
have_cmd nasm || need nasm
have_cmd grub-mkrescue || need grub-common
have_cmd xorriso || need xorriso
have_cmd mformat || need mtools
# grub-mkrescue builds a BIOS and a UEFI image only from the module dirs
# present, and silently leaves out the other, so check both.
[ -d /usr/lib/grub/i386-pc ] || need grub-pc-bin
[ -d /usr/lib/grub/x86_64-efi ] || need grub-efi-amd64-bin
[ -f /usr/share/OVMF/OVMF_CODE_4M.fd ] && [ -f /usr/share/OVMF/OVMF_VARS_4M.fd ] || need ovmf
[ -f /usr/lib/crt0-efi-x86_64.o ] || need gnu-efi
# make lint
have_cmd clang-tidy || need clang-tidy
have_cmd cppcheck || need cppcheck
# The fuzz harnesses (tests/fuzz/): clang and its libFuzzer runtime.
have_cmd clang-14 || need clang-14
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need libclang-rt-14-dev
# make fuzz-coverage
have_cmd llvm-cov-14 || need llvm-14

deps_finish deps goro "" "(GORO_INSTALL_DEPS=1 lets make run and make test install them themselves)"

