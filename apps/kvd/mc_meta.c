// SPDX-License-Identifier: MIT
// memcached 1.6's meta commands on kvd's table, answered as its
// proto_text.c answers them (the parser, mc_parse.c, has checked the
// words and the flags, and answered their errors):
//   mg <key> <flags>*       VA <size> <flags>* and the value (v), HD <flags>*
//                           (no v), EN on a miss (none with q); flags
//                           k f s t c O h l, T (a new TTL, applied where it
//                           stands among them: a t before it shows the old),
//                           N and R (W or Z after the flags), u
//   ms <key> <datalen> <flags>*   HD (none with q), NS, EX, NF; F T C, mode
//                           M E/A/P/R/S (a cas with S or R is a cas store),
//                           back k O c (the new cas, 0 when not stored)
//   md <key> <flags>*       HD (none with q), NF, EX (C differs); I (stale,
//                           T its TTL), back k O
//   ma <key> <flags>*       HD or VA <len> and the number (v), none on a
//                           success with q; NF, NS, EX; D (delta, 1), M I/+
//                           D/-, N (create on a miss with that TTL) and J
//                           (its value, 0), T, back t c k O
//   mn                      MN
//   me <key> [b]            ME <key> exp= la= cas= fetch= cls= size=, EN on a
//                           miss; the item left unread (me below says what
//                           each holds here)
// Every command echoes its O (opaque) and k words in the order given; P and
// L are ignored. mg's h (read before: 0 or 1) and l (seconds since stored
// or last read) show the item as it was before this mg, which then reads
// it unless u is given; get, gat and touch read it too, a new value
// (append and prepend too) is unread. b: the key is sent in base64 (the
// parser decodes it), k answers it so, followed by a b word; an item ms
// stored with b (but not appended or prepended to) is answered so by mg's
// k even when asked for by its bytes, as memcached marks it. mg's N makes
// a stub of no value on a miss and R wins when the TTL left is under its
// token: either answers W (recache it) once per item; later mgs see Z.
// I: md marks the item stale (a new cas, T's TTL) instead of deleting it,
// ms with C stores a value whose cas is older, marked stale (keeping the
// TTL and a W sent); mg answers a stale item X, and W to the first (md
// with I again gives W again).
#include "mc_exec.h"

#include <string.h>
#include "kv_sys.h"

static void put_str(struct mc_out *o, const char *s)
{
    mc_out_put(o, s, strlen(s));
}

static void put_u64(struct mc_out *o, uint64_t v)
{
    char d[24];
    mc_out_put(o, d, kv_format_u64(v, d));
}

static bool has(const struct mc_cmd *cmd, char c)
{
    return cmd->mseen & MC_FLAG(c);
}

// " t<seconds left>", -1 for never; as memcached's, unsigned arithmetic.
static void put_ttl(struct mc_out *o, uint32_t exptime, uint32_t now)
{
    put_str(o, " t");
    if (!exptime)
        put_str(o, "-1");
    else
        put_u64(o, (uint32_t)(exptime - now));
}

