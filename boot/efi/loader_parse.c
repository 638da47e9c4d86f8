// SPDX-License-Identifier: MIT
// The GNU-EFI loader's parsers (interface in loader_parse.h). Pure and
// freestanding: compiled into BOOTX64.EFI with gnu-efi's flags and into
// the host tests and fuzz harnesses, so it names no gnu-efi type and
// calls nothing but its own helpers. The file and the firmware owe no
// alignment: every multi-byte field is read byte by byte, and every
// offset and length from the input is checked against the input's size
// before it is used (sums are written as subtractions, so none wraps).
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "boot/efi/loader_parse.h"
#include "lib/le.h"

// ---- the kernel image ------------------------------------------------------

#define EHDR_LEN 64
#define EH_PHOFF 32
#define EH_PHENTSIZE 54
#define EH_PHNUM 56
#define EH_MACHINE 18
#define PHDR_LEN 56
#define PT_LOAD 1
#define EM_X86_64 62
#define PAGE_MASK 0xFFFull

static const uint8_t *phdr(const uint8_t *img, size_t i)
{
    return img + le64(img + EH_PHOFF) + i * le16(img + EH_PHENTSIZE);
}

static void seg_read(const uint8_t *ph, struct elf_seg *seg)
{
    seg->offset = le64(ph + 8);
    seg->paddr = le64(ph + 24);
    seg->filesz = le64(ph + 32);
    seg->memsz = le64(ph + 40);
}

size_t elf_image_phnum(const void *img)
{
    return le16((const uint8_t *)img + EH_PHNUM);
}

bool elf_image_segment(const void *img, size_t i, struct elf_seg *seg)
{
    const uint8_t *ph = phdr(img, i);
    if (le32(ph) != PT_LOAD)
        return false;
    seg_read(ph, seg);
    return seg->memsz != 0;
}

// The goro header, looked for 8-byte aligned in the first GORO_HDR_SCAN
// bytes of seg as the file holds them; 0 when absent.
static uint64_t find_entry(const uint8_t *img, const struct elf_seg *seg)
{
    uint64_t n = seg->filesz < GORO_HDR_SCAN ? seg->filesz : GORO_HDR_SCAN;
    const uint8_t *p = img + seg->offset;
    for (uint64_t off = 0; off + 24 <= n; off += 8)
        if (le64(p + off) == GORO_HDR_MAGIC && le64(p + off + 8) == GORO_HDR_VERSION)
            return le64(p + off + 16);
    return 0;
}

static bool entry_loaded(const uint8_t *img, uint64_t entry)
{
    struct elf_seg seg;
    for (size_t i = 0; i < elf_image_phnum(img); i++)
        if (elf_image_segment(img, i, &seg) && entry >= seg.paddr && entry - seg.paddr < seg.memsz)
            return true;
    return false;
}

const char *elf_image_check(const void *image, size_t size, uint64_t *entry)
{
    const uint8_t *img = image;
    uint64_t phoff, loads = 0, e = 0;
    uint16_t phentsize, phnum;

    *entry = 0;
    if (size < EHDR_LEN || img[0] != 0x7f || img[1] != 'E' || img[2] != 'L' || img[3] != 'F')
        return "\\goro.elf is not an ELF file";
    if (img[4] != 2 || img[5] != 1 || le16(img + EH_MACHINE) != EM_X86_64)
        return "\\goro.elf is not a little-endian ELF64 x86-64 image";
    phoff = le64(img + EH_PHOFF);
    phentsize = le16(img + EH_PHENTSIZE);
    phnum = le16(img + EH_PHNUM);
    if (phentsize < PHDR_LEN || phoff > size || (uint64_t)phnum * phentsize > size - phoff)
        return "\\goro.elf has a truncated program header table";
    for (size_t i = 0; i < phnum; i++) {
        struct elf_seg seg;
        if (le32(phdr(img, i)) != PT_LOAD)
            continue;
        seg_read(phdr(img, i), &seg);
        if (seg.offset > size || seg.filesz > size - seg.offset || seg.filesz > seg.memsz)
            return "\\goro.elf has a PT_LOAD segment outside the file";
        // The loader allocates whole pages: the last one must end below 2^64.
        if (seg.memsz > UINT64_MAX - PAGE_MASK - seg.paddr)
            return "\\goro.elf has a PT_LOAD segment past the end of the address space";
        if (loads++ == 0)
            e = find_entry(img, &seg);
    }
    if (!loads)
        return "\\goro.elf has no PT_LOAD segment";
    if (!e)
        return "\\goro.elf has no goro header (GOROFHI1) in its first 32 KiB";
    if (!entry_loaded(img, e))
        return "\\goro.elf's goro header names an entry outside every PT_LOAD segment";
    *entry = e;
    return NULL;
}

// ---- the command line ------------------------------------------------------

static bool printable(uint16_t c)
{
    return c >= 0x20 && c < 0x7f;
}

