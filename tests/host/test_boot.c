// SPDX-License-Identifier: MIT
// Host tests for the boot parsers (boot/multiboot.c, boot/uefi.c,
// boot/bootinfo.c): what QEMU and GRUB hand over parses as before, and
// each kind of malformed information ends in its note, never in a loop or
// a read past the structure. The inputs that used to hang the boot (a
// multiboot1 map entry whose size wraps the walk back, a multiboot2 tag of
// size 0) are here; tests/fuzz/ hunts for more.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "boot/boot.h"

// A fake physical memory: phys i is mem[i]. Every map is a fresh heap copy
// of exactly the bytes asked for, so ASan sees any read past them.
static uint8_t mem[16384];
static void *copies[8192];
static int ncopies;

static const void *map(void *ctx, uint64_t phys, size_t len)
{
    (void)ctx;
    if (phys > sizeof mem || len > sizeof mem - phys || ncopies == 8192)
        return NULL;
    void *p = malloc(len ? len : 1);
    memcpy(p, mem + phys, len);
    copies[ncopies++] = p;
    return p;
}

static struct boot_info bi;

static void reset(void)
{
    for (int i = 0; i < ncopies; i++)
        free(copies[i]);
    ncopies = 0;
    memset(mem, 0, sizeof mem);
    memset(&bi, 0, sizeof bi);
}

static void put32(uint64_t at, uint32_t v) { memcpy(mem + at, &v, 4); }
static void put64(uint64_t at, uint64_t v) { memcpy(mem + at, &v, 8); }

static int noted(const char *needle)
{
    return strstr(bi.notes, needle) != NULL;
}

static int entry_is(uint32_t i, uint64_t base, uint64_t len, uint32_t type)
{
    return i < bi.mmap_count && bi.mmap[i].base == base && bi.mmap[i].len == len &&
           bi.mmap[i].type == type;
}

// ---- multiboot v1 ---------------------------------------------------------------

#define MB1_CMDLINE_AT 0x100
#define MB1_MMAP_AT 0x400

// An information structure at 0 with the given flags, a command line and
// n map entries (base i MiB, 1 MiB long, usable) of size entry_size.
static void mb1_build(uint32_t flags, const char *cmdline, int n, uint32_t entry_size)
{
    put32(0, flags);
    put32(4, 639);
    put32(8, 130048);
    put32(16, MB1_CMDLINE_AT);
    strcpy((char *)mem + MB1_CMDLINE_AT, cmdline);
    for (int i = 0; i < n; i++) {
        uint64_t at = MB1_MMAP_AT + (uint64_t)i * (entry_size + 4);
        put32(at, entry_size);
        put64(at + 4, (uint64_t)i << 20);
        put64(at + 12, 1 << 20);
        put32(at + 20, BOOT_MEM_USABLE);
    }
    put32(44, (uint32_t)n * (entry_size + 4));
    put32(48, MB1_MMAP_AT);
}

static void mb1_qemu(void)
{
    reset();
    mb1_build(1 | 4 | 0x40, "build/goro.elf app=ktest seed=7", 3, 20);
    mb1_parse(&bi, 0, map, NULL);
    CHECK(!strcmp(bi.loader, "multiboot1"));
    CHECK(!strcmp(bi.cmdline, "app=ktest seed=7"));
    CHECK(bi.mmap_count == 3 && entry_is(2, 2 << 20, 1 << 20, BOOT_MEM_USABLE));
    CHECKF(bi.notes[0] == 0, "notes: %s", bi.notes);
}

static void mb1_meminfo_only(void)
{
    reset();
    mb1_build(1, "", 0, 20);
    mb1_parse(&bi, 0, map, NULL);
    CHECK(bi.cmdline[0] == 0);
    CHECK(bi.mmap_count == 2 && entry_is(0, 0, 639 << 10, BOOT_MEM_USABLE) &&
          entry_is(1, 1 << 20, 130048ull << 10, BOOT_MEM_USABLE));
}

