// SPDX-License-Identifier: MIT
// Multiboot v1 and v2 information -> struct boot_info.
#include <stddef.h>
#include <stdint.h>
#include "boot/bootinfo.h"
#include "lib/string.h"

#define MB1_BOOT_MAGIC 0x2BADB002u
#define MB2_BOOT_MAGIC 0x36D76289u

struct boot_info boot_info;
extern uint64_t boot_entry_tsc;

// Loaders put the image's own path first (QEMU's multiboot v1 passes
// "build/goro.elf app=..."; GRUB passes the path too): a first word without
// '=' is that path, not a parameter.
static const char *skip_image_path(const char *s)
{
    const char *w = s;
    while (*w == ' ')
        w++;
    const char *e = w;
    while (*e && *e != ' ' && *e != '=')
        e++;
    if (e == w || *e == '=')
        return s;
    while (*e == ' ')
        e++;
    return e;
}

static void copy_cmdline(struct boot_info *bi, const char *s)
{
    s = skip_image_path(s);
    size_t n = strnlen(s, BOOT_CMDLINE_MAX - 1);
    memcpy(bi->cmdline, s, n);
    bi->cmdline[n] = 0;
}

static void add_region(struct boot_info *bi, uint64_t base, uint64_t len, uint32_t type)
{
    if (bi->mmap_count < BOOT_MMAP_MAX && len)
        bi->mmap[bi->mmap_count++] = (struct boot_mmap_entry){ base, len, type };
}

struct mb1_info {
    uint32_t flags, mem_lower, mem_upper, boot_device, cmdline, mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
} __attribute__((packed));

static void parse_mb1(struct boot_info *bi, const struct mb1_info *mi)
{
    bi->loader = "multiboot1";
    if (mi->flags & (1u << 2))
        copy_cmdline(bi, (const char *)(uintptr_t)mi->cmdline);
    if (mi->flags & (1u << 6)) {
        uintptr_t p = mi->mmap_addr, end = p + mi->mmap_length;
        while (p < end) {
            uint32_t size = *(const uint32_t *)p;
            uint64_t base = *(const uint64_t *)(p + 4);
            uint64_t len = *(const uint64_t *)(p + 12);
            uint32_t type = *(const uint32_t *)(p + 20);
            add_region(bi, base, len, type);
            p += size + 4;
        }
    } else if (mi->flags & 1u) {
        add_region(bi, 0, (uint64_t)mi->mem_lower << 10, BOOT_MEM_USABLE);
        add_region(bi, 1u << 20, (uint64_t)mi->mem_upper << 10, BOOT_MEM_USABLE);
    }
}

struct mb2_tag { uint32_t type, size; };

static void parse_mb2(struct boot_info *bi, uintptr_t info)
{
    bi->loader = "multiboot2";
    uint32_t total = *(const uint32_t *)info;
    uintptr_t p = info + 8, end = info + total;
    while (p + 8 <= end) {
        const struct mb2_tag *t = (const struct mb2_tag *)p;
        if (t->type == 0)
            break;
        switch (t->type) {
        case 1:     // command line
            copy_cmdline(bi, (const char *)(p + 8));
            break;
        case 6: {   // memory map
            uint32_t esize = *(const uint32_t *)(p + 8);
            for (uintptr_t e = p + 16; esize && e + esize <= p + t->size; e += esize)
                add_region(bi, *(const uint64_t *)e, *(const uint64_t *)(e + 8),
                           *(const uint32_t *)(e + 16));
            break;
        }
        case 8: {   // framebuffer
            bi->fb.addr = *(const uint64_t *)(p + 8);
            bi->fb.pitch = *(const uint32_t *)(p + 16);
            bi->fb.width = *(const uint32_t *)(p + 20);
            bi->fb.height = *(const uint32_t *)(p + 24);
            bi->fb.bpp = *(const uint8_t *)(p + 28);
            if (*(const uint8_t *)(p + 29) == 1) {     // direct RGB
                bi->fb.red_pos = *(const uint8_t *)(p + 32);
                bi->fb.green_pos = *(const uint8_t *)(p + 34);
                bi->fb.blue_pos = *(const uint8_t *)(p + 36);
            } else {
                bi->fb.addr = 0;    // indexed or EGA text: not ours to draw on
            }
            break;
        }
        case 14:    // ACPI 1.0 RSDP; a 2.0 one (15) wins when both are given
        case 15: {
            uint32_t n = t->size - 8;
            if (n > sizeof bi->rsdp)
                n = sizeof bi->rsdp;
            if (t->type == 15 || bi->rsdp_len == 0) {
                memcpy(bi->rsdp, (const void *)(p + 8), n);
                bi->rsdp_len = n;
            }
            break;
        }
        }
        p += (t->size + 7) & ~7u;
    }
}

// Called from boot/multiboot.asm in 64-bit mode on the boot stack.
void boot_multiboot(uint32_t magic, uint32_t info)
{
    struct boot_info *bi = &boot_info;
    bi->entry_tsc = boot_entry_tsc;
    if (magic == MB1_BOOT_MAGIC)
        parse_mb1(bi, (const struct mb1_info *)(uintptr_t)info);
    else if (magic == MB2_BOOT_MAGIC)
        parse_mb2(bi, info);
    else
        bi->loader = "unknown (no multiboot magic)";
    kmain(bi);
}
