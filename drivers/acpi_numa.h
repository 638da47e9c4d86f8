// SPDX-License-Identifier: MIT
// ACPI SRAT (which processors and which memory belong to which proximity
// domain) and SLIT (the distances between domains), parsed into NUMA nodes.
//
// Pure like drivers/acpi.c: tables are reached through the map callback
// and problems reported through the warn callback, so host unit tests feed
// it tables dumped from QEMU. Validation follows drivers/acpi.c: a table
// with a bad checksum or a length that cannot be mapped is ignored; an
// entry that is cut off, has length 0 or is shorter than its type needs
// ends the walk; an entry whose contents are wrong (a proximity domain out
// of range, a memory range that overlaps an earlier one or wraps, an APIC
// id listed twice) is ignored alone. Every one of these is a warning that
// names the problem. No usable SRAT means one node holding every CPU and
// all memory; a CPU of the MADT that the SRAT places nowhere goes to node 0.
#ifndef GORO_ACPI_NUMA_H
#define GORO_ACPI_NUMA_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/acpi.h"

#define ACPI_NUMA_MAX_NODES 16
#define ACPI_NUMA_MAX_RANGES 64
// Proximity domains are 32-bit; real firmware numbers them from 0. A larger
// one is taken for corruption (Linux's MAX_PXM_DOMAINS is the same bound).
#define ACPI_NUMA_MAX_DOMAIN 255
#define ACPI_NUMA_LOCAL 10          // SLIT's distance from a node to itself
#define ACPI_NUMA_REMOTE 20         // the distance assumed without a SLIT

struct acpi_numa_range {
    uint64_t base, len;             // len > 0, base + len does not wrap
    uint32_t node;
    bool hotplug;                   // hot-pluggable: need not be present at boot
    bool nonvolatile;
};

// Nodes are the proximity domains in use, numbered densely in increasing
// domain order: QEMU's -numa nodeid=N is node N when every id is used.
struct acpi_numa {
    bool srat_found;                // a valid SRAT gave at least one node
    bool slit_found;                // a valid SLIT gave the distances
    uint32_t node_count;            // >= 1
    uint32_t domain[ACPI_NUMA_MAX_NODES];   // node -> proximity domain
    // The MADT's processors (acpi_info.cpus, same order) and their nodes.
    uint32_t cpu_count;
    uint32_t cpu_apic_id[ACPI_MAX_CPUS];
    uint8_t cpu_node[ACPI_MAX_CPUS];
    // Enabled memory affinity ranges, sorted by base, pairwise disjoint.
    uint32_t range_count;
    struct acpi_numa_range ranges[ACPI_NUMA_MAX_RANGES];
    // distance[a][b]: SLIT's value, else 10 on the diagonal and 20 elsewhere.
    uint8_t distance[ACPI_NUMA_MAX_NODES][ACPI_NUMA_MAX_NODES];
};

// Fills *out (zeroed first) from the SRAT and SLIT reachable from rsdp, for
// the processors the MADT listed in *madt. Never fails: without a usable
// SRAT, *out describes one node.
void acpi_numa_parse(struct acpi_numa *out, const struct acpi_info *madt,
                     const void *rsdp, size_t rsdp_len,
                     acpi_map_fn map, void *map_ctx, acpi_warn_fn warn, void *warn_ctx);

// The node of the processor with this APIC id, or -1 when the MADT did not
// list it.
int acpi_numa_cpu_node(const struct acpi_numa *n, uint32_t apic_id);

#endif
