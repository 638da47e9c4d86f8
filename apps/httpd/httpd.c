// SPDX-License-Identifier: MIT
// httpd: an HTTP/1.1 server, a goroutine per connection as Go's net/http
// has it. Keep-alive and pipelining; the request parser and its limits are
// http_parse.c's.
//
//   GET /             "Hello, World!"
//   GET /work?us=N    computes for N microseconds (0..1000000); body "N\n"
//   GET /spin?n=N     computes N xorshift rounds (0..10^10): work measured in
//                     instructions, not time (the preemption check's); "N\n"
//   GET /sleep?ms=N   sleeps N milliseconds (0..60000); body "N\n"
//   POST /echo        the request's body (at most max_body bytes; 413 beyond)
//   GET /stats        the scheduler's counters, one "name value" a line
// HEAD is GET without the body; another method on these paths is 405,
// another path 404, the target "*" 400 (Go's ServeMux does the same).
//
// Arguments: port=8080, idle_timeout=60s (an idle keep-alive connection
// closes), read_timeout=10s (a request's head and body must all arrive
// within this of its first byte: a slow client cannot hold a goroutine
// longer), write_timeout=60s (each write of answers must be taken by the
// client within this: one that stops reading cannot either),
// max_header=16384, max_body=1048576, max_conns= (default: one per 32 KiB
// of the memory free at start). A timeout of 0 is none.
//
// A connection's goroutine reads into a buffer that starts small and grows
// to what a request needs (its head, its body), then shrinks back: ten
// thousand idle connections cost their parked goroutines and a small
// buffer each. Answers to pipelined requests are gathered and written
// once no whole request is left in the buffer. A request refused by the
// parser is answered with its status and the connection closed, as Go
// does (after linger: the client's TCP must see the answer before a
// reset); nothing a client sends stops the server.
//
// Memory: goro's allocator never fails (running out is fatal), so what
// clients can make the server hold is bounded here instead. Every
// connection's buffers are charged to one budget, a quarter of the memory
// free at start; a request whose buffers would go over it is answered 503
// and its connection closed, and a connection over max_conns is answered
// 503 at once. Go's net/http has neither bound; it has a heap that grows.
#include "apps/netserve/netserve.h"
#include "http_parse.h"
#include "httpd_sys.h"

#define BUF_MIN 2048u
#define OUT_FLUSH (64u * 1024)
#define CONN_COST (32u * 1024)      // a connection's share of memory, for max_conns' default
#define LINGER_NS 2000000000ull     // after an error answer, what the client still sends is read this long

static struct {
    uint16_t port;
    uint64_t idle_ns, read_ns, write_ns;
    size_t max_head, max_body;
    uint64_t max_conns;
} cfg = { 8080, 60000000000ull, 10000000000ull, 60000000000ull, HTTP_MAX_HEAD_DEFAULT, 1u << 20, 0 };

static struct {
    uint64_t requests, errors;      // atomic, relaxed: statistics
} counts;

static void serve(void *arg);

// The answer to a connection over max_conns.
#define BUSY "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

static struct netserve srv = { .name = "httpd", .busy = BUSY, .busy_len = sizeof BUSY - 1, .serve = serve };

// ---- a connection's buffers ------------------------------------------------------------

struct conn {
    net_conn_t *c;
    char *in;                       // bytes read, not yet consumed: in[0..len)
    size_t len, cap;
    char *out;                      // answers not yet written
    size_t olen, ocap;
    bool broken;                    // a write failed, or memory was refused: stop
    bool starved;                   // memory was refused (answer 503)
};

// Makes *buf hold at least need bytes; false when the budget refuses.
static bool grow(struct conn *k, char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : BUF_MIN;
    while (n < need)
        n *= 2;
    if (!netserve_charge(&srv, (int64_t)(n - *cap))) {
        k->starved = k->broken = true;
        return false;
    }
    *buf = realloc(*buf, n);
    *cap = n;
    return true;
}

