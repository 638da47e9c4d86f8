// SPDX-License-Identifier: MIT
// Host tests for drivers/acpi.c on tables dumped from QEMU's firmware
// (tests/data/acpi/*.txt, the `ACPIDUMP` lines shell/acpidump.c prints) and
// on corrupted copies of them made here.
//
// The map callback hands out a fresh heap copy of exactly the bytes asked
// for, so AddressSanitizer reports any read past what the parser mapped,
// not only past the end of a whole table.
//
// Usage: test_acpi [data-dir]   (default tests/data/acpi, run from the tree's top)
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "drivers/acpi.h"
#include "check.h"
#include "acpi_dump.h"
#include "drivers/acpi_mcfg.h"


// ---- a fake physical memory -----------------------------------------------

// ---- reading a dump ---------------------------------------------------------

// ---- building and corrupting tables -------------------------------------------

static void fix_rsdp(struct region *r)
{
    r->bytes[8] = 0;
    r->bytes[8] = (uint8_t)-sum(r->bytes, 20);
    if (r->len >= 36) {
        r->bytes[32] = 0;
        r->bytes[32] = (uint8_t)-sum(r->bytes, 36);
    }
}

static int run_parse(struct machine *m, struct acpi_info *info)
{
    struct region *rsdp = find_region(m, "RSDP");
    return acpi_parse(info, rsdp->bytes, rsdp->len, map_copy, m, warn_collect, m);
}

// Offset of the n-th MADT entry (n from 0).
static size_t madt_entry_off(struct region *madt, int n)
{
    size_t off = 44;
    while (n-- > 0)
        off += madt->bytes[off + 1];
    return off;
}

// Gives a dump a rev-2 RSDP and an XSDT listing the RSDT's tables, as
// OVMF does; the XSDT lives at xsdt_phys.
static void add_xsdt(struct machine *m, uint64_t xsdt_phys)
{
    struct region *rsdt = find_region(m, "RSDT");
    struct region *rsdp = find_region(m, "RSDP");
    size_t n = (rsdt->len - 36) / 4;
    struct region *x = add_region(m, "XSDT", xsdt_phys, 36 + 8 * n);
    memcpy(x->bytes, rsdt->bytes, 36);
    memcpy(x->bytes, "XSDT", 4);
    put32(x->bytes + 4, (uint32_t)x->len);
    for (size_t i = 0; i < n; i++)
        put64(x->bytes + 36 + 8 * i, get32(rsdt->bytes + 36 + 4 * i));
    fix_table(x);
    rsdp->bytes = realloc(rsdp->bytes, 36);
    rsdp->len = 36;
    rsdp->bytes[15] = 2;
    put32(rsdp->bytes + 20, 36);
    put64(rsdp->bytes + 24, xsdt_phys);
    memset(rsdp->bytes + 33, 0, 3);
    fix_rsdp(rsdp);
}

// ---- real tables --------------------------------------------------------------

static void check_qemu_common(struct machine *m, struct acpi_info *a, bool q35)
{
    CHECK(a->rsdp_found);
    CHECK(a->madt_found);
    CHECKF(a->lapic_addr == 0xfee00000, "lapic_addr %llx", (unsigned long long)a->lapic_addr);
    CHECK(a->pcat_compat);
    CHECK(a->ioapic_count == 1);
    CHECK(a->ioapics[0].addr == 0xfec00000 && a->ioapics[0].gsi_base == 0);
    // QEMU routes ISA IRQ 0 to GSI 2 on both machines.
    CHECK(a->override_count >= 1 && a->overrides[0].source_irq == 0 && a->overrides[0].gsi == 2);
    CHECK(a->fadt_found);
    CHECK(a->sci_irq == 9);
    CHECKF(a->pm_tmr_port == (q35 ? 0x608u : 0x608u), "pm timer %x", a->pm_tmr_port);
    CHECK(a->pm1a_cnt_port == 0x604);
    CHECK(a->pm1b_cnt_port == 0);
    CHECK(a->hpet_addr == 0xfed00000);
    CHECKF(m->nwarnings == 0, "unexpected warning: %s", m->warnings[0]);
}

