// SPDX-License-Identifier: MIT
// kvd's pure parts on the host (apps/kvd: mc_parse.c, mc_exec.c,
// mc_meta.c, kv_table.c).
//
// transcripts: every tests/data/memcached/NAME.in (hand-written protocol
// cases, and bytes memcslap and memcaslap sent, captured by
// tools/net/mctranscript.py) is fed through mc_serve as a connection would
// read it: whole, a byte at a time, and in 7-byte pieces. The answer must
// equal NAME.out, what memcached 1.6.18 answered to the same bytes, but for
// the cas ids (each server numbers its own), the version line and me's
// size (each server's item is its own size).
//
// Then the table alone: LRU eviction under the memory limit, shards on
// nodes, unique cas ids, expiry and delayed flushes, incr/decr in place,
// and threads storing and reading at once (each value must read back
// whole, as its key's).
//
// Usage: test_kvd [data-dir]   (default tests/data/memcached, from the tree's top)
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "apps/kvd/kv_sys.h"
#include "apps/kvd/kv_table.h"
#include "apps/kvd/mc_exec.h"
#include "apps/kvd/mc_parse.h"
#include "check.h"

int kv_host_nodes = 1;

static const char *data_dir = "tests/data/memcached";

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

// The answer with each gets line's and meta answer's cas id, me's size
// and the version replaced by fixed words: the rest must be memcached's to
// the byte.
static size_t normalize(const char *in, size_t len, char *out)
{
    size_t o = 0, i = 0;
    while (i < len) {
        const char *lf = memchr(in + i, '\n', len - i);
        size_t n = lf ? (size_t)(lf - (in + i)) + 1 : len - i;
        const char *line = in + i;
        if (n > 8 && !memcmp(line, "VERSION ", 8)) {
            o += (size_t)sprintf(out + o, "VERSION *\r\n");
        } else if (n > 6 && !memcmp(line, "VALUE ", 6)) {
            // VALUE key flags bytes [cas]: the key may hold any byte but space
            int spaces = 0;
            size_t last = 0;
            for (size_t k = 0; k < n; k++)
                if (line[k] == ' ')
                    spaces++, last = k;
            if (spaces == 4) {
                memcpy(out + o, line, last);
                o += last;
                o += (size_t)sprintf(out + o, " CAS\r\n");
            } else {
                memcpy(out + o, line, n);
                o += n;
            }
            // the data block follows, whatever bytes it holds
            const char *sp = memchr(line + 6, ' ', n - 6);     // after the key
            unsigned long bytes = 0;
            if (sp) {
                sp++;
                while (*sp != ' ' && sp < line + n)        // flags
                    sp++;
                for (sp++; sp < line + n && *sp >= '0' && *sp <= '9'; sp++)
                    bytes = bytes * 10 + (unsigned long)(*sp - '0');
            }
            if (sp && i + n + bytes + 2 <= len) {
                memcpy(out + o, in + i + n, bytes + 2);
                o += bytes + 2;
                i += bytes + 2;
            }
        } else if (n >= 4 && line[0] >= 'A' && line[0] <= 'Z' && line[1] >= 'A' && line[1] <= 'Z' &&
                   (line[2] == ' ' || line[2] == '\r')) {
            // a meta answer: its c flag's cas id, and me's cas= and size=,
            // as fixed words
            for (size_t k = 0; k < n; k++) {
                out[o++] = line[k];
                if (line[k] != ' ')
                    continue;
                size_t w = 0;
                if (k + 2 < n && line[k + 1] == 'c' && line[k + 2] >= '0' && line[k + 2] <= '9')
                    w = 1;
                else if (k + 5 < n && !memcmp(line + k + 1, "cas=", 4))
                    w = 4;
                else if (k + 6 < n && !memcmp(line + k + 1, "size=", 5))
                    w = 5;
                if (!w)
                    continue;
                memcpy(out + o, line + k + 1, w);
                o += w;
                out[o++] = '*';
                for (k += w; k + 1 < n && line[k + 1] >= '0' && line[k + 1] <= '9'; k++)
                    ;
            }
        } else {
            memcpy(out + o, line, n);
            o += n;
        }
        i += n;
    }
    return o;
}

