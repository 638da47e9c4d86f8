// SPDX-License-Identifier: MIT
// memcached commands on kvd's table (mc_exec.h). The answers' words are
// memcached 1.6's (its proto_text.c), so that its clients, and its own
// transcripts, see no difference.
#include "mc_exec.h"

#include <string.h>
#include "kv_sys.h"

void mc_out_put(struct mc_out *o, const char *s, size_t n)
{
    if (o->broken || !n)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n)
            cap *= 2;
        if (o->reserve && !o->reserve(o, cap)) {
            o->broken = true;
            return;
        }
        char *b = kv_realloc(o->buf, cap);
        if (!b) {
            o->broken = true;
            return;
        }
        o->buf = b, o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    if (o->flush && o->flush_at && o->len > o->flush_at && !o->flush(o))
        o->broken = true;
}

static void put_str(struct mc_out *o, const char *s)
{
    mc_out_put(o, s, strlen(s));
}

static void put_u64(struct mc_out *o, uint64_t v)
{
    char d[24];
    mc_out_put(o, d, kv_format_u64(v, d));
}

uint32_t mc_realtime(int32_t exptime, const struct mc_env *env)
{
    if (exptime < 0)
        return 1;                       // memcached's EXPTIME_TO_POSITIVE_TIME: a time long past
    if (exptime == 0)
        return 0;
    if (exptime > MC_REALTIME_MAXDELTA) {
        if (exptime <= env->started_unix)
            return 1;
        int64_t rel = exptime - env->started_unix;
        return rel > UINT32_MAX ? UINT32_MAX : (uint32_t)rel;
    }
    uint64_t at = (uint64_t)env->now + (uint64_t)exptime;
    return at > UINT32_MAX ? UINT32_MAX : (uint32_t)at;
}

// ---- get ---------------------------------------------------------------------------

struct get_ctx {
    struct mc_out *out;
    bool with_cas;
};

// Called with the item's shard locked: the value is copied out here.
static void emit_value(void *ctx, const struct kv_item *it)
{
    struct get_ctx *g = ctx;
    put_str(g->out, "VALUE ");
    mc_out_put(g->out, it->data, it->nkey);
    put_str(g->out, " ");
    put_u64(g->out, it->flags);
    put_str(g->out, " ");
    put_u64(g->out, it->nbytes);
    if (g->with_cas) {
        put_str(g->out, " ");
        put_u64(g->out, it->cas);
    }
    put_str(g->out, "\r\n");
    mc_out_put(g->out, kv_item_value(it), it->nbytes);
    put_str(g->out, "\r\n");
}

static void get(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    struct get_ctx g = { out, cmd->kind == MC_GETS || cmd->kind == MC_GATS };
    bool touch = cmd->kind == MC_GAT || cmd->kind == MC_GATS;
    uint32_t exptime = touch ? mc_realtime(cmd->exptime, env) : 0;
    const char *p = cmd->keys, *end = p + cmd->keys_len, *key;
    uint32_t nkey;
    while (mc_next_key(&p, end, &key, &nkey) && !out->broken) {
        bool hit = touch ? kv_gat(env->table, key, nkey, exptime, env->now, emit_value, &g)
                         : kv_get(env->table, key, nkey, env->now, emit_value, &g);
        mc_prefix_get(env->prefixes, key, nkey, hit);
    }
    put_str(out, "END\r\n");
}

// ---- the others -------------------------------------------------------------------------

static void reply(const struct mc_cmd *cmd, struct mc_out *out, const char *line)
{
    if (!cmd->noreply)
        put_str(out, line);
}

static void store(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    static const enum kv_mode modes[] = {
        [MC_SET] = KV_SET, [MC_ADD] = KV_ADD, [MC_REPLACE] = KV_REPLACE,
        [MC_APPEND] = KV_APPEND, [MC_PREPEND] = KV_PREPEND, [MC_CAS] = KV_CAS,
    };
    mc_prefix_set(env->prefixes, cmd->key, cmd->nkey);
    if (cmd->too_large) {
        // memcached drops the key's old value too: a failed set must not
        // leave a stale one readable.
        if (cmd->kind == MC_SET)
            kv_delete(env->table, cmd->key, cmd->nkey, env->now);
        reply(cmd, out, "SERVER_ERROR object too large for cache\r\n");
        return;
    }
    switch (kv_store(env->table, modes[cmd->kind], cmd->key, cmd->nkey, cmd->flags, mc_realtime(cmd->exptime, env),
                     cmd->data, cmd->bytes, cmd->cas, env->now)) {
    case KV_STORED: reply(cmd, out, "STORED\r\n"); break;
    case KV_NOT_STORED: reply(cmd, out, "NOT_STORED\r\n"); break;
    case KV_EXISTS: reply(cmd, out, "EXISTS\r\n"); break;
    case KV_NOT_FOUND: reply(cmd, out, "NOT_FOUND\r\n"); break;
    default: put_str(out, "SERVER_ERROR out of memory storing object\r\n"); break;
    }
}

