// SPDX-License-Identifier: MIT
// kvd's table (rules in kv_table.h). Every operation hashes the key, takes
// its shard's lock, and does all its work under it: lookups, the LRU move,
// eviction to make room, the copy of a new value. Nothing takes two shard
// locks at once, so there is no lock order to keep.
#include "kv_table.h"

#include <string.h>
#include "kv_sys.h"

#define MIN_BUCKETS 64u
#define MIN_SHARD_BYTES (2u << 20)
#define MAX_SHARDS 64u

struct kv_shard {
    kv_lock_t lock;
    // lock held for all of these
    struct kv_item **buckets;
    uint32_t nbuckets;                  // a power of two
    uint32_t count;
    struct kv_link lru;                 // the list's head: lru.next is the most recent
    uint64_t used, limit;
    uint64_t cas_seq;
    uint32_t flush_at;                  // items stored before it are absent from it on (0: none)
    struct kv_stats st;
    // set at creation
    int node;
} __attribute__((aligned(64)));

struct kv_table {
    uint32_t nshards, shard_bits;       // set at creation
    uint64_t mem;
    struct kv_shard *shards;
};

static struct kv_item *item_of(struct kv_link *l)
{
    return (struct kv_item *)l;         // the link is the item's first field
}

// FNV-1a, 32 bits: the shard from the top bits, the bucket from the low.
static uint32_t hash_key(const char *k, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)k[i]) * 16777619u;
    return h ^ (h >> 15);
}

uint32_t kv_default_shards(uint64_t mem)
{
    uint32_t s = MAX_SHARDS;
    while (s > 1 && mem / s < MIN_SHARD_BYTES)
        s /= 2;
    return s;
}

struct kv_table *kv_create(uint64_t mem, uint32_t shards)
{
    if (!shards || (shards & (shards - 1)))
        return NULL;
    int nodes = kv_nodes() > 0 ? kv_nodes() : 1;
    struct kv_table *t = kv_zalloc(sizeof *t, 0);
    if (!t)
        return NULL;
    t->nshards = shards;
    while ((1u << t->shard_bits) < shards)
        t->shard_bits++;
    t->mem = mem;
    t->shards = kv_zalloc(shards * sizeof *t->shards, 0);
    if (!t->shards) {
        kv_free(t);
        return NULL;
    }
    for (uint32_t s = 0; s < shards; s++) {
        struct kv_shard *sh = &t->shards[s];
        kv_lock_init(&sh->lock);
        sh->node = (int)(s % (uint32_t)nodes);
        sh->nbuckets = MIN_BUCKETS;
        sh->buckets = kv_zalloc(MIN_BUCKETS * sizeof *sh->buckets, sh->node);
        sh->lru.next = sh->lru.prev = &sh->lru;
        sh->limit = mem / shards;
        if (!sh->buckets) {
            kv_destroy(t);
            return NULL;
        }
    }
    return t;
}

void kv_destroy(struct kv_table *t)
{
    for (uint32_t s = 0; s < t->nshards; s++) {
        struct kv_shard *sh = &t->shards[s];
        if (!sh->buckets)
            continue;
        for (struct kv_link *l = sh->lru.next; l && l != &sh->lru;) {
            struct kv_link *next = l->next;
            kv_free(item_of(l));
            l = next;
        }
        kv_free(sh->buckets);
    }
    kv_free(t->shards);
    kv_free(t);
}

static struct kv_shard *shard_of(struct kv_table *t, uint32_t h)
{
    return &t->shards[t->shard_bits ? h >> (32 - t->shard_bits) : 0];
}

// ---- one shard, its lock held ------------------------------------------------------

static void lru_unlink(struct kv_item *it)
{
    it->lru.prev->next = it->lru.next;
    it->lru.next->prev = it->lru.prev;
}

