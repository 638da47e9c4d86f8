// SPDX-License-Identifier: MIT
// loadgen: an open-loop load generator for HTTP and memcached-protocol
// servers, after the synthetic client of Shenango and Caladan.
//
// Requests arrive as a Poisson process at the offered rate, whatever the
// server does: each thread draws its own exponential gaps (rate / threads)
// and sends every request at its scheduled time on an idle connection of
// its own (or, with --depth above 1, pipelined behind others; with none
// free, it waits in the thread's backlog). A request's latency runs from
// its scheduled time to the last byte of its answer, so a server that
// falls behind is charged for the wait it causes (no coordinated
// omission). Every answer is checked to be exactly the right one
// (proto.c); anything else, a connection lost, or a request unanswered by
// the end of the drain is an error, counted and reported: a point with
// errors does not count.
//
// Before the clock starts, each connection is opened and primed with one
// request answered, so that a listener that accepted for a guest not yet
// listening (QEMU's user networking does) is found out before measuring.
// The first 10% of samples, by scheduled time, are dropped (warm-up).
//
// Output (stdout), one line each:
//   LOADGEN proto=http target=... offered_rps=... achieved_rps=... errors=0 ...
//   LAT class=all n=... p50_us=... p90_us=... p99_us=... p999_us=... max_us=... mean_us=...
//   LAT class=short ... / LAT class=long ... (the bimodal mix)
// and with --json FILE the same as JSON. Exit 0 when the run had no
// errors, 1 when it had some, 2 when it could not start.
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/net/loadgen/proto.h"

#define MAX_CLASSES 2
#define REQ_MAX 8192              // the longest request (a memcache set of the largest value)

// ---- options -------------------------------------------------------------------------

enum mix { MIX_FIXED, MIX_BIMODAL };

static struct {
    const char *target;           // host:port
    struct proto_cfg proto;
    double rate;                  // offered requests per second, all threads
    int conns, threads, depth;
    double duration_s, drain_s, warmup_frac;
    uint64_t max_requests;
    enum mix mix;
    const char *path, *expect;    // http, fixed mix
    uint32_t short_us, long_us;   // http, bimodal mix
    double long_frac;
    uint32_t keys;                // memcache
    double get_frac;
    bool preload, hits_only;
    uint64_t seed;
    const char *json;
    double connect_timeout_s;
    int connect_tries;
    bool quiet;
} opt = {
    .rate = 1000, .conns = 64, .threads = 2, .depth = 1, .duration_s = 10, .drain_s = 5,
    .warmup_frac = 0.1, .mix = MIX_FIXED, .path = "/", .expect = "Hello, World!",
    .short_us = 4, .long_us = 10000, .long_frac = 0.005, .keys = 10000, .get_frac = 0.9,
    .seed = 1, .connect_timeout_s = 5, .connect_tries = 50,
    .proto = { .proto = PROTO_HTTP, .value_size = 32 },
};

static struct addrinfo *target_ai;

// The bimodal mix's two requests, and their expected bodies ("N\n").
static char short_path[64], long_path[64], short_body[32], long_body[32];

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "loadgen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// ---- per-thread state ------------------------------------------------------------------

struct req {
    uint64_t sched;               // when it was due to be sent (ns, CLOCK_MONOTONIC)
    struct op op;
};

struct sample {
    uint64_t sched, lat;
    uint8_t cls;
};

struct conn {
    int fd;                       // -1: dead (could not reconnect)
    struct thread *t;
    struct req *q;                // sent, unanswered, oldest first: a ring of opt.depth
    uint32_t qhead, qlen;
    char *rbuf;
    size_t rlen, rcap;
    char *wbuf;
    size_t wlen, woff, wcap;
    bool registered, want_out, idle;
    bool primed;                  // its first request answered, before the clock starts
    int tries;                    // opens so far, while priming
    uint64_t prime_sent;
};

struct thread {
    int id;
    pthread_t th;
    int ep;
    struct conn *conns;
    int nconns;
    int *idle;                    // a stack of idle connections' indexes
    int nidle;
    struct req *backlog;          // due, waiting for a connection: a ring
    size_t bhead, blen, bcap;
    uint64_t rng;
    uint64_t max_requests;
    struct sample *samples;
    size_t nsamples, scap;
    // counters
    uint64_t inflight;            // sent and unanswered, all connections
    uint64_t scheduled, sent, ok, miss, bad, lost, conn_errors, server_closes, timeouts, unsent;
    uint64_t late, lag_max;       // generation lag: due requests dispatched over 1 ms late, the worst
    uint64_t last_done;
    const char *first_error;
};

static struct thread *threads;
static pthread_barrier_t primed;
static uint64_t t_start, t_end;   // the schedule's start and end (the send window)

