// SPDX-License-Identifier: MIT
// NUMA topology: nodes, their memory ranges, each core's node, and the
// distances between nodes. Built at boot from the ACPI SRAT and SLIT
// (drivers/acpi_numa.c) and, for cores, from the APIC id each core reports;
// one node when there is no SRAT or the command line says numa=off.
// Read-only once numa_init_cores has run; the queries take no lock.
//
// The public calls (numa_nodes, numa_node, numa_node_of, numa_core_node,
// numa_distance) are in goro.h.
#ifndef GORO_NUMA_H
#define GORO_NUMA_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/acpi_numa.h"
#include "kernel/cpuset.h"
#include "goro.h"

#define NUMA_MAX_NODES ACPI_NUMA_MAX_NODES
// The SRAT's ranges plus the usable RAM no range covers (given to node 0).
#define NUMA_MAX_RANGES (ACPI_NUMA_MAX_RANGES + 16)

struct numa_range {
    uint64_t base, end;             // [base, end), page-aligned outward
    uint32_t node;
    bool hotplug;
};

struct boot_info;
// Boot, in this order (kernel/main.c): numa_init after acpi_init and before
// page_init (the page allocator cuts memory by numa_ranges); numa_init_cores
// once every core is online (its APIC id known) and before the scheduler.
void numa_init(const struct boot_info *bi);
void numa_init_cores(void);

// The ranges, sorted by base and disjoint; *n of them.
const struct numa_range *numa_ranges(uint32_t *n);
// numa_core_node (goro.h): before numa_init_cores every core reads as node 0.
// The cores of a node (an empty set for a node without cores, or none).
const struct cpuset *numa_node_cores(int node);
// The numa_nodes() nodes ordered by distance from node: node itself first,
// ties broken by node number. For allocation fallback and steal order.
const uint8_t *numa_nodes_by_distance(int node);
// The bytes of RAM the boot memory map gives a node (before any allocation).
uint64_t numa_node_mem(int node);
// The node whose range holds physical address pa, or -1.
int numa_node_of_phys(uint64_t pa);

#endif
