// SPDX-License-Identifier: MIT
// ACPI tables: RSDP, RSDT/XSDT, MADT, FADT (and HPET's address).
//
// The parser is pure: it reaches physical memory only through the map
// callback, so host unit tests feed it tables from files. Every table's
// signature, length and checksum is checked before a byte of it is used;
// an entry that runs past its table, a zero-length entry or a truncated
// table stops that table's parse with a warning naming the problem, and
// what was found before it is kept. Callers fall back safely: no MADT
// means one core (the BSP), no FADT means no ACPI power-off.
#ifndef GORO_ACPI_H
#define GORO_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACPI_MAX_CPUS 4096        // q35's limit in QEMU 10; goro uses MAX_CPUS of them
#define ACPI_MAX_IOAPICS 8
#define ACPI_MAX_OVERRIDES 16

struct acpi_cpu {
    uint32_t apic_id;
    uint32_t uid;               // ACPI processor UID
    bool x2apic_entry;          // from a type 9 (x2APIC) entry
    bool enabled;               // flags bit 0
    bool online_capable;        // flags bit 1 (may be enabled later)
};

struct acpi_ioapic {
    uint8_t id;
    uint32_t addr;
    uint32_t gsi_base;
};

struct acpi_override {          // interrupt source override (MADT type 2)
    uint8_t source_irq;
    uint32_t gsi;
    uint16_t flags;             // polarity and trigger mode
};

struct acpi_info {
    bool rsdp_found;
    uint8_t rsdp_revision;
    bool xsdt;                  // tables listed by the XSDT (else the RSDT)
    // MADT
    bool madt_found;
    uint64_t lapic_addr;        // MADT address, or the 64-bit override (type 5)
    bool pcat_compat;           // dual 8259s present: mask them
    uint32_t cpu_count;
    struct acpi_cpu cpus[ACPI_MAX_CPUS];
    uint32_t ioapic_count;
    struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
    uint32_t override_count;
    struct acpi_override overrides[ACPI_MAX_OVERRIDES];
    // FADT
    bool fadt_found;
    uint8_t fadt_revision;
    uint32_t pm1a_cnt_port;     // 0 when absent
    uint32_t pm1b_cnt_port;
    uint32_t pm_tmr_port;       // ACPI PM timer, 0 when absent
    bool pm_tmr_32bit;          // TMR_VAL_EXT
    uint8_t rtc_century;        // the CMOS register holding the century, 0 when absent
    uint16_t sci_irq;
    // HPET
    uint64_t hpet_addr;         // 0 when absent
};

// Returns a pointer to len bytes at physical address phys, or NULL when
// that range cannot be read (outside RAM, past a test blob).
typedef const void *(*acpi_map_fn)(void *ctx, uint64_t phys, size_t len);
// Receives one warning, a whole sentence without a newline.
typedef void (*acpi_warn_fn)(void *ctx, const char *msg);

// rsdp: the RSDP's bytes (a loader's copy, or found by acpi_scan_rsdp).
// Fills *out (zeroed first). Returns 0 when the RSDP and at least the
// RSDT/XSDT were valid, -1 otherwise (out then says what was found).
int acpi_parse(struct acpi_info *out, const void *rsdp, size_t rsdp_len,
               acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx);
// acpi_parse in two steps, for a boot that starts the other cores between
// them: acpi_parse_madt does all of it up to the MADT (out zeroed first,
// the same result), acpi_parse_fadt_hpet then adds the FADT and the HPET
// (nothing when the root table is unusable).
int acpi_parse_madt(struct acpi_info *out, const void *rsdp, size_t rsdp_len,
                    acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx);
void acpi_parse_fadt_hpet(struct acpi_info *out, const void *rsdp, size_t rsdp_len,
                          acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx);

// The legacy BIOS search: the first KiB of the EBDA, then 0xE0000-0xFFFFF,
// on 16-byte boundaries, for a valid "RSD PTR " with a good checksum.
// Returns the RSDP's physical address, or 0.
uint64_t acpi_scan_rsdp(acpi_map_fn map, void *map_ctx);

// Finds a table by signature (e.g. "SRAT") through the RSDT/XSDT, validates
// it, and returns it mapped, or NULL. Used by later parsers (SRAT, SLIT).
const void *acpi_find_table(const void *rsdp, size_t rsdp_len, const char sig[4],
                            acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx);

// For the table parsers (acpi.c, acpi_numa.c): one formatted warning, and
// the check of a variable-length entry (type, length) at off in a table of
// len bytes, false after a warning naming the table and the problem when it
// cannot be used (which ends the walk: nothing after a bad length can be
// trusted). min_len gives the least length the entry's type needs.
#include <stdarg.h>
void acpi_warn_fmt(acpi_warn_fn warn, void *warn_ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void acpi_warn_fmtv(acpi_warn_fn warn, void *warn_ctx, const char *fmt, va_list ap);
bool acpi_entry_check(const char *table, const uint8_t *t, uint32_t len, uint32_t off,
                      uint8_t (*min_len)(uint8_t type), acpi_warn_fn warn, void *warn_ctx);

// The kernel's parsed tables, filled once at boot by acpi_init (drivers/acpi_boot.c).
extern struct acpi_info acpi;
struct boot_info;
// The RSDP and the MADT: the cores (acpi_parse_madt), quietly but for
// warnings; then acpi_init_rest, the FADT and the HPET; then acpi_report,
// one line of what was found, after a line for each fallback.
void acpi_init(const struct boot_info *bi);
void acpi_init_rest(void);
void acpi_report(void);
// After acpi_init: acpi_find_table through the RSDP acpi_init used, with
// kernel mapping and warnings; NULL when there is no such valid table.
const void *acpi_table(const char sig[4]);
// After acpi_init: the RSDP's bytes it used (*len of them, 0 and NULL when
// none) and its physical address (0 when the loader gave only a copy).
const void *acpi_rsdp(size_t *len, uint64_t *phys);
// The warnings the kernel's ACPI parsing printed so far (a table ignored or
// cut short), and the first of them.
uint32_t acpi_boot_warnings(const char **first);
// inject=acpi:SIG: acpi_init corrupts table SIG ("APIC", "RSDT", "RSDP"...)
// before parsing it.
void acpi_inject_corrupt(const char sig[4]);

#endif