static void check_cpus(struct acpi_info *a, uint32_t n)
{
    CHECKF(a->cpu_count == n, "cpu_count %u, want %u", a->cpu_count, n);
    for (uint32_t i = 0; i < a->cpu_count && i < n; i++) {
        CHECKF(a->cpus[i].apic_id == i && a->cpus[i].uid == i, "cpu %u: apic id %u uid %u",
               i, a->cpus[i].apic_id, a->cpus[i].uid);
        CHECK(a->cpus[i].enabled && !a->cpus[i].x2apic_entry);
    }
}

static void real_pc_smp1(void)
{
    struct machine *m = load_dump("seabios-pc-smp1");
    struct acpi_info a;
    if (!m)
        return;
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.rsdp_revision == 0 && !a.xsdt);
    check_cpus(&a, 1);
    check_qemu_common(m, &a, false);
    CHECK(a.fadt_revision == 1);
    machine_free(m);
}

static void real_pc_smp8(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.xsdt);
    check_cpus(&a, 8);
    check_qemu_common(m, &a, false);
    machine_free(m);
}

static void real_q35_smp4(void)
{
    struct machine *m = load_dump("seabios-q35-smp4");
    struct acpi_info a;
    if (!m)
        return;
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.xsdt);
    check_cpus(&a, 4);
    check_qemu_common(m, &a, true);
    CHECKF(a.fadt_revision >= 3, "fadt rev %u", a.fadt_revision);
    machine_free(m);
}

static void real_ovmf_smp2(void)
{
    struct machine *m = load_dump("ovmf-q35-smp2");
    struct acpi_info a;
    if (!m)
        return;
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.rsdp_revision == 2 && a.xsdt);
    check_cpus(&a, 2);
    check_qemu_common(m, &a, true);
    machine_free(m);
}

static void real_find_table(void)
{
    struct machine *m = load_dump("seabios-q35-smp4");
    if (!m)
        return;
    struct region *rsdp = find_region(m, "RSDP");
    const uint8_t *t = acpi_find_table(rsdp->bytes, rsdp->len, "MCFG", map_copy, m, warn_collect, m);
    CHECK(t && !memcmp(t, "MCFG", 4));
    CHECK(!acpi_find_table(rsdp->bytes, rsdp->len, "SRAT", map_copy, m, warn_collect, m));
    CHECK(m->nwarnings == 0);
    machine_free(m);
}

// q35's ECAM, as SeaBIOS and OVMF describe it: one entry, segment 0.
static void real_mcfg(void)
{
    static const char *const dumps[] = { "seabios-q35-smp4", "ovmf-q35-smp2" };
    for (int i = 0; i < 2; i++) {
        struct machine *m = load_dump(dumps[i]);
        if (!m)
            return;
        struct region *rsdp = find_region(m, "RSDP");
        const uint8_t *t = acpi_find_table(rsdp->bytes, rsdp->len, "MCFG", map_copy, m, warn_collect, m);
        struct acpi_mcfg mcfg;
        CHECK(t && acpi_parse_mcfg(t, &mcfg, warn_collect, m) == 1);
        CHECKF(mcfg.e[0].base == 0xB0000000 || mcfg.e[0].base == 0xE0000000, "%s: ECAM at 0x%llx",
               dumps[i], (unsigned long long)mcfg.e[0].base);
        CHECK(mcfg.e[0].segment == 0 && mcfg.e[0].bus_first == 0 && mcfg.e[0].bus_last > 0);
        CHECK(m->nwarnings == 0);
        machine_free(m);
    }
    struct machine *m = load_dump("seabios-pc-smp1");
    struct region *rsdp = m ? find_region(m, "RSDP") : 0;
    CHECK(rsdp && !acpi_find_table(rsdp->bytes, rsdp->len, "MCFG", map_copy, m, warn_collect, m));
    if (m)
        machine_free(m);
}

