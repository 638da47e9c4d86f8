// SPDX-License-Identifier: MIT
// The kernel's side of the boot parsers (boot/boot.h): the C entries that
// boot/entry.asm calls in 64-bit mode on the boot stack, and how they reach
// the loader's memory.
#include <stdbool.h>
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
static bool mb1_pending;                    // boot_parse has mb1_info to parse
static uint32_t mb1_info;
static struct boot_kept kept;               // the loader's bytes under the APs' start-up page

static const void *boot_map_kept(void *ctx, uint64_t phys, size_t len)
{
    return boot_kept_map(&kept, boot_map_identity(ctx, phys, len), phys, len);
}

// Before the parse: the multiboot 1 command line's first BOOT_CMDLINE_MAX
// - 1 bytes as the loader left them (the path first: kmain only looks for
// words), copied so that they outlive the APs' start-up page; "" when
// there is none. Few blocks on purpose: it runs before the first STARTUP.
const char *boot_early_cmdline(const struct boot_info *bi)
{
    static char line[BOOT_CMDLINE_MAX];
    if (!mb1_pending)
        return bi->cmdline;
    const uint32_t *mi = boot_map_identity(NULL, mb1_info, 20);     // flags at 0, cmdline at 16
    size_t n = 0, max = 0;
    const char *s = NULL;
    if (mi && (mi[0] & 4)) {
        max = BOOT_MAP_LIMIT - mi[4] < sizeof line - 1 ? (size_t)(BOOT_MAP_LIMIT - mi[4]) : sizeof line - 1;
        s = boot_map_identity(NULL, mi[4], max);
    }
    while (s && n < max && s[n]) {
        line[n] = s[n];
        n++;
    }
    line[n] = 0;
    return line;
}

// For boot_take_top: whether the usable range [base, base + len) holds
// want bytes above floor and below BOOT_MAP_LIMIT higher than *best.
static void take_from(uint64_t base, uint64_t len, uint64_t floor, uint64_t want, uint64_t *best)
{
    uint64_t end = len > BOOT_MAP_LIMIT || base >= BOOT_MAP_LIMIT - len ? BOOT_MAP_LIMIT : base + len;
    end &= ~0xFFFull;
    uint64_t lo = base > floor ? base : floor;
    if (end > lo && end - lo >= want && end - want > *best)
        *best = end - want;
}

uint64_t boot_take_top(const struct boot_info *bi, uint64_t floor, uint64_t len)
{
    uint64_t best = 0;
    if (!mb1_pending) {
        for (uint32_t i = 0; i < bi->mmap_count; i++)
            if (boot_mmap_usable(&bi->mmap[i]))
                take_from(bi->mmap[i].base, bi->mmap[i].len, floor, len, &best);
        return best;
    }
    // The multiboot 1 map (flags bit 6: its length at 44, address at 48),
    // entries of size (excluding itself), base, length, type. The taken
    // memory starts above the information and its map.
    const uint32_t *mi = boot_map_identity(NULL, mb1_info, 52);
    if (!mi || !(mi[0] & (1u << 6)))
        return 0;
    const uint8_t *m = boot_map_identity(NULL, mi[12], mi[11]);
    uint64_t above = (uint64_t)mi[12] + mi[11] > mb1_info + 4096ull ? (uint64_t)mi[12] + mi[11] : mb1_info + 4096ull;
    floor = above > floor ? above : floor;
    for (uint32_t off = 0; m && off + 24 <= mi[11];) {
        uint32_t size, type;
        uint64_t base, n;
        memcpy(&size, m + off, 4);
        memcpy(&base, m + off + 4, 8);
        memcpy(&n, m + off + 12, 8);
        memcpy(&type, m + off + 20, 4);
        if (type == BOOT_MEM_USABLE && n)
            take_from(base, n, floor, len, &best);
        off += size + 4;
    }
    return best;
}

void boot_keep(uint64_t phys, uint64_t len)
{
    if (!mb1_pending || kept.len)
        return;                             // parsed already, or kept once (the first start writes the page)
    ASSERT(len <= BOOT_KEPT_MAX && phys + len <= BOOT_MAP_LIMIT);
    memcpy(kept.bytes, (const void *)(uintptr_t)phys, (size_t)len);
    kept.phys = phys;
    kept.len = (uint32_t)len;
}

void boot_parse(struct boot_info *bi)
{
    if (!mb1_pending)
        return;
    mb1_parse(bi, mb1_info, boot_map_kept, NULL);
    mb1_pending = false;
}

// From long_entry, with the loader's magic and information address.
void boot_multiboot(uint32_t magic, uint32_t info)
{
    struct boot_info *bi = &boot_info;
    bi->entry_tsc = boot_entry_tsc;
    if (magic == MB1_BOOT_MAGIC) {
        mb1_info = info;                    // parsed by boot_parse, after the APs' start
        mb1_pending = true;
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
