// SPDX-License-Identifier: MIT
// PCI device interrupts (drivers/pci/pci.h): MSI-X, MSI and INTx, each
// ending in a vector from arch_irq_alloc_vector whose handler calls the
// driver's function with its argument.
//
// Set-up happens at boot (driver probes), on one core, before the device
// may interrupt: every table below is written before the entry or pin it
// serves is unmasked, and read only by the interrupt path after.
#include "drivers/pci/pci.h"
#include "drivers/ioapic.h"
#include "lib/printf.h"
#include "arch/arch.h"

// MSI-X capability: control at +2 (bit 15 enable, bit 14 function mask);
// a table entry is address low, address high, data, vector control (bit
// 0: masked).
#define MSIX_CTL_ENABLE (1u << 15)
#define MSIX_CTL_FMASK (1u << 14)
#define MSIX_ENTRY_MASKED 1u
// MSI capability: control at +2 (bit 0 enable, bits 6:4 messages enabled
// as a power of two), then the address and data; the mask bits follow the
// data (+12 or +16) when per-vector masking is offered.
#define MSI_CTL_ENABLE 1u
#define MSI_CTL_MME (7u << 4)

static const char *const mode_names[] = { "none", "intx", "msi", "msi-x" };

const char *pci_irq_mode_name(enum pci_irq_mode m)
{
    return (unsigned)m <= PCI_IRQ_MSIX ? mode_names[m] : "?";
}

static enum pci_irq_mode allowed = PCI_IRQ_MSIX;

enum pci_irq_mode pci_irq_mode_allowed(void)
{
    return allowed;
}

void pci_irq_mode_limit(enum pci_irq_mode m)
{
    allowed = m;
}

// ---- vectors -------------------------------------------------------------------

struct handler {
    pci_irq_fn fn;
    void *arg;
};
static struct handler by_vector[256];

static void dispatch(uint8_t vector)
{
    struct handler *h = &by_vector[vector];
    h->fn(h->arg);
}

static int new_vector(pci_irq_fn fn, void *arg, const struct pci_func *f)
{
    int v = arch_irq_alloc_vector();
    if (v < 0) {
        kprintf("pci: %02x:%02x.%x: no interrupt vector left\n", f->bus, f->dev, f->fn);
        return -1;
    }
    by_vector[v] = (struct handler){ fn, arg };
    arch_set_irq_handler((uint8_t)v, dispatch);
    return v;
}

// A message-signalled interrupt for fn: a new vector, the core it goes to
// (cpu, or the core arch_irq_cpu puts in its place) and the address and
// data that raise it there. Returns the vector, or -1 with none left.
struct msi_route {
    uint64_t addr;
    uint32_t data;
    uint32_t cpu;
};

static int msi_vector(const struct pci_func *f, uint32_t cpu, pci_irq_fn fn, void *arg,
                      struct msi_route *r)
{
    int v = new_vector(fn, arg, f);
    if (v < 0)
        return -1;
    r->cpu = arch_irq_cpu(cpu);
    arch_msi_message(r->cpu, (uint8_t)v, &r->addr, &r->data);
    return v;
}

// ---- MSI-X -------------------------------------------------------------------------

static volatile uint32_t *msix_table[PCI_MAX_FUNCS];

static uint32_t index_of(const struct pci_func *f)
{
    return (uint32_t)(f - pci_get(0));
}

int pci_msix_begin(const struct pci_func *f)
{
    const struct pci_msix *x = &f->msix;
    if (!x->cap)
        return -1;
    volatile uint32_t *t = pci_map_bar(f, x->table_bar, x->table_off, 16ull * x->nvec);
    if (!t)
        return -1;
    uint16_t ctl = pci_cfg_read16(f, x->cap + 2);
    pci_cfg_write16(f, x->cap + 2, ctl | MSIX_CTL_FMASK);
    for (uint32_t i = 0; i < x->nvec; i++)
        t[i * 4 + 3] = MSIX_ENTRY_MASKED;
    pci_cfg_write16(f, x->cap + 2, ctl | MSIX_CTL_FMASK | MSIX_CTL_ENABLE);
    pci_cfg_write16(f, PCI_COMMAND, pci_cfg_read16(f, PCI_COMMAND) | PCI_CMD_INTX_OFF);
    msix_table[index_of(f)] = t;
    return x->nvec;
}

int pci_msix_route(const struct pci_func *f, uint16_t entry, uint32_t cpu, pci_irq_fn fn, void *arg,
                   uint32_t *cpu_out)
{
    volatile uint32_t *t = msix_table[index_of(f)];
    if (!t || entry >= f->msix.nvec)
        return -1;
    struct msi_route r;
    int v = msi_vector(f, cpu, fn, arg, &r);
    if (v < 0)
        return -1;
    volatile uint32_t *e = t + entry * 4;
    e[0] = (uint32_t)r.addr;
    e[1] = (uint32_t)(r.addr >> 32);
    e[2] = r.data;
    e[3] = 0;                   // unmasked
    if (cpu_out)
        *cpu_out = r.cpu;
    return v;
}

