// SPDX-License-Identifier: MIT
// The load generator's requests and the checks of their answers
// (proto.h). An answer is accepted only when it is exactly what a correct
// server sends: HTTP's status 200 with the expected body, framed by
// Content-Length or chunked coding (RFC 9112); memcached's ASCII replies
// (its protocol.txt) with a hit's value equal to the key's.
#include "tools/net/loadgen/proto.h"

#include <stdio.h>
#include <string.h>

// ---- memcache keys and values ------------------------------------------------

size_t proto_mc_key(uint32_t i, char *out, size_t cap)
{
    int n = snprintf(out, cap, "key:%010u", i);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

void proto_mc_value(uint32_t i, char *out, uint32_t size)
{
    uint32_t h = mix32(i + 1);
    for (uint32_t k = 0; k < size; k++) {
        if (k % 4 == 0)
            h = mix32(h + k);
        out[k] = (char)('a' + (h >> (8 * (k % 4))) % 26);
    }
}

uint32_t proto_mc_flags(uint32_t i)
{
    return mix32(i ^ 0x5bd1e995u) & 0xffff;
}

// ---- requests -----------------------------------------------------------------

size_t proto_request(const struct proto_cfg *cfg, const struct op *op, char *out, size_t cap)
{
    char key[32];
    int n = -1;
    switch (op->kind) {
    case OP_HTTP_GET:
        n = snprintf(out, cap, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", op->path, cfg->host);
        break;
    case OP_MC_GET:
        proto_mc_key(op->key, key, sizeof key);
        n = snprintf(out, cap, "get %s\r\n", key);
        break;
    case OP_MC_SET: {
        proto_mc_key(op->key, key, sizeof key);
        n = snprintf(out, cap, "set %s %u 0 %u\r\n", key, proto_mc_flags(op->key), cfg->value_size);
        if (n < 0 || (size_t)n + cfg->value_size + 2 >= cap)
            return 0;
        proto_mc_value(op->key, out + n, cfg->value_size);
        memcpy(out + n + cfg->value_size, "\r\n", 2);
        return (size_t)n + cfg->value_size + 2;
    }
    case OP_MC_VERSION:
        n = snprintf(out, cap, "version\r\n");
        break;
    }
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

// ---- helpers --------------------------------------------------------------------

// The length of the line at buf (up to and including CRLF), 0 when no
// whole line is there yet, or -1 when a bare LF or a line over max comes.
static long line_len(const char *buf, size_t len, size_t max)
{
    const char *lf = memchr(buf, '\n', len < max ? len : max);
    if (!lf)
        return len >= max ? -1 : 0;
    if (lf == buf || lf[-1] != '\r')
        return -1;
    return lf - buf + 1;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

// Does the header line (without CRLF) have this name (case-insensitive)?
// Then *value is its value with leading blanks skipped.
static int header_is(const char *line, size_t n, const char *name, const char **value, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || line[k] != ':')
        return 0;
    for (size_t i = 0; i < k; i++)
        if (lower(line[i]) != name[i])
            return 0;
    size_t i = k + 1;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t e = n;
    while (e > i && (line[e - 1] == ' ' || line[e - 1] == '\t'))
        e--;
    *value = line + i;
    *vlen = e - i;
    return 1;
}

static int token_in(const char *v, size_t n, const char *tok)
{
    size_t k = strlen(tok);
    for (size_t i = 0; i + k <= n; i++) {
        if ((i == 0 || v[i - 1] == ',' || v[i - 1] == ' ') && (i + k == n || v[i + k] == ',' || v[i + k] == ' ')) {
            size_t j = 0;
            while (j < k && lower(v[i + j]) == tok[j])
                j++;
            if (j == k)
                return 1;
        }
    }
    return 0;
}

// A decimal number of at most 19 digits; -1 when not one.
static long long parse_dec(const char *s, size_t n)
{
    if (n == 0 || n > 18)
        return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

#define BAD(msg)         \
    do {                 \
        *why = (msg);    \
        return PARSE_BAD; \
    } while (0)

// ---- HTTP ---------------------------------------------------------------------------

// A chunked body at buf: checks it against the expected body and finds its
// end (after the last chunk's trailer section).
static enum parse_status http_chunked(const struct op *op, const char *buf, size_t len, size_t *used,
                                      const char **why)
{
    size_t pos = 0, got = 0;
    for (;;) {
        long n = line_len(buf + pos, len - pos, 64);
        if (n < 0)
            BAD("bad chunk size line");
        if (n == 0)
            return PARSE_MORE;
        size_t size = 0, i = 0;
        for (; i < (size_t)n - 2; i++) {
            char c = buf[pos + i];
            int d = c >= '0' && c <= '9' ? c - '0' : lower(c) >= 'a' && lower(c) <= 'f' ? lower(c) - 'a' + 10 : -1;
            if (d < 0)
                break;
            size = size * 16 + (size_t)d;
            if (size > PROTO_MAX_ANSWER)
                BAD("chunk too large");
        }
        if (i == 0 || (i < (size_t)n - 2 && buf[pos + i] != ';'))
            BAD("bad chunk size");
        pos += (size_t)n;
        if (size == 0)
            break;
        if (len - pos < size + 2)
            return PARSE_MORE;
        if (got + size > op->expect_len || memcmp(buf + pos, op->expect + got, size))
            BAD("body differs from the expected one");
        if (buf[pos + size] != '\r' || buf[pos + size + 1] != '\n')
            BAD("chunk not followed by CRLF");
        got += size;
        pos += size + 2;
    }
    for (;;) {                       // trailer fields, then an empty line
        long n = line_len(buf + pos, len - pos, 8192);
        if (n < 0)
            BAD("bad trailer line");
        if (n == 0)
            return PARSE_MORE;
        pos += (size_t)n;
        if (n == 2)
            break;
    }
    if (got != op->expect_len)
        BAD("body shorter than the expected one");
    *used = pos;
    return PARSE_OK;
}

static enum parse_status http_parse(const struct op *op, const char *buf, size_t len, size_t *used, int *close,
                                    const char **why)
{
    long n = line_len(buf, len, 1024);
    if (n < 0)
        BAD("bad status line");
    if (n == 0)
        return len >= 5 && memcmp(buf, "HTTP/", 5) ? (*why = "not an HTTP answer", PARSE_BAD) : PARSE_MORE;
    if (n < 14 || memcmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ')
        BAD("bad status line");
    if (memcmp(buf + 9, "200", 3) || buf[12] != ' ')
        BAD("status not 200");
    int http10 = buf[7] == '0';
    *close = http10;
    long long clen = -1;
    int chunked = 0;
    size_t pos = (size_t)n;
    for (;;) {
        n = line_len(buf + pos, len - pos, 8192);
        if (n < 0)
            BAD("bad header line");
        if (n == 0)
            return pos + 8192 > PROTO_MAX_ANSWER ? (*why = "header block too large", PARSE_BAD) : PARSE_MORE;
        const char *line = buf + pos, *v;
        size_t vl;
        pos += (size_t)n;
        if (n == 2)
            break;
        if (header_is(line, (size_t)n - 2, "content-length", &v, &vl)) {
            long long c = parse_dec(v, vl);
            if (c < 0 || (clen >= 0 && c != clen))
                BAD("bad Content-Length");
            clen = c;
        } else if (header_is(line, (size_t)n - 2, "transfer-encoding", &v, &vl)) {
            if (!token_in(v, vl, "chunked"))
                BAD("unknown Transfer-Encoding");
            chunked = 1;
        } else if (header_is(line, (size_t)n - 2, "connection", &v, &vl)) {
            if (token_in(v, vl, "close"))
                *close = 1;
            else if (token_in(v, vl, "keep-alive") && http10)
                *close = 0;
        }
        if (pos > PROTO_MAX_ANSWER)
            BAD("header block too large");
    }
    if (chunked) {
        if (clen >= 0)
            BAD("both Content-Length and chunked");
        size_t body;
        enum parse_status s = http_chunked(op, buf + pos, len - pos, &body, why);
        if (s == PARSE_OK)
            *used = pos + body;
        return s;
    }
    if (clen < 0)
        BAD("no Content-Length and not chunked");
    if ((uint64_t)clen != op->expect_len)
        BAD("body length differs from the expected one");
    if (len - pos < (size_t)clen)
        return PARSE_MORE;
    if (memcmp(buf + pos, op->expect, (size_t)clen))
        BAD("body differs from the expected one");
    *used = pos + (size_t)clen;
    return PARSE_OK;
}

// ---- memcache -----------------------------------------------------------------------

static enum parse_status mc_get(const struct proto_cfg *cfg, const struct op *op, const char *buf, size_t len,
                                size_t *used, const char **why)
{
    long n = line_len(buf, len, 512);
    if (n < 0)
        BAD("bad reply line");
    if (n == 0)
        return PARSE_MORE;
    if (n == 5 && !memcmp(buf, "END\r\n", 5)) {
        *used = 5;
        return PARSE_MISS;
    }
    char key[32], want_hdr[96];
    proto_mc_key(op->key, key, sizeof key);
    int h = snprintf(want_hdr, sizeof want_hdr, "VALUE %s %u %u", key, proto_mc_flags(op->key), cfg->value_size);
    // A cas unique may follow (gets); get's answer has none.
    if (n != h + 2 || memcmp(buf, want_hdr, (size_t)h))
        BAD(!memcmp(buf, "VALUE ", 6) ? "VALUE line differs from the key's" : "not a get answer");
    size_t pos = (size_t)n, vs = cfg->value_size;
    if (len - pos < vs + 2 + 5)
        return PARSE_MORE;
    char want[PROTO_MC_VALUE_MAX];
    if (vs > sizeof want)
        BAD("value size above PROTO_MC_VALUE_MAX");
    proto_mc_value(op->key, want, (uint32_t)vs);
    if (memcmp(buf + pos, want, vs))
        BAD("value differs from the key's");
    pos += vs;
    if (memcmp(buf + pos, "\r\nEND\r\n", 7))
        BAD("value not followed by CRLF END");
    *used = pos + 7;
    return PARSE_OK;
}

static enum parse_status mc_parse(const struct proto_cfg *cfg, const struct op *op, const char *buf, size_t len,
                                  size_t *used, const char **why)
{
    if (op->kind == OP_MC_GET)
        return mc_get(cfg, op, buf, len, used, why);
    long n = line_len(buf, len, 512);
    if (n < 0)
        BAD("bad reply line");
    if (n == 0)
        return PARSE_MORE;
    if (op->kind == OP_MC_SET && !(n == 8 && !memcmp(buf, "STORED\r\n", 8)))
        BAD("set not answered STORED");
    if (op->kind == OP_MC_VERSION && !(n > 10 && !memcmp(buf, "VERSION ", 8)))
        BAD("version not answered VERSION");
    *used = (size_t)n;
    return PARSE_OK;
}

enum parse_status proto_parse(const struct proto_cfg *cfg, const struct op *op, const char *buf, size_t len,
                              size_t *used, int *close, const char **why)
{
    *close = 0;
    *why = "";
    if (cfg->proto == PROTO_HTTP)
        return http_parse(op, buf, len, used, close, why);
    return mc_parse(cfg, op, buf, len, used, why);
}
