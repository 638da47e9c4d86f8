// SPDX-License-Identifier: MIT
// virtio-net (virtio 1.2, 5.1), modern and legacy, behind the netdev
// interface (drivers/net/netdev.h).
//
// A queue pair is receive virtqueue 2i and transmit virtqueue 2i + 1; with
// VIRTIO_NET_F_MQ there is one pair per core up to the device's maximum,
// each pair's interrupt (one MSI-X entry for both of its queues) aimed at
// its own core, and its rings and buffers on that core's node. Without
// MSI-X the device has one pair and one shared interrupt.
//
// Buffers: every receive buffer is VNET_BUF bytes, one descriptor (or a
// header descriptor and a data descriptor for a legacy device that did not
// offer ANY_LAYOUT), posted once and given back after each frame is
// delivered. With mergeable receive buffers a frame longer than one buffer
// spans several (the header's num_buffers) and is joined into the queue's
// scratch buffer: that is how a device's MTU above VNET_BUF (F_MTU, up to
// VNET_MAX_MTU) is received. Each transmit bounce buffer holds one whole
// frame behind its header (tx_buf bytes), the frame copied in; a pair has
// VNET_TX_BYTES of them, so a larger MTU means fewer frames in flight, not
// more memory.
//
// Interrupts: the receive queue's interrupt is on while the consumer has
// it on (irq_enable); the transmit queue's only while a NETDEV_TX_BUSY
// waits for room. The pair's handler quiets the receive queue and tells
// the consumer; it never touches a frame.
#include "drivers/net/virtio_net.h"
#include "drivers/net/netdev.h"
#include "drivers/net/virtio_pci.h"
#include "drivers/net/virtqueue.h"
#include "drivers/dma.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "arch/arch.h"

// Feature bits (5.1.3).
#define F_CSUM 0
#define F_GUEST_CSUM 1
#define F_MTU 3
#define F_MAC 5
#define F_MRG_RXBUF 15
#define F_STATUS 16
#define F_CTRL_VQ 17
#define F_MQ 22
#define BIT(n) (1ull << (n))

// The header before every frame (5.1.6).
struct vnet_hdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
    uint16_t num_buffers;       // with F_MRG_RXBUF or VERSION_1 only
};
#define HDR_F_NEEDS_CSUM 1
#define HDR_F_DATA_VALID 2

// Device configuration (5.1.4).
#define CFG_MAC 0
#define CFG_STATUS 6
#define CFG_MAX_PAIRS 8
#define CFG_MTU 10
#define STATUS_LINK_UP 1

// The control queue's multiqueue command (5.1.6.5.5).
#define CTRL_MQ 4
#define CTRL_MQ_VQ_PAIRS_SET 0
#define CTRL_OK 0

#define VNET_BUF 2048
#define VNET_MAX_MTU 9000       // a jumbo frame: the largest MTU taken from a device
#define VNET_TX_BYTES (256 * VNET_BUF)  // transmit bounce buffers per pair
#define VNET_QSIZE 256          // at most, per virtqueue (modern devices let us choose)
#define VNET_CTRL_QSIZE 64

struct vnet;

struct vnet_queue {
    struct vnet *vn;
    uint16_t index;
    // the rx owner
    struct virtqueue rx;
    uint32_t rx_notify;
    uint8_t *rx_bufs;
    uint8_t *scratch;           // a frame joined from several buffers
    // the tx owner
    struct virtqueue tx;
    uint32_t tx_notify;
    uint8_t *tx_bufs;
    uint16_t *tx_free;          // free bounce buffers, a stack
    uint16_t tx_nfree;
    bool tx_cb_on;              // the transmit queue's interrupt is asked for
    // atomic: the owners and the interrupt handler
    bool irq_on;                // receive interrupt on (the consumer's irq_enable)
    bool tx_waiting;            // a NETDEV_TX_BUSY waits for room
};

