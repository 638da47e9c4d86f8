// SPDX-License-Identifier: MIT
// Virtio's PCI vendor capabilities (virtio 1.2, 4.1.4): where a modern
// device's common configuration, notification area, interrupt status and
// device configuration lie, each in one of its memory BARs. Pure: read
// through struct pci_bus_io, host-tested on QEMU's dumps.
#ifndef GORO_VIRTIO_CAPS_H
#define GORO_VIRTIO_CAPS_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/pci/pci_cfg.h"

enum { VIRTIO_CAP_COMMON = 1, VIRTIO_CAP_NOTIFY = 2, VIRTIO_CAP_ISR = 3, VIRTIO_CAP_DEVICE = 4 };

struct virtio_region {
    bool found;
    uint8_t bar;
    uint32_t off, len;
};

struct virtio_caps {
    struct virtio_region r[5];          // by VIRTIO_CAP_*; [0] unused
    uint32_t notify_mult;               // notify_off_multiplier
};

// Fills *c from f's vendor capabilities, the first of each type whose BAR
// is a memory BAR that holds the whole region (a later one of the same
// type is an alternative, 4.1.4). Returns NULL when common, notify, ISR
// and device configuration were all found, else the name of what is
// missing or wrong.
const char *virtio_caps_parse(const struct pci_bus_io *io, const struct pci_func *f,
                              struct virtio_caps *c);

#endif
