// SPDX-License-Identifier: MIT
// kvd: a memcached-protocol server, a goroutine per connection. The
// protocol is mc_parse.c's and mc_exec.c's (memcached 1.6's commands and
// answers), the table kv_table.c's (sharded, NUMA-local, LRU under mem=).
//
// Arguments: port=11211, mem=64m (bytes of items, memcached's default; at
// most half the memory free at start: goro's allocator never fails, so the
// table must never ask it for more than there is), shards= (default by
// mem, kv_default_shards), idle_timeout=0 (off, as in memcached; else an
// idle connection closes after it), unixtime= (the Unix time now, for
// exptimes given as Unix times; without it such items count as far away).
//
// A connection reads into a buffer that starts small and grows to what a
// command needs (a get line up to 64 KiB, a value up to 1 MiB), then
// shrinks back; answers are written once the commands read so far are
// done, or every 64 KiB. Nothing a client sends crashes the server: the
// parser answers memcached's error lines, and a client that sends
// nonsense long enough is hung up on.
//
// Memory: goro's allocator never fails (running out is fatal), so the
// table keeps to mem= and the connections' buffers to one budget, a
// quarter of the memory free once the table is made: a connection whose
// buffers would go over it is answered memcached's "SERVER_ERROR out of
// memory reading request" and closed. Beyond max_conns= (default: one per
// 32 KiB of that free memory) a new connection is answered memcached's
// "ERROR Too many open connections" and closed.
#include "kv_sys.h"
#include "kv_table.h"
#include "mc_exec.h"
#include "mc_parse.h"

#define BUF_MIN 2048u
#define OUT_FLUSH (64u * 1024)
#define CONN_COST (32u * 1024)
#define KVD_VERSION "1.6.0-goro-kvd"

static struct {
    uint16_t port;
    uint64_t mem, idle_ns;
    uint32_t shards;
    int64_t unixtime;
    uint64_t max_conns;
} cfg = { 11211, 64u << 20, 0, 0, 0, 0 };

static struct kv_table *table;
static uint64_t started_ns;
static struct {
    uint64_t open, total, refused, bytes_read, bytes_written;       // atomic, relaxed: statistics
    uint64_t buf_bytes;             // atomic, relaxed: charged against buf_budget
} counts;
static uint64_t buf_budget;         // set before the first connection


// ---- the network (goro.h's Go net in C) ------------------------------------------------

// Conn.Write: all of n bytes, or an error.
static int write_all(net_conn_t *c, const void *buf, size_t n)
{
    long w = conn_write(c, buf, n);
    return w == (long)n ? 0 : w < 0 ? (int)w : NET_EPIPE;
}

static void close_conn(net_conn_t *c)
{
    conn_close(c);
    conn_free(c);
}

// Accept as Go's net/http Server.Serve does it: an error that is the
// listener's own ends the loop; one of a connection, or of memory, is
// waited out (5 ms, doubling to 1 s) and accepting goes on.
static int accept_conn(net_listener_t *ln, net_conn_t **c, uint64_t *backoff_ns)
{
    for (;;) {
        int err = listener_accept(ln, c);
        if (err == 0) {
            *backoff_ns = 0;
            return 0;
        }
        if (err == NET_ECLOSED)
            return err;
        *backoff_ns = *backoff_ns ? *backoff_ns * 2 : 5000000;
        if (*backoff_ns > 1000000000)
            *backoff_ns = 1000000000;
        printf("kvd: accept: %s; retrying in %llu ms\n", net_error(err),
               (unsigned long long)(*backoff_ns / 1000000));
        sleep_ns(*backoff_ns);
    }
}

struct conn {
    net_conn_t *c;
    char *in;
    size_t len, cap;
    struct mc_out out;
    struct mc_conn mc;
    bool starved;                   // the budget refused a buffer
};

// Charges n bytes of buffer to the budget; false (nothing charged) when
// they do not fit.
static bool charge(int64_t n)
{
    uint64_t used = __atomic_add_fetch(&counts.buf_bytes, (uint64_t)n, __ATOMIC_RELAXED);
    if (n > 0 && used > buf_budget) {
        __atomic_sub_fetch(&counts.buf_bytes, (uint64_t)n, __ATOMIC_RELAXED);
        return false;
    }
    return true;
}

