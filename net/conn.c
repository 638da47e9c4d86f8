// SPDX-License-Identifier: MIT
// TCP with Go's net semantics over lwIP's raw API: listeners, connections,
// and the glue between lwIP's callbacks and the netpoller.
//
// Each connection and listener has a poll descriptor (kernel/netpoll.h).
// A call that cannot proceed (no data to read, no room to write, no
// connection to accept) looks under the stack lock, lets go, and waits on
// the descriptor; lwIP's callbacks, which run under the stack lock in
// whatever context does the stack's work, change the connection's state
// and then mark the descriptor ready, which readies the waiter. Because a
// readiness that comes between the look and the wait is kept (PD_READY),
// the look-then-wait never misses one: Go's "try the I/O, then pollWait".
//
// Readers are serialized by rmu and writers by wmu (Go's fdMutex), so
// each descriptor has at most one waiter per direction, as netpoll needs.
//
// Memory: a connection is allocated from lwIP's own memory (net/netmem.c),
// under the stack lock: an accepted one is made inside lwIP's accept
// callback, which may run in an interrupt handler, where the kernel's
// malloc is not allowed. Received data stays in lwIP's pbufs until read;
// reads and writes copy between them and the caller's buffer, so the
// steady state allocates nothing outside lwIP's pools (Go's
// TestTCPReadWriteAllocs).
//
// Lifetime: lwIP frees a pcb on its own after a reset (its error
// callback says so: pcb becomes NULL here) or once a closed connection
// is done; the connection record lives until conn_free, which waits for
// calls still inside (refs) and stops the deadline timers first.
#include "net/conn.h"
#include "net/addr.h"
#include "net/netmem.h"
#include "net/stack.h"
#include "net/synq.h"
#include "kernel/netpoll.h"
#include "lib/panic.h"
#include "lib/string.h"
#include <lwip/tcp.h>

// Established connections a listener holds for accept, beyond which new
// ones are refused (reset): Linux's default somaxconn.
#define ACCEPT_QUEUE_MAX 4096

struct net_conn {
    struct polldesc pd;
    mutex_t rmu, wmu;               // one reader, one writer (Go's fdMutex)
    // stack lock held
    struct tcp_pcb *pcb;            // NULL once lwIP freed it or after close
    struct pbuf *rx;                // received, not yet read
    int err;                        // what lwIP reported (a reset, a refusal), or 0
    bool connected;                 // the handshake completed
    bool rx_eof;                    // the peer's FIN came
    bool rd_shut, wr_shut;          // CloseRead, CloseWrite
    bool closed;                    // conn_close ran
    struct net_conn *next;          // a listener's accept queue
    // set before the connection is visible to its caller, read-only after
    struct net_addr laddr, raddr;
    // atomic, any core
    uint32_t refs;                  // calls inside (conn_free waits for 0)
};

struct net_listener {
    struct polldesc pd;
    mutex_t mu;                     // one acceptor at a time
    // stack lock held
    struct tcp_pcb *pcb;
    struct net_conn *head, *tail;   // accepted by lwIP, not yet by the caller
    uint32_t n;
    bool closed;
    // read-only after net_listen
    struct net_addr addr;
    // atomic, any core
    uint32_t refs;
};

// ---- shared ------------------------------------------------------------------

static bool enter(uint32_t *refs)
{
    __atomic_fetch_add(refs, 1, __ATOMIC_ACQUIRE);      // pairs with wait_refs's acquire load (it sees us inside)
    return true;
}

static void leave(uint32_t *refs)
{
    __atomic_fetch_sub(refs, 1, __ATOMIC_RELEASE);      // pairs with wait_refs's acquire: our last touches come first
}

// Until no call is inside: they return promptly once the descriptor is
// closing, so this yields rather than parks.
static void wait_refs(uint32_t *refs)
{
    while (__atomic_load_n(refs, __ATOMIC_ACQUIRE))     // pairs with leave's release
        gosched();
}

static long poll_err(int e)
{
    return e == NETPOLL_ERR_CLOSING ? NET_ECLOSED : e == NETPOLL_ERR_TIMEOUT ? NET_ETIMEOUT : 0;
}

void net_addr_from_lwip(struct net_addr *a, const ip_addr_t *ip, uint16_t port)
{
    uint32_t v = ip ? ip4_addr_get_u32(ip_2_ip4(ip)) : 0;      // network order in memory
    memcpy(a->ip, &v, 4);
    a->port = port;
}

