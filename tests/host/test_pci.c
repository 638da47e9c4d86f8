// SPDX-License-Identifier: MIT
// drivers/pci/pci_cfg.c on configuration spaces dumped from QEMU's
// machines (tests/data/pci/, tools/build/pci_capture.py: what Debian's Linux
// read, with its own idea of every BAR's address and size), then on
// copies broken in the ways the parser promises to survive.
#include <stdlib.h>
#include "drivers/pci/pci_cfg.h"
#include "drivers/net/virtio_caps.h"
#include "check.h"
#include "pci_fake.h"

static struct fake_bus bus, orig;
static struct pci_func funcs[PCI_MAX_FUNCS];

static void load(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "tests/data/pci/%s.txt", name);
    if (!fake_load(&bus, path)) {
        printf("FAIL %s: cannot read %s\n", check_name, path);
        exit(1);
    }
    orig = bus;
}

static uint32_t scan(void)
{
    struct pci_bus_io io = fake_io(&bus, 4096);
    return pci_scan(&io, funcs, PCI_MAX_FUNCS);
}

static const struct pci_func *func(uint16_t vendor, uint16_t device, uint32_t n, int nth)
{
    for (uint32_t i = 0; i < n; i++)
        if (funcs[i].vendor == vendor && funcs[i].device == device && nth-- == 0)
            return &funcs[i];
    return 0;
}

// Every function of the dump found, each BAR as Linux saw it, no error,
// and config space left exactly as it was.
static void check_dump(const char *name)
{
    load(name);
    uint32_t n = scan();
    CHECKF(n == (uint32_t)bus.n, "%s: %u functions found, the dump has %d", name, n, bus.n);
    for (int i = 0; i < bus.n; i++) {
        struct fake_func *ff = &bus.f[i];
        const struct pci_func *f = 0;
        for (uint32_t j = 0; j < n; j++)
            if (funcs[j].bus == ff->bus && funcs[j].dev == ff->dev && funcs[j].fn == ff->fn)
                f = &funcs[j];
        CHECKF(f, "%s: %02x:%02x.%x not found", name, ff->bus, ff->dev, ff->fn);
        if (!f)
            continue;
        CHECKF(f->error == PCI_OK, "%s: %02x:%02x.%x: %s at %u", name, f->bus, f->dev, f->fn,
               pci_error_name(f->error), f->error_at);
        for (int b = 0; b < (f->header_type ? 2 : 6); b++) {
            const struct pci_bar *bar = &f->bar[b];
            uint64_t fl = ff->res_flags[b];
            if (!fl) {
                // Linux's line 0 for the upper half of a 64-bit BAR.
                bool upper = b > 0 && f->bar[b - 1].kind == PCI_BAR_MEM64;
                CHECKF(bar->kind == PCI_BAR_NONE || upper, "%s: %02x:%02x.%x BAR %d: kind %d, Linux has none",
                       name, f->bus, f->dev, f->fn, b, bar->kind);
                continue;
            }
            CHECKF(bar->addr == ff->res_start[b], "%s: %02x:%02x.%x BAR %d at 0x%llx, Linux 0x%llx", name,
                   f->bus, f->dev, f->fn, b, (unsigned long long)bar->addr,
                   (unsigned long long)ff->res_start[b]);
            CHECKF(bar->size == ff->res_end[b] - ff->res_start[b] + 1,
                   "%s: %02x:%02x.%x BAR %d size 0x%llx", name, f->bus, f->dev, f->fn, b,
                   (unsigned long long)bar->size);
            CHECK((bar->kind == PCI_BAR_IO) == !!(fl & RES_IO));
            CHECK((bar->kind == PCI_BAR_MEM64) == !!(fl & RES_MEM_64));
            CHECK(bar->prefetchable == !!(fl & RES_PREFETCH));
        }
        CHECKF(!memcmp(ff->cfg, orig.f[i].cfg, sizeof ff->cfg), "%s: %02x:%02x.%x: config space changed",
               name, ff->bus, ff->dev, ff->fn);
    }
}

static void test_q35_dump(void)
{
    check_dump("q35");
    uint32_t n = scan();
    const struct pci_func *modern = func(0x1af4, 0x1041, n, 0);
    CHECK(modern && modern->msix.cap && modern->msix.nvec == 10 && !modern->pcie);
    const struct pci_func *legacy = func(0x1af4, 0x1000, n, 0);
    CHECK(legacy && legacy->msix.nvec >= 3 && legacy->bar[0].kind == PCI_BAR_IO);
    const struct pci_func *e1000e = func(0x8086, 0x10d3, n, 0);
    CHECK(e1000e && e1000e->msix.nvec == 5 && e1000e->msi.cap && e1000e->msi.addr64);
    // The one behind the PCI Express root port.
    const struct pci_func *behind = func(0x1af4, 0x1041, n, 1);
    CHECK(behind && behind->bus == 1 && behind->pcie);
    uint32_t from = 0, vendor_caps = 0;
    while (modern && pci_find_cap(modern, PCI_CAP_VENDOR, &from))
        vendor_caps++;
    CHECKF(vendor_caps >= 4, "virtio's vendor capabilities: %u", vendor_caps);
}

