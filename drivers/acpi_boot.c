// SPDX-License-Identifier: MIT
// The kernel's side of the ACPI parser (drivers/acpi.c): where the RSDP
// comes from, how physical memory is reached, where warnings go, and the
// one-line boot report.
#include <stdbool.h>
#include <stdint.h>
#include "drivers/acpi.h"
#include "boot/bootinfo.h"
#include "lib/printf.h"
#include "lib/string.h"

struct acpi_info acpi;

// The RSDP acpi_init used, kept for acpi_table (the loader's copy in
// boot_info may be reused by then).
static uint8_t rsdp_copy[36];
static size_t rsdp_copy_len;
static uint64_t rsdp_phys;

// Physical memory is identity-mapped. The boot page tables cover only the
// first 4 GiB, and acpi_init runs on them, so ranges ending above 4 GiB
// are refused rather than faulted on. (The direct map built later reaches
// page_max_phys(), but firmware puts ACPI tables below 4 GiB in practice;
// widen this when a machine shows otherwise.) Page 0 is unmapped once the
// direct map is up, so it is readable only when ctx says the boot tables
// are still live (the BIOS data area's EBDA pointer, at 0x40e).
#define ACPI_MAP_LIMIT (4ull << 30)
#define PAGE0_END 0x1000

static const void *acpi_map_identity(void *ctx, uint64_t phys, size_t len)
{
    bool page0_ok = ctx != 0;
    if (phys >= ACPI_MAP_LIMIT || len > ACPI_MAP_LIMIT - phys)
        return 0;
    if (phys < PAGE0_END && !page0_ok)
        return 0;
    return (const void *)(uintptr_t)phys;
}

// Warnings printed at boot and after (acpi_table), counted: a table that
// had to be ignored or cut short is a boot problem (acpi_boot_warnings).
// The first one's text is kept; it is written once, by whoever counted 0.
static uint32_t nwarnings;
static char first_warning[192];

static void acpi_warn_console(void *ctx, const char *msg)
{
    (void)ctx;
    kprintf("acpi: %s\n", msg);
    if (__atomic_fetch_add(&nwarnings, 1, __ATOMIC_RELAXED) == 0) {    // relaxed: a counter; the text is read after boot
        size_t n = strnlen(msg, sizeof first_warning - 1);
        memcpy(first_warning, msg, n);
        first_warning[n] = 0;
    }
}

uint32_t acpi_boot_warnings(const char **first)
{
    *first = first_warning;
    return __atomic_load_n(&nwarnings, __ATOMIC_RELAXED);              // relaxed: a counter
}

// inject=acpi:SIG: this table (or the RSDP) has its checksum byte flipped
// before acpi_parse reads it, so the parser must find and name the damage.
// The tables are RAM the firmware handed over, identity-mapped and
// writable on the boot page tables.
static char corrupt_sig[4];

void acpi_inject_corrupt(const char sig[4])
{
    memcpy(corrupt_sig, sig, 4);
}

static void corrupt_before_parse(void)
{
    uint64_t root = 0;
    uint8_t *t;
    if (!memcmp(corrupt_sig, "RSDP", 4)) {
        rsdp_copy[8] ^= 0x5a;                               // checksum of the first 20 bytes
        kprintf("inject: acpi: corrupted the RSDP before parsing\n");
        return;
    }
    if (!memcmp(corrupt_sig, "RSDT", 4)) {
        uint32_t a;
        memcpy(&a, rsdp_copy + 16, 4);
        root = a;
    } else if (!memcmp(corrupt_sig, "XSDT", 4) && rsdp_copy_len >= 36) {
        memcpy(&root, rsdp_copy + 24, 8);
    }
    if (root)
        t = (uint8_t *)acpi_map_identity(0, root, 36);
    else
        t = (uint8_t *)acpi_find_table(rsdp_copy, rsdp_copy_len, corrupt_sig, acpi_map_identity, 0, 0, 0);
    if (!t) {
        kprintf("inject: acpi: no valid %.4s table to corrupt\n", corrupt_sig);
        return;
    }
    t[9] ^= 0x5a;                                           // the SDT header's checksum byte
    kprintf("inject: acpi: corrupted the %.4s table at 0x%lx before parsing\n", corrupt_sig,
            (uint64_t)(uintptr_t)t);
}