static void release(char **buf, size_t *cap)
{
    netserve_charge(&srv, -(int64_t)*cap);
    free(*buf);
    *buf = NULL;
    *cap = 0;
}

static void put(struct conn *k, const void *p, size_t n)
{
    if (k->broken || !grow(k, &k->out, &k->ocap, k->olen + n))
        return;
    memcpy(k->out + k->olen, p, n);
    k->olen += n;
}

static void flush(struct conn *k)
{
    if (k->olen && !k->broken && netserve_write(&srv, k->c, k->out, k->olen) != 0)
        k->broken = true;
    k->olen = 0;
    if (k->ocap > OUT_FLUSH)        // a large answer went out: give its room back
        release(&k->out, &k->ocap);
}

// Reads more into the buffer (room for at least `want` more bytes) until
// the deadline; false on EOF, an error or the deadline.
static bool fill(struct conn *k, size_t want, uint64_t deadline)
{
    if (!grow(k, &k->in, &k->cap, k->len + want))
        return false;
    conn_set_read_deadline(k->c, deadline);
    long n = conn_read(k->c, k->in + k->len, k->cap - k->len);
    if (n <= 0)
        return false;
    k->len += (size_t)n;
    return true;
}

static void consume(struct conn *k, size_t n)
{
    memmove(k->in, k->in + n, k->len - n);
    k->len -= n;
    if (k->len == 0 && k->cap > 4 * BUF_MIN)
        release(&k->in, &k->cap);
}

// ---- answers -----------------------------------------------------------------------------

static void answer(struct conn *k, const struct http_request *r, int status, const char *ctype, const char *body,
                   size_t n, bool keep)
{
    char head[256];
    size_t h = http_format_head(head, sizeof head, status, ctype, n, keep, r);
    put(k, head, h);
    if (!(r && r->method_len == 4 && !memcmp(r->method, "HEAD", 4)))
        put(k, body, n);
    if (k->olen >= OUT_FLUSH)
        flush(k);
}

static void answer_text(struct conn *k, const struct http_request *r, int status, const char *text, bool keep)
{
    answer(k, r, status, "text/plain; charset=utf-8", text, strlen(text), keep);
}

// An error the parser or a limit found: Go's form, "CODE Text: reason",
// and the connection closes.
static void answer_error(struct conn *k, int status, const char *reason)
{
    char body[160];
    int n = snprintf(body, sizeof body, "%d %s%s%s", status, http_status_text(status), reason[0] ? ": " : "",
                     reason);
    answer(k, NULL, status, "text/plain; charset=utf-8", body, (size_t)n, false);
    __atomic_add_fetch(&counts.errors, 1, __ATOMIC_RELAXED);
}

// ---- handlers ------------------------------------------------------------------------------

static uint64_t sink;

// Computes for us microseconds: xorshift rounds between clock reads, as
// the Go peer does, so both spend the time the same way.
static void work(uint64_t us)
{
    uint64_t x = 88172645463325252ull, end = nanotime() + us * 1000;
    while (nanotime() < end)
        for (int i = 0; i < 64; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    __atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
}

// N rounds, no clock: the same instructions however slow the host.
static void spin(uint64_t n)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    __atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
}

static bool path_is(const struct http_request *r, const char *p)
{
    return r->path_len == strlen(p) && !memcmp(r->path, p, r->path_len);
}

static bool method_is(const struct http_request *r, const char *m)
{
    return r->method_len == strlen(m) && !memcmp(r->method, m, r->method_len);
}

static bool allow(struct conn *k, const struct http_request *r, const char *method)
{
    if (method_is(r, method) || (!strcmp(method, "GET") && method_is(r, "HEAD")))
        return true;
    answer_text(k, r, 405, "method not allowed\n", r->keep_alive);
    return false;
}

static void number_answer(struct conn *k, const struct http_request *r, uint64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%llu\n", (unsigned long long)v);
    answer(k, r, 200, "text/plain; charset=utf-8", b, (size_t)n, r->keep_alive);
}