void net_addr_to_lwip(ip_addr_t *ip, const struct net_addr *a)
{
    uint32_t v;
    memcpy(&v, a->ip, 4);
    ip_addr_set_ip4_u32(ip, v);
}

long net_err_from_lwip(err_t e)
{
    switch (e) {
    case ERR_OK: return 0;
    case ERR_MEM: case ERR_BUF: return NET_ENOBUFS;
    case ERR_RTE: return NET_EUNREACH;
    case ERR_USE: return NET_EADDRINUSE;
    case ERR_RST: return NET_ECONNRESET;
    case ERR_ABRT: return NET_ETIMEDOUT;      // lwIP gave up: retransmissions (or memory) ran out
    case ERR_CLSD: return NET_EPIPE;
    case ERR_CONN: return NET_ENOTCONN;
    case ERR_VAL: case ERR_ARG: return NET_EADDR;
    default: return NET_ENOBUFS;
    }
}

// ---- lwIP's callbacks (stack lock held, any context) -----------------------

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct net_conn *c = arg;
    (void)err;
    if (!p) {
        c->rx_eof = true;
    } else if (c->rd_shut) {
        tcp_recved(pcb, p->tot_len);        // after CloseRead: taken and dropped
        pbuf_free(p);
        return ERR_OK;
    } else if (c->rx) {
        pbuf_cat(c->rx, p);
    } else {
        c->rx = p;
    }
    netpoll_ready(net_ready_list(), &c->pd, NETPOLL_READ);
    return ERR_OK;
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct net_conn *c = arg;
    (void)pcb, (void)len;
    netpoll_ready(net_ready_list(), &c->pd, NETPOLL_WRITE);
    return ERR_OK;
}

// lwIP has freed the pcb (a reset, an abort, or retransmissions that ran out).
static void on_err(void *arg, err_t err)
{
    struct net_conn *c = arg;
    c->pcb = 0;
    if (err == ERR_RST)
        c->err = c->connected ? NET_ECONNRESET : NET_ECONNREFUSED;
    else if (err != ERR_CLSD)
        c->err = (int)net_err_from_lwip(err);
    netpoll_ready(net_ready_list(), &c->pd, NETPOLL_READ + NETPOLL_WRITE);
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct net_conn *c = arg;
    (void)pcb, (void)err;
    c->connected = true;
    net_addr_from_lwip(&c->laddr, &pcb->local_ip, pcb->local_port);
    netpoll_ready(net_ready_list(), &c->pd, NETPOLL_WRITE);
    return ERR_OK;
}

static void attach(struct net_conn *c, struct tcp_pcb *pcb)
{
    c->pcb = pcb;
    // Go's default (TCPConn.SetNoDelay(true)): a small write goes at once
    // rather than waiting for the acknowledgement of the last, which the
    // peer may delay (lwIP: up to TCP_TMR_INTERVAL).
    tcp_nagle_disable(pcb);
    tcp_arg(pcb, c);
    tcp_recv(pcb, on_recv);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_err);
}

// The pcb leaves the connection: no callback reaches c again.
static void detach(struct net_conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    c->pcb = 0;
    tcp_arg(pcb, 0);
    tcp_recv(pcb, 0);
    tcp_sent(pcb, 0);
    tcp_err(pcb, 0);
}

// Stack lock held: a zeroed connection record with its descriptor, or NULL.
static struct net_conn *conn_alloc(void)
{
    struct net_conn *c = netmem_calloc(1, sizeof *c);
    if (c)
        netpoll_open(&c->pd);
    return c;
}

// Stack lock held: l's queue for accept is full (net/synq.c then holds
// new connections back, as Linux does, rather than have on_accept reset
// them).
static bool accept_full(void *arg)
{
    const struct net_listener *l = arg;
    return l->n >= ACCEPT_QUEUE_MAX;
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct net_listener *l = arg;
    if (err != ERR_OK || !pcb)
        return ERR_VAL;
    synq_established(pcb);
    struct net_conn *c = l->closed || l->n >= ACCEPT_QUEUE_MAX ? 0 : conn_alloc();
    if (!c) {
        tcp_abort(pcb);         // refused: the peer sees a reset
        return ERR_ABRT;
    }
    attach(c, pcb);
    c->connected = true;
    net_addr_from_lwip(&c->laddr, &pcb->local_ip, pcb->local_port);
    net_addr_from_lwip(&c->raddr, &pcb->remote_ip, pcb->remote_port);
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    l->n++;
    netpoll_ready(net_ready_list(), &l->pd, NETPOLL_READ);
    return ERR_OK;
}

