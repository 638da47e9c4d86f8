// SPDX-License-Identifier: MIT
// ACPI MCFG (drivers/acpi_mcfg.h): a 36-byte header, 8 reserved bytes,
// then 16-byte entries: base address (8), segment group (2), first and
// last bus (1 each), 4 reserved.
#include "drivers/acpi_mcfg.h"
#include "lib/string.h"

#define HEADER_LEN 44
#define ENTRY_LEN 16

static uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint32_t acpi_parse_mcfg(const void *table, struct acpi_mcfg *out, acpi_warn_fn warn, void *warn_ctx)
{
    const uint8_t *t = table;
    memset(out, 0, sizeof *out);
    uint32_t len;
    memcpy(&len, t + 4, 4);
    if (len < HEADER_LEN) {
        acpi_warn_fmt(warn, warn_ctx, "MCFG: %u bytes, shorter than its header; no ECAM", len);
        return 0;
    }
    if ((len - HEADER_LEN) % ENTRY_LEN)
        acpi_warn_fmt(warn, warn_ctx, "MCFG: %u bytes leave part of an entry; it is ignored", len);
    for (uint32_t off = HEADER_LEN, i = 0; off + ENTRY_LEN <= len; off += ENTRY_LEN, i++) {
        struct acpi_mcfg_entry e;
        uint16_t seg;
        memcpy(&seg, t + off + 8, 2);
        e = (struct acpi_mcfg_entry){ .base = le64(t + off), .segment = seg,
                                      .bus_first = t[off + 10], .bus_last = t[off + 11] };
        if (e.bus_last < e.bus_first || !e.base || (e.base & 0xFFFFF)) {
            acpi_warn_fmt(warn, warn_ctx, "MCFG: entry %u (segment %u, buses %u-%u at 0x%llx) is "
                          "unusable; skipped", i, e.segment, e.bus_first, e.bus_last,
                          (unsigned long long)e.base);
            continue;
        }
        if (out->count == ACPI_MCFG_MAX) {
            acpi_warn_fmt(warn, warn_ctx, "MCFG: more than %u entries; the rest are ignored",
                          ACPI_MCFG_MAX);
            break;
        }
        out->e[out->count++] = e;
    }
    return out->count;
}