static void test_pc_dump(void)
{
    check_dump("pc");
    uint32_t n = scan();
    CHECK(func(0x8086, 0x7000, n, 0));          // PIIX3
    const struct pci_func *behind = func(0x1af4, 0x1000, n, 1);
    CHECK(behind && behind->bus == 1 && behind->dev == 3);
    const struct pci_func *br = func(0x1b36, 0x0001, n, 0);
    CHECK(br && br->header_type == 1 && br->secondary_bus == 1);
}

static void test_ovmf_dump(void)
{
    check_dump("q35-ovmf");
    const struct pci_func *modern = func(0x1af4, 0x1041, scan(), 0);
    CHECK(modern && modern->bar[4].kind == PCI_BAR_MEM64 && modern->bar[4].addr >= (1ull << 32));
}

static struct fake_func *fake_of(uint16_t vendor, uint16_t device, int nth)
{
    for (int i = 0; i < bus.n; i++) {
        uint16_t v, d;
        memcpy(&v, bus.f[i].cfg, 2);
        memcpy(&d, bus.f[i].cfg + 2, 2);
        if (v == vendor && d == device && nth-- == 0)
            return &bus.f[i];
    }
    return 0;
}

static const struct pci_func *parsed(const struct fake_func *ff, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++)
        if (funcs[j].bus == ff->bus && funcs[j].dev == ff->dev && funcs[j].fn == ff->fn)
            return &funcs[j];
    return 0;
}

static uint8_t last_cap(struct fake_func *ff)
{
    uint8_t p = ff->cfg[PCI_CAP_PTR], last = 0;
    for (int i = 0; p && i < 48; i++) {
        last = p;
        p = ff->cfg[p + 1];
    }
    return last;
}

// One broken device is named and the walk goes on to the rest.
static void expect_error(struct fake_func *ff, enum pci_error e)
{
    uint32_t n = scan();
    CHECKF(n == (uint32_t)bus.n, "%u functions, expected %d", n, bus.n);
    const struct pci_func *f = parsed(ff, n);
    CHECKF(f && f->error == e, "error %s, expected %s", f ? pci_error_name(f->error) : "none",
           pci_error_name(e));
    uint32_t bad = 0;
    for (uint32_t j = 0; j < n; j++)
        bad += funcs[j].error != PCI_OK;
    CHECKF(bad == 1, "%u functions in error", bad);
}

static void test_bar_does_not_size(void)
{
    load("q35");
    struct fake_func *ff = fake_of(0x8086, 0x10d3, 0);
    ff->bar_ignores_writes[0] = true;               // reads back its address
    expect_error(ff, PCI_ERR_BAR_SIZE);
    load("q35");
    ff = fake_of(0x8086, 0x10d3, 0);
    ff->bar_mask[0] = 0xFFF0F000u;                  // holes in the mask
    expect_error(ff, PCI_ERR_BAR_SIZE);
}

static void test_bar_64_in_last_slot(void)
{
    load("q35");
    struct fake_func *ff = fake_of(0x1af4, 0x1000, 0);  // BARs 0 and 1 only
    ff->cfg[0x10 + 5 * 4] = 0x04;                   // BAR 5: 64-bit memory
    ff->is_bar[5] = true;
    ff->bar_mask[5] = 0xFFFFF000u;
    expect_error(ff, PCI_ERR_BAR_64_LAST);
}

// An address bit below the size that does not read back as zero: the
// read-back mask has a hole, which is no size either.
static void test_bar_misaligned(void)
{
    load("q35");
    struct fake_func *ff = fake_of(0x8086, 0x10d3, 0);
    ff->cfg[0x11] |= 0x10;                          // BAR 0 0x1000 off its 128 KiB alignment
    expect_error(ff, PCI_ERR_BAR_SIZE);
}

static void test_cap_loop(void)
{
    load("q35");
    struct fake_func *ff = fake_of(0x1af4, 0x1041, 0);
    uint8_t last = last_cap(ff);
    ff->cfg[last + 1] = ff->cfg[PCI_CAP_PTR];       // back to the first
    expect_error(ff, PCI_ERR_CAP_LOOP);
    load("q35");
    ff = fake_of(0x8086, 0x10d3, 0);
    last = last_cap(ff);
    ff->cfg[last + 1] = last;                       // onto itself
    expect_error(ff, PCI_ERR_CAP_LOOP);
}

static void test_cap_pointer_out_of_range(void)
{
    load("q35");
    struct fake_func *ff = fake_of(0x1af4, 0x1041, 0);
    ff->cfg[last_cap(ff) + 1] = 0x3C;               // into the header
    expect_error(ff, PCI_ERR_CAP_PTR);
}

