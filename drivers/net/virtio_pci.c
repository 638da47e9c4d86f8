// SPDX-License-Identifier: MIT
// Virtio over PCI, modern and legacy (drivers/net/virtio_pci.h).
//
// Modern (virtio 1.2, 4.1.4.3): the common configuration structure, all
// little-endian:
//   0x00 device_feature_select  0x04 device_feature  0x08 driver_feature_select
//   0x0C driver_feature  0x10 config_msix_vector  0x12 num_queues
//   0x14 device_status  0x15 config_generation  0x16 queue_select
//   0x18 queue_size  0x1A queue_msix_vector  0x1C queue_enable
//   0x1E queue_notify_off  0x20 queue_desc  0x28 queue_driver  0x30 queue_device
// Legacy (4.1.4.8), the I/O BAR:
//   0x00 host features  0x04 guest features  0x08 queue PFN  0x0C queue size
//   0x0E queue select  0x10 queue notify  0x12 status  0x13 ISR
//   with MSI-X on: 0x14 config vector, 0x16 queue vector; the device's
//   own configuration follows at 0x18 (0x14 without MSI-X).
#include "drivers/net/virtio_pci.h"
#include "drivers/net/virtio_caps.h"
#include "lib/printf.h"
#include "arch/arch.h"
#include "arch/x86.h"

enum {
    C_DFSEL = 0x00, C_DF = 0x04, C_GFSEL = 0x08, C_GF = 0x0C, C_MSIX = 0x10, C_NUMQ = 0x12,
    C_STATUS = 0x14, C_GEN = 0x15, C_QSEL = 0x16, C_QSIZE = 0x18, C_QMSIX = 0x1A, C_QENABLE = 0x1C,
    C_QNOTIFY = 0x1E, C_QDESC = 0x20, C_QDRIVER = 0x28, C_QDEVICE = 0x30,
};
enum {
    L_HOSTF = 0x00, L_GUESTF = 0x04, L_PFN = 0x08, L_QSIZE = 0x0C, L_QSEL = 0x0E, L_NOTIFY = 0x10,
    L_STATUS = 0x12, L_ISR = 0x13, L_CFGVEC = 0x14, L_QVEC = 0x16,
};
#define LEGACY_CFG_OFF(vp) ((vp)->msix ? 0x18 : 0x14)
#define LEGACY_ALIGN_SHIFT 12

static void w8(volatile uint8_t *b, uint32_t off, uint8_t v) { *(volatile uint8_t *)(b + off) = v; }
static void w16(volatile uint8_t *b, uint32_t off, uint16_t v) { *(volatile uint16_t *)(b + off) = v; }
static void w32(volatile uint8_t *b, uint32_t off, uint32_t v) { *(volatile uint32_t *)(b + off) = v; }
static uint8_t r8(volatile uint8_t *b, uint32_t off) { return *(volatile uint8_t *)(b + off); }
static uint16_t r16(volatile uint8_t *b, uint32_t off) { return *(volatile uint16_t *)(b + off); }
static uint32_t r32(volatile uint8_t *b, uint32_t off) { return *(volatile uint32_t *)(b + off); }

// A 64-bit field as two 32-bit writes, low half first (4.1.3.1: the
// driver may not assume a 64-bit access works).
static void w64(volatile uint8_t *b, uint32_t off, uint64_t v)
{
    w32(b, off, (uint32_t)v);
    w32(b, off + 4, (uint32_t)(v >> 32));
}

static volatile uint8_t *map_region(struct pci_func *f, const struct virtio_region *r)
{
    return pci_map_bar(f, r->bar, r->off, r->len);
}

bool vp_open(struct virtio_pci *vp, struct pci_func *f, const char *driver)
{
    *vp = (struct virtio_pci){ .f = f };
    struct virtio_caps caps;
    // Device ids 0x1000-0x103F are transitional or legacy; 0x1040 and up modern only.
    const char *missing = virtio_caps_parse(pci_io(), f, &caps);
    if (!missing) {
        vp->common = map_region(f, &caps.r[VIRTIO_CAP_COMMON]);
        vp->notify = map_region(f, &caps.r[VIRTIO_CAP_NOTIFY]);
        vp->isr = map_region(f, &caps.r[VIRTIO_CAP_ISR]);
        vp->device = map_region(f, &caps.r[VIRTIO_CAP_DEVICE]);
        vp->notify_mult = caps.notify_mult;
        vp->notify_len = caps.r[VIRTIO_CAP_NOTIFY].len;
        if (vp->common && vp->notify && vp->isr && vp->device)
            return true;
        missing = "its structures' mappings";
    }
    if (f->device >= 0x1040) {
        kprintf("%s: %02x:%02x.%x: modern-only device without %s; not used\n", driver, f->bus,
                f->dev, f->fn, missing);
        return false;
    }
    vp->legacy = true;
    vp->io = pci_io_bar(f, 0);
    if (!vp->io) {
        kprintf("%s: %02x:%02x.%x: no modern interface (%s) and no legacy I/O BAR; not used\n",
                driver, f->bus, f->dev, f->fn, missing);
        return false;
    }
    return true;
}

uint8_t vp_status(struct virtio_pci *vp)
{
    return vp->legacy ? inb(vp->io + L_STATUS) : r8(vp->common, C_STATUS);
}

