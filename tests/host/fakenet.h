// SPDX-License-Identifier: MIT
// The system under the servers' host tests (test_httpd.c, test_kvd_conn.c):
// goro.h's net API, clock and go() as apps/netserve/netserve_sys.h declares
// them for GORO_HOST_TEST. A connection is a script of byte chunks, each
// arriving at a time on a virtual clock, then EOF (the client closed its
// side), an error (a reset), or silence; reads honour the read deadline by
// moving the clock to it, and a read with no deadline and nothing coming is
// marked hung (a real server would wait forever). go() queues the
// goroutine; fake_run runs them once the accept loop has taken every
// scripted connection, so limits on connections see them all open at once.
// Each connection's times count from its goroutine's start. Included by one
// test file per binary.
#ifndef GORO_TESTS_HOST_FAKENET_H
#define GORO_TESTS_HOST_FAKENET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define SEC 1000000000ull

static uint64_t now_ns;             // the virtual clock
static uint64_t free_pages;         // what page_free_count answers

uint64_t nanotime(void)
{
    return now_ns += 100;           // time passes as code runs: work() ends
}

void sleep_ns(uint64_t ns)
{
    now_ns += ns;
}

// The time of day: fake_wall_ns + the virtual clock (0: none, as on a
// machine without one).
static int64_t fake_wall_ns;

int64_t walltime_ns(void)
{
    return fake_wall_ns ? fake_wall_ns + (int64_t)now_ns : 0;
}

int gomaxprocs(int n)
{
    (void)n;
    return 2;
}

uint64_t page_free_count(void)
{
    return free_pages;
}

const char *net_error(long err)
{
    return err == NET_ETIMEOUT ? "i/o timeout" : err == NET_ECLOSED ? "use of closed network connection"
                                                                     : "connection error";
}

struct step {
    uint64_t at;                    // arrives at this time (ns from the connection's start)
    const char *data;
    size_t len;                     // 0: strlen(data)
};

struct net_conn {
    const struct step *script;
    int nsteps, i;
    size_t off;
    bool eof;                       // after the script: EOF; else silence
    long error;                     // after the script: this error instead (a reset)
    int write_fail_at;              // the write (1-based) that fails; 0 none
    bool unread;                    // the client reads nothing: every write waits for its deadline
    uint64_t t0;                    // accepted, then again when its goroutine starts
    uint64_t deadline, wdeadline;
    char *out;                      // everything written
    size_t olen;
    int writes, reads;
    bool closed, freed, hung;
    bool write_closed;              // conn_close_write: the server's FIN sent
    int read_at_write;              // script steps read whole when the first write was made
    uint64_t closed_at;
};

struct net_listener {
    int dummy;
};

static struct net_conn *pending[8];
static int npending, next_conn;
static struct {
    void (*fn)(void *);
    void *arg;
} gs[8];
static int ngs;

int net_listen(const char *network, const char *address, net_listener_t **l)
{
    static struct net_listener ln;
    (void)network, (void)address;
    *l = &ln;
    return 0;
}

int listener_accept(net_listener_t *l, net_conn_t **c)
{
    (void)l;
    if (next_conn == npending)
        return NET_ECLOSED;         // every scripted connection taken: the loop ends
    *c = pending[next_conn++];
    (*c)->t0 = now_ns;
    return 0;
}

// The listener is 0.0.0.0:11211; scripted connection i (from 0) comes
// from 127.0.0.1:40000 + i.
struct net_addr listener_addr(net_listener_t *l)
{
    (void)l;
    return (struct net_addr){ { 0, 0, 0, 0 }, 11211 };
}

struct net_addr conn_remote_addr(net_conn_t *c)
{
    int i = 0;
    while (i < npending && pending[i] != c)
        i++;
    return (struct net_addr){ { 127, 0, 0, 1 }, (uint16_t)(40000 + i) };
}

size_t net_addr_string(const struct net_addr *a, char *buf, size_t cap)
{
    return (size_t)snprintf(buf, cap, "%u.%u.%u.%u:%u", a->ip[0], a->ip[1], a->ip[2], a->ip[3], a->port);
}

