// SPDX-License-Identifier: MIT
// The kernel's side of the boot parsers (boot/boot.h): the C entries that
// boot/entry.asm calls in 64-bit mode on the boot stack, and how they reach
// the loader's memory.
#include <stddef.h>
#include <stdint.h>
#include "boot/boot.h"
#include "lib/panic.h"
#include "lib/string.h"

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

// A multiboot 1 parse waits for the APs' start (boot_parse): under TCG its
// 55 translated blocks were a third of the boot before the first STARTUP.
static uint32_t mb1_info;                   // its information; 0: parsed already (or not multiboot 1)
static struct boot_kept kept;               // the loader's bytes under the APs' start-up page

static const void *boot_map_kept(void *ctx, uint64_t phys, size_t len)
{
    return boot_kept_map(&kept, boot_map_identity(ctx, phys, len), phys, len);
}

// The multiboot 1 command line as the loader left it, read in place for
// the words kmain needs before the parse; "" when there is none, or no NUL
// within BOOT_CMDLINE_MAX bytes below the identity map's limit (the parse
// then says what is wrong with it). Few blocks on purpose: it runs before
// the first STARTUP.
const char *boot_early_cmdline(const struct boot_info *bi)
{
    if (!mb1_info)
        return bi->cmdline;
    const uint32_t *mi = (const uint32_t *)(uintptr_t)mb1_info;   // flags at 0, cmdline at 16
    if (mb1_info > BOOT_MAP_LIMIT - 20 || !(mi[0] & 4) || mi[4] > BOOT_MAP_LIMIT - BOOT_CMDLINE_MAX)
        return "";
    const char *s = (const char *)(uintptr_t)mi[4];
    for (size_t n = 0; n < BOOT_CMDLINE_MAX; n++)
        if (!s[n])
            return s;
    return "";
}

void boot_keep(uint64_t phys, uint64_t len)
{
    if (!mb1_info || kept.len)
        return;                             // parsed already, or kept once (the first start writes the page)
    ASSERT(len <= BOOT_KEPT_MAX && phys + len <= BOOT_MAP_LIMIT);
    memcpy(kept.bytes, (const void *)(uintptr_t)phys, (size_t)len);
    kept.phys = phys;
    kept.len = (uint32_t)len;
}

void boot_parse(struct boot_info *bi)
{
    if (!mb1_info)
        return;
    mb1_parse(bi, mb1_info, boot_map_kept, NULL);
    mb1_info = 0;
}

// From long_entry, with the loader's magic and information address.
void boot_multiboot(uint32_t magic, uint32_t info)
{
    struct boot_info *bi = &boot_info;
    bi->entry_tsc = boot_entry_tsc;
    if (magic == MB1_BOOT_MAGIC && info) {
        bi->loader = "multiboot1";
        mb1_info = info;                    // parsed by boot_parse, after the APs' start
    } else if (magic == MB1_BOOT_MAGIC) {
        mb1_parse(bi, info, boot_map_identity, NULL);
    } else if (magic == MB2_BOOT_MAGIC) {
        mb2_parse(bi, info, boot_map_identity, NULL);
    } else {
        bi->loader = "unknown (no multiboot magic)";
    }
    kmain(bi);
}

// From boot_efi64, with the GNU-EFI loader's structure.
void boot_uefi(const struct boot_info *loader_bi) __attribute__((noreturn));

void boot_uefi(const struct boot_info *loader_bi)
{
    uefi_take(&boot_info, loader_bi);
    kmain(&boot_info);
}
