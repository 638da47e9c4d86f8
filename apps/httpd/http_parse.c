// SPDX-License-Identifier: MIT
// HTTP/1.1 request heads and chunked bodies (rules in http_parse.h).
// Pure and freestanding: no libc beyond memcpy/memcmp, no kernel calls.
//
// The head is parsed from the start each time more bytes arrive (a head is
// at most max_head bytes, so that costs at most one pass per read); the
// server keeps its buffer until HTTP_DONE. Nothing is copied: the request
// points into the buffer.
#include "http_parse.h"

#include <string.h>

// RFC 9110 5.6.2's tchar.
static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
        return true;
    default:
        return false;
    }
}

static bool is_ctl(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_val(unsigned char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static bool eq_fold(const char *a, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n != k)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a[i]) != lit[i])
            return false;
    return true;
}

// Does the comma-separated list v[0..n) hold tok (case-insensitive)?
static bool has_token(const char *v, size_t n, const char *tok)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e > s && eq_fold(v + s, e - s, tok))
            return true;
    }
    return false;
}

// The end of the line at p (its '\n'), or NULL when none before end.
static const char *find_lf(const char *p, const char *end)
{
    for (; p < end; p++)
        if (*p == '\n')
            return p;
    return NULL;
}

// Go's httpguts.ValidHostHeader: the bytes a host (and port) may hold.
static bool valid_host(const char *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if (!strchr("!$%&'()*+,-.:;=[]_~", c) || c == 0)
            return false;
    }
    return true;
}

// A path's percent escapes are whole (Go's url.unescape in path mode).
static bool valid_escapes(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == '%' && (i + 2 >= n || !is_hex((unsigned char)p[i + 1]) || !is_hex((unsigned char)p[i + 2])))
            return false;
    return true;
}

#define FAIL(status, why)  \
    do {                   \
        *reason = (why);   \
        return (status);   \
    } while (0)

