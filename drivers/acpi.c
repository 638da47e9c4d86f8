// SPDX-License-Identifier: MIT
// ACPI table parser: RSDP, RSDT/XSDT, MADT, FADT, HPET.
//
// Pure code, compiled into the kernel and into the host tests
// (tests/host/test_acpi.c): it touches memory only through the caller's
// map callback and reports only through the warn callback, and keeps no
// state between calls.
//
// What must hold before a byte of a table is used:
//   1. its 36-byte header was mapped and its signature is the one wanted;
//   2. its length is at least the header and at most ACPI_TABLE_MAX;
//   3. the whole length was mapped and its bytes sum to zero.
// After that, every read is bounds-checked against that length, never
// against what a field inside the table claims. Firmware writes tables
// byte-packed, so multi-byte fields are read byte by byte (no unaligned
// loads, no struct overlays).
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef GORO_HOST_TEST
#include <stdio.h>
#else
#include "lib/printf.h"
#endif
#include "drivers/acpi.h"
#include "lib/le.h"

#define ACPI_HDR_LEN 36
#define ACPI_TABLE_MAX (1u << 20)       // no real table comes near; a bigger one is corrupt
#define RSDP_V1_LEN 20
#define RSDP_V2_LEN 36

#define MADT_HDR_LEN 44                 // SDT header, local APIC address, flags
#define MADT_PCAT_COMPAT (1u << 0)
#define MADT_CPU_ENABLED (1u << 0)
#define MADT_CPU_ONLINE_CAPABLE (1u << 1)

#define FADT_V1_LEN 116                 // ACPI 1.0's FADT ends after the flags
#define FADT_SCI_INT 46
#define FADT_PM1A_CNT_BLK 64
#define FADT_PM1B_CNT_BLK 68
#define FADT_PM_TMR_BLK 76
#define FADT_CENTURY 108                // the CMOS register of the century, 0: none
#define FADT_FLAGS 112
#define FADT_X_PM1A_CNT_BLK 172
#define FADT_X_PM1B_CNT_BLK 184
#define FADT_X_PM_TMR_BLK 208
#define FADT_TMR_VAL_EXT (1u << 8)

#define GAS_LEN 12
#define GAS_SYSTEM_MEMORY 0
#define GAS_SYSTEM_IO 1

#define HPET_LEN 56
#define HPET_BASE_GAS 40

struct acpi_ctx {
    acpi_map_fn map;
    void *map_ctx;
    acpi_warn_fn warn;
    void *warn_ctx;
};

// The RSDT or XSDT, validated: count entries of entry_size (4 or 8) bytes
// start at byte 36 of tab.
struct acpi_root {
    const uint8_t *tab;
    uint32_t count;
    uint32_t entry_size;
};

static uint8_t sum_bytes(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    return s;
}

void acpi_warn_fmtv(acpi_warn_fn warn, void *warn_ctx, const char *fmt, va_list ap)
{
    char msg[192];
    if (!warn)
        return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    warn(warn_ctx, msg);
}

