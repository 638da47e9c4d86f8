// SPDX-License-Identifier: MIT
// apps/httpd/http_parse.c on the host: requests as real clients send them
// (curl 7.88, wrk 4.1, captured byte for byte), the status Go 1.19's
// net/http server answered to each malformed request (asked of a
// net/http server on this machine; the few places where httpd answers
// otherwise say so and why), every split point of pipelined requests,
// chunked bodies, the header limit, and the answers' heads.
#include <stdlib.h>
#include <string.h>
#include "apps/httpd/http_parse.h"
#include "check.h"

#define LIMIT HTTP_MAX_HEAD_DEFAULT

static int parse(const char *s, struct http_request *r)
{
    const char *why;
    return http_parse_head(s, strlen(s), LIMIT, r, &why);
}

static bool eq(const char *p, uint32_t n, const char *lit)
{
    return n == strlen(lit) && !memcmp(p, lit, n);
}

// ---- real clients' requests --------------------------------------------------

static const char curl_get[] = "GET /work?us=4 HTTP/1.1\r\nHost: 127.0.0.1:23530\r\nUser-Agent: curl/7.88.1\r\n"
                               "Accept: */*\r\n\r\n";
static const char curl_post[] = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:23530\r\nUser-Agent: curl/7.88.1\r\n"
                                "Accept: */*\r\nContent-Length: 11\r\nContent-Type: application/x-www-form-urlencoded"
                                "\r\n\r\nhello world";
static const char curl_chunked[] = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:23530\r\nUser-Agent: curl/7.88.1\r\n"
                                   "Accept: */*\r\nTransfer-Encoding: chunked\r\nContent-Type: "
                                   "application/x-www-form-urlencoded\r\n\r\n13\r\nhello chunked world\r\n0\r\n\r\n";
static const char curl_expect[] = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:23530\r\nUser-Agent: curl/7.88.1\r\n"
                                  "Accept: */*\r\nExpect: 100-continue\r\nContent-Length: 2000\r\nContent-Type: "
                                  "application/x-www-form-urlencoded\r\n\r\n";
static const char curl_http10[] = "GET / HTTP/1.0\r\nHost: 127.0.0.1:23530\r\nUser-Agent: curl/7.88.1\r\n"
                                  "Accept: */*\r\n\r\n";