static void delta(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    char num[24];
    switch (kv_delta(env->table, cmd->key, cmd->nkey, cmd->kind == MC_INCR, cmd->delta, env->now, num)) {
    case KV_OK:
        if (!cmd->noreply) {
            put_str(out, num);
            put_str(out, "\r\n");
        }
        break;
    case KV_NOT_FOUND: reply(cmd, out, "NOT_FOUND\r\n"); break;
    case KV_NON_NUMERIC: reply(cmd, out, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"); break;
    default: put_str(out, "SERVER_ERROR out of memory\r\n"); break;
    }
}

static void stat(struct mc_out *out, const char *name, uint64_t v)
{
    put_str(out, "STAT ");
    put_str(out, name);
    put_str(out, " ");
    put_u64(out, v);
    put_str(out, "\r\n");
}

static void stat_str(struct mc_out *out, const char *name, const char *v)
{
    put_str(out, "STAT ");
    put_str(out, name);
    put_str(out, " ");
    put_str(out, v);
    put_str(out, "\r\n");
}

// "stats settings": memcached's names for what kvd has, with kvd's values.
static void stats_settings(const struct mc_env *env, const struct kv_stats *s, struct mc_out *out)
{
    stat(out, "maxbytes", s->limit_maxbytes);
    stat(out, "maxconns", env->max_conns);
    stat(out, "tcpport", env->port);
    stat(out, "udpport", 0);
    stat_str(out, "evictions", "on");
    stat_str(out, "shutdown_command", "no");
    stat(out, "num_threads", env->threads);
    stat_str(out, "cas_enabled", "yes");
    stat_str(out, "binding_protocol", "ascii");
    stat(out, "item_size_max", MC_ITEM_MAX);
    stat_str(out, "flush_enabled", "yes");
    stat(out, "idle_timeout", env->idle_timeout_s);
    stat_str(out, "track_sizes", "no");
    put_str(out, "END\r\n");
}

// "stats items" and "stats slabs": kvd's table has no slab classes, so it
// shows as memcached's class 1 holding every item (none when empty, as
// memcached shows an empty cache).
static void stats_items(const struct kv_stats *s, struct mc_out *out)
{
    if (s->curr_items) {
        stat(out, "items:1:number", s->curr_items);
        stat(out, "items:1:evicted", s->evictions);
        stat(out, "items:1:outofmemory", s->store_no_memory);
        stat(out, "items:1:reclaimed", s->reclaimed);
    }
    put_str(out, "END\r\n");
}

static void stats_slabs(const struct kv_stats *s, struct mc_out *out)
{
    if (s->curr_items)
        stat(out, "1:used_chunks", s->curr_items);
    stat(out, "active_slabs", s->curr_items ? 1 : 0);
    stat(out, "total_malloced", s->bytes);
    put_str(out, "END\r\n");
}

static void stats(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    struct kv_stats s;
    switch (cmd->stats) {
    case MC_STATS_DETAIL_ON:
    case MC_STATS_DETAIL_OFF:
        if (env->prefixes)
            mc_prefixes_enable(env->prefixes, cmd->stats == MC_STATS_DETAIL_ON);
        put_str(out, "OK\r\n");
        return;
    case MC_STATS_CONNS:
        if (env->conns)
            env->conns(env, out);
        put_str(out, "END\r\n");
        return;
    case MC_STATS_DETAIL_DUMP:
        if (env->prefixes)
            mc_prefixes_dump(env->prefixes, out);
        put_str(out, "END\r\n");
        return;
    case MC_STATS_RESET:
        if (env->prefixes)
            mc_prefixes_clear(env->prefixes);
        kv_stats_reset(env->table);
        put_str(out, "RESET\r\n");
        return;
    case MC_STATS_SIZES:
        stat_str(out, "sizes_status", "disabled");
        put_str(out, "END\r\n");
        return;
    case MC_STATS_SETTINGS:
        kv_stats(env->table, &s);
        stats_settings(env, &s, out);
        return;
    case MC_STATS_ITEMS:
        kv_stats(env->table, &s);
        stats_items(&s, out);
        return;
    case MC_STATS_SLABS:
        kv_stats(env->table, &s);
        stats_slabs(&s, out);
        return;
    case MC_STATS_GENERAL:
        break;
    }
    kv_stats(env->table, &s);
    stat(out, "pid", env->pid);
    stat(out, "uptime", env->now);
    stat(out, "time", env->started_unix > 0 ? (uint64_t)env->started_unix + env->now : env->now);
    put_str(out, "STAT version ");
    put_str(out, env->version);
    put_str(out, "\r\n");
    stat(out, "pointer_size", 8 * sizeof(void *));
    stat(out, "curr_connections", env->curr_connections);
    stat(out, "total_connections", env->total_connections);
    stat(out, "cmd_get", s.get_hits + s.get_misses);
    stat(out, "cmd_set", s.cmd_set);
    stat(out, "cmd_flush", s.cmd_flush);
    stat(out, "cmd_touch", s.cmd_touch);
    stat(out, "get_hits", s.get_hits);
    stat(out, "get_misses", s.get_misses);
    stat(out, "get_expired", s.get_expired);
    stat(out, "get_flushed", s.get_flushed);
    stat(out, "delete_misses", s.delete_misses);
    stat(out, "delete_hits", s.delete_hits);
    stat(out, "incr_misses", s.incr_misses);
    stat(out, "incr_hits", s.incr_hits);
    stat(out, "decr_misses", s.decr_misses);
    stat(out, "decr_hits", s.decr_hits);
    stat(out, "cas_misses", s.cas_misses);
    stat(out, "cas_hits", s.cas_hits);
    stat(out, "cas_badval", s.cas_badval);
    stat(out, "touch_hits", s.touch_hits);
    stat(out, "touch_misses", s.touch_misses);
    stat(out, "store_no_memory", s.store_no_memory);
    stat(out, "bytes_read", env->bytes_read);
    stat(out, "bytes_written", env->bytes_written);
    stat(out, "limit_maxbytes", s.limit_maxbytes);
    stat(out, "threads", env->threads);
    stat(out, "shards", s.shards);
    stat(out, "bytes", s.bytes);
    stat(out, "curr_items", s.curr_items);
    stat(out, "total_items", s.total_items);
    stat(out, "evictions", s.evictions);
    stat(out, "reclaimed", s.reclaimed);
    put_str(out, "END\r\n");
}

void mc_execute(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    switch (cmd->kind) {
    case MC_GET:
    case MC_GETS:
    case MC_GAT:
    case MC_GATS:
        get(cmd, env, out);
        break;
    case MC_SET:
    case MC_ADD:
    case MC_REPLACE:
    case MC_APPEND:
    case MC_PREPEND:
    case MC_CAS:
        store(cmd, env, out);
        break;
    case MC_DELETE:
        mc_prefix_delete(env->prefixes, cmd->key, cmd->nkey);
        reply(cmd, out, kv_delete(env->table, cmd->key, cmd->nkey, env->now) == KV_DELETED ? "DELETED\r\n"
                                                                                              : "NOT_FOUND\r\n");
        break;
    case MC_INCR:
    case MC_DECR:
        delta(cmd, env, out);
        break;
    case MC_TOUCH:
        reply(cmd, out, kv_touch(env->table, cmd->key, cmd->nkey, mc_realtime(cmd->exptime, env), env->now) == KV_TOUCHED
                            ? "TOUCHED\r\n"
                            : "NOT_FOUND\r\n");
        break;
    case MC_FLUSH_ALL:
        // A delay of 0 or less flushes now (memcached: "the same way we do
        // when no delay is given at all").
        kv_flush(env->table, cmd->has_delay && cmd->exptime > 0 ? mc_realtime(cmd->exptime, env) : env->now,
                 env->now);
        reply(cmd, out, "OK\r\n");
        break;
    case MC_VERSION:
        put_str(out, "VERSION ");
        put_str(out, env->version);
        put_str(out, "\r\n");
        break;
    case MC_STATS:
        stats(cmd, env, out);
        break;
    case MC_VERBOSITY:
        reply(cmd, out, "OK\r\n");
        break;
    case MC_MG:
    case MC_MS:
    case MC_MD:
    case MC_MA:
    case MC_MN:
    case MC_ME:
        mc_meta_execute(cmd, env, out);
        break;
    case MC_QUIT:
    case MC_SHUTDOWN:                   // answered by the parser
        break;
    }
}

size_t mc_serve(struct mc_conn *c, const char *buf, size_t len, const struct mc_env *env, struct mc_out *out)
{
    size_t off = 0;
    c->need = 0;
    c->in_data = false;
    while (off < len && !c->closing && !out->broken) {
        if (c->swallow) {
            size_t n = len - off < c->swallow ? len - off : (size_t)c->swallow;
            off += n;
            c->swallow -= n;
            continue;
        }
        struct mc_cmd cmd;
        size_t used, swallow;
        const char *reply;
        switch (mc_parse(buf + off, len - off, c->scanned, &cmd, &used, &swallow, &reply)) {
        case MC_MORE:
            if (used) {                 // a data block: its line is whole
                c->need = used;
                c->in_data = true;
            } else {                    // a line without its LF yet
                c->need = len - off + 1;
                c->scanned = len - off;
            }
            return off;
        case MC_CLOSE:
            c->closing = true;
            out->len = 0;
            return off;
        case MC_REPLY:
            put_str(out, reply);
            c->swallow = swallow;       // a refused ms's data block
            break;
        case MC_COMMAND:
            if (cmd.kind == MC_QUIT) {
                c->closing = true;
                return off + used;
            }
            mc_execute(&cmd, env, out);
            c->swallow = swallow;
            break;
        }
        c->scanned = 0;
        off += used;
    }
    return off;
}