static void note_error(struct thread *t, const char *what)
{
    if (!t->first_error)
        t->first_error = what;
}

static uint64_t rng_next(struct thread *t)
{
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(struct thread *t)
{
    return (double)(rng_next(t) >> 11) * 0x1.0p-53;
}

// The next exponential gap of a Poisson process at rate per second, in ns.
static uint64_t gap_ns(struct thread *t, double rate)
{
    return (uint64_t)(-log(1.0 - rng_unit(t)) / rate * 1e9);
}

static struct op next_op(struct thread *t)
{
    struct op op = { 0 };
    if (opt.proto.proto == PROTO_MEMCACHE) {
        op.kind = rng_unit(t) < opt.get_frac ? OP_MC_GET : OP_MC_SET;
        op.key = (uint32_t)(rng_next(t) % opt.keys);
        op.cls = 0;
        return op;
    }
    op.kind = OP_HTTP_GET;
    if (opt.mix == MIX_FIXED) {
        op.path = opt.path;
        op.expect = opt.expect;
    } else if (rng_unit(t) < opt.long_frac) {
        op.path = long_path, op.expect = long_body, op.cls = 1;
    } else {
        op.path = short_path, op.expect = short_body;
    }
    op.expect_len = (uint32_t)strlen(op.expect);
    return op;
}

// The request that opens each connection before the clock starts.
static struct op prime_op(void)
{
    struct op op = { .kind = OP_MC_VERSION };
    if (opt.proto.proto == PROTO_HTTP) {
        op.kind = OP_HTTP_GET;
        op.path = opt.mix == MIX_FIXED ? opt.path : short_path;
        op.expect = opt.mix == MIX_FIXED ? opt.expect : short_body;
        op.expect_len = (uint32_t)strlen(op.expect);
    }
    return op;
}

// ---- connections ---------------------------------------------------------------------------

// A blocking connect with a timeout, retried (a listener with a backlog of
// one refuses or drops the SYNs of simultaneous connects); the fd, or -1.
static int dial(void)
{
    for (int attempt = 0; attempt < opt.connect_tries; attempt++) {
        if (attempt)
            usleep(20000 + 10000 * (useconds_t)(attempt < 10 ? attempt : 10));
        int fd = socket(target_ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            die("socket: %s", strerror(errno));
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, target_ai->ai_addr, target_ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
            close(fd);
            continue;
        }
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&p, 1, (int)(opt.connect_timeout_s * 1000)) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
            return fd;
        close(fd);
    }
    return -1;
}

static void conn_watch(struct conn *c, bool out)
{
    struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c };
    if (epoll_ctl(c->t->ep, c->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev) < 0)
        die("epoll_ctl: %s", strerror(errno));
    c->registered = true;
    c->want_out = out;
}

static bool conn_open(struct conn *c)
{
    c->fd = dial();
    c->rlen = c->wlen = c->woff = 0;
    c->qlen = c->qhead = 0;
    c->want_out = c->registered = false;
    if (c->fd < 0)
        return false;
    conn_watch(c, false);
    return true;
}

static void conn_close(struct conn *c)
{
    epoll_ctl(c->t->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->registered = false;
}

static void conn_flush(struct conn *c)
{
    while (c->woff < c->wlen) {
        ssize_t n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN)
                break;
            return;                  // the read side sees the error
        }
        c->woff += (size_t)n;
    }
    if (c->woff == c->wlen)
        c->woff = c->wlen = 0;
    bool out = c->wlen > 0;
    if (out != c->want_out)
        conn_watch(c, out);
}

static void conn_send(struct conn *c, const struct req *r)
{
    char buf[REQ_MAX];
    size_t n = proto_request(&opt.proto, &r->op, buf, sizeof buf);
    if (!n)
        die("a request does not fit in %d bytes", REQ_MAX);
    if (c->wlen + n > c->wcap) {
        c->wcap = (c->wlen + n) * 2;
        c->wbuf = realloc(c->wbuf, c->wcap);
        if (!c->wbuf)
            die("out of memory");
    }
    memcpy(c->wbuf + c->wlen, buf, n);
    c->wlen += n;
    c->q[(c->qhead + c->qlen++) % (uint32_t)opt.depth] = *r;
    c->t->sent++;
    c->t->inflight++;
    conn_flush(c);
}

// ---- dispatch ---------------------------------------------------------------------------------

static void backlog_push(struct thread *t, const struct req *r)
{
    if (t->blen == t->bcap) {
        size_t ncap = t->bcap ? 2 * t->bcap : 1024;
        struct req *nb = malloc(ncap * sizeof *nb);
        if (!nb)
            die("out of memory");
        for (size_t i = 0; i < t->blen; i++)
            nb[i] = t->backlog[(t->bhead + i) % t->bcap];
        free(t->backlog);
        t->backlog = nb, t->bcap = ncap, t->bhead = 0;
    }
    t->backlog[(t->bhead + t->blen++) % t->bcap] = *r;
}