struct vnet {
    struct netdev nd;
    struct virtio_pci vp;
    uint64_t features;
    uint32_t hdr_len;           // 12, or 10 for a legacy device without mergeable buffers
    uint32_t tx_buf;            // bytes of a transmit bounce buffer: a header and a whole frame
    bool mrg;
    bool split;                 // header and frame in separate descriptors
    enum pci_irq_mode irq;
    struct vnet_queue *q;
    // the control queue (multiqueue's one command), set up before DRIVER_OK
    struct virtqueue cvq;
    uint16_t cvq_index;
    uint32_t cvq_notify;
};

static struct vnet *of(struct netdev *nd)
{
    return (struct vnet *)nd->priv;
}

static void notify(struct vnet *vn, uint16_t vq_index, uint32_t off)
{
    vp_notify(&vn->vp, vq_index, off);
}

// ---- receive --------------------------------------------------------------------

// Gives buffer buf (VNET_BUF bytes) to the device. The rx owner.
static void rx_post(struct vnet *vn, struct vnet_queue *q, uint8_t *buf)
{
    struct vq_buf b[2] = {
        { dma_addr(buf), VNET_BUF, true },
        { dma_addr(buf + vn->hdr_len), VNET_BUF - vn->hdr_len, true },
    };
    if (vn->split)
        b[0].len = vn->hdr_len;
    // Cannot fail: a queue has exactly as many buffers as it holds chains.
    bool ok = vq_add(&q->rx, b, vn->split ? 2 : 1, buf);
    (void)ok;
}

// Takes the rest of a frame that spans n buffers (the first, len bytes of
// it after the header, is in buf): joined into the scratch buffer, all n
// given back. Returns the frame's length, 0 when it was dropped.
static uint32_t rx_join(struct vnet *vn, struct vnet_queue *q, uint8_t *buf, uint32_t len,
                        uint16_t n)
{
    uint32_t max = netdev_max_frame(&vn->nd), total = 0;
    bool ok = len <= max;
    if (ok) {
        memcpy(q->scratch, buf + vn->hdr_len, len);
        total = len;
    }
    rx_post(vn, q, buf);
    for (uint16_t k = 1; k < n; k++) {
        uint32_t blen;
        if (!vq_has_used(&q->rx))
            return 0;               // the device said more buffers than it used
        uint8_t *b = vq_get_used(&q->rx, &blen);
        if (!b)
            return 0;
        if (ok && blen <= VNET_BUF && total + blen <= max) {
            memcpy(q->scratch + total, b, blen);
            total += blen;
        } else {
            ok = false;
        }
        rx_post(vn, q, b);
    }
    return ok ? total : 0;
}

static uint32_t vnet_rx_poll(struct netdev *nd, uint16_t qi, uint32_t budget,
                             netdev_deliver_fn deliver, void *ctx)
{
    struct vnet *vn = of(nd);
    struct vnet_queue *q = &vn->q[qi];
    struct netdev_qstats *st = &nd->queues[qi].stats;
    uint32_t n = 0;
    while (n < budget && vq_has_used(&q->rx)) {
        uint32_t len;
        uint8_t *buf = vq_get_used(&q->rx, &len);
        n++;
        if (!buf) {
            netdev_stat_add(&st->rx_dropped, 1);    // an entry the device made up
            continue;
        }
        const struct vnet_hdr *h = (const struct vnet_hdr *)buf;
        uint16_t nbufs = vn->mrg ? h->num_buffers : 1;
        uint32_t flags = (vn->features & BIT(F_GUEST_CSUM)) &&
                         (h->flags & (HDR_F_DATA_VALID | HDR_F_NEEDS_CSUM)) ? NETDEV_RX_CSUM_OK : 0;
        if (len < vn->hdr_len || len > VNET_BUF || nbufs == 0) {
            rx_post(vn, q, buf);
            netdev_stat_add(&st->rx_dropped, 1);
            continue;
        }
        uint32_t flen = len - vn->hdr_len;
        const uint8_t *frame = buf + vn->hdr_len;
        bool joined = nbufs > 1;
        if (joined) {
            flen = rx_join(vn, q, buf, flen, nbufs);
            frame = q->scratch;
        }
        if (flen < ETH_HLEN || flen > netdev_max_frame(nd)) {
            if (!joined)
                rx_post(vn, q, buf);
            netdev_stat_add(&st->rx_dropped, 1);
            continue;
        }
        deliver(ctx, frame, flen, flags);
        if (!joined)
            rx_post(vn, q, buf);
        netdev_stat_add(&st->rx_frames, 1);
        netdev_stat_add(&st->rx_bytes, flen);
    }
    if (n && vq_kick_prepare(&q->rx))
        notify(vn, (uint16_t)(2 * qi), q->rx_notify);
    return n;
}