void acpi_warn_fmt(acpi_warn_fn warn, void *warn_ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acpi_warn_fmtv(warn, warn_ctx, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static void acpi_warnf(struct acpi_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acpi_warn_fmtv(c->warn, c->warn_ctx, fmt, ap);
    va_end(ap);
}

// A signature as printable text: firmware garbage must not reach the console raw.
static void sig_text(char out[5], const uint8_t *sig)
{
    for (int i = 0; i < 4; i++)
        out[i] = (sig[i] >= 0x20 && sig[i] < 0x7f) ? (char)sig[i] : '?';
    out[4] = 0;
}

// The name a table goes by in warnings: the MADT's signature is "APIC",
// the FADT's "FACP".
static const char *table_name(const char sig[4], char buf[5])
{
    if (!memcmp(sig, "APIC", 4))
        return "MADT";
    if (!memcmp(sig, "FACP", 4))
        return "FADT";
    sig_text(buf, (const uint8_t *)sig);
    return buf;
}

// Maps the table at phys, which must carry signature sig, and validates it
// (header, length, checksum: the three rules at the top of this file).
// Returns the whole table and its length, or NULL after a warning.
static const uint8_t *acpi_map_table(struct acpi_ctx *c, uint64_t phys, const char sig[4],
                                     uint32_t *len_out)
{
    char nbuf[5], got[5];
    const char *name = table_name(sig, nbuf);
    const uint8_t *hdr, *tab;
    uint32_t len;

    if (phys == 0) {
        acpi_warnf(c, "ACPI %s: table address is 0; ignoring it", name);
        return NULL;
    }
    hdr = c->map(c->map_ctx, phys, ACPI_HDR_LEN);
    if (!hdr) {
        acpi_warnf(c, "ACPI %s: header at 0x%llx cannot be mapped; ignoring the table",
                   name, (unsigned long long)phys);
        return NULL;
    }
    if (memcmp(hdr, sig, 4) != 0) {
        sig_text(got, hdr);
        acpi_warnf(c, "ACPI %s: table at 0x%llx has signature \"%s\"; ignoring it",
                   name, (unsigned long long)phys, got);
        return NULL;
    }
    len = le32(hdr + 4);
    if (len < ACPI_HDR_LEN || len > ACPI_TABLE_MAX) {
        acpi_warnf(c, "ACPI %s: table at 0x%llx claims length %u, outside %u..%u; ignoring it",
                   name, (unsigned long long)phys, len, ACPI_HDR_LEN, ACPI_TABLE_MAX);
        return NULL;
    }
    tab = c->map(c->map_ctx, phys, len);
    if (!tab) {
        acpi_warnf(c, "ACPI %s: %u bytes at 0x%llx cannot be mapped; ignoring the table",
                   name, len, (unsigned long long)phys);
        return NULL;
    }
    if (sum_bytes(tab, len) != 0) {
        acpi_warnf(c, "ACPI %s: checksum of the %u-byte table at 0x%llx is wrong; ignoring it",
                   name, len, (unsigned long long)phys);
        return NULL;
    }
    *len_out = len;
    return tab;
}

// ---- RSDP and the root table ------------------------------------------

// Checks the RSDP. Returns false when it is unusable; else sets *xsdt_ok
// when its ACPI 2.0 part (length and extended checksum) is valid too.
static bool acpi_check_rsdp(struct acpi_ctx *c, const uint8_t *r, size_t len, bool *xsdt_ok)
{
    uint32_t xlen;

    *xsdt_ok = false;
    if (!r || len < RSDP_V1_LEN) {
        acpi_warnf(c, "ACPI RSDP: only %zu bytes given, fewer than its %u-byte ACPI 1.0 form",
                   r ? len : 0, RSDP_V1_LEN);
        return false;
    }
    if (memcmp(r, "RSD PTR ", 8) != 0) {
        acpi_warnf(c, "ACPI RSDP: signature is not \"RSD PTR \"; no ACPI tables");
        return false;
    }
    if (sum_bytes(r, RSDP_V1_LEN) != 0) {
        acpi_warnf(c, "ACPI RSDP: checksum of the first 20 bytes is wrong; no ACPI tables");
        return false;
    }
    if (r[15] < 2)
        return true;
    xlen = len >= RSDP_V2_LEN ? le32(r + 20) : 0;
    if (len < RSDP_V2_LEN || xlen < RSDP_V2_LEN || xlen > len) {
        acpi_warnf(c, "ACPI RSDP: revision %u but length %u with %zu bytes given; using the RSDT only",
                   r[15], xlen, len);
        return true;
    }
    if (sum_bytes(r, xlen) != 0) {
        acpi_warnf(c, "ACPI RSDP: extended checksum is wrong; using the RSDT only");
        return true;
    }
    *xsdt_ok = true;
    return true;
}

static bool acpi_map_root(struct acpi_ctx *c, uint64_t phys, bool xsdt, struct acpi_root *root)
{
    const char *sig = xsdt ? "XSDT" : "RSDT";
    uint32_t esz = xsdt ? 8 : 4, len;
    const uint8_t *tab = acpi_map_table(c, phys, sig, &len);

    if (!tab)
        return false;
    if ((len - ACPI_HDR_LEN) % esz)
        acpi_warnf(c, "ACPI %s: length %u leaves a partial %u-byte entry at the end; ignoring it",
                   sig, len, esz);
    root->tab = tab;
    root->count = (len - ACPI_HDR_LEN) / esz;
    root->entry_size = esz;
    return true;
}

// Validates the RSDP and opens the table list it points to: the XSDT when
// the RSDP is ACPI 2.0+ and the XSDT is valid, else the RSDT.
// *revision is set (the RSDP was valid) even when no table list is usable.
static bool acpi_open_root(struct acpi_ctx *c, const void *rsdp, size_t rsdp_len,
                           struct acpi_root *root, int *revision)
{
    const uint8_t *r = rsdp;
    bool xsdt_ok;
    uint64_t xsdt_phys;

    *revision = -1;
    if (!acpi_check_rsdp(c, r, rsdp_len, &xsdt_ok))
        return false;
    *revision = r[15];
    xsdt_phys = xsdt_ok ? le64(r + 24) : 0;
    if (xsdt_phys) {
        if (acpi_map_root(c, xsdt_phys, true, root))
            return true;
        acpi_warnf(c, "ACPI XSDT: unusable; falling back to the RSDT");
    }
    return acpi_map_root(c, le32(r + 16), false, root);
}

static uint64_t root_entry(const struct acpi_root *root, uint32_t i)
{
    const uint8_t *p = root->tab + ACPI_HDR_LEN + (size_t)i * root->entry_size;
    return root->entry_size == 8 ? le64(p) : le32(p);
}

// The first table listed with signature sig that validates, or NULL;
// *listed says whether any entry carried sig. Only the 4 signature bytes
// of the other tables are read, and only after their header was mapped.
static const uint8_t *acpi_root_find(struct acpi_ctx *c, const struct acpi_root *root,
                                     const char sig[4], uint32_t *len, bool *listed)
{
    *listed = false;
    for (uint32_t i = 0; i < root->count; i++) {
        uint64_t phys = root_entry(root, i);
        const uint8_t *hdr, *tab;
        if (phys == 0)
            continue;
        hdr = c->map(c->map_ctx, phys, ACPI_HDR_LEN);
        if (!hdr || memcmp(hdr, sig, 4) != 0)
            continue;
        *listed = true;
        tab = acpi_map_table(c, phys, sig, len);
        if (tab)
            return tab;
    }
    return NULL;
}

// The table for acpi_parse: as acpi_root_find, with a warning when the
// root table does not list it at all (a bad one was already warned about).
static const uint8_t *acpi_root_need(struct acpi_ctx *c, const struct acpi_root *root,
                                     const char sig[4], uint32_t *len)
{
    char nbuf[5];
    bool listed;
    const uint8_t *t = acpi_root_find(c, root, sig, len, &listed);

    if (!listed)
        acpi_warnf(c, "ACPI %s: the %s lists no such table", table_name(sig, nbuf),
                   root->entry_size == 8 ? "XSDT" : "RSDT");
    return t;
}

// ---- MADT -------------------------------------------------------------

enum {
    MADT_LAPIC = 0,
    MADT_IOAPIC = 1,
    MADT_OVERRIDE = 2,
    MADT_LAPIC_ADDR = 5,
    MADT_X2APIC = 9,
};

// The bytes an entry of this type must have for its fields to be read;
// other types are skipped by length and need only their 2-byte header.
static uint8_t madt_entry_min(uint8_t type)
{
    switch (type) {
    case MADT_LAPIC: return 8;
    case MADT_IOAPIC: return 12;
    case MADT_OVERRIDE: return 10;
    case MADT_LAPIC_ADDR: return 12;
    case MADT_X2APIC: return 16;
    default: return 2;
    }
}

struct madt_state {
    struct acpi_ctx *c;
    struct acpi_info *out;
    bool cpus_full_warned;
};

// A processor with neither the enabled nor the online-capable flag cannot
// be used by any OS (ACPI 6.3, 5.2.12.2) and is not recorded.
static void madt_add_cpu(struct madt_state *s, uint32_t off, uint32_t apic_id, uint32_t uid,
                         uint32_t flags, bool x2)
{
    struct acpi_info *o = s->out;
    if (!(flags & (MADT_CPU_ENABLED | MADT_CPU_ONLINE_CAPABLE)))
        return;
    for (uint32_t i = 0; i < o->cpu_count; i++) {
        if (o->cpus[i].apic_id == apic_id) {
            acpi_warnf(s->c, "ACPI MADT: entry at offset 0x%x repeats APIC id %u; keeping the first",
                       off, apic_id);
            return;
        }
    }
    if (o->cpu_count == ACPI_MAX_CPUS) {
        if (!s->cpus_full_warned)
            acpi_warnf(s->c, "ACPI MADT: more than %u processors; ignoring the rest", ACPI_MAX_CPUS);
        s->cpus_full_warned = true;
        return;
    }
    o->cpus[o->cpu_count++] = (struct acpi_cpu){
        .apic_id = apic_id,
        .uid = uid,
        .x2apic_entry = x2,
        .enabled = flags & MADT_CPU_ENABLED,
        .online_capable = flags & MADT_CPU_ONLINE_CAPABLE,
    };
}

static void madt_add_ioapic(struct madt_state *s, const uint8_t *e)
{
    struct acpi_info *o = s->out;
    if (o->ioapic_count == ACPI_MAX_IOAPICS) {
        acpi_warnf(s->c, "ACPI MADT: more than %u IOAPICs; ignoring IOAPIC %u", ACPI_MAX_IOAPICS, e[2]);
        return;
    }
    o->ioapics[o->ioapic_count++] = (struct acpi_ioapic){
        .id = e[2], .addr = le32(e + 4), .gsi_base = le32(e + 8),
    };
}

static void madt_add_override(struct madt_state *s, const uint8_t *e)
{
    struct acpi_info *o = s->out;
    if (o->override_count == ACPI_MAX_OVERRIDES) {
        acpi_warnf(s->c, "ACPI MADT: more than %u interrupt source overrides; ignoring IRQ %u",
                   ACPI_MAX_OVERRIDES, e[3]);
        return;
    }
    o->overrides[o->override_count++] = (struct acpi_override){
        .source_irq = e[3], .gsi = le32(e + 4), .flags = le16(e + 8),
    };
}

// e points at an entry of len >= madt_entry_min(e[0]) bytes, all inside the table.
static void madt_entry(struct madt_state *s, const uint8_t *e, uint32_t off)
{
    switch (e[0]) {
    case MADT_LAPIC:
        madt_add_cpu(s, off, e[3], e[2], le32(e + 4), false);
        break;
    case MADT_X2APIC:
        madt_add_cpu(s, off, le32(e + 4), le32(e + 12), le32(e + 8), true);
        break;
    case MADT_IOAPIC:
        madt_add_ioapic(s, e);
        break;
    case MADT_OVERRIDE:
        madt_add_override(s, e);
        break;
    case MADT_LAPIC_ADDR:
        s->out->lapic_addr = le64(e + 4);
        break;
    }
}

bool acpi_entry_check(const char *table, const uint8_t *t, uint32_t len, uint32_t off,
                      uint8_t (*min_len)(uint8_t type), acpi_warn_fn warn, void *warn_ctx)
{
    uint8_t type, elen, min;

    if (len - off < 2) {
        acpi_warn_fmt(warn, warn_ctx, "ACPI %s: entry at offset 0x%x is cut off by the table's end; ignoring it",
                      table, off);
        return false;
    }
    type = t[off];
    elen = t[off + 1];
    min = min_len(type);
    if (elen == 0) {
        acpi_warn_fmt(warn, warn_ctx, "ACPI %s: entry at offset 0x%x has length 0; ignoring the rest of the table",
                      table, off);
        return false;
    }
    if (elen < min) {
        acpi_warn_fmt(warn, warn_ctx, "ACPI %s: entry at offset 0x%x (type %u) has length %u, less than the %u "
                      "its type needs; ignoring the rest of the table", table, off, type, elen, min);
        return false;
    }
    if (elen > len - off) {
        acpi_warn_fmt(warn, warn_ctx, "ACPI %s: entry at offset 0x%x (type %u, length %u) runs past the table's "
                      "end at 0x%x; ignoring it", table, off, type, elen, len);
        return false;
    }
    return true;
}

static void acpi_parse_madt_table(struct acpi_ctx *c, const uint8_t *t, uint32_t len, struct acpi_info *out)
{
    struct madt_state s = { .c = c, .out = out };
    uint32_t off;

    if (len < MADT_HDR_LEN) {
        acpi_warnf(c, "ACPI MADT: length %u is shorter than its %u-byte header; ignoring it",
                   len, MADT_HDR_LEN);
        return;
    }
    out->madt_found = true;
    out->lapic_addr = le32(t + 36);
    out->pcat_compat = le32(t + 40) & MADT_PCAT_COMPAT;
    for (off = MADT_HDR_LEN; off < len; off += t[off + 1]) {
        if (!acpi_entry_check("MADT", t, len, off, madt_entry_min, c->warn, c->warn_ctx))
            break;
        madt_entry(&s, t + off, off);
    }
    if (out->cpu_count == 0)
        acpi_warnf(c, "ACPI MADT: lists no usable processor");
}

// ---- FADT -------------------------------------------------------------

// An I/O port from the FADT: the 64-bit GAS field at xoff when the table
// reaches it and it names a non-zero system-I/O port, else the 32-bit
// field at off.
static uint32_t fadt_port(const uint8_t *t, uint32_t len, uint32_t off, uint32_t xoff)
{
    if (len >= xoff + GAS_LEN && t[xoff] == GAS_SYSTEM_IO) {
        uint64_t a = le64(t + xoff + 4);
        if (a != 0 && a <= 0xffff)
            return (uint32_t)a;
    }
    return le32(t + off);
}

static void acpi_parse_fadt(struct acpi_ctx *c, const uint8_t *t, uint32_t len, struct acpi_info *out)
{
    if (len < FADT_V1_LEN) {
        acpi_warnf(c, "ACPI FADT: length %u is shorter than the %u bytes of ACPI 1.0; ignoring it",
                   len, FADT_V1_LEN);
        return;
    }
    out->fadt_found = true;
    out->fadt_revision = t[8];
    out->sci_irq = le16(t + FADT_SCI_INT);
    out->pm1a_cnt_port = fadt_port(t, len, FADT_PM1A_CNT_BLK, FADT_X_PM1A_CNT_BLK);
    out->pm1b_cnt_port = fadt_port(t, len, FADT_PM1B_CNT_BLK, FADT_X_PM1B_CNT_BLK);
    out->pm_tmr_port = fadt_port(t, len, FADT_PM_TMR_BLK, FADT_X_PM_TMR_BLK);
    out->pm_tmr_32bit = le32(t + FADT_FLAGS) & FADT_TMR_VAL_EXT;
    out->rtc_century = t[FADT_CENTURY];
}

// ---- HPET -------------------------------------------------------------

static void acpi_parse_hpet(struct acpi_ctx *c, const uint8_t *t, uint32_t len, struct acpi_info *out)
{
    if (len < HPET_LEN) {
        acpi_warnf(c, "ACPI HPET: length %u is shorter than %u bytes; ignoring it", len, HPET_LEN);
        return;
    }
    if (t[HPET_BASE_GAS] != GAS_SYSTEM_MEMORY) {
        acpi_warnf(c, "ACPI HPET: base address is in address space %u, not memory; ignoring it",
                   t[HPET_BASE_GAS]);
        return;
    }
    out->hpet_addr = le64(t + HPET_BASE_GAS + 4);
}

// ---- entry points -----------------------------------------------------

int acpi_parse_madt(struct acpi_info *out, const void *rsdp, size_t rsdp_len,
                    acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx)
{
    struct acpi_ctx c = { map, map_ctx, warn, warn_ctx };
    struct acpi_root root;
    const uint8_t *t;
    uint32_t len;
    int revision;
    bool root_ok;

    memset(out, 0, sizeof *out);
    root_ok = acpi_open_root(&c, rsdp, rsdp_len, &root, &revision);
    out->rsdp_found = revision >= 0;
    out->rsdp_revision = (uint8_t)(revision >= 0 ? revision : 0);
    if (!root_ok)
        return -1;
    out->xsdt = root.entry_size == 8;
    if ((t = acpi_root_need(&c, &root, "APIC", &len)))
        acpi_parse_madt_table(&c, t, len, out);
    return 0;
}

void acpi_parse_fadt_hpet(struct acpi_info *out, const void *rsdp, size_t rsdp_len,
                          acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx)
{
    // The root again, silently: acpi_parse_madt warned about it already.
    struct acpi_ctx quiet = { map, map_ctx, 0, 0 }, c = { map, map_ctx, warn, warn_ctx };
    struct acpi_root root;
    const uint8_t *t;
    uint32_t len;
    int revision;
    bool listed;

    if (!acpi_open_root(&quiet, rsdp, rsdp_len, &root, &revision))
        return;
    if ((t = acpi_root_need(&c, &root, "FACP", &len)))
        acpi_parse_fadt(&c, t, len, out);
    // The HPET is optional: its absence is not worth a warning.
    if ((t = acpi_root_find(&c, &root, "HPET", &len, &listed)))
        acpi_parse_hpet(&c, t, len, out);
}

int acpi_parse(struct acpi_info *out, const void *rsdp, size_t rsdp_len,
               acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx)
{
    if (acpi_parse_madt(out, rsdp, rsdp_len, map, map_ctx, warn, warn_ctx) < 0)
        return -1;
    acpi_parse_fadt_hpet(out, rsdp, rsdp_len, map, map_ctx, warn, warn_ctx);
    return 0;
}

const void *acpi_find_table(const void *rsdp, size_t rsdp_len, const char sig[4],
                            acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx)
{
    struct acpi_ctx c = { map, map_ctx, warn, warn_ctx };
    struct acpi_root root;
    int revision;
    uint32_t len;
    bool listed;

    if (!acpi_open_root(&c, rsdp, rsdp_len, &root, &revision))
        return NULL;
    return acpi_root_find(&c, &root, sig, &len, &listed);
}

// "RSD PTR " as one little-endian word.
#define RSDP_SIG64 0x2052545020445352ull

// Where a valid RSDP starts in the len bytes at p (scanned on 16-byte
// boundaries), as an offset, or -1. One 8-byte compare per candidate
// (__builtin_memcpy: a plain load, also where memcpy is not a builtin):
// the BIOS area holds 8,000 of them, and a memcmp call each was 0.14 M
// instructions, nearly all of the boot before the APs start (docs/boot.md).
static long rsdp_search(const uint8_t *p, size_t len)
{
    for (size_t off = 0; off + RSDP_V1_LEN <= len; off += 16) {
        uint64_t sig;
        __builtin_memcpy(&sig, p + off, 8);
        if (sig == RSDP_SIG64 && sum_bytes(p + off, RSDP_V1_LEN) == 0)
            return (long)off;
    }
    return -1;
}

#define BDA_EBDA_SEG 0x40e
#define EBDA_SCAN_LEN 1024
#define BIOS_ROM_START 0xe0000
#define BIOS_ROM_LEN 0x20000

uint64_t acpi_scan_rsdp(acpi_map_fn map, void *map_ctx)
{
    const uint8_t *p = map(map_ctx, BDA_EBDA_SEG, 2);
    long off;

    if (p) {
        // The BDA holds the EBDA's real-mode segment; 0 means there is none.
        uint64_t ebda = (uint64_t)le16(p) << 4;
        const uint8_t *e = ebda ? map(map_ctx, ebda, EBDA_SCAN_LEN) : NULL;
        if (e && (off = rsdp_search(e, EBDA_SCAN_LEN)) >= 0)
            return ebda + (uint64_t)off;
    }
    p = map(map_ctx, BIOS_ROM_START, BIOS_ROM_LEN);
    if (p && (off = rsdp_search(p, BIOS_ROM_LEN)) >= 0)
        return BIOS_ROM_START + (uint64_t)off;
    return 0;
}
