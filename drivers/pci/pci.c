// SPDX-License-Identifier: MIT
// The machine's PCI bus (drivers/pci/pci.h): the access methods, the walk
// at boot, claims, BARs.
#include "drivers/pci/pci.h"
#include "drivers/acpi.h"
#include "drivers/acpi_mcfg.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "arch/arch.h"
#include "arch/x86.h"

// ---- ECAM -----------------------------------------------------------------------
//
// Segment 0 only (every PC we boot has just that). A bus's 1 MiB is mapped
// the first time it is touched; that happens during pci_init's walk, on
// the boot core, for every bus a function was found on, so later accesses
// (which only ever name found functions) find their bus mapped.

static struct acpi_mcfg_entry ecam;
static volatile uint8_t *ecam_bus[256];

static volatile uint32_t *ecam_at(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    if (!ecam_bus[bus]) {
        void *p = arch_map_mmio(ecam.base + ((uint64_t)bus << 20), 1u << 20);
        if (!p)
            return 0;
        ecam_bus[bus] = p;
    }
    return (volatile uint32_t *)(ecam_bus[bus] + ((uint32_t)dev << 15 | (uint32_t)fn << 12 | off));
}

static uint32_t ecam_read32(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    (void)ctx;
    volatile uint32_t *p = ecam_at(bus, dev, fn, off);
    return p ? *p : 0xFFFFFFFFu;
}

static void ecam_write32(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t v)
{
    (void)ctx;
    volatile uint32_t *p = ecam_at(bus, dev, fn, off);
    if (p)
        *p = v;
}

// ---- ports 0xCF8/0xCFC (configuration mechanism #1) ----------------------------

#define CFG_ADDR 0xCF8
#define CFG_DATA 0xCFC
#define CFG_ENABLE 0x80000000u

// The address write and the data access are one operation.
static struct spinlock cfg_lock = SPINLOCK_INIT("pci cfg", LOCK_RANK_PCI_CFG);

static uint32_t port_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    return CFG_ENABLE | (uint32_t)bus << 16 | (uint32_t)dev << 11 | (uint32_t)fn << 8 | (off & 0xFC);
}

static uint32_t port_read32(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    (void)ctx;
    spin_lock(&cfg_lock);
    outl(CFG_ADDR, port_addr(bus, dev, fn, off));
    uint32_t v = inl(CFG_DATA);
    spin_unlock(&cfg_lock);
    return v;
}

static void port_write32(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t v)
{
    (void)ctx;
    spin_lock(&cfg_lock);
    outl(CFG_ADDR, port_addr(bus, dev, fn, off));
    outl(CFG_DATA, v);
    spin_unlock(&cfg_lock);
}

// Mechanism #1 is there when the address register keeps what is written
// to it (a port nobody decodes reads all ones).
static bool ports_present(void)
{
    spin_lock(&cfg_lock);
    uint32_t old = inl(CFG_ADDR);
    outl(CFG_ADDR, CFG_ENABLE);
    bool ok = inl(CFG_ADDR) == CFG_ENABLE;
    outl(CFG_ADDR, old);
    spin_unlock(&cfg_lock);
    return ok;
}

// ---- the walk --------------------------------------------------------------------

static struct pci_bus_io io;
static char access_name[48] = "none";
static struct pci_func funcs[PCI_MAX_FUNCS];
static const char *claimed[PCI_MAX_FUNCS];
// written once by pci_init (release), read anywhere (acquire)
static uint32_t nfuncs;

static bool ecam_from_mcfg(void)
{
    const void *t = acpi_table("MCFG");
    struct acpi_mcfg mcfg;
    if (!t || !acpi_parse_mcfg(t, &mcfg, 0, 0))
        return false;
    for (uint32_t i = 0; i < mcfg.count; i++) {
        if (mcfg.e[i].segment == 0 && mcfg.e[i].bus_first == 0) {
            ecam = mcfg.e[i];
            return true;
        }
    }
    kprintf("pci: the MCFG has no ECAM for segment 0 from bus 0; using ports\n");
    return false;
}

