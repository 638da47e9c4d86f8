// SPDX-License-Identifier: MIT
// The ACPI harnesses' input (fuzz_acpi.c, fuzz_acpi_numa.c): one flags byte,
// then a physical memory image whose byte i is at physical address i. The
// RSDP's bytes are the image's first 36 (or 20), or wherever the BIOS scan
// finds them (ACPI_SCAN: then the image is also the BIOS ROM area at
// 0xE0000, zero-padded to its 128 KiB); the tables it leads to lie wherever
// their addresses say. tests/fuzz/mkcorpus.py lays the QEMU dumps of
// tests/data/acpi out this way.
//
// A mutation that touches a table almost always breaks its checksum, and
// the parsers then stop at the checksum. With ACPI_FIX_SUMS set, the
// harness first recomputes the checksums of the RSDP, of the RSDT and
// XSDT and of every table they list, so the fuzzer reaches the code that
// reads the tables' contents; with it clear, it exercises the checks.
#ifndef GORO_FUZZ_ACPI_IMAGE_H
#define GORO_FUZZ_ACPI_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/acpi.h"
#include "tests/fuzz/fuzz.h"

enum {
    ACPI_FIX_SUMS = 1 << 0,     // recompute every reachable checksum first
    ACPI_RSDP_V1 = 1 << 1,      // hand over 20 RSDP bytes, not 36
    ACPI_SCAN = 1 << 2,         // find the RSDP by the BIOS scan instead
    // bits 3..5: the table fuzz_acpi looks up
    ACPI_NO_WARN = 1 << 6,      // the parsers get no warn callback
};

#define ACPI_ROM_START 0xe0000
#define ACPI_ROM_LEN 0x20000

struct acpi_image {
    unsigned flags;
    uint8_t *img;               // a private, writable copy of the image
    size_t len;
    struct fuzz_mem mem;
};

static inline uint8_t acpi_image_sum(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s = (uint8_t)(s + *p++);
    return s;
}

// Sets the checksum byte at sum_off so that len bytes at off sum to zero,
// for whatever part of them the image holds.
static inline void acpi_image_fix(struct acpi_image *a, uint64_t off, uint64_t len,
                                  uint64_t sum_off)
{
    if (off >= a->len || sum_off >= len)
        return;
    if (len > a->len - off)
        len = a->len - off;
    if (sum_off >= len)
        return;
    a->img[off + sum_off] = 0;
    a->img[off + sum_off] = (uint8_t)-acpi_image_sum(a->img + off, len);
}

static inline void acpi_image_fix_table(struct acpi_image *a, uint64_t phys)
{
    if (phys < a->len && a->len - phys >= 8)
        acpi_image_fix(a, phys, fuzz_rd32(a->img + phys + 4), 9);
}

// The root table at phys and the tables it lists (esize: 4 or 8): the
// first ACPI_FIX_ENTRIES distinct ones, so that a mutated root length
// costs the fuzzer no more than a real table list does.
#define ACPI_FIX_ENTRIES 32

static inline void acpi_image_fix_root(struct acpi_image *a, uint64_t phys, unsigned esize)
{
    uint64_t done[ACPI_FIX_ENTRIES];
    unsigned ndone = 0;

    if (phys >= a->len || a->len - phys < 36)
        return;
    uint64_t len = fuzz_rd32(a->img + phys + 4);
    if (len > a->len - phys)
        len = a->len - phys;
    for (uint64_t e = 36; e + esize <= len && ndone < ACPI_FIX_ENTRIES; e += esize) {
        const uint8_t *p = a->img + phys + e;
        uint64_t t = esize == 8 ? fuzz_rd64(p) : fuzz_rd32(p);
        bool seen = t == phys;
        for (unsigned i = 0; i < ndone && !seen; i++)
            seen = done[i] == t;
        if (seen)
            continue;
        done[ndone++] = t;
        acpi_image_fix_table(a, t);
    }
    acpi_image_fix_table(a, phys);
}