static void lru_push(struct kv_shard *sh, struct kv_item *it)
{
    it->lru.next = sh->lru.next;
    it->lru.prev = &sh->lru;
    sh->lru.next->prev = &it->lru;
    sh->lru.next = &it->lru;
}

static struct kv_item **slot_of(struct kv_shard *sh, uint32_t h, const char *key, uint32_t nkey)
{
    struct kv_item **pp = &sh->buckets[h & (sh->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->hnext) {
        struct kv_item *it = *pp;
        if (it->hash == h && it->nkey == nkey && !memcmp(it->data, key, nkey))
            return pp;
    }
    return pp;
}

static void unlink_item(struct kv_shard *sh, struct kv_item **slot)
{
    struct kv_item *it = *slot;
    *slot = it->hnext;
    lru_unlink(it);
    sh->count--;
    sh->used -= it->charged;
    kv_free(it);
}

static bool dead(const struct kv_shard *sh, const struct kv_item *it, uint32_t now, bool *flushed)
{
    *flushed = sh->flush_at && now >= sh->flush_at && it->time < sh->flush_at;
    return *flushed || (it->exptime && now >= it->exptime);
}

// The live item of key, or NULL; a dead one found is freed (and counted
// when count_get: a get's miss by expiry or flush).
static struct kv_item **find(struct kv_shard *sh, uint32_t h, const char *key, uint32_t nkey, uint32_t now,
                             bool count_get)
{
    struct kv_item **slot = slot_of(sh, h, key, nkey);
    bool flushed;
    if (*slot && dead(sh, *slot, now, &flushed)) {
        if (count_get) {
            if (flushed)
                sh->st.get_flushed++;
            else
                sh->st.get_expired++;
        }
        unlink_item(sh, slot);
        return NULL;
    }
    return *slot ? slot : NULL;
}

static void grow(struct kv_shard *sh)
{
    uint32_t n = sh->nbuckets * 2;
    struct kv_item **b = kv_zalloc(n * sizeof *b, sh->node);
    if (!b)
        return;                         // longer chains, still correct
    for (uint32_t i = 0; i < sh->nbuckets; i++) {
        for (struct kv_item *it = sh->buckets[i], *next; it; it = next) {
            next = it->hnext;
            struct kv_item **dst = &b[it->hash & (n - 1)];
            it->hnext = *dst;
            *dst = it;
        }
    }
    kv_free(sh->buckets);
    sh->buckets = b;
    sh->nbuckets = n;
}

// Evicts from the LRU's tail until need more bytes fit; false when they
// cannot (the budget is smaller than need). keep, the item a new one will
// replace, is never evicted, and its bytes count as free: the shard is over
// its budget by at most that item until the replacement is linked.
static bool make_room(struct kv_shard *sh, uint64_t need, const struct kv_item *keep, uint32_t now)
{
    if (need > sh->limit)
        return false;
    uint64_t freed = keep ? keep->charged : 0;
    while (sh->used - freed + need > sh->limit) {
        struct kv_link *l = sh->lru.prev;
        if (l != &sh->lru && item_of(l) == keep)
            l = l->prev;
        if (l == &sh->lru)
            return false;
        struct kv_item *victim = item_of(l);
        bool flushed;
        if (dead(sh, victim, now, &flushed))
            sh->st.reclaimed++;
        else
            sh->st.evictions++;
        unlink_item(sh, slot_of(sh, victim->hash, victim->data, victim->nkey));
    }
    return true;
}

// A new item of key and room for nbytes of value, charged to the shard
// (making room first); NULL when it cannot be.
static struct kv_item *new_item(struct kv_shard *sh, uint32_t h, const char *key, uint32_t nkey, uint32_t nbytes,
                                const struct kv_item *keep, uint32_t now)
{
    size_t size = sizeof(struct kv_item) + nkey + nbytes;
    if (!make_room(sh, size, keep, now))
        return NULL;
    struct kv_item *it = kv_alloc(size, sh->node);
    if (!it)
        return NULL;
    it->charged = (uint32_t)kv_usable(it);
    if (it->charged > size && !make_room(sh, it->charged, keep, now)) {
        kv_free(it);
        return NULL;
    }
    it->hash = h;
    it->nkey = (uint8_t)nkey;
    it->key_binary = false;
    it->fetched = it->win_sent = it->stale = false;
    it->nbytes = nbytes;
    memcpy(it->data, key, nkey);
    return it;
}

// Puts it where slot is (replacing what is there, if anything).
static void link_item(struct kv_shard *sh, struct kv_item **slot, struct kv_item *it, uint32_t now, uint32_t t_nshards,
                      uint32_t shard_index)
{
    if (*slot) {
        it->hnext = (*slot)->hnext;
        struct kv_item *old = *slot;
        lru_unlink(old);
        sh->count--;
        sh->used -= old->charged;
        kv_free(old);
    } else {
        it->hnext = NULL;
    }
    *slot = it;
    lru_push(sh, it);
    sh->count++;
    sh->used += it->charged;
    sh->st.total_items++;
    it->time = it->atime = now;
    it->cas = ++sh->cas_seq * t_nshards + shard_index;
    if (sh->count > sh->nbuckets + sh->nbuckets / 2)
        grow(sh);
}

// ---- operations ---------------------------------------------------------------------

// it is read now (memcached's bump): the most recently used, fetched.
static void bump(struct kv_shard *sh, struct kv_item *it, uint32_t now)
{
    lru_unlink(it);
    lru_push(sh, it);
    it->fetched = true;
    it->atime = now;
}

bool kv_get_meta(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now, bool touch, uint32_t exptime,
                 bool bumps, bool *win, void (*emit)(void *ctx, const struct kv_item *it), void *ctx)
{
    uint32_t h = hash_key(key, nkey);
    struct kv_shard *sh = shard_of(t, h);
    kv_lock(&sh->lock);
    if (touch)
        sh->st.cmd_touch++;
    struct kv_item **slot = find(sh, h, key, nkey, now, true);
    if (slot) {
        struct kv_item *it = *slot;
        if (touch) {
            it->exptime = exptime;
            sh->st.touch_hits++;
        } else {
            sh->st.get_hits++;
        }
        emit(ctx, it);
        if (win && *win)
            it->win_sent = true;
        if (bumps)
            bump(sh, it, now);
    } else if (touch) {
        sh->st.touch_misses++;
    } else {
        sh->st.get_misses++;
    }
    kv_unlock(&sh->lock);
    return slot != NULL;
}

bool kv_get(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now,
            void (*emit)(void *ctx, const struct kv_item *it), void *ctx)
{
    return kv_get_meta(t, key, nkey, now, false, 0, true, NULL, emit, ctx);
}

bool kv_gat(struct kv_table *t, const char *key, uint32_t nkey, uint32_t exptime, uint32_t now,
            void (*emit)(void *ctx, const struct kv_item *it), void *ctx)
{
    return kv_get_meta(t, key, nkey, now, true, exptime, true, NULL, emit, ctx);
}

bool kv_peek(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now,
             void (*emit)(void *ctx, const struct kv_item *it), void *ctx)
{
    uint32_t h = hash_key(key, nkey);
    struct kv_shard *sh = shard_of(t, h);
    kv_lock(&sh->lock);
    struct kv_item **slot = find(sh, h, key, nkey, now, true);
    if (slot)
        emit(ctx, *slot);
    kv_unlock(&sh->lock);
    return slot != NULL;
}

enum kv_result kv_store(struct kv_table *t, enum kv_mode mode, const char *key, uint32_t nkey, uint32_t flags,
                        uint32_t exptime, const char *value, uint32_t nbytes, uint64_t cas, uint32_t now)
{
    struct kv_meta m = { .has_cas = mode == KV_CAS, .cas = cas };
    return kv_store_meta(t, mode, key, nkey, flags, exptime, value, nbytes, now, &m);
}

enum kv_result kv_store_meta(struct kv_table *t, enum kv_mode mode, const char *key, uint32_t nkey, uint32_t flags,
                             uint32_t exptime, const char *value, uint32_t nbytes, uint32_t now, struct kv_meta *m)
{
    uint64_t cas = m->cas;
    m->cas_out = 0;
    uint32_t h = hash_key(key, nkey);
    struct kv_shard *sh = shard_of(t, h);
    uint32_t index = (uint32_t)(sh - t->shards);
    enum kv_result r = KV_STORED;
    kv_lock(&sh->lock);
    sh->st.cmd_set++;
    struct kv_item **slot = find(sh, h, key, nkey, now, false);
    struct kv_item *old = slot ? *slot : NULL;
    if ((mode == KV_ADD && old) || ((mode == KV_REPLACE || mode == KV_APPEND || mode == KV_PREPEND) && !old)) {
        r = KV_NOT_STORED;
        if (old && mode == KV_ADD) {    // memcached's add bumps the present item
            lru_unlink(old);
            lru_push(sh, old);
        }
        goto out;
    }
    bool stale = false;
    if (mode == KV_CAS) {
        if (!old) {
            sh->st.cas_misses++;
            r = KV_NOT_FOUND;
            goto out;
        }
        stale = m->invalidate && cas < old->cas;
        if (old->cas != cas && !stale) {
            sh->st.cas_badval++;
            r = KV_EXISTS;
            goto out;
        }
        sh->st.cas_hits++;
    }
    if ((mode == KV_APPEND || mode == KV_PREPEND) && m->has_cas && old->cas != cas) {
        r = KV_EXISTS;
        goto out;
    }
    uint32_t total = nbytes;
    if (mode == KV_APPEND || mode == KV_PREPEND) {
        if ((uint64_t)old->nbytes + nbytes > UINT32_MAX - 256) {
            r = KV_NO_MEMORY;
            goto out;
        }
        total += old->nbytes;
        flags = old->flags;
        exptime = old->exptime;
    }
    struct kv_item *it = new_item(sh, h, key, nkey, total, old, now);
    if (!it) {
        sh->st.store_no_memory++;
        r = KV_NO_MEMORY;
        if (mode == KV_SET && old)      // never leave a stale value behind a failed set
            unlink_item(sh, slot_of(sh, h, key, nkey));
        goto out;
    }
    it->flags = flags;
    it->exptime = exptime;
    it->key_binary = m->key_binary && mode != KV_APPEND && mode != KV_PREPEND;   // as memcached's new item
    it->stale = stale;
    if (stale) {                        // memcached keeps the TTL and a W already sent
        it->exptime = old->exptime;
        it->win_sent = old->win_sent;
    }
    char *v = it->data + nkey;
    if (mode == KV_APPEND) {
        memcpy(v, kv_item_value(old), old->nbytes);
        memcpy(v + old->nbytes, value, nbytes);
    } else if (mode == KV_PREPEND) {
        memcpy(v, value, nbytes);
        memcpy(v + nbytes, kv_item_value(old), old->nbytes);
    } else {
        memcpy(v, value, nbytes);
    }
    // Eviction may have freed the item whose chain link slot pointed
    // into: find it again.
    link_item(sh, slot_of(sh, h, key, nkey), it, now, t->nshards, index);
    m->cas_out = it->cas;
out:
    kv_unlock(&sh->lock);
    return r;
}

enum kv_result kv_delete(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now)
{
    struct kv_meta m = { 0 };
    return kv_delete_meta(t, key, nkey, now, &m);
}

enum kv_result kv_delete_meta(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now, struct kv_meta *m)
{
    uint32_t h = hash_key(key, nkey);
    struct kv_shard *sh = shard_of(t, h);
    enum kv_result r = KV_DELETED;
    kv_lock(&sh->lock);
    struct kv_item **slot = find(sh, h, key, nkey, now, false);
    if (slot && !(m->has_cas && (*slot)->cas != m->cas)) {
        struct kv_item *it = *slot;
        if (m->invalidate) {            // kept, stale, to be recached: W again
            it->stale = true;
            it->win_sent = false;
            it->cas = ++sh->cas_seq * t->nshards + (uint32_t)(sh - t->shards);
            if (m->set_exptime)
                it->exptime = m->exptime;
        } else {
            unlink_item(sh, slot);
        }
        sh->st.delete_hits++;
    } else {
        sh->st.delete_misses++;
        r = slot ? KV_EXISTS : KV_NOT_FOUND;
    }
    kv_unlock(&sh->lock);
    return r;
}

enum kv_result kv_touch(struct kv_table *t, const char *key, uint32_t nkey, uint32_t exptime, uint32_t now)
{
    uint32_t h = hash_key(key, nkey);
    struct kv_shard *sh = shard_of(t, h);
    kv_lock(&sh->lock);
    sh->st.cmd_touch++;
    struct kv_item **slot = find(sh, h, key, nkey, now, false);
    if (slot) {
        (*slot)->exptime = exptime;
        bump(sh, *slot, now);           // memcached's touch counts as a read
        sh->st.touch_hits++;
    } else {
        sh->st.touch_misses++;
    }
    kv_unlock(&sh->lock);
    return slot ? KV_TOUCHED : KV_NOT_FOUND;
}

// The value as memcached's add_delta reads it: at most 20 digits with
// blanks around them, below 2^64.
static bool value_number(const struct kv_item *it, uint64_t *out)
{
    const char *v = kv_item_value(it);
    uint32_t n = it->nbytes, i = 0;
    while (i < n && (v[i] == ' ' || v[i] == '\t'))
        i++;
    if (i < n && v[i] == '+')
        i++;
    uint32_t d = i;
    uint64_t x = 0;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
        uint64_t digit = (uint64_t)(v[i] - '0');
        if (x > (UINT64_MAX - digit) / 10)
            return false;
        x = x * 10 + digit;
    }
    if (i == d || (i < n && v[i] != ' ' && v[i] != '\t' && v[i] != '\r' && v[i] != '\n'))
        return false;
    *out = x;
    return true;
}

