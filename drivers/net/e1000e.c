// SPDX-License-Identifier: MIT
// The Intel 82574L (QEMU's -device e1000e) behind the netdev interface
// (drivers/net/netdev.h). Register names and bits from Intel's 82574
// datasheet (chapter 10, "Device Registers"); what QEMU's model does with
// them checked against hw/net/e1000e_core.c.
//
// One queue pair (the 82574 has two receive queues for RSS, which a
// single pair does not need), legacy receive descriptors, legacy transmit
// descriptors, and for a checksum request a TCP/IP context descriptor
// followed by an extended data descriptor (QEMU's model does not act on a
// legacy descriptor's checksum fields).
//
// Interrupts: with MSI-X, vector 0 for the queue pair (IVAR: receive queue
// 0 and transmit queue 0) and vector 1 for "other" (the link); EIAC clears
// and masks a cause when its message is sent, which is exactly the
// netdev rule that the interrupt leaves the queue quiet. With MSI or INTx,
// one vector: the handler reads ICR (which clears it and lowers the line)
// and masks the receive cause itself.
#include "drivers/net/e1000e.h"
#include "drivers/net/netdev.h"
#include "drivers/dma.h"
#include "drivers/pci/pci.h"
#include "lib/printf.h"
#include "arch/arch.h"

// Registers (datasheet 10.2).
enum {
    CTRL = 0x00000, STATUS = 0x00008, EERD = 0x00014, CTRL_EXT = 0x00018,
    ICR = 0x000C0, ICS = 0x000C8, IMS = 0x000D0, IMC = 0x000D8, EIAC = 0x000DC, IAM = 0x000E0,
    IVAR = 0x000E4,
    RCTL = 0x00100, TCTL = 0x00400, TIPG = 0x00410,
    RDBAL = 0x02800, RDBAH = 0x02804, RDLEN = 0x02808, RDH = 0x02810, RDT = 0x02818, RDTR = 0x02820,
    RADV = 0x0282C,
    TDBAL = 0x03800, TDBAH = 0x03804, TDLEN = 0x03808, TDH = 0x03810, TDT = 0x03818, TIDV = 0x03820,
    TADV = 0x0382C, TARC0 = 0x03840,
    RXCSUM = 0x05000, MTA = 0x05200, RAL0 = 0x05400, RAH0 = 0x05404,
};
#define CTRL_SLU (1u << 6)
#define CTRL_RST (1u << 26)
#define STATUS_LU (1u << 1)
#define EERD_START 1u
#define EERD_DONE (1u << 1)
#define EERD_ADDR_SHIFT 2
#define RAH_AV (1u << 31)
#define RCTL_EN (1u << 1)
#define RCTL_BAM (1u << 15)
#define RCTL_SECRC (1u << 26)           // strip the CRC
#define TCTL_EN (1u << 1)
#define TCTL_PSP (1u << 3)              // pad short frames to 64 bytes
#define TCTL_CT (0x0Fu << 4)
#define TCTL_COLD (0x3Fu << 12)
#define TARC_ENABLE (1u << 10)
#define RXCSUM_IPOFLD (1u << 8)
#define RXCSUM_TUOFLD (1u << 9)
// Interrupt causes (ICR, IMS, IMC, EIAC).
#define INT_TXDW (1u << 0)
#define INT_LSC (1u << 2)
#define INT_RXO (1u << 6)
#define INT_RXT0 (1u << 7)
#define INT_RXQ0 (1u << 20)
#define INT_TXQ0 (1u << 22)
#define INT_OTHER (1u << 24)
// IVAR: a 4-bit field per cause, the vector in bits 2:0 and bit 3 valid.
#define IVAR_VALID 8u
#define IVAR_RXQ0(v) ((IVAR_VALID | (v)) << 0)
#define IVAR_TXQ0(v) ((IVAR_VALID | (v)) << 8)
#define IVAR_OTHER(v) ((IVAR_VALID | (v)) << 16)