// Entries that cannot be used are skipped with a warning each; the good
// ones around them stay.
static void mcfg_bad_entries(void)
{
    uint8_t t[44 + 5 * 16] = "MCFG";
    put32(t + 4, sizeof t);
    struct { uint64_t base; uint8_t first, last; } e[5] = {
        { 0xB0000000, 0, 255 }, { 0, 0, 10 }, { 0xC0000800, 0, 1 }, { 0xD0000000, 9, 3 },
        { 0xE0000000, 16, 31 },
    };
    for (int i = 0; i < 5; i++) {
        put64(t + 44 + 16 * i, e[i].base);
        t[44 + 16 * i + 10] = e[i].first;
        t[44 + 16 * i + 11] = e[i].last;
    }
    struct machine *m = calloc(1, sizeof *m);
    struct acpi_mcfg mcfg;
    CHECK(acpi_parse_mcfg(t, &mcfg, warn_collect, m) == 2);
    CHECK(mcfg.e[0].base == 0xB0000000 && mcfg.e[1].base == 0xE0000000 && mcfg.e[1].bus_first == 16);
    CHECK(m->nwarnings == 3 && warned(m, "entry 3"));
    put32(t + 4, 44 + 16 + 7);                      // part of a second entry
    CHECK(acpi_parse_mcfg(t, &mcfg, warn_collect, m) == 1 && warned(m, "part of an entry"));
    put32(t + 4, 20);
    CHECK(acpi_parse_mcfg(t, &mcfg, warn_collect, m) == 0 && warned(m, "shorter than its header"));
    machine_free(m);
}

static void real_numa_find_srat_slit(void)
{
    struct machine *m = load_dump("seabios-q35-smp4-numa2");
    struct acpi_info a;
    if (!m)
        return;
    CHECK(run_parse(m, &a) == 0);
    check_cpus(&a, 4);
    check_qemu_common(m, &a, true);
    struct region *rsdp = find_region(m, "RSDP");
    const uint8_t *srat = acpi_find_table(rsdp->bytes, rsdp->len, "SRAT", map_copy, m, warn_collect, m);
    const uint8_t *slit = acpi_find_table(rsdp->bytes, rsdp->len, "SLIT", map_copy, m, warn_collect, m);
    CHECK(srat && !memcmp(srat, "SRAT", 4));
    // SLIT: 8-byte locality count, then the 2x2 distances; -numa dist set 21.
    CHECK(slit && get32(slit + 4) >= 48 && slit[36] == 2 && slit[44] == 10 && slit[45] == 21);
    // A broken SRAT is reported and not returned.
    find_region(m, "SRAT")->bytes[60] ^= 1;
    CHECK(!acpi_find_table(rsdp->bytes, rsdp->len, "SRAT", map_copy, m, warn_collect, m));
    CHECK(warned(m, "ACPI SRAT: checksum"));
    machine_free(m);
}

// ---- RSDP and root table corruption ------------------------------------------------

static void rsdp_bad_checksum(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    find_region(m, "RSDP")->bytes[10] ^= 0x20;
    CHECK(run_parse(m, &a) == -1);
    CHECK(!a.rsdp_found && !a.madt_found && !a.fadt_found);
    CHECK(warned(m, "ACPI RSDP: checksum"));
    machine_free(m);
}

static void rsdp_bad_signature_and_short(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    struct region *r = find_region(m, "RSDP");
    CHECK(acpi_parse(&a, r->bytes, 19, map_copy, m, warn_collect, m) == -1);
    CHECK(warned(m, "ACPI RSDP: only 19 bytes"));
    CHECK(acpi_parse(&a, NULL, 0, map_copy, m, warn_collect, m) == -1);
    r->bytes[0] = 'X';
    fix_rsdp(r);
    CHECK(run_parse(m, &a) == -1);
    CHECK(warned(m, "ACPI RSDP: signature"));
    machine_free(m);
}

static void rsdt_bad_checksum(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    find_region(m, "RSDT")->bytes[20] ^= 1;
    CHECK(run_parse(m, &a) == -1);
    CHECK(a.rsdp_found && !a.madt_found && a.cpu_count == 0);
    CHECK(warned(m, "ACPI RSDT: checksum"));
    machine_free(m);
}

