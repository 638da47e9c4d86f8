// SPDX-License-Identifier: MIT
// httpd's connections on the host (apps/httpd/httpd.c, whole): the
// server's own code, from httpd_main's arguments and accept loop to each
// connection's goroutine, over the scripted network and virtual clock of
// fakenet.h.
//
// What a client can do to the server, each checked by what was written
// back and when the connection closed: plain and pipelined requests,
// requests a byte at a time, malformed heads (400, 431), bodies by length
// and chunked, over the limit (413, before any 100 Continue; after an
// error answer the FIN, then what still comes read and dropped for a
// while, as Go does), a head trickled in forever
// (slowloris: closed at read_timeout from its first byte), an idle
// keep-alive (closed at idle_timeout), a half-close (every whole request
// before the EOF answered), a reset, a failed write, a client that never
// reads (closed at write_timeout), the buffer budget (503) and max_conns
// (503). After every case no budget is left charged
// and no connection counted open.
#include <stdarg.h>
#include "check.h"
#include "apps/httpd/httpd.c"

#include "fakenet.h"

int num_goroutine(void)
{
    return 1;
}

void sched_stats(struct sched_stats *s)
{
    *s = (struct sched_stats){ .gomaxprocs = 2, .total = { 10, 1, 2, 3 } };
}

static const __typeof__(cfg) cfg_default_copy = { 8080, 60000000000ull, 10000000000ull, 60000000000ull,
                                                   HTTP_MAX_HEAD_DEFAULT, 1u << 20, 0 };

static int run(const char *args)
{
    cfg = cfg_default_copy;
    return fake_run(httpd_app_main, "httpd", args);
}

static void reset(void)
{
    fake_reset();
}