// ---- connections -------------------------------------------------------------

long conn_read(net_conn_t *c, void *buf, size_t n)
{
    if (n == 0)
        return 0;
    enter(&c->refs);
    mutex_lock(&c->rmu);
    long r = poll_err(netpoll_reset(&c->pd, NETPOLL_READ));
    while (!r) {
        net_lock();
        if (c->closed) {
            r = NET_ECLOSED;
        } else if (c->rx) {
            u16_t want = (u16_t)(n < c->rx->tot_len ? n : c->rx->tot_len);
            r = pbuf_copy_partial(c->rx, buf, want, 0);
            c->rx = pbuf_free_header(c->rx, want);
            if (c->pcb)
                tcp_recved(c->pcb, want);
        } else if (c->err) {
            r = c->err;
        } else if (c->rx_eof || c->rd_shut || !c->pcb) {
            r = NET_EOF;        // the peer's FIN, CloseRead, or lwIP done with it: nothing more comes
        }
        net_unlock();
        if (!r)
            r = poll_err(netpoll_wait(&c->pd, NETPOLL_READ));
    }
    mutex_unlock(&c->rmu);
    leave(&c->refs);
    return r;
}

// Stack lock held: queues up to n bytes of buf (what the send buffer and
// queue take); returns the bytes queued, 0 when there is no room, or an
// error.
static long write_some(struct net_conn *c, const uint8_t *buf, size_t n)
{
    if (c->closed)
        return NET_ECLOSED;
    if (c->wr_shut)
        return NET_EPIPE;
    if (c->err)
        return c->err;
    if (!c->pcb)
        return NET_EPIPE;
    size_t room = tcp_sndbuf(c->pcb);
    if (room == 0 || tcp_sndqueuelen(c->pcb) >= TCP_SND_QUEUELEN)
        return 0;
    u16_t chunk = (u16_t)(n < room ? n : room);
    err_t e = tcp_write(c->pcb, buf, chunk, TCP_WRITE_FLAG_COPY | (chunk < n ? TCP_WRITE_FLAG_MORE : 0));
    if (e == ERR_MEM) {
        // Out of segments or of lwIP's memory: wait for acknowledgements
        // to free some, unless nothing is in flight to free any.
        return c->pcb->unacked || c->pcb->unsent ? 0 : NET_ENOBUFS;
    }
    if (e != ERR_OK)
        return net_err_from_lwip(e);
    tcp_output(c->pcb);
    return chunk;
}

long conn_write(net_conn_t *c, const void *buf, size_t n)
{
    enter(&c->refs);
    mutex_lock(&c->wmu);
    long r = poll_err(netpoll_reset(&c->pd, NETPOLL_WRITE));
    size_t done = 0;
    while (!r && done < n) {
        net_lock();
        long w = write_some(c, (const uint8_t *)buf + done, n - done);
        net_unlock();
        if (w > 0)
            done += (size_t)w;
        else if (w < 0)
            r = w;
        else
            r = poll_err(netpoll_wait(&c->pd, NETPOLL_WRITE));
    }
    mutex_unlock(&c->wmu);
    leave(&c->refs);
    return r ? r : (long)n;
}

// Stack lock held: the connection's pcb goes, gracefully (a FIN; a reset
// when received data was never read, as Linux does) or, when lwIP has no
// memory for the FIN, with a reset.
static void pcb_close(struct net_conn *c)
{
    if (!c->pcb)
        return;
    struct tcp_pcb *pcb = c->pcb;
    detach(c);
    if (tcp_close(pcb) != ERR_OK)
        tcp_abort(pcb);
}

int conn_close(net_conn_t *c)
{
    net_lock();
    bool was = c->closed;
    c->closed = true;
    if (!was)
        pcb_close(c);
    net_unlock();
    if (was)
        return NET_ECLOSED;
    netpoll_unblock(&c->pd);
    return 0;
}