static void rsdt_length_beyond_memory(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    struct region *r = find_region(m, "RSDT");
    put32(r->bytes + 4, (uint32_t)r->len + 64);     // claims more than there is
    fix_table(r);
    CHECK(run_parse(m, &a) == -1);
    CHECK(warned(m, "cannot be mapped"));
    put32(r->bytes + 4, 20);                        // shorter than a header
    fix_table(r);
    CHECK(run_parse(m, &a) == -1);
    CHECK(warned(m, "claims length 20"));
    put32(r->bytes + 4, 0x7fffffff);
    CHECK(run_parse(m, &a) == -1);
    CHECK(warned(m, "claims length 2147483647"));
    machine_free(m);
}

static void rsdt_partial_entry(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    struct region *r = find_region(m, "RSDT");
    resize(r, r->len + 2);
    fix_table(r);
    CHECK(run_parse(m, &a) == 0);
    CHECK(warned(m, "partial 4-byte entry"));
    CHECK(a.cpu_count == 8 && a.fadt_found);
    machine_free(m);
}

static void xsdt_preferred(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    add_xsdt(m, 0x1ffff000);
    find_region(m, "RSDT")->bytes[9] ^= 0xff;       // only the XSDT can work
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.xsdt && a.rsdp_revision == 2 && a.cpu_count == 8);
    CHECK(m->nwarnings == 0);
    machine_free(m);
}

static void xsdt_bad_rsdt_good(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    add_xsdt(m, 0x1ffff000);
    find_region(m, "XSDT")->bytes[40] ^= 0x10;
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.xsdt && a.cpu_count == 8 && a.fadt_found);
    CHECK(warned(m, "ACPI XSDT: checksum"));
    CHECK(warned(m, "falling back to the RSDT"));
    machine_free(m);
}

static void xsdt_unmapped_or_zero(void)
{
    struct machine *m = load_dump("ovmf-q35-smp2");
    struct acpi_info a;
    if (!m)
        return;
    struct region *rsdp = find_region(m, "RSDP");
    put64(rsdp->bytes + 24, 0x123456789000ull);     // nothing there
    fix_rsdp(rsdp);
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.xsdt && a.cpu_count == 2);
    CHECK(warned(m, "ACPI XSDT: header at 0x123456789000 cannot be mapped"));
    machine_free(m);

    m = load_dump("ovmf-q35-smp2");
    rsdp = find_region(m, "RSDP");
    put64(rsdp->bytes + 24, 0);
    fix_rsdp(rsdp);
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.xsdt && a.cpu_count == 2 && m->nwarnings == 0);
    machine_free(m);
}

static void rsdp_extended_checksum_bad(void)
{
    struct machine *m = load_dump("ovmf-q35-smp2");
    struct acpi_info a;
    if (!m)
        return;
    struct region *rsdp = find_region(m, "RSDP");
    rsdp->bytes[33] ^= 1;                           // reserved byte, outside the v1 sum
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.xsdt && a.rsdp_revision == 2 && a.cpu_count == 2);
    CHECK(warned(m, "extended checksum"));
    machine_free(m);

    m = load_dump("ovmf-q35-smp2");
    rsdp = find_region(m, "RSDP");
    CHECK(acpi_parse(&a, rsdp->bytes, 20, map_copy, m, warn_collect, m) == 0);
    CHECK(!a.xsdt && a.cpu_count == 2);
    CHECK(warned(m, "using the RSDT only"));
    put32(rsdp->bytes + 20, 1000);                  // length beyond the bytes given
    fix_rsdp(rsdp);
    CHECK(run_parse(m, &a) == 0 && !a.xsdt);
    machine_free(m);
}

// ---- MADT corruption ----------------------------------------------------------

static void madt_bad_checksum(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    find_region(m, "APIC")->bytes[50] ^= 4;
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.madt_found && a.cpu_count == 0 && a.fadt_found);
    CHECK(warned(m, "ACPI MADT: checksum"));
    machine_free(m);
}

