// SPDX-License-Identifier: MIT
// PCI configuration space, parsed: the bus walk, each function's header,
// its BARs (sized), its capability list, MSI and MSI-X.
//
// Pure C: configuration space is reached only through struct pci_bus_io,
// so the host tests run the same code on dumps taken from QEMU
// (tests/data/pci/) and on corrupted copies, and libFuzzer runs it on
// anything (tests/fuzz/fuzz_pci.c). drivers/pci/pci.c gives it the
// machine's ECAM or ports 0xCF8/0xCFC.
//
// Whatever a device answers, the walk ends: a bus is visited once, a
// capability list is followed for at most PCI_MAX_CAPS entries and never
// to an offset seen before, and every offset read stays inside the
// function's configuration space. A function whose header cannot be
// trusted (a BAR that does not size, a capability loop, an MSI-X table
// past its BAR...) keeps its identity and gets a named error: it is
// listed, and no driver takes it.
#ifndef GORO_PCI_CFG_H
#define GORO_PCI_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCI_MAX_FUNCS 128       // functions kept by one walk
#define PCI_MAX_CAPS 48         // (256 - 64) / 4: more is a loop
#define PCI_NBARS 6

// Standard header offsets.
enum {
    PCI_VENDOR = 0x00, PCI_DEVICE = 0x02, PCI_COMMAND = 0x04, PCI_STATUS = 0x06,
    PCI_REVISION = 0x08, PCI_PROGIF = 0x09, PCI_SUBCLASS = 0x0A, PCI_CLASS = 0x0B,
    PCI_HEADER_TYPE = 0x0E, PCI_BAR0 = 0x10, PCI_SUBSYS_VENDOR = 0x2C, PCI_SUBSYS_ID = 0x2E,
    PCI_CAP_PTR = 0x34, PCI_IRQ_LINE = 0x3C, PCI_IRQ_PIN = 0x3D,
    // type 1 (bridge) header
    PCI_PRIMARY_BUS = 0x18, PCI_SECONDARY_BUS = 0x19, PCI_SUBORDINATE_BUS = 0x1A,
};
enum {
    PCI_CMD_IO = 1u << 0, PCI_CMD_MEM = 1u << 1, PCI_CMD_MASTER = 1u << 2,
    PCI_CMD_INTX_OFF = 1u << 10,
    PCI_STATUS_CAPS = 1u << 4,
};
// Capability ids.
enum {
    PCI_CAP_PM = 0x01, PCI_CAP_MSI = 0x05, PCI_CAP_VENDOR = 0x09, PCI_CAP_PCIE = 0x10,
    PCI_CAP_MSIX = 0x11,
};

// The named reasons a function is not used.
enum pci_error {
    PCI_OK = 0,
    PCI_ERR_HEADER_TYPE,    // a header layout other than 0 (device) or 1 (bridge)
    PCI_ERR_BAR_SIZE,       // a BAR that does not size (its read-back is no size mask)
    PCI_ERR_BAR_64_LAST,    // a 64-bit BAR in the last slot: no room for its upper half
    PCI_ERR_CAP_PTR,        // a capability pointer outside 0x40-0xFC or unaligned
    PCI_ERR_CAP_LOOP,       // a capability list that comes back on itself, or too long
    PCI_ERR_MSIX_BAR,       // MSI-X's table or PBA in a BAR that is absent or I/O
    PCI_ERR_MSIX_TABLE,     // MSI-X's table or PBA past the end of its BAR
    PCI_ERR_MSI_SHORT,      // an MSI capability that does not fit config space
    PCI_ERR_COUNT
};
const char *pci_error_name(enum pci_error e);

enum pci_bar_kind { PCI_BAR_NONE, PCI_BAR_IO, PCI_BAR_MEM32, PCI_BAR_MEM64 };

struct pci_bar {
    enum pci_bar_kind kind;
    bool prefetchable;
    uint64_t addr;              // as the firmware assigned it; 0: not assigned
    uint64_t size;              // from sizing
};

struct pci_cap {
    uint8_t id;
    uint8_t off;
};

struct pci_msix {
    uint8_t cap;                // capability offset, 0: none
    uint16_t nvec;              // table entries
    uint8_t table_bar, pba_bar;
    uint32_t table_off, pba_off;
};

struct pci_msi {
    uint8_t cap;                // capability offset, 0: none
    bool addr64;                // the address has an upper half
    bool maskable;              // per-vector mask bits
    uint8_t max_log2;           // up to 2^max_log2 messages
};

struct pci_func {
    uint16_t segment;
    uint8_t bus, dev, fn;
    uint16_t vendor, device, subsys_vendor, subsys_id;
    uint8_t class, subclass, progif, revision;
    uint8_t header_type;        // 0 or 1, without the multi-function bit
    bool multifunction;
    bool pcie;                  // has a PCI Express capability
    uint16_t command;           // as the firmware left it
    uint8_t irq_line, irq_pin;  // pin 0: no INTx; line as the firmware wrote it
    uint8_t secondary_bus, subordinate_bus;     // bridges
    struct pci_bar bar[PCI_NBARS];              // a bridge has 2
    uint8_t ncaps;
    struct pci_cap caps[PCI_MAX_CAPS];
    struct pci_msix msix;
    struct pci_msi msi;
    enum pci_error error;       // PCI_OK, or why the function is not used
    uint8_t error_at;           // the BAR index or capability offset at fault
};

// How configuration space is reached. read32/write32 take a 4-aligned
// offset below cfg_size; a function that does not exist reads all ones.
// write32 is used only to size BARs, with the function's decoding off and
// everything put back after.
struct pci_bus_io {
    uint32_t (*read32)(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off);
    void (*write32)(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t v);
    void *ctx;
    uint16_t segment;
    uint8_t bus_first, bus_last;        // the buses this access method reaches
    uint16_t cfg_size;                  // 256 (ports), 4096 (ECAM)
};

// Reads one function (which must exist: its vendor is not 0xFFFF) into f:
// header, BARs sized, capabilities, MSI, MSI-X, and f->error.
void pci_parse_func(const struct pci_bus_io *io, uint8_t bus, uint8_t dev, uint8_t fn,
                    struct pci_func *f);

// The walk: bus io->bus_first, then every bus behind a bridge found on a
// bus already walked (each bus once, within the io's range). Fills at most
// max functions in the order found; returns how many exist (more than max
// when some did not fit).
uint32_t pci_scan(const struct pci_bus_io *io, struct pci_func *funcs, uint32_t max);

// Narrow reads at any offset, through read32.
uint8_t pci_read8(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off);
uint16_t pci_read16(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off);
uint32_t pci_read32(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off);
void pci_write16(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off, uint16_t v);
void pci_write32(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off, uint32_t v);

// The first capability with this id at or after index *from (0 to start;
// set to the index after the one found): its offset, 0 when none is left.
uint8_t pci_find_cap(const struct pci_func *f, uint8_t id, uint32_t *from);

// "network", "display", "bridge"...: the class code's name.
const char *pci_class_name(uint8_t class);

#endif
