// SPDX-License-Identifier: MIT
// The IOAPIC(s) the MADT lists: where device interrupt lines (GSIs) become
// vectors on a core. ISA IRQs reach GSIs through the MADT's interrupt
// source overrides (IRQ n is GSI n, edge/active-high, unless overridden).
#ifndef GORO_IOAPIC_H
#define GORO_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

// Finds every usable IOAPIC in acpi.ioapics and masks all of its pins.
// Idempotent and safe from any core; the first call logs what it found.
// False when there is none: nothing can be routed, callers fail cleanly.
bool ioapic_init(void);

// ISA IRQ irq (0..15) -> its GSI, through the overrides.
uint32_t ioapic_isa_gsi(uint8_t irq);

// Routes ISA IRQ irq to vector on the core whose local APIC id is dest
// (physical destination, fixed delivery), with the override's polarity
// and trigger mode, and unmasks it. Returns 0, or -1 when no IOAPIC owns
// the IRQ's GSI or dest does not fit the 8-bit destination field.
int ioapic_route_isa(uint8_t irq, uint8_t vector, uint32_t dest_apic_id);

// Routes a PCI function's interrupt line (its config space's line
// register, as the firmware set it) to vector on dest_apic_id,
// level-triggered, and unmasks it. Returns 0, or -1 as ioapic_route_isa.
int ioapic_route_pci(uint8_t line, uint8_t vector, uint32_t dest_apic_id);

// Masks gsi's pin (no-op when no IOAPIC owns it).
void ioapic_mask(uint32_t gsi);

#endif
