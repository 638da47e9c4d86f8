// SPDX-License-Identifier: MIT
// Host tests for the GNU-EFI loader's parsers (boot/efi/loader_parse.c):
// the kernel image's checks, each with the message the loader prints, the
// command line from load options and from \goro.cmdline, and the firmware
// memory map's conversion. Inputs sit at odd addresses on purpose: neither
// the file nor the firmware owes alignment, and UBSan checks every access.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "boot/efi/loader_parse.h"

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

// ---- the kernel image ------------------------------------------------------------

#define IMG_LEN 0x400
#define PHOFF 0x41                  // odd: program headers owe no alignment
#define SEG_OFF 0x100
#define SEG_LEN 0x200
#define PADDR 0x100000ull

static uint8_t *img_buf;
static uint8_t *img;                // img_buf + 1: the file at an odd address

// goro's shape: one PT_LOAD at 1 MiB, its .bss past the file, the goro
// header 0x68 bytes in, naming an entry inside the segment.
static void img_build(void)
{
    free(img_buf);
    img_buf = calloc(1, IMG_LEN + 1);
    img = img_buf + 1;
    memcpy(img, "\x7f" "ELF\x02\x01\x01", 7);
    put16(img + 16, 2);
    put16(img + 18, 62);
    put64(img + 32, PHOFF);
    put16(img + 54, 56);
    put16(img + 56, 1);
    uint8_t *ph = img + PHOFF;
    put32(ph, 1);
    put64(ph + 8, SEG_OFF);
    put64(ph + 16, PADDR);
    put64(ph + 24, PADDR);
    put64(ph + 32, SEG_LEN);
    put64(ph + 40, 0x353000);
    put64(img + SEG_OFF + 0x68, GORO_HDR_MAGIC);
    put64(img + SEG_OFF + 0x70, GORO_HDR_VERSION);
    put64(img + SEG_OFF + 0x78, PADDR + 0x1000);
}

static const char *check_img(uint64_t *entry)
{
    return elf_image_check(img, IMG_LEN, entry);
}

static void elf_good(void)
{
    uint64_t entry;
    struct elf_seg seg;
    img_build();
    CHECKF(check_img(&entry) == NULL, "%s", check_img(&entry));
    CHECK(entry == PADDR + 0x1000);
    CHECK(elf_image_phnum(img) == 1 && elf_image_segment(img, 0, &seg));
    CHECK(seg.paddr == PADDR && seg.offset == SEG_OFF && seg.filesz == SEG_LEN && seg.memsz == 0x353000);
}