size_t cmdline_from_options(char *out, size_t cap, const void *opts, size_t bytes)
{
    const uint8_t *s = opts;
    size_t n = bytes / 2, i = 0, w, len = 0;

#define CH(k) le16(s + 2 * (k))
    out[0] = 0;
    while (n && CH(n - 1) == 0)
        n--;
    for (size_t k = 0; k < n; k++)
        if (!printable(CH(k)))
            return 0;
    while (i < n && CH(i) == ' ')
        i++;
    // The shell puts the image's own name first; it has no '='.
    w = i;
    while (w < n && CH(w) != ' ' && CH(w) != '=')
        w++;
    if (w > i && (w == n || CH(w) == ' ')) {
        i = w;
        while (i < n && CH(i) == ' ')
            i++;
    }
    for (; i < n && len + 1 < cap; i++)
        out[len++] = (char)CH(i);
#undef CH
    out[len] = 0;
    return len;
}

size_t cmdline_from_file(char *out, size_t cap, const char *buf, size_t size)
{
    size_t len = 0;
    for (size_t i = 0; i < size && buf[i] && buf[i] != '\n' && buf[i] != '\r' && len + 1 < cap; i++)
        out[len++] = buf[i] == '\t' ? ' ' : buf[i];
    out[len] = 0;
    return len;
}

// ---- the memory map ----------------------------------------------------------

// UEFI's memory types (UEFI 2.10, 7.2, EFI_MEMORY_TYPE).
enum {
    EFI_LOADER_CODE = 1,
    EFI_LOADER_DATA = 2,
    EFI_BOOT_SERVICES_CODE = 3,
    EFI_BOOT_SERVICES_DATA = 4,
    EFI_CONVENTIONAL = 7,
    EFI_UNUSABLE = 8,
    EFI_ACPI_RECLAIM = 9,
    EFI_ACPI_NVS = 10,
};

#define STR(x) #x
#define XSTR(x) STR(x)
#define DESC_TYPE 0
#define DESC_PHYS 8
#define DESC_PAGES 24

static uint32_t mem_type(uint32_t efi_type)
{
    switch (efi_type) {
    case EFI_CONVENTIONAL:
    case EFI_BOOT_SERVICES_CODE:
    case EFI_BOOT_SERVICES_DATA:
    case EFI_LOADER_CODE:
    case EFI_LOADER_DATA:
        return BOOT_MEM_USABLE;
    case EFI_ACPI_RECLAIM:
        return BOOT_MEM_ACPI_RECLAIM;
    case EFI_ACPI_NVS:
        return BOOT_MEM_ACPI_NVS;
    case EFI_UNUSABLE:
        return BOOT_MEM_BAD;
    default:
        return BOOT_MEM_RESERVED;
    }
}

// Appends a range, merged into the previous one when they touch and agree.
// Returns false when it was dropped because the map is full. Ranges never
// wrap (the caller checked), so neither does a merged one.
static bool mmap_add(struct boot_info *bi, uint64_t base, uint64_t len, uint32_t type)
{
    if (!len)
        return true;
    if (bi->mmap_count) {
        struct boot_mmap_entry *last = &bi->mmap[bi->mmap_count - 1];
        if (last->type == type && last->base + last->len == base) {
            last->len += len;
            return true;
        }
    }
    if (bi->mmap_count >= BOOT_MMAP_MAX)
        return false;
    bi->mmap[bi->mmap_count++] = (struct boot_mmap_entry){ base, len, type };
    return true;
}

void efi_mmap_convert(struct boot_info *bi, const uint8_t *map, size_t map_size,
                      size_t desc_size, uint64_t keep, uint64_t keep_len)
{
    bool wrapped = false, full = false;

    bi->mmap_count = 0;
    if (desc_size < EFI_MMAP_DESC_MIN) {
        boot_note_line(bi, "uefi loader: the firmware's memory descriptors are shorter than "
                       "40 bytes; no memory map");
        return;
    }
    if (keep_len > UINT64_MAX - keep)
        keep_len = UINT64_MAX - keep;
    for (size_t off = 0; desc_size <= map_size - off; off += desc_size) {
        const uint8_t *d = map + off;
        uint64_t base = le64(d + DESC_PHYS), pages = le64(d + DESC_PAGES), end;
        uint32_t type = mem_type(le32(d + DESC_TYPE));
        if (pages > (UINT64_MAX - base) >> 12) {
            wrapped = true;
            continue;
        }
        end = base + (pages << 12);
        if (keep < end && keep + keep_len > base) {
            uint64_t ks = keep > base ? keep : base;
            uint64_t ke = keep + keep_len < end ? keep + keep_len : end;
            full |= !mmap_add(bi, base, ks - base, type);
            full |= !mmap_add(bi, ks, ke - ks, BOOT_MEM_RESERVED);
            full |= !mmap_add(bi, ke, end - ke, type);
        } else {
            full |= !mmap_add(bi, base, end - base, type);
        }
    }
    if (wrapped)
        boot_note_line(bi, "uefi loader: a firmware memory descriptor runs past the end of the "
                       "address space; it was left out");
    if (full)
        boot_note_line(bi, "uefi loader: more than " XSTR(BOOT_MMAP_MAX) " memory ranges; the "
                       "last ones were left out");
}
