// SPDX-License-Identifier: MIT
// fw_cfg through the legacy ports: write a 16-bit key to the selector, then
// read the item's bytes one at a time from the data port; each read advances
// an offset that a selector write resets. Multi-byte fields in the file
// directory are big-endian (docs/specs/fw_cfg.rst in QEMU's tree).
#include <stdint.h>
#include "drivers/fw_cfg.h"
#include "lib/string.h"
#include "arch/x86.h"

#define FW_CFG_PORT_SEL  0x510
#define FW_CFG_PORT_DATA 0x511

#define FW_CFG_SIGNATURE 0x0000
#define FW_CFG_FILE_DIR  0x0019

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

static void read_bytes(void *dst, size_t n)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = inb(FW_CFG_PORT_DATA);
}

static uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
static uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }

// On hardware without fw_cfg, 0x511 reads as 0xFF (floating bus), so the
// signature check keeps the directory walk from running on garbage.
static bool fw_cfg_present(void)
{
    char sig[4];
    select_key(FW_CFG_SIGNATURE);
    read_bytes(sig, sizeof sig);
    return memcmp(sig, "QEMU", 4) == 0;
}

static bool find_file(const char *name, uint16_t *select, uint32_t *size)
{
    uint32_t count;
    select_key(FW_CFG_FILE_DIR);
    read_bytes(&count, sizeof count);
    count = be32(count);
    for (uint32_t i = 0; i < count; i++) {
        struct fw_cfg_file f;
        read_bytes(&f, sizeof f);
        f.name[FW_CFG_NAME_MAX - 1] = 0;
        if (strcmp(f.name, name) == 0) {
            *select = be16(f.select);
            *size = be32(f.size);
            return true;
        }
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
    read_bytes(buf, n);
    *len = n;
    return true;
}