int conn_close_read(net_conn_t *c)
{
    int r = 0;
    net_lock();
    if (c->closed) {
        r = NET_ECLOSED;
    } else {
        c->rd_shut = true;
        if (c->rx) {
            if (c->pcb)
                tcp_recved(c->pcb, c->rx->tot_len);
            pbuf_free(c->rx);
            c->rx = 0;
        }
        netpoll_ready(net_ready_list(), &c->pd, NETPOLL_READ);
    }
    net_unlock();
    return r;
}

int conn_close_write(net_conn_t *c)
{
    int r = 0;
    net_lock();
    if (c->closed)
        r = NET_ECLOSED;
    else if (!c->wr_shut && c->pcb && tcp_shutdown(c->pcb, 0, 1) != ERR_OK)
        r = NET_ENOTCONN;
    else
        c->wr_shut = true;
    net_unlock();
    return r;
}

void conn_free(net_conn_t *c)
{
    conn_close(c);
    wait_refs(&c->refs);
    netpoll_close(&c->pd);
    net_lock();
    if (c->rx)
        pbuf_free(c->rx);
    netmem_free(c);
    net_unlock();
}

static int conn_deadline(net_conn_t *c, uint64_t t, int mode)
{
    if (netpoll_check(&c->pd, NETPOLL_READ) == NETPOLL_ERR_CLOSING)
        return NET_ECLOSED;
    netpoll_set_deadline(&c->pd, t, mode);
    return 0;
}

int conn_set_deadline(net_conn_t *c, uint64_t t)
{
    return conn_deadline(c, t, NETPOLL_READ + NETPOLL_WRITE);
}

int conn_set_read_deadline(net_conn_t *c, uint64_t t)
{
    return conn_deadline(c, t, NETPOLL_READ);
}

int conn_set_write_deadline(net_conn_t *c, uint64_t t)
{
    return conn_deadline(c, t, NETPOLL_WRITE);
}

struct net_addr conn_local_addr(net_conn_t *c)
{
    return c->laddr;
}

struct net_addr conn_remote_addr(net_conn_t *c)
{
    return c->raddr;
}

// Go's connect: the SYN goes, then the caller waits for writability (the
// handshake done, or refused) until deadline (nanotime(); 0: none).
static int dial(const char *network, const char *address, uint64_t deadline, net_conn_t **out)
{
    enum net_kind kind;
    struct net_addr to;
    *out = 0;
    if (!net_network_parse(network, &kind) || kind != NET_KIND_TCP)
        return NET_ENETWORK;
    if (net_addr_parse(address, false, &to))
        return NET_EADDR;
    net_start();
    ip_addr_t ip;
    net_addr_to_lwip(&ip, &to);
    net_lock();
    struct net_conn *c = conn_alloc();
    struct tcp_pcb *pcb = c ? tcp_new() : 0;
    long r = 0;
    if (!pcb) {
        r = NET_ENOBUFS;
    } else {
        attach(c, pcb);
        c->raddr = to;
        err_t e = tcp_connect(pcb, &ip, to.port, on_connected);
        if (e != ERR_OK) {
            detach(c);
            tcp_abort(pcb);
            r = net_err_from_lwip(e);
        }
    }
    net_unlock();
    if (r) {
        if (c)
            conn_free(c);
        return (int)r;
    }
    if (deadline)
        netpoll_set_deadline(&c->pd, deadline, NETPOLL_WRITE);
    for (;;) {
        net_lock();
        if (c->connected)
            r = 1;
        else if (c->err)
            r = c->err;
        else if (!c->pcb)
            r = NET_ECONNREFUSED;
        net_unlock();
        if (r)
            break;
        r = poll_err(netpoll_wait(&c->pd, NETPOLL_WRITE));
    }
    if (r < 0) {
        conn_free(c);
        return (int)r;
    }
    if (deadline)
        netpoll_set_deadline(&c->pd, 0, NETPOLL_WRITE);
    *out = c;
    return 0;
}

int net_dial(const char *network, const char *address, net_conn_t **out)
{
    return dial(network, address, 0, out);
}

int net_dial_timeout(const char *network, const char *address, uint64_t timeout_ns, net_conn_t **out)
{
    if (!timeout_ns)
        return dial(network, address, 0, out);
    uint64_t now = nanotime();
    return dial(network, address, timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns, out);
}

int net_dial_deadline(const char *network, const char *address, uint64_t deadline, net_conn_t **out)
{
    // A deadline of 0 would read as none: the earliest one there is, long past.
    return dial(network, address, deadline ? deadline : 1, out);
}

