// SPDX-License-Identifier: MIT
// Multiboot v1 and v2 information -> struct boot_info (boot/boot.h).
//
// Pure code, compiled into the kernel, tests/host/test_boot.c and the fuzz
// harnesses: memory is reached only through the map callback. What must
// hold before a byte is used:
//   1. the structure holding it was mapped whole, at the size its header
//      claims (v1: the 52-byte information and the memory map's stated
//      length; v2: the total size, 8 bytes up to MB2_INFO_MAX);
//   2. every entry or tag lies inside that structure, with at least the
//      bytes its type is read at (MB1_MMAP_MIN, mb2_tag_min), and is then
//      mapped on its own at its own size, so that a read past it is a read
//      past a mapping (the harnesses' map hands out exact-size copies; the
//      kernel's is the identity, so this costs it nothing);
// and every read is byte-wise (the loader owes no alignment). A structure
// that cannot be mapped, an entry whose size runs past its structure, a
// tag shorter than 8 bytes: a note naming it, and the walk stops there (a
// bad size leaves nothing after it to trust). A tag too short for its type
// is skipped alone. What was found before is kept.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "boot/boot.h"
#include "lib/le.h"

#define MB1_INFO_LEN 52                 // through mmap_addr
#define MB1_FLAG_MEM (1u << 0)
#define MB1_FLAG_CMDLINE (1u << 2)
#define MB1_FLAG_MMAP (1u << 6)
#define MB1_MMAP_MIN 20                 // base, length, type after the size word
#define MB1_CMDLINE_SCAN 4096           // longer is not a command line

#define MB2_INFO_MAX (1u << 20)         // GRUB's is a few KiB; bigger is corrupt
#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_MMAP 6
#define MB2_TAG_FB 8
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_MMAP_ENTRY_MIN 20           // base, length, type
#define MB2_FB_COMMON_LEN 32            // through framebuffer_type and reserved
#define MB2_FB_RGB_LEN 38               // the direct-RGB field positions and sizes
#define MB2_FB_TYPE_RGB 1
#define RSDP_V1_LEN 20

// The command line from s[0..len) (no NUL inside). Loaders put the image's
// own path first (QEMU's multiboot v1 passes "build/goro.elf app=..."; GRUB
// passes the path too): a first word without '=' is that path, not a
// parameter.
static void cmdline_set(struct boot_info *bi, const char *s, size_t len)
{
    size_t w = 0, e, from = 0, n;
    while (w < len && s[w] == ' ')
        w++;
    e = w;
    while (e < len && s[e] != ' ' && s[e] != '=')
        e++;
    if (e > w && (e == len || s[e] != '=')) {
        from = e;
        while (from < len && s[from] == ' ')
            from++;
    }
    n = len - from < BOOT_CMDLINE_MAX - 1 ? len - from : BOOT_CMDLINE_MAX - 1;
    memcpy(bi->cmdline, s + from, n);
    bi->cmdline[n] = 0;
}

// ---- multiboot v1 -------------------------------------------------------------

// The NUL-terminated command line at phys: its length is found a byte at a
// time (it may end just before memory that cannot be mapped), then it is
// mapped whole.
static void mb1_cmdline(struct boot_info *bi, uint64_t phys, boot_map_fn map, void *ctx)
{
    size_t len = 0;
    const char *c = NULL;
    while (len < MB1_CMDLINE_SCAN && (c = map(ctx, phys + len, 1)) && *c)
        len++;
    if (len == MB1_CMDLINE_SCAN || !c) {
        boot_note(bi, "multiboot1: the command line at 0x%llx %s after %zu bytes; "
                  "ignoring it", (unsigned long long)phys,
                  len == MB1_CMDLINE_SCAN ? "has no end" : "runs into unreadable memory", len);
        return;
    }
    c = len ? map(ctx, phys, len) : "";
    if (c)
        cmdline_set(bi, c, len);
}

