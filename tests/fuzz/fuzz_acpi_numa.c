// SPDX-License-Identifier: MIT
// Fuzzes drivers/acpi_numa.c: the SRAT and SLIT as acpi_numa_parse reads
// them, for the processors the image's own MADT lists (acpi_parse first,
// as numa_init does). Input: tests/fuzz/acpi_image.h.
#include <stdint.h>
#include "drivers/acpi.h"
#include "drivers/acpi_numa.h"
#include "tests/fuzz/acpi_image.h"
#include "tests/fuzz/fuzz.h"

// What acpi_numa.h promises about *n, whatever the tables said.
static void check_numa(const struct acpi_numa *n, const struct acpi_info *madt)
{
    FUZZ_CHECK(n->node_count >= 1 && n->node_count <= ACPI_NUMA_MAX_NODES);
    for (uint32_t i = 1; i < n->node_count; i++)
        FUZZ_CHECK(n->domain[i - 1] < n->domain[i]);
    FUZZ_CHECK(n->cpu_count == madt->cpu_count);
    uint64_t unlisted = 0;          // one past the highest APIC id: not listed
    for (uint32_t i = 0; i < n->cpu_count; i++) {
        FUZZ_CHECK(n->cpu_apic_id[i] == madt->cpus[i].apic_id);
        FUZZ_CHECK(n->cpu_node[i] < n->node_count);
        // The lookup is linear: checked on a sample, so that a machine of
        // hundreds of processors costs this check no more than the parse.
        if (i < 16 || i % 16 == 0 || i + 16 >= n->cpu_count)
            FUZZ_CHECK(acpi_numa_cpu_node(n, n->cpu_apic_id[i]) == n->cpu_node[i]);
        if (n->cpu_apic_id[i] >= unlisted)
            unlisted = (uint64_t)n->cpu_apic_id[i] + 1;
    }
    // Counted in 64 bits: an x2APIC id may be 0xffffffff, and a 32-bit
    // "one past" wrapped to 0 and then followed the next, smaller id.
    if (unlisted <= UINT32_MAX)
        FUZZ_CHECK(acpi_numa_cpu_node(n, (uint32_t)unlisted) == -1);
    FUZZ_CHECK(n->range_count <= ACPI_NUMA_MAX_RANGES);
    FUZZ_CHECK(n->srat_found || (n->node_count == 1 && n->range_count == 0));
    for (uint32_t i = 0; i < n->range_count; i++) {
        const struct acpi_numa_range *r = &n->ranges[i];
        FUZZ_CHECK(r->len > 0 && r->base + r->len > r->base);
        FUZZ_CHECK(r->node < n->node_count);
        if (i > 0)
            FUZZ_CHECK(n->ranges[i - 1].base + n->ranges[i - 1].len <= r->base);
    }
    for (uint32_t a = 0; a < n->node_count; a++) {
        for (uint32_t b = 0; b < n->node_count; b++) {
            if (a == b)
                FUZZ_CHECK(n->distance[a][b] == ACPI_NUMA_LOCAL);
            else
                FUZZ_CHECK(n->distance[a][b] > ACPI_NUMA_LOCAL);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct acpi_info info;
    static struct acpi_numa numa;
    struct acpi_image a;
    size_t rsdp_len;
    const uint8_t *rsdp;

    if (!acpi_image_open(&a, data, size))
        return 0;
    // The BIOS scan is fuzz_acpi's; here it would only cost time (a 128 KiB
    // image per input), so the RSDP is always the image's head.
    a.flags &= ~ACPI_SCAN;
    rsdp = acpi_image_rsdp(&a, &rsdp_len);
    if (rsdp && acpi_parse(&info, rsdp, rsdp_len, acpi_image_map, &a, acpi_image_warn(&a), NULL) == 0) {
        acpi_numa_parse(&numa, &info, rsdp, rsdp_len, acpi_image_map, &a, acpi_image_warn(&a), NULL);
        check_numa(&numa, &info);
    }
    acpi_image_close(&a);
    return 0;
}