// Descriptors (datasheet 7.1.4, 7.2.10).
struct rx_desc {
    uint64_t addr;
    uint16_t length;
    uint16_t csum;
    uint8_t status;
    uint8_t errors;
    uint16_t special;
};
#define RXS_DD (1u << 0)
#define RXS_EOP (1u << 1)
#define RXS_IXSM (1u << 2)
#define RXS_UDPCS (1u << 4)
#define RXS_TCPCS (1u << 5)
#define RXE_FRAME 0x97u                 // CE, SE, SEQ, CXE, RXE: a frame not to trust
#define RXE_TCPE (1u << 5)

struct tx_desc {
    uint64_t addr;
    uint32_t lower;                     // legacy: length, CSO, CMD; data: length, DTYP, DCMD
    uint32_t upper;                     // legacy: STA, CSS, special; data: STA, POPTS, special
};
#define TXC_EOP (1u << 24)
#define TXC_IFCS (1u << 25)
#define TXC_RS (1u << 27)
#define TXC_DEXT (1u << 29)
#define TXD_DTYP_DATA (1u << 20)
#define TXS_DD 1u
#define TXP_TXSM (1u << 9)              // in upper: POPTS bit 1
// A TCP/IP context descriptor: where the L4 sum starts (TUCSS), where it
// goes (TUCSO), where it ends (TUCSE, 0: the frame's end).
struct tx_ctx {
    uint32_t ip;                        // IPCSS, IPCSO, IPCSE: unused (no IP header sum)
    uint32_t tu;                        // TUCSS | TUCSO << 8 | TUCSE << 16
    uint32_t cmd;                       // DEXT, DTYP 0000 (context)
    uint32_t seg;
};

#define NRX 256
#define NTX 256
#define BUF 2048

struct e1000e {
    struct netdev nd;
    struct pci_func *f;
    volatile uint8_t *regs;
    enum pci_irq_mode irq;
    struct netdev_queue q;
    // the rx owner
    struct rx_desc *rx;
    uint8_t *rx_bufs;
    uint16_t rx_next;                   // the next descriptor the device fills
    // the tx owner
    struct tx_desc *tx;
    uint8_t *tx_bufs;
    uint16_t tx_tail;                   // the next descriptor to fill
    uint16_t tx_clean;                  // the oldest descriptor not yet reclaimed
    uint16_t ctx_start, ctx_offset;     // the checksum context the device has (0, 0: none)
    // atomic: the owners and the interrupt handler
    bool irq_on;
    bool tx_waiting;
};

static uint32_t rd(struct e1000e *e, uint32_t reg)
{
    return *(volatile uint32_t *)(e->regs + reg);
}

static void wr(struct e1000e *e, uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(e->regs + reg) = v;
}

static struct e1000e *of(struct netdev *nd)
{
    return (struct e1000e *)nd->priv;
}

// ---- receive --------------------------------------------------------------------

static bool rx_ready(const struct e1000e *e)
{
    return __atomic_load_n(&e->rx[e->rx_next].status, __ATOMIC_ACQUIRE) & RXS_DD;   // acquire: the device's writes before DD
}

// Gives descriptor i back to the device: its buffer, status cleared.
static void rx_refill(struct e1000e *e, uint16_t i)
{
    e->rx[i].addr = dma_addr(e->rx_bufs + (uint32_t)i * BUF);
    e->rx[i].status = 0;
    e->rx[i].errors = 0;
}

