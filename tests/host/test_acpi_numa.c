// SPDX-License-Identifier: MIT
// Host tests for drivers/acpi_numa.c: SRAT and SLIT from QEMU's firmware
// (tests/data/acpi/*numa*.txt, dumped by shell/acpidump.c; the QEMU options
// of each are in tests/data/acpi/README-numa.md) and corrupted copies.
//
// As in test_acpi.c, the map callback hands out a heap copy of exactly the
// bytes asked for, so AddressSanitizer catches a read past any mapping.
//
// Usage: test_acpi_numa [data-dir]   (default tests/data/acpi)
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "drivers/acpi.h"
#include "drivers/acpi_numa.h"
#include "check.h"
#include "acpi_dump.h"


// ---- a fake physical memory loaded from a dump ------------------------------

// The MADT first (the processors the SRAT is matched against), then the
// NUMA tables. Warnings of the MADT parse are not the SRAT's: cleared.
static void parse(struct machine *m)
{
    struct region *rsdp = find_region(m, "RSDP");
    CHECK(acpi_parse(&m->info, rsdp->bytes, rsdp->len, map_copy, m, warn_collect, m) == 0);
    m->nwarnings = 0;
    acpi_numa_parse(&m->numa, &m->info, rsdp->bytes, rsdp->len, map_copy, m, warn_collect, m);
}

// ---- editing tables ---------------------------------------------------------------

// The offset of the n-th SRAT entry of this type (n from 0), or 0.
static size_t srat_entry(struct region *t, uint8_t type, int n)
{
    for (size_t off = 48; off + 2 <= t->len && t->bytes[off + 1]; off += t->bytes[off + 1])
        if (t->bytes[off] == type && n-- == 0)
            return off;
    return 0;
}

// Appends an entry to the SRAT, checksum fixed.
static void srat_append(struct machine *m, const uint8_t *e, size_t n)
{
    struct region *t = find_region(m, "SRAT");
    size_t old = t->len;
    resize(t, old + n);
    memcpy(t->bytes + old, e, n);
    fix_table(t);
}

static void mem_entry(uint8_t e[40], uint32_t domain, uint64_t base, uint64_t len, uint32_t flags)
{
    memset(e, 0, 40);
    e[0] = 1, e[1] = 40;
    put32(e + 2, domain);
    put64(e + 8, base);
    put64(e + 16, len);
    put32(e + 28, flags);
}

// ---- real tables --------------------------------------------------------------------

static void check_range(struct acpi_numa *n, uint32_t i, uint64_t base, uint64_t len, uint32_t node)
{
    CHECKF(i < n->range_count, "range %u missing (%u ranges)", i, n->range_count);
    if (i >= n->range_count)
        return;
    struct acpi_numa_range *r = &n->ranges[i];
    CHECKF(r->base == base && r->len == len && r->node == node,
           "range %u: 0x%llx+0x%llx node %u, want 0x%llx+0x%llx node %u", i,
           (unsigned long long)r->base, (unsigned long long)r->len, r->node,
           (unsigned long long)base, (unsigned long long)len, node);
}

static void check_cpu_nodes(struct acpi_numa *n, const uint32_t *apic, const uint8_t *node,
                            uint32_t count)
{
    CHECKF(n->cpu_count == count, "cpu_count %u, want %u", n->cpu_count, count);
    for (uint32_t i = 0; i < count; i++)
        CHECKF(acpi_numa_cpu_node(n, apic[i]) == node[i], "apic %u: node %d, want %u", apic[i],
               acpi_numa_cpu_node(n, apic[i]), node[i]);
}

static void real_pc_numa2(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(n->srat_found && n->slit_found);
    CHECK(n->node_count == 2 && n->domain[0] == 0 && n->domain[1] == 1);
    static const uint32_t apic[] = { 0, 1, 2, 3 };
    static const uint8_t node[] = { 0, 0, 1, 1 };
    check_cpu_nodes(n, apic, node, 4);
    // QEMU splits node 0 around the 640 KiB hole; its zeroed last entry
    // (flags 0) is skipped.
    CHECKF(n->range_count == 3, "%u ranges", n->range_count);
    check_range(n, 0, 0, 0xa0000, 0);
    check_range(n, 1, 0x100000, 0xff00000, 0);
    check_range(n, 2, 0x10000000, 0x10000000, 1);
    CHECK(n->distance[0][0] == 10 && n->distance[0][1] == 20 && n->distance[1][0] == 20 &&
          n->distance[1][1] == 10);
    CHECK(acpi_numa_cpu_node(n, 4) == -1);
    CHECKF(m->nwarnings == 0, "unexpected warning: %s", m->warnings[0]);
    machine_free(m);
}

