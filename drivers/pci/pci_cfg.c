// SPDX-License-Identifier: MIT
// PCI configuration space, parsed (drivers/pci/pci_cfg.h). Offsets and
// rules from the PCI Local Bus Specification 3.0 (the header, BAR sizing,
// the capability list, MSI) and its MSI-X ECN; PCI Express adds only the
// 4 KiB space, which nothing here needs beyond reading through it.
#include "drivers/pci/pci_cfg.h"

static const char *const error_names[PCI_ERR_COUNT] = {
    [PCI_OK] = "ok",
    [PCI_ERR_HEADER_TYPE] = "unknown header type",
    [PCI_ERR_BAR_SIZE] = "a BAR that does not size",
    [PCI_ERR_BAR_64_LAST] = "a 64-bit BAR in the last slot",
    [PCI_ERR_CAP_PTR] = "a capability pointer out of range",
    [PCI_ERR_CAP_LOOP] = "a capability loop",
    [PCI_ERR_MSIX_BAR] = "an MSI-X table in a missing or I/O BAR",
    [PCI_ERR_MSIX_TABLE] = "an MSI-X vector table past its BAR",
    [PCI_ERR_MSI_SHORT] = "an MSI capability past the end of config space",
};

const char *pci_error_name(enum pci_error e)
{
    return (unsigned)e < PCI_ERR_COUNT ? error_names[e] : "?";
}

// ---- access ------------------------------------------------------------------

static uint32_t rd32(const struct pci_bus_io *io, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    if (off >= io->cfg_size)
        return 0xFFFFFFFFu;
    return io->read32(io->ctx, bus, dev, fn, off & ~3u);
}

uint32_t pci_read32(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off)
{
    return rd32(io, f->bus, f->dev, f->fn, off);
}

uint16_t pci_read16(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off)
{
    return (uint16_t)(pci_read32(io, f, off) >> ((off & 2) * 8));
}

uint8_t pci_read8(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off)
{
    return (uint8_t)(pci_read32(io, f, off) >> ((off & 3) * 8));
}

void pci_write32(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off, uint32_t v)
{
    if (off < io->cfg_size)
        io->write32(io->ctx, f->bus, f->dev, f->fn, off & ~3u, v);
}

// The other half of the dword is written back as read, except the status
// register beside the command register: its error bits clear when written
// with ones, so they are written as zeros.
void pci_write16(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off, uint16_t v)
{
    uint16_t base = off & ~3u;
    uint32_t old = base == PCI_COMMAND ? pci_read32(io, f, base) & 0xFFFFu : pci_read32(io, f, base);
    uint32_t shift = (off & 2) * 8;
    pci_write32(io, f, base, (old & ~(0xFFFFu << shift)) | ((uint32_t)v << shift));
}

// ---- BARs ----------------------------------------------------------------------

static bool pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

// Writes all ones, reads the mask back, restores: the caller has turned
// the function's decoding off.
static uint32_t size_probe(const struct pci_bus_io *io, const struct pci_func *f, uint16_t off,
                           uint32_t orig)
{
    pci_write32(io, f, off, 0xFFFFFFFFu);
    uint32_t mask = pci_read32(io, f, off);
    pci_write32(io, f, off, orig);
    return mask;
}

// BAR i (and i + 1 for a 64-bit one); returns the slots it used.
static int parse_bar(const struct pci_bus_io *io, struct pci_func *f, int i, int nbars)
{
    uint16_t off = PCI_BAR0 + 4 * i;
    struct pci_bar *b = &f->bar[i];
    uint32_t orig = pci_read32(io, f, off);
    uint32_t mask = size_probe(io, f, off, orig);
    if (mask == 0)
        return 1;                               // not implemented
    if (orig & 1) {                             // I/O space
        uint32_t m = mask & ~3u;
        if (!(m >> 16))
            m |= 0xFFFF0000u;                   // 16-bit decode: the upper half reads 0
        uint64_t size = (uint32_t)(~m + 1);
        b->kind = PCI_BAR_IO;
        b->addr = orig & ~3u;
        b->size = size;
        if (!pow2(size) || size < 4 || (mask & 1) == 0) {
            f->error = PCI_ERR_BAR_SIZE;
            f->error_at = (uint8_t)i;
        }
        return 1;
    }
    uint32_t type = (orig >> 1) & 3;
    b->prefetchable = (orig >> 3) & 1;
    uint64_t m = 0xFFFFFFFF00000000ull | (mask & ~0xFu);
    b->kind = PCI_BAR_MEM32;
    b->addr = orig & ~0xFu;
    int used = 1;
    if (type == 2) {
        b->kind = PCI_BAR_MEM64;
        if (i + 1 >= nbars) {
            f->error = PCI_ERR_BAR_64_LAST;
            f->error_at = (uint8_t)i;
            return 1;
        }
        uint32_t orig_hi = pci_read32(io, f, off + 4);
        uint32_t mask_hi = size_probe(io, f, off + 4, orig_hi);
        m = ((uint64_t)mask_hi << 32) | (mask & ~0xFu);
        b->addr |= (uint64_t)orig_hi << 32;
        used = 2;
    }
    uint64_t size = ~m + 1;
    b->size = size;
    // Address bits below the size read back as zero, so a size that is a
    // power of two also means an aligned address.
    if (type == 3 || (mask & 0xFu) != (orig & 0xFu) || !pow2(size) || size < 16) {
        f->error = PCI_ERR_BAR_SIZE;
        f->error_at = (uint8_t)i;
    }
    return used;
}

