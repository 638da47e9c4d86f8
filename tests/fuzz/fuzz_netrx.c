// SPDX-License-Identifier: MIT
// The network receive path, host-built: frames made of the fuzzer's bytes
// go in at a NIC's driver interface (drivers/net/netdev.h) and travel as
// they do in goro: the device's ready call (net/ether.c) posts the
// stack's work, the netpoller's poll (net/stack.c's, registered with
// kernel/netpoll.h) takes the stack lock, ether_poll hands each frame to
// lwIP (net/ether.c's own checksum check first, on the device that
// offloads it), and lwIP's callbacks in net/conn.c and net/udp.c mark
// the sockets' poll descriptors ready. An application like app=netecho
// then answers what is ready, through goro.h's net API: it accepts,
// reads and echoes every TCP connection on port 7 and every UDP datagram
// to port 7, and closes a connection at the peer's EOF or an error.
//
// Two NICs: net0 checks receive checksums itself (NETDEV_F_RX_CSUM, a
// static 10.0.0.2/24 as ip= gives), net1 leaves them to lwIP and asks for
// its address by DHCP. The scheduler, the clock, the timers and the
// netpoller's waits are this file's small stand-ins: nothing here blocks
// (a wait returns "timeout" at once, as a deadline would), and time moves
// only as the input says.
//
// Replay an input with build/fuzz/fuzz_netrx FILE.
//
// Input: records of
// FUZZ_NETRX_TRACE=1 in the environment prints each frame the stack sends.
//
//   byte 0      bits 0-2: milliseconds to move the clock first (0, 1, 10,
//               100, 250, 500, 1000, 5000), firing lwIP's timer as due;
//               bit 3: the frame goes to net1 (else net0); bit 4: the
//               device marks it NETDEV_RX_CSUM_OK; bit 5: more frames
//               follow at once (no poll yet: they gather in the device's
//               ring, taken together by one poll, or dropped by a full
//               ring); bit 6: the application closes its
//               oldest connection after this frame; bit 7: it half-closes
//               its newest (CloseWrite)
//   bytes 1-2   the frame's length, little-endian, at most the device's
//               longest frame (larger lengths are cut to it) and the
//               input left
//   then        the frame, destination MAC first
// After the last record, the application closes everything and the
// stack's state is cleared (connections aborted, ARP and reassembly
// emptied), so each input starts alike.
//
// Promises checked: no sanitizer report (no read past a frame, no use of
// a freed pbuf, connection or descriptor); a descriptor is readied only
// while open, with the stack lock held; every frame the stack sends fits
// the device (ETH_HLEN to its longest frame) and, when IPv4, carries a
// header checksum that verifies; and after the reset, every connection
// the application accepted is gone from lwIP.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "drivers/net/netdev.h"
#include "goro.h"
#include "kernel/cmdline.h"
#include "kernel/netpoll.h"
#include "kernel/timer.h"
#include "net/netmem.h"
#include "net/stack.h"
#include "net/sys_arch.h"
#include "tests/fuzz/fuzz.h"
// The host's <endian.h> (through <stdlib.h>) has one; lwIP's port (arch/cc.h) its own.
#undef BYTE_ORDER
#include <lwip/dhcp.h>
#include <lwip/etharp.h>
#include <lwip/inet_chksum.h>
#include <lwip/ip4_frag.h>
#include <lwip/netif.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/tcp.h>

// ---- the machine's stand-ins ------------------------------------------------------

// cpu_index() and preempt_count() read the per-core block through %gs
// (arch/arch.h): here it is one zeroed block, core 0's.
static uint8_t percpu[4096] __attribute__((aligned(64)));

static uint64_t now_ns = 1000000000ull;
static bool trace;                     // FUZZ_NETRX_TRACE=1: each frame sent, on stderr
static int preempt_depth;

void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz: panic: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

int kprintf(const char *fmt, ...)
{
    (void)fmt;
    return 0;
}

