// SPDX-License-Identifier: MIT
// Virtio over PCI, both interfaces QEMU offers (virtio 1.2, 4.1): the
// modern one (configuration structures named by vendor capabilities, in
// memory BARs) and the legacy one (an I/O BAR of fixed registers), which a
// transitional device (QEMU's default virtio-net-pci on i440fx) offers
// beside the modern one. One set of calls over both, so the net driver
// does not care which it got.
//
// Boot only (probe and set-up), one core, except vp_notify (the queue's
// owner, any context) and vp_isr (the device's interrupt handler).
#ifndef GORO_VIRTIO_PCI_H
#define GORO_VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include "drivers/pci/pci.h"

// Device status bits (2.1).
enum {
    VIRTIO_STATUS_ACK = 1, VIRTIO_STATUS_DRIVER = 2, VIRTIO_STATUS_DRIVER_OK = 4,
    VIRTIO_STATUS_FEATURES_OK = 8, VIRTIO_STATUS_NEEDS_RESET = 64, VIRTIO_STATUS_FAILED = 128,
};
// Feature bits of every device type (6).
#define VIRTIO_F_ANY_LAYOUT 27
#define VIRTIO_F_RING_EVENT_IDX 29
#define VIRTIO_F_VERSION_1 32
#define VIRTIO_NO_VECTOR 0xFFFF
#define VIRTIO_PCI_VENDOR 0x1AF4

struct virtio_pci {
    struct pci_func *f;
    bool legacy;
    bool msix;                          // MSI-X on: legacy's registers move (4.1.4.8)
    // legacy: the I/O BAR
    uint16_t io;
    // modern: the structures' mappings
    volatile uint8_t *common, *isr, *device;
    volatile uint8_t *notify;
    uint32_t notify_mult;
    uint32_t notify_len;
};

// Finds f's interface: modern when its capabilities are all there (and
// the device is not legacy-only), else legacy through BAR 0. False, after
// a log line, when neither is usable.
bool vp_open(struct virtio_pci *vp, struct pci_func *f, const char *driver);
// Reset, then ACKNOWLEDGE and DRIVER.
bool vp_reset(struct virtio_pci *vp);
uint64_t vp_device_features(struct virtio_pci *vp);
// Writes the features and (modern) sets FEATURES_OK and checks the device
// kept it. False when the device refused them.
bool vp_set_features(struct virtio_pci *vp, uint64_t features);
void vp_set_status(struct virtio_pci *vp, uint8_t bits);   // ORed into the status
uint8_t vp_status(struct virtio_pci *vp);
// The queue's size: the device's (legacy, fixed) or the smaller of the
// device's maximum and want (modern). 0: no such queue.
uint16_t vp_queue_size(struct virtio_pci *vp, uint16_t q, uint16_t want);
// Gives the device queue q (size entries, its three parts at desc, avail,
// used: legacy needs them as one block, as drivers/net/virtqueue.c lays
// them) and its MSI-X entry (VIRTIO_NO_VECTOR: none). False when the
// device refuses the vector or names a notification address outside its
// area. *notify_off: what vp_notify needs for this queue.
bool vp_queue_setup(struct virtio_pci *vp, uint16_t q, uint16_t size, uint64_t desc,
                    uint64_t avail, uint64_t used, uint16_t msix_entry, uint32_t *notify_off);
// The configuration-change interrupt's MSI-X entry; false when refused.
bool vp_config_vector(struct virtio_pci *vp, uint16_t msix_entry);
// Tells the device queue q has new buffers.
void vp_notify(struct virtio_pci *vp, uint16_t q, uint32_t notify_off);
// Reads (and so clears) the interrupt status: bit 0 a queue, bit 1 the
// configuration changed. For INTx and MSI, which share one vector.
uint8_t vp_isr(struct virtio_pci *vp);
// The device-specific configuration.
uint8_t vp_config8(struct virtio_pci *vp, uint32_t off);
uint16_t vp_config16(struct virtio_pci *vp, uint32_t off);

#endif