static void madt_zero_length_entry(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    struct region *t = find_region(m, "APIC");
    size_t off = madt_entry_off(t, 3);
    t->bytes[off + 1] = 0;
    fix_table(t);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.madt_found && a.cpu_count == 3 && a.ioapic_count == 0);
    char want[96];
    snprintf(want, sizeof want, "ACPI MADT: entry at offset 0x%zx has length 0", off);
    CHECKF(warned(m, want), "no warning \"%s\"", want);
    machine_free(m);
}

static void madt_entry_past_end(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    struct region *t = find_region(m, "APIC");
    int n = 0;
    size_t off = 44, last = 44;
    while (off < t->len) {
        last = off;
        off += t->bytes[off + 1];
        n++;
    }
    t->bytes[last + 1] = (uint8_t)(t->len - last + 1);  // one byte too long
    fix_table(t);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.cpu_count == 8 && a.ioapic_count == 1);
    CHECK(warned(m, "runs past the table's end"));
    CHECK(n > 9);
    machine_free(m);
}

static void madt_truncated_length(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    // The length field cuts the 5th entry in the middle; the blob is cut too,
    // so a read past the stated length is an ASan report.
    struct region *t = find_region(m, "APIC");
    size_t cut = madt_entry_off(t, 4) + 3;
    resize(t, cut);
    fix_table(t);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.madt_found && a.cpu_count == 4);
    CHECK(warned(m, "runs past the table's end"));
    machine_free(m);

    m = load_dump("seabios-pc-smp8");
    t = find_region(m, "APIC");
    resize(t, madt_entry_off(t, 4) + 1);            // one byte of an entry header
    fix_table(t);
    CHECK(run_parse(m, &a) == 0 && a.cpu_count == 4);
    CHECK(warned(m, "cut off by the table's end"));
    machine_free(m);

    m = load_dump("seabios-pc-smp8");
    t = find_region(m, "APIC");
    resize(t, 40);                                  // shorter than the MADT's header
    fix_table(t);
    CHECK(run_parse(m, &a) == 0 && !a.madt_found && a.cpu_count == 0);
    CHECK(warned(m, "shorter than its 44-byte header"));
    machine_free(m);
}

static void madt_entry_below_minimum(void)
{
    struct machine *m = load_dump("seabios-pc-smp8");
    struct acpi_info a;
    if (!m)
        return;
    struct region *t = find_region(m, "APIC");
    size_t off = madt_entry_off(t, 8);              // the IOAPIC, after 8 CPUs
    CHECK(t->bytes[off] == 1);
    t->bytes[off + 1] = 6;
    fix_table(t);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.cpu_count == 8 && a.ioapic_count == 0 && a.override_count == 0);
    CHECK(warned(m, "(type 1) has length 6, less than the 12"));
    machine_free(m);
}

// Replaces the MADT's entries with the given bytes (a synthetic MADT on a real machine).
static struct region *set_madt_entries(struct machine *m, const uint8_t *e, size_t n)
{
    struct region *t = find_region(m, "APIC");
    resize(t, 44 + n);
    memcpy(t->bytes + 44, e, n);
    fix_table(t);
    return t;
}