static void real_q35_numa2_dist21(void)
{
    struct machine *m = load_dump("seabios-q35-smp4-numa2");
    if (!m)
        return;
    parse(m);
    CHECK(m->numa.node_count == 2 && m->numa.slit_found);
    CHECK(m->numa.distance[0][1] == 21 && m->numa.distance[1][0] == 21);
    CHECKF(m->nwarnings == 0, "unexpected warning: %s", m->warnings[0]);
    machine_free(m);
}

static void real_q35_numa4_hotplug(void)
{
    struct machine *m = load_dump("seabios-q35-smp4-numa4-hotplug");
    if (!m)
        return;
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(n->srat_found && n->slit_found && n->node_count == 4);
    static const uint32_t apic[] = { 0, 1, 2, 3 };
    static const uint8_t node[] = { 0, 1, 2, 3 };
    check_cpu_nodes(n, apic, node, 4);
    CHECKF(n->range_count == 6, "%u ranges", n->range_count);
    check_range(n, 2, 0x10000000, 0x10000000, 1);
    check_range(n, 3, 0x20000000, 0x10000000, 2);
    check_range(n, 4, 0x30000000, 0x10000000, 3);
    // -m 1G,slots=2,maxmem=2G: the hot-plug area above 4 GiB goes to the last node.
    check_range(n, 5, 0x100000000ull, 0xc0000000ull, 3);
    CHECK(n->ranges[5].hotplug && !n->ranges[4].hotplug);
    static const uint8_t want[4][4] = {
        { 10, 20, 30, 40 }, { 20, 10, 20, 30 }, { 30, 20, 10, 20 }, { 40, 30, 20, 10 },
    };
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            CHECKF(n->distance[a][b] == want[a][b], "distance %d-%d: %u", a, b, n->distance[a][b]);
    CHECKF(m->nwarnings == 0, "unexpected warning: %s", m->warnings[0]);
    machine_free(m);
}

// Node 2 has processors and no memory, node 3 memory and no processors; no
// -numa dist, so no SLIT.
static void real_memless_and_cpuless(void)
{
    struct machine *m = load_dump("seabios-pc-smp6-numa4-memless");
    if (!m)
        return;
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(n->srat_found && !n->slit_found && n->node_count == 4);
    static const uint32_t apic[] = { 0, 1, 2, 3, 4, 5 };
    static const uint8_t node[] = { 0, 0, 1, 1, 2, 2 };
    check_cpu_nodes(n, apic, node, 6);
    CHECKF(n->range_count == 4, "%u ranges", n->range_count);
    check_range(n, 2, 0x10000000, 0x10000000, 1);
    check_range(n, 3, 0x20000000, 0x10000000, 3);
    for (uint32_t i = 0; i < n->range_count; i++)
        CHECK(n->ranges[i].node != 2);
    CHECK(n->distance[2][2] == 10 && n->distance[2][3] == 20 && n->distance[0][1] == 20);
    CHECKF(m->nwarnings == 0, "unexpected warning: %s", m->warnings[0]);
    machine_free(m);
}

// -smp 6,sockets=2,cores=3: APIC ids 0-2 and 4-6, not dense.
static void real_sparse_apic_ids(void)
{
    struct machine *m = load_dump("seabios-q35-smp6-numa2-sparse");
    if (!m)
        return;
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(n->node_count == 2 && n->slit_found && n->distance[0][1] == 32);
    static const uint32_t apic[] = { 0, 1, 2, 4, 5, 6 };
    static const uint8_t node[] = { 0, 0, 0, 1, 1, 1 };
    check_cpu_nodes(n, apic, node, 6);
    CHECK(acpi_numa_cpu_node(n, 3) == -1);
    CHECKF(m->nwarnings == 0, "unexpected warning: %s", m->warnings[0]);
    machine_free(m);
}

static void check_one_node(struct machine *m)
{
    struct acpi_numa *n = &m->numa;
    CHECK(!n->srat_found && !n->slit_found && n->node_count == 1 && n->range_count == 0);
    for (uint32_t i = 0; i < n->cpu_count; i++)
        CHECK(n->cpu_node[i] == 0);
    CHECK(n->distance[0][0] == 10);
}

