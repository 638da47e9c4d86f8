// SPDX-License-Identifier: MIT
#include "mc_prefix.h"

#include <string.h>
#include "kv_sys.h"
#include "kv_table.h"
#include "mc_exec.h"

#define BUCKETS 256u

struct prefix {
    struct prefix *hnext;               // the bucket's chain
    struct prefix *next;                // first seen order
    uint64_t gets, hits, sets, deletes;
    uint32_t len;
    char name[];
};

struct mc_prefixes {
    bool on;                            // atomic, relaxed: a switch, nothing published with it
    kv_lock_t lock;
    // lock held for these
    struct prefix *buckets[BUCKETS];
    struct prefix *first, **last;
    uint32_t count;
};

struct mc_prefixes *mc_prefixes_create(void)
{
    struct mc_prefixes *p = kv_zalloc(sizeof *p, 0);
    kv_lock_init(&p->lock);
    p->last = &p->first;
    return p;
}

void mc_prefixes_clear(struct mc_prefixes *p)
{
    kv_lock(&p->lock);
    for (struct prefix *x = p->first, *n; x; x = n) {
        n = x->next;
        kv_free(x);
    }
    memset(p->buckets, 0, sizeof p->buckets);
    p->first = NULL;
    p->last = &p->first;
    p->count = 0;
    kv_unlock(&p->lock);
}

void mc_prefixes_destroy(struct mc_prefixes *p)
{
    mc_prefixes_clear(p);
    kv_free(p);
}

void mc_prefixes_enable(struct mc_prefixes *p, bool on)
{
    __atomic_store_n(&p->on, on, __ATOMIC_RELAXED);    // relaxed: only the switch itself
}

static uint32_t hash(const char *s, uint32_t n)
{
    uint32_t h = 2166136261u;           // FNV-1a
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

// The prefix of key, found or made; lock held. NULL: no ':' in the key,
// or no room for a new prefix.
static struct prefix *find(struct mc_prefixes *p, const char *key, uint32_t nkey)
{
    uint32_t len = 0;
    while (len < nkey && key[len] != ':')
        len++;
    if (len == nkey)
        return NULL;
    struct prefix **b = &p->buckets[hash(key, len) % BUCKETS];
    for (struct prefix *x = *b; x; x = x->hnext)
        if (x->len == len && !memcmp(x->name, key, len))
            return x;
    if (p->count == MC_PREFIX_MAX)
        return NULL;
    struct prefix *x = kv_zalloc(sizeof *x + len, 0);
    memcpy(x->name, key, len);
    x->len = len;
    x->hnext = *b;
    *b = x;
    *p->last = x;
    p->last = &x->next;
    p->count++;
    return x;
}

static void count(struct mc_prefixes *p, const char *key, uint32_t nkey, int what, bool hit)
{
    if (!p || !__atomic_load_n(&p->on, __ATOMIC_RELAXED))   // relaxed: mc_prefixes_enable's switch
        return;
    kv_lock(&p->lock);
    struct prefix *x = find(p, key, nkey);
    if (x) {
        if (what == 0)
            x->gets++, x->hits += hit;
        else if (what == 1)
            x->sets++;
        else
            x->deletes++;
    }
    kv_unlock(&p->lock);
}

void mc_prefix_get(struct mc_prefixes *p, const char *key, uint32_t nkey, bool hit)
{
    count(p, key, nkey, 0, hit);
}

void mc_prefix_set(struct mc_prefixes *p, const char *key, uint32_t nkey)
{
    count(p, key, nkey, 1, false);
}

void mc_prefix_delete(struct mc_prefixes *p, const char *key, uint32_t nkey)
{
    count(p, key, nkey, 2, false);
}

static void put_u64(struct mc_out *o, const char *word, uint64_t v)
{
    char d[24];
    mc_out_put(o, word, strlen(word));
    mc_out_put(o, d, kv_format_u64(v, d));
}

void mc_prefixes_dump(struct mc_prefixes *p, struct mc_out *out)
{
    kv_lock(&p->lock);
    for (struct prefix *x = p->first; x; x = x->next) {
        mc_out_put(out, "PREFIX ", 7);
        mc_out_put(out, x->name, x->len);
        put_u64(out, " get ", x->gets);
        put_u64(out, " hit ", x->hits);
        put_u64(out, " set ", x->sets);
        put_u64(out, " del ", x->deletes);
        mc_out_put(out, "\r\n", 2);
    }
    kv_unlock(&p->lock);
}
