// SPDX-License-Identifier: MIT
// The NIC drivers, each offered the PCI functions it knows.
#ifndef GORO_NET_PROBE_H
#define GORO_NET_PROBE_H

#include <stdint.h>

// Boot, one core, after pci_init and dma_init: every NIC found is set up
// and registered as a netdev (or its problem logged). Returns the
// netdevs registered.
uint32_t net_probe(void);

#endif