// A connection to send on: an idle one, else (pipelining) the least loaded
// below the depth; NULL when every one is full.
static struct conn *pick(struct thread *t)
{
    while (t->nidle) {
        struct conn *c = &t->conns[t->idle[--t->nidle]];
        c->idle = false;
        if (c->fd >= 0 && c->qlen == 0)
            return c;
    }
    struct conn *best = NULL;
    for (int i = 0; i < t->nconns && opt.depth > 1; i++) {
        struct conn *c = &t->conns[i];
        if (c->fd >= 0 && c->qlen < (uint32_t)opt.depth && (!best || c->qlen < best->qlen))
            best = c;
    }
    return best;
}

static void make_idle(struct thread *t, struct conn *c)
{
    if (!c->idle && c->fd >= 0) {
        c->idle = true;
        t->idle[t->nidle++] = (int)(c - t->conns);
    }
}

static void dispatch(struct thread *t, const struct req *r)
{
    struct conn *c = t->blen ? NULL : pick(t);
    if (c)
        conn_send(c, r);
    else
        backlog_push(t, r);
}

// A connection with room takes backlogged requests, oldest first.
static void drain_backlog(struct thread *t, struct conn *c)
{
    while (t->blen && c->fd >= 0 && c->qlen < (uint32_t)opt.depth) {
        struct req r = t->backlog[t->bhead];
        t->bhead = (t->bhead + 1) % t->bcap;
        t->blen--;
        conn_send(c, &r);
    }
    if (c->qlen == 0)
        make_idle(t, c);
}

// ---- answers ------------------------------------------------------------------------------------

static void record(struct thread *t, const struct req *r, uint64_t done)
{
    if (t->nsamples == t->scap) {
        t->scap = t->scap ? 2 * t->scap : 4096;
        t->samples = realloc(t->samples, t->scap * sizeof *t->samples);
        if (!t->samples)
            die("out of memory for samples");
    }
    t->samples[t->nsamples++] = (struct sample){ r->sched, done > r->sched ? done - r->sched : 0, r->op.cls };
    t->last_done = done;
}

// The connection failed or was closed: what it had outstanding is lost;
// it is opened again (its requests are not re-sent: they count as errors).
static void conn_reset(struct thread *t, struct conn *c, bool measuring)
{
    if (measuring)
        t->lost += c->qlen;
    t->inflight -= c->qlen;
    conn_close(c);
    if (!conn_open(c)) {
        note_error(t, "could not reconnect");
        t->conn_errors++;
        return;
    }
    drain_backlog(t, c);
}

// Reads what the server sent and completes the answered requests; false
// when the connection broke.
static bool conn_read(struct thread *t, struct conn *c, bool measuring)
{
    for (;;) {
        if (c->rcap - c->rlen < 16384) {
            if (c->rcap >= 2 * PROTO_MAX_ANSWER) {
                note_error(t, "answer too large");
                t->bad++;
                return false;
            }
            c->rcap = c->rcap ? 2 * c->rcap : 65536;
            c->rbuf = realloc(c->rbuf, c->rcap);
            if (!c->rbuf)
                die("out of memory");
        }
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            if (c->qlen || !measuring) {
                note_error(t, n == 0 ? "connection closed with requests outstanding" : "connection error");
                t->conn_errors++;
            }
            return false;
        }
        if (n < 0)
            break;
        c->rlen += (size_t)n;
    }
    uint64_t done = now_ns();
    size_t off = 0;
    while (off < c->rlen) {
        if (!c->qlen) {
            note_error(t, "bytes from the server with nothing asked");
            t->bad++;
            return false;
        }
        struct req *r = &c->q[c->qhead];
        size_t used = 0;
        int close_after = 0;
        const char *why = "";
        enum parse_status s = proto_parse(&opt.proto, &r->op, c->rbuf + off, c->rlen - off, &used, &close_after, &why);
        if (s == PARSE_MORE)
            break;
        if (s == PARSE_BAD) {
            note_error(t, why);
            t->bad++;
            c->qhead = (c->qhead + 1) % (uint32_t)opt.depth;
            c->qlen--;
            t->inflight--;
            return false;
        }
        off += used;
        c->qhead = (c->qhead + 1) % (uint32_t)opt.depth;
        c->qlen--;
        t->inflight--;
        if (measuring) {
            if (s == PARSE_MISS && opt.hits_only) {
                note_error(t, "a get missed a preloaded key");
                t->bad++;
            } else if (s == PARSE_MISS) {
                t->miss++;
            } else {
                t->ok++;
            }
            record(t, r, done);
        }
        if (close_after) {
            t->server_closes++;
            if (!measuring || c->qlen)
                note_error(t, "the server closed a keep-alive connection");
            c->rlen = 0;
            return false;
        }
    }
    memmove(c->rbuf, c->rbuf + off, c->rlen - off);
    c->rlen -= off;
    return true;
}

