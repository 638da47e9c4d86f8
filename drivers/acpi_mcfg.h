// SPDX-License-Identifier: MIT
// ACPI MCFG: where PCI Express's memory-mapped configuration space (ECAM)
// lies, per segment group and bus range (PCI Firmware Specification 3.0,
// 4.1.2). Pure like drivers/acpi.c: host-tested on QEMU's tables.
#ifndef GORO_ACPI_MCFG_H
#define GORO_ACPI_MCFG_H

#include <stdint.h>
#include "drivers/acpi.h"

#define ACPI_MCFG_MAX 8

// Configuration space of bus b, device d, function f of the entry's
// segment is at base + (b << 20 | d << 15 | f << 12), for bus_first <= b
// <= bus_last: base is where bus 0 would be, whatever bus_first is.
struct acpi_mcfg_entry {
    uint64_t base;
    uint16_t segment;
    uint8_t bus_first, bus_last;
};

struct acpi_mcfg {
    uint32_t count;
    struct acpi_mcfg_entry e[ACPI_MCFG_MAX];
};

// table: an MCFG as acpi_find_table returns it (signature, length and
// checksum already checked). Fills *out (zeroed first) with its usable
// entries; an entry with its bus range reversed or a base that is zero or
// not 1 MiB-aligned is skipped with a warning naming it, as is any past
// ACPI_MCFG_MAX and a table whose length leaves part of an entry.
// Returns the count.
uint32_t acpi_parse_mcfg(const void *table, struct acpi_mcfg *out, acpi_warn_fn warn, void *warn_ctx);

#endif
