// SPDX-License-Identifier: MIT
// The GNU-EFI loader's boot_info -> the kernel's. boot_efi64 (entry.asm)
// has switched to goro's GDT, page tables and boot stack; the loader's
// structure is still where it left it, in pages its memory map calls
// reserved, and is copied before anything can allocate.
#include <stdint.h>
#include "boot/bootinfo.h"
#include "lib/string.h"

void boot_uefi(const struct boot_info *loader_bi) __attribute__((noreturn));

void boot_uefi(const struct boot_info *loader_bi)
{
    memcpy(&boot_info, loader_bi, sizeof boot_info);
    // The only pointer in the structure points into the loader's image.
    boot_info.loader = "uefi";
    boot_info.cmdline[BOOT_CMDLINE_MAX - 1] = 0;
    if (boot_info.mmap_count > BOOT_MMAP_MAX)
        boot_info.mmap_count = BOOT_MMAP_MAX;
    kmain(&boot_info);
}