static void parse_bars(const struct pci_bus_io *io, struct pci_func *f)
{
    int nbars = f->header_type == 0 ? 6 : 2;
    // Decoding off while the BARs hold all ones: the function must not
    // answer at the addresses the probe makes up.
    pci_write16(io, f, PCI_COMMAND, f->command & ~(PCI_CMD_IO | PCI_CMD_MEM));
    for (int i = 0; i < nbars && f->error == PCI_OK;)
        i += parse_bar(io, f, i, nbars);
    pci_write16(io, f, PCI_COMMAND, f->command);
}

// ---- capabilities ----------------------------------------------------------

static void cap_error(struct pci_func *f, enum pci_error e, uint8_t at)
{
    if (f->error == PCI_OK) {
        f->error = e;
        f->error_at = at;
    }
}

static bool table_in_bar(const struct pci_func *f, uint8_t bir, uint32_t off, uint64_t len,
                         enum pci_error *e)
{
    if (bir >= (f->header_type == 0 ? 6 : 2) || f->bar[bir].kind == PCI_BAR_NONE ||
        f->bar[bir].kind == PCI_BAR_IO) {
        *e = PCI_ERR_MSIX_BAR;
        return false;
    }
    if ((uint64_t)off + len > f->bar[bir].size) {
        *e = PCI_ERR_MSIX_TABLE;
        return false;
    }
    return true;
}

static void parse_msix(const struct pci_bus_io *io, struct pci_func *f, uint8_t cap)
{
    if (cap > 0x100 - 12) {
        cap_error(f, PCI_ERR_CAP_PTR, cap);
        return;
    }
    uint16_t ctl = pci_read16(io, f, cap + 2);
    uint32_t table = pci_read32(io, f, cap + 4), pba = pci_read32(io, f, cap + 8);
    struct pci_msix *x = &f->msix;
    x->cap = cap;
    x->nvec = (ctl & 0x7FF) + 1;
    x->table_bar = table & 7;
    x->table_off = table & ~7u;
    x->pba_bar = pba & 7;
    x->pba_off = pba & ~7u;
    enum pci_error e = PCI_OK;
    if (!table_in_bar(f, x->table_bar, x->table_off, 16ull * x->nvec, &e) ||
        !table_in_bar(f, x->pba_bar, x->pba_off, 8ull * ((x->nvec + 63) / 64), &e))
        cap_error(f, e, cap);
}

static void parse_msi(const struct pci_bus_io *io, struct pci_func *f, uint8_t cap)
{
    if (cap > 0x100 - 4) {
        cap_error(f, PCI_ERR_MSI_SHORT, cap);
        return;
    }
    uint16_t ctl = pci_read16(io, f, cap + 2);
    struct pci_msi *m = &f->msi;
    m->addr64 = (ctl >> 7) & 1;
    m->maskable = (ctl >> 8) & 1;
    m->max_log2 = (ctl >> 1) & 7;
    uint32_t len = (m->addr64 ? 14 : 10) + (m->maskable ? 10 : 0);
    if (cap + len > 0x100) {
        cap_error(f, PCI_ERR_MSI_SHORT, cap);
        return;
    }
    m->cap = cap;
}

static void parse_caps(const struct pci_bus_io *io, struct pci_func *f)
{
    if (!(pci_read16(io, f, PCI_STATUS) & PCI_STATUS_CAPS))
        return;
    uint64_t seen = 0;          // one bit per dword of the 256-byte space
    uint8_t ptr = pci_read8(io, f, PCI_CAP_PTR) & ~3u;
    while (ptr) {
        if (ptr < 0x40) {       // ptr is a multiple of 4 below 0x100 by construction
            cap_error(f, PCI_ERR_CAP_PTR, ptr);
            return;
        }
        if ((seen >> (ptr / 4)) & 1 || f->ncaps == PCI_MAX_CAPS) {
            cap_error(f, PCI_ERR_CAP_LOOP, ptr);
            return;
        }
        seen |= 1ull << (ptr / 4);
        uint16_t head = pci_read16(io, f, ptr);
        uint8_t id = head & 0xFF;
        f->caps[f->ncaps++] = (struct pci_cap){ .id = id, .off = ptr };
        if (id == PCI_CAP_MSIX && !f->msix.cap)
            parse_msix(io, f, ptr);
        else if (id == PCI_CAP_MSI && !f->msi.cap)
            parse_msi(io, f, ptr);
        else if (id == PCI_CAP_PCIE)
            f->pcie = true;
        ptr = (head >> 8) & ~3u;
    }
}