static inline void acpi_image_fix_all(struct acpi_image *a)
{
    if (a->len < 20)
        return;
    acpi_image_fix_root(a, fuzz_rd32(a->img + 16), 4);
    if (a->len >= 36 && a->img[15] >= 2) {
        acpi_image_fix_root(a, fuzz_rd64(a->img + 24), 8);
        acpi_image_fix(a, 0, fuzz_rd32(a->img + 20), 32);
    }
    acpi_image_fix(a, 0, 20, 8);
}

// Returns false when the input is too short to hold a flags byte.
static inline bool acpi_image_open(struct acpi_image *a, const uint8_t *data, size_t size)
{
    memset(a, 0, sizeof *a);
    if (size < 1)
        return false;
    a->flags = data[0];
    a->len = size - 1;
    a->img = malloc(a->len ? a->len : 1);
    FUZZ_CHECK(a->img);
    memcpy(a->img, data + 1, a->len);
    if (a->flags & ACPI_FIX_SUMS)
        acpi_image_fix_all(a);
    a->mem.mem = a->img;
    a->mem.len = a->len;
    return true;
}

// The map callback the parsers get, with the acpi_image as its context.
static inline const void *acpi_image_map(void *ctx, uint64_t phys, size_t len)
{
    struct acpi_image *a = ctx;
    if ((a->flags & ACPI_SCAN) && phys >= ACPI_ROM_START && phys - ACPI_ROM_START < ACPI_ROM_LEN) {
        uint64_t off = phys - ACPI_ROM_START;
        if (len > ACPI_ROM_LEN - off)
            return NULL;
        uint8_t *p = fuzz_alloc(&a->mem, len);
        if (off < a->len)
            memcpy(p, a->img + off, len < a->len - off ? len : a->len - off);
        return p;
    }
    return fuzz_map(&a->mem, phys, len);
}

static inline acpi_warn_fn acpi_image_warn(const struct acpi_image *a)
{
    return a->flags & ACPI_NO_WARN ? NULL : fuzz_warn;
}

// The RSDP as the kernel would hand it to acpi_parse (drivers/acpi_boot.c):
// the loader's copy, here the image's head, or the one the BIOS scan finds,
// 36 bytes when its revision says 2.0. *len is 0 when there is none.
static inline const uint8_t *acpi_image_rsdp(struct acpi_image *a, size_t *len)
{
    uint64_t phys = 0;
    *len = 0;
    if (a->flags & ACPI_SCAN) {
        phys = acpi_scan_rsdp(acpi_image_map, a);
        if (!phys)
            return NULL;
        const uint8_t *r = acpi_image_map(a, phys, 20);
        FUZZ_CHECK(r && !memcmp(r, "RSD PTR ", 8) && acpi_image_sum(r, 20) == 0);
        *len = r[15] >= 2 && acpi_image_map(a, phys, 36) ? 36 : 20;
    } else {
        *len = a->flags & ACPI_RSDP_V1 ? 20 : 36;
        if (*len > a->len)
            *len = a->len;
    }
    return acpi_image_map(a, phys, *len);
}

static inline void acpi_image_close(struct acpi_image *a)
{
    fuzz_mem_free(&a->mem);
    free(a->img);
}

// What acpi_parse promises about *info.
static inline void acpi_image_check_info(const struct acpi_info *info, int rc)
{
    FUZZ_CHECK(rc == 0 || rc == -1);
    FUZZ_CHECK(info->cpu_count <= ACPI_MAX_CPUS);
    FUZZ_CHECK(info->ioapic_count <= ACPI_MAX_IOAPICS);
    FUZZ_CHECK(info->override_count <= ACPI_MAX_OVERRIDES);
    if (rc < 0)
        FUZZ_CHECK(!info->madt_found && !info->fadt_found && !info->hpet_addr);
    for (uint32_t i = 0; i < info->cpu_count; i++) {
        FUZZ_CHECK(info->cpus[i].enabled || info->cpus[i].online_capable);
        for (uint32_t j = 0; j < i; j++)
            FUZZ_CHECK(info->cpus[i].apic_id != info->cpus[j].apic_id);
    }
}

#endif