static void env_init(struct mc_env *env, struct kv_table *t)
{
    memset(env, 0, sizeof *env);
    env->table = t;
    env->now = 2;
    env->started_unix = (int64_t)time(NULL) - 2;
    env->version = "1.6.0-goro-kvd";
}

// Feeds in[0..len) in pieces of step bytes into a connection's buffer, as
// kvd's reader does; the answer.
static char *serve_all(const char *in, size_t len, size_t step, size_t *out_len)
{
    struct kv_table *t = kv_create(64u << 20, kv_default_shards(64u << 20));
    struct mc_env env;
    env_init(&env, t);
    env.prefixes = mc_prefixes_create();
    struct mc_out out = { 0 };
    struct mc_conn c = { 0 };
    char *buf = malloc(len + 1);
    size_t have = 0, fed = 0;
    while (!c.closing) {
        size_t n = len - fed < step ? len - fed : step;
        memcpy(buf + have, in + fed, n);
        have += n, fed += n;
        size_t used = mc_serve(&c, buf, have, &env, &out);
        memmove(buf, buf + used, have - used);
        have -= used;
        if (fed == len && (!used || !have))
            break;
    }
    free(buf);
    kv_destroy(t);
    mc_prefixes_destroy(env.prefixes);
    *out_len = out.len;
    return out.buf;
}

static void transcripts(void)
{
    DIR *d = opendir(data_dir);
    CHECKF(d, "no %s", data_dir);
    if (!d)
        return;
    int cases = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 4 || strcmp(e->d_name + nl - 3, ".in"))
            continue;
        char path[512];
        size_t in_len, want_len;
        snprintf(path, sizeof path, "%s/%s", data_dir, e->d_name);
        char *in = read_file(path, &in_len);
        snprintf(path + strlen(path) - 3, 8, ".out");
        char *want = read_file(path, &want_len);
        CHECKF(in && want, "%s: .in or .out missing", e->d_name);
        if (!in || !want)
            continue;
        char *wn = malloc(want_len * 2 + 64);
        size_t wl = normalize(want, want_len, wn);
        static const size_t steps[] = { SIZE_MAX, 1, 7 };
        for (size_t s = 0; s < 3; s++) {
            size_t got_len;
            char *got = serve_all(in, in_len, steps[s], &got_len);
            char *gn = malloc(got_len * 2 + 64);
            size_t gl = normalize(got ? got : "", got_len, gn);
            size_t k = 0;
            while (k < gl && k < wl && gn[k] == wn[k])
                k++;
            CHECKF(gl == wl && k == gl, "%s (pieces of %zu): differs from memcached's at byte %zu: \"%.40s\" against \"%.40s\"",
                   e->d_name, steps[s], k, gn + k, wn + k);
            free(gn);
            free(got);
        }
        free(wn);
        free(in);
        free(want);
        cases++;
    }
    closedir(d);
    CHECKF(cases >= 15, "only %d cases in %s", cases, data_dir);
}

// ---- the table alone --------------------------------------------------------------------

static void copy_value(void *ctx, const struct kv_item *it)
{
    char *dst = ctx;
    memcpy(dst, kv_item_value(it), it->nbytes);
    dst[it->nbytes] = 0;
}

static bool has(struct kv_table *t, const char *key, uint32_t now, char *val)
{
    return kv_get(t, key, (uint32_t)strlen(key), now, copy_value, val);
}

static void put(struct kv_table *t, const char *key, const char *val, uint32_t exptime, uint32_t now)
{
    CHECK(kv_store(t, KV_SET, key, (uint32_t)strlen(key), 0, exptime, val, (uint32_t)strlen(val), 0, now) == KV_STORED);
}