static uint32_t e1000e_rx_poll(struct netdev *nd, uint16_t qi, uint32_t budget,
                               netdev_deliver_fn deliver, void *ctx)
{
    struct e1000e *e = of(nd);
    struct netdev_qstats *st = &nd->queues[qi].stats;
    uint32_t n = 0;
    bool gave = false;
    bool in_chain = false;          // inside a frame longer than one buffer: dropped whole
    while (n < budget && rx_ready(e)) {
        uint16_t i = e->rx_next;
        struct rx_desc *d = &e->rx[i];
        uint8_t status = d->status, errors = d->errors;
        uint32_t len = d->length;
        bool eop = status & RXS_EOP;
        bool bad = in_chain || !eop || (errors & RXE_FRAME) || len < ETH_HLEN || len > netdev_max_frame(nd) ||
                   len > BUF;
        if (!bad) {
            uint32_t flags = 0;
            if (!(status & RXS_IXSM) && (status & (RXS_TCPCS | RXS_UDPCS)) && !(errors & RXE_TCPE))
                flags |= NETDEV_RX_CSUM_OK;
            deliver(ctx, e->rx_bufs + (uint32_t)i * BUF, len, flags);
            netdev_stat_add(&st->rx_frames, 1);
            netdev_stat_add(&st->rx_bytes, len);
        } else if (eop) {
            netdev_stat_add(&st->rx_dropped, 1);
        }
        in_chain = !eop;
        rx_refill(e, i);
        e->rx_next = (uint16_t)((i + 1) % NRX);
        gave = true;
        n++;
    }
    if (gave) {
        // release: the refilled descriptors before the tail that hands them over
        __atomic_thread_fence(__ATOMIC_RELEASE);
        wr(e, RDT, (uint32_t)(e->rx_next + NRX - 1) % NRX);
    }
    return n;
}

static uint32_t rx_cause(const struct e1000e *e)
{
    return e->irq == PCI_IRQ_MSIX ? INT_RXQ0 : INT_RXT0;
}

static void e1000e_irq_disable(struct netdev *nd, uint16_t qi)
{
    struct e1000e *e = of(nd);
    (void)qi;
    __atomic_store_n(&e->irq_on, false, __ATOMIC_RELAXED);     // relaxed: the handler only tests it
    wr(e, IMC, rx_cause(e));
}

static bool e1000e_irq_enable(struct netdev *nd, uint16_t qi)
{
    struct e1000e *e = of(nd);
    (void)qi;
    if (e->irq == PCI_IRQ_NONE)
        return !rx_ready(e);
    // seq_cst: on before the cause is unmasked (the handler's exchange pairs with it)
    __atomic_store_n(&e->irq_on, true, __ATOMIC_SEQ_CST);
    wr(e, IMS, rx_cause(e));
    // A frame written before the unmask may have raised its cause while it
    // was masked: the unmask then interrupts at once. One written after
    // interrupts. Either way a frame already here is polled for.
    return !rx_ready(e);
}

// ---- transmit -------------------------------------------------------------------

static uint16_t tx_free(const struct e1000e *e)
{
    return (uint16_t)((e->tx_clean + NTX - e->tx_tail - 1) % NTX);
}

// Every descriptor carries RS, so each reports DD when the device is done.
static void tx_reclaim(struct e1000e *e)
{
    while (e->tx_clean != e->tx_tail &&
           (__atomic_load_n(&e->tx[e->tx_clean].upper, __ATOMIC_ACQUIRE) & TXS_DD))   // acquire: the device's write-back
        e->tx_clean = (uint16_t)((e->tx_clean + 1) % NTX);
}

static void tx_put(struct e1000e *e, uint64_t addr, uint32_t lower, uint32_t upper)
{
    struct tx_desc *d = &e->tx[e->tx_tail];
    d->addr = addr;
    d->lower = lower;
    d->upper = upper;
    e->tx_tail = (uint16_t)((e->tx_tail + 1) % NTX);
}

