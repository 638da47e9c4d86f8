// SPDX-License-Identifier: MIT
// The GNU-EFI loader's boot_info -> the kernel's (boot/boot.h). Pure: the
// kernel's side (boot/boot.c) calls it once boot_efi64 (entry.asm) has
// switched to goro's GDT, page tables and boot stack; the loader's
// structure is still where it left it, in pages its memory map calls
// reserved, and is copied before anything can allocate.
//
// The loader is goro's own (boot/efi/loader.c), but the structure came
// through memory the kernel did not own: every count is brought in range,
// every string terminated, and each memory map entry held to bootinfo.h's
// rule again, so what kmain reads is the same whatever the bytes were.
#include <stdint.h>
#include <string.h>
#include "boot/boot.h"

void uefi_take(struct boot_info *bi, const struct boot_info *from)
{
    struct boot_mmap_drops drops = { 0 };
    uint32_t count;

    memcpy(bi, from, sizeof *bi);
    // The only pointer in the structure points into the loader's image.
    bi->loader = "uefi";
    bi->cmdline[BOOT_CMDLINE_MAX - 1] = 0;
    bi->notes[BOOT_NOTES_MAX - 1] = 0;
    if (bi->rsdp_len > sizeof bi->rsdp) {
        boot_note(bi, "uefi: the loader's RSDP copy claims %u bytes, more than %zu; "
                  "using %zu", bi->rsdp_len, sizeof bi->rsdp, sizeof bi->rsdp);
        bi->rsdp_len = sizeof bi->rsdp;
    }
    count = bi->mmap_count;
    if (count > BOOT_MMAP_MAX) {
        boot_note(bi, "uefi: the loader's memory map claims %u entries, more than %u; "
                  "using the first %u", count, BOOT_MMAP_MAX, BOOT_MMAP_MAX);
        count = BOOT_MMAP_MAX;
    }
    bi->mmap_count = 0;
    for (uint32_t i = 0; i < count; i++)
        boot_mmap_add(bi, &drops, from->mmap[i].base, from->mmap[i].len, from->mmap[i].type);
    boot_mmap_notes(bi, "uefi", &drops);
}