static void vnet_irq_disable(struct netdev *nd, uint16_t qi)
{
    struct vnet_queue *q = &of(nd)->q[qi];
    __atomic_store_n(&q->irq_on, false, __ATOMIC_RELAXED);     // relaxed: the handler only tests it
    vq_disable_cb(&q->rx);
}

static bool vnet_irq_enable(struct netdev *nd, uint16_t qi)
{
    struct vnet_queue *q = &of(nd)->q[qi];
    // seq_cst: on before the ring's request, so that an interrupt it lets
    // through finds it on (the handler's exchange pairs with this)
    __atomic_store_n(&q->irq_on, true, __ATOMIC_SEQ_CST);
    return vq_enable_cb(&q->rx);
}

// ---- transmit -------------------------------------------------------------------

static void tx_reclaim(struct vnet_queue *q)
{
    while (vq_has_used(&q->tx)) {
        uint32_t len;
        uint8_t *b = vq_get_used(&q->tx, &len);
        if (b)
            q->tx_free[q->tx_nfree++] = (uint16_t)((uint32_t)(b - q->tx_bufs) / q->vn->tx_buf);
    }
}

static enum netdev_xmit_result vnet_xmit(struct netdev *nd, uint16_t qi,
                                         const struct netdev_frag *frags, uint32_t nfrags,
                                         const struct netdev_tx *tx)
{
    struct vnet *vn = of(nd);
    struct vnet_queue *q = &vn->q[qi];
    struct netdev_qstats *st = &nd->queues[qi].stats;
    uint32_t total = netdev_tx_len(nd, frags, nfrags, tx);
    bool csum = tx && (tx->flags & NETDEV_TX_CSUM);
    if (!total) {
        netdev_stat_add(&st->tx_dropped, 1);
        return NETDEV_TX_DROPPED;
    }
    tx_reclaim(q);
    uint16_t need = vn->split ? 2 : 1;
    if (!q->tx_nfree || q->tx.num_free < need) {
        __atomic_store_n(&q->tx_waiting, true, __ATOMIC_SEQ_CST);  // seq_cst: before the ring's request, as irq_enable
        q->tx_cb_on = true;
        if (vq_enable_cb_delayed(&q->tx))
            goto busy;
        tx_reclaim(q);                  // room came meanwhile
        if (!q->tx_nfree || q->tx.num_free < need)
            goto busy;
    }
    if (q->tx_cb_on && !__atomic_load_n(&q->tx_waiting, __ATOMIC_RELAXED)) {   // relaxed: a hint
        vq_disable_cb(&q->tx);
        q->tx_cb_on = false;
    }
    uint16_t slot = q->tx_free[--q->tx_nfree];
    uint8_t *b = q->tx_bufs + (uint32_t)slot * vn->tx_buf;
    struct vnet_hdr *h = (struct vnet_hdr *)b;
    memset(h, 0, vn->hdr_len);
    if (csum) {
        h->flags = HDR_F_NEEDS_CSUM;
        h->csum_start = tx->csum_start;
        h->csum_offset = tx->csum_offset;
    }
    netdev_frags_copy(b + vn->hdr_len, frags, nfrags);
    struct vq_buf d[2] = {
        { dma_addr(b), (uint32_t)(vn->hdr_len + total), false },
        { dma_addr(b + vn->hdr_len), total, false },
    };
    if (vn->split)
        d[0].len = vn->hdr_len;
    bool ok = vq_add(&q->tx, d, need, b);
    (void)ok;
    if (vq_kick_prepare(&q->tx))
        notify(vn, (uint16_t)(2 * qi + 1), q->tx_notify);
    netdev_stat_add(&st->tx_frames, 1);
    netdev_stat_add(&st->tx_bytes, total);
    return NETDEV_TX_OK;
busy:
    netdev_stat_add(&st->tx_busy, 1);
    return NETDEV_TX_BUSY;
}