static void test_msix_table_past_bar(void)
{
    load("q35");
    struct fake_func *ff = fake_of(0x8086, 0x10d3, 0);
    uint32_t from = 0;
    const struct pci_func *f = parsed(ff, scan());
    uint8_t cap = pci_find_cap(f, PCI_CAP_MSIX, &from);
    CHECK(cap);
    uint32_t table;
    memcpy(&table, ff->cfg + cap + 4, 4);
    uint32_t bir = table & 7;
    uint32_t size = (uint32_t)(ff->res_end[bir] - ff->res_start[bir] + 1);
    table = bir | (size - 16);                      // the last entry fits, the rest do not
    memcpy(ff->cfg + cap + 4, &table, 4);
    expect_error(ff, PCI_ERR_MSIX_TABLE);
    load("q35");
    ff = fake_of(0x8086, 0x10d3, 0);
    ff->cfg[cap + 4] = (ff->cfg[cap + 4] & ~7) | 6; // BIR 6: no such BAR
    expect_error(ff, PCI_ERR_MSIX_BAR);
}

static void test_bridge_loops(void)
{
    load("q35");
    struct fake_func *rp = fake_of(0x1b36, 0x000c, 0);  // the root port
    CHECK(rp);
    rp->cfg[PCI_SECONDARY_BUS] = 0;                 // names its own bus
    uint32_t n = scan();
    CHECK(n == (uint32_t)bus.n - 1);                // the device behind it is not reached
    load("pc");
    // A second bridge behind the first, pointing back up at bus 1.
    struct fake_func *br = fake_of(0x1b36, 0x0001, 0);
    struct fake_func *copy = &bus.f[bus.n++];
    *copy = *br;
    copy->bus = 1;
    copy->dev = 7;
    copy->cfg[PCI_SECONDARY_BUS] = 1;
    n = scan();
    CHECK(n == (uint32_t)bus.n);
}

static void test_all_ones_bus(void)
{
    memset(&bus, 0, sizeof bus);
    CHECK(scan() == 0);
}

// More functions than fit: counted, the first max kept, no overflow.
static void test_more_than_fit(void)
{
    load("q35");
    struct pci_bus_io io = fake_io(&bus, 4096);
    struct pci_func few[3];
    uint32_t n = pci_scan(&io, few, 3);
    CHECK(n == (uint32_t)bus.n);
    CHECK(few[0].bus == 0 && few[0].dev == 0);
}

// A 256-byte space (ports 0xCF8/0xCFC) never reads past 0xFF.
static void test_cfg_size_256(void)
{
    load("q35");
    struct pci_bus_io io = fake_io(&bus, 256);
    CHECK(pci_scan(&io, funcs, PCI_MAX_FUNCS) == (uint32_t)bus.n);
    struct pci_func f;
    pci_parse_func(&io, 0, 2, 0, &f);
    CHECK(pci_read32(&io, &f, 0x100) == 0xFFFFFFFFu);
}

// A modern virtio-net's structures, as QEMU places them (BAR 4: common at
// 0, ISR at 0x1000, device at 0x2000, notify at 0x3000, 4 bytes a queue);
// a legacy one has none of them.
static void test_virtio_caps(void)
{
    load("q35");
    uint32_t n = scan();
    struct pci_bus_io io = fake_io(&bus, 4096);
    const struct pci_func *modern = func(0x1af4, 0x1041, n, 0);
    struct virtio_caps c;
    CHECK(modern && !virtio_caps_parse(&io, modern, &c));
    CHECK(c.r[VIRTIO_CAP_COMMON].bar == 4 && c.r[VIRTIO_CAP_COMMON].off == 0);
    CHECK(c.r[VIRTIO_CAP_NOTIFY].off == 0x3000 && c.notify_mult == 4);
    CHECK(c.r[VIRTIO_CAP_ISR].off == 0x1000 && c.r[VIRTIO_CAP_DEVICE].off == 0x2000);
    const struct pci_func *legacy = func(0x1af4, 0x1000, n, 0);
    const char *missing = legacy ? virtio_caps_parse(&io, legacy, &c) : 0;
    CHECK(missing && !strcmp(missing, "common configuration"));
    // A region past its BAR is not taken: the structure is missing.
    struct fake_func *ff = fake_of(0x1af4, 0x1041, 0);
    for (uint32_t from = 0, cap; (cap = pci_find_cap(modern, PCI_CAP_VENDOR, &from));)
        if (ff->cfg[cap + 3] == VIRTIO_CAP_ISR)
            ff->cfg[cap + 14] = 0x40;               // its length: 4 MiB
    missing = virtio_caps_parse(&io, modern, &c);
    CHECK(missing && !strcmp(missing, "interrupt status"));
}

int main(void)
{
    RUN(test_q35_dump);
    RUN(test_pc_dump);
    RUN(test_ovmf_dump);
    RUN(test_bar_does_not_size);
    RUN(test_bar_64_in_last_slot);
    RUN(test_bar_misaligned);
    RUN(test_cap_loop);
    RUN(test_cap_pointer_out_of_range);
    RUN(test_msix_table_past_bar);
    RUN(test_bridge_loops);
    RUN(test_all_ones_bus);
    RUN(test_more_than_fit);
    RUN(test_cfg_size_256);
    RUN(test_virtio_caps);
    return CHECK_DONE();
}
