// SPDX-License-Identifier: MIT
// Fuzzes the UEFI memory map's hand-over: the loader's efi_mmap_convert
// (boot/efi/loader_parse.c) on a firmware map, then the kernel's uefi_take
// (boot/uefi.c) on the boot_info it made. The input's first byte picks:
//   even: bytes 1-2 the descriptor size, 3-10 and 11-18 the reserved
//         range's base and length (little-endian), the rest the map;
//   odd:  the rest is a loader's struct boot_info as raw bytes (zero-
//         padded), taken over by uefi_take directly.
#include <stdint.h>
#include <string.h>
#include "boot/boot.h"
#include "boot/efi/loader_parse.h"
#include "tests/fuzz/fuzz.h"

#define MAP_HDR 19

static void from_firmware_map(const uint8_t *data, size_t size, struct boot_info *loader)
{
    size_t desc_size = data[1] | data[2] << 8;
    uint64_t keep = fuzz_rd64(data + 3), keep_len = fuzz_rd64(data + 11);
    size_t map_size = size - MAP_HDR;
    uint8_t *map = malloc(map_size ? map_size : 1);

    FUZZ_CHECK(map);
    memcpy(map, data + MAP_HDR, map_size);
    loader->loader = "loader";
    efi_mmap_convert(loader, map, map_size, desc_size, keep, keep_len);
    free(map);
    fuzz_check_boot_info(loader);
    // Merged: no two neighbours that touch and agree are left apart.
    for (uint32_t i = 1; i < loader->mmap_count; i++)
        FUZZ_CHECK(loader->mmap[i - 1].type != loader->mmap[i].type ||
                   loader->mmap[i - 1].base + loader->mmap[i - 1].len != loader->mmap[i].base);
    // The reserved range is nowhere usable.
    for (uint32_t i = 0; keep_len && keep_len <= UINT64_MAX - keep && i < loader->mmap_count; i++) {
        const struct boot_mmap_entry *e = &loader->mmap[i];
        if (e->type == BOOT_MEM_USABLE)
            FUZZ_CHECK(e->base + e->len <= keep || e->base >= keep + keep_len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct boot_info loader, bi;

    if (size < 1)
        return 0;
    memset(&loader, 0, sizeof loader);
    if (data[0] & 1) {
        size_t n = size - 1 < sizeof loader ? size - 1 : sizeof loader;
        memcpy(&loader, data + 1, n);
        loader.loader = NULL;
    } else {
        if (size < MAP_HDR)
            return 0;
        from_firmware_map(data, size, &loader);
    }
    uefi_take(&bi, &loader);
    fuzz_check_boot_info(&bi);
    FUZZ_CHECK(!strcmp(bi.loader, "uefi"));
    return 0;
}
