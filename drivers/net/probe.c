// SPDX-License-Identifier: MIT
// Which driver takes which PCI function (drivers/net/probe.h).
#include "drivers/net/probe.h"
#include "drivers/net/e1000e.h"
#include "drivers/net/netdev.h"
#include "drivers/net/virtio_net.h"
#include "drivers/pci/pci.h"

struct nic_id {
    uint16_t vendor, device;
    void (*probe)(struct pci_func *f);
};

static const struct nic_id nics[] = {
    { 0x1AF4, 0x1000, virtio_net_probe },   // transitional (or legacy) virtio-net
    { 0x1AF4, 0x1041, virtio_net_probe },   // modern virtio-net
    { 0x8086, 0x10D3, e1000e_probe },       // Intel 82574L
};

uint32_t net_probe(void)
{
    for (uint32_t i = 0; i < pci_count(); i++) {
        struct pci_func *f = pci_get(i);
        for (uint32_t k = 0; k < sizeof nics / sizeof nics[0]; k++)
            if (f->vendor == nics[k].vendor && f->device == nics[k].device)
                nics[k].probe(f);
    }
    return netdev_count();
}