static void no_srat_one_node(void)
{
    struct machine *m = load_dump("seabios-q35-smp4");
    if (!m)
        return;
    parse(m);
    check_one_node(m);
    CHECK(m->numa.cpu_count == 4);
    CHECK(m->nwarnings == 0);
    machine_free(m);

    // No RSDP at all (acpi_init found none): one node, quietly.
    struct acpi_info none;
    struct acpi_numa n;
    memset(&none, 0, sizeof none);
    acpi_numa_parse(&n, &none, NULL, 0, map_copy, NULL, NULL, NULL);
    CHECK(n.node_count == 1 && !n.srat_found && n.cpu_count == 0);
}

// ---- corrupted tables ---------------------------------------------------------------

static void srat_bad_checksum(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    find_region(m, "SRAT")->bytes[60] ^= 1;
    parse(m);
    check_one_node(m);
    CHECK(warned(m, "ACPI SRAT: checksum"));
    machine_free(m);
}

static void srat_truncated(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    put32(t->bytes + 4, 40);                // shorter than the SRAT's own header
    fix_table(t);
    parse(m);
    check_one_node(m);
    CHECK(warned(m, "ACPI SRAT: length 40 is shorter than its 48-byte header"));
    machine_free(m);

    m = load_dump("seabios-pc-smp4-numa2");
    t = find_region(m, "SRAT");
    put32(t->bytes + 4, (uint32_t)t->len + 100);  // more than the firmware wrote
    fix_table(t);
    parse(m);
    check_one_node(m);
    CHECK(warned(m, "cannot be mapped"));
    machine_free(m);
}

// The table ends inside the last memory entry: it is ignored, the rest kept.
static void srat_entry_past_end(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    size_t last = srat_entry(t, 1, 3);      // QEMU's zeroed final entry
    CHECK(last + 40 == t->len);
    size_t node1 = srat_entry(t, 1, 2);
    put32(t->bytes + 4, (uint32_t)(node1 + 20));     // cuts node 1's memory entry
    fix_table(t);
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(warned(m, "(type 1, length 40) runs past the table's end"));
    CHECK(n->srat_found && n->node_count == 2 && n->range_count == 2);
    CHECK(acpi_numa_cpu_node(n, 3) == 1);
    machine_free(m);
}

static void srat_zero_length_entry(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    t->bytes[srat_entry(t, 0, 3) + 1] = 0;  // the last CPU entry
    fix_table(t);
    parse(m);
    // The walk stops: no memory entry was reached.
    CHECK(warned(m, "has length 0; ignoring the rest of the table"));
    CHECK(warned(m, "lists no usable memory range; using one node"));
    check_one_node(m);
    machine_free(m);

    m = load_dump("seabios-pc-smp4-numa2");
    t = find_region(m, "SRAT");
    t->bytes[srat_entry(t, 1, 0) + 1] = 16; // a memory entry too short for its type
    fix_table(t);
    parse(m);
    CHECK(warned(m, "(type 1) has length 16, less than the 40 its type needs"));
    check_one_node(m);
    machine_free(m);
}

static void srat_overlapping_ranges(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    put64(t->bytes + srat_entry(t, 1, 2) + 8, 0xf000000);   // node 1 starts inside node 0
    fix_table(t);
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(warned(m, "0xf000000-0x1effffff, overlaps 0x100000-0xfffffff of domain 0; ignoring it"));
    // Node 1 still exists through its processors, without memory.
    CHECK(n->node_count == 2 && n->range_count == 2);
    CHECK(acpi_numa_cpu_node(n, 2) == 1);
    for (uint32_t i = 0; i < n->range_count; i++)
        CHECK(n->ranges[i].node == 0);
    machine_free(m);
}

static void srat_bad_ranges(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    uint8_t e[40];
    mem_entry(e, 1, 0xfffffffffffff000ull, 0x2000, 1);      // wraps
    srat_append(m, e, sizeof e);
    mem_entry(e, 1, 0x40000000, 0, 1);                       // empty
    srat_append(m, e, sizeof e);
    mem_entry(e, 1, 0x40000000, 0x1000, 0);                  // disabled: silent
    srat_append(m, e, sizeof e);
    mem_entry(e, 1, 0x40000000, 0x1000, 3);                  // hot-pluggable, fine
    srat_append(m, e, sizeof e);
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(warned(m, "is past the end of the address space"));
    CHECK(warned(m, "length 0x0, is empty"));
    CHECKF(m->nwarnings == 2, "%d warnings", m->nwarnings);
    CHECK(n->range_count == 4);
    check_range(n, 3, 0x40000000, 0x1000, 1);
    CHECK(n->ranges[3].hotplug);
    machine_free(m);
}