uint64_t nanotime(void) { return now_ns; }
uint64_t cputicks(void) { return 1; }      // the same random stream (sequence numbers) for every input
void preempt_disable(void) { preempt_depth++; }
void preempt_enable(void)
{
    FUZZ_CHECK(preempt_depth > 0);
    preempt_depth--;
}
void gosched(void) {}
void mutex_lock_slow(mutex_t *m) { FUZZ_CHECK(!"a mutex contended with one goroutine"); (void)m; }
void mutex_unlock_slow(mutex_t *m, int32_t state) { (void)m, (void)state; FUZZ_CHECK(!"a mutex waiter"); }
void once_do_slow(once_t *o, void (*fn)(void *), void *arg)
{
    fn(arg);
    o->done = 1;
}

// lwIP's memory budget (net/netmem.c) is the host's malloc here, so ASan
// sees each connection record as its own block.
void *netmem_alloc(size_t size) { return malloc(size); }
void *netmem_calloc(size_t n, size_t size) { return calloc(n, size); }
void netmem_free(void *p) { free(p); }

// Cycles are nanoseconds here.
uint64_t arch_ns_to_cycles(uint64_t ns) { return ns; }
uint64_t timer_deadline_ns(uint64_t ns) { return now_ns + ns; }
static struct timer *lwip_timer;       // the stack's one timer (net/stack.c)
void timer_start(struct timer *t) { lwip_timer = t; }

// ---- the netpoller's stand-in ------------------------------------------------------
//
// The poll descriptors' readiness, as kernel/netpoll.c keeps it, without
// goroutines: no one ever parks, so readiness is only recorded, and a wait
// fails at once as if its deadline had passed.
#define PD_OPEN 0x4f50454eu             // pd->info while open (the real one keeps flag bits there)
#define PD_SHUT 0x53485554u

static netpoll_fn poller;
static bool wake_asked;

void netpoll_open(struct polldesc *pd)
{
    memset(pd, 0, sizeof *pd);
    pd->info = PD_OPEN;
}

int netpoll_reset(struct polldesc *pd, int mode)
{
    FUZZ_CHECK(pd->info == PD_OPEN || pd->info == PD_SHUT);
    if (pd->info == PD_SHUT)
        return NETPOLL_ERR_CLOSING;
    if (mode == NETPOLL_READ)
        pd->rg = 0;
    else
        pd->wg = 0;
    return NETPOLL_OK;
}

// A readiness that came since the reset is taken ("try again"), as the
// real wait returns at once; otherwise the wait would park: here it fails
// as a passed deadline would.
int netpoll_wait(struct polldesc *pd, int mode)
{
    if (pd->info == PD_SHUT)
        return NETPOLL_ERR_CLOSING;
    uintptr_t *g = mode == NETPOLL_READ ? &pd->rg : &pd->wg;
    if (*g == PD_READY) {
        *g = 0;
        return NETPOLL_OK;
    }
    return NETPOLL_ERR_TIMEOUT;
}

void netpoll_set_deadline(struct polldesc *pd, uint64_t deadline, int mode)
{
    (void)pd, (void)deadline, (void)mode;
}

void netpoll_unblock(struct polldesc *pd)
{
    FUZZ_CHECK(pd->info == PD_OPEN || pd->info == PD_SHUT);
    pd->info = PD_SHUT;
}

void netpoll_close(struct polldesc *pd)
{
    FUZZ_CHECK(pd->info == PD_SHUT);
    pd->info = 0;
}

void netpoll_register(netpoll_fn poll) { poller = poll; }
void netpoll_wake(void) { wake_asked = true; }

void netpoll_ready(struct netpoll_list *ready, struct polldesc *pd, int mode)
{
    (void)ready;
    net_assert_locked();
    FUZZ_CHECK(pd->info == PD_OPEN || pd->info == PD_SHUT);
    if (mode == NETPOLL_READ || mode == NETPOLL_READ + NETPOLL_WRITE)
        pd->rg = PD_READY;
    if (mode == NETPOLL_WRITE || mode == NETPOLL_READ + NETPOLL_WRITE)
        pd->wg = PD_READY;
}

int netpoll_check(const struct polldesc *pd, int mode)
{
    (void)mode;
    return pd->info == PD_SHUT ? NETPOLL_ERR_CLOSING : NETPOLL_OK;
}

