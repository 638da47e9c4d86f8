#!/bin/sh
# SPDX-License-Identifier: MIT
# The image to dd onto a USB stick: grub-mkrescue's hybrid ISO (the MBR
# code, El Torito for BIOS, a GPT whose EFI partition is /efi.img) with
# /efi.img replaced by an ESP that holds goro's GNU-EFI loader as
# EFI/BOOT/BOOTX64.EFI and GRUB's EFI binary beside it as
# EFI/BOOT/GRUBX64.EFI. A BIOS machine starts GRUB, which boots goro
# through multiboot2; a UEFI machine starts the GNU-EFI loader.
#
#   tools/build/mkusb.sh OUT goro.iso BOOTX64.EFI goro.elf goro.cmdline WORKDIR
#
# The command line goes into the ESP's goro.cmdline (the UEFI path) and
# onto GRUB's multiboot2 line in the ISO's grub.cfg (the BIOS path).
#
# xorriso cannot resize the partition in place, so the ISO's tree is
# extracted into WORKDIR and the image is mastered again with the ISO's
# own boot equipment. The ESP stays under 32 MiB, El Torito's limit on a
# boot image.
set -e
[ $# -eq 6 ] || {
	echo "usage: $0 OUT goro.iso BOOTX64.EFI goro.elf goro.cmdline WORKDIR" >&2
	exit 2
}
out=$1 iso=$2 loader=$3 elf=$4 cmdline=$5 work=$6
esp_mb=16
here=$(dirname "$0")

# The extracted tree is read-only, as the ISO's files were.
if [ -d "$work" ]; then chmod -R u+w "$work"; rm -rf "$work"; fi
mkdir -p "$work"
log=$work/xorriso.log
xorriso -osirrox on -indev "$iso" -extract / "$work/tree" 2> "$log"
chmod -R u+w "$work/tree"
line=$(head -n 1 "$cmdline")
if [ -n "$line" ]; then
	awk -v line="$line" '$1 == "multiboot2" { print "    multiboot2 /boot/goro.elf " line; next } { print }' \
		"$work/tree/boot/grub/grub.cfg" > "$work/grub.cfg"
	mv "$work/grub.cfg" "$work/tree/boot/grub/grub.cfg"
fi
mcopy -i "$work/tree/efi.img" ::/EFI/BOOT/BOOTX64.EFI "$work/GRUBX64.EFI"
sh "$here/mkesp.sh" "$work/esp.img" "$esp_mb" "$loader" "$elf" "$cmdline"
mcopy -i "$work/esp.img" "$work/GRUBX64.EFI" ::/EFI/BOOT/GRUBX64.EFI
mv "$work/esp.img" "$work/tree/efi.img"
xorriso -as mkisofs -o "$out.tmp" -V GORO -r \
	--grub2-mbr --interval:local_fs:0s-15s:zero_mbrpt,zero_gpt,zero_apm:"$iso" \
	--protective-msdos-label -partition_cyl_align off -partition_offset 0 \
	-partition_hd_cyl 64 -partition_sec_hd 32 -apm-block-size 2048 \
	-efi-boot-part --efi-boot-image -c /boot.catalog \
	-b /boot/grub/i386-pc/eltorito.img -no-emul-boot -boot-load-size 4 \
	-boot-info-table --grub2-boot-info \
	-eltorito-alt-boot -e /efi.img -no-emul-boot \
	"$work/tree" 2>> "$log" || { cat "$log"; exit 1; }
mv "$out.tmp" "$out"
