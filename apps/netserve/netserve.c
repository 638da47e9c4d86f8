// SPDX-License-Identifier: MIT
// The servers' shared accept loop, writes, buffer budget and argument
// numbers (netserve.h). Host-tested inside test_httpd and test_kvd_conn.
#include "netserve.h"

int netserve_listen(struct netserve *s, net_listener_t **ln)
{
    char addr[16];
    snprintf(addr, sizeof addr, ":%u", s->port);
    int err = net_listen("tcp", addr, ln);
    if (err)
        printf("%s: listen on port %u: %s\n", s->name, s->port, net_error(err));
    return err;
}

// One connection, or the listener's own error. Go's Server.Serve waits
// out any other error, doubling from 5 ms to 1 s, and goes on.
static int accept_conn(const struct netserve *s, net_listener_t *ln, net_conn_t **c, uint64_t *backoff_ns)
{
    for (;;) {
        int err = listener_accept(ln, c);
        if (err == 0) {
            *backoff_ns = 0;
            return 0;
        }
        if (err == NET_ECLOSED)
            return err;
        *backoff_ns = *backoff_ns ? *backoff_ns * 2 : 5000000;
        if (*backoff_ns > 1000000000)
            *backoff_ns = 1000000000;
        printf("%s: accept: %s; retrying in %llu ms\n", s->name, net_error(err),
               (unsigned long long)(*backoff_ns / 1000000));
        sleep_ns(*backoff_ns);
    }
}

int netserve_run(struct netserve *s, net_listener_t *ln)
{
    uint64_t backoff = 0;
    for (;;) {
        net_conn_t *c;
        int err = accept_conn(s, ln, &c, &backoff);
        if (err) {
            printf("%s: accept: %s\n", s->name, net_error(err));
            return err;
        }
        __atomic_add_fetch(&s->accepted, 1, __ATOMIC_RELAXED);      // relaxed: a statistic, publishes nothing
        // relaxed: a count, pairs with netserve_done's decrement; it
        // orders nothing else (go() hands the connection over).
        if (__atomic_add_fetch(&s->open, 1, __ATOMIC_RELAXED) > s->max_conns) {
            __atomic_sub_fetch(&s->open, 1, __ATOMIC_RELAXED);       // relaxed: the count back, as above
            __atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);    // relaxed: a statistic
            netserve_write(s, c, s->busy, s->busy_len);
            conn_close(c);
            conn_free(c);
            continue;
        }
        go(s->serve, c);
    }
}

void netserve_done(struct netserve *s, net_conn_t *c)
{
    conn_close(c);
    conn_free(c);
    __atomic_sub_fetch(&s->open, 1, __ATOMIC_RELAXED);   // relaxed: pairs with netserve_run's count only
}

int netserve_write(const struct netserve *s, net_conn_t *c, const void *buf, size_t n)
{
    conn_set_write_deadline(c, s->write_ns ? nanotime() + s->write_ns : 0);
    long w = conn_write(c, buf, n);
    return w == (long)n ? 0 : w < 0 ? (int)w : NET_EPIPE;
}

bool netserve_charge(struct netserve *s, int64_t n)
{
    // relaxed: the charge is a count; what it bounds (malloc'd buffers)
    // is owned by the charging goroutine and never published through it.
    uint64_t used = __atomic_add_fetch(&s->buf_bytes, (uint64_t)n, __ATOMIC_RELAXED);
    if (n > 0 && used > s->budget) {
        __atomic_sub_fetch(&s->buf_bytes, (uint64_t)n, __ATOMIC_RELAXED);   // relaxed: the charge undone
        return false;
    }
    return true;
}

bool netserve_number(const char *s, bool duration, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > UINT64_MAX / 10 - 9)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    uint64_t unit = duration ? 1000000000 : 1;
    if (duration) {
        if (!strcmp(p, "us"))
            unit = 1000;
        else if (!strcmp(p, "ms"))
            unit = 1000000;
        else if (!strcmp(p, "s"))
            unit = 1000000000;
        else if (!strcmp(p, "m"))
            unit = 60000000000ull;
        else if (!strcmp(p, "h"))
            unit = 3600000000000ull;
        else if (*p)
            return false;
    } else if (*p) {
        if (p[1] || !strchr("kKmMgG", *p))
            return false;
        unit = *p == 'k' || *p == 'K' ? 1024 : *p == 'm' || *p == 'M' ? 1 << 20 : 1 << 30;
    }
    if (v && unit > UINT64_MAX / v)
        return false;
    *out = v * unit;
    return true;
}