static void madt_x2apic_dup_and_flags(void)
{
    struct machine *m = load_dump("seabios-pc-smp1");
    struct acpi_info a;
    if (!m)
        return;
    static const uint8_t e[] = {
        0, 8, 0, 0, 1, 0, 0, 0,                                 // cpu uid 0 apic 0
        0, 8, 1, 1, 0, 0, 0, 0,                                 // flags 0: unusable
        0, 8, 2, 2, 2, 0, 0, 0,                                 // online-capable only
        0, 8, 3, 0, 1, 0, 0, 0,                                 // duplicate apic id 0
        9, 16, 0, 0, 0x00, 0x01, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0,  // x2apic id 256, uid 7
        9, 16, 0, 0, 0x00, 0x01, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0,  // duplicate x2apic id
        5, 12, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,                    // lapic at 0x1_0000_0000
        0x7f, 3, 0,                                             // unknown type, skipped
        2, 10, 0, 9, 9, 0, 0, 0, 0x0d, 0,                       // irq 9 -> gsi 9, level high
    };
    set_madt_entries(m, e, sizeof e);
    CHECK(run_parse(m, &a) == 0);
    CHECKF(a.cpu_count == 3, "cpu_count %u", a.cpu_count);
    CHECK(a.cpus[0].apic_id == 0 && a.cpus[0].enabled && !a.cpus[0].online_capable);
    CHECK(a.cpus[1].apic_id == 2 && !a.cpus[1].enabled && a.cpus[1].online_capable);
    CHECK(a.cpus[2].apic_id == 256 && a.cpus[2].uid == 7 && a.cpus[2].x2apic_entry);
    CHECK(a.lapic_addr == 0x100000000ull);
    CHECK(a.ioapic_count == 0);
    CHECK(a.override_count == 1 && a.overrides[0].source_irq == 9 && a.overrides[0].gsi == 9 &&
          a.overrides[0].flags == 0x0d);
    CHECK(warned(m, "offset 0x44 repeats APIC id 0; keeping the first"));
    CHECK(warned(m, "repeats APIC id 256"));
    CHECKF(m->nwarnings == 2, "%d warnings", m->nwarnings);
    machine_free(m);
}

static void madt_too_many(void)
{
    struct machine *m = load_dump("seabios-pc-smp1");
    struct acpi_info a;
    if (!m)
        return;
    enum { NCPU = ACPI_MAX_CPUS + 44, NIO = 10, NOVR = 20 };
    size_t n = NCPU * 16 + NIO * 12 + NOVR * 10, off = 0;
    uint8_t *e = calloc(1, n);
    for (int i = 0; i < NCPU; i++, off += 16) {
        e[off] = 9, e[off + 1] = 16;
        put32(e + off + 4, (uint32_t)i);
        put32(e + off + 8, 1);
        put32(e + off + 12, (uint32_t)i);
    }
    for (int i = 0; i < NIO; i++, off += 12) {
        e[off] = 1, e[off + 1] = 12, e[off + 2] = (uint8_t)i;
        put32(e + off + 4, 0xfec00000u + 0x1000u * (uint32_t)i);
        put32(e + off + 8, 24u * (uint32_t)i);
    }
    for (int i = 0; i < NOVR; i++, off += 10)
        e[off] = 2, e[off + 1] = 10, e[off + 3] = (uint8_t)i, e[off + 4] = (uint8_t)i;
    set_madt_entries(m, e, n);
    free(e);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.cpu_count == ACPI_MAX_CPUS && a.cpus[ACPI_MAX_CPUS - 1].apic_id == ACPI_MAX_CPUS - 1);
    CHECK(a.ioapic_count == ACPI_MAX_IOAPICS && a.ioapics[7].gsi_base == 7 * 24);
    CHECK(a.override_count == ACPI_MAX_OVERRIDES);
    CHECK(warned(m, "more than 4096 processors"));
    CHECK(warned(m, "more than 8 IOAPICs"));
    CHECK(warned(m, "more than 16 interrupt source overrides"));
    machine_free(m);
}

static void madt_no_cpus(void)
{
    struct machine *m = load_dump("seabios-pc-smp1");
    struct acpi_info a;
    if (!m)
        return;
    set_madt_entries(m, NULL, 0);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.madt_found && a.cpu_count == 0);
    CHECK(warned(m, "lists no usable processor"));
    machine_free(m);
}

static void madt_missing(void)
{
    struct machine *m = load_dump("seabios-q35-smp4");
    struct acpi_info a;
    if (!m)
        return;
    memcpy(find_region(m, "APIC")->bytes, "APIX", 4);
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.madt_found && a.fadt_found);
    CHECK(warned(m, "ACPI MADT: the RSDT lists no such table"));
    machine_free(m);
}

// ---- FADT and HPET ------------------------------------------------------------

