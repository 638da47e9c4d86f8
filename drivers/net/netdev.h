// SPDX-License-Identifier: MIT
// The network driver interface: what a NIC driver (virtio-net, e1000e)
// offers the code above it (the netpoller and lwIP's port, or the L2
// reflector), and all that code may assume about a NIC.
//
// A device is nqueues queue pairs. Each pair has a receive side and a
// transmit side that move whole Ethernet frames (destination MAC first, no
// FCS: devices add and strip it). Nothing here names a ring, a descriptor
// or a register: a driver keeps those to itself, so a device with one
// queue and legacy descriptors (e1000e) and one with many virtqueues fit
// alike.
//
// Who calls what. Every device has at most one consumer (netdev_attach),
// and the consumer guarantees, per queue pair:
//   - the receive side (rx_poll, irq_disable, irq_enable) is driven by one
//     context at a time: "the rx owner";
//   - the transmit side (xmit) is driven by one context at a time: "the tx
//     owner".
// The rx owner and the tx owner of one pair may run at once on different
// cores, and different pairs are independent. Which core owns a side may
// change at any time (a P moves, a lock changes hands): the driver keeps no
// per-core state, only per-queue state. No op blocks, takes a lock, or
// allocates: each may run in interrupt context or with interrupts off.
//
// How a frame's arrival reaches the consumer (the interrupt never
// processes a frame):
//   1. The device interrupts. The driver's handler, in interrupt context
//      on the core the queue's interrupt is aimed at (queue->cpu),
//      quiets the queue (as irq_disable) and calls the consumer's ready
//      function with NETDEV_EV_RX.
//   2. The consumer notes the queue ready and, later, in whatever context
//      it likes (normally a goroutine or the scheduler's poll), calls
//      rx_poll until it returns less than its budget.
//   3. The consumer calls irq_enable. When it returns false, frames came
//      while the interrupt was off and may never interrupt: go back to 2.
// The consumer is registered with the device (netdev_attach), not named
// by the driver: drivers/ sits below kernel/ and cannot call the
// netpoller, which attaches itself instead; the L2 reflector attaches the
// same way where no stack runs.
// Without a consumer the queues stay quiet: frames wait in the device (or
// are dropped by it when its ring is full) until one attaches and polls.
//
// Transmit copies. xmit copies the frame's fragments into the driver's
// own DMA buffers before it returns, so the caller's memory (a goroutine
// stack, which is not identity-mapped, or lwIP's pbufs) is free at once,
// and no completion callback exists. Under TCG the copy costs far less
// than the device model's own work on the frame; a zero-copy xmit with a
// completion event can be added beside this one if a measurement asks.
//
// Receive lends. rx_poll hands each frame to the consumer's deliver
// function as one contiguous (pointer, length), valid only until that call
// returns: the consumer copies or consumes it there, and the driver gives
// the buffer back to the device after it. A frame the device split over
// several buffers (virtio's mergeable buffers) is joined into a per-queue
// buffer first.
#ifndef GORO_NETDEV_H
#define GORO_NETDEV_H

#include <stdbool.h>
#include <stdint.h>

#define NETDEV_MAX 8                // devices registered at most
#define NETDEV_MAX_QUEUES 64        // queue pairs per device at most
#define NETDEV_NAME_MAX 16
#define ETH_ALEN 6
#define ETH_HLEN 14                 // destination, source, EtherType
#define ETH_VLAN_HLEN 4
// A header and nothing else (a driver whose wire needs 60 bytes pads).
#define NETDEV_MIN_FRAME ETH_HLEN

// features: what the device does for the consumer.
enum {
    // xmit computes one ones-complement checksum when asked
    // (struct netdev_tx): the TCP or UDP checksum of IPv4 and IPv6.
    NETDEV_F_TX_CSUM = 1u << 0,
    // rx_poll may mark a frame NETDEV_RX_CSUM_OK.
    NETDEV_F_RX_CSUM = 1u << 1,
};

// One piece of a frame to send: any readable memory of the caller's.
struct netdev_frag {
    const void *base;
    uint32_t len;
};