static void lru_eviction(void)
{
    // One shard of 64 KiB: 1 KiB values, so about 60 fit.
    struct kv_table *t = kv_create(64 << 10, 1);
    char key[32], val[1100], got[1100];
    memset(val, 'v', 1000);
    val[1000] = 0;
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%d", i);
        put(t, key, val, 0, 2);
        if (i == 100) {                 // k0 read now and then stays
            CHECK(has(t, "k0", 2, got));
        }
        if (i % 10 == 0)
            CHECK(has(t, "k0", 2, got));
    }
    struct kv_stats s;
    kv_stats(t, &s);
    CHECKF(s.bytes <= 64 << 10, "%llu bytes in a 64 KiB table", (unsigned long long)s.bytes);
    CHECK(s.evictions > 100 && s.curr_items < 70 && s.curr_items > 40);
    CHECK(has(t, "k0", 2, got) && !strcmp(got, val));     // recently used: kept
    CHECK(!has(t, "k1", 2, got));                          // least recently used: gone
    CHECK(has(t, "k199", 2, got));
    // An item larger than the whole budget is refused, and a failed set
    // leaves no stale value.
    char *big = malloc(70 << 10);
    memset(big, 'b', 70 << 10);
    CHECK(kv_store(t, KV_SET, "k199", 4, 0, 0, big, 70 << 10, 0, 2) == KV_NO_MEMORY);
    CHECK(!has(t, "k199", 2, got));
    free(big);
    kv_destroy(t);
}

static void grab(void *ctx, const struct kv_item *it)
{
    *(uint64_t *)ctx = it->cas;
}

static void shards_and_cas(void)
{
    kv_host_nodes = 4;
    struct kv_table *t = kv_create(256u << 20, kv_default_shards(256u << 20));
    kv_host_nodes = 1;
    struct kv_stats s;
    kv_stats(t, &s);
    CHECK(s.shards == 64);
    CHECK(kv_default_shards(8u << 20) == 4 && kv_default_shards(1u << 20) == 1);
    // cas ids unique across keys of different shards
    enum { N = 2000 };
    static uint64_t ids[N];
    char key[32];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "key%d", i);
        put(t, key, "x", 0, 2);
    }
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "key%d", i);
        uint64_t cas = 0;
        CHECK(kv_get(t, key, (uint32_t)strlen(key), 2, grab, &cas));
        ids[i] = cas;
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (ids[i] == ids[j]) {
                CHECKF(0, "keys %d and %d share cas id %llu", i, j, (unsigned long long)ids[i]);
                i = N;
                break;
            }
    // cas: a stale id fails, the current one stores
    uint64_t cas = ids[5];
    snprintf(key, sizeof key, "key5");
    CHECK(kv_store(t, KV_CAS, key, 4, 0, 0, "y", 1, cas + 1, 2) == KV_EXISTS);
    CHECK(kv_store(t, KV_CAS, key, 4, 0, 0, "y", 1, cas, 2) == KV_STORED);
    CHECK(kv_store(t, KV_CAS, key, 4, 0, 0, "z", 1, cas, 2) == KV_EXISTS);
    CHECK(kv_store(t, KV_CAS, "nokey", 5, 0, 0, "z", 1, cas, 2) == KV_NOT_FOUND);
    kv_destroy(t);
}

static void copy_item(void *ctx, const struct kv_item *it)
{
    *(struct kv_item *)ctx = *it;
}

static void claim_win(void *ctx, const struct kv_item *it)
{
    (void)it;
    *(bool *)ctx = true;
}

// ms with C and I (memcached's set_stale): a value whose cas is older than
// the item's is stored, marked stale, keeping the item's TTL and a W
// already sent; the item's own cas stores as ever; a newer one is refused.
// The transcripts cannot show it: their C tokens would have to be kvd's
// cas ids.
static void stale_store(void)
{
    struct kv_table *t = kv_create(8u << 20, 4);
    put(t, "s", "a", 50, 2);
    struct kv_item it;
    CHECK(kv_get(t, "s", 1, 2, copy_item, &it));
    uint64_t cas = it.cas;
    bool win = false;
    CHECK(kv_get_meta(t, "s", 1, 2, false, 0, true, &win, claim_win, &win));
    struct kv_meta m = { .has_cas = true, .cas = cas + 1, .invalidate = true };
    CHECK(kv_store_meta(t, KV_CAS, "s", 1, 0, 0, "b", 1, 2, &m) == KV_EXISTS);
    m.cas = cas - 1;
    CHECK(kv_store_meta(t, KV_CAS, "s", 1, 0, 0, "c", 1, 2, &m) == KV_STORED);
    CHECK(kv_get(t, "s", 1, 2, copy_item, &it));
    CHECK(it.stale && it.win_sent && it.exptime == 50 && it.cas > cas);
    m.cas = it.cas;
    CHECK(kv_store_meta(t, KV_CAS, "s", 1, 0, 0, "d", 1, 2, &m) == KV_STORED);
    CHECK(kv_get(t, "s", 1, 2, copy_item, &it));
    CHECK(!it.stale && !it.win_sent && it.exptime == 0);
    kv_destroy(t);
}

