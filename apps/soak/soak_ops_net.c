// SPDX-License-Identifier: MIT
// app=soak's network programs, over the machine's own loopback (goro.h's
// net API, TCP on 127.0.0.1): a listener on a port the stack picks, and
// clients that dial it, write messages, read each one's echo with a
// deadline, and see the connection closed from the server's side.
//
// What must hold: every message reaches the server once, whole (the
// round's ledger, as a channel's); every echo comes back byte for byte; a
// read whose deadline passed fails with NET_ETIMEOUT, no earlier than the
// deadline, and loses nothing (the same read without one gets the bytes);
// after the server's close the client reads NET_EOF. Any other error is a
// failure named with Go's text for it.
#include "soak.h"

#define NET_MAX_CONNS 3
#define NET_MAX_MSGS 8

struct net_prog {
    net_listener_t *l;
    uint32_t refs;              // atomic: the server and each client; the last frees l
    char addr[24];              // "127.0.0.1:port"
    uint32_t nconns, nmsgs;
    rng_t r;                    // the server's stream
};

// A client that could not dial closes the listener (the server's accept
// would wait for it forever), so the listener lives until the server and
// every client are done with it.
static void listener_put(struct net_prog *np)
{
    if (__atomic_sub_fetch(&np->refs, 1, __ATOMIC_ACQ_REL) == 0)   // acq_rel: the others' uses before the free
        listener_free(np->l);
}

struct net_side {               // one connection's end: a client or a handler
    struct net_prog *np;
    net_conn_t *c;              // the handler's (accepted); the client dials its own
    uint32_t id;
    rng_t r;
};

static bool net_ok(long err, const char *what, const char *addr)
{
    if (err >= 0)
        return true;
    soak_fail("net: %s (%s): %s", what, addr, net_error(err));
    return false;
}

// Reads until buf holds n bytes; *got carries over a read its deadline cut
// short. Returns 0, or the error that stopped it.
static long read_full(net_conn_t *c, void *buf, size_t n, size_t *got)
{
    while (*got < n) {
        long k = conn_read(c, (char *)buf + *got, n - *got);
        if (k < 0)
            return k;
        *got += (size_t)k;
    }
    return 0;
}

static bool write_msg(net_conn_t *c, const struct soak_msg *m, const char *addr)
{
    long w = conn_write(c, m, sizeof *m);
    soak_op(1);
    if (w >= 0 && w != (long)sizeof *m) {
        soak_fail("net: write (%s) returned %ld of %zu bytes", addr, w, sizeof *m);
        return false;
    }
    return net_ok(w, "write", addr);
}

// The server's side of one connection: each message is received (the
// ledger), sometimes after a pause (so the client's deadline may pass
// first), and echoed; then the server closes.
static void net_handler(void *arg)
{
    struct net_side *h = arg;
    const char *addr = h->np->addr;
    for (uint32_t i = 0; i < h->np->nmsgs; i++) {
        struct soak_msg m;
        size_t got = 0;
        long err = read_full(h->c, &m, sizeof m, &got);
        soak_op(1);
        if (!net_ok(err, "server read", addr))
            break;
        msg_received(&m, "net");
        uint64_t d = soak_duration(&h->r);
        if (rng_below(&h->r, 4) == 0 && d)
            sleep_ns(d);
        if (!write_msg(h->c, &m, addr))
            break;
    }
    net_ok(conn_close(h->c), "server close", addr);
    soak_op(1);
    conn_free(h->c);
}

static void net_server(void *arg)
{
    struct net_prog *np = arg;
    for (uint32_t i = 0; i < np->nconns; i++) {
        struct net_side *h = round_alloc(sizeof *h);
        h->np = np;
        h->id = i;
        h->r = rng_split(&np->r);
        long err = listener_accept(np->l, &h->c);
        soak_op(1);
        if (err == NET_ECLOSED)         // a client that failed to dial closed it: named there
            break;
        if (!net_ok(err, "accept", np->addr))
            break;
        soak_go(net_handler, h);
    }
    listener_close(np->l);
    listener_put(np);
}

// One echo: read with a deadline (d ns from now; 0: none). A read the
// deadline stopped is checked and done again without one.
static bool read_echo(struct net_side *cl, const struct soak_msg *sent, uint64_t d)
{
    const char *addr = cl->np->addr;
    struct soak_msg back;
    size_t got = 0;
    uint64_t start = nanotime();
    if (d && !net_ok(conn_set_read_deadline(cl->c, start + d), "set read deadline", addr))
        return false;
    long err = read_full(cl->c, &back, sizeof back, &got);
    soak_op(1);
    if (err == NET_ETIMEOUT && d) {
        check_not_early("net read deadline", start, d, nanotime());
        if (!net_ok(conn_set_read_deadline(cl->c, 0), "clear read deadline", addr))
            return false;
        err = read_full(cl->c, &back, sizeof back, &got);
        soak_op(1);
    } else if (d && !net_ok(conn_set_read_deadline(cl->c, 0), "clear read deadline", addr)) {
        return false;
    }
    if (!net_ok(err, "client read", addr))
        return false;
    if (memcmp(&back, sent, sizeof back)) {
        soak_fail("net: echo (%s) of message %u differs from what was sent", addr, sent->seq);
        return false;
    }
    return true;
}

static void net_client(void *arg)
{
    struct net_side *cl = arg;
    struct net_prog *np = cl->np;
    long err = net_dial("tcp", np->addr, &cl->c);
    soak_op(1);
    if (!net_ok(err, "dial", np->addr)) {
        listener_close(np->l);          // the server's accept would wait for this one forever
        listener_put(np);
        return;
    }
    listener_put(np);
    bool ok = true;
    for (uint32_t i = 0; ok && i < np->nmsgs; i++) {
        struct soak_msg m;
        msg_make(&m, cl->id, &cl->r);
        ok = write_msg(cl->c, &m, np->addr) && read_echo(cl, &m, soak_duration(&cl->r));
    }
    // The server closes after its last echo: what follows is the end.
    // (After a failure the client closes first instead: the server, still
    // reading, then ends too.)
    char extra;
    err = ok ? conn_read(cl->c, &extra, 1) : NET_EOF;
    soak_op(ok);
    if (err != NET_EOF)
        soak_fail("net: read after the server's close (%s): %s", np->addr,
                  err >= 0 ? "data" : net_error(err));
    net_ok(conn_close(cl->c), "client close", np->addr);
    soak_op(1);
    conn_free(cl->c);
}

void prog_net(rng_t *r)
{
    struct net_prog *np = round_alloc(sizeof *np);
    np->nconns = 1 + rng_below(r, NET_MAX_CONNS);
    np->nmsgs = 1 + rng_below(r, NET_MAX_MSGS);
    np->r = rng_split(r);
    long err = net_listen("tcp", "127.0.0.1:0", &np->l);
    soak_op(1);
    if (!net_ok(err, "listen", "127.0.0.1:0"))
        return;
    struct net_addr a = listener_addr(np->l);
    net_addr_string(&a, np->addr, sizeof np->addr);
    np->refs = 1 + np->nconns;          // before any goroutine: published by soak_go
    soak_go(net_server, np);
    for (uint32_t i = 0; i < np->nconns; i++) {
        struct net_side *cl = round_alloc(sizeof *cl);
        cl->np = np;
        cl->id = i;
        cl->r = rng_split(r);
        soak_go(net_client, cl);
    }
}