void netpoll_list_move(struct netpoll_list *dst, struct netpoll_list *src)
{
    FUZZ_CHECK(!src->head && !dst->head);       // nobody parks here
    memset(src, 0, sizeof *src);
}

void netpoll_ready_list(struct netpoll_list *l, bool next)
{
    (void)next;
    FUZZ_CHECK(!l->head);
}

// The scheduler's poll: findrunnable's, or sysmon's when nothing was posted.
static void poll_now(void)
{
    struct netpoll_list l = { 0 };
    wake_asked = false;
    FUZZ_CHECK(poller(&l));                     // the lock is always free between calls here
    FUZZ_CHECK(!l.head);
}

// ---- the NICs ---------------------------------------------------------------------

#define NDEV 2
#define MTU 1500
#define RXQ_MAX 64

struct fake {
    struct netdev dev;
    struct netdev_queue queue;
    const struct netdev_consumer *consumer;
    bool irq_on;
    // frames waiting in the device: pointers into the input, lent
    const uint8_t *rx[RXQ_MAX];
    uint32_t rxlen[RXQ_MAX], rxflags[RXQ_MAX];
    uint32_t head, n;
    uint64_t sent;
};
static struct fake fakes[NDEV];

static enum netdev_xmit_result fake_xmit(struct netdev *dev, uint16_t q, const struct netdev_frag *frags,
                                         uint32_t nfrags, const struct netdev_tx *tx)
{
    struct fake *f = dev->priv;
    FUZZ_CHECK(q == 0 && !tx);
    uint8_t frame[MTU + ETH_HLEN + ETH_VLAN_HLEN];
    uint32_t len = 0;
    for (uint32_t i = 0; i < nfrags; i++) {
        FUZZ_CHECK(len + frags[i].len <= netdev_max_frame(dev));
        memcpy(frame + len, frags[i].base, frags[i].len);
        len += frags[i].len;
    }
    FUZZ_CHECK(len >= ETH_HLEN);
    if (frame[12] == 0x08 && frame[13] == 0x00) {       // IPv4: its header sums to 0xffff
        FUZZ_CHECK(len >= ETH_HLEN + 20);
        uint32_t hl = (frame[ETH_HLEN] & 15u) * 4;
        FUZZ_CHECK(hl >= 20 && ETH_HLEN + hl <= len);
        FUZZ_CHECK(inet_chksum(frame + ETH_HLEN, (u16_t)hl) == 0);
    }
    f->sent++;
    if (trace)
        fprintf(stderr, "netrx: %s sends %u bytes, type %02x%02x, IP protocol %u, TCP flags %02x\n",
                dev->name, len, frame[12], frame[13], len > 23 ? frame[23] : 0, len > 47 ? frame[47] : 0);
    return NETDEV_TX_OK;
}

static uint32_t fake_rx_poll(struct netdev *dev, uint16_t q, uint32_t budget, netdev_deliver_fn deliver, void *ctx)
{
    struct fake *f = dev->priv;
    FUZZ_CHECK(q == 0);
    uint32_t taken = 0;
    while (taken < budget && f->n) {
        uint32_t i = f->head;
        f->head = (f->head + 1) % RXQ_MAX;
        f->n--;
        taken++;
        // A copy of exactly the frame's bytes: ASan sees any read past it.
        uint8_t *copy = malloc(f->rxlen[i] ? f->rxlen[i] : 1);
        FUZZ_CHECK(copy);
        memcpy(copy, f->rx[i], f->rxlen[i]);
        deliver(ctx, copy, f->rxlen[i], f->rxflags[i]);
        free(copy);
    }
    return taken;
}

static void fake_irq_disable(struct netdev *dev, uint16_t q)
{
    (void)q;
    ((struct fake *)dev->priv)->irq_on = false;
}

static bool fake_irq_enable(struct netdev *dev, uint16_t q)
{
    struct fake *f = dev->priv;
    (void)q;
    f->irq_on = true;
    return f->n == 0;
}