static void stats(struct conn *k, const struct http_request *r)
{
    static struct sched_stats s;        // large: not on a connection's stack
    static mutex_t lock;
    char b[512];
    mutex_lock(&lock);
    sched_stats(&s);
    int n = snprintf(b, sizeof b,
                     "requests %llu\nconnections_open %llu\nconnections_accepted %llu\nerrors %llu\n"
                     "goroutines %d\ngomaxprocs %d\nruns %llu\nsteals %llu\npreemptions %llu\nhalts %llu\n",
                     (unsigned long long)__atomic_load_n(&counts.requests, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&srv.open, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&srv.accepted, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&counts.errors, __ATOMIC_RELAXED), num_goroutine(),
                     s.gomaxprocs, (unsigned long long)s.total.runs, (unsigned long long)s.total.steals,
                     (unsigned long long)s.total.preemptions, (unsigned long long)s.total.halts);
    mutex_unlock(&lock);
    answer(k, r, 200, "text/plain; charset=utf-8", b, (size_t)n, r->keep_alive);
}

static void handle(struct conn *k, const struct http_request *r, const char *body, size_t blen)
{
    uint64_t v;
    __atomic_add_fetch(&counts.requests, 1, __ATOMIC_RELAXED);
    if (r->target_len == 1 && r->target[0] == '*') {
        answer_text(k, r, 400, "", false);
    } else if (path_is(r, "/")) {
        if (allow(k, r, "GET"))
            answer_text(k, r, 200, "Hello, World!", r->keep_alive);
    } else if (path_is(r, "/work")) {
        if (!allow(k, r, "GET"))
            return;
        if (!http_query_uint(r->query, r->query_len, "us", 1000000, &v)) {
            answer_text(k, r, 400, "us: an integer from 0 to 1000000\n", r->keep_alive);
            return;
        }
        work(v);
        number_answer(k, r, v);
    } else if (path_is(r, "/spin")) {
        if (!allow(k, r, "GET"))
            return;
        if (!http_query_uint(r->query, r->query_len, "n", 10000000000ull, &v)) {
            answer_text(k, r, 400, "n: an integer from 0 to 10000000000\n", r->keep_alive);
            return;
        }
        spin(v);
        number_answer(k, r, v);
    } else if (path_is(r, "/sleep")) {
        if (!allow(k, r, "GET"))
            return;
        if (!http_query_uint(r->query, r->query_len, "ms", 60000, &v)) {
            answer_text(k, r, 400, "ms: an integer from 0 to 60000\n", r->keep_alive);
            return;
        }
        flush(k);                   // answers before this one do not wait for the sleep
        sleep_ns(v * 1000000);
        number_answer(k, r, v);
    } else if (path_is(r, "/echo")) {
        if (allow(k, r, "POST"))
            answer(k, r, 200, "application/octet-stream", body, blen, r->keep_alive);
    } else if (path_is(r, "/stats")) {
        if (allow(k, r, "GET"))
            stats(k, r);
    } else {
        answer_text(k, r, 404, "404 page not found\n", r->keep_alive);
    }
}

// ---- the body -------------------------------------------------------------------------------

