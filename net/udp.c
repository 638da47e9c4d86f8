// SPDX-License-Identifier: MIT
// UDP with Go's PacketConn semantics over lwIP's raw API.
//
// Datagrams that arrive wait in a ring of the packet connection's (with
// the address each came from) until read; past PCONN_QUEUE datagrams or
// PCONN_QUEUE_BYTES of them, new ones are dropped, as a full socket
// buffer drops them. A read waits on the poll descriptor as TCP's does
// (net/conn.c). A write never waits: lwIP sends at once or fails.
#include "net/conn.h"
#include "net/addr.h"
#include "net/stack.h"
#include "kernel/netpoll.h"
#include "lib/string.h"
#include <lwip/udp.h>

#define PCONN_QUEUE 256
#define PCONN_QUEUE_BYTES (256u * 1024)     // about Linux's default receive buffer
#define UDP_MAX_PAYLOAD 65507u              // 65535 - IPv4's 20 - UDP's 8

struct dgram {
    struct pbuf *p;
    struct net_addr from;
};

struct net_pconn {
    struct polldesc pd;
    mutex_t rmu;                    // one reader at a time
    // stack lock held
    struct udp_pcb *pcb;
    struct dgram q[PCONN_QUEUE];
    uint32_t head, n, bytes;
    uint64_t dropped;               // datagrams the full queue turned away
    bool closed;
    // read-only after net_listen_packet
    struct net_addr addr;
    // atomic, any core
    uint32_t refs;
};

// lwIP's receive callback (stack lock held, any context).
static void on_datagram(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    struct net_pconn *pc = arg;
    (void)pcb;
    if (pc->closed || pc->n == PCONN_QUEUE || pc->bytes + p->tot_len > PCONN_QUEUE_BYTES) {
        pc->dropped++;
        pbuf_free(p);
        return;
    }
    struct dgram *d = &pc->q[(pc->head + pc->n++) % PCONN_QUEUE];
    d->p = p;
    net_addr_from_lwip(&d->from, addr, port);
    pc->bytes += p->tot_len;
    netpoll_ready(net_ready_list(), &pc->pd, NETPOLL_READ);
}

int net_listen_packet(const char *network, const char *address, net_pconn_t **out)
{
    enum net_kind kind;
    struct net_addr at;
    *out = 0;
    if (!net_network_parse(network, &kind) || kind != NET_KIND_UDP)
        return NET_ENETWORK;
    if (net_addr_parse(address, true, &at))
        return NET_EADDR;
    net_start();
    struct net_pconn *pc = calloc(1, sizeof *pc);
    netpoll_open(&pc->pd);
    ip_addr_t ip;
    net_addr_to_lwip(&ip, &at);
    long r = 0;
    net_lock();
    pc->pcb = udp_new();
    if (!pc->pcb) {
        r = NET_ENOBUFS;
    } else {
        err_t e = udp_bind(pc->pcb, &ip, at.port);
        if (e != ERR_OK) {
            udp_remove(pc->pcb);
            pc->pcb = 0;
            r = net_err_from_lwip(e);
        } else {
            at.port = pc->pcb->local_port;
            pc->addr = at;
            udp_recv(pc->pcb, on_datagram, pc);
        }
    }
    net_unlock();
    if (r) {
        netpoll_unblock(&pc->pd);
        netpoll_close(&pc->pd);
        free(pc);
        return (int)r;
    }
    *out = pc;
    return 0;
}