static const struct netdev_ops vnet_ops = {
    .xmit = vnet_xmit,
    .rx_poll = vnet_rx_poll,
    .irq_disable = vnet_irq_disable,
    .irq_enable = vnet_irq_enable,
};

// ---- interrupts -----------------------------------------------------------------

// A pair's interrupt. Interrupt context, on the pair's core.
static void queue_irq(void *arg)
{
    struct vnet_queue *q = arg;
    struct netdev *nd = &q->vn->nd;
    netdev_stat_add(&nd->queues[q->index].stats.irqs, 1);
    uint32_t ev = 0;
    if (__atomic_exchange_n(&q->irq_on, false, __ATOMIC_SEQ_CST)) {    // seq_cst: pairs with vnet_irq_enable
        vq_disable_cb(&q->rx);
        ev |= NETDEV_EV_RX;
    }
    if (__atomic_exchange_n(&q->tx_waiting, false, __ATOMIC_SEQ_CST))  // seq_cst: pairs with vnet_xmit
        ev |= NETDEV_EV_TX;
    if (ev)
        netdev_ready(nd, q->index, ev);
}

static void link_check(struct vnet *vn)
{
    bool up = !(vn->features & BIT(F_STATUS)) || (vp_config16(&vn->vp, CFG_STATUS) & STATUS_LINK_UP);
    netdev_set_link(&vn->nd, up);
}

static void config_irq(void *arg)
{
    link_check(arg);
}

// MSI or INTx: one interrupt for everything; the ISR says what (and,
// read, lowers the line).
static void shared_irq(void *arg)
{
    struct vnet *vn = arg;
    uint8_t isr = vp_isr(&vn->vp);
    if (isr & 1)
        queue_irq(&vn->q[0]);
    if (isr & 2)
        link_check(vn);
}

// ---- set-up ---------------------------------------------------------------------

static const char *setup_queue(struct vnet *vn, struct virtqueue *vq, uint16_t index, uint32_t cpu,
                               uint16_t msix_entry, uint32_t *notify_off, uint16_t want)
{
    uint16_t size = vp_queue_size(&vn->vp, index, want);
    if (!size || (size & (size - 1)) || size > VQ_MAX_SIZE)
        return "a queue of no usable size";
    size_t bytes = vq_bytes(size, 0, 0);
    void *mem = dma_alloc(bytes, cpu);
    void **tokens = dma_alloc(sizeof(void *) * size, cpu);
    vq_init(vq, size, mem, tokens, vn->features & BIT(VIRTIO_F_RING_EVENT_IDX));
    if (!vp_queue_setup(&vn->vp, index, size, vq_desc_addr(vq), vq_avail_addr(vq), vq_used_addr(vq),
                        msix_entry, notify_off))
        return "a queue the device would not take (its vector or notify address)";
    return 0;
}