static void handle(struct thread *t, struct epoll_event *ev, bool measuring)
{
    struct conn *c = ev->data.ptr;
    if (c->fd < 0)
        return;
    if (ev->events & EPOLLOUT)
        conn_flush(c);
    if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (!conn_read(t, c, measuring)) {
            conn_reset(t, c, measuring);
            return;
        }
        if (measuring)
            drain_backlog(t, c);
    }
}

static int wait_events(struct thread *t, struct epoll_event *evs, int max, uint64_t until)
{
    uint64_t now = now_ns();
    uint64_t d = until > now ? until - now : 0;
    struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
    int n = epoll_pwait2(t->ep, evs, max, &ts, NULL);
    if (n < 0 && errno == ENOSYS)
        n = epoll_wait(t->ep, evs, max, (int)((d + 999999) / 1000000));
    if (n < 0 && errno != EINTR)
        die("epoll_wait: %s", strerror(errno));
    return n < 0 ? 0 : n;
}

// ---- preloading ----------------------------------------------------------------------------------

// Sets this thread's share of the keys (k mod threads == id) on a
// connection of its own, 64 pipelined at a time, each answer checked.
static void preload(struct thread *t)
{
    int fd = dial();
    if (fd < 0)
        die("preload: cannot connect to %s", opt.target);
    struct pollfd p = { .fd = fd };
    size_t cap = 64 * (size_t)REQ_MAX;
    char *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    for (uint32_t k = (uint32_t)t->id; k < opt.keys;) {
        size_t n = 0;
        int batch = 0;
        for (; batch < 64 && k < opt.keys; batch++, k += (uint32_t)opt.threads) {
            struct op op = { .kind = OP_MC_SET, .key = k };
            n += proto_request(&opt.proto, &op, buf + n, cap - n);
        }
        for (size_t off = 0; off < n;) {
            ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL);
            if (w < 0 && errno == EAGAIN) {
                p.events = POLLOUT;
                poll(&p, 1, 1000);
                continue;
            }
            if (w <= 0)
                die("preload: send: %s", strerror(errno));
            off += (size_t)w;
        }
        // batch answers of "STORED\r\n"
        size_t want = (size_t)batch * 8, got = 0;
        char ans[64 * 8];
        while (got < want) {
            p.events = POLLIN;
            if (poll(&p, 1, (int)(opt.connect_timeout_s * 1000)) != 1)
                die("preload: no answer from %s", opt.target);
            ssize_t r = recv(fd, ans + got, want - got, 0);
            if (r < 0 && errno == EAGAIN)
                continue;
            if (r <= 0)
                die("preload: connection lost");
            got += (size_t)r;
        }
        for (int i = 0; i < batch; i++)
            if (memcmp(ans + 8 * i, "STORED\r\n", 8))
                die("preload: a set was not answered STORED: \"%.8s\"", ans + 8 * i);
    }
    free(buf);
    close(fd);
}

// ---- a thread -------------------------------------------------------------------------------------

static void prime_send(struct thread *t, struct conn *c)
{
    if (++c->tries > opt.connect_tries)
        die("connection %d of thread %d: no answer to its first request from %s after %d tries (%s)",
            (int)(c - t->conns), t->id, opt.target, opt.connect_tries, t->first_error ? t->first_error : "timed out");
    if (c->tries > 1)
        usleep(50000);
    if (!conn_open(c))
        die("connection %d of thread %d: cannot connect to %s", (int)(c - t->conns), t->id, opt.target);
    struct req r = { now_ns(), prime_op() };
    c->prime_sent = r.sched;
    conn_send(c, &r);
}