static const char wrk_get[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1:23535\r\n\r\n";

static void curl_and_wrk(void)
{
    struct http_request r;
    CHECK(parse(curl_get, &r) == HTTP_DONE);
    CHECK(eq(r.method, r.method_len, "GET") && eq(r.path, r.path_len, "/work") && eq(r.query, r.query_len, "us=4"));
    CHECK(r.major == 1 && r.minor == 1 && r.keep_alive && r.content_length == 0 && !r.chunked);
    CHECK(r.head_len == strlen(curl_get));
    uint64_t us = 0;
    CHECK(http_query_uint(r.query, r.query_len, "us", 1000000, &us) && us == 4);

    CHECK(parse(curl_post, &r) == HTTP_DONE);
    CHECK(r.content_length == 11 && !memcmp(curl_post + r.head_len, "hello world", 11));
    CHECK(r.head_len + 11 == strlen(curl_post));

    CHECK(parse(curl_chunked, &r) == HTTP_DONE && r.chunked && r.content_length == -1);
    struct http_chunked c;
    http_chunked_init(&c);
    char out[64];
    size_t used, got;
    const char *why;
    const char *body = curl_chunked + r.head_len;
    CHECK(http_chunked_decode(&c, body, strlen(body), &used, out, sizeof out, &got, &why) == HTTP_DONE);
    CHECK(used == strlen(body) && got == 19 && !memcmp(out, "hello chunked world", 19));

    CHECK(parse(curl_expect, &r) == HTTP_DONE && r.expect_continue && r.content_length == 2000);
    CHECK(parse(curl_http10, &r) == HTTP_DONE && r.minor == 0 && !r.keep_alive);
    CHECK(parse(wrk_get, &r) == HTTP_DONE && r.keep_alive && eq(r.path, r.path_len, "/"));
}

// ---- what Go answers -----------------------------------------------------------------

static const struct {
    const char *req;
    int status;                 // Go 1.19 net/http's (HTTP_DONE: it served the request)
} go_answers[] = {
    { "GET / HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_DONE },
    { "GET / HTTP/1.1\r\n\r\n", 400 },                          // missing required Host header
    { "GET / HTTP/1.0\r\n\r\n", HTTP_DONE },
    { "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505 },
    { "GET / HTTP/0.9\r\nHost: x\r\n\r\n", 505 },
    { "GET / HTTP/1.2\r\nHost: x\r\n\r\n", HTTP_DONE },
    { "GET / HTTP/10.0\r\nHost: x\r\n\r\n", 400 },
    { "GET / FOO\r\nHost: x\r\n\r\n", 400 },
    { "GET /\r\nHost: x\r\n\r\n", 400 },
    { "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
    { "GET foo HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
    { "GET http://a/ HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_DONE },
    { "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x y\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\nA: b\x01" "c\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab", HTTP_DONE },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\nab", 400 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501 },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", HTTP_DONE },
    { "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nab", HTTP_DONE },
    { "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", 417 },
    { "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", HTTP_DONE },
    { "GET / HTTP/1.1\nHost: x\n\n", HTTP_DONE },
    { "GET /  HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\nA : b\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: \r\n\r\n", HTTP_DONE },
    { "GET /a\x7f" "b HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
    { "GET / HTTP/1.1\r\nHost: x\r\nA: \xff\r\n\r\n", HTTP_DONE },
    // Go answers 400 to "*" from its ServeMux, not its parser: httpd's
    // handler does the same.
    { "GET * HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_DONE },
};

// Where httpd answers otherwise, and why.
static const struct {
    const char *req;
    int status, go_status;
} departures[] = {
    // RFC 9112 2.2: a server SHOULD skip empty lines before a request
    // line; Go does so only after a POST.
    { "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_DONE, 400 },
    // obs-fold: RFC 9112 5.2 allows rejecting it with 400; Go folds it.
    { "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\n folded\r\n\r\n", 400, HTTP_DONE },
    // An empty field name is no token (RFC 9110 5.1); Go skips the line.
    { "GET / HTTP/1.1\r\nHost: x\r\n: b\r\n\r\n", 400, HTTP_DONE },
};

static void go_statuses(void)
{
    struct http_request r;
    for (size_t i = 0; i < sizeof go_answers / sizeof go_answers[0]; i++) {
        int st = parse(go_answers[i].req, &r);
        CHECKF(st == go_answers[i].status, "request %zu: %d, Go's %d", i, st, go_answers[i].status);
    }
    for (size_t i = 0; i < sizeof departures / sizeof departures[0]; i++) {
        int st = parse(departures[i].req, &r);
        CHECKF(st == departures[i].status, "departure %zu: %d, want %d (Go %d)", i, st, departures[i].status,
               departures[i].go_status);
    }
}

static void targets_and_versions(void)
{
    struct http_request r;
    CHECK(parse("GET http://example.com:80/a/b?x=1 HTTP/1.1\r\nHost: y\r\n\r\n", &r) == HTTP_DONE);
    CHECK(eq(r.path, r.path_len, "/a/b") && eq(r.query, r.query_len, "x=1"));
    CHECK(parse("GET http://example.com HTTP/1.1\r\nHost: y\r\n\r\n", &r) == HTTP_DONE && eq(r.path, r.path_len, "/"));
    CHECK(parse("GET /p? HTTP/1.1\r\nHost: y\r\n\r\n", &r) == HTTP_DONE && r.query_len == 0);
    CHECK(parse("GET /%41%2f HTTP/1.1\r\nHost: y\r\n\r\n", &r) == HTTP_DONE);
    CHECK(parse("GET /%4 HTTP/1.1\r\nHost: y\r\n\r\n", &r) == 400);
    CHECK(parse("GET http:/x HTTP/1.1\r\nHost: y\r\n\r\n", &r) == 400);
    CHECK(parse("GET / HTTP/1.1\r\nHost: y\r\nConnection: keep-alive, Close\r\n\r\n", &r) == HTTP_DONE &&
          !r.keep_alive);
    CHECK(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r) == HTTP_DONE && r.keep_alive);
    CHECK(parse("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", &r) == HTTP_DONE && !r.keep_alive);
    CHECK(parse("POST / HTTP/1.1\r\nHost: y\r\nExpect: 100-continue\r\n\r\n", &r) == HTTP_DONE &&
          !r.expect_continue);      // no body: nothing to continue
    CHECK(parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", &r) == HTTP_DONE &&
          !r.expect_continue);      // HTTP/1.0 has no 100
    CHECK(parse("POST / HTTP/1.1\r\nHost: y\r\nContent-Length: 999999999999999999\r\n\r\n", &r) == HTTP_DONE &&
          r.content_length == 999999999999999999ll);
    CHECK(parse("POST / HTTP/1.1\r\nHost: y\r\nContent-Length: 9999999999999999999\r\n\r\n", &r) == 400);
}

// A head arrives a byte at a time: MORE until its last byte, then DONE.
static void byte_by_byte(void)
{
    struct http_request r;
    const char *why;
    size_t n = strlen(curl_post) - 11;
    for (size_t i = 0; i < n; i++)
        CHECKF(http_parse_head(curl_post, i, LIMIT, &r, &why) == HTTP_MORE, "prefix of %zu bytes", i);
    CHECK(http_parse_head(curl_post, n, LIMIT, &r, &why) == HTTP_DONE && r.head_len == n);
}

// Three pipelined requests parse one after another from one buffer.
static void pipelining(void)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s%s", wrk_get, curl_post, curl_get);
    size_t off = 0, len = strlen(buf);
    const char *paths[] = { "/", "/echo", "/work" };
    for (int i = 0; i < 3; i++) {
        struct http_request r;
        const char *why;
        CHECK(http_parse_head(buf + off, len - off, LIMIT, &r, &why) == HTTP_DONE);
        CHECK(eq(r.path, r.path_len, paths[i]));
        off += r.head_len + (size_t)r.content_length;
    }
    CHECK(off == len);
}

static void header_limit(void)
{
    size_t n = LIMIT + 100;
    char *big = malloc(n + 64);
    struct http_request r;
    const char *why;
    strcpy(big, "GET / HTTP/1.1\r\nHost: y\r\nX: ");
    size_t k = strlen(big);
    memset(big + k, 'a', n - k);
    // An incomplete head that reaches the limit is refused at once.
    CHECK(http_parse_head(big, LIMIT - 1, LIMIT, &r, &why) == HTTP_MORE);
    CHECK(http_parse_head(big, LIMIT, LIMIT, &r, &why) == 431);
    CHECK(http_parse_head(big, n, LIMIT, &r, &why) == 431);
    // A complete head one byte under the limit is fine.
    size_t fit = LIMIT - 1 - 4;
    memcpy(big + fit, "\r\n\r\n", 4);
    CHECK(http_parse_head(big, fit + 4, LIMIT, &r, &why) == HTTP_DONE && r.head_len == LIMIT - 1);
    // Empty lines alone count too.
    memset(big, '\n', n);
    CHECK(http_parse_head(big, n, LIMIT, &r, &why) == 431);
    free(big);
}

static int decode_all(const char *body, size_t len, size_t step, char *out, size_t cap, size_t *got, size_t *used)
{
    struct http_chunked c;
    const char *why;
    http_chunked_init(&c);
    *got = *used = 0;
    for (;;) {
        size_t n = len - *used < step ? len - *used : step, u, g;
        int st = http_chunked_decode(&c, body + *used, n, &u, out + *got, cap - *got, &g, &why);
        *used += u, *got += g;
        if (st != HTTP_MORE || (!u && !g))
            return st;
    }
}

static void chunked(void)
{
    const char body[] = "5;ext=1\r\nhello\r\nA\r\n, chunked!\r\n0\r\nTrailer: x\r\n\r\nNEXT";
    char out[64];
    size_t got, used;
    for (size_t step = 1; step <= sizeof body; step++) {
        CHECKF(decode_all(body, sizeof body - 1, step, out, sizeof out, &got, &used) == HTTP_DONE, "step %zu", step);
        CHECK(got == 15 && !memcmp(out, "hello, chunked!", 15));
        CHECK(used == sizeof body - 1 - 4);          // stops before the next request
    }
    // out full: the decoder waits for room
    CHECK(decode_all(body, sizeof body - 1, 100, out, 7, &got, &used) == HTTP_MORE && got == 7);
    static const char *bad[] = {
        "x\r\n", "\r\n", "5\r\nhelloXY", "5\r\nhello\n0\r\n\r\n", "10000000000000000\r\n",
        "5\r\nhello\r\n0\r\nBad\x01" "trailer\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECKF(decode_all(bad[i], strlen(bad[i]), 64, out, sizeof out, &got, &used) == 400, "bad chunk %zu", i);
    // A size line of over 4096 bytes (Go's limit).
    char *longline = malloc(5000);
    memset(longline, '0', 5000);
    CHECK(decode_all(longline, 5000, 5000, out, sizeof out, &got, &used) == 400);
    free(longline);
}

static void queries(void)
{
    uint64_t v;
    CHECK(http_query_uint("a=1&us=250&b", 12, "us", 1000, &v) && v == 250);
    CHECK(!http_query_uint("us=", 3, "us", 1000, &v));
    CHECK(!http_query_uint("us=1001", 7, "us", 1000, &v));
    CHECK(!http_query_uint("us=12x", 6, "us", 1000, &v));
    CHECK(!http_query_uint("xus=5", 5, "us", 1000, &v));
    CHECK(!http_query_uint("us=99999999999999999999999", 26, "us", UINT64_MAX, &v));
    CHECK(http_query_uint("us=18446744073709551615", 23, "us", UINT64_MAX, &v) && v == UINT64_MAX);
    CHECK(http_query_uint("ms=0", 4, "ms", 10, &v) && v == 0);
}

static void answers(void)
{
    struct http_request r;
    char out[256];
    parse(curl_http10, &r);
    r.keep_alive = true;
    size_t n = http_format_head(out, sizeof out, 200, "text/plain", 13, true, &r);
    out[n] = 0;
    CHECK(!strcmp(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n"
                       "Connection: keep-alive\r\n\r\n"));
    n = http_format_head(out, sizeof out, 431, NULL, 0, false, NULL);
    out[n] = 0;
    CHECK(!strcmp(out, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"));
    CHECK(http_format_head(out, 20, 200, NULL, 0, true, NULL) == 0);
}

int main(void)
{
    RUN(curl_and_wrk);
    RUN(go_statuses);
    RUN(targets_and_versions);
    RUN(byte_by_byte);
    RUN(pipelining);
    RUN(header_limit);
    RUN(chunked);
    RUN(queries);
    RUN(answers);
    return CHECK_DONE();
}