uint32_t kv_format_u64(uint64_t v, char *out)
{
    char d[24];
    int i = (int)sizeof d;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    uint32_t n = (uint32_t)(sizeof d - (size_t)i);
    memcpy(out, d + i, n);
    out[n] = 0;
    return n;
}

enum kv_result kv_delta(struct kv_table *t, const char *key, uint32_t nkey, bool incr, uint64_t delta, uint32_t now,
                        char *out)
{
    struct kv_meta m = { 0 };
    return kv_delta_meta(t, key, nkey, incr, delta, now, out, &m);
}

enum kv_result kv_delta_meta(struct kv_table *t, const char *key, uint32_t nkey, bool incr, uint64_t delta,
                             uint32_t now, char *out, struct kv_meta *m)
{
    m->cas_out = 0;
    uint32_t h = hash_key(key, nkey);
    struct kv_shard *sh = shard_of(t, h);
    uint32_t index = (uint32_t)(sh - t->shards);
    enum kv_result r = KV_OK;
    kv_lock(&sh->lock);
    struct kv_item **slot = find(sh, h, key, nkey, now, false);
    uint64_t v;
    if (!slot) {
        if (incr)
            sh->st.incr_misses++;
        else
            sh->st.decr_misses++;
        r = KV_NOT_FOUND;
        goto out;
    }
    struct kv_item *it = *slot;
    if (m->has_cas && it->cas != m->cas) {
        r = KV_EXISTS;
        goto out;
    }
    if (it->nbytes == 0 || !value_number(it, &v)) {
        r = KV_NON_NUMERIC;
        goto out;
    }
    m->exptime_out = it->exptime;
    if (incr) {
        v += delta;                     // wraps, as in memcached
        sh->st.incr_hits++;
    } else {
        v = delta > v ? 0 : v - delta;
        sh->st.decr_hits++;
    }
    uint32_t n = kv_format_u64(v, out);
    if (n <= it->nbytes) {              // in place, padded with spaces (memcached's way)
        char *val = it->data + it->nkey;
        memcpy(val, out, n);
        memset(val + n, ' ', it->nbytes - n);
        it->cas = ++sh->cas_seq * t->nshards + index;
        if (m->set_exptime)
            it->exptime = m->exptime;
        m->cas_out = it->cas;
        lru_unlink(it);
        lru_push(sh, it);
        goto out;
    }
    struct kv_item *nit = new_item(sh, h, key, nkey, n, it, now);
    if (!nit) {
        sh->st.store_no_memory++;
        r = KV_NO_MEMORY;
        goto out;
    }
    nit->flags = it->flags;             // make_room never evicts it
    nit->exptime = m->set_exptime ? m->exptime : it->exptime;
    memcpy(nit->data + nkey, out, n);
    link_item(sh, slot_of(sh, h, key, nkey), nit, now, t->nshards, index);
    m->cas_out = nit->cas;
out:
    kv_unlock(&sh->lock);
    return r;
}