uint8_t pci_find_cap(const struct pci_func *f, uint8_t id, uint32_t *from)
{
    for (uint32_t i = *from; i < f->ncaps; i++) {
        if (f->caps[i].id == id) {
            *from = i + 1;
            return f->caps[i].off;
        }
    }
    *from = f->ncaps;
    return 0;
}

// ---- a function, and the walk --------------------------------------------------

void pci_parse_func(const struct pci_bus_io *io, uint8_t bus, uint8_t dev, uint8_t fn,
                    struct pci_func *f)
{
    *f = (struct pci_func){ .segment = io->segment, .bus = bus, .dev = dev, .fn = fn };
    uint32_t id = pci_read32(io, f, PCI_VENDOR);
    f->vendor = id & 0xFFFF;
    f->device = id >> 16;
    uint32_t cls = pci_read32(io, f, PCI_REVISION);
    f->revision = cls & 0xFF;
    f->progif = (cls >> 8) & 0xFF;
    f->subclass = (cls >> 16) & 0xFF;
    f->class = cls >> 24;
    uint8_t ht = pci_read8(io, f, PCI_HEADER_TYPE);
    f->header_type = ht & 0x7F;
    f->multifunction = ht >> 7;
    f->command = pci_read16(io, f, PCI_COMMAND);
    if (f->header_type > 1) {
        f->error = PCI_ERR_HEADER_TYPE;
        return;
    }
    uint32_t irq = pci_read32(io, f, PCI_IRQ_LINE);
    f->irq_line = irq & 0xFF;
    f->irq_pin = (irq >> 8) & 0xFF;
    if (f->header_type == 0) {
        uint32_t sub = pci_read32(io, f, PCI_SUBSYS_VENDOR);
        f->subsys_vendor = sub & 0xFFFF;
        f->subsys_id = sub >> 16;
    } else {
        uint32_t buses = pci_read32(io, f, PCI_PRIMARY_BUS);
        f->secondary_bus = (buses >> 8) & 0xFF;
        f->subordinate_bus = (buses >> 16) & 0xFF;
    }
    parse_bars(io, f);
    parse_caps(io, f);
}

static bool exists(const struct pci_bus_io *io, uint8_t bus, uint8_t dev, uint8_t fn)
{
    uint16_t vendor = rd32(io, bus, dev, fn, PCI_VENDOR) & 0xFFFF;
    return vendor != 0xFFFF && vendor != 0;
}

// Parses the function into funcs[n] when it fits, else into scratch.
static struct pci_func *found(const struct pci_bus_io *io, uint8_t bus, uint8_t dev, uint8_t fn,
                              struct pci_func *funcs, uint32_t max, uint32_t n,
                              struct pci_func *scratch)
{
    struct pci_func *f = n < max ? &funcs[n] : scratch;
    pci_parse_func(io, bus, dev, fn, f);
    return f;
}

uint32_t pci_scan(const struct pci_bus_io *io, struct pci_func *funcs, uint32_t max)
{
    uint64_t queued[4] = { 0 };     // one bit per bus
    uint8_t queue[256];
    uint32_t head = 0, tail = 0, n = 0;
    struct pci_func scratch;
    queue[tail++] = io->bus_first;
    queued[io->bus_first / 64] |= 1ull << (io->bus_first % 64);
    while (head < tail) {
        uint8_t bus = queue[head++];
        for (uint8_t dev = 0; dev < 32; dev++) {
            if (!exists(io, bus, dev, 0))
                continue;
            for (uint8_t fn = 0; fn < 8; fn++) {
                if (fn && !exists(io, bus, dev, fn))
                    continue;
                struct pci_func *f = found(io, bus, dev, fn, funcs, max, n++, &scratch);
                // Down the tree only, each bus once: a bridge that names
                // its own bus, one above it or one seen already is ignored.
                uint8_t sec = f->secondary_bus;
                if (f->header_type == 1 && f->error == PCI_OK && sec > bus &&
                    sec <= io->bus_last && !((queued[sec / 64] >> (sec % 64)) & 1)) {
                    queued[sec / 64] |= 1ull << (sec % 64);
                    queue[tail++] = sec;
                }
                if (fn == 0 && !f->multifunction)
                    break;
            }
        }
    }
    return n;
}

const char *pci_class_name(uint8_t class)
{
    static const char *const names[] = {
        "unclassified", "storage", "network", "display", "multimedia", "memory", "bridge",
        "communication", "system", "input", "docking", "processor", "serial bus", "wireless",
        "intelligent i/o", "satellite", "crypto", "signal processing", "accelerator",
        "instrumentation",
    };
    return class < sizeof names / sizeof names[0] ? names[class] : "other";
}