// The request target: origin-form, absolute-form or "*"; sets path/query.
static int parse_target(struct http_request *r, const char **reason)
{
    const char *t = r->target, *end = t + r->target_len;
    for (const char *p = t; p < end; p++)
        if (is_ctl((unsigned char)*p))
            FAIL(400, "control byte in the request target");
    if (r->target_len == 1 && *t == '*') {
        r->path = t, r->path_len = 1, r->query = end, r->query_len = 0;
        return 0;
    }
    const char *p = t;
    if (*t != '/') {
        // absolute-form: scheme ":" "//" authority [path-abempty] ["?" query]
        if (!((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z'))
            FAIL(400, "request target neither a path nor an absolute URI");
        while (p < end && *p != ':') {
            unsigned char c = (unsigned char)*p;
            if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '+' && c != '-' &&
                c != '.')
                FAIL(400, "request target neither a path nor an absolute URI");
            p++;
        }
        if (end - p < 3 || p[1] != '/' || p[2] != '/')
            FAIL(400, "request target neither a path nor an absolute URI");
        p += 3;
        while (p < end && *p != '/' && *p != '?')
            p++;
    }
    const char *q = p;
    while (q < end && *q != '?')
        q++;
    if (q == p) {                 // an authority alone: the root
        r->path = "/", r->path_len = 1;
    } else {
        r->path = p, r->path_len = (uint32_t)(q - p);
    }
    if (!valid_escapes(r->path, r->path_len))
        FAIL(400, "bad percent escape in the path");
    r->query = q < end ? q + 1 : end;
    r->query_len = q < end ? (uint32_t)(end - q - 1) : 0;
    return 0;
}

// "HTTP/x.y" as Go's ParseHTTPVersion reads it: one digit each.
static int parse_version(struct http_request *r, const char *v, size_t n, const char **reason)
{
    if (n != 8 || memcmp(v, "HTTP/", 5) || v[6] != '.' || v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
        FAIL(400, "malformed HTTP version");
    r->major = (uint16_t)(v[5] - '0');
    r->minor = (uint16_t)(v[7] - '0');
    return 0;
}

static int parse_request_line(struct http_request *r, const char *s, const char *e, const char **reason)
{
    const char *sp1 = s;
    while (sp1 < e && *sp1 != ' ')
        sp1++;
    if (sp1 == e)
        FAIL(400, "malformed request line");
    const char *sp2 = sp1 + 1;
    while (sp2 < e && *sp2 != ' ')
        sp2++;
    if (sp2 == e)
        FAIL(400, "malformed request line");
    r->method = s, r->method_len = (uint32_t)(sp1 - s);
    if (!r->method_len)
        FAIL(400, "empty method");
    for (const char *p = s; p < sp1; p++)
        if (!is_tchar((unsigned char)*p))
            FAIL(400, "invalid method");
    r->target = sp1 + 1, r->target_len = (uint32_t)(sp2 - sp1 - 1);
    if (!r->target_len)
        FAIL(400, "empty request target");
    int st = parse_version(r, sp2 + 1, (size_t)(e - sp2 - 1), reason);
    if (st)
        return st;
    return parse_target(r, reason);
}

// What the header fields say, gathered while parsing them.
struct fields {
    int hosts, lengths;
    int64_t length;
    bool te, te_chunked, te_many;
    bool conn_close, conn_keep_alive;
    bool expect, expect_continue;
};

static int parse_length(const char *v, size_t n, int64_t *out)
{
    if (!n || n > 18)
        return -1;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    *out = x;
    return 0;
}

static int parse_field(struct fields *f, const char *s, const char *e, const char **reason)
{
    const char *colon = s;
    while (colon < e && *colon != ':')
        colon++;
    if (colon == e)
        FAIL(400, "malformed header line");
    if (colon == s)
        FAIL(400, "empty header name");
    for (const char *p = s; p < colon; p++)
        if (!is_tchar((unsigned char)*p))
            FAIL(400, "invalid header name");
    const char *v = colon + 1;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    const char *ve = e;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
    for (const char *p = v; p < ve; p++)
        if (is_ctl((unsigned char)*p) && *p != '\t')
            FAIL(400, "invalid header value");
    size_t nn = (size_t)(colon - s), vn = (size_t)(ve - v);
    if (eq_fold(s, nn, "host")) {
        if (++f->hosts > 1)
            FAIL(400, "too many Host headers");
        if (!valid_host(v, vn))
            FAIL(400, "malformed Host header");
    } else if (eq_fold(s, nn, "content-length")) {
        int64_t x;
        if (!vn)
            return 0;               // empty: no length, as in Go
        if (parse_length(v, vn, &x))
            FAIL(400, "bad Content-Length");
        if (f->lengths++ && x != f->length)
            FAIL(400, "multiple Content-Length headers that differ");
        f->length = x;
    } else if (eq_fold(s, nn, "transfer-encoding")) {
        if (f->te)
            f->te_many = true;
        f->te = true;
        f->te_chunked = eq_fold(v, vn, "chunked");
    } else if (eq_fold(s, nn, "connection")) {
        f->conn_close |= has_token(v, vn, "close");
        f->conn_keep_alive |= has_token(v, vn, "keep-alive");
    } else if (eq_fold(s, nn, "expect")) {
        if (vn) {
            f->expect = true;
            f->expect_continue |= has_token(v, vn, "100-continue");
        }
    }
    return 0;
}

// Go's order: the version, Host, then the body's framing, then Expect.
static int finish(struct http_request *r, const struct fields *f, const char **reason)
{
    if (r->major != 1)
        FAIL(505, "unsupported protocol version");
    bool http11 = r->minor >= 1;
    if (http11 && f->hosts == 0)
        FAIL(400, "missing required Host header");
    r->content_length = f->lengths ? f->length : 0;
    if (f->te && http11) {
        if (f->te_many || !f->te_chunked)
            FAIL(501, "unsupported transfer encoding");
        r->chunked = true;
        r->content_length = -1;
    }
    r->keep_alive = http11 ? !f->conn_close : f->conn_keep_alive && !f->conn_close;
    if (f->expect_continue) {
        r->expect_continue = http11 && r->content_length != 0;
    } else if (f->expect) {
        FAIL(417, "unsupported Expect");
    }
    return HTTP_DONE;
}

int http_parse_head(const char *buf, size_t len, size_t max_head, struct http_request *req, const char **reason)
{
    memset(req, 0, sizeof *req);
    *reason = "";
    const char *end = buf + (len < max_head ? len : max_head), *p = buf;
    // Empty lines before the request line (RFC 9112 2.2).
    while (p < end && (*p == '\r' || *p == '\n')) {
        if (*p == '\r' && (p + 1 >= end || p[1] != '\n'))
            break;
        p += *p == '\r' ? 2 : 1;
        req->skipped++;
    }
    if (p == end)
        return len >= max_head ? (*reason = "request header too large", 431) : HTTP_MORE;
    const char *lf = find_lf(p, end);
    if (!lf)
        goto more;
    const char *le = lf > p && lf[-1] == '\r' ? lf - 1 : lf;
    int st = parse_request_line(req, p, le, reason);
    if (st)
        return st;
    struct fields f = { 0 };
    p = lf + 1;
    for (;;) {
        lf = find_lf(p, end);
        if (!lf)
            goto more;
        le = lf > p && lf[-1] == '\r' ? lf - 1 : lf;
        if (le == p)
            break;
        if (*p == ' ' || *p == '\t')
            FAIL(400, "obsolete line folding");
        st = parse_field(&f, p, le, reason);
        if (st)
            return st;
        p = lf + 1;
    }
    req->head_len = (uint32_t)(lf + 1 - buf);
    return finish(req, &f, reason);

more:
    if (len >= max_head)
        FAIL(431, "request header too large");
    return HTTP_MORE;
}

// ---- chunked bodies -------------------------------------------------------------

enum { CH_SIZE, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_TRAILER, CH_TRAILER_LF, CH_DONE };

#define CHUNK_LINE_MAX 4096u

void http_chunked_init(struct http_chunked *c)
{
    memset(c, 0, sizeof *c);
    c->state = CH_SIZE;
}

int http_chunked_decode(struct http_chunked *c, const char *in, size_t len, size_t *consumed, char *out,
                        size_t out_cap, size_t *produced, const char **reason)
{
    size_t i = 0, o = 0;
    *reason = "";
    while (i < len && c->state != CH_DONE) {
        unsigned char ch = (unsigned char)in[i];
        switch (c->state) {
        case CH_SIZE:
            if (++c->line > CHUNK_LINE_MAX)
                goto bad_line;
            if (ch == '\r' || ch == '\n') {
                if (!c->digits)
                    goto bad_size;
                c->state = ch == '\r' ? CH_SIZE_LF : (c->left ? CH_DATA : CH_TRAILER);
                if (ch == '\n')
                    c->line = 0;
            } else if (c->ext) {
                if (is_ctl(ch) && ch != '\t')
                    goto bad_size;
            } else if (ch == ';') {
                c->ext = true;
            } else if (is_hex(ch)) {
                if (c->left >> 60)
                    { *reason = "chunk length too large"; goto bad; }
                c->left = c->left * 16 + (uint64_t)hex_val(ch);
                c->digits = true;
            } else if (ch == ' ' || ch == '\t') {
                if (c->digits)          // blanks before an extension ("1a ;x")
                    c->ext = true;
                else
                    goto bad_size;
            } else {
                goto bad_size;
            }
            i++;
            break;
        case CH_SIZE_LF:
            if (ch != '\n')
                goto bad_size;
            c->line = 0;
            c->state = c->left ? CH_DATA : CH_TRAILER;
            i++;
            break;
        case CH_DATA: {
            size_t n = len - i;
            if (n > c->left)
                n = (size_t)c->left;
            if (n > out_cap - o)
                n = out_cap - o;
            if (!n)
                goto out;           // out is full
            memcpy(out + o, in + i, n);
            o += n, i += n;
            c->left -= n;
            if (!c->left)
                c->state = CH_DATA_CR;
            break;
        }
        case CH_DATA_CR:                // Go wants CRLF here, not a bare LF
            if (ch != '\r')
                { *reason = "malformed chunked encoding"; goto bad; }
            c->state = CH_DATA_LF;
            c->digits = c->ext = false;
            c->line = 0;
            i++;
            break;
        case CH_DATA_LF:
            if (ch != '\n')
                { *reason = "malformed chunked encoding"; goto bad; }
            c->state = CH_SIZE;
            i++;
            break;
        case CH_TRAILER:                // a trailer field's line, or the empty line that ends them
            if (ch == '\n' || (ch == '\r' && c->line == 0)) {
                if (ch == '\r') {
                    c->state = CH_TRAILER_LF;
                } else {
                    c->state = c->line == 0 ? CH_DONE : CH_TRAILER;
                    c->line = 0;
                }
            } else if (ch != '\r') {
                if (++c->line > CHUNK_LINE_MAX)
                    goto bad_line;
                if (is_ctl(ch) && ch != '\t')
                    { *reason = "bad trailer"; goto bad; }
            }
            i++;
            break;
        case CH_TRAILER_LF:
            if (ch != '\n')
                { *reason = "bad trailer"; goto bad; }
            c->state = CH_DONE;
            i++;
            break;
        }
    }
out:
    *consumed = i;
    *produced = o;
    return c->state == CH_DONE ? HTTP_DONE : HTTP_MORE;
bad_size:
    *reason = "bad chunk size line";
    goto bad;
bad_line:
    *reason = "chunked encoding line too long";
bad:
    *consumed = i;
    *produced = o;
    return 400;
}

// ---- queries and answers -----------------------------------------------------------

bool http_query_uint(const char *q, size_t qlen, const char *name, uint64_t max, uint64_t *v)
{
    size_t k = strlen(name), i = 0;
    while (i < qlen) {
        size_t s = i;
        while (i < qlen && q[i] != '&')
            i++;
        if (i - s > k && q[s + k] == '=' && !memcmp(q + s, name, k)) {
            uint64_t x = 0;
            size_t j = s + k + 1;
            if (j == i)
                return false;
            for (; j < i; j++) {
                if (q[j] < '0' || q[j] > '9')
                    return false;
                uint64_t d = (uint64_t)(q[j] - '0');
                if (d > max || x > (max - d) / 10)
                    return false;
                x = x * 10 + d;
            }
            *v = x;
            return true;
        }
        i++;
    }
    return false;
}

const char *http_status_text(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Request Entity Too Large";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "";
    }
}

// Appends s to out at *n when it fits; false when not.
static bool put(char *out, size_t cap, size_t *n, const char *s)
{
    size_t k = strlen(s);
    if (*n + k > cap)
        return false;
    memcpy(out + *n, s, k);
    *n += k;
    return true;
}

static bool put_u64(char *out, size_t cap, size_t *n, uint64_t v)
{
    char d[24];
    int i = (int)sizeof d - 1;
    d[i] = 0;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return put(out, cap, n, d + i);
}

size_t http_format_head(char *out, size_t cap, int status, const char *ctype, uint64_t content_length,
                        bool keep_alive, const struct http_request *req)
{
    size_t n = 0;
    bool ok = put(out, cap, &n, "HTTP/1.1 ") && put_u64(out, cap, &n, (uint64_t)status) && put(out, cap, &n, " ") &&
              put(out, cap, &n, http_status_text(status)) && put(out, cap, &n, "\r\n");
    if (ctype)
        ok = ok && put(out, cap, &n, "Content-Type: ") && put(out, cap, &n, ctype) && put(out, cap, &n, "\r\n");
    ok = ok && put(out, cap, &n, "Content-Length: ") && put_u64(out, cap, &n, content_length) &&
         put(out, cap, &n, "\r\n");
    if (!keep_alive)
        ok = ok && put(out, cap, &n, "Connection: close\r\n");
    else if (req && req->major == 1 && req->minor == 0)
        ok = ok && put(out, cap, &n, "Connection: keep-alive\r\n");
    ok = ok && put(out, cap, &n, "\r\n");
    return ok ? n : 0;
}
