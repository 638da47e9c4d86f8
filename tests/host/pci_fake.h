// SPDX-License-Identifier: MIT
// A PCI bus in memory, for the PCI parser's host tests and its fuzzer:
// functions with a config space each and BARs that size as hardware's do
// (a write keeps only the bits the BAR's size lets through), loaded from
// a dump taken from QEMU (tests/data/pci/*.txt, tools/build/pci_capture.py) or
// built by hand. Reached through a struct pci_bus_io like the kernel's.
#ifndef GORO_PCI_FAKE_H
#define GORO_PCI_FAKE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/pci/pci_cfg.h"

#define FAKE_MAX_FUNCS 32

struct fake_func {
    bool present;
    uint8_t bus, dev, fn;
    uint8_t cfg[4096];
    uint32_t cfg_len;               // bytes the dump had (256 or 4096)
    // per BAR dword: the bits a write may change (0: every bit, not a BAR)
    uint32_t bar_mask[6];
    bool is_bar[6];
    bool bar_ignores_writes[6];     // a broken BAR: keeps its value
    // what Linux said: start, end, flags for BARs 0-5
    uint64_t res_start[6], res_end[6], res_flags[6];
};

struct fake_bus {
    struct fake_func f[FAKE_MAX_FUNCS];
    int n;
    uint32_t reads, writes;
};

static inline struct fake_func *fake_find(struct fake_bus *b, uint8_t bus, uint8_t dev, uint8_t fn)
{
    for (int i = 0; i < b->n; i++)
        if (b->f[i].present && b->f[i].bus == bus && b->f[i].dev == dev && b->f[i].fn == fn)
            return &b->f[i];
    return 0;
}

static inline uint32_t fake_read32(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    struct fake_bus *b = ctx;
    b->reads++;
    struct fake_func *f = fake_find(b, bus, dev, fn);
    if (!f)
        return 0xFFFFFFFFu;
    if (off & 3 || off >= 4096) {
        fprintf(stderr, "pci_fake: misaligned or out-of-range read at 0x%x\n", off);
        abort();
    }
    uint32_t v;
    memcpy(&v, f->cfg + off, 4);
    return v;
}

static inline void fake_write32(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t v)
{
    struct fake_bus *b = ctx;
    b->writes++;
    struct fake_func *f = fake_find(b, bus, dev, fn);
    if (!f)
        return;
    if (off & 3 || off >= 4096) {
        fprintf(stderr, "pci_fake: misaligned or out-of-range write at 0x%x\n", off);
        abort();
    }
    if (off >= 0x10 && off < 0x28 && f->is_bar[(off - 0x10) / 4]) {
        int i = (off - 0x10) / 4;
        if (f->bar_ignores_writes[i])
            return;
        uint32_t old;
        memcpy(&old, f->cfg + off, 4);
        v = (v & f->bar_mask[i]) | (old & ~f->bar_mask[i]);
    }
    if (off == 0x04) {
        // The status register: read-only but for its error bits, which a
        // write of one clears (PCI 3.0, 6.2.3).
        uint32_t old;
        memcpy(&old, f->cfg + off, 4);
        uint32_t rw1c = 0xF900u << 16;
        v = (v & 0xFFFFu) | (old & 0xFFFF0000u & ~(v & rw1c));
    }
    memcpy(f->cfg + off, &v, 4);
}

static inline struct pci_bus_io fake_io(struct fake_bus *b, uint16_t cfg_size)
{
    return (struct pci_bus_io){ .read32 = fake_read32, .write32 = fake_write32, .ctx = b,
                                .segment = 0, .bus_first = 0, .bus_last = 255, .cfg_size = cfg_size };
}

// Linux's resource flags (include/linux/ioport.h).
#define RES_IO 0x100
#define RES_MEM 0x200
#define RES_PREFETCH 0x2000
#define RES_MEM_64 0x100000
#define RES_PCI_FIXED 0x10      // a legacy range (IDE's compatibility ports), not a BAR

// The write masks of BARs 0-5 from Linux's resource lines: a BAR of size
// s lets through the address bits at and above s; a 64-bit BAR's upper
// dword lets through the upper half of that mask.
static inline void fake_bar_masks(struct fake_func *f)
{
    for (int i = 0; i < 6; i++) {
        if (f->res_flags[i] & RES_PCI_FIXED)
            f->res_flags[i] = 0;
        if (!f->res_flags[i] || f->res_end[i] < f->res_start[i])
            continue;
        uint64_t size = f->res_end[i] - f->res_start[i] + 1;
        uint64_t m = ~(size - 1);
        bool io = f->res_flags[i] & RES_IO;
        f->is_bar[i] = true;
        f->bar_mask[i] = (uint32_t)m & (io ? ~3u : ~0xFu);
        if (!io && (f->res_flags[i] & RES_MEM_64) && i < 5) {
            f->is_bar[i + 1] = true;
            f->bar_mask[i + 1] = (uint32_t)(m >> 32);
            i++;
        }
    }
    // Unimplemented BARs read 0 after all ones.
    for (int i = 0; i < 6; i++) {
        uint8_t ht = f->cfg[0x0E] & 0x7F;
        if (!f->is_bar[i] && (ht == 0 || i < 2)) {
            f->is_bar[i] = true;
            f->bar_mask[i] = 0;
        }
    }
}

static inline int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// Loads tests/data/pci/NAME.txt; false when it cannot be read.
static inline bool fake_load(struct fake_bus *b, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    memset(b, 0, sizeof *b);
    char line[512];
    struct fake_func *f = 0;
    int nres = 0;
    while (fgets(line, sizeof line, fp)) {
        unsigned seg, bus, dev, fn, off;
        char hex[256];
        unsigned long long s, e, fl;
        if (sscanf(line, "PCIDUMP DEV %x:%x:%x.%x", &seg, &bus, &dev, &fn) == 4) {
            if (f)
                fake_bar_masks(f);
            if (b->n == FAKE_MAX_FUNCS)
                break;
            f = &b->f[b->n++];
            f->present = true;
            f->bus = (uint8_t)bus;
            f->dev = (uint8_t)dev;
            f->fn = (uint8_t)fn;
            nres = 0;
        } else if (f && sscanf(line, "PCIDUMP CFG %x %255s", &off, hex) == 2) {
            size_t n = strlen(hex) / 2;
            for (size_t i = 0; i < n && off + i < sizeof f->cfg; i++)
                f->cfg[off + i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
            if (off + n > f->cfg_len)
                f->cfg_len = off + (uint32_t)n;
        } else if (f && sscanf(line, "PCIDUMP RES %llx %llx %llx", &s, &e, &fl) == 3) {
            if (nres < 6) {
                f->res_start[nres] = s;
                f->res_end[nres] = e;
                f->res_flags[nres] = fl;
            }
            nres++;
        }
    }
    if (f)
        fake_bar_masks(f);
    fclose(fp);
    return b->n > 0;
}

#endif
