// SPDX-License-Identifier: MIT
// A virtio split virtqueue, the driver's side (drivers/net/virtqueue.h).
//
// Layout of one queue's block (virtio 1.2, 2.7; legacy 4.1.5.1.3's
// alignment kept for every queue):
//   desc      size * 16 bytes
//   avail     flags, idx, ring[size], used_event      (2 * (3 + size) bytes)
//   (pad to 4096)
//   used      flags, idx, ring[size] of {id, len}, avail_event
//
// The rings are little-endian; so is x86 and every host the tests run on.
//
// Ordering with the device, which runs concurrently:
//   - a chain's descriptors and ring slot are written before avail->idx
//     (release fence, then the index store): the device reads the index
//     first and then what it covers;
//   - avail->idx is written before the device's avail_event or flags are
//     read (full fence): else both sides could decide the other will look
//     and neither notifies (the store-load case TSO does not order);
//   - used->idx is read before the used entries it covers (acquire);
//   - used_event is written before used->idx is read again (full fence),
//     for the same store-load reason, in vq_enable_cb.
//
// The two full fences are an mfence (device_mb), not the locked no-op
// (`lock or $0,(%rsp)`) the compiler emits for a seq-cst fence. QEMU's
// TCG with one vCPU translates a locked instruction as a plain load and
// store, with no barrier (nothing else runs guest code to need one),
// while its device models run in the I/O thread at the same time; mfence
// it always translates as a host barrier. With the locked no-op, the
// host's store buffer held used_event past the look at used->idx while
// the device, between its index store and its used_event load, read the
// old value: the device filled the ring without an interrupt, the driver
// waited for one, and the queue stopped for good (app=httpd and app=kvd
// under wrk and memcaslap at 1 vCPU, after some 10^4 to 10^5 frames).
#include "drivers/net/virtqueue.h"
#include "lib/panic.h"
#include "lib/string.h"

enum { A_FLAGS = 0, A_IDX = 1, A_RING = 2 };    // avail ring, in uint16_t
enum { U_FLAGS = 0, U_IDX = 1, U_RING = 2 };    // used ring: RING is in uint16_t, elems are 4 of them

