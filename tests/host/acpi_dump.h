// SPDX-License-Identifier: MIT
// What the ACPI host tests share: a fake physical memory loaded from a
// QEMU dump (tests/data/acpi/*.txt, written by app=acpidump), the map and
// warn callbacks the parsers take, and helpers for editing tables. Static
// inline, so each test includes what it uses.
#ifndef GORO_ACPI_DUMP_H
#define GORO_ACPI_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "drivers/acpi.h"
#include "drivers/acpi_numa.h"
#include "check.h"

static const char *data_dir = "tests/data/acpi";

struct region {
    uint64_t phys;
    size_t len;
    uint8_t *bytes;
    char sig[5];
};

#define MAX_REGIONS 64
#define MAX_MAPS 8192
#define MAX_WARNINGS 64

struct machine {
    struct region r[MAX_REGIONS];
    int nr;
    void *maps[MAX_MAPS];       // every copy handed out, freed by machine_free
    int nmaps;
    char warnings[MAX_WARNINGS][200];
    int nwarnings;
    struct acpi_info info;
    struct acpi_numa numa;
};

// Each map is a fresh heap copy of exactly the bytes asked for, so AddressSanitizer
// catches any read past what the parser mapped. A table a test grew may reach
// over the next one in the dump's address space: a region that starts at phys
// wins over one containing it.
static inline const void *map_copy(void *ctx, uint64_t phys, size_t len)
{
    struct machine *m = ctx;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < m->nr; i++) {
            struct region *r = &m->r[i];
            if (phys < r->phys || phys - r->phys > r->len || len > r->len - (phys - r->phys))
                continue;
            if (pass == 0 && phys != r->phys)
                continue;
            if (m->nmaps == MAX_MAPS)
                return NULL;
            void *p = malloc(len ? len : 1);
            memcpy(p, r->bytes + (phys - r->phys), len);
            m->maps[m->nmaps++] = p;
            return p;
        }
    }
    return NULL;
}

static inline void warn_collect(void *ctx, const char *msg)
{
    struct machine *m = ctx;
    if (getenv("ACPI_TEST_VERBOSE"))
        printf("  warning: %s\n", msg);
    if (m->nwarnings < MAX_WARNINGS)
        snprintf(m->warnings[m->nwarnings++], sizeof m->warnings[0], "%s", msg);
}

static inline bool warned(struct machine *m, const char *needle)
{
    for (int i = 0; i < m->nwarnings; i++)
        if (strstr(m->warnings[i], needle))
            return true;
    return false;
}

static inline struct region *add_region(struct machine *m, const char *sig, uint64_t phys, size_t len)
{
    struct region *r = &m->r[m->nr++];
    r->phys = phys;
    r->len = len;
    r->bytes = calloc(1, len ? len : 1);
    size_t n = strnlen(sig, sizeof r->sig - 1);
    memcpy(r->sig, sig, n);
    r->sig[n] = 0;
    return r;
}

static inline struct region *find_region(struct machine *m, const char *sig)
{
    for (int i = 0; i < m->nr; i++)
        if (!strcmp(m->r[i].sig, sig))
            return &m->r[i];
    return NULL;
}

static inline void machine_free(struct machine *m)
{
    for (int i = 0; i < m->nr; i++)
        free(m->r[i].bytes);
    for (int i = 0; i < m->nmaps; i++)
        free(m->maps[i]);
    free(m);
}

static inline int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "ACPIDUMP SIG PHYS OFFSET HEXBYTES", chunks of a table in order.
static inline bool load_line(struct machine *m, const char *line)
{
    char sig[8], hex[256];
    unsigned long long phys;
    unsigned off;
    struct region *r = NULL;

    if (strncmp(line, "ACPIDUMP ", 9) || !strncmp(line, "ACPIDUMP END", 12))
        return true;
    if (sscanf(line, "ACPIDUMP %4s %llx %x %255s", sig, &phys, &off, hex) != 4)
        return false;
    for (int i = 0; i < m->nr; i++)
        if (m->r[i].phys == phys && !strcmp(m->r[i].sig, sig))
            r = &m->r[i];
    if (!r) {
        if (off != 0 || m->nr == MAX_REGIONS)
            return false;
        r = add_region(m, sig, phys, 0);
    }
    size_t n = strlen(hex) / 2;
    if (off != r->len)
        return false;
    r->bytes = realloc(r->bytes, r->len + n);
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        r->bytes[r->len + i] = (uint8_t)(hi << 4 | lo);
    }
    r->len += n;
    return true;
}

static inline struct machine *load_dump(const char *name)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/%s.txt", data_dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        CHECKF(0, "cannot open %s", path);
        return NULL;
    }
    struct machine *m = calloc(1, sizeof *m);
    while (fgets(line, sizeof line, f)) {
        if (!load_line(m, line)) {
            CHECKF(0, "%s: bad line %.40s", path, line);
            break;
        }
    }
    fclose(f);
    return m;
}

// ---- editing tables ---------------------------------------------------------

static inline uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static inline void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

static inline uint8_t sum(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s = (uint8_t)(s + *p++);
    return s;
}

// Recomputes an SDT's checksum (byte 9) over its stated length.
static inline void fix_table(struct region *r)
{
    size_t len = get32(r->bytes + 4);
    if (len > r->len)
        len = r->len;
    r->bytes[9] = 0;
    r->bytes[9] = (uint8_t)-sum(r->bytes, len);
}

// Resizes a region (a table whose entries a test adds or removes).
static inline void resize(struct region *r, size_t len)
{
    r->bytes = realloc(r->bytes, len);
    if (len > r->len)
        memset(r->bytes + r->len, 0, len - r->len);
    r->len = len;
    put32(r->bytes + 4, (uint32_t)len);
}

// The dumps' directory: argv[1], else tests/data/acpi from the tree's top,
// else that directory found from the binary's own path (BUILD/host/).
static inline void find_data_dir(int argc, char **argv)
{
    static char buf[4096];
    char probe[4200];
    FILE *f;

    if (argc > 1) {
        data_dir = argv[1];
        return;
    }
    snprintf(probe, sizeof probe, "%s/seabios-pc-smp1.txt", data_dir);
    if ((f = fopen(probe, "r"))) {
        fclose(f);
        return;
    }
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 64);
    if (n <= 0)
        return;
    buf[n] = 0;
    char *slash = NULL;
    for (char *c = buf; *c; c++)
        if (*c == '/')
            slash = c;
    if (slash) {
        snprintf(slash, sizeof buf - (size_t)(slash - buf), "/../../tests/data/acpi");
        data_dir = buf;
    }
}

#endif
