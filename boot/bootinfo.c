// SPDX-License-Identifier: MIT
// What the boot parsers share (boot/boot.h): formatted notes and the
// memory map's entry rule. Pure, compiled into the kernel, the host tests
// and the fuzz harnesses.
#include <stdarg.h>
#include <stdint.h>
#ifdef GORO_HOST_TEST
#include <stdio.h>
#else
#include "lib/printf.h"
#endif
#include "boot/boot.h"

void boot_note(struct boot_info *bi, const char *fmt, ...)
{
    char line[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    boot_note_line(bi, line);
}

void boot_mmap_add(struct boot_info *bi, struct boot_mmap_drops *drops, uint64_t base,
                   uint64_t len, uint32_t type)
{
    if (len == 0)
        return;
    if (len > UINT64_MAX - base) {
        if (drops->wrapped++ == 0) {
            drops->wrap_base = base;
            drops->wrap_len = len;
        }
        return;
    }
    if (bi->mmap_count >= BOOT_MMAP_MAX) {
        drops->full++;
        return;
    }
    bi->mmap[bi->mmap_count++] = (struct boot_mmap_entry){ base, len, type };
}

void boot_mmap_notes(struct boot_info *bi, const char *who, const struct boot_mmap_drops *drops)
{
    if (drops->wrapped)
        boot_note(bi, "%s: memory map entries past the end of the address space: %u (the "
                  "first at 0x%llx, length 0x%llx); ignoring them", who, drops->wrapped,
                  (unsigned long long)drops->wrap_base, (unsigned long long)drops->wrap_len);
    if (drops->full)
        boot_note(bi, "%s: more than %u memory map entries; ignoring the last %u",
                  who, BOOT_MMAP_MAX, drops->full);
}
