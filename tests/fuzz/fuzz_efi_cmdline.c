// SPDX-License-Identifier: MIT
// Fuzzes the GNU-EFI loader's command-line sources (boot/efi/loader_parse.c):
// the input's first byte picks the load options (even: the rest is their
// UCS-2 bytes) or \goro.cmdline (odd: the rest is the file), and its bits
// 1..7 shrink the output buffer to exercise the cut.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "boot/bootinfo.h"
#include "boot/efi/loader_parse.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    // 1..127 bytes, or the loader's own BOOT_CMDLINE_MAX when the bits are 0.
    size_t cap = data[0] >> 1 ? data[0] >> 1 : BOOT_CMDLINE_MAX;
    char *out = malloc(cap);
    uint8_t *in = malloc(size - 1 ? size - 1 : 1);
    size_t len;

    FUZZ_CHECK(out && in);
    memcpy(in, data + 1, size - 1);
    if (data[0] & 1) {
        len = cmdline_from_file(out, cap, (const char *)in, size - 1);
        FUZZ_CHECK(len < cap && strlen(out) == len);
        FUZZ_CHECK(!strpbrk(out, "\r\n\t"));
    } else {
        len = cmdline_from_options(out, cap, in, size - 1);
        FUZZ_CHECK(len < cap && strlen(out) == len);
        for (size_t i = 0; i < len; i++)
            FUZZ_CHECK(out[i] >= 0x20 && out[i] < 0x7f);
    }
    free(in);
    free(out);
    return 0;
}