static void mb1_mmap(struct boot_info *bi, uint64_t phys, uint32_t len, boot_map_fn map, void *ctx)
{
    const uint8_t *m = map(ctx, phys, len);
    struct boot_mmap_drops drops = { 0 };
    uint32_t off = 0;

    if (!m) {
        boot_note(bi, "multiboot1: the %u-byte memory map at 0x%llx cannot be read; "
                  "ignoring it", len, (unsigned long long)phys);
        return;
    }
    // Each entry is a size word, then size bytes: base, length, type.
    while (off < len) {
        uint32_t size = len - off >= 4 ? le32(m + off) : 0;
        if (size < MB1_MMAP_MIN || size > len - off - 4) {
            boot_note(bi, "multiboot1: memory map entry at offset %u has size %u, outside "
                      "%u..%u; ignoring the rest of the map", off, size, MB1_MMAP_MIN,
                      len - off >= 4 ? len - off - 4 : 0);
            break;
        }
        const uint8_t *e = map(ctx, phys + off, 4 + size);
        if (!e)
            break;                  // inside a map that was mapped: cannot happen
        boot_mmap_add(bi, &drops, le64(e + 4), le64(e + 12), le32(e + 20));
        off += 4 + size;
    }
    boot_mmap_notes(bi, "multiboot1", &drops);
}

void mb1_parse(struct boot_info *bi, uint64_t info_phys, boot_map_fn map, void *ctx)
{
    const uint8_t *mi = map(ctx, info_phys, MB1_INFO_LEN);
    uint32_t flags;

    bi->loader = "multiboot1";
    if (!mi) {
        boot_note(bi, "multiboot1: the information at 0x%llx cannot be read; no command "
                  "line, no memory map", (unsigned long long)info_phys);
        return;
    }
    flags = le32(mi);
    if (flags & MB1_FLAG_CMDLINE)
        mb1_cmdline(bi, le32(mi + 16), map, ctx);
    if (flags & MB1_FLAG_MMAP) {
        mb1_mmap(bi, le32(mi + 48), le32(mi + 44), map, ctx);
    } else if (flags & MB1_FLAG_MEM) {
        struct boot_mmap_drops drops = { 0 };       // two entries that cannot wrap
        boot_mmap_add(bi, &drops, 0, (uint64_t)le32(mi + 4) << 10, BOOT_MEM_USABLE);
        boot_mmap_add(bi, &drops, 1u << 20, (uint64_t)le32(mi + 8) << 10, BOOT_MEM_USABLE);
    }
}

// ---- multiboot2 ---------------------------------------------------------------

// The bytes a tag of this type must have for its fields to be read; other
// types are skipped by size and need only their 8-byte header.
static uint32_t mb2_tag_min(uint32_t type)
{
    switch (type) {
    case MB2_TAG_MMAP: return 16;
    case MB2_TAG_FB: return MB2_FB_COMMON_LEN;
    case MB2_TAG_ACPI_OLD:
    case MB2_TAG_ACPI_NEW: return 8 + RSDP_V1_LEN;
    default: return 8;
    }
}

static void mb2_mmap(struct boot_info *bi, const uint8_t *t, uint32_t size, uint32_t off)
{
    uint32_t esize = le32(t + 8);
    struct boot_mmap_drops drops = { 0 };
    if (esize < MB2_MMAP_ENTRY_MIN) {
        boot_note(bi, "multiboot2: memory map tag at offset %u has %u-byte entries, fewer "
                  "than %u; ignoring it", off, esize, MB2_MMAP_ENTRY_MIN);
        return;
    }
    for (uint32_t e = 16; e <= size && esize <= size - e; e += esize)
        boot_mmap_add(bi, &drops, le64(t + e), le64(t + e + 8), le32(t + e + 16));
    boot_mmap_notes(bi, "multiboot2", &drops);
}

