// SPDX-License-Identifier: MIT
// Fuzzes boot/multiboot.c's mb2_parse: the input is the loader's memory,
// phys i at byte i, with the tag list at phys 0 (its first word is its
// total size, which need not match the input's).
#include <stdint.h>
#include <string.h>
#include "boot/boot.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct boot_info bi;
    struct fuzz_mem mem = { .mem = data, .len = size };

    memset(&bi, 0, sizeof bi);
    mb2_parse(&bi, 0, fuzz_map, &mem);
    fuzz_check_boot_info(&bi);
    FUZZ_CHECK(!strcmp(bi.loader, "multiboot2"));
    fuzz_mem_free(&mem);
    return 0;
}