static const char *setup_pair(struct vnet *vn, uint16_t i, uint32_t cpu, uint16_t msix_entry)
{
    struct vnet_queue *q = &vn->q[i];
    q->vn = vn;
    q->index = i;
    const char *err = setup_queue(vn, &q->rx, (uint16_t)(2 * i), cpu, msix_entry, &q->rx_notify, VNET_QSIZE);
    if (!err)
        err = setup_queue(vn, &q->tx, (uint16_t)(2 * i + 1), cpu, msix_entry, &q->tx_notify, VNET_QSIZE);
    if (err)
        return err;
    uint16_t nrx = vn->split ? q->rx.size / 2 : q->rx.size;
    uint16_t ntx = vn->split ? q->tx.size / 2 : q->tx.size;
    if (ntx > VNET_TX_BYTES / vn->tx_buf)
        ntx = (uint16_t)(VNET_TX_BYTES / vn->tx_buf);
    q->rx_bufs = dma_alloc((size_t)nrx * VNET_BUF, cpu);
    q->tx_bufs = dma_alloc((size_t)ntx * vn->tx_buf, cpu);
    q->tx_free = dma_alloc(sizeof(uint16_t) * ntx, cpu);
    q->scratch = dma_alloc(netdev_max_frame(&vn->nd), cpu);
    for (uint16_t k = 0; k < ntx; k++)
        q->tx_free[q->tx_nfree++] = k;
    for (uint16_t k = 0; k < nrx; k++)
        rx_post(vn, q, q->rx_bufs + (uint32_t)k * VNET_BUF);
    vq_disable_cb(&q->rx);
    vq_disable_cb(&q->tx);
    return 0;
}

// The control queue's one command: the number of pairs in use. Polled
// (after DRIVER_OK): the device answers before it returns from the
// notification under QEMU, and a bounded wait gives up on one that does not.
static bool set_pairs(struct vnet *vn, uint16_t pairs)
{
    struct virtqueue *cvq = &vn->cvq;
    uint8_t *m = dma_alloc(64, 0);
    m[0] = CTRL_MQ;
    m[1] = CTRL_MQ_VQ_PAIRS_SET;
    memcpy(m + 2, &pairs, 2);
    m[8] = 0xFF;
    struct vq_buf b[3] = { { dma_addr(m), 2, false }, { dma_addr(m + 2), 2, false },
                           { dma_addr(m + 8), 1, true } };
    vq_add(cvq, b, 3, m);
    vq_kick_prepare(cvq);
    notify(vn, vn->cvq_index, vn->cvq_notify);
    uint32_t len;
    for (uint32_t i = 0; i < 10000000 && !vq_has_used(cvq); i++)
        cpu_relax();
    return vq_get_used(cvq, &len) == m && m[8] == CTRL_OK;
}

// The interrupt mode and the pairs it allows: MSI-X with an entry per
// pair and one for configuration changes, else one pair on MSI or INTx.
static uint16_t setup_irq_mode(struct vnet *vn, uint16_t want_pairs)
{
    struct pci_func *f = vn->vp.f;
    enum pci_irq_mode allowed = pci_irq_mode_allowed();
    if (allowed >= PCI_IRQ_MSIX && f->msix.cap && f->msix.nvec >= 2) {
        int n = pci_msix_begin(f);
        if (n >= 2) {
            vn->irq = PCI_IRQ_MSIX;
            vn->vp.msix = true;
            return (uint16_t)(want_pairs < n - 1 ? want_pairs : n - 1);
        }
    }
    vn->irq = allowed >= PCI_IRQ_MSI && f->msi.cap ? PCI_IRQ_MSI : allowed >= PCI_IRQ_INTX ? PCI_IRQ_INTX
                                                                                          : PCI_IRQ_NONE;
    return 1;
}

static bool route_irqs(struct vnet *vn)
{
    struct pci_func *f = vn->vp.f;
    struct netdev *nd = &vn->nd;
    if (vn->irq == PCI_IRQ_MSIX) {
        for (uint16_t i = 0; i < nd->nqueues; i++) {
            int v = pci_msix_route(f, i, i % arch_ncpu(), queue_irq, &vn->q[i], &nd->queues[i].cpu);
            if (v < 0)
                return false;
            nd->queues[i].vector = (uint8_t)v;
        }
        if (pci_msix_route(f, nd->nqueues, 0, config_irq, vn, 0) < 0)
            return false;
        pci_msix_end(f);
        return true;
    }
    int v = -1;
    if (vn->irq == PCI_IRQ_MSI)
        v = pci_msi_route(f, 0, shared_irq, vn, &nd->queues[0].cpu);
    if (v < 0 && vn->irq >= PCI_IRQ_INTX) {
        vn->irq = PCI_IRQ_INTX;
        v = pci_intx_route(f, 0, shared_irq, vn, &nd->queues[0].cpu);
    }
    if (v < 0) {
        vn->irq = PCI_IRQ_NONE;
        return true;                    // polled only
    }
    nd->queues[0].vector = (uint8_t)v;
    return true;
}