static void mb1_cmdline_cases(void)
{
    static const struct { const char *in, *out; } cases[] = {
        { "goro.elf", "" },                         // a lone path
        { "  app=hello", "  app=hello" },           // no path: kept as given
        { "/boot/goro.elf   app=x", "app=x" },
        { "", "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reset();
        mb1_build(4, cases[i].in, 0, 20);
        mb1_parse(&bi, 0, map, NULL);
        CHECKF(!strcmp(bi.cmdline, cases[i].out), "\"%s\" -> \"%s\"", cases[i].in, bi.cmdline);
    }
}

// kmain starts the APs before a multiboot 1 parse: their start-up page
// is written over whatever loader bytes lay there, and the parse reads
// those from the copy boot_keep made (boot_kept_map).
static struct boot_kept kept;

static const void *map_kept(void *ctx, uint64_t phys, size_t len)
{
    return boot_kept_map(&kept, map(ctx, phys, len), phys, len);
}

static void mb1_parse_after_overwrite(void)
{
    static const struct { uint64_t at, len; } under[] = {
        { MB1_CMDLINE_AT + 18, 8 },         // inside the command line's words
        { 0x28, 0x1e0 },                    // the map's fields in the header, and the whole line
        { MB1_MMAP_AT + 10, 30 },           // across two map entries
        { 0, BOOT_KEPT_MAX },               // the header from its first byte
    };
    for (size_t i = 0; i < sizeof under / sizeof under[0]; i++) {
        reset();
        mb1_build(1 | 4 | 0x40, "build/goro.elf app=ktest seed=7", 3, 20);
        memset(&kept, 0, sizeof kept);
        kept.phys = under[i].at;
        kept.len = (uint32_t)under[i].len;
        memcpy(kept.bytes, mem + under[i].at, under[i].len);
        memset(mem + under[i].at, 0xA5, under[i].len);     // the start-up code, written over them
        mb1_parse(&bi, 0, map_kept, NULL);
        CHECKF(!strcmp(bi.cmdline, "app=ktest seed=7"), "kept 0x%llx+%llu: cmdline \"%s\"",
               (unsigned long long)under[i].at, (unsigned long long)under[i].len, bi.cmdline);
        CHECKF(bi.mmap_count == 3 && entry_is(0, 0, 1 << 20, BOOT_MEM_USABLE) &&
               entry_is(1, 1 << 20, 1 << 20, BOOT_MEM_USABLE) && entry_is(2, 2 << 20, 1 << 20, BOOT_MEM_USABLE),
               "kept 0x%llx: %u entries", (unsigned long long)under[i].at, bi.mmap_count);
        CHECKF(bi.notes[0] == 0, "notes: %s", bi.notes);
        memset(&bi, 0, sizeof bi);                      // and without the copy, the overwrite shows
        mb1_parse(&bi, 0, map, NULL);
        CHECK(strcmp(bi.cmdline, "app=ktest seed=7") || bi.mmap_count != 3 || bi.notes[0]);
    }
    // A range the kept bytes miss is the live mapping itself; a spent
    // scratch is a range that cannot be read.
    uint8_t live[4] = { 0 };
    kept.phys = 0x1000;
    kept.len = 16;
    CHECK(boot_kept_map(&kept, live, 0x1010, 4) == live && boot_kept_map(&kept, live, 0xffc, 4) == live);
    CHECK(boot_kept_map(&kept, NULL, 0x1000, 4) == NULL);
    kept.used = BOOT_KEPT_SCRATCH - 3;
    CHECK(boot_kept_map(&kept, live, 0x1000, 4) == NULL);
    kept.used = 0;
    const uint8_t *got = boot_kept_map(&kept, live, 0xffe, 4);     // straddles the start
    CHECK(got && got[0] == 0 && got[1] == 0 && got[2] == kept.bytes[0] && got[3] == kept.bytes[1]);
}

// The walk used to add size + 4 in 32 bits: 0xfffffffc made it stand still.
static void mb1_entry_size_wraps(void)
{
    reset();
    mb1_build(0x40, "", 3, 20);
    put32(MB1_MMAP_AT + 24, 0xfffffffc);
    mb1_parse(&bi, 0, map, NULL);
    CHECK(bi.mmap_count == 1);
    CHECKF(noted("multiboot1: memory map entry at offset 24 has size 4294967292"), "%s", bi.notes);
}

static void mb1_entry_too_short(void)
{
    reset();
    mb1_build(0x40, "", 2, 12);
    mb1_parse(&bi, 0, map, NULL);
    CHECK(bi.mmap_count == 0 && noted("has size 12, outside 20.."));
}

static void mb1_unreadable(void)
{
    reset();
    mb1_parse(&bi, sizeof mem - 10, map, NULL);
    CHECK(noted("multiboot1: the information at 0x3ff6 cannot be read"));
    reset();
    mb1_build(4 | 0x40, "", 1, 20);
    put32(16, sizeof mem - 4);                      // "xxxx" then the end of memory
    memset(mem + sizeof mem - 4, 'x', 4);
    put32(48, sizeof mem - 8);
    mb1_parse(&bi, 0, map, NULL);
    CHECK(noted("runs into unreadable memory after 4 bytes"));
    CHECK(noted("the 24-byte memory map at 0x3ff8 cannot be read"));
}

// ---- multiboot2 ------------------------------------------------------------------

static uint32_t mb2_end;

static uint64_t mb2_tag(uint32_t type, uint32_t size)
{
    uint64_t at = mb2_end;
    put32(at, type);
    put32(at + 4, size);
    mb2_end += (size + 7) & ~7u;
    return at;
}

static void mb2_begin(void)
{
    reset();
    mb2_end = 8;
}

static void mb2_finish(void)
{
    mb2_tag(0, 8);
    put32(0, mb2_end);
    mb2_parse(&bi, 0, map, NULL);
}

static void mb2_mmap(int n, uint32_t esize)
{
    uint64_t t = mb2_tag(6, 16 + (uint32_t)n * esize);
    put32(t + 8, esize);
    for (int i = 0; i < n; i++) {
        put64(t + 16 + i * esize, (uint64_t)i << 20);
        put64(t + 24 + i * esize, 1 << 20);
        put32(t + 32 + i * esize, BOOT_MEM_USABLE);
    }
}

static void mb2_grub(void)
{
    mb2_begin();
    strcpy((char *)mem + mb2_tag(1, 8 + 26) + 8, "/boot/goro.elf app=hello");
    mb2_mmap(4, 24);
    uint64_t fb = mb2_tag(8, 38);
    put64(fb + 8, 0xfd000000);
    put32(fb + 16, 4096);
    put32(fb + 20, 1024);
    put32(fb + 24, 768);
    mem[fb + 28] = 32;
    mem[fb + 29] = 1;
    mem[fb + 32] = 16, mem[fb + 34] = 8, mem[fb + 36] = 0;
    memcpy(mem + mb2_tag(15, 8 + 36) + 8, "RSD PTR v2", 10);
    memcpy(mem + mb2_tag(14, 8 + 20) + 8, "RSD PTR v1", 10);   // the 2.0 one wins
    mb2_finish();
    CHECK(!strcmp(bi.loader, "multiboot2"));
    CHECK(!strcmp(bi.cmdline, "app=hello"));
    CHECK(bi.mmap_count == 4 && entry_is(3, 3 << 20, 1 << 20, BOOT_MEM_USABLE));
    CHECK(bi.fb.addr == 0xfd000000 && bi.fb.width == 1024 && bi.fb.red_pos == 16 && bi.fb.bpp == 32);
    CHECK(bi.rsdp_len == 36 && !memcmp(bi.rsdp, "RSD PTR v2", 10));
    CHECKF(bi.notes[0] == 0, "notes: %s", bi.notes);
}

// A tag of size 0 used to be stepped over by 0 bytes, for ever.
static void mb2_tag_size_zero(void)
{
    mb2_begin();
    mb2_mmap(1, 24);
    mb2_tag(1, 0);
    mb2_end += 8;
    mb2_finish();
    CHECK(bi.mmap_count == 1);
    CHECKF(noted("multiboot2: tag at offset 48 (type 1) has size 0, outside 8.."), "%s", bi.notes);
}

static void mb2_tag_past_total(void)
{
    mb2_begin();
    mb2_tag(1, 4000);
    put32(0, 64);
    mb2_parse(&bi, 0, map, NULL);
    CHECK(noted("tag at offset 8 (type 1) has size 4000, outside 8..56"));
}

// A tag too short for its type is skipped alone; the next one still counts.
static void mb2_short_tags(void)
{
    mb2_begin();
    mb2_tag(15, 8 + 12);                            // less than a 1.0 RSDP
    uint64_t fb = mb2_tag(8, 32);                   // RGB without its colour layout
    put64(fb + 8, 0xfd000000);
    mem[fb + 29] = 1;
    mb2_mmap(2, 16);                                // entries shorter than base, length, type
    strcpy((char *)mem + mb2_tag(1, 8 + 6) + 8, "app=x");
    mb2_finish();
    CHECK(bi.rsdp_len == 0 && noted("(type 15) has size 20, less than the 28"));
    CHECK(bi.fb.addr == 0 && noted("too short for its colour layout"));
    CHECK(bi.mmap_count == 0 && noted("has 16-byte entries, fewer than 20"));
    CHECK(!strcmp(bi.cmdline, "app=x"));
}

// The command line ends at its tag's end even without a NUL.
static void mb2_cmdline_unterminated(void)
{
    mb2_begin();
    uint64_t t = mb2_tag(1, 8 + 5);
    memcpy(mem + t + 8, "app=xyz", 7);              // "yz" lies past the tag
    mb2_finish();
    CHECK(!strcmp(bi.cmdline, "app=x"));
}

static void mb2_bad_total(void)
{
    reset();
    put32(0, 4);
    mb2_parse(&bi, 0, map, NULL);
    CHECK(noted("claims 4 bytes, outside 8..1048576"));
    reset();
    put32(0, 1u << 21);
    mb2_parse(&bi, 0, map, NULL);
    CHECK(noted("claims 2097152 bytes"));
    reset();
    put32(0, sizeof mem + 8);
    mb2_parse(&bi, 0, map, NULL);
    CHECK(noted("the 16392 bytes of information at 0x0 cannot be read"));
}

// ---- the memory map rule, the notes -----------------------------------------------

static void mmap_entry_wraps(void)
{
    mb2_begin();
    uint64_t t = mb2_tag(6, 16 + 48);
    put32(t + 8, 24);
    put64(t + 16, 0xfffffffffffff000ull);
    put64(t + 24, 0x1000);                          // ends at 2^64: wraps to 0
    put64(t + 40, 0x100000);
    put64(t + 48, 0x1000);
    mb2_finish();
    CHECK(bi.mmap_count == 1 && entry_is(0, 0x100000, 0x1000, 0));
    CHECKF(noted("multiboot2: memory map entries past the end of the address space: 1 (the first "
                 "at 0xfffffffffffff000, length 0x1000)"), "%s", bi.notes);
}

static void mmap_full(void)
{
    mb2_begin();
    mb2_mmap(BOOT_MMAP_MAX + 5, 24);
    mb2_finish();
    CHECK(bi.mmap_count == BOOT_MMAP_MAX);
    CHECKF(noted("multiboot2: more than 128 memory map entries; ignoring the last 5"), "%s", bi.notes);
}

static void notes_fill_up(void)
{
    char line[100];
    memset(&bi, 0, sizeof bi);
    for (int i = 0; i < 100; i++) {
        snprintf(line, sizeof line, "note %d: %070d", i, i);
        boot_note_line(&bi, line);
    }
    size_t n = strnlen(bi.notes, BOOT_NOTES_MAX);
    CHECK(n < BOOT_NOTES_MAX);
    CHECK(n >= 4 && !strcmp(bi.notes + n - 4, "...\n"));
    CHECK(strstr(bi.notes, "note 0: ") == bi.notes && !strstr(bi.notes, "note 99"));
    // A loader that filled the notes without the marker: nothing is added.
    memset(bi.notes, 'x', BOOT_NOTES_MAX - 1);
    bi.notes[BOOT_NOTES_MAX - 1] = 0;
    boot_note_line(&bi, "more");
    CHECK(strnlen(bi.notes, BOOT_NOTES_MAX) == BOOT_NOTES_MAX - 1);
}

// ---- UEFI: the loader's structure taken over --------------------------------------

static void uefi_good(void)
{
    static struct boot_info from;
    memset(&from, 0, sizeof from);
    strcpy(from.cmdline, "app=ktest");
    from.mmap_count = 2;
    from.mmap[0] = (struct boot_mmap_entry){ 0, 0x9f000, BOOT_MEM_USABLE };
    from.mmap[1] = (struct boot_mmap_entry){ 0x100000, 0x1000000, BOOT_MEM_USABLE };
    from.rsdp_len = 36;
    uefi_take(&bi, &from);
    CHECK(!strcmp(bi.loader, "uefi") && !strcmp(bi.cmdline, "app=ktest"));
    CHECK(bi.mmap_count == 2 && entry_is(1, 0x100000, 0x1000000, BOOT_MEM_USABLE));
    CHECK(bi.rsdp_len == 36 && bi.notes[0] == 0);
}

static void uefi_out_of_range(void)
{
    static struct boot_info from;
    memset(&from, 0xff, sizeof from);               // every count and string at its worst
    for (int i = 0; i < BOOT_MMAP_MAX; i++)
        from.mmap[i] = (struct boot_mmap_entry){ (uint64_t)i << 12, 0x1000, BOOT_MEM_USABLE };
    from.mmap[3].len = 0;
    from.mmap[4].base = UINT64_MAX;
    from.notes[0] = 0;
    uefi_take(&bi, &from);
    CHECK(strnlen(bi.cmdline, BOOT_CMDLINE_MAX) == BOOT_CMDLINE_MAX - 1);
    CHECK(bi.rsdp_len == 36 && noted("uefi: the loader's RSDP copy claims 4294967295 bytes"));
    CHECK(noted("uefi: the loader's memory map claims 4294967295 entries, more than 128"));
    CHECK(bi.mmap_count == BOOT_MMAP_MAX - 2 && entry_is(3, 5 << 12, 0x1000, BOOT_MEM_USABLE));
    CHECKF(noted("uefi: memory map entries past the end of the address space: 1 (the first at "
                 "0xffffffffffffffff, length 0x1000)"), "%s", bi.notes);
}

int main(void)
{
    RUN(mb1_qemu);
    RUN(mb1_meminfo_only);
    RUN(mb1_parse_after_overwrite);
    RUN(mb1_cmdline_cases);
    RUN(mb1_entry_size_wraps);
    RUN(mb1_entry_too_short);
    RUN(mb1_unreadable);
    RUN(mb2_grub);
    RUN(mb2_tag_size_zero);
    RUN(mb2_tag_past_total);
    RUN(mb2_short_tags);
    RUN(mb2_cmdline_unterminated);
    RUN(mb2_bad_total);
    RUN(mmap_entry_wraps);
    RUN(mmap_full);
    RUN(notes_fill_up);
    RUN(uefi_good);
    RUN(uefi_out_of_range);
    reset();
    return CHECK_DONE();
}
