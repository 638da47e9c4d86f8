// SPDX-License-Identifier: MIT
// The PCI bus walk and configuration-space parser (drivers/pci/pci_cfg.c)
// on a bus made of the fuzzer's bytes (tests/host/pci_fake.h's model):
//
//   byte 0      bit 0: the access method's space is 256 bytes (ports), else 4096 (ECAM)
//   then, per function (at most FAKE_MAX_FUNCS), 283 bytes:
//     3         bus, device (mod 32), function (mod 8)
//     24        the write masks of BARs 0-5, little-endian (0: not a BAR)
//     256       configuration space
//
// Promises checked: the walk ends, reads stay inside the space (the model
// aborts otherwise), the walk leaves every config space as it found it
// (BAR sizing restores what it probes), and every function it reports
// without error has BARs of power-of-two sizes and MSI-X tables inside
// them, and virtio's structures (drivers/net/virtio_caps.c) inside theirs.
#include <stdint.h>
#include <string.h>
#include "drivers/pci/pci_cfg.h"
#include "drivers/net/virtio_caps.h"
#include "tests/host/pci_fake.h"
#include "tests/fuzz/fuzz.h"

#define CHUNK (3 + 24 + 256)

static struct fake_bus bus, before;
static struct pci_func funcs[PCI_MAX_FUNCS];

static void check_func(const struct pci_bus_io *io, const struct pci_func *f)
{
    FUZZ_CHECK(f->ncaps <= PCI_MAX_CAPS);
    if (f->error != PCI_OK)
        return;
    // virtio's structures, when all found, lie inside their memory BARs.
    struct virtio_caps c;
    if (!virtio_caps_parse(io, f, &c))
        for (int t = VIRTIO_CAP_COMMON; t <= VIRTIO_CAP_DEVICE; t++)
            FUZZ_CHECK(c.r[t].bar < PCI_NBARS && (uint64_t)c.r[t].off + c.r[t].len <= f->bar[c.r[t].bar].size &&
                       f->bar[c.r[t].bar].kind != PCI_BAR_IO && f->bar[c.r[t].bar].kind != PCI_BAR_NONE);
    for (int i = 0; i < PCI_NBARS; i++)
        if (f->bar[i].kind != PCI_BAR_NONE)
            FUZZ_CHECK(f->bar[i].size && !(f->bar[i].size & (f->bar[i].size - 1)));
    if (f->msix.cap) {
        FUZZ_CHECK(f->msix.table_bar < PCI_NBARS && f->msix.pba_bar < PCI_NBARS);
        FUZZ_CHECK((uint64_t)f->msix.table_off + 16ull * f->msix.nvec <= f->bar[f->msix.table_bar].size);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    memset(&bus, 0, sizeof bus);
    uint16_t cfg_size = data[0] & 1 ? 256 : 4096;
    for (size_t off = 1; off + CHUNK <= size && bus.n < FAKE_MAX_FUNCS; off += CHUNK) {
        struct fake_func *f = &bus.f[bus.n++];
        f->present = true;
        f->bus = data[off];
        f->dev = data[off + 1] % 32;
        f->fn = data[off + 2] % 8;
        for (int i = 0; i < 6; i++) {
            memcpy(&f->bar_mask[i], data + off + 3 + 4 * i, 4);
            f->is_bar[i] = f->bar_mask[i] != 0;
        }
        memcpy(f->cfg, data + off + 27, 256);
        f->cfg_len = 256;
    }
    before = bus;
    struct pci_bus_io io = fake_io(&bus, cfg_size);
    uint32_t n = pci_scan(&io, funcs, PCI_MAX_FUNCS);
    for (uint32_t i = 0; i < n && i < PCI_MAX_FUNCS; i++)
        check_func(&io, &funcs[i]);
    for (int i = 0; i < bus.n; i++)
        FUZZ_CHECK(!memcmp(bus.f[i].cfg, before.f[i].cfg, sizeof bus.f[i].cfg));
    return 0;
}
