// SPDX-License-Identifier: MIT
// fw_cfg through the legacy ports: write a 16-bit key to the selector, then
// read the item's bytes from the current offset, which each read advances
// and a selector write resets. Multi-byte fields in the file directory are
// big-endian (docs/specs/fw_cfg.rst in QEMU's tree).
//
// The bytes come through the DMA interface where the device has it (QEMU
// 2.9 and later: FW_CFG_ID's bit 1): one request names a buffer and a
// length, and QEMU fills it within the write that starts it. Else one
// byte per read of the data port. Under TCG every port access takes QEMU's
// global lock, and the directory walk that finds a file is 64 bytes per
// file (about 25 files): byte by byte that was over a thousand lock round
// trips while the APs, started just before, needed the lock to come up;
// by DMA it is two per file.
#include <stdint.h>
#include "drivers/fw_cfg.h"
#include "lib/string.h"
#include "arch/x86.h"

#define FW_CFG_PORT_SEL  0x510
#define FW_CFG_PORT_DATA 0x511

#define FW_CFG_PORT_DMA  0x514     // 64-bit big-endian address: high half here, low half (the trigger) at +4

#define FW_CFG_SIGNATURE 0x0000
#define FW_CFG_ID        0x0001     // features, little-endian: bit 1 the DMA interface
#define FW_CFG_NB_CPUS   0x0005     // the boot cores, 16 bits little-endian
#define FW_CFG_FILE_DIR  0x0019

#define FW_CFG_FEATURE_DMA (1u << 1)
#define DMA_CTL_ERROR 0x01u
#define DMA_CTL_READ  0x02u
#define DMA_MAX_LOOKS 10000000u     // looks at the control word before giving up: milliseconds at least

#define FW_CFG_NAME_MAX 56

struct fw_cfg_file {
    uint32_t size;          // big-endian
    uint16_t select;        // big-endian
    uint16_t reserved;
    char name[FW_CFG_NAME_MAX];
} __attribute__((packed));

static void select_key(uint16_t key)
{
    // The selector port is 16 bits wide and takes the key little-endian,
    // unlike the big-endian directory contents.
    outw(FW_CFG_PORT_SEL, key);
}

static uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }
static uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
static uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }

// A DMA request and its bounce buffer, both in the image (whose addresses
// are physical ones: the kernel runs identity-mapped where it was loaded),
// so that a caller's buffer anywhere will do. Boot core only (fw_cfg.h).
struct fw_cfg_dma {
    uint32_t control;       // big-endian, DMA_CTL_*; the device clears it when done
    uint32_t length;        // big-endian
    uint64_t address;       // big-endian, physical
} __attribute__((packed));
static struct fw_cfg_dma dma_req __attribute__((aligned(16)));
static uint8_t dma_buf[512] __attribute__((aligned(16)));
static bool use_dma;

static bool dma_read(uint8_t *d, size_t n)
{
    while (n) {
        size_t k = n < sizeof dma_buf ? n : sizeof dma_buf;
        dma_req = (struct fw_cfg_dma){ be32(DMA_CTL_READ), be32((uint32_t)k), be64((uint64_t)(uintptr_t)dma_buf) };
        uint64_t req = (uint64_t)(uintptr_t)&dma_req;
        __asm__ volatile("" ::: "memory");     // the request is in memory before the trigger
        outl(FW_CFG_PORT_DMA, be32((uint32_t)(req >> 32)));
        outl(FW_CFG_PORT_DMA + 4, be32((uint32_t)req));
        // QEMU finishes within the write, so the first look normally
        // sees it done; no pause between looks (under TCG a pause takes
        // the global lock). A device that never finishes counts as an error.
        uint32_t ctl = 0;
        for (uint32_t look = 0; look < DMA_MAX_LOOKS; look++)
            if (!((ctl = be32(*(volatile uint32_t *)&dma_req.control)) & ~DMA_CTL_ERROR))
                break;
        if (ctl)
            return false;
        memcpy(d, dma_buf, k);
        d += k;
        n -= k;
    }
    return true;
}