static const struct netdev_ops fake_ops = {
    .xmit = fake_xmit, .rx_poll = fake_rx_poll, .irq_disable = fake_irq_disable, .irq_enable = fake_irq_enable,
};

uint32_t netdev_count(void) { return NDEV; }
struct netdev *netdev_get(uint32_t i) { return i < NDEV ? &fakes[i].dev : 0; }

int netdev_attach(struct netdev *dev, const struct netdev_consumer *c)
{
    struct fake *f = dev->priv;
    if (f->consumer)
        return -1;
    f->consumer = c;
    return 0;
}

// A frame arrives: into the device's ring (dropped when it is full, as a
// device drops), then, when its interrupt is on, the consumer is told.
static void arrive(struct fake *f, const uint8_t *frame, uint32_t len, uint32_t flags)
{
    if (f->n == RXQ_MAX)
        return;
    uint32_t i = (f->head + f->n++) % RXQ_MAX;
    f->rx[i] = frame;
    f->rxlen[i] = len;
    f->rxflags[i] = flags;
    if (f->irq_on) {
        f->irq_on = false;
        f->consumer->ready(f->consumer->ctx, &f->dev, 0, NETDEV_EV_RX);
    }
}

struct kparams kparams;

// ---- the application: netecho's loop, driven by readiness -------------------------

#define MAX_CONNS 64

static net_listener_t *listener;
static net_pconn_t *pconn;
static net_conn_t *conns[MAX_CONNS];
static uint32_t nconns;

// The descriptor is the first field of each (net/conn.c, net/udp.c).
static struct polldesc *pd_of(void *sock) { return sock; }

static bool take_ready(struct polldesc *pd, int mode)
{
    uintptr_t *g = mode == NETPOLL_READ ? &pd->rg : &pd->wg;
    if (*g != PD_READY)
        return false;
    *g = 0;
    return true;
}

static void drop_conn(uint32_t i)
{
    conn_free(conns[i]);
    conns[i] = conns[--nconns];
}

static void serve(void)
{
    uint8_t buf[2048];
    while (take_ready(pd_of(listener), NETPOLL_READ)) {
        net_conn_t *c;
        while (listener_accept(listener, &c) == 0) {
            if (nconns == MAX_CONNS)
                conn_free(c);
            else
                conns[nconns++] = c;
        }
    }
    if (take_ready(pd_of(pconn), NETPOLL_READ)) {
        struct net_addr from;
        long n;
        while ((n = pconn_read_from(pconn, buf, sizeof buf, &from)) >= 0)
            pconn_write_to(pconn, buf, (size_t)n, &from);
        FUZZ_CHECK(n == NET_ETIMEOUT);
    }
    for (uint32_t i = 0; i < nconns;) {
        struct polldesc *pd = pd_of(conns[i]);
        bool rd = take_ready(pd, NETPOLL_READ);
        take_ready(pd, NETPOLL_WRITE);
        long n = 0;
        while (rd && (n = conn_read(conns[i], buf, sizeof buf)) > 0) {
            long w = conn_write(conns[i], buf, (size_t)n);
            if (w < 0 && w != NET_ETIMEOUT) {
                n = w;
                break;
            }
        }
        if (rd && n < 0 && n != NET_ETIMEOUT) {
            drop_conn(i);               // EOF, a reset, a timeout of lwIP's: closed
            continue;
        }
        i++;
    }
}

// ---- one input --------------------------------------------------------------------

static const uint32_t step_ms[8] = { 0, 1, 10, 100, 250, 500, 1000, 5000 };

static void advance(uint32_t ms)
{
    now_ns += (uint64_t)ms * 1000000;
    // lwIP's periodic timer, as the kernel's timer heap would fire it.
    while (lwip_timer && lwip_timer->when <= now_ns) {
        lwip_timer->f(lwip_timer, now_ns);
        lwip_timer->when += lwip_timer->period;
    }
    if (wake_asked)
        poll_now();
}