static enum netdev_xmit_result e1000e_xmit(struct netdev *nd, uint16_t qi,
                                           const struct netdev_frag *frags, uint32_t nfrags,
                                           const struct netdev_tx *tx)
{
    struct e1000e *e = of(nd);
    struct netdev_qstats *st = &nd->queues[qi].stats;
    uint32_t total = netdev_tx_len(nd, frags, nfrags, tx);
    bool csum = tx && (tx->flags & NETDEV_TX_CSUM);
    // The context descriptor's fields are a byte each.
    if (!total || (csum && (tx->csum_start > 255 || tx->csum_start + tx->csum_offset > 255))) {
        netdev_stat_add(&st->tx_dropped, 1);
        return NETDEV_TX_DROPPED;
    }
    tx_reclaim(e);
    bool new_ctx = csum && (e->ctx_start != tx->csum_start || e->ctx_offset != tx->csum_start + tx->csum_offset);
    uint16_t need = new_ctx ? 2 : 1;
    if (tx_free(e) < need) {
        __atomic_store_n(&e->tx_waiting, true, __ATOMIC_SEQ_CST);  // seq_cst: before the unmask, as irq_enable
        wr(e, IMS, e->irq == PCI_IRQ_MSIX ? INT_TXQ0 : INT_TXDW);
        tx_reclaim(e);
        if (tx_free(e) < need) {
            netdev_stat_add(&st->tx_busy, 1);
            return NETDEV_TX_BUSY;
        }
    }
    // The frame's buffer is its data descriptor's slot.
    if (new_ctx) {
        struct tx_ctx *c = (struct tx_ctx *)&e->tx[e->tx_tail];
        c->ip = 0;
        c->tu = tx->csum_start | (uint32_t)(tx->csum_start + tx->csum_offset) << 8;
        c->cmd = TXC_DEXT | TXC_RS;
        c->seg = 0;
        e->tx_tail = (uint16_t)((e->tx_tail + 1) % NTX);
        e->ctx_start = tx->csum_start;
        e->ctx_offset = (uint16_t)(tx->csum_start + tx->csum_offset);
    }
    uint16_t slot = e->tx_tail;
    uint8_t *b = e->tx_bufs + (uint32_t)slot * BUF;
    netdev_frags_copy(b, frags, nfrags);
    uint32_t cmd = TXC_EOP | TXC_IFCS | TXC_RS;
    if (csum)
        tx_put(e, dma_addr(b), total | TXD_DTYP_DATA | cmd | TXC_DEXT, TXP_TXSM);
    else
        tx_put(e, dma_addr(b), total | cmd, 0);
    // release: the descriptors and the frame before the tail that hands them over
    __atomic_thread_fence(__ATOMIC_RELEASE);
    wr(e, TDT, e->tx_tail);
    netdev_stat_add(&st->tx_frames, 1);
    netdev_stat_add(&st->tx_bytes, total);
    return NETDEV_TX_OK;
}

static const struct netdev_ops e1000e_ops = {
    .xmit = e1000e_xmit,
    .rx_poll = e1000e_rx_poll,
    .irq_disable = e1000e_irq_disable,
    .irq_enable = e1000e_irq_enable,
};

// ---- interrupts -----------------------------------------------------------------

static void link_check(struct e1000e *e)
{
    netdev_set_link(&e->nd, rd(e, STATUS) & STATUS_LU);
}

// The queue pair's causes (rxq and txq: MSI-X's, or RXT0 and TXDW), as
// masked or not by now. Interrupt context.
static void queue_event(struct e1000e *e, bool rx, bool tx)
{
    netdev_stat_add(&e->q.stats.irqs, 1);
    uint32_t ev = 0;
    if (rx && __atomic_exchange_n(&e->irq_on, false, __ATOMIC_SEQ_CST))     // seq_cst: pairs with irq_enable
        ev |= NETDEV_EV_RX;
    if (tx && __atomic_exchange_n(&e->tx_waiting, false, __ATOMIC_SEQ_CST)) // seq_cst: pairs with xmit
        ev |= NETDEV_EV_TX;
    if (ev)
        netdev_ready(&e->nd, 0, ev);
}

// MSI-X vector 0: EIAC has already cleared and masked RXQ0 and TXQ0.
static void msix_queue_irq(void *arg)
{
    queue_event(arg, true, true);
}

// MSI-X vector 1: the link. OTHER was cleared and masked by EIAC; LSC
// stays in ICR until written back.
static void msix_other_irq(void *arg)
{
    struct e1000e *e = arg;
    wr(e, ICR, INT_LSC | INT_RXO);
    link_check(e);
    wr(e, IMS, INT_OTHER);
}

// MSI or INTx: reading ICR clears it (and lowers the line); a zero ICR is
// another device's interrupt on a shared line.
static void shared_irq(void *arg)
{
    struct e1000e *e = arg;
    uint32_t icr = rd(e, ICR);
    if (!icr)
        return;
    if (icr & INT_LSC)
        link_check(e);
    bool rx = icr & (INT_RXT0 | INT_RXO), tx = icr & INT_TXDW;
    if (rx)
        wr(e, IMC, INT_RXT0);       // quiet until irq_enable
    if (tx)
        wr(e, IMC, INT_TXDW);
    if (rx || tx)
        queue_event(e, rx, tx);
}

