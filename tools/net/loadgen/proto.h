// SPDX-License-Identifier: MIT
// The load generator's two protocols: the request it sends for each kind of
// operation, and a parser of the answer that checks it is exactly the one
// expected. Pure (no I/O, no clock), so tests/host runs it on real
// servers' bytes.
#ifndef LOADGEN_PROTO_H
#define LOADGEN_PROTO_H

#include <stddef.h>
#include <stdint.h>

enum proto { PROTO_HTTP, PROTO_MEMCACHE };

// What one request was, enough to check its answer.
enum op_kind {
    OP_HTTP_GET,        // GET path; the body must be expect
    OP_MC_GET,          // get key; a hit must hold key's value, a miss is END
    OP_MC_SET,          // set key to its value; STORED
    OP_MC_VERSION,      // version; VERSION ...
};

struct op {
    enum op_kind kind;
    uint32_t key;                 // memcache: the key's index
    uint8_t cls;                  // the service class (the bimodal mix's short/long)
    const char *path;             // http: the request's path
    const char *expect;           // http: the body a correct server sends
    uint32_t expect_len;
};

struct proto_cfg {
    enum proto proto;
    const char *host;             // http: the Host header's value
    uint32_t value_size;          // memcache: every value's length, <= PROTO_MC_VALUE_MAX
};

// The request's bytes, written to out (cap bytes); its length, or 0 when
// it does not fit.
size_t proto_request(const struct proto_cfg *cfg, const struct op *op, char *out, size_t cap);

enum parse_status {
    PARSE_MORE,                   // a prefix of a good answer: read more
    PARSE_OK,                     // a whole good answer of *used bytes
    PARSE_MISS,                   // memcache get: END, a whole answer of *used bytes
    PARSE_BAD,                    // not the answer expected: the connection is unusable
};

// Parses the answer to op at the start of buf[0..len). With PARSE_OK and
// PARSE_MISS, *used is its length and *close says the server will close
// the connection after it (HTTP's Connection: close, HTTP/1.0). With
// PARSE_BAD, why (a static string) says what was wrong.
enum parse_status proto_parse(const struct proto_cfg *cfg, const struct op *op, const char *buf, size_t len,
                              size_t *used, int *close, const char **why);

// The memcache key of index i ("key:" and 10 digits) and its value (i's
// bytes, never CR or LF), the same in every run: a get can be checked
// whoever set the key. flags: the flags stored with it.
size_t proto_mc_key(uint32_t i, char *out, size_t cap);
void proto_mc_value(uint32_t i, char *out, uint32_t size);
uint32_t proto_mc_flags(uint32_t i);

#define PROTO_MC_VALUE_MAX 4096u

// The longest answer accepted (a header block or a body above it is bad).
#define PROTO_MAX_ANSWER (1u << 20)

#endif
