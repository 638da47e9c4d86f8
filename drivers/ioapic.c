// SPDX-License-Identifier: MIT
// The IOAPIC: an indirect register file (select a register at IOREGSEL,
// then read or write it through IOWIN), one 64-bit redirection entry per
// input pin. Its MMIO page lies in the 3-4 GiB hole, which the kernel's
// direct map covers uncached, so it is reached through volatile pointers
// at its physical address.
#include "drivers/ioapic.h"
#include "drivers/acpi.h"
#include "lib/printf.h"
#include "arch/arch.h"

#define IOREGSEL 0x00
#define IOWIN    0x10
#define REG_ID   0x00
#define REG_VER  0x01
#define REG_REDTBL(pin) (0x10 + 2 * (pin))

// Redirection entry, low dword (fixed delivery, physical destination: 0).
#define RTE_ACTIVE_LOW (1u << 13)
#define RTE_LEVEL      (1u << 15)
#define RTE_MASKED     (1u << 16)
// MADT override flags (ACPI 5.2.12.5): polarity bits 0-1, trigger bits 2-3;
// 0 means "conforms to the bus", which for ISA is active-high, edge.
#define MPS_POLARITY(f) ((f) & 3)
#define MPS_TRIGGER(f)  (((f) >> 2) & 3)
#define MPS_ACTIVE_LOW 3
#define MPS_LEVEL      3

#define DIRECT_MAP_MMIO_LO 0xC0000000ull    // arch/paging.c maps 3-4 GiB uncached
#define DIRECT_MAP_MMIO_HI 0x100000000ull

struct ioapic {
    volatile uint32_t *base;
    uint32_t gsi_base;
    uint32_t npins;
    uint8_t id;
};

// ioapic_lock held: the IOREGSEL/IOWIN pairs of every IOAPIC, and init.
static struct spinlock ioapic_lock = SPINLOCK_INIT("ioapic", LOCK_RANK_IOAPIC);
static struct ioapic ioapics[ACPI_MAX_IOAPICS];
static uint32_t nioapics;
static bool inited;
// atomic: written once (release) at the end of the first ioapic_init
static bool ready;

static uint32_t reg_read(const struct ioapic *io, uint32_t reg)
{
    io->base[IOREGSEL / 4] = reg;
    return io->base[IOWIN / 4];
}

static void reg_write(const struct ioapic *io, uint32_t reg, uint32_t v)
{
    io->base[IOREGSEL / 4] = reg;
    io->base[IOWIN / 4] = v;
}

static struct ioapic *owner(uint32_t gsi, uint32_t *pin)
{
    for (uint32_t i = 0; i < nioapics; i++) {
        struct ioapic *io = &ioapics[i];
        if (gsi >= io->gsi_base && gsi - io->gsi_base < io->npins) {
            *pin = gsi - io->gsi_base;
            return io;
        }
    }
    return 0;
}

// ioapic_lock held.
static void probe(void)
{
    for (uint32_t i = 0; i < acpi.ioapic_count; i++) {
        const struct acpi_ioapic *a = &acpi.ioapics[i];
        if (a->addr < DIRECT_MAP_MMIO_LO || (uint64_t)a->addr + 0x20 > DIRECT_MAP_MMIO_HI) {
            kprintf("ioapic: id %u at 0x%x is outside the uncached MMIO map; ignored\n", a->id, a->addr);
            continue;
        }
        struct ioapic *io = &ioapics[nioapics];
        io->base = (volatile uint32_t *)(uintptr_t)a->addr;
        io->gsi_base = a->gsi_base;
        io->id = a->id;
        uint32_t ver = reg_read(io, REG_VER);
        if (ver == 0xFFFFFFFFu) {
            kprintf("ioapic: id %u at 0x%x does not answer; ignored\n", a->id, a->addr);
            continue;
        }
        io->npins = ((ver >> 16) & 0xFF) + 1;
        // Pins come up masked on reset, but a loader may have used some.
        for (uint32_t pin = 0; pin < io->npins; pin++) {
            reg_write(io, REG_REDTBL(pin) + 1, 0);
            reg_write(io, REG_REDTBL(pin), RTE_MASKED);
        }
        kprintf("ioapic: id %u at 0x%x, GSIs %u-%u, all masked\n", io->id, a->addr, io->gsi_base,
                io->gsi_base + io->npins - 1);
        nioapics++;
    }
    if (!nioapics)
        kprintf("ioapic: none usable in the MADT (%u listed): device interrupts are off\n",
                acpi.ioapic_count);
}

