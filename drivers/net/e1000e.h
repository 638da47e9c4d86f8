// SPDX-License-Identifier: MIT
// The Intel 82574L (drivers/net/e1000e.c), QEMU's -device e1000e (8086:10d3).
#ifndef GORO_E1000E_H
#define GORO_E1000E_H

#include "drivers/pci/pci_cfg.h"

// Boot, one core, after pci_init and dma_init: sets f up and registers it
// as a netdev, or logs why not.
void e1000e_probe(struct pci_func *f);

#endif
