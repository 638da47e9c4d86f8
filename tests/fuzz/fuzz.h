// SPDX-License-Identifier: MIT
// What the libFuzzer harnesses share (tests/fuzz/fuzz_*.c; docs/testing.md,
// "Fuzzing"). Each harness feeds one parser of outside input the fuzzer's
// bytes, under AddressSanitizer and UBSan with recovery off, and then
// checks the parser's promises about its output: a broken promise aborts
// like a sanitizer report, so libFuzzer saves the input as a crash.
//
// Memory handed to a parser through a map callback is a fresh heap copy of
// exactly the bytes asked for, so ASan reports any read past what the
// parser mapped, not only past the end of the input. (A single byte, as a
// string is mapped to find its end, points into the input itself, which
// libFuzzer allocates at its exact size.)
#ifndef GORO_FUZZ_H
#define GORO_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boot/bootinfo.h"

#define FUZZ_CHECK(c)                                                                 \
    do {                                                                              \
        if (!(c)) {                                                                   \
            fprintf(stderr, "fuzz: broken promise: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

// A fake physical memory: phys is an offset into mem[0..len).
struct fuzz_mem {
    const uint8_t *mem;
    size_t len;
    void **copies;              // every copy handed out, freed by fuzz_mem_free
    size_t ncopies, cap;
};

// A zeroed heap block of len bytes, freed with the others by fuzz_mem_free.
static inline uint8_t *fuzz_alloc(struct fuzz_mem *m, size_t len)
{
    if (m->ncopies == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->copies = realloc(m->copies, m->cap * sizeof *m->copies);
        FUZZ_CHECK(m->copies);
    }
    uint8_t *p = calloc(1, len ? len : 1);
    FUZZ_CHECK(p);
    m->copies[m->ncopies++] = p;
    return p;
}

static inline const void *fuzz_map(void *ctx, uint64_t phys, size_t len)
{
    struct fuzz_mem *m = ctx;
    if (phys > m->len || len > m->len - phys)
        return NULL;
    if (len == 1)
        return m->mem + phys;
    uint8_t *p = fuzz_alloc(m, len);
    memcpy(p, m->mem + phys, len);
    return p;
}

static inline void fuzz_mem_free(struct fuzz_mem *m)
{
    for (size_t i = 0; i < m->ncopies; i++)
        free(m->copies[i]);
    free(m->copies);
    m->copies = NULL;
    m->ncopies = m->cap = 0;
}

// A warning from a parser: one whole, terminated, single-line sentence.
static inline void fuzz_warn(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(msg);
    FUZZ_CHECK(n > 0 && n < 256);
    FUZZ_CHECK(!strchr(msg, '\n'));
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "  warning: %s\n", msg);
}

static inline uint32_t fuzz_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t fuzz_rd64(const uint8_t *p)
{
    return (uint64_t)fuzz_rd32(p) | (uint64_t)fuzz_rd32(p + 4) << 32;
}

static inline size_t fuzz_strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

// What every boot path promises about the boot_info it hands to kmain
// (boot/boot.h).
static inline void fuzz_check_boot_info(const struct boot_info *bi)
{
    FUZZ_CHECK(bi->loader != NULL);
    FUZZ_CHECK(fuzz_strnlen(bi->cmdline, BOOT_CMDLINE_MAX) < BOOT_CMDLINE_MAX);
    size_t notes = fuzz_strnlen(bi->notes, BOOT_NOTES_MAX);
    FUZZ_CHECK(notes < BOOT_NOTES_MAX);
    FUZZ_CHECK(bi->mmap_count <= BOOT_MMAP_MAX);
    for (uint32_t i = 0; i < bi->mmap_count; i++) {
        FUZZ_CHECK(bi->mmap[i].len > 0);
        FUZZ_CHECK(bi->mmap[i].len <= UINT64_MAX - bi->mmap[i].base);
    }
    FUZZ_CHECK(bi->rsdp_len <= sizeof bi->rsdp);
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "%s", bi->notes);
}

#endif
