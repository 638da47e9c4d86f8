// SPDX-License-Identifier: MIT
// The load generator's answer checks (tools/net/loadgen/proto.c) on real
// servers' bytes: Go 1.19 net/http's pipelined answers (captured from
// tools/net/httpd-go), chunked coding, and memcached 1.6.18's replies. A
// check that let a wrong answer through would make every benchmark's
// "0 errors" meaningless, so each wrong variant must be refused.
#include <string.h>
#include "tools/net/loadgen/proto.h"
#include "check.h"

static const char go_answers[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Date: Sat, 28 Nov 2026 11:51:53 GMT\r\n\r\nHello, World!"
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Date: Sat, 28 Nov 2026 11:51:53 GMT\r\n\r\n4\n"
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Date: Sat, 28 Nov 2026 11:51:53 GMT\r\nConnection: close\r\n\r\n1\n";

static const struct proto_cfg http = { .proto = PROTO_HTTP, .host = "h:1" };
static const struct proto_cfg mc = { .proto = PROTO_MEMCACHE, .value_size = 16 };

static struct op get(const char *path, const char *body)
{
    return (struct op){ .kind = OP_HTTP_GET, .path = path, .expect = body, .expect_len = (uint32_t)strlen(body) };
}

static enum parse_status parse(const struct proto_cfg *cfg, const struct op *op, const char *s, size_t n, size_t *used,
                               int *close)
{
    const char *why;
    return proto_parse(cfg, op, s, n, used, close, &why);
}

static void go_pipelined(void)
{
    struct op ops[3] = { get("/", "Hello, World!"), get("/work?us=4", "4\n"), get("/sleep?ms=1", "1\n") };
    size_t off = 0, len = strlen(go_answers), used;
    int close;
    for (int i = 0; i < 3; i++) {
        // every proper prefix is MORE
        for (size_t k = 0; k < 40; k++)
            CHECK(parse(&http, &ops[i], go_answers + off, k, &used, &close) == PARSE_MORE);
        CHECK(parse(&http, &ops[i], go_answers + off, len - off, &used, &close) == PARSE_OK);
        CHECK(close == (i == 2));
        off += used;
    }
    CHECK(off == len);
    // the wrong expectation is refused
    struct op wrong = get("/", "Hello, World?");
    CHECK(parse(&http, &wrong, go_answers, len, &used, &close) == PARSE_BAD);
    struct op shorter = get("/", "Hello");
    CHECK(parse(&http, &shorter, go_answers, len, &used, &close) == PARSE_BAD);
}

static void http_variants(void)
{
    struct op op = get("/", "Hello, World!");
    size_t used;
    int close;
    const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8;x=y\r\n, World!\r\n0\r\n\r\n";
    CHECK(parse(&http, &op, chunked, strlen(chunked), &used, &close) == PARSE_OK && used == strlen(chunked));
    for (size_t k = 0; k < strlen(chunked); k++)
        CHECK(parse(&http, &op, chunked, k, &used, &close) == PARSE_MORE);
    const char *h10 = "HTTP/1.0 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";
    CHECK(parse(&http, &op, h10, strlen(h10), &used, &close) == PARSE_OK && close);
    const char *h10ka = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 13\r\n\r\nHello, World!";
    CHECK(parse(&http, &op, h10ka, strlen(h10ka), &used, &close) == PARSE_OK && !close);
    static const char *bad[] = {
        "HTTP/1.1 404 Not Found\r\nContent-Length: 13\r\n\r\nHello, World!",
        "HTTP/1.1 200 OK\r\n\r\nHello, World!",                                  // no length
        "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello, World",
        "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Length: 14\r\n\r\nHello, World!",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\nContent-Length: 13\n\nHello, World!",                   // bare LF
        "SSH-2.0-OpenSSH\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHelly\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZ\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECKF(parse(&http, &op, bad[i], strlen(bad[i]), &used, &close) == PARSE_BAD, "bad answer %zu accepted", i);
}

static void requests(void)
{
    char buf[256];
    struct op op = get("/work?us=4", "4\n");
    size_t n = proto_request(&http, &op, buf, sizeof buf);
    CHECK(n && !memcmp(buf, "GET /work?us=4 HTTP/1.1\r\nHost: h:1\r\n\r\n", n));
    CHECK(proto_request(&http, &op, buf, 10) == 0);
    struct op set = { .kind = OP_MC_SET, .key = 7 };
    n = proto_request(&mc, &set, buf, sizeof buf);
    char head[64];
    int h = snprintf(head, sizeof head, "set key:0000000007 %u 0 16\r\n", proto_mc_flags(7));
    CHECK(n == (size_t)h + 18 && !memcmp(buf, head, (size_t)h) && !memcmp(buf + n - 2, "\r\n", 2));
    for (size_t i = (size_t)h; i < n - 2; i++)
        CHECK(buf[i] >= 'a' && buf[i] <= 'z');
}

static void memcache(void)
{
    char value[16], ans[256];
    proto_mc_value(7, value, 16);
    int n = snprintf(ans, sizeof ans, "VALUE key:0000000007 %u 16\r\n%.16s\r\nEND\r\n", proto_mc_flags(7), value);
    struct op get7 = { .kind = OP_MC_GET, .key = 7 };
    size_t used;
    int close;
    CHECK(parse(&mc, &get7, ans, (size_t)n, &used, &close) == PARSE_OK && used == (size_t)n);
    for (int k = 0; k < n; k++)
        CHECK(parse(&mc, &get7, ans, (size_t)k, &used, &close) == PARSE_MORE);
    CHECK(parse(&mc, &get7, "END\r\n", 5, &used, &close) == PARSE_MISS && used == 5);
    struct op get8 = { .kind = OP_MC_GET, .key = 8 };
    CHECK(parse(&mc, &get8, ans, (size_t)n, &used, &close) == PARSE_BAD);         // another key's
    ans[n - 8] ^= 1;                                                             // a changed byte
    CHECK(parse(&mc, &get7, ans, (size_t)n, &used, &close) == PARSE_BAD);
    struct op set = { .kind = OP_MC_SET, .key = 7 };
    CHECK(parse(&mc, &set, "STORED\r\n", 8, &used, &close) == PARSE_OK);
    CHECK(parse(&mc, &set, "SERVER_ERROR out of memory storing object\r\n", 43, &used, &close) == PARSE_BAD);
    CHECK(parse(&mc, &set, "NOT_STORED\r\n", 12, &used, &close) == PARSE_BAD);
    struct op ver = { .kind = OP_MC_VERSION };
    CHECK(parse(&mc, &ver, "VERSION 1.6.18\r\n", 16, &used, &close) == PARSE_OK);
    CHECK(parse(&mc, &ver, "ERROR\r\n", 7, &used, &close) == PARSE_BAD);
    // the same key always has the same value and flags
    char again[16];
    proto_mc_value(7, again, 16);
    CHECK(!memcmp(value, again, 16) && proto_mc_flags(7) == proto_mc_flags(7));
    proto_mc_value(8, again, 16);
    CHECK(memcmp(value, again, 16));
}

int main(void)
{
    RUN(go_pipelined);
    RUN(http_variants);
    RUN(requests);
    RUN(memcache);
    return CHECK_DONE();
}