// ---- set-up ---------------------------------------------------------------------

static void delay_us(uint64_t us)
{
    uint64_t end = arch_cycles() + arch_ns_to_cycles(us * 1000);
    while (arch_cycles() < end)
        cpu_relax();
}

// The MAC: the receive address register the reset loaded from the NVM,
// else the NVM's first three words through EERD.
static bool read_mac(struct e1000e *e)
{
    uint32_t lo = rd(e, RAL0), hi = rd(e, RAH0);
    if (hi & RAH_AV) {
        for (int i = 0; i < 4; i++)
            e->nd.mac[i] = (uint8_t)(lo >> (8 * i));
        e->nd.mac[4] = (uint8_t)hi;
        e->nd.mac[5] = (uint8_t)(hi >> 8);
        return true;
    }
    for (uint32_t w = 0; w < 3; w++) {
        wr(e, EERD, EERD_START | w << EERD_ADDR_SHIFT);
        uint32_t v = 0;
        for (int i = 0; i < 10000 && !((v = rd(e, EERD)) & EERD_DONE); i++)
            delay_us(1);
        if (!(v & EERD_DONE))
            return false;
        e->nd.mac[2 * w] = (uint8_t)(v >> 16);
        e->nd.mac[2 * w + 1] = (uint8_t)(v >> 24);
    }
    wr(e, RAL0, e->nd.mac[0] | e->nd.mac[1] << 8 | e->nd.mac[2] << 16 | (uint32_t)e->nd.mac[3] << 24);
    wr(e, RAH0, e->nd.mac[4] | e->nd.mac[5] << 8 | RAH_AV);
    return true;
}

static bool reset(struct e1000e *e)
{
    wr(e, IMC, 0xFFFFFFFFu);
    wr(e, CTRL, rd(e, CTRL) | CTRL_RST);
    // The datasheet asks for 1 ms before the next access; the bit clears
    // itself when the reset is done.
    delay_us(1000);
    for (int i = 0; i < 100 && (rd(e, CTRL) & CTRL_RST); i++)
        delay_us(1000);
    if (rd(e, CTRL) & CTRL_RST)
        return false;
    wr(e, IMC, 0xFFFFFFFFu);
    (void)rd(e, ICR);
    return true;
}

