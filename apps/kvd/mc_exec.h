// SPDX-License-Identifier: MIT
// A parsed memcached command (mc_parse.h) carried out on kvd's table
// (kv_table.h), its answer written as memcached 1.6 writes it. Pure apart
// from kv_sys.h: the host tests replay memcached's own transcripts through
// mc_parse and this.
#ifndef KVD_MC_EXEC_H
#define KVD_MC_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kv_table.h"
#include "mc_parse.h"
#include "mc_prefix.h"

// Answers collect here; above flush_at bytes, flush writes them out (a
// get of many large values never needs them all in memory at once).
struct mc_out {
    char *buf;
    size_t len, cap;
    size_t flush_at;
    bool (*flush)(struct mc_out *o);    // sends buf[0..len) and sets len = 0; false: gone
    // When set, asked before buf grows from cap to newcap bytes (kvd
    // charges its memory budget): false refuses, and marks o broken.
    bool (*reserve)(struct mc_out *o, size_t newcap);
    void *ctx;
    bool broken;                        // a flush failed or memory ran out: nothing more is written
};

// Appends n bytes (or marks o broken).
void mc_out_put(struct mc_out *o, const char *s, size_t n);

// What a command needs beyond itself.
struct mc_env {
    struct kv_table *table;
    struct mc_prefixes *prefixes;       // stats detail's counts (NULL: none kept)
    uint32_t now;                       // seconds since the server started, from 2 (memcached's current_time)
    int64_t started_unix;               // the Unix time at now == 0; 0 when unknown
    const char *version;
    // stats conns: writes a STAT line group for the listener and each
    // connection (NULL: none listed)
    void (*conns)(const struct mc_env *env, struct mc_out *out);
    // for stats
    uint64_t pid, threads, curr_connections, total_connections, bytes_read, bytes_written;
    uint64_t max_conns, idle_timeout_s, port;      // for stats settings
};

// An exptime as the table keeps it: 0 never, else the second from which
// the item is gone. Relative up to 30 days, a Unix time above (counted
// from started_unix, or as far away when that is unknown); negative: gone
// already.
uint32_t mc_realtime(int32_t exptime, const struct mc_env *env);

// Carries out cmd and writes its answer to out (nothing under noreply,
// apart from SERVER_ERROR out of memory).
void mc_execute(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out);

// The meta commands (mc_meta.c), as mc_execute.
void mc_meta_execute(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out);

// A connection's protocol state between reads.
struct mc_conn {
    uint64_t swallow;                   // bytes still to discard (a too-large value)
    size_t need;                        // after mc_serve: bytes the buffer must hold to go on
    size_t scanned;                     // bytes of the incomplete command's line known to hold no LF
    bool in_data;                       // after mc_serve: a storage command's data block is incomplete
    bool closing;                       // quit (answers sent first), an HTTP request or an
                                        // overlong line (answers not flushed yet dropped): hang up
};

// Serves every whole command in buf[0..len) (the bytes read and not yet
// consumed), writing the answers to out; returns the bytes consumed. The
// rest, an incomplete command, stays for the next call with more bytes
// after it; c->need says how many the buffer must then hold (at most
// MC_GET_LINE_MAX, or a storage line and MC_ITEM_MAX). Stops early when
// c->closing is set.
size_t mc_serve(struct mc_conn *c, const char *buf, size_t len, const struct mc_env *env, struct mc_out *out);

#endif