uint64_t go(void (*fn)(void *), void *arg)
{
    gs[ngs].fn = fn;
    gs[ngs].arg = arg;
    return (uint64_t)++ngs;
}

int conn_set_read_deadline(net_conn_t *c, uint64_t t)
{
    c->deadline = t;
    return 0;
}

long conn_read(net_conn_t *c, void *buf, size_t n)
{
    c->reads++;
    if (c->closed)
        return NET_ECLOSED;
    if (c->i == c->nsteps) {
        if (c->eof)
            return NET_EOF;
        if (c->error)
            return c->error;
        if (!c->deadline) {
            c->hung = true;         // a real server would wait here forever
            return NET_ETIMEOUT;
        }
        if (now_ns < c->deadline)
            now_ns = c->deadline;
        return NET_ETIMEOUT;
    }
    const struct step *s = &c->script[c->i];
    if (c->t0 + s->at > now_ns) {
        if (c->deadline && c->t0 + s->at > c->deadline) {
            if (now_ns < c->deadline)
                now_ns = c->deadline;
            return NET_ETIMEOUT;
        }
        now_ns = c->t0 + s->at;
    }
    size_t len = s->len ? s->len : strlen(s->data);
    size_t k = len - c->off < n ? len - c->off : n;
    memcpy(buf, s->data + c->off, k);
    c->off += k;
    if (c->off == len)
        c->i++, c->off = 0;
    return (long)k;
}

int conn_set_write_deadline(net_conn_t *c, uint64_t t)
{
    c->wdeadline = t;
    return 0;
}

long conn_write(net_conn_t *c, const void *buf, size_t n)
{
    if (c->closed || c->write_closed)
        return NET_ECLOSED;
    if (c->unread) {
        c->writes++;
        if (!c->wdeadline)
            c->hung = true;         // a real server would wait here forever
        else if (now_ns < c->wdeadline)
            now_ns = c->wdeadline;
        return NET_ETIMEOUT;
    }
    if (!c->writes)
        c->read_at_write = c->i;
    if (++c->writes == c->write_fail_at)
        return NET_EPIPE;
    c->out = realloc(c->out, c->olen + n + 1);
    memcpy(c->out + c->olen, buf, n);
    c->olen += n;
    c->out[c->olen] = 0;
    return (long)n;
}

int conn_close_write(net_conn_t *c)
{
    if (c->closed || c->write_closed)
        return NET_ECLOSED;
    c->write_closed = true;
    return 0;
}

int conn_close(net_conn_t *c)
{
    if (c->closed)
        return NET_ECLOSED;
    c->closed = true;
    c->closed_at = now_ns - c->t0;
    return 0;
}

void conn_free(net_conn_t *c)
{
    c->freed = true;
}

static struct net_conn *conn(const struct step *s, int n, bool eof)
{
    struct net_conn *c = calloc(1, sizeof *c);
    c->script = s, c->nsteps = n, c->eof = eof;
    pending[npending++] = c;
    return c;
}

// The app's main with args (space-separated) over the connections made
// since the last run; then every goroutine it started, run to its end.
// Returns main's status.
static int fake_run(int (*app_main)(int, char **), const char *name, const char *args)
{
    char buf[256], *argv[16] = { (char *)name };
    int argc = 1;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *p = strtok(buf, " "); p && argc < 16; p = strtok(NULL, " "))
        argv[argc++] = p;
    int st = app_main(argc, argv);
    for (int i = 0; i < ngs; i++) {
        ((struct net_conn *)gs[i].arg)->t0 = now_ns;
        gs[i].fn(gs[i].arg);
    }
    return st;
}

static void fake_reset(void)
{
    for (int i = 0; i < npending; i++) {
        free(pending[i]->out);
        free(pending[i]);
    }
    npending = next_conn = ngs = 0;
    free_pages = 65536;             // 256 MiB
    fake_wall_ns = 0;
    now_ns += SEC;
}

// Every connection closed and freed, none read with no deadline and
// nothing coming.
static void fake_check_conns(void)
{
    for (int i = 0; i < npending; i++) {
        CHECKF(pending[i]->closed && pending[i]->freed, "connection %d not closed and freed", i);
        CHECKF(!pending[i]->hung, "connection %d read with no deadline and nothing coming", i);
    }
}

#endif