static void fadt_v1_and_x_fields(void)
{
    struct machine *m = load_dump("seabios-q35-smp4");
    struct acpi_info a;
    if (!m)
        return;
    struct region *f = find_region(m, "FACP");
    CHECK(f->len >= 244);
    // X_PM_TMR_BLK: a system-I/O port that differs from the 32-bit field wins.
    uint8_t *x = f->bytes + 208;
    x[0] = 1, x[1] = 32;
    put64(x + 4, 0x1008);
    // X_PM1a_CNT_BLK in memory space: the 32-bit field is used.
    x = f->bytes + 172;
    x[0] = 0;
    put64(x + 4, 0xfee0);
    put32(f->bytes + 112, get32(f->bytes + 112) | 1u << 8);
    fix_table(f);
    CHECK(run_parse(m, &a) == 0);
    CHECKF(a.pm_tmr_port == 0x1008, "pm_tmr_port %x", a.pm_tmr_port);
    CHECK(a.pm1a_cnt_port == 0x604);
    CHECK(a.pm_tmr_32bit);
    CHECKF(a.rtc_century == 0x32, "rtc_century %x (QEMU's is CMOS 0x32)", a.rtc_century);
    machine_free(m);

    // An ACPI 1.0 FADT (116 bytes): only the 32-bit fields exist.
    m = load_dump("seabios-q35-smp4");
    f = find_region(m, "FACP");
    put32(f->bytes + 76, 0x4008);
    f->bytes[208] = 1;
    put64(f->bytes + 212, 0x1008);
    resize(f, 116);
    f->bytes[8] = 1;
    fix_table(f);
    CHECK(run_parse(m, &a) == 0);
    CHECK(a.fadt_found && a.fadt_revision == 1 && a.pm_tmr_port == 0x4008);
    CHECK(m->nwarnings == 0);
    machine_free(m);

    m = load_dump("seabios-q35-smp4");
    f = find_region(m, "FACP");
    resize(f, 100);
    fix_table(f);
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.fadt_found && a.pm_tmr_port == 0 && a.madt_found);
    CHECK(warned(m, "ACPI FADT: length 100 is shorter"));
    machine_free(m);
}

static void fadt_bad_checksum(void)
{
    struct machine *m = load_dump("seabios-pc-smp1");
    struct acpi_info a;
    if (!m)
        return;
    find_region(m, "FACP")->bytes[77] ^= 0x80;
    CHECK(run_parse(m, &a) == 0);
    CHECK(!a.fadt_found && a.pm_tmr_port == 0 && a.cpu_count == 1);
    CHECK(warned(m, "ACPI FADT: checksum"));
    machine_free(m);
}

static void hpet_bad(void)
{
    struct machine *m = load_dump("seabios-pc-smp1");
    struct acpi_info a;
    if (!m)
        return;
    struct region *h = find_region(m, "HPET");
    h->bytes[40] = 1;
    fix_table(h);
    CHECK(run_parse(m, &a) == 0 && a.hpet_addr == 0);
    CHECK(warned(m, "ACPI HPET: base address is in address space 1"));
    resize(h, 50);
    fix_table(h);
    CHECK(run_parse(m, &a) == 0 && a.hpet_addr == 0);
    CHECK(warned(m, "ACPI HPET: length 50"));
    machine_free(m);
}

// Random damage to every table, checksums made right again so the damage
// reaches the parsers. The assertion is ASan's and UBSan's: no crash, no
// read outside a mapping, whatever the bytes say.
static void fuzz_tables(void)
{
    static const char *dumps[] = { "seabios-pc-smp8", "seabios-q35-smp4", "ovmf-q35-smp2" };
    uint32_t seed = 12345;
    for (int round = 0; round < 3000; round++) {
        struct machine *m = load_dump(dumps[round % 3]);
        struct acpi_info a;
        if (!m)
            return;
        for (int k = 0; k < 1 + round % 8; k++) {
            seed = seed * 1103515245u + 12345u;
            struct region *r = &m->r[(seed >> 16) % (uint32_t)m->nr];
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % r->len;
            seed = seed * 1103515245u + 12345u;
            r->bytes[at] = (uint8_t)(seed >> 16);
            if (!strcmp(r->sig, "RSDP"))
                fix_rsdp(r);
            else if (round % 5)
                fix_table(r);
        }
        int rc = run_parse(m, &a);
        CHECK(rc == 0 || rc == -1);
        CHECK(a.cpu_count <= ACPI_MAX_CPUS && a.ioapic_count <= ACPI_MAX_IOAPICS);
        CHECK(a.override_count <= ACPI_MAX_OVERRIDES);
        machine_free(m);
    }
}

