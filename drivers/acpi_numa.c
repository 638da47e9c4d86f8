// SPDX-License-Identifier: MIT
// SRAT and SLIT: proximity domains become NUMA nodes (interface and
// validation rules in acpi_numa.h).
//
// Pure code, compiled into the kernel and into tests/host/test_acpi_numa.c.
// Tables come validated (signature, length, checksum) from acpi_find_table;
// after that every read is bounds-checked against the table's own length,
// and multi-byte fields are read byte by byte, as in drivers/acpi.c.
//
// The parse runs in three passes, so that one bad entry costs only itself:
//   1. walk the SRAT, keeping enabled processor and memory entries whose
//      fields make sense (domain in range, no repeated APIC id, a memory
//      range that neither wraps nor overlaps one kept before it);
//   2. number the domains in use (by a processor the MADT lists, or by a
//      memory range) densely in increasing order: these are the nodes;
//   3. give each MADT processor its node, and take distances from the SLIT
//      when it covers every domain in use with sane values.
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef GORO_HOST_TEST
#include <stdio.h>
#else
#include "lib/printf.h"
#endif
#include "drivers/acpi_numa.h"
#include "lib/le.h"

#define SRAT_HDR_LEN 48                 // SDT header, table revision field, reserved
#define SLIT_HDR_LEN 44                 // SDT header, locality count

#define SRAT_CPU 0                      // processor local APIC/SAPIC affinity
#define SRAT_MEM 1                      // memory affinity
#define SRAT_X2APIC 2                   // processor local x2APIC affinity
#define SRAT_CPU_LEN 16
#define SRAT_MEM_LEN 40
#define SRAT_X2APIC_LEN 24

#define SRAT_ENABLED (1u << 0)
#define SRAT_MEM_HOTPLUG (1u << 1)
#define SRAT_MEM_NONVOLATILE (1u << 2)

struct numa_ctx {
    acpi_warn_fn warn;
    void *warn_ctx;
    struct acpi_numa *out;
    const struct acpi_info *madt;
    uint8_t srat_rev;
    // pass 1's findings
    uint32_t ncpu;
    struct { uint32_t apic_id, domain; } cpu[ACPI_MAX_CPUS];
    bool cpus_full_warned, ranges_full_warned;
    struct { uint64_t base, len; uint32_t domain, flags; } mem[ACPI_NUMA_MAX_RANGES];
    uint32_t nmem;
    // pass 2: the domains left out for want of nodes, each warned about once
    uint8_t domain_dropped[(ACPI_NUMA_MAX_DOMAIN + 1) / 8];
};

__attribute__((format(printf, 2, 3)))
static void numa_warnf(struct numa_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acpi_warn_fmtv(c->warn, c->warn_ctx, fmt, ap);
    va_end(ap);
}

// ---- pass 1: the SRAT's entries ---------------------------------------

static bool domain_ok(struct numa_ctx *c, uint32_t off, uint32_t domain)
{
    if (domain <= ACPI_NUMA_MAX_DOMAIN)
        return true;
    numa_warnf(c, "ACPI SRAT: entry at offset 0x%x names proximity domain %u, outside 0..%u; "
               "ignoring it", off, domain, ACPI_NUMA_MAX_DOMAIN);
    return false;
}

static void srat_cpu(struct numa_ctx *c, uint32_t off, uint32_t apic_id, uint32_t domain,
                     uint32_t flags)
{
    if (!(flags & SRAT_ENABLED) || !domain_ok(c, off, domain))
        return;
    for (uint32_t i = 0; i < c->ncpu; i++) {
        if (c->cpu[i].apic_id == apic_id) {
            numa_warnf(c, "ACPI SRAT: entry at offset 0x%x repeats APIC id %u; keeping the first",
                       off, apic_id);
            return;
        }
    }
    if (c->ncpu == ACPI_MAX_CPUS) {
        if (!c->cpus_full_warned)
            numa_warnf(c, "ACPI SRAT: more than %u processors; ignoring the rest", ACPI_MAX_CPUS);
        c->cpus_full_warned = true;
        return;
    }
    c->cpu[c->ncpu].apic_id = apic_id;
    c->cpu[c->ncpu].domain = domain;
    c->ncpu++;
}