// Each broken image, with the sentence the loader prints for it.
static void elf_rejected(void)
{
    static const struct { const char *what; uint64_t at; uint64_t val; int width; } cases[] = {
        { "is not an ELF file", 1, 'X', 1 },
        { "is not a little-endian ELF64 x86-64 image", 18, 3, 2 },
        { "is not a little-endian ELF64 x86-64 image", 4, 1, 1 },
        { "has a truncated program header table", 32, IMG_LEN - 50, 8 },
        { "has a truncated program header table", 32, UINT64_MAX - 8, 8 },
        { "has a truncated program header table", 54, 40, 2 },
        { "has a truncated program header table", 56, 0x1000, 2 },
        { "has a PT_LOAD segment outside the file", PHOFF + 8, IMG_LEN + 1, 8 },
        { "has a PT_LOAD segment outside the file", PHOFF + 32, UINT64_MAX, 8 },
        { "has a PT_LOAD segment outside the file", PHOFF + 40, 0x10, 8 },
        { "has a PT_LOAD segment past the end of the address space", PHOFF + 24, UINT64_MAX - 0x1000, 8 },
        { "has no PT_LOAD segment", PHOFF, 6, 4 },
        { "has no goro header (GOROFHI1) in its first 32 KiB", SEG_OFF + 0x70, 2, 8 },
        { "goro header names an entry outside every PT_LOAD segment", SEG_OFF + 0x78, 0x1000, 8 },
        { "goro header names an entry outside every PT_LOAD segment", SEG_OFF + 0x78, PADDR + 0x353000, 8 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t entry = 1;
        img_build();
        if (cases[i].width == 1)
            img[cases[i].at] = (uint8_t)cases[i].val;
        else if (cases[i].width == 2)
            put16(img + cases[i].at, (uint16_t)cases[i].val);
        else if (cases[i].width == 4)
            put32(img + cases[i].at, (uint32_t)cases[i].val);
        else
            put64(img + cases[i].at, cases[i].val);
        const char *bad = check_img(&entry);
        CHECKF(bad && strstr(bad, cases[i].what) && entry == 0, "case %zu: got \"%s\"", i,
               bad ? bad : "accepted");
    }
    img_build();
    CHECK(elf_image_check(img, 63, &(uint64_t){ 0 }) != NULL);
}

// ---- the command line ------------------------------------------------------------

static char out[BOOT_CMDLINE_MAX];

// Load options as the firmware gives them: UCS-2 at an odd address.
static size_t options(const char *ascii, size_t extra_nuls, size_t cap)
{
    size_t n = strlen(ascii) + extra_nuls;
    uint8_t *buf = calloc(1, 2 * n + 1);
    for (size_t i = 0; ascii[i]; i++)
        put16(buf + 1 + 2 * i, (uint8_t)ascii[i]);
    size_t len = cmdline_from_options(out, cap, buf + 1, 2 * n);
    free(buf);
    return len;
}

static void cmdline_options(void)
{
    CHECK(options("BOOTX64.EFI app=ktest seed=3", 1, sizeof out) == 16 && !strcmp(out, "app=ktest seed=3"));
    CHECK(options("  app=hello", 2, sizeof out) == 9 && !strcmp(out, "app=hello"));
    CHECK(options("BOOTX64.EFI", 0, sizeof out) == 0 && !strcmp(out, ""));
    CHECK(options("app=\x01", 0, sizeof out) == 0);                 // binary: no command line
    CHECK(options("app=hello", 0, 5) == 4 && !strcmp(out, "app="));  // cut to the buffer
    uint8_t odd[5] = { 'a', 0, '=', 0, 'p' };                       // half a character at the end
    CHECK(cmdline_from_options(out, sizeof out, odd, 5) == 2 && !strcmp(out, "a="));
}

static void cmdline_file(void)
{
    static const char f[] = "app=bench\tgomaxprocs=2\r\nsecond line\n";
    CHECK(cmdline_from_file(out, sizeof out, f, sizeof f - 1) == 22 &&
          !strcmp(out, "app=bench gomaxprocs=2"));
    CHECK(cmdline_from_file(out, sizeof out, "app=x\0junk", 10) == 5 && !strcmp(out, "app=x"));
    CHECK(cmdline_from_file(out, 4, "app=x", 5) == 3 && !strcmp(out, "app"));
    CHECK(cmdline_from_file(out, sizeof out, "", 0) == 0 && !strcmp(out, ""));
}

// ---- the memory map --------------------------------------------------------------

static struct boot_info bi;

// A map of n descriptors of desc_size bytes (UEFI's 40 plus padding), at an
// odd address.
static uint8_t *map_buf;

static uint8_t *map_build(const uint64_t (*d)[3], int n, size_t desc_size)
{
    free(map_buf);
    map_buf = calloc(1, (size_t)n * desc_size + 1);
    for (int i = 0; i < n; i++) {
        uint8_t *p = map_buf + 1 + (size_t)i * desc_size;
        put32(p, (uint32_t)d[i][0]);
        put64(p + 8, d[i][1]);
        put64(p + 24, d[i][2]);
        memset(p + 40, 0xee, desc_size - 40);
    }
    memset(&bi, 0, sizeof bi);
    return map_buf + 1;
}

static int entry_is(uint32_t i, uint64_t base, uint64_t len, uint32_t type)
{
    return i < bi.mmap_count && bi.mmap[i].base == base && bi.mmap[i].len == len &&
           bi.mmap[i].type == type;
}

static void mmap_ovmf(void)
{
    static const uint64_t d[][3] = {
        { 3, 0x0, 0xa0 },               // boot services code: usable
        { 7, 0x100000, 0x700 },         // conventional, not touching the one before
        { 4, 0x800000, 0x100 },         // boot services data, touching: merged
        { 9, 0xf7f0000, 0x10 },         // ACPI reclaim
        { 10, 0xf800000, 0x80 },        // ACPI NVS
        { 11, 0xffc00000, 0x400 },      // MMIO: reserved
        { 8, 0x20000000, 0x1 },         // unusable
    };
    uint8_t *m = map_build(d, 7, 48);
    efi_mmap_convert(&bi, m, 7 * 48, 48, 0x200000, 0x2000);
    CHECK(entry_is(0, 0, 0xa0000, BOOT_MEM_USABLE));
    CHECK(entry_is(1, 0x100000, 0x100000, BOOT_MEM_USABLE));
    CHECK(entry_is(2, 0x200000, 0x2000, BOOT_MEM_RESERVED));       // boot_info's pages
    CHECK(entry_is(3, 0x202000, 0x800000 + 0x100000 - 0x202000, BOOT_MEM_USABLE));
    CHECK(entry_is(4, 0xf7f0000, 0x10000, BOOT_MEM_ACPI_RECLAIM));
    CHECK(entry_is(5, 0xf800000, 0x80000, BOOT_MEM_ACPI_NVS));
    CHECK(entry_is(6, 0xffc00000, 0x400000, BOOT_MEM_RESERVED));
    CHECK(entry_is(7, 0x20000000, 0x1000, BOOT_MEM_BAD));
    CHECK(bi.mmap_count == 8 && bi.notes[0] == 0);
}

static void mmap_bad_descriptors(void)
{
    static const uint64_t d[][3] = {
        { 7, 0xfffffffffff00000ull, 0x100 },    // ends at 2^64: wraps
        { 7, 0x1000, UINT64_MAX >> 4 },          // 2^60 pages: the byte count wraps
        { 7, 0x100000, 0x10 },
    };
    uint8_t *m = map_build(d, 3, 40);
    efi_mmap_convert(&bi, m, 3 * 40 + 39, 40, 0, 0);        // a torn last descriptor is ignored
    CHECK(bi.mmap_count == 1 && entry_is(0, 0x100000, 0x10000, BOOT_MEM_USABLE));
    CHECK(strstr(bi.notes, "a firmware memory descriptor runs past the end of the address space"));
    m = map_build(d, 3, 40);
    efi_mmap_convert(&bi, m, 3 * 40, 24, 0, 0);             // shorter than UEFI's descriptor
    CHECK(bi.mmap_count == 0 && strstr(bi.notes, "shorter than 40 bytes"));
}

static void mmap_full(void)
{
    static uint64_t d[BOOT_MMAP_MAX + 3][3];
    for (int i = 0; i < BOOT_MMAP_MAX + 3; i++) {
        d[i][0] = i % 2 ? 7 : 0;                 // usable and reserved by turns: no merging
        d[i][1] = (uint64_t)i << 12;
        d[i][2] = 1;
    }
    uint8_t *m = map_build(d, BOOT_MMAP_MAX + 3, 40);
    efi_mmap_convert(&bi, m, (BOOT_MMAP_MAX + 3) * 40, 40, 0, 0);
    CHECK(bi.mmap_count == BOOT_MMAP_MAX);
    CHECK(strstr(bi.notes, "more than 128 memory ranges"));
}

int main(void)
{
    RUN(elf_good);
    RUN(elf_rejected);
    RUN(cmdline_options);
    RUN(cmdline_file);
    RUN(mmap_ovmf);
    RUN(mmap_bad_descriptors);
    RUN(mmap_full);
    free(img_buf);
    free(map_buf);
    return CHECK_DONE();
}
