// SPDX-License-Identifier: MIT
// The NUMA topology (numa.h): the SRAT's view of nodes, memory and
// distances, plus each core's node from its APIC id.
//
// Everything here is written on the boot core, by numa_init and then
// numa_init_cores, before any other core runs kernel code that reads it;
// afterwards it is read-only and read without locks. Before
// numa_init_cores every core reads as node 0 (core_node is zeroed), which
// is where the boot core's early allocations go.
#include <stdbool.h>
#include <stdint.h>
#include "kernel/numa.h"
#include "drivers/acpi.h"
#include "arch/arch.h"
#include "boot/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/page.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"

// Written once at boot (see above), read-only after.
static struct acpi_numa topo;
static uint32_t nnodes = 1;
static struct numa_range ranges[NUMA_MAX_RANGES];
static uint32_t nranges;
static uint64_t node_mem_bytes[NUMA_MAX_NODES];
static uint8_t by_distance[NUMA_MAX_NODES][NUMA_MAX_NODES];
static uint8_t core_node[MAX_CPUS];
static struct cpuset node_cores[NUMA_MAX_NODES];
static const char *why_one_node;        // NULL when the SRAT gave the nodes

// The ACPI tables as numa_init reaches them: the boot page tables
// identity-map the first 4 GiB (as drivers/acpi_boot.c's map says), and
// page 0 is never a table.
static const void *numa_acpi_map(void *ctx, uint64_t phys, size_t len)
{
    (void)ctx;
    if (phys < 0x1000 || phys >= (4ull << 30) || len > (4ull << 30) - phys)
        return 0;
    return (const void *)(uintptr_t)phys;
}

static void numa_acpi_warn(void *ctx, const char *msg)
{
    (void)ctx;
    kprintf("numa: %s\n", msg);
}

// Bytes of usable RAM inside [base, end).
static uint64_t usable_in(const struct boot_info *bi, uint64_t base, uint64_t end)
{
    uint64_t n = 0;
    uint64_t lo, hi;
    for (uint32_t i = 0; i < bi->mmap_count; i++)
        if (boot_mmap_clip(&bi->mmap[i], base, end, &lo, &hi))
            n += hi - lo;
    return n;
}

static void range_insert(uint64_t base, uint64_t end, uint32_t node, bool hotplug)
{
    ASSERT(nranges < NUMA_MAX_RANGES);
    uint32_t i = nranges++;
    while (i > 0 && ranges[i - 1].base > base) {
        ranges[i] = ranges[i - 1];
        i--;
    }
    ranges[i] = (struct numa_range){ .base = base, .end = end, .node = node, .hotplug = hotplug };
}

// The SRAT's ranges, then every stretch between them (and past the last)
// that holds usable RAM, given to node 0: memory the firmware placed in no
// node is still memory. At most range_count + 1 stretches.
static void ranges_build(const struct boot_info *bi)
{
    uint64_t top = boot_usable_end(bi), at = 0, orphan = 0;
    uint32_t n = topo.range_count;

    nranges = 0;
    for (uint32_t i = 0; i < n; i++)
        range_insert(topo.ranges[i].base, topo.ranges[i].base + topo.ranges[i].len,
                     topo.ranges[i].node, topo.ranges[i].hotplug);
    for (uint32_t i = 0; i <= n && at < top; i++) {
        uint64_t next = i < n ? topo.ranges[i].base : top;
        if (next > top)
            next = top;
        uint64_t bytes = at < next ? usable_in(bi, at, next) : 0;
        if (bytes) {
            range_insert(at, next, 0, false);
            orphan += bytes;
        }
        if (i < n)
            at = topo.ranges[i].base + topo.ranges[i].len;
    }
    if (orphan && topo.srat_found)
        kprintf("numa: %llu KiB of usable RAM lies in no SRAT range; giving it to node 0\n",
                (unsigned long long)(orphan >> 10));
}

static void order_build(void)
{
    for (uint32_t a = 0; a < nnodes; a++) {
        uint8_t *o = by_distance[a];
        for (uint32_t k = 0; k < nnodes; k++) {
            uint32_t i = k;
            // Insertion by (distance, node): the node itself comes first
            // since 10 is the smallest valid distance.
            while (i > 0 && (topo.distance[a][o[i - 1]] > topo.distance[a][k] ||
                             (topo.distance[a][o[i - 1]] == topo.distance[a][k] && o[i - 1] > k))) {
                o[i] = o[i - 1];
                i--;
            }
            o[i] = (uint8_t)k;
        }
    }
}