// Domains past 255 are corruption; an x2APIC entry carries all 32 bits.
static void srat_domain_out_of_range(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    size_t cpu3 = srat_entry(t, 0, 3);
    t->bytes[cpu3 + 4] = 0;                 // disable APIC id 3's local APIC entry...
    uint8_t x[24] = { 2, 24 };
    put32(x + 4, 1000);                     // ...and place it in domain 1000 by x2APIC
    put32(x + 8, 3);
    put32(x + 12, 1);
    srat_append(m, x, sizeof x);
    parse(m);
    CHECK(warned(m, "names proximity domain 1000, outside 0..255; ignoring it"));
    CHECK(warned(m, "the processor with APIC id 3 is in no usable proximity domain; placing it in node 0"));
    CHECK(m->numa.node_count == 2 && acpi_numa_cpu_node(&m->numa, 3) == 0);
    CHECK(acpi_numa_cpu_node(&m->numa, 2) == 1);
    machine_free(m);
}

// Revision 2 defines all 32 bits of a local APIC entry's domain.
static void srat_revision2_domain_bits(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    size_t cpu1 = srat_entry(t, 0, 1);
    t->bytes[cpu1 + 9] = 1;                 // domain 0x100 from revision 2 on
    fix_table(t);
    parse(m);
    CHECK(acpi_numa_cpu_node(&m->numa, 1) == 0 && m->nwarnings == 0);   // rev 1: ignored
    t->bytes[8] = 2;
    fix_table(t);
    m->nwarnings = 0;
    parse(m);
    CHECK(warned(m, "names proximity domain 256, outside 0..255"));
    CHECK(acpi_numa_cpu_node(&m->numa, 1) == 0);
    machine_free(m);
}

static void srat_cpu_in_no_node(void)
{
    struct machine *m = load_dump("seabios-q35-smp6-numa2-sparse");
    if (!m)
        return;
    struct region *t = find_region(m, "SRAT");
    t->bytes[srat_entry(t, 0, 4) + 4] = 0;  // APIC id 5's entry loses its enabled flag
    fix_table(t);
    parse(m);
    CHECK(warned(m, "the processor with APIC id 5 is in no usable proximity domain"));
    CHECKF(m->nwarnings == 1, "%d warnings", m->nwarnings);
    CHECK(acpi_numa_cpu_node(&m->numa, 5) == 0 && acpi_numa_cpu_node(&m->numa, 6) == 1);
    machine_free(m);
}

static void srat_duplicate_apic(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    uint8_t e[16] = { 0, 16, 0, 2, 1 };     // APIC id 2 again, in domain 0
    srat_append(m, e, sizeof e);
    parse(m);
    CHECK(warned(m, "repeats APIC id 2; keeping the first"));
    CHECK(acpi_numa_cpu_node(&m->numa, 2) == 1);
    machine_free(m);
}

static void srat_too_many_domains(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    for (uint32_t d = 2; d < 20; d++) {
        uint8_t e[40];
        mem_entry(e, d, 0x100000000ull * d, 0x1000, 1);
        srat_append(m, e, sizeof e);
    }
    uint8_t e[40];                                  // a second range of a domain left out
    mem_entry(e, 17, 0x100000000ull * 17 + 0x1000, 0x1000, 1);
    srat_append(m, e, sizeof e);
    parse(m);
    struct acpi_numa *n = &m->numa;
    CHECK(n->node_count == ACPI_NUMA_MAX_NODES);
    CHECK(warned(m, "more than 16 proximity domains; ignoring domain 16"));
    CHECK(warned(m, "ignoring domain 19"));
    // Once per domain, however many entries name it (the fuzz seed with
    // 270 processors in 20 domains found it warned once per entry).
    int times = 0;
    for (int i = 0; i < m->nwarnings; i++)
        times += strstr(m->warnings[i], "ignoring domain 17") != NULL;
    CHECKF(times == 1, "domain 17 warned %d times", times);
    CHECKF(n->range_count == 3 + 14, "%u ranges", n->range_count);
    // The SLIT covers 2 domains only.
    CHECK(!n->slit_found && warned(m, "ACPI SLIT: has 2 localities, but proximity domain 2 is in use"));
    machine_free(m);
}

