// SPDX-License-Identifier: MIT
// A virtio split virtqueue, the driver's side (virtio 1.2, 2.7): a
// descriptor table, the available ring the driver fills and the used ring
// the device fills, with event-index notification suppression when the
// device offers it (VIRTIO_F_EVENT_IDX). The same layout serves the
// legacy interface, which wants the three in one page-aligned block with
// the used ring on a page boundary: every queue here is laid out that way.
//
// Pure C, no device access: the driver notifies the device when
// vq_kick_prepare says so, and the host tests play the device
// (tests/host/test_virtqueue.c). Memory barriers are C11 fences, which
// order the accesses that QEMU (another host thread) or a real device
// sees the way the spec requires.
//
// One owner per queue (the netdev rx or tx owner): no call here is safe
// against another on the same queue.
#ifndef GORO_VIRTQUEUE_H
#define GORO_VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VQ_MAX_SIZE 32768

enum { VRING_DESC_F_NEXT = 1, VRING_DESC_F_WRITE = 2 };
enum { VRING_AVAIL_F_NO_INTERRUPT = 1 };
enum { VRING_USED_F_NO_NOTIFY = 1 };

struct vring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct vring_used_elem {
    uint32_t id;
    uint32_t len;
};

// One buffer of a chain: device-readable, or device-writable (write).
struct vq_buf {
    uint64_t addr;
    uint32_t len;
    bool write;
};

struct virtqueue {
    // fixed at vq_init
    uint16_t size;                  // entries, a power of two
    bool event_idx;
    struct vring_desc *desc;
    volatile uint16_t *avail;       // flags, idx, ring[size], used_event
    volatile uint16_t *used;        // flags, idx, then elems; avail_event after them
    void **tokens;                  // the driver's token per chain head

    // the owner only
    uint16_t free_head;             // first free descriptor (a list through next)
    uint16_t num_free;
    uint16_t avail_idx;             // the next available slot (what avail->idx will say)
    uint16_t kicked_idx;            // avail_idx at the last vq_kick_prepare
    uint16_t last_used;             // the next used entry to take
};

// Bytes of one queue's block (desc, avail, padding, used), and where the
// avail and used rings start in it (the used ring on a 4096 boundary).
size_t vq_bytes(uint16_t size, size_t *avail_off, size_t *used_off);

// mem: vq_bytes zeroed bytes, 4096-aligned; tokens: size pointers.
// size must be a power of two no larger than VQ_MAX_SIZE.
void vq_init(struct virtqueue *vq, uint16_t size, void *mem, void **tokens, bool event_idx);

// Bus addresses (identity-mapped memory) of the three parts, for the device.
uint64_t vq_desc_addr(const struct virtqueue *vq);
uint64_t vq_avail_addr(const struct virtqueue *vq);
uint64_t vq_used_addr(const struct virtqueue *vq);

// Adds a chain of n buffers with token (never NULL) to the available
// ring, not yet visible to the device (vq_kick_prepare publishes). False
// when fewer than n descriptors are free (nothing added).
bool vq_add(struct virtqueue *vq, const struct vq_buf *bufs, uint16_t n, void *token);

// Publishes every chain added since the last call; true when the device
// wants a notification for them (its NO_NOTIFY flag, or its avail_event).
bool vq_kick_prepare(struct virtqueue *vq);

// The next chain the device has finished with: its token (NULL when none
// is ready), *len the bytes the device wrote into it. Its descriptors are
// free again.
void *vq_get_used(struct virtqueue *vq, uint32_t *len);

// Whether the device has finished chains vq_get_used has not taken.
bool vq_has_used(const struct virtqueue *vq);

// Interrupts (the device's used-buffer notifications). vq_disable_cb asks
// for none; vq_enable_cb asks for one at the next used chain and returns
// false when chains are already waiting (they may never interrupt: take
// them). vq_enable_cb_delayed asks for one only when most of what is
// outstanding is done (transmit completions), returning as vq_enable_cb.
void vq_disable_cb(struct virtqueue *vq);
bool vq_enable_cb(struct virtqueue *vq);
bool vq_enable_cb_delayed(struct virtqueue *vq);

// The event-index rule (virtio 1.2, 2.7.10): an event is due when the
// index moved from old past event to new.
static inline bool vring_need_event(uint16_t event, uint16_t new_idx, uint16_t old)
{
    return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old);
}

#endif
