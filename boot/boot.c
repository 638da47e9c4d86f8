// SPDX-License-Identifier: MIT
// The kernel's side of the boot parsers (boot/boot.h): the C entries that
// boot/entry.asm calls in 64-bit mode on the boot stack, and how they reach
// the loader's memory.
#include <stddef.h>
#include <stdint.h>
#include "boot/boot.h"

struct boot_info boot_info;
extern uint64_t boot_entry_tsc;

#define MB1_BOOT_MAGIC 0x2BADB002u
#define MB2_BOOT_MAGIC 0x36D76289u

// The boot page tables identity-map the first 4 GiB (entry.asm), and every
// multiboot address is 32-bit; a range past that is refused, not faulted on.
#define BOOT_MAP_LIMIT (4ull << 30)

static const void *boot_map_identity(void *ctx, uint64_t phys, size_t len)
{
    (void)ctx;
    if (phys >= BOOT_MAP_LIMIT || len > BOOT_MAP_LIMIT - phys)
        return NULL;
    return (const void *)(uintptr_t)phys;
}

// From long_entry, with the loader's magic and information address.
void boot_multiboot(uint32_t magic, uint32_t info)
{
    struct boot_info *bi = &boot_info;
    bi->entry_tsc = boot_entry_tsc;
    if (magic == MB1_BOOT_MAGIC)
        mb1_parse(bi, info, boot_map_identity, NULL);
    else if (magic == MB2_BOOT_MAGIC)
        mb2_parse(bi, info, boot_map_identity, NULL);
    else
        bi->loader = "unknown (no multiboot magic)";
    kmain(bi);
}

// From boot_efi64, with the GNU-EFI loader's structure.
void boot_uefi(const struct boot_info *loader_bi) __attribute__((noreturn));

void boot_uefi(const struct boot_info *loader_bi)
{
    uefi_take(&boot_info, loader_bi);
    kmain(&boot_info);
}