void kv_flush(struct kv_table *t, uint32_t at, uint32_t now)
{
    for (uint32_t s = 0; s < t->nshards; s++) {
        struct kv_shard *sh = &t->shards[s];
        kv_lock(&sh->lock);
        sh->st.cmd_flush += s == 0;
        if (at <= now) {
            while (sh->lru.next != &sh->lru) {
                struct kv_item *it = item_of(sh->lru.next);
                unlink_item(sh, slot_of(sh, it->hash, it->data, it->nkey));
            }
            sh->flush_at = 0;
        } else {
            sh->flush_at = at;
        }
        kv_unlock(&sh->lock);
    }
}

void kv_stats(struct kv_table *t, struct kv_stats *s)
{
    memset(s, 0, sizeof *s);
    for (uint32_t i = 0; i < t->nshards; i++) {
        struct kv_shard *sh = &t->shards[i];
        kv_lock(&sh->lock);
        const struct kv_stats *x = &sh->st;
        s->curr_items += sh->count;
        s->bytes += sh->used;
        s->total_items += x->total_items;
        s->get_hits += x->get_hits, s->get_misses += x->get_misses;
        s->get_expired += x->get_expired, s->get_flushed += x->get_flushed;
        s->cmd_set += x->cmd_set, s->cmd_touch += x->cmd_touch, s->cmd_flush += x->cmd_flush;
        s->delete_hits += x->delete_hits, s->delete_misses += x->delete_misses;
        s->incr_hits += x->incr_hits, s->incr_misses += x->incr_misses;
        s->decr_hits += x->decr_hits, s->decr_misses += x->decr_misses;
        s->cas_hits += x->cas_hits, s->cas_misses += x->cas_misses, s->cas_badval += x->cas_badval;
        s->touch_hits += x->touch_hits, s->touch_misses += x->touch_misses;
        s->evictions += x->evictions, s->reclaimed += x->reclaimed, s->store_no_memory += x->store_no_memory;
        kv_unlock(&sh->lock);
    }
    s->limit_maxbytes = t->mem;
    s->shards = t->nshards;
}

void kv_stats_reset(struct kv_table *t)
{
    for (uint32_t i = 0; i < t->nshards; i++) {
        struct kv_shard *sh = &t->shards[i];
        kv_lock(&sh->lock);
        uint64_t keep = sh->st.total_items;
        memset(&sh->st, 0, sizeof sh->st);
        sh->st.total_items = keep;
        kv_unlock(&sh->lock);
    }
}
