// SPDX-License-Identifier: MIT
// Fuzzes the GNU-EFI loader's check of \goro.elf (boot/efi/loader_parse.c):
// the input is the file. When elf_image_check accepts it, the segments are
// walked as the loader's elf_load walks them, reading every byte it would
// copy, and what the check promised is checked.
#include <stdint.h>
#include <string.h>
#include "boot/efi/loader_parse.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t entry;
    struct elf_seg seg;
    const char *bad = elf_image_check(data, size, &entry);
    bool entry_seen = false;
    volatile uint8_t sink = 0;

    if (bad) {
        if (getenv("FUZZ_VERBOSE"))
            fprintf(stderr, "  rejected: %s\n", bad);
        FUZZ_CHECK(strlen(bad) > 0 && entry == 0);
        return 0;
    }
    for (size_t i = 0; i < elf_image_phnum(data); i++) {
        if (!elf_image_segment(data, i, &seg))
            continue;
        FUZZ_CHECK(seg.offset <= size && seg.filesz <= size - seg.offset);
        FUZZ_CHECK(seg.filesz <= seg.memsz);
        // elf_load's page rounding: paddr + memsz rounded up to a page.
        FUZZ_CHECK(seg.memsz <= UINT64_MAX - 0xFFF - seg.paddr);
        for (uint64_t k = 0; k < seg.filesz; k++)
            sink ^= data[seg.offset + k];
        entry_seen |= entry >= seg.paddr && entry - seg.paddr < seg.memsz;
    }
    FUZZ_CHECK(entry_seen);
    (void)sink;
    return 0;
}