uint32_t pci_init(void)
{
    if (ecam_from_mcfg()) {
        io = (struct pci_bus_io){ .read32 = ecam_read32, .write32 = ecam_write32,
                                  .bus_first = 0, .bus_last = ecam.bus_last, .cfg_size = 4096 };
        snprintf(access_name, sizeof access_name, "ECAM at 0x%lx, buses 0-%u", ecam.base,
                 ecam.bus_last);
    } else if (ports_present()) {
        io = (struct pci_bus_io){ .read32 = port_read32, .write32 = port_write32,
                                  .bus_first = 0, .bus_last = 255, .cfg_size = 256 };
        snprintf(access_name, sizeof access_name, "ports 0xcf8/0xcfc");
    } else {
        kprintf("pci: no MCFG and no configuration ports: no PCI devices\n");
        return 0;
    }
    uint32_t n = pci_scan(&io, funcs, PCI_MAX_FUNCS);
    if (n > PCI_MAX_FUNCS) {
        kprintf("pci: %u functions, only the first %u kept\n", n, PCI_MAX_FUNCS);
        n = PCI_MAX_FUNCS;
    }
    uint32_t buses = 0, bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        buses += i == 0 || funcs[i].bus != funcs[i - 1].bus;
        if (funcs[i].error != PCI_OK) {
            bad++;
            kprintf("pci: %02x:%02x.%x %04x:%04x: %s (at 0x%x); not used\n", funcs[i].bus,
                    funcs[i].dev, funcs[i].fn, funcs[i].vendor, funcs[i].device,
                    pci_error_name(funcs[i].error), funcs[i].error_at);
        }
    }
    __atomic_store_n(&nfuncs, n, __ATOMIC_RELEASE);     // release: funcs[] before; pairs with pci_count
    kprintf("pci: %s: %u functions on %u buses%s\n", access_name, n, buses,
            bad ? ", some in error (above)" : "");
    return n;
}

uint32_t pci_count(void)
{
    return __atomic_load_n(&nfuncs, __ATOMIC_ACQUIRE);  // acquire: pairs with pci_init's release
}

struct pci_func *pci_get(uint32_t i)
{
    return i < pci_count() ? &funcs[i] : 0;
}

const char *pci_access_name(void)
{
    return access_name;
}

const char *pci_claimed_by(const struct pci_func *f)
{
    return claimed[f - funcs];
}

// ---- configuration space of a found function -------------------------------------

const struct pci_bus_io *pci_io(void)
{
    return &io;
}

uint32_t pci_cfg_read32(const struct pci_func *f, uint16_t off)
{
    return pci_read32(&io, f, off);
}

uint16_t pci_cfg_read16(const struct pci_func *f, uint16_t off)
{
    return pci_read16(&io, f, off);
}

uint8_t pci_cfg_read8(const struct pci_func *f, uint16_t off)
{
    return pci_read8(&io, f, off);
}

void pci_cfg_write16(const struct pci_func *f, uint16_t off, uint16_t v)
{
    pci_write16(&io, f, off, v);
}

void pci_cfg_write32(const struct pci_func *f, uint16_t off, uint32_t v)
{
    pci_write32(&io, f, off, v);
}

// ---- drivers' calls -------------------------------------------------------------

bool pci_claim(struct pci_func *f, const char *driver)
{
    uint32_t i = (uint32_t)(f - funcs);
    if (f->error != PCI_OK) {
        kprintf("%s: %02x:%02x.%x: %s; not used\n", driver, f->bus, f->dev, f->fn,
                pci_error_name(f->error));
        return false;
    }
    if (claimed[i])
        return false;
    claimed[i] = driver;
    return true;
}

void pci_release(struct pci_func *f)
{
    claimed[f - funcs] = 0;
}

void pci_enable(const struct pci_func *f)
{
    uint16_t cmd = pci_cfg_read16(f, PCI_COMMAND);
    pci_cfg_write16(f, PCI_COMMAND, cmd | PCI_CMD_IO | PCI_CMD_MEM | PCI_CMD_MASTER);
}

volatile void *pci_map_bar(const struct pci_func *f, int bar, uint64_t off, uint64_t len)
{
    ASSERT(bar >= 0 && bar < PCI_NBARS);
    const struct pci_bar *b = &f->bar[bar];
    const char *why = 0;
    if (b->kind == PCI_BAR_NONE)
        why = "absent";
    else if (b->kind == PCI_BAR_IO)
        why = "an I/O BAR";
    else if (!b->addr)
        why = "not assigned by the firmware";
    else if (off > b->size || len > b->size - off)
        why = "shorter than the range wanted";
    volatile void *p = why ? 0 : arch_map_mmio(b->addr + off, len);
    if (!why && !p)
        why = "beyond the MMIO map";
    if (why)
        kprintf("pci: %02x:%02x.%x BAR %d (+0x%lx, 0x%lx bytes): %s\n", f->bus, f->dev, f->fn, bar,
                off, len, why);
    return p;
}

uint16_t pci_io_bar(const struct pci_func *f, int bar)
{
    ASSERT(bar >= 0 && bar < PCI_NBARS);
    const struct pci_bar *b = &f->bar[bar];
    if (b->kind != PCI_BAR_IO || !b->addr || b->addr > 0xFFFF) {
        kprintf("pci: %02x:%02x.%x BAR %d is not an assigned I/O BAR\n", f->bus, f->dev, f->fn, bar);
        return 0;
    }
    return (uint16_t)b->addr;
}