static void slit_bad(void)
{
    struct machine *m = load_dump("seabios-pc-smp4-numa2");
    if (!m)
        return;
    struct region *s = find_region(m, "SLIT");
    s->bytes[40] ^= 1;
    parse(m);
    CHECK(m->numa.node_count == 2 && !m->numa.slit_found && m->numa.distance[0][1] == 20);
    CHECK(warned(m, "ACPI SLIT: checksum"));
    machine_free(m);

    m = load_dump("seabios-pc-smp4-numa2");
    s = find_region(m, "SLIT");
    s->bytes[44] = 11;                      // distance to itself must be 10
    s->bytes[45] = 31;
    fix_table(s);
    parse(m);
    CHECK(!m->numa.slit_found && m->numa.distance[0][1] == 20);
    CHECK(warned(m, "distance 11 from domain 0 to 0 is not a distance"));
    machine_free(m);

    m = load_dump("seabios-pc-smp4-numa2");
    s = find_region(m, "SLIT");
    s->bytes[46] = 9;                       // 1 -> 0 reserved value
    fix_table(s);
    parse(m);
    CHECK(!m->numa.slit_found && warned(m, "distance 9 from domain 1 to 0"));
    machine_free(m);

    m = load_dump("seabios-pc-smp4-numa2");
    s = find_region(m, "SLIT");
    put64(s->bytes + 36, 3);                // 3 localities need 9 bytes, 4 present
    fix_table(s);
    parse(m);
    CHECK(!m->numa.slit_found && warned(m, "3 localities do not fit its 48 bytes"));
    machine_free(m);

    m = load_dump("seabios-pc-smp4-numa2");
    s = find_region(m, "SLIT");
    put64(s->bytes + 36, 1);                // covers domain 0 only
    fix_table(s);
    parse(m);
    CHECK(!m->numa.slit_found && warned(m, "has 1 localities, but proximity domain 1 is in use"));
    machine_free(m);
}

// Random damage, checksums fixed so it reaches the parser: ASan and UBSan
// judge (no crash, no read outside a mapping), and what comes out must
// still be a topology.
static void fuzz_tables(void)
{
    static const char *dumps[] = { "seabios-pc-smp4-numa2", "seabios-q35-smp4-numa4-hotplug",
                                   "seabios-pc-smp6-numa4-memless" };
    uint32_t seed = 4242;
    for (int round = 0; round < 3000; round++) {
        struct machine *m = load_dump(dumps[round % 3]);
        if (!m)
            return;
        const char *sigs[] = { "SRAT", "SLIT" };
        for (int k = 0; k < 1 + round % 6; k++) {
            seed = seed * 1103515245u + 12345u;
            struct region *r = find_region(m, sigs[(seed >> 20) & 1]);
            if (!r)
                r = find_region(m, "SRAT");
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % r->len;
            seed = seed * 1103515245u + 12345u;
            r->bytes[at] = (uint8_t)(seed >> 16);
            if (round % 7)
                fix_table(r);
        }
        parse(m);
        struct acpi_numa *n = &m->numa;
        CHECK(n->node_count >= 1 && n->node_count <= ACPI_NUMA_MAX_NODES);
        CHECK(n->range_count <= ACPI_NUMA_MAX_RANGES);
        for (uint32_t i = 0; i < n->cpu_count; i++)
            CHECK(n->cpu_node[i] < n->node_count);
        for (uint32_t i = 0; i < n->range_count; i++) {
            CHECK(n->ranges[i].node < n->node_count && n->ranges[i].len > 0);
            if (i > 0)
                CHECK(n->ranges[i - 1].base + n->ranges[i - 1].len <= n->ranges[i].base);
        }
        for (uint32_t a = 0; a < n->node_count; a++)
            CHECK(n->distance[a][a] == 10);
        machine_free(m);
    }
}

int main(int argc, char **argv)
{
    find_data_dir(argc, argv);
    RUN(real_pc_numa2);
    RUN(real_q35_numa2_dist21);
    RUN(real_q35_numa4_hotplug);
    RUN(real_memless_and_cpuless);
    RUN(real_sparse_apic_ids);
    RUN(no_srat_one_node);
    RUN(srat_bad_checksum);
    RUN(srat_truncated);
    RUN(srat_entry_past_end);
    RUN(srat_zero_length_entry);
    RUN(srat_overlapping_ranges);
    RUN(srat_bad_ranges);
    RUN(srat_domain_out_of_range);
    RUN(srat_revision2_domain_bits);
    RUN(srat_cpu_in_no_node);
    RUN(srat_duplicate_apic);
    RUN(srat_too_many_domains);
    RUN(slit_bad);
    RUN(fuzz_tables);
    return CHECK_DONE();
}