// n bytes from the selected item's current offset; false: the device
// reported a DMA error (the offset is then unknown).
static bool read_bytes(void *dst, size_t n)
{
    uint8_t *d = dst;
    if (use_dma)
        return dma_read(d, n);
    for (size_t i = 0; i < n; i++)
        d[i] = inb(FW_CFG_PORT_DATA);
    return true;
}

// The signature through the data port alone (4 byte reads, no DMA: it
// runs before the interface is picked, and before the APs' broadcast
// start; inlined, so fw_cfg_cpu_count stays where boot/text_order.txt puts
// it). On hardware without fw_cfg, 0x511 reads as 0xFF (floating bus).
static inline __attribute__((always_inline)) bool signature_ok(void)
{
    uint32_t sig = 0;
    select_key(FW_CFG_SIGNATURE);
    for (int i = 0; i < 4; i++)
        sig |= (uint32_t)inb(FW_CFG_PORT_DATA) << (8 * i);
    return sig == ('Q' | 'E' << 8 | 'M' << 16 | (uint32_t)'U' << 24);
}

// The signature check keeps the directory walk from running on garbage.
// Also picks the interface: DMA where the features say so. The device
// does not come or go, so it is probed once, at the first file read.
static bool fw_cfg_present(void)
{
    static enum { UNPROBED, ABSENT, PRESENT } state;
    if (state == UNPROBED) {
        uint32_t features = 0;             // a failed read leaves no features
        use_dma = false;                    // until the features say otherwise
        state = signature_ok() ? PRESENT : ABSENT;
        if (state == PRESENT) {
            select_key(FW_CFG_ID);
            read_bytes(&features, sizeof features);
            use_dma = features & FW_CFG_FEATURE_DMA;
        }
    }
    return state == PRESENT;
}

// The directory's entries, read a batch per DMA request (8 of 64 bytes,
// the bounce buffer's size): QEMU lists about 25 files, opt/ among the
// last, and each request is two port writes, each a round trip through
// QEMU's global lock, while the APs started just before queue for it to
// come up. Byte by byte the batch would only read past the match.
#define DIR_BATCH (sizeof dma_buf / sizeof(struct fw_cfg_file))

static bool find_file(const char *name, uint16_t *select, uint32_t *size)
{
    struct fw_cfg_file batch[DIR_BATCH] = { 0 };
    uint32_t count;
    select_key(FW_CFG_FILE_DIR);
    if (!read_bytes(&count, sizeof count))
        return false;
    count = be32(count);
    for (uint32_t i = 0; i < count;) {
        uint32_t k = count - i;
        if (!use_dma)
            k = 1;
        else if (k > DIR_BATCH)
            k = DIR_BATCH;
        if (!read_bytes(batch, k * sizeof batch[0]))
            return false;
        for (uint32_t j = 0; j < k; j++) {
            struct fw_cfg_file *f = &batch[j];
            f->name[FW_CFG_NAME_MAX - 1] = 0;
            if (strcmp(f->name, name) == 0) {
                *select = be16(f->select);
                *size = be32(f->size);
                return true;
            }
        }
        i += k;
    }
    return false;
}

bool fw_cfg_read_file(const char *name, void *buf, size_t cap, size_t *len)
{
    uint16_t select;
    uint32_t size;

    *len = 0;
    if (!fw_cfg_present() || !find_file(name, &select, &size))
        return false;
    size_t n = size < cap ? size : cap;
    select_key(select);
    if (!read_bytes(buf, n))
        return false;
    *len = n;
    return true;
}

// Read before the APs' broadcast start, so through the data port alone:
// the signature and the count are 6 byte reads, where the probe and the
// DMA path (fw_cfg_present's features, read_bytes) would add about 30 basic
// blocks to translate before the STARTUP, 5-8 us of host time each under
// TCG (docs/boot.md). It leaves the probe to the first file read.
uint32_t fw_cfg_cpu_count(void)
{
    if (!signature_ok())
        return 0;
    select_key(FW_CFG_NB_CPUS);
    uint32_t n = inb(FW_CFG_PORT_DATA);     // 16 bits, little-endian
    return n | (uint32_t)inb(FW_CFG_PORT_DATA) << 8;
}