// A frame's transmit request. NULL, or flags 0: the frame goes as it is.
// NETDEV_TX_CSUM (only where features has NETDEV_F_TX_CSUM): the device
// sums the frame from csum_start to its end, as 16-bit ones-complement
// words, and stores the folded, inverted sum at csum_start + csum_offset.
// The caller first writes there the folded (not inverted) sum of the
// pseudo-header, so the result is the full TCP/UDP checksum; this is the
// "partial checksum" contract of virtio-net's NEEDS_CSUM and of the
// 82574's insert-checksum descriptors alike.
enum { NETDEV_TX_CSUM = 1u << 0 };
struct netdev_tx {
    uint16_t flags;
    uint16_t csum_start;            // bytes from the frame's first byte
    uint16_t csum_offset;           // bytes from csum_start: 16 for TCP, 6 for UDP
};

// What xmit did with a frame.
enum netdev_xmit_result {
    NETDEV_TX_OK = 0,       // queued for the wire; the caller's memory is free
    NETDEV_TX_BUSY,         // no room: not taken. The consumer's ready function
                            // gets NETDEV_EV_TX once there is room again
    NETDEV_TX_DROPPED,      // not a frame this device sends (too short, longer
                            // than netdev_max_frame, too many fragments, an
                            // offload it lacks): dropped and counted, never sent
};

// Flags rx_poll gives each frame.
enum {
    // The device checked the frame's TCP/UDP checksum (or the frame came
    // from the host with its checksum still to fill in, virtio's
    // NEEDS_CSUM, which is as good for a frame that ends here): the stack
    // need not check it. Without the flag, nothing is known.
    NETDEV_RX_CSUM_OK = 1u << 0,
};

// The consumer's receive function: frame (len bytes) is lent until it
// returns. Called by rx_poll, in rx_poll's caller's context; it may call
// xmit (on a queue whose tx side that context owns), never rx_poll of the
// same queue.
typedef void (*netdev_deliver_fn)(void *ctx, const void *frame, uint32_t len, uint32_t flags);

// Events for the consumer's ready function.
enum {
    NETDEV_EV_RX = 1u << 0,     // the queue has frames; its interrupt is now off
    NETDEV_EV_TX = 1u << 1,     // xmit said NETDEV_TX_BUSY and there is room now
    NETDEV_EV_LINK = 1u << 2,   // link_up changed (q is 0)
};

struct netdev;

// The consumer's ready function. Interrupt context, interrupts off, on
// the core the queue's interrupt reached (any core for NETDEV_EV_LINK):
// note the queue and wake whoever polls it; never poll here (the L2
// reflector, which has no stack, is the one exception it allows itself).
typedef void (*netdev_ready_fn)(void *ctx, struct netdev *dev, uint16_t q, uint32_t events);

// Per-queue counters. Each is written by one context only (named at it)
// with relaxed single-writer stores (netdev_stat_add); any core may read
// them, seeing each counter's value at some recent moment.
struct netdev_qstats {
    // the rx owner
    uint64_t rx_frames, rx_bytes;
    uint64_t rx_dropped;        // frames the driver threw away (errors, bad lengths)
    // the tx owner
    uint64_t tx_frames, tx_bytes;
    uint64_t tx_busy;           // NETDEV_TX_BUSY answers
    uint64_t tx_dropped;        // NETDEV_TX_DROPPED answers
    // the interrupt handler
    uint64_t irqs;
};

struct netdev_queue {
    // set by the driver at probe, read-only after registration
    uint32_t cpu;               // the core its interrupt is aimed at
    uint8_t vector;             // its interrupt vector (0: polled only)
    struct netdev_qstats stats;
};

struct netdev_ops {
    // The tx owner. Sends one frame made of nfrags fragments (their total
    // length is the frame's) on queue q; tx may be NULL. Copies before it
    // returns (see above).
    enum netdev_xmit_result (*xmit)(struct netdev *dev, uint16_t q, const struct netdev_frag *frags,
                                    uint32_t nfrags, const struct netdev_tx *tx);
    // The rx owner. Delivers at most budget received frames of queue q to
    // deliver, in the order they arrived, and gives their buffers back to
    // the device. Returns the frames taken from the device, delivered or
    // dropped (a bad one is counted in rx_dropped and not delivered); less
    // than budget means the queue was found empty.
    uint32_t (*rx_poll)(struct netdev *dev, uint16_t q, uint32_t budget, netdev_deliver_fn deliver,
                        void *ctx);
    // The rx owner. Turns queue q's interrupt off: no ready call for it
    // until irq_enable. (A ready call already on its way may still come.)
    void (*irq_disable)(struct netdev *dev, uint16_t q);
    // The rx owner. Turns queue q's interrupt on. False when frames are
    // already waiting, which may never interrupt: poll again (the
    // interrupt is on either way).
    bool (*irq_enable)(struct netdev *dev, uint16_t q);
};

