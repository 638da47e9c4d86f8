// SPDX-License-Identifier: MIT
// virtio-net (drivers/net/virtio_net.c): QEMU's virtio-net-pci, modern
// (1af4:1041) and transitional or legacy (1af4:1000).
#ifndef GORO_VIRTIO_NET_H
#define GORO_VIRTIO_NET_H

#include "drivers/pci/pci_cfg.h"

// Boot, one core, after pci_init and dma_init: sets f up and registers it
// as a netdev, or logs why not.
void virtio_net_probe(struct pci_func *f);

#endif