static void srat_mem(struct numa_ctx *c, uint32_t off, const uint8_t *e)
{
    uint32_t domain = le32(e + 2), flags = le32(e + 28);
    uint64_t base = le64(e + 8), len = le64(e + 16);

    // Revision 1 of the table defined only the low byte of the domain.
    if (c->srat_rev < 2)
        domain &= 0xff;
    if (!(flags & SRAT_ENABLED) || !domain_ok(c, off, domain))
        return;
    if (len == 0 || base + len < base) {
        numa_warnf(c, "ACPI SRAT: memory entry at offset 0x%x, base 0x%llx length 0x%llx, is %s; "
                   "ignoring it", off, (unsigned long long)base, (unsigned long long)len,
                   len == 0 ? "empty" : "past the end of the address space");
        return;
    }
    for (uint32_t i = 0; i < c->nmem; i++) {
        uint64_t b = c->mem[i].base, end = b + c->mem[i].len;
        if (base < end && b < base + len) {
            numa_warnf(c, "ACPI SRAT: memory entry at offset 0x%x, 0x%llx-0x%llx, overlaps "
                       "0x%llx-0x%llx of domain %u; ignoring it", off,
                       (unsigned long long)base, (unsigned long long)(base + len - 1),
                       (unsigned long long)b, (unsigned long long)(end - 1), c->mem[i].domain);
            return;
        }
    }
    if (c->nmem == ACPI_NUMA_MAX_RANGES) {
        if (!c->ranges_full_warned)
            numa_warnf(c, "ACPI SRAT: more than %u memory ranges; ignoring the rest",
                       ACPI_NUMA_MAX_RANGES);
        c->ranges_full_warned = true;
        return;
    }
    c->mem[c->nmem].base = base;
    c->mem[c->nmem].len = len;
    c->mem[c->nmem].domain = domain;
    c->mem[c->nmem].flags = flags;
    c->nmem++;
}

static uint8_t srat_entry_min(uint8_t type)
{
    switch (type) {
    case SRAT_CPU: return SRAT_CPU_LEN;
    case SRAT_MEM: return SRAT_MEM_LEN;
    case SRAT_X2APIC: return SRAT_X2APIC_LEN;
    default: return 2;      // other types (GICC, ITS, initiators) are skipped by length
    }
}


static void srat_walk(struct numa_ctx *c, const uint8_t *t, uint32_t len)
{
    c->srat_rev = t[8];
    for (uint32_t off = SRAT_HDR_LEN; off < len; off += t[off + 1]) {
        const uint8_t *e = t + off;
        if (!acpi_entry_check("SRAT", t, len, off, srat_entry_min, c->warn, c->warn_ctx))
            break;
        switch (e[0]) {
        case SRAT_CPU: {
            // Bits 8..31 of the domain sit in bytes 9..11 from revision 2 on.
            uint32_t domain = e[2];
            if (c->srat_rev >= 2)
                domain |= (uint32_t)e[9] << 8 | (uint32_t)e[10] << 16 | (uint32_t)e[11] << 24;
            srat_cpu(c, off, e[3], domain, le32(e + 4));
            break;
        }
        case SRAT_X2APIC:
            srat_cpu(c, off, le32(e + 8), le32(e + 4), le32(e + 12));
            break;
        case SRAT_MEM:
            srat_mem(c, off, e);
            break;
        }
    }
}

// ---- pass 2: domains become nodes ---------------------------------------

static bool madt_has(const struct acpi_info *madt, uint32_t apic_id)
{
    for (uint32_t i = 0; i < madt->cpu_count; i++)
        if (madt->cpus[i].apic_id == apic_id)
            return true;
    return false;
}

