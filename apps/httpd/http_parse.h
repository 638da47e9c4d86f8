// SPDX-License-Identifier: MIT
// HTTP/1.1 requests (RFC 9112), parsed as Go's net/http server accepts
// and refuses them. Pure and freestanding: the same file runs in the
// kernel's httpd and under the host tests and the fuzzer.
//
// What is refused, and with which status (Go's answer in each case):
//   400  a request line that is not METHOD SP TARGET SP HTTP/x.y (a method
//        that is no token, a target that is neither origin-form, absolute
//        form nor "*", control bytes in it); a header line without a
//        colon, a name that is no token, a value with control bytes;
//        obs-fold (a line starting with a blank); HTTP/1.1 without
//        exactly one Host, or a malformed one; a Content-Length that is
//        not a number, or two that differ; a bad chunked body.
//   431  a request line and header block longer than the limit.
//   501  a Transfer-Encoding other than one "chunked" (HTTP/1.1).
//   505  a major version other than 1.
//   417  an Expect other than 100-continue.
// A request with neither Content-Length nor chunked coding has no body
// (Go never answers 411, nor does httpd). Transfer-Encoding overrides
// Content-Length, and is ignored in HTTP/1.0, as in Go. Lines may end in
// CRLF or a bare LF; empty lines before a request line are skipped.
//
// Connections: HTTP/1.1 keeps the connection unless "Connection: close";
// HTTP/1.0 closes it unless "Connection: keep-alive". Any refused request
// closes it after the error answer.
#ifndef HTTPD_HTTP_PARSE_H
#define HTTPD_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The default limit on a request line and header block together (Node.js's
// default; Go's is 1 MiB, nginx's 8 KiB a line).
#define HTTP_MAX_HEAD_DEFAULT 16384u

// A parsed request's head. Pointers are into the caller's buffer and hold
// while it does.
struct http_request {
    const char *method;
    const char *target;           // as sent
    const char *path;             // the target's path ("/" for "*" and authority-only)
    const char *query;            // after '?', without it; "" when none
    uint32_t method_len, target_len, path_len, query_len;
    uint16_t major, minor;
    bool keep_alive;              // the connection stays open after the answer
    bool chunked;                 // the body is in chunked coding
    bool expect_continue;         // "Expect: 100-continue": answer 100 before reading the body
    int64_t content_length;       // the body's length; 0 when none; -1 with chunked
    uint32_t skipped;             // empty lines before the request line
    uint32_t head_len;            // bytes from buf to the body, the empty lines included
};

enum {
    HTTP_MORE = 0,                // a prefix of a good head: read more
    HTTP_DONE = 1,                // *req is a whole head of req->head_len bytes
};

// Parses the head at buf[0..len): HTTP_MORE, HTTP_DONE, or the status of
// the error answer (400, 417, 431, 501, 505), with *reason a static
// phrase saying what was wrong. max_head bounds head_len (431 beyond it,
// decided as soon as that many bytes lack a whole head).
int http_parse_head(const char *buf, size_t len, size_t max_head, struct http_request *req, const char **reason);

// A chunked body's decoder (RFC 9112 7.1): sizes in hex with optional
// extensions, data, CRLF; a last chunk of size 0, trailer fields, and an
// empty line. Lines of the coding are at most 4096 bytes (Go's limit).
struct http_chunked {
    uint64_t left;                // data bytes left in this chunk
    uint32_t line;                // bytes of the current size/trailer line so far
    uint8_t state;
    bool ext;                     // in a chunk extension (after ';')
    bool digits;                  // the size line has a digit
};

void http_chunked_init(struct http_chunked *c);
// Decodes in[0..len): copies data to out (its free room out_cap) and
// says how much was consumed and produced (also on an error). HTTP_MORE (all of in consumed,
// or out full: call again with room), HTTP_DONE (the body ended at
// *consumed), or 400 with *reason for a bad coding.
int http_chunked_decode(struct http_chunked *c, const char *in, size_t len, size_t *consumed, char *out,
                        size_t out_cap, size_t *produced, const char **reason);

// The query parameter name of q[0..qlen) as a decimal in [0, max]: true
// and *v, or false when absent, empty, not digits or above max.
bool http_query_uint(const char *q, size_t qlen, const char *name, uint64_t max, uint64_t *v);

// The reason phrase of a status (Go's StatusText), "" for one unknown.
const char *http_status_text(int status);

// Formats a response's status line and headers into out (cap bytes):
// Content-Type when ctype, Content-Length, "Connection: close" when
// !keep_alive, "Connection: keep-alive" for an HTTP/1.0 request kept.
// Returns the length, or 0 when it does not fit.
size_t http_format_head(char *out, size_t cap, int status, const char *ctype, uint64_t content_length,
                        bool keep_alive, const struct http_request *req);

#endif
