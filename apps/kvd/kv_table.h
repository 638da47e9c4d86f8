// SPDX-License-Identifier: MIT
// kvd's table: keys to values with flags, an expiry time and a cas id,
// as memcached keeps them. Pure apart from kv_sys.h (a lock, memory from a
// node), so the host tests and the fuzzer run it under threads.
//
// Sharded: a key's hash picks one of a power of two of shards, each with
// its own lock, hash chains, LRU list, memory budget and counters, so that
// cores working on different keys share no cache line. Shard s lives on
// NUMA node s mod nodes: its buckets and its items come from that node's
// memory (malloc_node), so a shard's memory is one node's whatever core
// wrote it.
//
// Memory: each shard may hold mem / shards bytes of items, counted as the
// allocator's usable size of each. Storing an item that does not fit
// evicts the shard's least recently used items (the expired ones count as
// reclaimed, the others as evictions) until it does; an item larger than
// the shard's whole budget is refused (KV_NO_MEMORY). Reads and writes
// make an item the most recently used.
//
// Time is the caller's, in seconds (kvd's clock since boot, starting above
// 1 as memcached's does): an item with exptime != 0 is gone once
// now >= exptime. A flush makes every item stored up to then absent: at
// once, or from a time in the future.
//
// cas ids: each shard counts its own, s + nshards * k, so ids are unique
// across the table without a shared counter.
#ifndef KVD_KV_TABLE_H
#define KVD_KV_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The LRU list's links; an item's is its first field, so a link that is
// not the list's head is its item.
struct kv_link {
    struct kv_link *prev, *next;
};

struct kv_item {
    // shard lock held for all of these
    struct kv_link lru;                 // the shard's LRU list, most recent first
    struct kv_item *hnext;              // the bucket's chain
    uint64_t cas;
    uint32_t hash;
    uint32_t flags;
    uint32_t exptime;                   // 0: never
    uint32_t time;                      // when stored (seconds), for a delayed flush
    uint32_t atime;                     // when stored or last read (seconds): mg's l
    bool fetched;                       // read since stored (memcached's ITEM_FETCHED): mg's h
    bool win_sent;                      // an mg was told W, to recache it (ITEM_TOKEN_SENT)
    bool stale;                         // marked by md or ms with I (ITEM_STALE): mg's X
    uint32_t nbytes;                    // the value's length
    uint32_t charged;                   // bytes counted against the shard's budget
    uint8_t nkey;
    bool key_binary;                    // stored by ms with b (memcached's ITEM_KEY_BINARY)
    char data[];                        // the key, then the value
};

static inline const char *kv_item_value(const struct kv_item *it)
{
    return it->data + it->nkey;
}

enum kv_mode { KV_SET, KV_ADD, KV_REPLACE, KV_APPEND, KV_PREPEND, KV_CAS };

enum kv_result {
    KV_STORED, KV_NOT_STORED, KV_EXISTS, KV_NOT_FOUND, KV_DELETED, KV_TOUCHED, KV_NO_MEMORY,
    KV_NON_NUMERIC, KV_OK,
};

// Counters, summed over the shards by kv_stats.
struct kv_stats {
    uint64_t curr_items, total_items, bytes, limit_maxbytes;
    uint64_t get_hits, get_misses, get_expired, get_flushed;
    uint64_t cmd_set, cmd_touch, cmd_flush;
    uint64_t delete_hits, delete_misses, incr_hits, incr_misses, decr_hits, decr_misses;
    uint64_t cas_hits, cas_misses, cas_badval, touch_hits, touch_misses;
    uint64_t evictions, reclaimed, store_no_memory;
    uint32_t shards;
};

struct kv_table;

// A table of mem bytes of items in `shards` shards (a power of two, at
// least 1; kv_default_shards picks one), placed over the NUMA nodes.
struct kv_table *kv_create(uint64_t mem, uint32_t shards);
void kv_destroy(struct kv_table *t);
// Shards for mem: 64, fewer while a shard would hold under 2 MiB.
uint32_t kv_default_shards(uint64_t mem);

// Looks key up; when present, calls emit(ctx, item) with the shard's lock
// held (copy what you need; do not block) and returns true.
bool kv_get(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now,
            void (*emit)(void *ctx, const struct kv_item *it), void *ctx);