static void mb2_fb(struct boot_info *bi, const uint8_t *t, uint32_t size, uint32_t off)
{
    bi->fb.addr = le64(t + 8);
    bi->fb.pitch = le32(t + 16);
    bi->fb.width = le32(t + 20);
    bi->fb.height = le32(t + 24);
    bi->fb.bpp = t[28];
    if (t[29] != MB2_FB_TYPE_RGB) {
        bi->fb.addr = 0;        // indexed or EGA text: not ours to draw on
    } else if (size < MB2_FB_RGB_LEN) {
        boot_note(bi, "multiboot2: framebuffer tag at offset %u has size %u, too short for "
                  "its colour layout; no framebuffer", off, size);
        bi->fb.addr = 0;
    } else {
        bi->fb.red_pos = t[32];
        bi->fb.green_pos = t[34];
        bi->fb.blue_pos = t[36];
    }
}

// An ACPI 1.0 RSDP (type 14) or 2.0 one (15), which wins when both are given.
static void mb2_rsdp(struct boot_info *bi, const uint8_t *t, uint32_t type, uint32_t size)
{
    uint32_t n = size - 8;
    if (n > sizeof bi->rsdp)
        n = sizeof bi->rsdp;
    if (type == MB2_TAG_ACPI_NEW || bi->rsdp_len == 0) {
        memcpy(bi->rsdp, t + 8, n);
        bi->rsdp_len = n;
    }
}

static void mb2_tag(struct boot_info *bi, const uint8_t *t, uint32_t type, uint32_t size,
                    uint32_t off)
{
    switch (type) {
    case MB2_TAG_CMDLINE: {
        const char *s = (const char *)t + 8;
        cmdline_set(bi, s, strnlen(s, size - 8));
        break;
    }
    case MB2_TAG_MMAP:
        mb2_mmap(bi, t, size, off);
        break;
    case MB2_TAG_FB:
        mb2_fb(bi, t, size, off);
        break;
    case MB2_TAG_ACPI_OLD:
    case MB2_TAG_ACPI_NEW:
        mb2_rsdp(bi, t, type, size);
        break;
    }
}

void mb2_parse(struct boot_info *bi, uint64_t info_phys, boot_map_fn map, void *ctx)
{
    const uint8_t *info = map(ctx, info_phys, 8);
    uint32_t total, off, size;

    bi->loader = "multiboot2";
    if (!info) {
        boot_note(bi, "multiboot2: the information at 0x%llx cannot be read; no command line, "
                  "no memory map", (unsigned long long)info_phys);
        return;
    }
    total = le32(info);
    if (total < 8 || total > MB2_INFO_MAX) {
        boot_note(bi, "multiboot2: the information at 0x%llx claims %u bytes, outside 8..%u; "
                  "no command line, no memory map", (unsigned long long)info_phys, total,
                  MB2_INFO_MAX);
        return;
    }
    info = map(ctx, info_phys, total);
    if (!info) {
        boot_note(bi, "multiboot2: the %u bytes of information at 0x%llx cannot be read; "
                  "no command line, no memory map", total, (unsigned long long)info_phys);
        return;
    }
    // Tags start 8-byte aligned after the 8-byte header; the end tag (type
    // 0) closes the list.
    for (off = 8; off + 8 <= total; off += (size + 7) & ~7u) {
        const uint8_t *t = info + off;
        uint32_t type = le32(t);
        size = le32(t + 4);
        if (type == MB2_TAG_END)
            break;
        if (size < 8 || size > total - off) {
            boot_note(bi, "multiboot2: tag at offset %u (type %u) has size %u, outside 8..%u; "
                      "ignoring the rest of the information", off, type, size, total - off);
            break;
        }
        if (size < mb2_tag_min(type)) {
            boot_note(bi, "multiboot2: tag at offset %u (type %u) has size %u, less than the "
                      "%u its type needs; ignoring it", off, type, size, mb2_tag_min(type));
            continue;
        }
        t = map(ctx, info_phys + off, size);
        if (!t)
            break;                  // inside what was mapped: cannot happen
        mb2_tag(bi, t, type, size, off);
    }
}