// Adds domain to the sorted set out->domain[0..node_count). Returns false
// (after one warning per domain) when the set is full.
static bool domain_add(struct numa_ctx *c, uint32_t domain)
{
    struct acpi_numa *o = c->out;
    uint32_t i = 0;
    while (i < o->node_count && o->domain[i] < domain)
        i++;
    if (i < o->node_count && o->domain[i] == domain)
        return true;
    if (o->node_count == ACPI_NUMA_MAX_NODES) {
        // domain <= ACPI_NUMA_MAX_DOMAIN: pass 1 kept no other
        if (!(c->domain_dropped[domain / 8] & 1u << (domain % 8)))
            numa_warnf(c, "ACPI SRAT: more than %u proximity domains; ignoring domain %u",
                       ACPI_NUMA_MAX_NODES, domain);
        c->domain_dropped[domain / 8] |= (uint8_t)(1u << (domain % 8));
        return false;
    }
    memmove(&o->domain[i + 1], &o->domain[i], (o->node_count - i) * sizeof o->domain[0]);
    o->domain[i] = domain;
    o->node_count++;
    return true;
}

static int node_of_domain(const struct acpi_numa *o, uint32_t domain)
{
    for (uint32_t i = 0; i < o->node_count; i++)
        if (o->domain[i] == domain)
            return (int)i;
    return -1;
}

// The ranges, sorted by base (they are disjoint), with their nodes.
static void ranges_build(struct numa_ctx *c)
{
    struct acpi_numa *o = c->out;
    for (uint32_t k = 0; k < c->nmem; k++) {
        int node = node_of_domain(o, c->mem[k].domain);
        if (node < 0)
            continue;       // its domain did not fit: already warned
        struct acpi_numa_range r = {
            .base = c->mem[k].base, .len = c->mem[k].len, .node = (uint32_t)node,
            .hotplug = c->mem[k].flags & SRAT_MEM_HOTPLUG,
            .nonvolatile = c->mem[k].flags & SRAT_MEM_NONVOLATILE,
        };
        uint32_t i = o->range_count;
        while (i > 0 && o->ranges[i - 1].base > r.base) {
            o->ranges[i] = o->ranges[i - 1];
            i--;
        }
        o->ranges[i] = r;
        o->range_count++;
    }
}

// ---- pass 3: processors and distances -----------------------------------

static void cpus_place(struct numa_ctx *c)
{
    struct acpi_numa *o = c->out;
    for (uint32_t i = 0; i < o->cpu_count; i++) {
        int node = -1;
        for (uint32_t k = 0; k < c->ncpu && node < 0; k++)
            if (c->cpu[k].apic_id == o->cpu_apic_id[i])
                node = node_of_domain(o, c->cpu[k].domain);
        if (node < 0) {
            numa_warnf(c, "ACPI SRAT: the processor with APIC id %u is in no usable proximity "
                       "domain; placing it in node 0", o->cpu_apic_id[i]);
            node = 0;
        }
        o->cpu_node[i] = (uint8_t)node;
    }
}

static void distances_default(struct acpi_numa *o)
{
    for (uint32_t a = 0; a < ACPI_NUMA_MAX_NODES; a++)
        for (uint32_t b = 0; b < ACPI_NUMA_MAX_NODES; b++)
            o->distance[a][b] = a == b ? ACPI_NUMA_LOCAL : ACPI_NUMA_REMOTE;
}