// ---- listeners ---------------------------------------------------------------

int net_listen(const char *network, const char *address, net_listener_t **out)
{
    enum net_kind kind;
    struct net_addr at;
    *out = 0;
    if (!net_network_parse(network, &kind) || kind != NET_KIND_TCP)
        return NET_ENETWORK;
    if (net_addr_parse(address, true, &at))
        return NET_EADDR;
    net_start();
    struct net_listener *l = calloc(1, sizeof *l);
    netpoll_open(&l->pd);
    ip_addr_t ip;
    net_addr_to_lwip(&ip, &at);
    long r = 0;
    net_lock();
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb) {
        r = NET_ENOBUFS;
    } else {
        ip_set_option(pcb, SOF_REUSEADDR);      // Go sets SO_REUSEADDR on listeners
        err_t e = tcp_bind(pcb, &ip, at.port);
        struct tcp_pcb *lpcb = e == ERR_OK ? tcp_listen(pcb) : 0;
        if (!lpcb) {
            tcp_abort(pcb);
            r = e != ERR_OK ? net_err_from_lwip(e) : NET_ENOBUFS;
        } else if (!synq_listen(lpcb, accept_full, l)) {
            tcp_close(lpcb);        // a listening pcb always closes
            r = NET_ENOBUFS;
        } else {
            l->pcb = lpcb;
            at.port = lpcb->local_port;
            l->addr = at;
            tcp_arg(lpcb, l);
            tcp_accept(lpcb, on_accept);
        }
    }
    net_unlock();
    if (r) {
        netpoll_unblock(&l->pd);
        netpoll_close(&l->pd);
        free(l);
        return (int)r;
    }
    *out = l;
    return 0;
}

int listener_accept(net_listener_t *l, net_conn_t **out)
{
    *out = 0;
    enter(&l->refs);
    mutex_lock(&l->mu);
    long r = poll_err(netpoll_reset(&l->pd, NETPOLL_READ));
    while (!r) {
        net_lock();
        struct net_conn *c = l->closed ? 0 : l->head;
        if (l->closed) {
            r = NET_ECLOSED;
        } else if (c) {
            l->head = c->next;
            if (!l->head)
                l->tail = 0;
            l->n--;
            c->next = 0;
            *out = c;
            r = 1;
        }
        net_unlock();
        if (!r)
            r = poll_err(netpoll_wait(&l->pd, NETPOLL_READ));
    }
    mutex_unlock(&l->mu);
    leave(&l->refs);
    return r < 0 ? (int)r : 0;
}

int listener_close(net_listener_t *l)
{
    net_lock();
    bool was = l->closed;
    l->closed = true;
    struct net_conn *queued = l->head;
    l->head = l->tail = 0;
    l->n = 0;
    if (!was && l->pcb) {
        tcp_arg(l->pcb, 0);
        tcp_accept(l->pcb, 0);
        tcp_close(l->pcb);      // a listening pcb always closes
        l->pcb = 0;
    }
    // Connections lwIP accepted that nobody will: reset, as Linux does.
    for (struct net_conn *c = queued; c; c = c->next) {
        c->closed = true;
        if (c->pcb) {
            struct tcp_pcb *pcb = c->pcb;
            detach(c);
            tcp_abort(pcb);
        }
    }
    net_unlock();
    while (queued) {
        struct net_conn *next = queued->next;
        netpoll_unblock(&queued->pd);
        conn_free(queued);
        queued = next;
    }
    if (was)
        return NET_ECLOSED;
    netpoll_unblock(&l->pd);
    return 0;
}

void listener_free(net_listener_t *l)
{
    if (netpoll_check(&l->pd, NETPOLL_READ) != NETPOLL_ERR_CLOSING)
        listener_close(l);
    wait_refs(&l->refs);
    netpoll_close(&l->pd);
    free(l);
}

struct net_addr listener_addr(net_listener_t *l)
{
    return l->addr;
}

int listener_set_deadline(net_listener_t *l, uint64_t t)
{
    if (netpoll_check(&l->pd, NETPOLL_READ) == NETPOLL_ERR_CLOSING)
        return NET_ECLOSED;
    netpoll_set_deadline(&l->pd, t, NETPOLL_READ);
    return 0;
}