static const char *negotiate(struct vnet *vn)
{
    uint64_t offered = vp_device_features(&vn->vp);
    uint64_t want = BIT(F_CSUM) | BIT(F_GUEST_CSUM) | BIT(F_MTU) | BIT(F_MAC) | BIT(F_MRG_RXBUF) |
                    BIT(F_STATUS) | BIT(F_CTRL_VQ) | BIT(F_MQ) | BIT(VIRTIO_F_RING_EVENT_IDX);
    if (vn->vp.legacy)
        want |= BIT(VIRTIO_F_ANY_LAYOUT);
    else
        want |= BIT(VIRTIO_F_VERSION_1);
    if (!vn->vp.legacy && !(offered & BIT(VIRTIO_F_VERSION_1)))
        return "a modern interface without VERSION_1";
    vn->features = offered & want;
    if (!(vn->features & BIT(F_CTRL_VQ)))
        vn->features &= ~BIT(F_MQ);
    if (!vp_set_features(&vn->vp, vn->features))
        return "features refused (FEATURES_OK did not stay)";
    vn->mrg = vn->features & BIT(F_MRG_RXBUF);
    vn->hdr_len = vn->vp.legacy && !vn->mrg ? 10 : 12;
    vn->split = vn->vp.legacy && !(vn->features & BIT(VIRTIO_F_ANY_LAYOUT));
    return 0;
}

static void read_config(struct vnet *vn)
{
    struct netdev *nd = &vn->nd;
    if (vn->features & BIT(F_MAC)) {
        for (int i = 0; i < ETH_ALEN; i++)
            nd->mac[i] = vp_config8(&vn->vp, CFG_MAC + i);
    } else {
        // No MAC from the device: a locally administered one from the TSC.
        uint64_t t = arch_cycles();
        uint8_t mac[ETH_ALEN] = { 0x02, 0x60, (uint8_t)(t >> 24), (uint8_t)(t >> 16), (uint8_t)(t >> 8),
                                  (uint8_t)t };
        memcpy(nd->mac, mac, ETH_ALEN);
    }
    // The device's MTU is the most it takes (5.1.4.1): a smaller one is
    // used as it is, a larger one up to what the buffers hold.
    nd->mtu = 1500;
    if (vn->features & BIT(F_MTU)) {
        uint32_t mtu = vp_config16(&vn->vp, CFG_MTU);
        uint32_t most = vn->mrg ? VNET_MAX_MTU : VNET_BUF - vn->hdr_len - ETH_HLEN - ETH_VLAN_HLEN;
        if (mtu >= 68)
            nd->mtu = (uint16_t)(mtu < most ? mtu : most);
    }
    vn->tx_buf = (vn->hdr_len + netdev_max_frame(nd) + 63) & ~63u;
    nd->features = 0;
    if (vn->features & BIT(F_CSUM))
        nd->features |= NETDEV_F_TX_CSUM;
    if (vn->features & BIT(F_GUEST_CSUM))
        nd->features |= NETDEV_F_RX_CSUM;
}

static void fail(struct vnet *vn, const char *why)
{
    struct pci_func *f = vn->vp.f;
    kprintf("virtio-net: %02x:%02x.%x: %s; not used\n", f->bus, f->dev, f->fn, why);
    vp_set_status(&vn->vp, VIRTIO_STATUS_FAILED);
}