// Everything of this input undone: the application's sockets closed,
// lwIP's connections aborted, its ARP table and reassembly emptied.
static void reset(void)
{
    for (int i = 0; i < NDEV; i++)
        fakes[i].n = 0;             // the frames still in the rings are lost
    while (nconns)
        drop_conn(nconns - 1);
    net_conn_t *c;
    while (listener_accept(listener, &c) == 0)
        conn_free(c);
    net_lock();
    while (tcp_active_pcbs) {
        // every connection the application had is detached; a half-open
        // one still points at the listener
        FUZZ_CHECK(tcp_active_pcbs->state == SYN_RCVD || !tcp_active_pcbs->callback_arg);
        tcp_abort(tcp_active_pcbs);
    }
    while (tcp_tw_pcbs)
        tcp_abort(tcp_tw_pcbs);
    for (int i = 0; i < 2 * IP_REASS_MAXAGE; i++)
        ip_reass_tmr();
    struct netif *nif;
    NETIF_FOREACH(nif) {
        etharp_cleanup_netif(nif);
    }
    net_unlock();
    poll_now();
    FUZZ_CHECK(!tcp_active_pcbs && !tcp_tw_pcbs);
}

static void setup(void)
{
    trace = getenv("FUZZ_NETRX_TRACE") != 0;
    FUZZ_CHECK(syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)percpu) == 0);
    kparams.ip_addr = 0x0a000002;               // ip=10.0.0.2/24 gw=10.0.0.1 on net0
    kparams.ip_prefix = 24;
    kparams.ip_gw = 0x0a000001;
    for (int i = 0; i < NDEV; i++) {
        struct fake *f = &fakes[i];
        snprintf(f->dev.name, sizeof f->dev.name, "net%d", i);
        f->dev.driver = "fuzz";
        f->dev.irq_mode = "msi-x";
        memcpy(f->dev.mac, (uint8_t[]){ 0x52, 0x54, 0x00, 0x12, 0x34, (uint8_t)(0x56 + i) }, ETH_ALEN);
        f->dev.mtu = MTU;
        f->dev.features = i == 0 ? NETDEV_F_RX_CSUM : 0;
        f->dev.nqueues = 1;
        f->dev.queues = &f->queue;
        f->dev.ops = &fake_ops;
        f->dev.priv = f;
        f->dev.link_up = true;
    }
    FUZZ_CHECK(net_listen("tcp", ":7", &listener) == 0);
    FUZZ_CHECK(net_listen_packet("udp", ":7", &pconn) == 0);
    poll_now();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    // The same start for every input: the generator seeded alike, then
    // net1's DHCP begun again (its discover takes the generator's first
    // number as its transaction id; the first TCP connection's initial
    // sequence number is the second).
    sys_arch_init();
    net_lock();
    struct netif *net1 = 0, *nif;
    NETIF_FOREACH(nif) {
        if (nif->hwaddr_len == ETH_ALEN && !memcmp(nif->hwaddr, fakes[1].dev.mac, ETH_ALEN))
            net1 = nif;
    }
    FUZZ_CHECK(net1);
    dhcp_release_and_stop(net1);
    FUZZ_CHECK(dhcp_start(net1) == ERR_OK);
    net_unlock();
    size_t at = 0;
    while (at + 3 <= size) {
        uint8_t ctl = data[at];
        uint32_t len = (uint32_t)data[at + 1] | (uint32_t)data[at + 2] << 8;
        at += 3;
        struct fake *f = &fakes[(ctl >> 3) & 1];
        uint32_t max = netdev_max_frame(&f->dev);
        if (len > max)
            len = max;
        if (len > size - at)
            len = (uint32_t)(size - at);
        advance(step_ms[ctl & 7]);
        arrive(f, data + at, len, ctl & 0x10 ? NETDEV_RX_CSUM_OK : 0);
        at += len;
        if (ctl & 0x20)
            continue;
        if (wake_asked)
            poll_now();
        serve();
        if ((ctl & 0x40) && nconns)
            drop_conn(0);
        if ((ctl & 0x80) && nconns)
            conn_close_write(conns[nconns - 1]);
        FUZZ_CHECK(preempt_depth == 0);
    }
    reset();
    return 0;
}