// Every connection closed and freed, none left open, no budget charged,
// none waited on with no deadline.
static void check_clean(void)
{
    fake_check_conns();
    CHECKF(srv.open == 0, "%llu connections still counted open", (unsigned long long)srv.open);
    CHECKF(srv.buf_bytes == 0, "%llu bytes of budget still charged", (unsigned long long)srv.buf_bytes);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

// ---- the cases --------------------------------------------------------------------------------

static void get_root(void)
{
    reset();
    static const struct step s[] = { { 0, GET("/"), 0 } };
    struct net_conn *c = conn(s, 1, true);
    CHECK(run("") == 1);            // the accept loop ends when the listener does
    CHECKF(c->out && !strncmp(c->out, "HTTP/1.1 200 OK\r\n", 17), "answer %.40s", c->out ? c->out : "(none)");
    CHECK(c->out && strstr(c->out, "Content-Length: 13\r\n"));
    CHECK(c->out && strstr(c->out, "\r\n\r\nHello, World!"));
    check_clean();
}

// Three requests in one segment: three answers in order, in one write.
static void pipelined(void)
{
    reset();
    static const struct step s[] = {
        { 0, GET("/") GET("/work?us=3") "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", 0 } };
    struct net_conn *c = conn(s, 1, true);
    run("");
    CHECK(c->out && count(c->out, "HTTP/1.1 200 OK") == 3);
    const char *a = c->out ? strstr(c->out, "Hello, World!") : NULL, *b = a ? strstr(a, "\r\n\r\n3\n") : NULL;
    CHECKF(a && b && strstr(b, "\r\n\r\nhello"), "answers out of order: %s", c->out ? c->out : "(none)");
    CHECKF(c->writes == 1, "%d writes", c->writes);
    check_clean();
}

// A request a byte at a time, a millisecond apart.
static void byte_at_a_time(void)
{
    reset();
    static const char req[] = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc";
    static struct step s[sizeof req - 1];
    for (size_t i = 0; i < sizeof req - 1; i++)
        s[i] = (struct step){ i * MS, req + i, 1 };
    struct net_conn *c = conn(s, (int)(sizeof req - 1), true);
    run("");
    CHECK(c->out && !strncmp(c->out, "HTTP/1.1 200 OK", 15) && strstr(c->out, "\r\n\r\nabc"));
    check_clean();
}

// A bad request line: 400 and the connection closed; what follows is not
// read as a request.
static void bad_request_line(void)
{
    reset();
    static const struct step s[] = { { 0, "GARBAGE\r\n\r\n" GET("/"), 0 } };
    struct net_conn *c = conn(s, 1, false);
    run("");
    CHECKF(c->out && !strncmp(c->out, "HTTP/1.1 400 Bad Request", 24), "answer %.40s", c->out ? c->out : "(none)");
    CHECK(c->out && strstr(c->out, "Connection: close"));
    CHECK(c->out && count(c->out, "HTTP/1.1") == 1);
    check_clean();
}

// A head over max_header: 431 as soon as the limit is passed, then the
// server's FIN, and the rest read and dropped (Go's closeWriteAndWait:
// closing with it unread would reset the connection, and the client's TCP
// drop the answer), until the client closes.
static void header_too_large(void)
{
    reset();
    static char big[20000];
    memcpy(big, "GET / HTTP/1.1\r\nX-Big: ", 23);
    memset(big + 23, 'a', sizeof big - 24);
    static struct step s[40];
    for (int i = 0; i < 40; i++)
        s[i] = (struct step){ (uint64_t)i * MS, big + i * 499, 499 };
    struct net_conn *c = conn(s, 40, true);
    run("");
    CHECKF(c->out && !strncmp(c->out, "HTTP/1.1 431 ", 13), "answer %.40s", c->out ? c->out : "(none)");
    CHECKF(c->read_at_write < 40, "answered only after the whole 20 KB head (%d of 40 pieces)", c->read_at_write);
    CHECKF(c->write_closed && c->i == 40, "FIN %d, %d of 40 pieces read before the close", c->write_closed, c->i);
    check_clean();
}

// A body over max_body announced with Expect: 100-continue: 413 at once,
// no 100 Continue (the client need not send it). One that then sends it
// anyway, and never closes, is read until LINGER_NS after the answer.
static void refused_body(void)
{
    reset();
    static const struct step s[] = {
        { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", 0 },
        { 100 * MS, "0123456789", 0 }, { 3 * SEC, "too late", 0 } };
    struct net_conn *c = conn(s, 3, false);
    run("max_body=16");
    CHECKF(c->out && !strncmp(c->out, "HTTP/1.1 413 ", 13), "answer %.40s", c->out ? c->out : "(none)");
    CHECKF(c->read_at_write == 1 && c->write_closed, "answered after %d pieces, FIN %d", c->read_at_write,
           c->write_closed);
    CHECKF(c->i == 2 && c->closed_at >= LINGER_NS && c->closed_at < 3 * SEC, "%d pieces read, closed at %llu ms",
           c->i, (unsigned long long)(c->closed_at / MS));
    check_clean();
}

// Slowloris: a head trickled in a byte a second, never ending. The
// connection closes at read_timeout from its first byte, unanswered.
static void slowloris(void)
{
    reset();
    static const char head[] = "GET / HTTP/1.1\r\nX-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    static struct step s[sizeof head - 1];
    for (size_t i = 0; i < sizeof head - 1; i++)
        s[i] = (struct step){ (i + 1) * SEC, head + i, 1 };
    struct net_conn *c = conn(s, (int)(sizeof head - 1), false);
    run("read_timeout=10s");
    CHECKF(c->closed_at >= 11 * SEC && c->closed_at < 12 * SEC, "closed at %llu ms",
           (unsigned long long)(c->closed_at / MS));
    CHECKF(c->i <= 11, "read %d bytes", c->i);
    CHECKF(c->olen == 0, "answered: %s", c->out);
    check_clean();
}

// An idle keep-alive connection closes at idle_timeout after its last
// answer; one that never sends anything too.
static void idle_timeout(void)
{
    reset();
    static const struct step s[] = { { 0, GET("/"), 0 } };
    struct net_conn *c = conn(s, 1, false), *silent = conn(NULL, 0, false);
    run("idle_timeout=60s");
    CHECK(c->out && count(c->out, "HTTP/1.1 200 OK") == 1);
    CHECKF(c->closed_at >= 60 * SEC && c->closed_at < 61 * SEC, "closed at %llu ms",
           (unsigned long long)(c->closed_at / MS));
    CHECKF(silent->closed_at >= 60 * SEC && silent->closed_at < 61 * SEC && silent->olen == 0,
           "silent one closed at %llu ms", (unsigned long long)(silent->closed_at / MS));
    check_clean();
}

// The client writes two requests and half of a third, then closes its
// side: both whole ones are answered, then the server closes.
static void half_close(void)
{
    reset();
    static const struct step s[] = { { 0, GET("/"), 0 }, { MS, GET("/work?us=1"), 0 }, { 2 * MS, "GET /sl", 0 } };
    struct net_conn *c = conn(s, 3, true);
    run("");
    CHECK(c->out && count(c->out, "HTTP/1.1 200 OK") == 2);
    CHECK(c->closed_at < SEC);
    check_clean();
}

static void reset_by_peer(void)
{
    reset();
    static const struct step s[] = { { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nab", 0 } };
    struct net_conn *c = conn(s, 1, false);
    c->error = NET_ECONNRESET;
    run("");
    CHECK(c->olen == 0);
    check_clean();
}

// The first write fails (the client is gone): no second is tried.
static void write_fails(void)
{
    reset();
    static const struct step s[] = { { 0, GET("/") GET("/") GET("/sleep?ms=5") GET("/"), 0 } };
    struct net_conn *c = conn(s, 1, false);
    c->write_fail_at = 1;
    run("");
    CHECKF(c->writes == 1, "%d writes after a failed one", c->writes);
    check_clean();
}

// A client that sends requests and never reads the answers: the first
// write gives up at write_timeout and the connection closes.
static void never_reads(void)
{
    reset();
    static const struct step s[] = { { 0, GET("/") GET("/"), 0 } };
    struct net_conn *c = conn(s, 1, false);
    c->unread = true;
    run("write_timeout=30s");
    CHECKF(c->writes == 1, "%d writes", c->writes);
    CHECKF(c->closed_at >= 30 * SEC && c->closed_at < 31 * SEC, "closed at %llu ms",
           (unsigned long long)(c->closed_at / MS));
    check_clean();
}

static void bodies(void)
{
    reset();
    static const struct step s1[] = { { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n01234", 0 },
                                      { MS, "56789", 0 } };
    static const struct step s2[] = {
        { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", 0 },
        { MS, "4\r\ndefg\r\n0\r\n\r\n", 0 } };
    static const struct step s3[] = { { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 17\r\n\r\n", 0 } };
    static const struct step s4[] = {
        { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n0123456789abcdefg\r\n", 0 } };
    static const struct step s5[] = { { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0 } };
    // One byte over, the last chunk in the same piece: the body ends just
    // as the room (max_body + 1) fills.
    static const struct step s6[] = {
        { 0, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n", 0 } };
    struct net_conn *c1 = conn(s1, 2, true), *c2 = conn(s2, 2, true), *c3 = conn(s3, 1, true), *c4 = conn(s4, 1, true),
                    *c5 = conn(s5, 1, true), *c6 = conn(s6, 1, true);
    run("max_body=16");
    CHECK(c1->out && strstr(c1->out, "Content-Length: 10\r\n") && strstr(c1->out, "\r\n\r\n0123456789"));
    CHECK(c2->out && strstr(c2->out, "Content-Length: 7\r\n") && strstr(c2->out, "\r\n\r\nabcdefg"));
    CHECKF(c3->out && !strncmp(c3->out, "HTTP/1.1 413 ", 13), "c3 %.40s", c3->out ? c3->out : "(none)");
    CHECKF(c4->out && !strncmp(c4->out, "HTTP/1.1 413 ", 13), "c4 %.40s", c4->out ? c4->out : "(none)");
    CHECKF(c5->out && !strncmp(c5->out, "HTTP/1.1 400 ", 13), "c5 %.40s", c5->out ? c5->out : "(none)");
    CHECKF(c6->out && !strncmp(c6->out, "HTTP/1.1 413 ", 13), "c6 %.40s", c6->out ? c6->out : "(none)");
    check_clean();
}

static void routes(void)
{
    reset();
    static const struct step s[] = {
        { 0, GET("/nowhere") "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n" "DELETE / HTTP/1.1\r\nHost: t\r\n\r\n"
             GET("/work?us=abc") GET("/stats") GET("/spin?n=1000"), 0 } };
    struct net_conn *c = conn(s, 1, true);
    run("");
    const char *p = c->out ? c->out : "";
    CHECKF(!strncmp(p, "HTTP/1.1 404 ", 13), "first %.30s", p);
    p = strstr(p + 1, "HTTP/1.1 ");
    CHECKF(p && !strncmp(p, "HTTP/1.1 200 ", 13) && strstr(p, "Content-Length: 13\r\n"), "HEAD");
    const char *q = p ? strstr(p, "\r\n\r\n") : NULL;
    CHECKF(q && !strncmp(q + 4, "HTTP/1.1 405 ", 13), "HEAD's answer has a body, or DELETE is not 405");
    CHECK(strstr(c->out, "HTTP/1.1 400 ") && strstr(c->out, "us: an integer"));
    CHECK(strstr(c->out, "\r\nrequests ") && strstr(c->out, "\ngomaxprocs 2\n"));
    CHECK(strstr(c->out, "\r\n\r\n1000\n"));
    check_clean();
}

// 64 KiB free: a budget of 16 KiB for buffers and max_conns 2. A body
// needing 32 KiB is refused 503; a third connection open at once too.
static void limits(void)
{
    reset();
    static char req[20100];
    int n = snprintf(req, sizeof req, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n");
    memset(req + n, 'x', 20000);
    static struct step big[] = { { 0, req, 0 } };
    big[0].len = (size_t)n + 20000;
    static const struct step s[] = { { 0, GET("/"), 0 } };
    struct net_conn *a = conn(big, 1, true), *b = conn(s, 1, true), *c = conn(s, 1, true);
    free_pages = 16;
    run("");
    CHECKF(a->out && !strncmp(a->out, "HTTP/1.1 503 ", 13) && strstr(a->out, "out of memory"), "a %.60s",
           a->out ? a->out : "(none)");
    CHECKF(b->out && !strncmp(b->out, "HTTP/1.1 200 ", 13), "b %.40s", b->out ? b->out : "(none)");
    CHECKF(c->out && !strncmp(c->out, "HTTP/1.1 503 ", 13) && c->closed_at < MS, "c %.40s",
           c->out ? c->out : "(none)");
    CHECK(srv.refused >= 1);
    check_clean();
}

static void arguments(void)
{
    reset();
    CHECK(run("port=0") == 2);
    CHECK(run("port=70000") == 2);
    CHECK(run("idle_timeout=5x") == 2);
    CHECK(run("idle_timeout=10m read_timeout=1h") == 1 && cfg.idle_ns == 600 * SEC && cfg.read_ns == 3600 * SEC);
    CHECK(run("max_header=10") == 2);
    CHECK(run("nonsense") == 2);
    CHECK(run("port=8081 idle_timeout=500ms read_timeout=2s write_timeout=3s max_header=4k max_body=0 "
              "max_conns=10") == 1);
    CHECK(cfg.port == 8081 && cfg.idle_ns == 500 * MS && cfg.read_ns == 2 * SEC && cfg.write_ns == 3 * SEC &&
          cfg.max_head == 4096 && cfg.max_body == 0 && cfg.max_conns == 10);
    check_clean();
}

int main(void)
{
    RUN(get_root);
    RUN(pipelined);
    RUN(byte_at_a_time);
    RUN(refused_body);
    RUN(bad_request_line);
    RUN(header_too_large);
    RUN(slowloris);
    RUN(idle_timeout);
    RUN(half_close);
    RUN(reset_by_peer);
    RUN(write_fails);
    RUN(never_reads);
    RUN(bodies);
    RUN(routes);
    RUN(limits);
    RUN(arguments);
    reset();
    return check_failed_total != 0;
}