// kv_get that also sets a present item's exptime (memcached's gat), emit
// seeing the item as it was before.
bool kv_gat(struct kv_table *t, const char *key, uint32_t nkey, uint32_t exptime, uint32_t now,
            void (*emit)(void *ctx, const struct kv_item *it), void *ctx);
// kv_get (touch false) or kv_gat as mg asks: a read makes the item the
// most recently used, and read (fetched, atime) after emit has seen it,
// unless bump is false (mg's u). emit sets *win to mark the item's W sent.
bool kv_get_meta(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now, bool touch, uint32_t exptime,
                 bool bump, bool *win, void (*emit)(void *ctx, const struct kv_item *it), void *ctx);
// kv_get that leaves the item as it was (memcached's me, whose item_get
// is told DONT_UPDATE): not read, not moved in the LRU, no hit or miss
// counted; a dead item found is freed and counted, as there.
bool kv_peek(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now,
             void (*emit)(void *ctx, const struct kv_item *it), void *ctx);
// Stores value (nbytes) under key as mode says; KV_CAS compares with cas.
// KV_STORED, KV_NOT_STORED (add of a present key, replace/append/prepend
// of an absent one), KV_EXISTS (cas differs), KV_NOT_FOUND (cas of an
// absent key), KV_NO_MEMORY. append/prepend keep the item's flags and
// exptime.
enum kv_result kv_store(struct kv_table *t, enum kv_mode mode, const char *key, uint32_t nkey, uint32_t flags,
                        uint32_t exptime, const char *value, uint32_t nbytes, uint64_t cas, uint32_t now);

// What the meta commands add to kv_store, kv_delete and kv_delta: a cas
// to compare first (KV_EXISTS when the item's differs; kv_store's KV_ADD
// ignores it, KV_CAS always compares), a new exptime for kv_delta's
// result, and what the item is after the call.
struct kv_meta {
    bool has_cas;
    uint64_t cas;
    bool set_exptime;
    uint32_t exptime;
    bool key_binary;                    // kv_store_meta: mark the item (not kept by append, prepend)
    // I: kv_store_meta stores a value whose cas is older than the item's,
    // marked stale, where it would answer KV_EXISTS; kv_delete_meta marks
    // the item stale with a new cas (and set_exptime's) and keeps it.
    bool invalidate;
    uint64_t cas_out;                   // the item's cas after a success, else 0
    uint32_t exptime_out;               // kv_delta: its exptime before set_exptime
};
enum kv_result kv_store_meta(struct kv_table *t, enum kv_mode mode, const char *key, uint32_t nkey, uint32_t flags,
                             uint32_t exptime, const char *value, uint32_t nbytes, uint32_t now, struct kv_meta *m);
enum kv_result kv_delete_meta(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now, struct kv_meta *m);
enum kv_result kv_delta_meta(struct kv_table *t, const char *key, uint32_t nkey, bool incr, uint64_t delta,
                             uint32_t now, char *out, struct kv_meta *m);

enum kv_result kv_delete(struct kv_table *t, const char *key, uint32_t nkey, uint32_t now);
enum kv_result kv_touch(struct kv_table *t, const char *key, uint32_t nkey, uint32_t exptime, uint32_t now);

// incr (or decr) by delta, as memcached does: the value must be a decimal
// of at most 20 digits (blanks around allowed), incr wraps at 2^64, decr
// stops at 0; a result no longer than the value is written in place,
// padded with spaces. KV_OK with the new value's digits in out (at least
// 21 bytes, NUL-terminated), KV_NOT_FOUND, KV_NON_NUMERIC, KV_NO_MEMORY.
enum kv_result kv_delta(struct kv_table *t, const char *key, uint32_t nkey, bool incr, uint64_t delta, uint32_t now,
                        char *out);

// Every item stored up to now is absent from `at` on (at <= now: at once,
// and the memory is freed).
void kv_flush(struct kv_table *t, uint32_t at, uint32_t now);

void kv_stats(struct kv_table *t, struct kv_stats *s);
void kv_stats_reset(struct kv_table *t);

// v's decimal digits in out (at least 21 bytes), NUL-terminated; their count.
uint32_t kv_format_u64(uint64_t v, char *out);

#endif