// One command's answer at env->now, NUL-terminated.
static const char *ask(const struct mc_env *env, struct mc_out *out, const char *cmd)
{
    struct mc_conn c = { 0 };
    out->len = 0;
    CHECK(mc_serve(&c, cmd, strlen(cmd), env, out) == strlen(cmd));
    mc_out_put(out, "", 1);
    return out->buf;
}

// me's fields the transcripts cannot show (their clock stands still, an
// item with a TTL answers a negated exp in 1.6.18, and size is masked):
// exp counts down, la counts from the last read, size is the item's share
// of stats' bytes; me reads nothing and counts no hit or miss.
static void debug_fields(void)
{
    struct kv_table *t = kv_create(8u << 20, 4);
    struct mc_env env;
    env_init(&env, t);
    struct mc_out out = { 0 };
    CHECK(!strcmp(ask(&env, &out, "ms d 2 T100\r\nhi\r\n"), "HD\r\n"));
    struct kv_item it;
    CHECK(kv_peek(t, "d", 1, 2, copy_item, &it));
    struct kv_stats st;
    kv_stats(t, &st);
    char want[128];
    env.now = 32;
    snprintf(want, sizeof want, "ME d exp=70 la=30 cas=%llu fetch=no cls=1 size=%llu\r\n",
             (unsigned long long)it.cas, (unsigned long long)st.bytes);
    CHECKF(!strcmp(ask(&env, &out, "me d\r\n"), want), "%s against %s", out.buf, want);
    CHECK(!strcmp(ask(&env, &out, "mg d\r\n"), "HD\r\n"));
    env.now = 40;
    snprintf(want, sizeof want, "ME d exp=62 la=8 cas=%llu fetch=yes cls=1 size=%llu\r\n",
             (unsigned long long)it.cas, (unsigned long long)st.bytes);
    CHECKF(!strcmp(ask(&env, &out, "me d\r\n"), want), "%s against %s", out.buf, want);
    CHECK(!strcmp(ask(&env, &out, "me e\r\n"), "EN\r\n"));
    env.now = 102;                      // gone at its exptime, counted as expired
    CHECK(!strcmp(ask(&env, &out, "me d\r\n"), "EN\r\n"));
    kv_stats(t, &st);
    CHECK(st.get_hits == 1 && st.get_misses == 0 && st.get_expired == 1 && st.curr_items == 0);
    free(out.buf);
    kv_destroy(t);
}

static void expiry_and_flush(void)
{
    struct kv_table *t = kv_create(8u << 20, 4);
    char got[64];
    put(t, "a", "1", 10, 2);
    put(t, "b", "2", 0, 2);
    CHECK(has(t, "a", 9, got) && !has(t, "a", 10, got));
    CHECK(kv_touch(t, "b", 1, 20, 5) == KV_TOUCHED);
    CHECK(has(t, "b", 19, got) && !has(t, "b", 20, got));
    put(t, "c", "3", 0, 30);
    kv_flush(t, 40, 30);                // everything stored before 40 is gone from 40 on
    put(t, "d", "4", 0, 35);
    CHECK(has(t, "c", 39, got) && has(t, "d", 39, got));
    put(t, "e", "5", 0, 40);
    CHECK(!has(t, "c", 40, got) && !has(t, "d", 41, got) && has(t, "e", 41, got));
    kv_flush(t, 50, 50);                // at once
    CHECK(!has(t, "e", 50, got));
    struct kv_stats s;
    kv_stats(t, &s);
    CHECK(s.curr_items == 0 && s.bytes == 0);
    CHECK(s.get_expired == 2 && s.get_flushed == 2);
    kv_destroy(t);
}

