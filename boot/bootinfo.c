// SPDX-License-Identifier: MIT
// What the boot parsers share (boot/boot.h): formatted notes and the
// memory map's entry rule. Pure, compiled into the kernel, the host tests
// and the fuzz harnesses.
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef GORO_HOST_TEST
#include <stdio.h>
#else
#include "lib/printf.h"
#endif
#include <string.h>
#include "boot/boot.h"

const void *boot_kept_map(struct boot_kept *k, const void *live, uint64_t phys, size_t len)
{
    // Overlap, without phys + len (which may wrap): [phys, phys+len) meets
    // [k->phys, k->phys+k->len).
    bool meets = k->len && len && (phys >= k->phys ? phys - k->phys < k->len : k->phys - phys < len);
    if (!live || !meets)
        return live;
    if (len > sizeof k->scratch - k->used)
        return NULL;
    uint8_t *out = k->scratch + k->used;
    k->used += (uint32_t)len;
    memcpy(out, live, len);
    uint64_t from = phys > k->phys ? phys : k->phys;                      // first kept byte in range
    uint64_t n = k->len - (from - k->phys);                               // kept bytes from there...
    n = n < len - (from - phys) ? n : len - (from - phys);                // ...that the range holds
    memcpy(out + (from - phys), k->bytes + (from - k->phys), (size_t)n);
    return out;
}

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