static bool setup(struct pci_func *f)
{
    struct vnet *vn = dma_alloc(sizeof *vn, 0);
    if (!vp_open(&vn->vp, f, "virtio-net"))
        return false;
    pci_enable(f);
    uint32_t ncpu = arch_ncpu();
    uint16_t want = (uint16_t)(ncpu < NETDEV_MAX_QUEUES ? ncpu : NETDEV_MAX_QUEUES);
    uint16_t pairs = setup_irq_mode(vn, want);
    if (!vp_reset(&vn->vp)) {
        fail(vn, "a reset that never finished");
        return false;
    }
    const char *err = negotiate(vn);
    if (err) {
        fail(vn, err);
        return false;
    }
    read_config(vn);
    uint16_t max_pairs = 1;
    if (vn->features & BIT(F_MQ)) {
        max_pairs = vp_config16(&vn->vp, CFG_MAX_PAIRS);
        if (max_pairs < 1)
            max_pairs = 1;
    }
    if (pairs > max_pairs)
        pairs = max_pairs;
    struct netdev *nd = &vn->nd;
    nd->driver = "virtio-net";
    snprintf(nd->bus_info, sizeof nd->bus_info, "pci %04x:%02x:%02x.%x", f->segment, f->bus, f->dev, f->fn);
    nd->ops = &vnet_ops;
    nd->priv = vn;
    nd->nqueues = pairs;
    nd->queues = dma_alloc(sizeof(struct netdev_queue) * pairs, 0);
    vn->q = dma_alloc(sizeof(struct vnet_queue) * pairs, 0);
    if (vn->irq == PCI_IRQ_MSIX && !vp_config_vector(&vn->vp, pairs)) {
        fail(vn, "its configuration vector refused");
        return false;
    }
    for (uint16_t i = 0; i < pairs && !err; i++)
        err = setup_pair(vn, i, arch_irq_cpu(i % ncpu), vn->irq == PCI_IRQ_MSIX ? i : VIRTIO_NO_VECTOR);
    if (!err && (vn->features & BIT(F_MQ))) {
        vn->cvq_index = (uint16_t)(2 * max_pairs);
        err = setup_queue(vn, &vn->cvq, vn->cvq_index, 0, VIRTIO_NO_VECTOR, &vn->cvq_notify, VNET_CTRL_QSIZE);
    }
    if (!err && !route_irqs(vn))
        err = "no interrupt vector left";
    if (err) {
        fail(vn, err);
        return false;
    }
    vp_set_status(&vn->vp, VIRTIO_STATUS_DRIVER_OK);
    if (vn->features & BIT(F_MQ) && !set_pairs(vn, pairs)) {
        kprintf("virtio-net: %02x:%02x.%x: the device refused %u queue pairs; using 1\n", f->bus, f->dev,
                f->fn, pairs);
        nd->nqueues = 1;
    }
    for (uint16_t i = 0; i < nd->nqueues; i++) {
        vq_kick_prepare(&vn->q[i].rx);          // the receive buffers, published
        notify(vn, (uint16_t)(2 * i), vn->q[i].rx_notify);
    }
    nd->irq_mode = pci_irq_mode_name(vn->irq);
    link_check(vn);
    if (netdev_register(nd) != 0)
        return false;
    kprintf("%s: virtio-net (%s) at %02x:%02x.%x, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, %u queue "
            "pair%s, %s, %s%s, link %s\n", nd->name, vn->vp.legacy ? "legacy" : "modern", f->bus,
            f->dev, f->fn, nd->mac[0], nd->mac[1], nd->mac[2], nd->mac[3], nd->mac[4], nd->mac[5],
            nd->mtu, nd->nqueues, nd->nqueues == 1 ? "" : "s", nd->irq_mode,
            vn->mrg ? "mergeable buffers" : "whole buffers",
            nd->features & NETDEV_F_TX_CSUM ? ", checksum offload" : "", netdev_link_up(nd) ? "up" : "down");
    return true;
}

void virtio_net_probe(struct pci_func *f)
{
    if (pci_claim(f, "virtio-net") && !setup(f))
        pci_release(f);
}