static void incr_in_place(void)
{
    struct kv_table *t = kv_create(8u << 20, 1);
    char num[24], got[64];
    put(t, "n", "100", 0, 2);
    CHECK(kv_delta(t, "n", 1, false, 95, 2, num) == KV_OK && !strcmp(num, "5"));
    CHECK(has(t, "n", 2, got) && !strcmp(got, "5  "));
    CHECK(kv_delta(t, "n", 1, true, 995, 2, num) == KV_OK && !strcmp(num, "1000"));
    CHECK(has(t, "n", 2, got) && !strcmp(got, "1000"));
    CHECK(kv_delta(t, "n", 1, true, UINT64_MAX, 2, num) == KV_OK && !strcmp(num, "999"));     // wraps
    CHECK(kv_delta(t, "nope", 4, true, 1, 2, num) == KV_NOT_FOUND);
    put(t, "s", "abc", 0, 2);
    CHECK(kv_delta(t, "s", 1, true, 1, 2, num) == KV_NON_NUMERIC);
    CHECK(kv_store(t, KV_APPEND, "s", 1, 9, 0, "def", 3, 0, 2) == KV_STORED);
    CHECK(kv_store(t, KV_PREPEND, "s", 1, 9, 0, ">", 1, 0, 2) == KV_STORED);
    CHECK(has(t, "s", 2, got) && !strcmp(got, ">abcdef"));
    kv_destroy(t);
}

// ---- threads ----------------------------------------------------------------------------------

#define THREADS 4
#define KEYS 512
#define ROUNDS 20000

static struct kv_table *shared;
static int torn;

static void value_of(int k, int version, char *v, uint32_t *n)
{
    *n = (uint32_t)(8 + (k * 7 + version) % 200);
    for (uint32_t i = 0; i < *n; i++)
        v[i] = (char)('a' + (k + i) % 26);
    snprintf(v, 8, "%07d", k);      // the value names its key
    v[7] = '/';
}

static void check_value(void *ctx, const struct kv_item *it)
{
    int k = *(int *)ctx;
    char want[256];
    uint32_t n = it->nbytes;
    const char *v = kv_item_value(it);
    char head[8];
    snprintf(head, sizeof head, "%07d", k);
    if (n < 8 || memcmp(v, head, 7) || v[7] != '/')
        __atomic_add_fetch(&torn, 1, __ATOMIC_RELAXED);
    uint32_t wn;
    value_of(k, 0, want, &wn);
    for (uint32_t i = 8; i < n; i++)
        if (v[i] != (char)('a' + (k + i) % 26))
            __atomic_add_fetch(&torn, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    char v[256], key[32];
    for (int r = 0; r < ROUNDS; r++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int k = (int)(x % KEYS);
        snprintf(key, sizeof key, "key:%d", k);
        uint32_t n;
        switch (x >> 60) {
        case 0: case 1: case 2: case 3:
            value_of(k, r, v, &n);
            kv_store(shared, KV_SET, key, (uint32_t)strlen(key), 0, 0, v, n, 0, 2);
            break;
        case 4:
            kv_delete(shared, key, (uint32_t)strlen(key), 2);
            break;
        default:
            kv_get(shared, key, (uint32_t)strlen(key), 2, check_value, &k);
            break;
        }
    }
    return NULL;
}

static void threads(void)
{
    // 64 KiB over 4 shards: the workers evict each other all the time.
    shared = kv_create(64 << 10, 4);
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECKF(torn == 0, "%d values read back torn or under the wrong key", torn);
    struct kv_stats s;
    kv_stats(shared, &s);
    CHECK(s.bytes <= 64 << 10 && s.evictions > 0 && s.get_hits > 0);
    // every item left reads back whole
    int k;
    char key[32];
    for (k = 0; k < KEYS; k++) {
        snprintf(key, sizeof key, "key:%d", k);
        kv_get(shared, key, (uint32_t)strlen(key), 2, check_value, &k);
    }
    CHECK(torn == 0);
    kv_destroy(shared);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        data_dir = argv[1];
    RUN(transcripts);
    RUN(lru_eviction);
    RUN(shards_and_cas);
    RUN(stale_store);
    RUN(debug_fields);
    RUN(expiry_and_flush);
    RUN(incr_in_place);
    RUN(threads);
    return CHECK_DONE();
}