// The RSDP's bytes: the loader's copy, else the BIOS areas' (multiboot v1
// gives none). Returns the length copied into rsdp_copy, 0 when none.
static size_t acpi_find_rsdp(const struct boot_info *bi)
{
    static bool boot_tables = true;
    const uint8_t *p;
    uint64_t phys;
    size_t n;

    if (bi->rsdp_len > 0) {
        n = bi->rsdp_len < sizeof rsdp_copy ? bi->rsdp_len : sizeof rsdp_copy;
        memcpy(rsdp_copy, bi->rsdp, n);
        rsdp_phys = bi->rsdp_phys;
        return n;
    }
    phys = acpi_scan_rsdp(acpi_map_identity, &boot_tables);
    if (!phys)
        return 0;
    p = acpi_map_identity(0, phys, 20);
    if (!p)
        return 0;
    // An ACPI 2.0 RSDP is 36 bytes; acpi_parse checks its length field.
    n = p[15] >= 2 && acpi_map_identity(0, phys, 36) ? 36 : 20;
    memcpy(rsdp_copy, p, n);
    rsdp_phys = phys;
    return n;
}

// How acpi_init ended, for acpi_report.
static enum { ACPI_NO_RSDP, ACPI_NO_ROOT, ACPI_PARSED } outcome;

// One line: what was found, e.g. "acpi: RSDP rev 2 (XSDT), MADT 4 cpus,
// 1 ioapic, FADT rev 5, PM timer 0x608", after a line for each fallback.
void acpi_report(void)
{
    char madt[48] = "no MADT", fadt[64] = "no FADT";
    uint32_t enabled = 0;

    if (outcome == ACPI_NO_RSDP) {
        kprintf("acpi: no RSDP found; running on the boot core only, without ACPI power-off\n");
        return;
    }
    if (outcome == ACPI_NO_ROOT) {
        kprintf("acpi: no usable RSDP/RSDT; running on the boot core only, without ACPI power-off\n");
        return;
    }
    for (uint32_t i = 0; i < acpi.cpu_count; i++)
        enabled += acpi.cpus[i].enabled;
    if (acpi.madt_found && enabled)
        snprintf(madt, sizeof madt, "MADT %u cpus, %u ioapic", enabled, acpi.ioapic_count);
    else
        kprintf("acpi: no usable MADT; running on the boot core only\n");
    if (acpi.fadt_found)
        snprintf(fadt, sizeof fadt, "FADT rev %u, PM timer 0x%x%s", acpi.fadt_revision,
                 acpi.pm_tmr_port, acpi.pm_tmr_32bit ? " (32-bit)" : "");
    else
        kprintf("acpi: no usable FADT; no ACPI power-off, no PM timer\n");
    kprintf("acpi: RSDP rev %u (%s), %s, %s\n", acpi.rsdp_revision,
            acpi.xsdt ? "XSDT" : "RSDT", madt, fadt);
}

// Quiet but for the parser's warnings (rare, held like every boot line),
// and only the MADT: this runs before the APs start, where every block of
// code run costs the boot under TCG (docs/boot.md).
void acpi_init(const struct boot_info *bi)
{
    rsdp_copy_len = acpi_find_rsdp(bi);
    if (!rsdp_copy_len) {
        memset(&acpi, 0, sizeof acpi);
        outcome = ACPI_NO_RSDP;
        return;
    }
    if (corrupt_sig[0])
        corrupt_before_parse();
    outcome = acpi_parse_madt(&acpi, rsdp_copy, rsdp_copy_len, acpi_map_identity, 0,
                              acpi_warn_console, 0) < 0 ? ACPI_NO_ROOT : ACPI_PARSED;
}

void acpi_init_rest(void)
{
    if (outcome == ACPI_PARSED)
        acpi_parse_fadt_hpet(&acpi, rsdp_copy, rsdp_copy_len, acpi_map_identity, 0, acpi_warn_console, 0);
}

const void *acpi_table(const char sig[4])
{
    if (!rsdp_copy_len)
        return 0;
    return acpi_find_table(rsdp_copy, rsdp_copy_len, sig, acpi_map_identity, 0,
                           acpi_warn_console, 0);
}

const void *acpi_rsdp(size_t *len, uint64_t *phys)
{
    *len = rsdp_copy_len;
    *phys = rsdp_phys;
    return rsdp_copy_len ? rsdp_copy : 0;
}