void numa_init(const struct boot_info *bi)
{
    size_t rsdp_len = 0;
    uint64_t rsdp_phys;
    const void *rsdp = acpi_rsdp(&rsdp_len, &rsdp_phys);

    if (!kparams.numa) {
        acpi_numa_parse(&topo, &acpi, 0, 0, numa_acpi_map, 0, 0, 0);
        why_one_node = "numa=off";
    } else {
        acpi_numa_parse(&topo, &acpi, rsdp, rsdp_len, numa_acpi_map, 0, numa_acpi_warn, 0);
        why_one_node = topo.srat_found ? 0 : "no SRAT";
    }
    nnodes = topo.node_count;
    ranges_build(bi);
    for (uint32_t i = 0; i < nranges; i++)
        node_mem_bytes[ranges[i].node] += usable_in(bi, ranges[i].base, ranges[i].end);
    order_build();
}

// ---- cores and the boot line ------------------------------------------------

// One line, e.g. "numa: 2 nodes: node 0 cpus 0-1 mem 256 MiB, node 1 cpus
// 2-3 mem 256 MiB; distances 10 20 / 20 10". Memory is the usable RAM the
// boot map gives each node, rounded to the nearest MiB.
static void numa_report(void)
{
    // 16 nodes: their cores and memory, and 256 distances of up to 4 bytes.
    static char line[2048], cpus[64];
    size_t n = (size_t)snprintf(line, sizeof line, "numa: %u node%s%s%s%s:", nnodes,
                                nnodes == 1 ? "" : "s", why_one_node ? " (" : "",
                                why_one_node ? why_one_node : "", why_one_node ? ")" : "");
    for (uint32_t k = 0; k < nnodes && n < sizeof line; k++) {
        cpuset_format(cpus, sizeof cpus, &node_cores[k]);
        n += (size_t)snprintf(line + n, sizeof line - n, "%s node %u cpus %s mem %llu MiB",
                              k ? "," : "", k, cpus,
                              (unsigned long long)((node_mem_bytes[k] + (1u << 19)) >> 20));
    }
    for (uint32_t a = 0; a < nnodes && n < sizeof line; a++)
        for (uint32_t b = 0; b < nnodes && n < sizeof line; b++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%u",
                                  b ? " " : a ? " / " : "; distances ", topo.distance[a][b]);
    kprintf("%s\n", line);
}

void numa_init_cores(void)
{
    uint32_t ncpu = arch_ncpu();
    memset(node_cores, 0, sizeof node_cores);
    for (uint32_t c = 0; c < ncpu; c++) {
        uint32_t apic_id = arch_cpu(c)->apic_id;
        int node = acpi_numa_cpu_node(&topo, apic_id);
        if (node < 0) {
            if (topo.srat_found)
                kprintf("numa: core %u (APIC id %u) is not in the MADT; placing it in node 0\n",
                        c, apic_id);
            node = 0;
        }
        core_node[c] = (uint8_t)node;
        cpuset_add(&node_cores[node], c);
    }
    numa_report();
}

// ---- queries --------------------------------------------------------------------

const struct numa_range *numa_ranges(uint32_t *n)
{
    *n = nranges;
    return ranges;
}

int numa_core_node(uint32_t core)
{
    return core < MAX_CPUS ? core_node[core] : 0;
}

const struct cpuset *numa_node_cores(int node)
{
    static const struct cpuset none;
    return node >= 0 && (uint32_t)node < nnodes ? &node_cores[node] : &none;
}

int numa_distance(int a, int b)
{
    ASSERT(a >= 0 && (uint32_t)a < nnodes && b >= 0 && (uint32_t)b < nnodes);
    return topo.distance[a][b];
}

const uint8_t *numa_nodes_by_distance(int node)
{
    ASSERT(node >= 0 && (uint32_t)node < nnodes);
    return by_distance[node];
}

uint64_t numa_node_mem(int node)
{
    return node >= 0 && (uint32_t)node < nnodes ? node_mem_bytes[node] : 0;
}

int numa_node_of_phys(uint64_t pa)
{
    uint32_t lo = 0, hi = nranges;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (pa < ranges[mid].base)
            hi = mid;
        else if (pa >= ranges[mid].end)
            lo = mid + 1;
        else
            return (int)ranges[mid].node;
    }
    return -1;
}

// ---- goro.h -------------------------------------------------------------------

int numa_nodes(void)
{
    return (int)nnodes;
}

int numa_node(void)
{
    return core_node[cpu_index()];
}

// Memory is identity-mapped, so a pointer into RAM is its physical
// address. Goroutine stacks live in their own virtual region, not
// translated here: -1 for them, as for anything outside RAM.
int numa_node_of(const void *p)
{
    return numa_node_of_phys((uint64_t)(uintptr_t)p);
}