// key in base64, padded.
static void put_base64(struct mc_out *o, const char *key, uint32_t nkey)
{
    static const char digit[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char enc[(MC_KEY_MAX + 2) / 3 * 4];
    uint32_t n = 0;
    for (uint32_t i = 0; i < nkey; i += 3) {
        const unsigned char *b = (const unsigned char *)key + i;
        uint32_t left = nkey - i, v = (uint32_t)b[0] << 16 | (left > 1 ? b[1] << 8 : 0) | (left > 2 ? b[2] : 0);
        enc[n++] = digit[v >> 18];
        enc[n++] = digit[v >> 12 & 63];
        enc[n++] = left > 1 ? digit[v >> 6 & 63] : '=';
        enc[n++] = left > 2 ? digit[v & 63] : '=';
    }
    mc_out_put(o, enc, n);
}

// " k<key>"; a binary key (b) in base64, and then " b".
static void put_key(struct mc_out *o, const char *key, uint32_t nkey, bool binary)
{
    put_str(o, " k");
    if (!binary) {
        mc_out_put(o, key, nkey);
        return;
    }
    put_base64(o, key, nkey);
    put_str(o, " b");
}

// The O and k words back, in the order given: what every answer carries;
// and, for ms (cas not null), its c word with the CAS value stored.
static void put_echo_cas(const struct mc_cmd *cmd, struct mc_out *o, const uint64_t *cas)
{
    const char *p = cmd->mflags, *end = p + cmd->mflags_len, *w;
    uint32_t n;
    while (mc_next_key(&p, end, &w, &n)) {
        if (w[0] == 'O') {
            put_str(o, " ");
            mc_out_put(o, w, n);
        } else if (w[0] == 'k') {
            put_key(o, cmd->key, cmd->nkey, has(cmd, 'b'));
        } else if (w[0] == 'c' && cas) {
            put_str(o, " c");
            put_u64(o, *cas);
        }
    }
}

static void put_echo(const struct mc_cmd *cmd, struct mc_out *o)
{
    put_echo_cas(cmd, o, 0);
}

// ---- mg -------------------------------------------------------------------------------

struct mg_ctx {
    const struct mc_cmd *cmd;
    const struct mc_env *env;
    struct mc_out *out;
    uint32_t new_exptime;               // T's
    bool created;                       // the item is N's stub, made for this mg
    bool win;                           // set by mg_emit: W sent
};

// Called with the item's shard locked (kv_get's emit): the answer whole.
static void mg_emit(void *ctx, const struct kv_item *it)
{
    struct mg_ctx *g = ctx;
    const struct mc_cmd *cmd = g->cmd;
    struct mc_out *o = g->out;
    bool value = has(cmd, 'v');
    if (value) {
        put_str(o, "VA ");
        put_u64(o, it->nbytes);
    } else {
        put_str(o, "HD");
    }
    uint32_t exptime = g->created ? 0 : it->exptime, now = g->env->now;
    bool won = false;
    const char *p = cmd->mflags, *end = p + cmd->mflags_len, *w;
    uint32_t n;
    while (mc_next_key(&p, end, &w, &n)) {
        switch (w[0]) {
        case 'T': exptime = g->new_exptime; break;
        case 'N':
            if (g->created) {
                exptime = mc_realtime(cmd->vivify, g->env);
                won = true;
            }
            break;
        case 'R':                       // its TTL left under R's: the first to see it recaches
            if (!g->created && !it->win_sent && exptime && exptime < mc_realtime(cmd->recache, g->env))
                won = true;
            break;
        case 's': put_str(o, " s"); put_u64(o, it->nbytes); break;
        case 't': put_ttl(o, exptime, g->env->now); break;
        case 'c': put_str(o, " c"); put_u64(o, it->cas); break;
        case 'f': put_str(o, " f"); put_u64(o, it->flags); break;
        case 'O': put_str(o, " "); mc_out_put(o, w, n); break;
        case 'k': put_key(o, cmd->key, cmd->nkey, it->key_binary); break;
        case 'h': put_str(o, it->fetched ? " h1" : " h0"); break;
        case 'l': put_str(o, " l"); put_u64(o, now >= it->atime ? now - it->atime : 0); break;
        default: break;
        }
    }
    if (it->win_sent)
        put_str(o, " Z");
    if (it->stale) {                    // the first mg to see it stale recaches it
        put_str(o, " X");
        won |= !it->win_sent;
    }
    if (won) {
        put_str(o, " W");
        g->win = true;
    }
    put_str(o, "\r\n");
    if (value) {
        mc_out_put(o, kv_item_value(it), it->nbytes);
        put_str(o, "\r\n");
    }
}

static void mg(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    struct mg_ctx g = { cmd, env, out, has(cmd, 'T') ? mc_realtime(cmd->exptime, env) : 0, false, false };
    bool hit = kv_get_meta(env->table, cmd->key, cmd->nkey, env->now, has(cmd, 'T'), g.new_exptime, !has(cmd, 'u'),
                           &g.win, mg_emit, &g);
    if (!hit && has(cmd, 'N')) {
        // N: a stub of no value made on a miss, its exptime N's or T's,
        // whichever stands later, and this mg told W (it recaches).
        uint32_t exptime = 0;
        const char *p = cmd->mflags, *end = p + cmd->mflags_len, *w;
        uint32_t n;
        while (mc_next_key(&p, end, &w, &n))
            if (w[0] == 'T' || w[0] == 'N')
                exptime = w[0] == 'T' ? g.new_exptime : mc_realtime(cmd->vivify, env);
        struct kv_meta m = { 0 };
        if (kv_store_meta(env->table, KV_ADD, cmd->key, cmd->nkey, 0, exptime, "", 0, env->now, &m) == KV_STORED) {
            g.created = true;
            hit = kv_get_meta(env->table, cmd->key, cmd->nkey, env->now, false, 0, !has(cmd, 'u'), &g.win, mg_emit,
                              &g);
        }
    }
    if (!hit && !cmd->noreply) {
        put_str(out, "EN");
        put_echo(cmd, out);
        put_str(out, "\r\n");
    }
}

// ---- ms, md ------------------------------------------------------------------------------

static void ms(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    if (cmd->too_large) {               // memcached drops the key's old value whatever the mode
        kv_delete(env->table, cmd->key, cmd->nkey, env->now);
        put_str(out, "SERVER_ERROR object too large for cache\r\n");
        return;
    }
    enum kv_mode mode = KV_SET;
    switch (cmd->mode) {
    case 'E': mode = KV_ADD; break;
    case 'A': mode = KV_APPEND; break;
    case 'P': mode = KV_PREPEND; break;
    case 'R': mode = KV_REPLACE; break;
    default: break;
    }
    struct kv_meta m = { .has_cas = has(cmd, 'C'), .cas = cmd->cas, .key_binary = has(cmd, 'b'),
                         .invalidate = has(cmd, 'I') };
    if (m.has_cas && (mode == KV_SET || mode == KV_REPLACE))
        mode = KV_CAS;
    const char *code;
    switch (kv_store_meta(env->table, mode, cmd->key, cmd->nkey, cmd->flags, mc_realtime(cmd->exptime, env),
                          cmd->data, cmd->bytes, env->now, &m)) {
    case KV_STORED: code = "HD"; break;
    case KV_NOT_STORED: code = "NS"; break;
    case KV_EXISTS: code = "EX"; break;
    case KV_NOT_FOUND: code = "NF"; break;
    default: put_str(out, "SERVER_ERROR out of memory storing object\r\n"); return;
    }
    if (code[0] == 'H' && cmd->noreply)
        return;
    put_str(out, code);
    put_echo_cas(cmd, out, &m.cas_out);
    put_str(out, "\r\n");
}

static void md(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    struct kv_meta m = { .has_cas = has(cmd, 'C'), .cas = cmd->cas, .invalidate = has(cmd, 'I'),
                         .set_exptime = has(cmd, 'I') && has(cmd, 'T') };
    if (m.set_exptime)
        m.exptime = mc_realtime(cmd->exptime, env);
    enum kv_result r = kv_delete_meta(env->table, cmd->key, cmd->nkey, env->now, &m);
    if (r == KV_DELETED && cmd->noreply)
        return;
    put_str(out, r == KV_DELETED ? "HD" : r == KV_EXISTS ? "EX" : "NF");
    put_echo(cmd, out);
    put_str(out, "\r\n");
}

// ---- ma ----------------------------------------------------------------------------------

static void ma(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    bool incr = cmd->mode != 'D' && cmd->mode != '-';
    // The exptime the item ends with: T's, or N's on an item it created,
    // whichever stands later (memcached applies them in order).
    struct kv_meta m = { .has_cas = has(cmd, 'C') && cmd->cas, .cas = cmd->cas };
    if (has(cmd, 'T')) {
        m.set_exptime = true;
        m.exptime = mc_realtime(cmd->exptime, env);
    }
    char num[24];
    bool created = false;
    enum kv_result r = kv_delta_meta(env->table, cmd->key, cmd->nkey, incr, cmd->delta, env->now, num, &m);
    if (r == KV_NOT_FOUND && has(cmd, 'N')) {
        uint32_t exptime = 0;
        const char *p = cmd->mflags, *end = p + cmd->mflags_len, *w;
        uint32_t n;
        while (mc_next_key(&p, end, &w, &n))
            if (w[0] == 'T' || w[0] == 'N')
                exptime = mc_realtime(w[0] == 'T' ? cmd->exptime : cmd->vivify, env);
        uint32_t len = kv_format_u64(cmd->initial, num);
        struct kv_meta add = { 0 };
        r = kv_store_meta(env->table, KV_ADD, cmd->key, cmd->nkey, 0, exptime, num, len, env->now, &add);
        if (r == KV_NO_MEMORY) {
            put_str(out, "SERVER_ERROR Out of memory allocating new item\r\n");
            return;
        }
        created = r == KV_STORED;
        m.cas_out = add.cas_out;
        m.exptime_out = 0;
    }
    const char *code = NULL;
    switch (r) {
    case KV_OK:
        if (cmd->noreply)
            return;
        break;
    case KV_STORED: break;              // created by N (answered even under q, as in memcached)
    case KV_NON_NUMERIC: put_str(out, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"); return;
    case KV_NO_MEMORY: put_str(out, "SERVER_ERROR out of memory\r\n"); return;
    case KV_NOT_FOUND: code = "NF"; break;
    case KV_EXISTS: code = "EX"; break;
    default: code = "NS"; break;        // N's item could not be added
    }
    if (code) {
        put_str(out, code);
        put_echo(cmd, out);
        put_str(out, "\r\n");
        return;
    }
    const char *p = cmd->mflags, *end = p + cmd->mflags_len, *w;
    uint32_t n;
    while (mc_next_key(&p, end, &w, &n)) {
        if (w[0] == 'O' && n > MC_OPAQUE_MAX) {    // looked at after the delta, as in memcached
            put_str(out, "CLIENT_ERROR opaque token too long\r\n");
            return;
        }
    }
    size_t len = strlen(num);
    if (has(cmd, 'v')) {
        put_str(out, "VA ");
        put_u64(out, len);
    } else {
        put_str(out, "HD");
    }
    uint32_t exptime = m.exptime_out;
    p = cmd->mflags;
    while (mc_next_key(&p, end, &w, &n)) {
        switch (w[0]) {
        case 'c': put_str(out, " c"); put_u64(out, m.cas_out); break;
        case 't': put_ttl(out, exptime, env->now); break;
        case 'T': exptime = m.exptime; break;
        case 'N': if (created) exptime = mc_realtime(cmd->vivify, env); break;
        case 'O': put_str(out, " "); mc_out_put(out, w, n); break;
        case 'k': put_key(out, cmd->key, cmd->nkey, has(cmd, 'b')); break;
        default: break;
        }
    }
    put_str(out, "\r\n");
    if (has(cmd, 'v')) {
        mc_out_put(out, num, len);
        put_str(out, "\r\n");
    }
}

// ---- me ----------------------------------------------------------------------------------

// Called with the item's shard locked (kv_peek's emit). memcached 1.6's
// words in its order; where kvd keeps something else, the nearest truth:
//   exp    seconds left, -1 for never: what protocol.txt's "expiration
//          time" and mg's t say; 1.6.18 prints it negated (now - exptime),
//          a bug memcached fixed in 1.6.24
//   la     seconds since stored or last read, as mg's l
//   cls    1: kvd takes every item from one allocator, so all are in one
//          class, the one stats slabs lists; memcached numbers its classes
//          from 1 (its 0 holds no items)
//   size   the bytes the item is charged against mem=, its share of stats'
//          bytes, as memcached's size (ITEM_ntotal) is there
// The key is the item's own, in base64 when ms stored it with b.
struct me_ctx {
    const struct mc_env *env;
    struct mc_out *out;
};

static void me_emit(void *ctx, const struct kv_item *it)
{
    const struct mc_env *env = ((struct me_ctx *)ctx)->env;
    struct mc_out *o = ((struct me_ctx *)ctx)->out;
    put_str(o, "ME ");
    if (it->key_binary)
        put_base64(o, it->data, it->nkey);
    else
        mc_out_put(o, it->data, it->nkey);
    put_str(o, " exp=");
    if (it->exptime)
        put_u64(o, it->exptime - env->now);     // alive: exptime > now
    else
        put_str(o, "-1");
    put_str(o, " la=");
    put_u64(o, env->now >= it->atime ? env->now - it->atime : 0);
    put_str(o, " cas=");
    put_u64(o, it->cas);
    put_str(o, it->fetched ? " fetch=yes" : " fetch=no");
    put_str(o, " cls=1 size=");
    put_u64(o, it->charged);
    put_str(o, "\r\n");
}

// memcached answers a miss EN, q or not (me takes no flags but b).
static void me(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    struct me_ctx c = { env, out };
    if (!kv_peek(env->table, cmd->key, cmd->nkey, env->now, me_emit, &c))
        put_str(out, "EN\r\n");
}

void mc_meta_execute(const struct mc_cmd *cmd, const struct mc_env *env, struct mc_out *out)
{
    switch (cmd->kind) {
    case MC_MG: mg(cmd, env, out); break;
    case MC_MS: ms(cmd, env, out); break;
    case MC_MD: md(cmd, env, out); break;
    case MC_MA: ma(cmd, env, out); break;
    case MC_MN: put_str(out, "MN\r\n"); break;
    case MC_ME: me(cmd, env, out); break;
    default: break;
    }
}