// A full fence the device sees (see the top).
static inline void device_mb(void)
{
#if defined(__x86_64__)
    __asm__ volatile("mfence" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   // seq-cst: the store-load fence with the device (the top)
#endif
}

static size_t align(size_t x, size_t a)
{
    return (x + a - 1) & ~(a - 1);
}

size_t vq_bytes(uint16_t size, size_t *avail_off, size_t *used_off)
{
    size_t a = 16ul * size;
    size_t u = align(a + 2ul * (3 + size), 4096);
    if (avail_off)
        *avail_off = a;
    if (used_off)
        *used_off = u;
    return u + align(2ul * 3 + 8ul * size, 4096);
}

void vq_init(struct virtqueue *vq, uint16_t size, void *mem, void **tokens, bool event_idx)
{
    ASSERT(size && !(size & (size - 1)) && size <= VQ_MAX_SIZE);
    ASSERT(!((uintptr_t)mem & 4095));
    size_t a, u;
    vq_bytes(size, &a, &u);
    *vq = (struct virtqueue){ .size = size, .event_idx = event_idx, .desc = mem,
                              .avail = (volatile uint16_t *)((uint8_t *)mem + a),
                              .used = (volatile uint16_t *)((uint8_t *)mem + u),
                              .tokens = tokens, .num_free = size };
    for (uint16_t i = 0; i < size; i++) {
        vq->desc[i].next = (uint16_t)(i + 1);
        tokens[i] = 0;
    }
}

uint64_t vq_desc_addr(const struct virtqueue *vq)
{
    return (uint64_t)(uintptr_t)vq->desc;
}

uint64_t vq_avail_addr(const struct virtqueue *vq)
{
    return (uint64_t)(uintptr_t)vq->avail;
}

uint64_t vq_used_addr(const struct virtqueue *vq)
{
    return (uint64_t)(uintptr_t)vq->used;
}

static volatile uint16_t *used_event(const struct virtqueue *vq)
{
    return &vq->avail[A_RING + vq->size];
}

static volatile uint16_t *avail_event(const struct virtqueue *vq)
{
    return &vq->used[U_RING + 4 * vq->size];
}

bool vq_add(struct virtqueue *vq, const struct vq_buf *bufs, uint16_t n, void *token)
{
    ASSERT(n > 0 && token);
    if (vq->num_free < n)
        return false;
    uint16_t head = vq->free_head, i = head, last = head;
    for (uint16_t k = 0; k < n; k++) {
        struct vring_desc *d = &vq->desc[i];
        d->addr = bufs[k].addr;
        d->len = bufs[k].len;
        d->flags = (uint16_t)((bufs[k].write ? VRING_DESC_F_WRITE : 0) |
                              (k + 1 < n ? VRING_DESC_F_NEXT : 0));
        last = i;
        i = d->next;
    }
    vq->free_head = vq->desc[last].next;
    vq->num_free = (uint16_t)(vq->num_free - n);
    vq->tokens[head] = token;
    vq->avail[A_RING + (vq->avail_idx & (vq->size - 1))] = head;
    vq->avail_idx++;
    return true;
}

bool vq_kick_prepare(struct virtqueue *vq)
{
    uint16_t old = vq->kicked_idx, now = vq->avail_idx;
    // release: the descriptors and ring slots above before the index the device reads first
    __atomic_thread_fence(__ATOMIC_RELEASE);
    vq->avail[A_IDX] = now;
    vq->kicked_idx = now;
    // the index store before the device's event/flags load (see the top)
    device_mb();
    if (old == now)
        return false;
    if (vq->event_idx)
        return vring_need_event(*avail_event(vq), now, old);
    return !(vq->used[U_FLAGS] & VRING_USED_F_NO_NOTIFY);
}

bool vq_has_used(const struct virtqueue *vq)
{
    return vq->used[U_IDX] != vq->last_used;
}

void *vq_get_used(struct virtqueue *vq, uint32_t *len)
{
    if (!vq_has_used(vq))
        return 0;
    // acquire: the used index before the entries it covers
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    volatile uint16_t *e = &vq->used[U_RING + 4 * (vq->last_used & (vq->size - 1))];
    uint32_t id = (uint32_t)e[0] | (uint32_t)e[1] << 16;
    uint32_t n = (uint32_t)e[2] | (uint32_t)e[3] << 16;
    vq->last_used++;
    // An id the device made up (past the table, or not a chain head we
    // gave it) is skipped: the queue may lose that chain, never the machine.
    if (id >= vq->size || !vq->tokens[id]) {
        *len = 0;
        return 0;
    }
    void *token = vq->tokens[id];
    vq->tokens[id] = 0;
    uint16_t i = (uint16_t)id, count = 1;
    while ((vq->desc[i].flags & VRING_DESC_F_NEXT) && count < vq->size) {
        i = vq->desc[i].next & (vq->size - 1);
        count++;
    }
    vq->desc[i].next = vq->free_head;
    vq->free_head = (uint16_t)id;
    vq->num_free = (uint16_t)(vq->num_free + count);
    *len = n;
    return token;
}

void vq_disable_cb(struct virtqueue *vq)
{
    if (vq->event_idx)
        *used_event(vq) = (uint16_t)(vq->last_used - 1);    // a wrap away
    else
        vq->avail[A_FLAGS] = VRING_AVAIL_F_NO_INTERRUPT;
}

static bool enable_at(struct virtqueue *vq, uint16_t event)
{
    if (vq->event_idx)
        *used_event(vq) = event;
    else
        vq->avail[A_FLAGS] = 0;
    // the request before the look at used->idx (see the top)
    device_mb();
    return !vq_has_used(vq);
}

bool vq_enable_cb(struct virtqueue *vq)
{
    return enable_at(vq, vq->last_used);
}

bool vq_enable_cb_delayed(struct virtqueue *vq)
{
    uint16_t outstanding = (uint16_t)(vq->avail_idx - vq->last_used);
    return enable_at(vq, (uint16_t)(vq->last_used + outstanding * 3 / 4));
}
