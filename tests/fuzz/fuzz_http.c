// SPDX-License-Identifier: MIT
// Fuzzes apps/httpd/http_parse.c as httpd drives it: the input is the bytes
// of a connection; heads are parsed one after another (pipelining), each
// request's Content-Length body or chunked body is consumed, until an error
// status or the bytes run out. The first byte picks the header limit (small
// ones reach 431 quickly) and the size of the pieces the bytes arrive in.
//
// Promises checked: a head never claims more bytes than it was given, nor
// past the limit; its fields point inside it; an error is one of the
// statuses http_parse.h names, with a reason; the answer's head formats; a
// chunked decoder never reads or writes past its buffers and always makes
// progress; a head that parsed whole parses the same from any longer
// buffer.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "apps/httpd/http_parse.h"
#include "tests/fuzz/fuzz.h"

static void check_in(const char *base, size_t len, const char *p, uint32_t n)
{
    FUZZ_CHECK(p >= base && p + n <= base + len);
}

static void check_head(const char *buf, size_t len, size_t limit, const struct http_request *r)
{
    FUZZ_CHECK(r->head_len > 0 && r->head_len <= len && r->head_len <= limit);
    check_in(buf, r->head_len, r->method, r->method_len);
    check_in(buf, r->head_len, r->target, r->target_len);
    if (!(r->path_len == 1 && r->path[0] == '/' && r->path != r->target))
        check_in(buf, r->head_len, r->path, r->path_len);
    check_in(buf, r->head_len, r->query, r->query_len);
    FUZZ_CHECK(r->method_len > 0 && r->target_len > 0 && r->major == 1);
    FUZZ_CHECK(r->chunked ? r->content_length == -1 : r->content_length >= 0);
    char out[512];
    FUZZ_CHECK(http_format_head(out, sizeof out, 200, "text/plain", (uint64_t)r->content_length, r->keep_alive, r) > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t limit = (data[0] & 0x80) ? 64 + (data[0] & 0x3f) * 16 : HTTP_MAX_HEAD_DEFAULT;
    size_t step = (data[0] & 0x40) ? 1 + (data[0] & 0x0f) : SIZE_MAX;
    // A copy of exactly the bytes, so ASan sees any read past them.
    char *buf = malloc(size - 1 ? size - 1 : 1);
    size_t len = size - 1;
    memcpy(buf, data + 1, len);
    size_t off = 0;
    while (off < len) {
        struct http_request r;
        const char *why;
        size_t have = off;
        int st = HTTP_MORE;
        while (st == HTTP_MORE && have < len) {
            have = len - have < step ? len : have + step;
            st = http_parse_head(buf + off, have - off, limit, &r, &why);
        }
        if (st == HTTP_MORE)
            break;
        if (st != HTTP_DONE) {
            FUZZ_CHECK(st == 400 || st == 417 || st == 431 || st == 501 || st == 505);
            FUZZ_CHECK(why && why[0] && http_status_text(st)[0]);
            break;
        }
        check_head(buf + off, have - off, limit, &r);
        // The same head from the whole rest parses to the same length.
        struct http_request again;
        FUZZ_CHECK(http_parse_head(buf + off, len - off, limit, &again, &why) == HTTP_DONE);
        FUZZ_CHECK(again.head_len == r.head_len && again.content_length == r.content_length);
        off += r.head_len;
        if (r.chunked) {
            struct http_chunked c;
            http_chunked_init(&c);
            char body[97];
            int cs = HTTP_MORE;
            while (cs == HTTP_MORE && off < len) {
                size_t used, got, n = len - off < step ? len - off : step;
                cs = http_chunked_decode(&c, buf + off, n, &used, body, sizeof body, &got, &why);
                FUZZ_CHECK(used <= n && got <= sizeof body);
                FUZZ_CHECK(cs != HTTP_MORE || used > 0 || got > 0 || n == 0);
                off += used;
            }
            if (cs != HTTP_DONE) {
                FUZZ_CHECK(cs == HTTP_MORE || (cs == 400 && why[0]));
                break;
            }
        } else {
            if ((uint64_t)r.content_length > len - off)
                break;
            off += (size_t)r.content_length;
        }
    }
    uint64_t v;
    http_query_uint(buf, len, "us", 1000000, &v);
    free(buf);
    return 0;
}