bool ioapic_init(void)
{
    if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE))     // acquire: pairs with the release below
        return nioapics != 0;
    spin_lock(&ioapic_lock);
    if (!inited) {
        probe();
        inited = true;
        __atomic_store_n(&ready, true, __ATOMIC_RELEASE);   // release: ioapics[] before ready
    }
    spin_unlock(&ioapic_lock);
    return nioapics != 0;
}

static const struct acpi_override *isa_override(uint8_t irq)
{
    for (uint32_t i = 0; i < acpi.override_count; i++)
        if (acpi.overrides[i].source_irq == irq)
            return &acpi.overrides[i];
    return 0;
}

uint32_t ioapic_isa_gsi(uint8_t irq)
{
    const struct acpi_override *o = isa_override(irq);
    return o ? o->gsi : irq;
}

// Routes gsi to vector on dest_apic_id with the given trigger and
// polarity, and unmasks it; what names the source in the log line.
static int route(uint32_t gsi, uint8_t vector, uint32_t dest_apic_id, bool level, bool active_low,
                 const char *what, uint32_t what_n)
{
    if (dest_apic_id > 0xFF) {
        // Physical destination mode has 8 bits; more needs interrupt remapping.
        kprintf("ioapic: %s %u: APIC id %u does not fit a redirection entry\n", what, what_n, dest_apic_id);
        return -1;
    }
    uint32_t lo = vector, pin;
    if (active_low)
        lo |= RTE_ACTIVE_LOW;
    if (level)
        lo |= RTE_LEVEL;
    spin_lock(&ioapic_lock);
    struct ioapic *io = owner(gsi, &pin);
    if (io) {
        // Destination first: the pin is still masked while it changes.
        reg_write(io, REG_REDTBL(pin) + 1, dest_apic_id << 24);
        reg_write(io, REG_REDTBL(pin), lo);
    }
    spin_unlock(&ioapic_lock);
    if (!io) {
        kprintf("ioapic: %s %u (GSI %u) belongs to no IOAPIC\n", what, what_n, gsi);
        return -1;
    }
    kprintf("ioapic: %s %u -> GSI %u -> vector 0x%x on APIC id %u (%s, %s)\n", what, what_n, gsi, vector,
            dest_apic_id, level ? "level" : "edge", active_low ? "active-low" : "active-high");
    return 0;
}

int ioapic_route_isa(uint8_t irq, uint8_t vector, uint32_t dest_apic_id)
{
    if (!ioapic_init() || irq >= 16)
        return -1;
    const struct acpi_override *o = isa_override(irq);
    uint16_t flags = o ? o->flags : 0;
    return route(o ? o->gsi : irq, vector, dest_apic_id, MPS_TRIGGER(flags) == MPS_LEVEL,
                 MPS_POLARITY(flags) == MPS_ACTIVE_LOW, "IRQ", irq);
}

// A PCI line is level-triggered; below 16 it is an ISA IRQ number (what
// the firmware wrote in the function's interrupt line register), reaching
// its GSI through the overrides, which also give its polarity; otherwise
// it is the GSI itself, active-low as PCI's lines are.
int ioapic_route_pci(uint8_t line, uint8_t vector, uint32_t dest_apic_id)
{
    if (!ioapic_init())
        return -1;
    const struct acpi_override *o = line < 16 ? isa_override(line) : 0;
    // An override's polarity 0, "conforms to the bus", is ISA's active-high.
    bool active_low = o ? MPS_POLARITY(o->flags) == MPS_ACTIVE_LOW : true;
    return route(o ? o->gsi : line, vector, dest_apic_id, true, active_low, "PCI line", line);
}

void ioapic_mask(uint32_t gsi)
{
    if (!ioapic_init())
        return;
    uint32_t pin;
    spin_lock(&ioapic_lock);
    struct ioapic *io = owner(gsi, &pin);
    if (io)
        reg_write(io, REG_REDTBL(pin), reg_read(io, REG_REDTBL(pin)) | RTE_MASKED);
    spin_unlock(&ioapic_lock);
}