// The SLIT's distances between the domains in use, or a warning and the
// defaults when it does not cover them or its values are not distances
// (ACPI 6.5, 5.2.17: 10 on the diagonal, more than 10 elsewhere).
static void slit_apply(struct numa_ctx *c, const uint8_t *t)
{
    struct acpi_numa *o = c->out;
    uint32_t len = le32(t + 4);
    uint64_t n;

    if (len < SLIT_HDR_LEN) {
        numa_warnf(c, "ACPI SLIT: length %u is shorter than its %u-byte header; using default "
                   "distances", len, SLIT_HDR_LEN);
        return;
    }
    n = le64(t + 36);
    if (n > ACPI_NUMA_MAX_DOMAIN + 1 || SLIT_HDR_LEN + n * n > len) {
        numa_warnf(c, "ACPI SLIT: %llu localities do not fit its %u bytes; using default distances",
                   (unsigned long long)n, len);
        return;
    }
    for (uint32_t a = 0; a < o->node_count; a++) {
        if (o->domain[a] >= n) {
            numa_warnf(c, "ACPI SLIT: has %llu localities, but proximity domain %u is in use; "
                       "using default distances", (unsigned long long)n, o->domain[a]);
            return;
        }
    }
    for (uint32_t a = 0; a < o->node_count; a++) {
        for (uint32_t b = 0; b < o->node_count; b++) {
            uint8_t d = t[SLIT_HDR_LEN + o->domain[a] * n + o->domain[b]];
            if (a == b ? d != ACPI_NUMA_LOCAL : d <= ACPI_NUMA_LOCAL) {
                numa_warnf(c, "ACPI SLIT: distance %u from domain %u to %u is not a distance "
                           "(10 to itself, more than 10 elsewhere); using default distances",
                           d, o->domain[a], o->domain[b]);
                return;
            }
        }
    }
    for (uint32_t a = 0; a < o->node_count; a++)
        for (uint32_t b = 0; b < o->node_count; b++)
            o->distance[a][b] = t[SLIT_HDR_LEN + o->domain[a] * n + o->domain[b]];
    o->slit_found = true;
}

// ---- entry points ---------------------------------------------------------

static void one_node(struct acpi_numa *o)
{
    o->srat_found = false;
    o->slit_found = false;
    o->node_count = 1;
    o->domain[0] = 0;
    o->range_count = 0;
    memset(o->cpu_node, 0, sizeof o->cpu_node);
    distances_default(o);
}

// Pass 2 and 3 once pass 1 has run. Returns false when the SRAT gave no
// usable node, after a warning.
static bool nodes_build(struct numa_ctx *c)
{
    struct acpi_numa *o = c->out;
    for (uint32_t k = 0; k < c->ncpu; k++)
        if (madt_has(c->madt, c->cpu[k].apic_id))
            domain_add(c, c->cpu[k].domain);
    for (uint32_t k = 0; k < c->nmem; k++)
        domain_add(c, c->mem[k].domain);
    if (c->nmem == 0 || o->node_count == 0) {
        numa_warnf(c, "ACPI SRAT: lists no usable memory range; using one node");
        return false;
    }
    ranges_build(c);
    o->srat_found = true;
    cpus_place(c);
    return true;
}

void acpi_numa_parse(struct acpi_numa *out, const struct acpi_info *madt,
                     const void *rsdp, size_t rsdp_len,
                     acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx)
{
    static struct numa_ctx c;       // 34 KiB of findings: not on a boot stack
    const uint8_t *srat, *slit;
    uint32_t len;

    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    c.warn = warn;
    c.warn_ctx = warn_ctx;
    c.out = out;
    c.madt = madt;
    out->cpu_count = madt->cpu_count;
    for (uint32_t i = 0; i < madt->cpu_count; i++)
        out->cpu_apic_id[i] = madt->cpus[i].apic_id;
    one_node(out);

    srat = rsdp ? acpi_find_table(rsdp, rsdp_len, "SRAT", map, map_ctx, warn, warn_ctx) : NULL;
    if (!srat)
        return;
    len = le32(srat + 4);
    if (len < SRAT_HDR_LEN) {
        numa_warnf(&c, "ACPI SRAT: length %u is shorter than its %u-byte header; using one node",
                   len, SRAT_HDR_LEN);
        return;
    }
    srat_walk(&c, srat, len);
    out->node_count = 0;
    if (!nodes_build(&c)) {
        one_node(out);
        return;
    }
    slit = acpi_find_table(rsdp, rsdp_len, "SLIT", map, map_ctx, warn, warn_ctx);
    if (slit)
        slit_apply(&c, slit);
}

int acpi_numa_cpu_node(const struct acpi_numa *n, uint32_t apic_id)
{
    for (uint32_t i = 0; i < n->cpu_count; i++)
        if (n->cpu_apic_id[i] == apic_id)
            return n->cpu_node[i];
    return -1;
}
