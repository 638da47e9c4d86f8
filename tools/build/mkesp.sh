#!/bin/sh
# SPDX-License-Identifier: MIT
# An EFI system partition as a FAT image with no partition table:
# EFI/BOOT/BOOTX64.EFI (goro's GNU-EFI loader), goro.elf and, when the
# command-line file is not empty, goro.cmdline. Used for goro-efi.img and,
# inside the USB image, by tools/build/mkusb.sh.
#
#   tools/build/mkesp.sh OUT SIZE_MB BOOTX64.EFI goro.elf goro.cmdline
set -e
[ $# -eq 5 ] || { echo "usage: $0 OUT SIZE_MB BOOTX64.EFI goro.elf goro.cmdline" >&2; exit 2; }
out=$1 size_mb=$2 loader=$3 elf=$4 cmdline=$5

rm -f "$out"
truncate -s "${size_mb}M" "$out"
mformat -i "$out" -v GORO ::
mmd -i "$out" ::/EFI ::/EFI/BOOT
mcopy -i "$out" "$loader" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$out" "$elf" ::/goro.elf
# A file holding only a newline is "no command line".
if [ -n "$(tr -d '[:space:]' < "$cmdline")" ]; then
	mcopy -i "$out" "$cmdline" ::/goro.cmdline
fi