// mc_out's reserve: the answers' buffer grows only within the budget.
static bool reserve_out(struct mc_out *o, size_t newcap)
{
    struct conn *k = o->ctx;
    if (!charge((int64_t)newcap - (int64_t)o->cap))
        k->starved = true;
    return !k->starved;
}

// Writes the answers gathered so far (mc_out's flush).
static bool flush(struct mc_out *o)
{
    struct conn *k = o->ctx;
    if (o->len) {
        if (write_all(k->c, o->buf, o->len) != 0)
            return false;
        __atomic_add_fetch(&counts.bytes_written, o->len, __ATOMIC_RELAXED);
    }
    o->len = 0;
    return true;
}

static void env_now(struct mc_env *e)
{
    e->now = (uint32_t)((nanotime() - started_ns) / 1000000000u) + 2;
    e->curr_connections = __atomic_load_n(&counts.open, __ATOMIC_RELAXED);
    e->total_connections = __atomic_load_n(&counts.total, __ATOMIC_RELAXED);
    e->bytes_read = __atomic_load_n(&counts.bytes_read, __ATOMIC_RELAXED);
    e->bytes_written = __atomic_load_n(&counts.bytes_written, __ATOMIC_RELAXED);
}

static void serve(void *arg)
{
    struct conn k = { .c = arg };
    k.out.flush = flush;
    k.out.reserve = reserve_out;
    k.out.flush_at = OUT_FLUSH;
    k.out.ctx = &k;
    struct mc_env env = { .table = table, .started_unix = cfg.unixtime ? cfg.unixtime - 2 : 0,
                          .version = KVD_VERSION, .pid = 1, .threads = (uint64_t)gomaxprocs(0) };
    for (;;) {
        // Room for what the incomplete command needs (memcached's limits
        // bound it), at least a little more.
        size_t need = k.mc.need > k.len ? k.mc.need : k.len + BUF_MIN;
        if (need > k.cap) {
            size_t n = k.cap ? k.cap : BUF_MIN;
            while (n < need)
                n *= 2;
            if (!charge((int64_t)(n - k.cap))) {
                k.starved = true;
                break;
            }
            k.in = realloc(k.in, n);
            k.cap = n;
        }
        conn_set_read_deadline(k.c, cfg.idle_ns ? nanotime() + cfg.idle_ns : 0);
        long n = conn_read(k.c, k.in + k.len, k.cap - k.len);
        if (n <= 0)
            break;
        k.len += (size_t)n;
        __atomic_add_fetch(&counts.bytes_read, (uint64_t)n, __ATOMIC_RELAXED);
        env_now(&env);
        size_t used = mc_serve(&k.mc, k.in, k.len, &env, &k.out);
        memmove(k.in, k.in + used, k.len - used);
        k.len -= used;
        if (k.out.broken || !flush(&k.out) || k.mc.closing)
            break;
        if (!k.len && k.cap > 4 * BUF_MIN) {    // a large value went through: give its room back
            charge(-(int64_t)k.cap);
            free(k.in);
            k.in = NULL;
            k.cap = 0;
        }
        if (k.out.cap > OUT_FLUSH) {
            charge(-(int64_t)k.out.cap);
            free(k.out.buf);
            k.out.buf = NULL;
            k.out.cap = 0;
        }
    }
    if (k.starved) {
        static const char msg[] = "SERVER_ERROR out of memory reading request\r\n";
        write_all(k.c, msg, sizeof msg - 1);
    }
    close_conn(k.c);
    charge(-(int64_t)(k.cap + k.out.cap));
    free(k.in);
    free(k.out.buf);
    __atomic_sub_fetch(&counts.open, 1, __ATOMIC_RELAXED);
}