// The request's body, read within the deadline: Content-Length bytes, or
// a chunked body decoded. Returns 0 with *body/*blen (inside k->in, or in
// *owned, of *owned_cap bytes charged, for chunked), or the error status
// to answer (413, 400, 503), or -1 when the connection failed. *used is
// what the body took of k->in.
static int read_body(struct conn *k, const struct http_request *r, uint64_t deadline, const char **body,
                     size_t *blen, char **owned, size_t *owned_cap, size_t *used)
{
    *body = "", *blen = 0, *owned = NULL, *owned_cap = 0, *used = 0;
    // A body known to be too large is refused before 100 Continue: the
    // client then need not send it (curl, Go's client wait for the 100).
    if (!r->chunked && (uint64_t)r->content_length > cfg.max_body)
        return 413;
    if (r->expect_continue && k->len == r->head_len) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (netserve_write(&srv, k->c, cont, sizeof cont - 1) != 0)
            return -1;
    }
    if (!r->chunked) {
        size_t need = r->head_len + (size_t)r->content_length;
        while (k->len < need)
            if (!fill(k, need - k->len, deadline))
                return k->starved ? 503 : -1;
        *body = k->in + r->head_len;
        *blen = (size_t)r->content_length;
        *used = (size_t)r->content_length;
        return 0;
    }
    struct http_chunked ch;
    http_chunked_init(&ch);
    size_t off = r->head_len, cap = 0, n = 0;
    char *out = NULL;
    for (;;) {
        size_t consumed, produced;
        const char *why;
        if (cap - n < 256 && cap < cfg.max_body + 1 &&
            !grow(k, &out, &cap, cap * 2 > cfg.max_body + 1 ? cfg.max_body + 1 : cap ? cap * 2 : 256)) {
            release(&out, &cap);
            return 503;
        }
        int st = http_chunked_decode(&ch, k->in + off, k->len - off, &consumed, out + n, cap - n, &produced, &why);
        off += consumed, n += produced;
        // The room stops at max_body + 1: a body ending right there is
        // one byte too large too.
        if ((st != HTTP_MORE && st != HTTP_DONE) || n > cfg.max_body) {
            release(&out, &cap);
            return n > cfg.max_body ? 413 : st;
        }
        if (st == HTTP_DONE)
            break;
        if (off == k->len && !fill(k, 4096, deadline)) {
            release(&out, &cap);
            return k->starved ? 503 : -1;
        }
    }
    *owned = out;
    *owned_cap = cap;
    *body = out, *blen = n, *used = off - r->head_len;
    return 0;
}

// ---- a connection ---------------------------------------------------------------------------

// After an error answer, with the client perhaps still sending (a body
// refused, a head cut short): Go's closeWriteAndWait. The answer and a
// FIN go out first; what still comes is read and dropped until the
// client closes or LINGER_NS passes, so that closing with unread bytes
// (which makes TCP send a reset, and the client's TCP drop the answer it
// has not yet read) becomes unlikely. Go sleeps 500 ms without reading.
static void linger(struct conn *k)
{
    char drop[1024];
    if (conn_close_write(k->c) != 0)
        return;
    conn_set_read_deadline(k->c, nanotime() + LINGER_NS);
    while (conn_read(k->c, drop, sizeof drop) > 0)
        ;
}