static void status_write(struct virtio_pci *vp, uint8_t v)
{
    if (vp->legacy)
        outb(vp->io + L_STATUS, v);
    else
        w8(vp->common, C_STATUS, v);
}

void vp_set_status(struct virtio_pci *vp, uint8_t bits)
{
    status_write(vp, vp_status(vp) | bits);
}

bool vp_reset(struct virtio_pci *vp)
{
    status_write(vp, 0);
    // The reset is done when the status reads 0 again (4.1.4.3.2); QEMU's
    // is at once. A bounded wait: a device that never finishes is named.
    for (int i = 0; vp_status(vp) != 0; i++) {
        if (i == 1000000)
            return false;
        cpu_relax();
    }
    vp_set_status(vp, VIRTIO_STATUS_ACK);
    vp_set_status(vp, VIRTIO_STATUS_DRIVER);
    return true;
}

uint64_t vp_device_features(struct virtio_pci *vp)
{
    if (vp->legacy)
        return inl(vp->io + L_HOSTF);
    w32(vp->common, C_DFSEL, 0);
    uint64_t lo = r32(vp->common, C_DF);
    w32(vp->common, C_DFSEL, 1);
    return lo | (uint64_t)r32(vp->common, C_DF) << 32;
}

bool vp_set_features(struct virtio_pci *vp, uint64_t features)
{
    if (vp->legacy) {
        outl(vp->io + L_GUESTF, (uint32_t)features);
        return true;
    }
    w32(vp->common, C_GFSEL, 0);
    w32(vp->common, C_GF, (uint32_t)features);
    w32(vp->common, C_GFSEL, 1);
    w32(vp->common, C_GF, (uint32_t)(features >> 32));
    vp_set_status(vp, VIRTIO_STATUS_FEATURES_OK);
    return vp_status(vp) & VIRTIO_STATUS_FEATURES_OK;
}

uint16_t vp_queue_size(struct virtio_pci *vp, uint16_t q, uint16_t want)
{
    if (vp->legacy) {
        outw(vp->io + L_QSEL, q);
        return inw(vp->io + L_QSIZE);
    }
    if (q >= r16(vp->common, C_NUMQ))
        return 0;
    w16(vp->common, C_QSEL, q);
    uint16_t max = r16(vp->common, C_QSIZE);
    // A power of two no larger than either (the split ring's sizes are).
    uint16_t n = 1;
    while ((uint32_t)n * 2 <= max && (uint32_t)n * 2 <= want)
        n = (uint16_t)(n * 2);
    return max ? n : 0;
}

bool vp_queue_setup(struct virtio_pci *vp, uint16_t q, uint16_t size, uint64_t desc,
                    uint64_t avail, uint64_t used, uint16_t msix_entry, uint32_t *notify_off)
{
    *notify_off = 0;
    if (vp->legacy) {
        outw(vp->io + L_QSEL, q);
        if (vp->msix) {
            outw(vp->io + L_QVEC, msix_entry);
            if (inw(vp->io + L_QVEC) != msix_entry)
                return false;
        }
        outl(vp->io + L_PFN, (uint32_t)(desc >> LEGACY_ALIGN_SHIFT));
        return true;
    }
    w16(vp->common, C_QSEL, q);
    w16(vp->common, C_QSIZE, size);
    w16(vp->common, C_QMSIX, msix_entry);
    if (r16(vp->common, C_QMSIX) != msix_entry)
        return false;
    uint32_t at = (uint32_t)r16(vp->common, C_QNOTIFY) * vp->notify_mult;
    if (at + 2 > vp->notify_len)
        return false;
    *notify_off = at;
    w64(vp->common, C_QDESC, desc);
    w64(vp->common, C_QDRIVER, avail);
    w64(vp->common, C_QDEVICE, used);
    w16(vp->common, C_QENABLE, 1);
    return true;
}

bool vp_config_vector(struct virtio_pci *vp, uint16_t msix_entry)
{
    if (vp->legacy) {
        if (!vp->msix)
            return msix_entry == VIRTIO_NO_VECTOR;
        outw(vp->io + L_CFGVEC, msix_entry);
        return inw(vp->io + L_CFGVEC) == msix_entry;
    }
    w16(vp->common, C_MSIX, msix_entry);
    return r16(vp->common, C_MSIX) == msix_entry;
}

void vp_notify(struct virtio_pci *vp, uint16_t q, uint32_t notify_off)
{
    if (vp->legacy)
        outw(vp->io + L_NOTIFY, q);
    else
        w16(vp->notify, notify_off, q);
}

uint8_t vp_isr(struct virtio_pci *vp)
{
    return vp->legacy ? inb(vp->io + L_ISR) : r8(vp->isr, 0);
}

uint8_t vp_config8(struct virtio_pci *vp, uint32_t off)
{
    return vp->legacy ? inb(vp->io + LEGACY_CFG_OFF(vp) + off) : r8(vp->device, off);
}

uint16_t vp_config16(struct virtio_pci *vp, uint32_t off)
{
    return vp->legacy ? inw(vp->io + LEGACY_CFG_OFF(vp) + off) : r16(vp->device, off);
}