long pconn_read_from(net_pconn_t *pc, void *buf, size_t n, struct net_addr *from)
{
    __atomic_fetch_add(&pc->refs, 1, __ATOMIC_ACQUIRE);       // pairs with pconn_free's acquire load
    mutex_lock(&pc->rmu);
    long r = netpoll_reset(&pc->pd, NETPOLL_READ);
    r = r == NETPOLL_ERR_CLOSING ? NET_ECLOSED : r == NETPOLL_ERR_TIMEOUT ? NET_ETIMEOUT : 0;
    bool got = false;
    while (!r && !got) {
        net_lock();
        if (pc->closed) {
            r = NET_ECLOSED;
        } else if (pc->n) {
            struct dgram *d = &pc->q[pc->head];
            pc->head = (pc->head + 1) % PCONN_QUEUE;
            pc->n--;
            pc->bytes -= d->p->tot_len;
            u16_t want = (u16_t)(n < d->p->tot_len ? n : d->p->tot_len);
            r = pbuf_copy_partial(d->p, buf, want, 0);
            if (from)
                *from = d->from;
            pbuf_free(d->p);
            got = true;
        }
        net_unlock();
        if (!r && !got) {
            int e = netpoll_wait(&pc->pd, NETPOLL_READ);
            r = e == NETPOLL_ERR_CLOSING ? NET_ECLOSED : e == NETPOLL_ERR_TIMEOUT ? NET_ETIMEOUT : 0;
        }
    }
    mutex_unlock(&pc->rmu);
    __atomic_fetch_sub(&pc->refs, 1, __ATOMIC_RELEASE);       // pairs with pconn_free's acquire load
    return r;
}

long pconn_write_to(net_pconn_t *pc, const void *buf, size_t n, const struct net_addr *to)
{
    if (n > UDP_MAX_PAYLOAD)
        return NET_EMSGSIZE;
    int e = netpoll_check(&pc->pd, NETPOLL_WRITE);
    if (e)
        return e == NETPOLL_ERR_CLOSING ? NET_ECLOSED : NET_ETIMEOUT;
    ip_addr_t ip;
    net_addr_to_lwip(&ip, to);
    long r;
    net_lock();
    struct pbuf *p = pc->closed ? 0 : pbuf_alloc(PBUF_TRANSPORT, (u16_t)n, PBUF_RAM);
    if (pc->closed) {
        r = NET_ECLOSED;
    } else if (!p) {
        r = NET_ENOBUFS;
    } else {
        pbuf_take(p, buf, (u16_t)n);
        err_t sent = udp_sendto(pc->pcb, p, &ip, to->port);
        pbuf_free(p);
        r = sent == ERR_OK ? (long)n : net_err_from_lwip(sent);
    }
    net_unlock();
    return r;
}

int pconn_close(net_pconn_t *pc)
{
    net_lock();
    bool was = pc->closed;
    pc->closed = true;
    if (!was) {
        udp_remove(pc->pcb);
        pc->pcb = 0;
        for (; pc->n; pc->n--, pc->head = (pc->head + 1) % PCONN_QUEUE)
            pbuf_free(pc->q[pc->head].p);
        pc->bytes = 0;
    }
    net_unlock();
    if (was)
        return NET_ECLOSED;
    netpoll_unblock(&pc->pd);
    return 0;
}

void pconn_free(net_pconn_t *pc)
{
    if (netpoll_check(&pc->pd, NETPOLL_READ) != NETPOLL_ERR_CLOSING)
        pconn_close(pc);
    while (__atomic_load_n(&pc->refs, __ATOMIC_ACQUIRE))          // pairs with the calls' release
        gosched();
    netpoll_close(&pc->pd);
    free(pc);
}

static int deadline(net_pconn_t *pc, uint64_t t, int mode)
{
    if (netpoll_check(&pc->pd, NETPOLL_READ) == NETPOLL_ERR_CLOSING)
        return NET_ECLOSED;
    netpoll_set_deadline(&pc->pd, t, mode);
    return 0;
}

int pconn_set_deadline(net_pconn_t *pc, uint64_t t)
{
    return deadline(pc, t, NETPOLL_READ + NETPOLL_WRITE);
}

int pconn_set_read_deadline(net_pconn_t *pc, uint64_t t)
{
    return deadline(pc, t, NETPOLL_READ);
}

int pconn_set_write_deadline(net_pconn_t *pc, uint64_t t)
{
    return deadline(pc, t, NETPOLL_WRITE);
}

struct net_addr pconn_local_addr(net_pconn_t *pc)
{
    return pc->addr;
}