struct netdev {
    // set by the driver before netdev_register, read-only after
    char name[NETDEV_NAME_MAX];     // "net0": netdev_register names it
    const char *driver;             // "virtio-net", "e1000e"
    char bus_info[24];              // where it is: "pci 0000:00:03.0"
    const char *irq_mode;           // "msi-x", "msi", "intx", "none"
    uint8_t mac[ETH_ALEN];
    uint16_t mtu;                   // payload bytes after the Ethernet header (1500)
    uint32_t features;              // NETDEV_F_*
    uint16_t nqueues;               // queue pairs, >= 1
    struct netdev_queue *queues;    // nqueues of them
    const struct netdev_ops *ops;
    void *priv;                     // the driver's own state

    // the driver's interrupt handler writes (release), anyone reads (acquire)
    bool link_up;

    // netdev.c only
    const struct netdev_consumer *consumer;
    uint32_t ready_calls_running;
    uint32_t index;
};

// The longest frame xmit sends and rx_poll delivers: the MTU, the
// Ethernet header and one VLAN tag.
static inline uint32_t netdev_max_frame(const struct netdev *dev)
{
    return (uint32_t)dev->mtu + ETH_HLEN + ETH_VLAN_HLEN;
}

// Any core. Whether the link is up now.
static inline bool netdev_link_up(const struct netdev *dev)
{
    return __atomic_load_n(&dev->link_up, __ATOMIC_ACQUIRE);   // acquire: pairs with netdev_set_link's release
}

// A counter's single writer adds n (see struct netdev_qstats).
static inline void netdev_stat_add(uint64_t *counter, uint64_t n)
{
    // relaxed: one writer; readers want a recent value, not an order
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

// ---- the registry (drivers/net/netdev.c) ----------------------------------

// A driver, at probe (boot, one core): adds dev, names it "netN" in
// registration order. Returns 0, or -1 when NETDEV_MAX are registered.
int netdev_register(struct netdev *dev);
// Any core, after boot. Devices registered, and the i-th (NULL past the last).
uint32_t netdev_count(void);
struct netdev *netdev_get(uint32_t i);

// A consumer: the one function the driver's interrupts call (see above).
struct netdev_consumer {
    netdev_ready_fn ready;
    void *ctx;
};
// Any context but interrupts. Makes c (which must outlive the
// attachment) dev's consumer. Returns 0, or -1 when dev has one already.
// Queues' interrupts stay as they were: the consumer turns them on with
// irq_enable, after polling once (frames may already wait).
int netdev_attach(struct netdev *dev, const struct netdev_consumer *c);
// Any context but interrupts, by the consumer, after irq_disable on every
// queue: returns once no ready call of c's is running on any core.
void netdev_detach(struct netdev *dev, const struct netdev_consumer *c);

// The driver's interrupt handler: tells the consumer, if any. Interrupt
// context, the queue already quiet (for NETDEV_EV_RX).
void netdev_ready(struct netdev *dev, uint16_t q, uint32_t events);
// The driver's interrupt handler: a new link state, then the consumer told.
void netdev_set_link(struct netdev *dev, bool up);

// ---- for the drivers' xmit (drivers/net/netdev.c) -------------------------

// The length of the frame frags make, when dev may send it with tx: at
// least NETDEV_MIN_FRAME, at most netdev_max_frame, and a checksum
// request only with NETDEV_F_TX_CSUM and its field inside the frame.
// 0 when not: xmit counts the frame dropped (a device with narrower
// limits checks those after).
uint32_t netdev_tx_len(const struct netdev *dev, const struct netdev_frag *frags, uint32_t nfrags,
                       const struct netdev_tx *tx);
// Copies the fragments one after another to dst, which has room for them.
// Inline: the transmit backlog (net/txq.c) uses it where netdev.c is not linked.
static inline void netdev_frags_copy(uint8_t *dst, const struct netdev_frag *frags, uint32_t nfrags)
{
    for (uint32_t i = 0; i < nfrags; i++) {
        __builtin_memcpy(dst, frags[i].base, frags[i].len);
        dst += frags[i].len;
    }
}

#endif