// ---- the BIOS area scan ---------------------------------------------------------

static struct machine *low_memory(uint16_t ebda_seg)
{
    struct machine *m = calloc(1, sizeof *m);
    struct region *bda = add_region(m, "BDA", 0, 0x1000);
    put16(bda->bytes + 0x40e, ebda_seg);
    add_region(m, "EBDA", 0x9fc00, 0x400);
    add_region(m, "ROM", 0xe0000, 0x20000);
    return m;
}

static void put_rsdp(struct region *r, size_t off, bool good)
{
    memcpy(r->bytes + off, "RSD PTR ", 8);
    r->bytes[off + 8] = (uint8_t)-sum(r->bytes + off, 20);
    if (!good)
        r->bytes[off + 8] ^= 1;
}

static void scan_rsdp(void)
{
    struct machine *m = low_memory(0x9fc0);
    put_rsdp(find_region(m, "EBDA"), 0x3e0, true);
    put_rsdp(find_region(m, "ROM"), 0x15a40, true);
    CHECK(acpi_scan_rsdp(map_copy, m) == 0x9ffe0);                 // the EBDA comes first
    find_region(m, "EBDA")->bytes[0x3e8] ^= 1;                      // now its checksum fails
    CHECK(acpi_scan_rsdp(map_copy, m) == 0xf5a40);
    machine_free(m);

    m = low_memory(0);                                              // no EBDA
    put_rsdp(find_region(m, "ROM"), 0x1ffe0, true);                 // the last slot
    CHECK(acpi_scan_rsdp(map_copy, m) == 0xfffe0);
    machine_free(m);

    m = low_memory(0x9fc0);
    put_rsdp(find_region(m, "ROM"), 0x1008, true);                  // not 16-byte aligned
    put_rsdp(find_region(m, "ROM"), 0x2000, false);
    CHECK(acpi_scan_rsdp(map_copy, m) == 0);
    machine_free(m);

    m = low_memory(0x1234);                                         // EBDA segment into nowhere
    put_rsdp(find_region(m, "ROM"), 0x0, true);
    CHECK(acpi_scan_rsdp(map_copy, m) == 0xe0000);
    machine_free(m);

    m = calloc(1, sizeof *m);                                       // nothing mapped at all
    CHECK(acpi_scan_rsdp(map_copy, m) == 0);
    machine_free(m);
}

int main(int argc, char **argv)
{
    find_data_dir(argc, argv);
    RUN(real_pc_smp1);
    RUN(real_pc_smp8);
    RUN(real_q35_smp4);
    RUN(real_ovmf_smp2);
    RUN(real_find_table);
    RUN(real_numa_find_srat_slit);
    RUN(rsdp_bad_checksum);
    RUN(rsdp_bad_signature_and_short);
    RUN(rsdt_bad_checksum);
    RUN(rsdt_length_beyond_memory);
    RUN(rsdt_partial_entry);
    RUN(xsdt_preferred);
    RUN(xsdt_bad_rsdt_good);
    RUN(xsdt_unmapped_or_zero);
    RUN(rsdp_extended_checksum_bad);
    RUN(madt_bad_checksum);
    RUN(madt_zero_length_entry);
    RUN(madt_entry_past_end);
    RUN(madt_truncated_length);
    RUN(madt_entry_below_minimum);
    RUN(madt_x2apic_dup_and_flags);
    RUN(madt_too_many);
    RUN(madt_no_cpus);
    RUN(madt_missing);
    RUN(fadt_v1_and_x_fields);
    RUN(fadt_bad_checksum);
    RUN(hpet_bad);
    RUN(fuzz_tables);
    RUN(scan_rsdp);
    RUN(real_mcfg);
    RUN(mcfg_bad_entries);
    return CHECK_DONE();
}