static void rings(struct e1000e *e, uint32_t cpu)
{
    e->rx = dma_alloc(sizeof(struct rx_desc) * NRX, cpu);
    e->rx_bufs = dma_alloc((size_t)NRX * BUF, cpu);
    e->tx = dma_alloc(sizeof(struct tx_desc) * NTX, cpu);
    e->tx_bufs = dma_alloc((size_t)NTX * BUF, cpu);
    for (uint16_t i = 0; i < NRX; i++)
        rx_refill(e, i);
    for (uint32_t i = 0; i < 128; i++)
        wr(e, MTA + 4 * i, 0);
    wr(e, RDBAL, (uint32_t)dma_addr(e->rx));
    wr(e, RDBAH, (uint32_t)(dma_addr(e->rx) >> 32));
    wr(e, RDLEN, sizeof(struct rx_desc) * NRX);
    wr(e, RDH, 0);
    wr(e, RDT, NRX - 1);
    wr(e, RDTR, 0);                     // no receive interrupt delay
    wr(e, RADV, 0);
    wr(e, RXCSUM, RXCSUM_IPOFLD | RXCSUM_TUOFLD);
    wr(e, TDBAL, (uint32_t)dma_addr(e->tx));
    wr(e, TDBAH, (uint32_t)(dma_addr(e->tx) >> 32));
    wr(e, TDLEN, sizeof(struct tx_desc) * NTX);
    wr(e, TDH, 0);
    wr(e, TDT, 0);
    wr(e, TIDV, 0);
    wr(e, TADV, 0);
    wr(e, TARC0, rd(e, TARC0) | TARC_ENABLE);
    wr(e, TIPG, 8 | 8 << 10 | 6 << 20);
    wr(e, TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
    wr(e, RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);    // 2 KiB buffers, legacy descriptors
}

// MSI-X with its two vectors, else MSI, else INTx, else none.
static void interrupts(struct e1000e *e, uint32_t cpu)
{
    struct pci_func *f = e->f;
    enum pci_irq_mode allowed = pci_irq_mode_allowed();
    if (allowed >= PCI_IRQ_MSIX && f->msix.cap && pci_msix_begin(f) >= 2) {
        int v = pci_msix_route(f, 0, cpu, msix_queue_irq, e, &e->q.cpu);
        if (v >= 0 && pci_msix_route(f, 1, 0, msix_other_irq, e, 0) >= 0) {
            e->q.vector = (uint8_t)v;
            e->irq = PCI_IRQ_MSIX;
            wr(e, IVAR, IVAR_RXQ0(0) | IVAR_TXQ0(0) | IVAR_OTHER(1));
            wr(e, EIAC, INT_RXQ0 | INT_TXQ0 | INT_OTHER);
            pci_msix_end(f);
            wr(e, IMS, INT_OTHER | INT_LSC);
            return;
        }
    }
    int v = -1;
    if (allowed >= PCI_IRQ_MSI && f->msi.cap && (v = pci_msi_route(f, cpu, shared_irq, e, &e->q.cpu)) >= 0)
        e->irq = PCI_IRQ_MSI;
    else if (allowed >= PCI_IRQ_INTX && (v = pci_intx_route(f, cpu, shared_irq, e, &e->q.cpu)) >= 0)
        e->irq = PCI_IRQ_INTX;
    else
        e->irq = PCI_IRQ_NONE;
    if (v >= 0) {
        e->q.vector = (uint8_t)v;
        wr(e, IMS, INT_LSC);
    }
}

static bool setup(struct pci_func *f)
{
    struct e1000e *e = dma_alloc(sizeof *e, 0);
    e->f = f;
    e->regs = pci_map_bar(f, 0, 0, 0x20000);
    if (!e->regs)
        return false;
    pci_enable(f);
    if (!reset(e)) {
        kprintf("e1000e: %02x:%02x.%x: the reset never finished; not used\n", f->bus, f->dev, f->fn);
        return false;
    }
    if (!read_mac(e)) {
        kprintf("e1000e: %02x:%02x.%x: no MAC address (EEPROM reads never finished); not used\n", f->bus,
                f->dev, f->fn);
        return false;
    }
    struct netdev *nd = &e->nd;
    nd->driver = "e1000e";
    snprintf(nd->bus_info, sizeof nd->bus_info, "pci %04x:%02x:%02x.%x", f->segment, f->bus, f->dev, f->fn);
    nd->mtu = 1500;
    nd->features = NETDEV_F_TX_CSUM | NETDEV_F_RX_CSUM;
    nd->nqueues = 1;
    nd->queues = &e->q;
    nd->ops = &e1000e_ops;
    nd->priv = e;
    uint32_t cpu = arch_irq_cpu(0);
    e->q.cpu = cpu;
    rings(e, cpu);
    interrupts(e, cpu);
    nd->irq_mode = pci_irq_mode_name(e->irq);
    wr(e, CTRL, rd(e, CTRL) | CTRL_SLU);
    link_check(e);
    if (netdev_register(nd) != 0)
        return false;
    kprintf("%s: e1000e at %02x:%02x.%x, mac %02x:%02x:%02x:%02x:%02x:%02x, mtu %u, 1 queue pair, %s, "
            "checksum offload, link %s\n", nd->name, f->bus, f->dev, f->fn, nd->mac[0], nd->mac[1],
            nd->mac[2], nd->mac[3], nd->mac[4], nd->mac[5], nd->mtu, nd->irq_mode,
            netdev_link_up(nd) ? "up" : "down (negotiating)");
    return true;
}

void e1000e_probe(struct pci_func *f)
{
    if (pci_claim(f, "e1000e") && !setup(f))
        pci_release(f);
}
