// SPDX-License-Identifier: MIT
// The machine's PCI bus: found once at boot (pci_init), then handed to
// drivers. Configuration space through ECAM where the ACPI MCFG gives one
// (q35, and most machines since 2008), else through ports 0xCF8/0xCFC
// (QEMU's i440fx). The parsing is drivers/pci/pci_cfg.c's, host-tested;
// this file adds the access methods, BAR mapping and device interrupts.
//
// Interrupts, best first: MSI-X (a vector per queue, each aimed at its own
// core), MSI (one vector), the INTx line through the IOAPIC (one vector,
// level-triggered, possibly shared with other devices). A driver asks for
// what it wants and takes what the function has, or what kparams'
// nic_irq= limits it to (the tests force each mode).
#ifndef GORO_PCI_H
#define GORO_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/pci/pci_cfg.h"

// Boot, once, after ACPI and the direct map, before any driver. Logs one
// line (the access method and what it found) and one per function in
// error. Returns the functions found.
uint32_t pci_init(void);

// After pci_init, any context: the functions found, in bus-walk order.
uint32_t pci_count(void);
struct pci_func *pci_get(uint32_t i);
// How configuration space is reached ("ECAM at 0xb0000000", "ports 0xcf8").
const char *pci_access_name(void);
// The name of the driver that claimed f, NULL when none.
const char *pci_claimed_by(const struct pci_func *f);

// The machine's access method, for the pure parsers (drivers/pci/pci_cfg.h).
const struct pci_bus_io *pci_io(void);
// Configuration space of f, through the machine's access method.
uint32_t pci_cfg_read32(const struct pci_func *f, uint16_t off);
uint16_t pci_cfg_read16(const struct pci_func *f, uint16_t off);
uint8_t pci_cfg_read8(const struct pci_func *f, uint16_t off);
void pci_cfg_write16(const struct pci_func *f, uint16_t off, uint16_t v);
void pci_cfg_write32(const struct pci_func *f, uint16_t off, uint32_t v);

// A driver takes f for itself: false when f is in error (f->error names
// why, and this logs it) or another driver has it. Boot, one core.
bool pci_claim(struct pci_func *f, const char *driver);
// The driver gives f up (its set-up failed, after a log line saying why).
void pci_release(struct pci_func *f);
// Memory and I/O decoding and bus mastering on (the command register).
void pci_enable(const struct pci_func *f);

// Maps bytes [off, off + len) of memory BAR bar, uncached; NULL (after a
// log line naming the problem) when the BAR is absent, I/O, not assigned
// by the firmware, or shorter than off + len.
volatile void *pci_map_bar(const struct pci_func *f, int bar, uint64_t off, uint64_t len);
// The first port of I/O BAR bar, 0 (after a log line) when it is not one.
uint16_t pci_io_bar(const struct pci_func *f, int bar);

// ---- interrupts (drivers/pci/pci_irq.c) -------------------------------------

enum pci_irq_mode { PCI_IRQ_NONE, PCI_IRQ_INTX, PCI_IRQ_MSI, PCI_IRQ_MSIX };
const char *pci_irq_mode_name(enum pci_irq_mode m);
// The best mode the command line allows (nic_irq=msix|msi|intx; default
// msix): drivers take the best of this and what the function has.
enum pci_irq_mode pci_irq_mode_allowed(void);
void pci_irq_mode_limit(enum pci_irq_mode m);

// A device interrupt's handler: interrupt context, interrupts off, on the
// core the interrupt was aimed at; arg as given. For a shared INTx line it
// runs on every interrupt of the line and must check its own device.
typedef void (*pci_irq_fn)(void *arg);

// MSI-X. pci_msix_begin maps f's vector table, masks every entry and
// turns MSI-X on with the function masked (INTx off); returns the table's
// entries, or -1 (logged). pci_msix_route aims entry at core cpu (through
// arch_irq_cpu: the core it lands on is returned in *cpu_out) with a new
// vector and handler, and unmasks the entry; returns the vector, or -1
// when none is left. pci_msix_end unmasks the function: interrupts flow.
int pci_msix_begin(const struct pci_func *f);
int pci_msix_route(const struct pci_func *f, uint16_t entry, uint32_t cpu, pci_irq_fn fn, void *arg,
                   uint32_t *cpu_out);
void pci_msix_end(const struct pci_func *f);
// MSI, one message, aimed at cpu (as above); INTx turned off. Returns the
// vector, or -1 (logged).
int pci_msi_route(const struct pci_func *f, uint32_t cpu, pci_irq_fn fn, void *arg, uint32_t *cpu_out);
// INTx: f's pin, through the line the firmware wrote, the MADT's
// overrides and the IOAPIC, level-triggered, to cpu; handlers of every
// function on the line run on each interrupt. Returns the vector, or -1
// (logged: no pin, no line, no IOAPIC).
int pci_intx_route(const struct pci_func *f, uint32_t cpu, pci_irq_fn fn, void *arg, uint32_t *cpu_out);

#endif