void pci_msix_end(const struct pci_func *f)
{
    uint16_t ctl = pci_cfg_read16(f, f->msix.cap + 2);
    pci_cfg_write16(f, f->msix.cap + 2, (ctl | MSIX_CTL_ENABLE) & ~MSIX_CTL_FMASK);
}

// ---- MSI ---------------------------------------------------------------------------

int pci_msi_route(const struct pci_func *f, uint32_t cpu, pci_irq_fn fn, void *arg,
                  uint32_t *cpu_out)
{
    const struct pci_msi *m = &f->msi;
    if (!m->cap)
        return -1;
    struct msi_route r;
    int v = msi_vector(f, cpu, fn, arg, &r);
    if (v < 0)
        return -1;
    uint16_t ctl = pci_cfg_read16(f, m->cap + 2) & ~(MSI_CTL_ENABLE | MSI_CTL_MME);
    pci_cfg_write16(f, m->cap + 2, ctl);
    pci_cfg_write32(f, m->cap + 4, (uint32_t)r.addr);
    uint16_t data_at = m->addr64 ? 12 : 8;
    if (m->addr64)
        pci_cfg_write32(f, m->cap + 8, (uint32_t)(r.addr >> 32));
    pci_cfg_write16(f, m->cap + data_at, (uint16_t)r.data);
    if (m->maskable)
        pci_cfg_write32(f, m->cap + data_at + 4, 0);   // every vector unmasked
    pci_cfg_write16(f, PCI_COMMAND, pci_cfg_read16(f, PCI_COMMAND) | PCI_CMD_INTX_OFF);
    pci_cfg_write16(f, m->cap + 2, ctl | MSI_CTL_ENABLE);
    if (cpu_out)
        *cpu_out = r.cpu;
    return v;
}

// ---- INTx ----------------------------------------------------------------------------
//
// One vector per line, shared by every function on it: each interrupt runs
// every handler of the line, and each checks its own device.

#define INTX_LINES 256
#define INTX_SHARE 8

struct intx_line {
    uint8_t vector;
    uint32_t cpu;               // where the line goes: where its first function asked
    uint32_t n;                 // handlers: written after h[n] (release), read by intx_dispatch (acquire)
    struct handler h[INTX_SHARE];
};
static struct intx_line lines[INTX_LINES];
static uint8_t line_of_vector[256];

static void intx_dispatch(uint8_t vector)
{
    struct intx_line *l = &lines[line_of_vector[vector]];
    uint32_t n = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);     // acquire: pairs with add_handler's release
    for (uint32_t i = 0; i < n; i++)
        l->h[i].fn(l->h[i].arg);
}

static void add_handler(struct intx_line *l, pci_irq_fn fn, void *arg)
{
    l->h[l->n] = (struct handler){ fn, arg };
    __atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELEASE);      // release: h[n] before; pairs with intx_dispatch
}

int pci_intx_route(const struct pci_func *f, uint32_t cpu, pci_irq_fn fn, void *arg,
                   uint32_t *cpu_out)
{
    if (!f->irq_pin || f->irq_pin > 4 || f->irq_line == 0xFF || f->irq_line == 0) {
        kprintf("pci: %02x:%02x.%x: no INTx (pin %u, line %u)\n", f->bus, f->dev, f->fn, f->irq_pin,
                f->irq_line);
        return -1;
    }
    struct intx_line *l = &lines[f->irq_line];
    if (l->n == INTX_SHARE) {
        kprintf("pci: line %u shared by more than %u functions\n", f->irq_line, INTX_SHARE);
        return -1;
    }
    if (!l->vector) {
        l->cpu = arch_irq_cpu(cpu);
        int v = arch_irq_alloc_vector();
        if (v < 0) {
            kprintf("pci: %02x:%02x.%x: no interrupt vector left\n", f->bus, f->dev, f->fn);
            return -1;
        }
        l->vector = (uint8_t)v;
        line_of_vector[v] = f->irq_line;
        add_handler(l, fn, arg);
        arch_set_irq_handler((uint8_t)v, intx_dispatch);
        if (ioapic_route_pci(f->irq_line, (uint8_t)v, arch_cpu(l->cpu)->apic_id) != 0) {
            __atomic_store_n(&l->n, 0, __ATOMIC_RELAXED);     // relaxed: the pin never unmasked
            arch_irq_free_vector((uint8_t)v);
            l->vector = 0;
            return -1;
        }
    } else {
        add_handler(l, fn, arg);
    }
    pci_cfg_write16(f, PCI_COMMAND, pci_cfg_read16(f, PCI_COMMAND) & ~PCI_CMD_INTX_OFF);
    if (cpu_out)
        *cpu_out = l->cpu;
    return l->vector;
}
