// SPDX-License-Identifier: MIT
// Virtio's PCI vendor capabilities (drivers/net/virtio_caps.h). Each is
// cap_vndr, cap_next, cap_len, cfg_type, bar, id, 2 padding bytes, offset
// (le32), length (le32); the notification capability adds the
// notify_off_multiplier (le32) at 16.
#include "drivers/net/virtio_caps.h"
#include "lib/string.h"

#define CAP_LEN_MIN 16
#define NOTIFY_CAP_LEN_MIN 20

static const char *const names[5] = { "?", "common configuration", "notification area",
                                      "interrupt status", "device configuration" };

const char *virtio_caps_parse(const struct pci_bus_io *io, const struct pci_func *f,
                              struct virtio_caps *c)
{
    memset(c, 0, sizeof *c);
    uint32_t from = 0;
    uint8_t cap;
    while ((cap = pci_find_cap(f, PCI_CAP_VENDOR, &from))) {
        uint8_t len = pci_read8(io, f, cap + 2), type = pci_read8(io, f, cap + 3);
        uint8_t bar = pci_read8(io, f, cap + 4);
        if (type < VIRTIO_CAP_COMMON || type > VIRTIO_CAP_DEVICE || c->r[type].found ||
            len < CAP_LEN_MIN || cap + len > 0x100)
            continue;
        if (type == VIRTIO_CAP_NOTIFY && len < NOTIFY_CAP_LEN_MIN)
            continue;
        uint32_t off = pci_read32(io, f, cap + 8), n = pci_read32(io, f, cap + 12);
        if (bar >= PCI_NBARS || (f->bar[bar].kind != PCI_BAR_MEM32 && f->bar[bar].kind != PCI_BAR_MEM64) ||
            (uint64_t)off + n > f->bar[bar].size || n == 0)
            continue;
        c->r[type] = (struct virtio_region){ .found = true, .bar = bar, .off = off, .len = n };
        if (type == VIRTIO_CAP_NOTIFY)
            c->notify_mult = pci_read32(io, f, cap + 16);
    }
    for (int t = VIRTIO_CAP_COMMON; t <= VIRTIO_CAP_DEVICE; t++)
        if (!c->r[t].found)
            return names[t];
    if (c->r[VIRTIO_CAP_COMMON].len < 0x38)
        return "common configuration (too short)";
    return 0;
}