// Opens every connection and has one request answered on each, again on
// a new connection where the first broke or went unanswered.
static void prime(struct thread *t)
{
    struct epoll_event evs[256];
    int pending = t->nconns;
    uint64_t limit = (uint64_t)(opt.connect_timeout_s * 1e9);
    for (int i = 0; i < t->nconns; i++)
        prime_send(t, &t->conns[i]);
    while (pending) {
        int n = wait_events(t, evs, 256, now_ns() + 50000000);
        for (int k = 0; k < n; k++) {
            struct conn *c = evs[k].data.ptr;
            if (c->fd < 0)
                continue;
            if (evs[k].events & EPOLLOUT)
                conn_flush(c);
            if (!(evs[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
                continue;
            if (!conn_read(t, c, false)) {
                t->inflight -= c->qlen;
                conn_close(c);
                pending += c->primed;
                c->primed = false;
                prime_send(t, c);
            } else if (!c->primed && !c->qlen) {
                c->primed = true;
                pending--;
                make_idle(t, c);
            }
        }
        uint64_t now = now_ns();
        for (int i = 0; i < t->nconns; i++) {
            struct conn *c = &t->conns[i];
            if (!c->primed && now - c->prime_sent > limit) {
                t->inflight -= c->qlen;
                conn_close(c);
                prime_send(t, c);
            }
        }
    }
}

static void *thread_main(void *arg)
{
    struct thread *t = arg;
    struct epoll_event evs[256];
    double rate = opt.rate / opt.threads;
    if (opt.preload)
        preload(t);
    prime(t);
    t->first_error = NULL;
    t->conn_errors = t->bad = t->server_closes = t->sent = 0;
    pthread_barrier_wait(&primed);
    pthread_barrier_wait(&primed);          // main has set t_start and t_end

    uint64_t next = t_start + gap_ns(t, rate);
    for (;;) {
        uint64_t now = now_ns();
        while (next <= now && next < t_end && t->scheduled < t->max_requests) {
            struct req r = { next, next_op(t) };
            uint64_t lag = now - next;
            if (lag > 1000000)
                t->late++;
            if (lag > t->lag_max)
                t->lag_max = lag;
            dispatch(t, &r);
            t->scheduled++;
            next += gap_ns(t, rate);
        }
        bool sending = next < t_end && t->scheduled < t->max_requests;
        uint64_t outstanding = t->blen + t->inflight;
        if (!sending && outstanding == 0)
            break;
        uint64_t stop = t_end + (uint64_t)(opt.drain_s * 1e9);
        if (!sending && now >= stop) {
            t->unsent += t->blen;
            t->timeouts += outstanding - t->blen;
            note_error(t, "requests unanswered at the end of the drain");
            break;
        }
        int n = wait_events(t, evs, 256, sending ? next : stop);
        for (int k = 0; k < n; k++)
            handle(t, &evs[k], true);
    }
    for (int i = 0; i < t->nconns; i++)
        if (t->conns[i].fd >= 0)
            close(t->conns[i].fd);
    return NULL;
}

// ---- the report ----------------------------------------------------------------------------------

static int by_sched(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    return x->sched < y->sched ? -1 : x->sched > y->sched;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct dist {
    const char *cls;
    size_t n;
    double p50, p90, p99, p999, max, mean;      // microseconds
};

// Nearest-rank percentile of sorted v[0..n).
static double pct(const uint64_t *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return (double)v[k ? k - 1 : 0] / 1000.0;
}

static struct dist dist_of(const char *cls, uint64_t *v, size_t n)
{
    struct dist d = { .cls = cls, .n = n };
    if (!n)
        return d;
    qsort(v, n, sizeof *v, by_u64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    d.p50 = pct(v, n, 0.50), d.p90 = pct(v, n, 0.90), d.p99 = pct(v, n, 0.99), d.p999 = pct(v, n, 0.999);
    d.max = (double)v[n - 1] / 1000.0;
    d.mean = sum / (double)n / 1000.0;
    return d;
}

static int report(void)
{
    struct thread sum = { 0 };
    size_t total = 0;
    const char *first_error = NULL;
    for (int i = 0; i < opt.threads; i++) {
        struct thread *t = &threads[i];
        total += t->nsamples;
        sum.scheduled += t->scheduled, sum.sent += t->sent, sum.ok += t->ok, sum.miss += t->miss;
        sum.bad += t->bad, sum.lost += t->lost, sum.conn_errors += t->conn_errors;
        sum.server_closes += t->server_closes, sum.timeouts += t->timeouts, sum.unsent += t->unsent;
        sum.late += t->late;
        if (t->lag_max > sum.lag_max)
            sum.lag_max = t->lag_max;
        if (t->last_done > sum.last_done)
            sum.last_done = t->last_done;
        if (!first_error)
            first_error = t->first_error;
    }
    struct sample *all = malloc((total ? total : 1) * sizeof *all);
    uint64_t *lat = malloc((total ? total : 1) * sizeof *lat);
    if (!all || !lat)
        die("out of memory for the report");
    size_t k = 0;
    for (int i = 0; i < opt.threads; i++) {
        memcpy(all + k, threads[i].samples, threads[i].nsamples * sizeof *all);
        k += threads[i].nsamples;
    }
    qsort(all, total, sizeof *all, by_sched);
    size_t skip = (size_t)((double)total * opt.warmup_frac);
    struct dist d[1 + MAX_CLASSES];
    int nd = 0;
    size_t n = 0;
    for (size_t i = skip; i < total; i++)
        lat[n++] = all[i].lat;
    d[nd++] = dist_of("all", lat, n);
    if (opt.mix == MIX_BIMODAL && opt.proto.proto == PROTO_HTTP) {
        static const char *names[MAX_CLASSES] = { "short", "long" };
        for (int c = 0; c < MAX_CLASSES; c++) {
            n = 0;
            for (size_t i = skip; i < total; i++)
                if (all[i].cls == c)
                    lat[n++] = all[i].lat;
            d[nd++] = dist_of(names[c], lat, n);
        }
    }
    uint64_t errors = sum.bad + sum.lost + sum.conn_errors + sum.timeouts + sum.unsent;
    double span = sum.last_done > t_start ? (double)(sum.last_done - t_start) / 1e9 : 0;
    double achieved = span > 0 ? (double)(sum.ok + sum.miss) / span : 0;
    double window = (double)(t_end - t_start) / 1e9;
    const char *proto = opt.proto.proto == PROTO_HTTP ? "http" : "memcache";
    const char *mix = opt.proto.proto == PROTO_MEMCACHE ? "getset" : opt.mix == MIX_BIMODAL ? "bimodal" : "fixed";

    printf("LOADGEN proto=%s target=%s mix=%s conns=%d threads=%d depth=%d duration_s=%.1f "
           "offered_rps=%.0f scheduled_rps=%.0f achieved_rps=%.0f scheduled=%llu sent=%llu ok=%llu miss=%llu "
           "errors=%llu bad=%llu lost=%llu conn_errors=%llu server_closes=%llu timeouts=%llu unsent=%llu "
           "late_sends=%llu send_lag_max_us=%.0f warmup_dropped=%zu\n",
           proto, opt.target, mix, opt.conns, opt.threads, opt.depth, window, opt.rate,
           window > 0 ? (double)sum.scheduled / window : 0, achieved, (unsigned long long)sum.scheduled,
           (unsigned long long)sum.sent, (unsigned long long)sum.ok, (unsigned long long)sum.miss,
           (unsigned long long)errors, (unsigned long long)sum.bad, (unsigned long long)sum.lost,
           (unsigned long long)sum.conn_errors, (unsigned long long)sum.server_closes,
           (unsigned long long)sum.timeouts, (unsigned long long)sum.unsent, (unsigned long long)sum.late,
           (double)sum.lag_max / 1000.0, skip);
    for (int i = 0; i < nd; i++)
        printf("LAT class=%s n=%zu p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f mean_us=%.1f\n",
               d[i].cls, d[i].n, d[i].p50, d[i].p90, d[i].p99, d[i].p999, d[i].max, d[i].mean);
    if (first_error)
        printf("ERROR first=\"%s\"\n", first_error);
    fflush(stdout);

    if (opt.json) {
        FILE *f = fopen(opt.json, "w");
        if (!f)
            die("%s: %s", opt.json, strerror(errno));
        fprintf(f, "{\"proto\": \"%s\", \"target\": \"%s\", \"mix\": \"%s\", \"conns\": %d, \"threads\": %d, "
                   "\"depth\": %d, \"duration_s\": %.3f, \"offered_rps\": %.1f, \"achieved_rps\": %.1f, "
                   "\"scheduled\": %llu, \"ok\": %llu, \"miss\": %llu, \"errors\": %llu, \"bad\": %llu, "
                   "\"lost\": %llu, \"conn_errors\": %llu, \"timeouts\": %llu, \"unsent\": %llu, "
                   "\"late_sends\": %llu, \"send_lag_max_us\": %.1f, \"first_error\": \"%s\", \"lat\": [",
                proto, opt.target, mix, opt.conns, opt.threads, opt.depth, window, opt.rate, achieved,
                (unsigned long long)sum.scheduled, (unsigned long long)sum.ok, (unsigned long long)sum.miss,
                (unsigned long long)errors, (unsigned long long)sum.bad, (unsigned long long)sum.lost,
                (unsigned long long)sum.conn_errors, (unsigned long long)sum.timeouts,
                (unsigned long long)sum.unsent, (unsigned long long)sum.late, (double)sum.lag_max / 1000.0,
                first_error ? first_error : "");
        for (int i = 0; i < nd; i++)
            fprintf(f, "%s{\"class\": \"%s\", \"n\": %zu, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, "
                       "\"p999_us\": %.1f, \"max_us\": %.1f, \"mean_us\": %.1f}",
                    i ? ", " : "", d[i].cls, d[i].n, d[i].p50, d[i].p90, d[i].p99, d[i].p999, d[i].max, d[i].mean);
        fprintf(f, "]}\n");
        fclose(f);
    }
    free(all);
    free(lat);
    return errors ? 1 : 0;
}

// ---- main ---------------------------------------------------------------------------------------

static void usage(FILE *f)
{
    fprintf(f,
            "usage: loadgen [options] HOST:PORT\n"
            "  -P, --proto P         http (default) or memcache\n"
            "  -R, --rate N          offered requests/s, Poisson arrivals (default 1000)\n"
            "  -c, --conns N         connections (default 64)\n"
            "  -t, --threads N       threads, each with its share of connections and rate (default 2)\n"
            "  -d, --duration S      seconds of arrivals (default 10)\n"
            "  -n, --requests N      at most N requests in all (default: no limit but the duration)\n"
            "      --depth N         requests in flight per connection (default 1: no pipelining)\n"
            "      --drain S         seconds to wait for answers after the last arrival (default 5)\n"
            "      --warmup F        fraction of samples dropped, the earliest (default 0.1)\n"
            "  http:\n"
            "      --path P          the request's path (default /)\n"
            "      --expect BODY     the body a correct answer has (default 'Hello, World!')\n"
            "      --bimodal         GET /work?us=SHORT, or /work?us=LONG with probability --long-frac\n"
            "      --short-us N --long-us N --long-frac F   (default 4, 10000, 0.005: Skyloft's mix)\n"
            "  memcache:\n"
            "      --keys N          keys key:0000000000.. (default 10000), uniformly chosen\n"
            "      --get-frac F      share of gets; the rest are sets (default 0.9)\n"
            "      --value-size N    bytes of every value (default 32, at most %u)\n"
            "      --preload         set every key before the clock starts (each answer checked)\n"
            "      --hits-only       with --preload: a get that misses is an error (no eviction expected)\n"
            "  --seed N, --json FILE, --connect-timeout S, --connect-tries N, -q (no progress line)\n",
            PROTO_MC_VALUE_MAX);
}

static void parse_args(int argc, char **argv)
{
    enum { O_DEPTH = 256, O_DRAIN, O_WARMUP, O_PATH, O_EXPECT, O_BIMODAL, O_SHORT, O_LONG, O_LONGF, O_KEYS,
           O_GETF, O_VSIZE, O_SEED, O_JSON, O_CTO, O_CTRIES, O_PRELOAD, O_HITS };
    static const struct option lo[] = {
        { "proto", 1, 0, 'P' }, { "rate", 1, 0, 'R' }, { "conns", 1, 0, 'c' }, { "threads", 1, 0, 't' },
        { "duration", 1, 0, 'd' }, { "requests", 1, 0, 'n' }, { "depth", 1, 0, O_DEPTH },
        { "drain", 1, 0, O_DRAIN }, { "warmup", 1, 0, O_WARMUP }, { "path", 1, 0, O_PATH },
        { "expect", 1, 0, O_EXPECT }, { "bimodal", 0, 0, O_BIMODAL }, { "short-us", 1, 0, O_SHORT },
        { "long-us", 1, 0, O_LONG }, { "long-frac", 1, 0, O_LONGF }, { "keys", 1, 0, O_KEYS },
        { "get-frac", 1, 0, O_GETF }, { "value-size", 1, 0, O_VSIZE }, { "seed", 1, 0, O_SEED },
        { "json", 1, 0, O_JSON }, { "connect-timeout", 1, 0, O_CTO }, { "connect-tries", 1, 0, O_CTRIES },
        { "preload", 0, 0, O_PRELOAD }, { "hits-only", 0, 0, O_HITS }, { "quiet", 0, 0, 'q' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "P:R:c:t:d:n:qh", lo, NULL)) != -1) {
        switch (ch) {
        case 'P':
            if (!strcmp(optarg, "http"))
                opt.proto.proto = PROTO_HTTP;
            else if (!strcmp(optarg, "memcache"))
                opt.proto.proto = PROTO_MEMCACHE;
            else
                die("--proto %s: http or memcache", optarg);
            break;
        case 'R': opt.rate = atof(optarg); break;
        case 'c': opt.conns = atoi(optarg); break;
        case 't': opt.threads = atoi(optarg); break;
        case 'd': opt.duration_s = atof(optarg); break;
        case 'n': opt.max_requests = strtoull(optarg, NULL, 10); break;
        case O_DEPTH: opt.depth = atoi(optarg); break;
        case O_DRAIN: opt.drain_s = atof(optarg); break;
        case O_WARMUP: opt.warmup_frac = atof(optarg); break;
        case O_PATH: opt.path = optarg; break;
        case O_EXPECT: opt.expect = optarg; break;
        case O_BIMODAL: opt.mix = MIX_BIMODAL; break;
        case O_SHORT: opt.short_us = (uint32_t)atoi(optarg); break;
        case O_LONG: opt.long_us = (uint32_t)atoi(optarg); break;
        case O_LONGF: opt.long_frac = atof(optarg); break;
        case O_KEYS: opt.keys = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_GETF: opt.get_frac = atof(optarg); break;
        case O_VSIZE: opt.proto.value_size = (uint32_t)strtoul(optarg, NULL, 10); break;
        case O_SEED: opt.seed = strtoull(optarg, NULL, 10); break;
        case O_JSON: opt.json = optarg; break;
        case O_CTO: opt.connect_timeout_s = atof(optarg); break;
        case O_CTRIES: opt.connect_tries = atoi(optarg); break;
        case O_PRELOAD: opt.preload = true; break;
        case O_HITS: opt.hits_only = true; break;
        case 'q': opt.quiet = true; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        exit(2);
    }
    opt.target = argv[optind];
    if (!(opt.rate > 0) || opt.conns < 1 || opt.threads < 1 || opt.threads > opt.conns || opt.depth < 1 ||
        opt.depth > 1024 || !(opt.duration_s > 0) || opt.duration_s > 3600 || opt.drain_s < 0 ||
        opt.warmup_frac < 0 || opt.warmup_frac >= 1 || opt.keys < 1 || opt.get_frac < 0 || opt.get_frac > 1 ||
        opt.long_frac < 0 || opt.long_frac > 1 || opt.proto.value_size < 1 ||
        opt.proto.value_size > PROTO_MC_VALUE_MAX || opt.connect_tries < 1)
        die("an option is out of range (--help lists them)");
    if ((opt.preload || opt.hits_only) && opt.proto.proto != PROTO_MEMCACHE)
        die("--preload and --hits-only are memcache options");
    if (opt.hits_only && !opt.preload)
        die("--hits-only needs --preload");
    // The bound in count: the duration's worth at the offered rate, with
    // room for the Poisson process's spread, unless -n says less.
    uint64_t expected = (uint64_t)(opt.rate * opt.duration_s * 1.2) + 1000;
    if (!opt.max_requests || opt.max_requests > expected)
        opt.max_requests = expected;
}

static void resolve(void)
{
    char host[256];
    const char *colon = strrchr(opt.target, ':');
    if (!colon || colon == opt.target || (size_t)(colon - opt.target) >= sizeof host)
        die("target %s: HOST:PORT", opt.target);
    memcpy(host, opt.target, (size_t)(colon - opt.target));
    host[colon - opt.target] = 0;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    int e = getaddrinfo(host, colon + 1, &hints, &target_ai);
    if (e)
        die("%s: %s", opt.target, gai_strerror(e));
    static char hostport[300];
    snprintf(hostport, sizeof hostport, "%s", opt.target);
    opt.proto.host = hostport;
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    resolve();
    signal(SIGPIPE, SIG_IGN);
    snprintf(short_path, sizeof short_path, "/work?us=%u", opt.short_us);
    snprintf(long_path, sizeof long_path, "/work?us=%u", opt.long_us);
    snprintf(short_body, sizeof short_body, "%u\n", opt.short_us);
    snprintf(long_body, sizeof long_body, "%u\n", opt.long_us);

    threads = calloc((size_t)opt.threads, sizeof *threads);
    if (!threads)
        die("out of memory");
    pthread_barrier_init(&primed, NULL, (unsigned)opt.threads + 1);
    for (int i = 0; i < opt.threads; i++) {
        struct thread *t = &threads[i];
        t->id = i;
        t->nconns = opt.conns / opt.threads + (i < opt.conns % opt.threads);
        t->max_requests = opt.max_requests / (uint64_t)opt.threads + (i < (int)(opt.max_requests % (uint64_t)opt.threads));
        t->rng = opt.seed * 0x100000001b3ull + (uint64_t)i;
        t->conns = calloc((size_t)t->nconns, sizeof *t->conns);
        t->idle = calloc((size_t)t->nconns, sizeof *t->idle);
        t->ep = epoll_create1(EPOLL_CLOEXEC);
        if (!t->conns || !t->idle || t->ep < 0)
            die("thread %d: out of memory or epoll_create1 failed", i);
        for (int k = 0; k < t->nconns; k++) {
            t->conns[k].t = t;
            t->conns[k].fd = -1;
            t->conns[k].q = calloc((size_t)opt.depth, sizeof *t->conns[k].q);
            if (!t->conns[k].q)
                die("out of memory");
        }
        if (pthread_create(&t->th, NULL, thread_main, t))
            die("pthread_create failed");
    }
    pthread_barrier_wait(&primed);
    if (!opt.quiet)
        fprintf(stderr, "loadgen: %d connections to %s open and primed; %.0f requests/s for %.1f s\n", opt.conns,
                opt.target, opt.rate, opt.duration_s);
    t_start = now_ns() + 1000000;
    t_end = t_start + (uint64_t)(opt.duration_s * 1e9);
    pthread_barrier_wait(&primed);
    for (int i = 0; i < opt.threads; i++)
        pthread_join(threads[i].th, NULL);
    return report();
}