// A decimal with an optional unit: k, m, g for sizes; ms, s, m, h for
// durations (Go's).
static bool arg_number(const char *s, bool duration, uint64_t *out)
{
    uint64_t v = 0, unit = duration ? 1000000000 : 1;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > UINT64_MAX / 10 - 9)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (duration && *p)
        unit = !strcmp(p, "ms") ? 1000000 : !strcmp(p, "s") ? 1000000000 : !strcmp(p, "m") ? 60000000000ull
             : !strcmp(p, "h") ? 3600000000000ull : 0;
    else if (*p)
        unit = p[1] ? 0 : *p == 'k' || *p == 'K' ? 1024 : *p == 'm' || *p == 'M' ? 1 << 20 : *p == 'g' || *p == 'G' ? 1 << 30 : 0;
    if (!unit || (v && unit > UINT64_MAX / v))
        return false;
    *out = v * unit;
    return true;
}

static int kvd_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;
        bool ok;
        if (!strncmp(a, "port=", 5))
            ok = arg_number(a + 5, false, &v) && v >= 1 && v <= 65535 && (cfg.port = (uint16_t)v);
        else if (!strncmp(a, "mem=", 4))
            ok = arg_number(a + 4, false, &v) && v >= (1u << 20) && (cfg.mem = v, true);
        else if (!strncmp(a, "shards=", 7))
            ok = arg_number(a + 7, false, &v) && v >= 1 && v <= 1024 && !(v & (v - 1)) && (cfg.shards = (uint32_t)v);
        else if (!strncmp(a, "idle_timeout=", 13))
            ok = arg_number(a + 13, true, &v) && (cfg.idle_ns = v, true);
        else if (!strncmp(a, "max_conns=", 10))
            ok = arg_number(a + 10, false, &v) && v >= 1 && (cfg.max_conns = v, true);
        else if (!strncmp(a, "unixtime=", 9))
            ok = arg_number(a + 9, false, &v) && v < (1ull << 40) && (cfg.unixtime = (int64_t)v, true);
        else
            ok = false;
        if (!ok) {
            printf("kvd: %s: expected port=1..65535, mem=SIZE (at least 1m), shards=POWER_OF_2 (1..1024), "
                   "idle_timeout=DURATION, max_conns=N, unixtime=SECONDS\n", a);
            return 2;
        }
    }
    uint64_t free_bytes = page_free_count() * 4096;
    if (cfg.mem > free_bytes / 2) {
        printf("kvd: mem=%llu MiB is over half the free memory (%llu MiB): give the machine more, or ask less\n",
               (unsigned long long)(cfg.mem >> 20), (unsigned long long)(free_bytes >> 20));
        return 2;
    }
    table = kv_create(cfg.mem, cfg.shards ? cfg.shards : kv_default_shards(cfg.mem));
    started_ns = nanotime();
    // What the table may still take is set aside first.
    free_bytes = page_free_count() * 4096 - cfg.mem;
    buf_budget = free_bytes / 4;
    if (!cfg.max_conns)
        cfg.max_conns = free_bytes / CONN_COST;
    net_listener_t *ln;
    char addr[16];
    snprintf(addr, sizeof addr, ":%u", cfg.port);
    int err = net_listen("tcp", addr, &ln);
    if (err) {
        printf("kvd: listen on port %u: %s\n", cfg.port, net_error(err));
        return 1;
    }
    struct kv_stats s;
    kv_stats(table, &s);
    printf("kvd: listening on port %u, %d cores, mem %llu MiB in %u shards over %d nodes\n", cfg.port, gomaxprocs(0),
           (unsigned long long)(cfg.mem >> 20), s.shards, numa_nodes());
    uint64_t backoff = 0;
    for (;;) {
        net_conn_t *c;
        err = accept_conn(ln, &c, &backoff);
        if (err) {
            printf("kvd: accept: %s\n", net_error(err));
            return 1;
        }
        __atomic_add_fetch(&counts.total, 1, __ATOMIC_RELAXED);
        if (__atomic_add_fetch(&counts.open, 1, __ATOMIC_RELAXED) > cfg.max_conns) {
            static const char busy[] = "ERROR Too many open connections\r\n";
            __atomic_sub_fetch(&counts.open, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&counts.refused, 1, __ATOMIC_RELAXED);
            write_all(c, busy, sizeof busy - 1);
            close_conn(c);
            continue;
        }
        go(serve, c);
    }
}
GORO_APP(kvd, "a memcached-protocol server: port= mem= shards= idle_timeout= max_conns= unixtime=", kvd_main);