// The answer when the buffer budget refused a request: written straight
// from here, since buffers are what ran out.
static void answer_starved(struct conn *k)
{
    static const char msg[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                              "Content-Length: 39\r\nConnection: close\r\n\r\n503 Service Unavailable: out of memory\n";
    __atomic_add_fetch(&counts.errors, 1, __ATOMIC_RELAXED);
    k->olen = 0;                    // what was gathered may be cut: the client gets the 503 alone
    netserve_write(&srv, k->c, msg, sizeof msg - 1);
}

static void serve(void *arg)
{
    struct conn k = { .c = arg };
    bool refused = false;           // an error answered: linger before closing
    for (;;) {
        // A whole head. Between requests the idle timeout runs; once a
        // request has begun, its read deadline, from its first byte.
        struct http_request r;
        const char *why = "";
        int st = k.len ? http_parse_head(k.in, k.len, cfg.max_head, &r, &why) : HTTP_MORE;
        uint64_t deadline = nanotime() + (k.len ? cfg.read_ns : cfg.idle_ns);
        if (st == HTTP_MORE)
            flush(&k);              // answers wait for no more input
        while (st == HTTP_MORE && !k.broken) {
            bool idle = k.len == 0;
            if (!fill(&k, k.len ? k.len : BUF_MIN, deadline))
                break;
            if (idle)
                deadline = nanotime() + cfg.read_ns;
            st = http_parse_head(k.in, k.len, cfg.max_head, &r, &why);
        }
        if (k.broken || st == HTTP_MORE)
            break;                  // EOF, a deadline, a failed write, or no memory
        if (st != HTTP_DONE) {
            answer_error(&k, st, why);
            refused = true;
            break;
        }
        const char *body = "";
        size_t blen = 0, used = 0, owned_cap = 0;
        char *owned = NULL;
        if (r.content_length) {
            const char *in = k.in;
            int bst = read_body(&k, &r, deadline, &body, &blen, &owned, &owned_cap, &used);
            if (bst < 0 || bst == 503)
                break;
            if (bst) {
                answer_error(&k, bst, bst == 413 ? "request body too large" : "malformed chunked body");
                refused = true;
                break;
            }
            // Reading the body may have moved the buffer the request's
            // fields point into: parse the same head again where it is now.
            if (k.in != in) {
                http_parse_head(k.in, k.len, cfg.max_head, &r, &why);
                if (!r.chunked)
                    body = k.in + r.head_len;
            }
        }
        handle(&k, &r, body, blen);
        release(&owned, &owned_cap);
        consume(&k, r.head_len + used);
        if (!r.keep_alive || k.broken)
            break;
    }
    if (k.starved)
        answer_starved(&k);
    else
        flush(&k);
    release(&k.in, &k.cap);
    release(&k.out, &k.ocap);
    if (k.starved || (refused && !k.broken))
        linger(&k);
    netserve_done(&srv, k.c);
}

// ---- main -------------------------------------------------------------------------------------

static int httpd_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;
        bool ok;
        if (!strncmp(a, "port=", 5))
            ok = netserve_number(a + 5, false, &v) && v >= 1 && v <= 65535 && (cfg.port = (uint16_t)v);
        else if (!strncmp(a, "idle_timeout=", 13))
            ok = netserve_number(a + 13, true, &v) && (cfg.idle_ns = v, true);
        else if (!strncmp(a, "read_timeout=", 13))
            ok = netserve_number(a + 13, true, &v) && (cfg.read_ns = v, true);
        else if (!strncmp(a, "write_timeout=", 14))
            ok = netserve_number(a + 14, true, &v) && (cfg.write_ns = v, true);
        else if (!strncmp(a, "max_header=", 11))
            ok = netserve_number(a + 11, false, &v) && v >= 256 && v <= (1u << 20) && (cfg.max_head = v, true);
        else if (!strncmp(a, "max_body=", 9))
            ok = netserve_number(a + 9, false, &v) && v <= (64u << 20) && (cfg.max_body = v, true);
        else if (!strncmp(a, "max_conns=", 10))
            ok = netserve_number(a + 10, false, &v) && v >= 1 && (cfg.max_conns = v, true);
        else
            ok = false;
        if (!ok) {
            printf("httpd: %s: expected port=1..65535, idle_timeout=DURATION, read_timeout=DURATION, "
                   "write_timeout=DURATION, max_header=256..1m, max_body=0..64m, max_conns=N\n", a);
            return 2;
        }
    }
    // 0 means "none": a deadline far away.
    srv.write_ns = cfg.write_ns;
    if (!cfg.idle_ns)
        cfg.idle_ns = UINT64_MAX / 4;
    if (!cfg.read_ns)
        cfg.read_ns = UINT64_MAX / 4;
    uint64_t free_bytes = page_free_count() * 4096;
    srv.budget = free_bytes / 4;
    if (!cfg.max_conns)
        cfg.max_conns = free_bytes / CONN_COST;
    srv.port = cfg.port;
    srv.max_conns = cfg.max_conns;
    net_listener_t *ln;
    if (netserve_listen(&srv, &ln))
        return 1;
    printf("httpd: listening on port %u, %d cores, idle_timeout %llu ms, read_timeout %llu ms, max_conns %llu, "
           "buffers up to %llu MiB\n", cfg.port, gomaxprocs(0), (unsigned long long)(cfg.idle_ns / 1000000),
           (unsigned long long)(cfg.read_ns / 1000000), (unsigned long long)cfg.max_conns,
           (unsigned long long)(srv.budget >> 20));
    netserve_run(&srv, ln);
    return 1;
}
GORO_APP(httpd, "an HTTP/1.1 server: port= idle_timeout= read_timeout= write_timeout= max_header= max_body= max_conns=",
         httpd_main);
