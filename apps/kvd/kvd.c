// SPDX-License-Identifier: MIT
// kvd: a memcached-protocol server, a goroutine per connection. The
// protocol is mc_parse.c's and mc_exec.c's (memcached 1.6's commands and
// answers), the table kv_table.c's (sharded, NUMA-local, LRU under mem=).
//
// Arguments: port=11211, mem=64m (bytes of items, memcached's default; at
// most half the memory free at start: goro's allocator never fails, so the
// table must never ask it for more than there is), shards= (default by
// mem, kv_default_shards), idle_timeout=0 (off, as in memcached; else an
// idle connection closes after it), write_timeout=60s (each write of
// answers must be taken by the client within it: one that stops reading
// cannot hold its goroutine; 0 for none, as in memcached), unixtime= (the
// Unix time now, for exptimes given as Unix times and stats' time; by
// default the machine's clock, walltime_ns; with neither such items count
// as far away).
//
// A connection reads into a buffer that starts small and grows to what a
// command needs (a get line up to 64 KiB, a value up to 1 MiB), then
// shrinks back; answers are written once the commands read so far are
// done, or every 64 KiB. Nothing a client sends crashes the server: the
// parser answers memcached's error lines, and a client that sends
// nonsense long enough is hung up on.
//
// stats conns lists the listener (number 0) and each connection by its
// accept's number (memcached's fd), its peer and its state: reading a
// command (conn_read), inside a value (conn_nread), or serving
// (conn_parse_cmd).
//
// Memory: goro's allocator never fails (running out is fatal), so the
// table keeps to mem= and the connections' buffers to one budget, a
// quarter of the memory free once the table is made: a connection whose
// buffers would go over it is answered memcached's "SERVER_ERROR out of
// memory reading request" and closed. Beyond max_conns= (default: one per
// 32 KiB of that free memory) a new connection is answered memcached's
// "ERROR Too many open connections" and closed.
#include "apps/netserve/netserve.h"
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
    uint64_t mem, idle_ns, write_ns;
    uint32_t shards;
    int64_t unixtime;
    uint64_t max_conns;
} cfg = { 11211, 64u << 20, 0, 60000000000ull, 0, 0, 0 };

static struct kv_table *table;
static struct mc_prefixes *prefixes;
static uint64_t started_ns;         // nanotime() at the start of the second `now` 0 counts from
static int64_t started_unix;        // the Unix time there; 0 when unknown
static struct {
    uint64_t bytes_read, bytes_written;        // atomic, relaxed: statistics
} counts;

static void serve(void *arg);

// The answer to a connection over max_conns (memcached's).
#define BUSY "ERROR Too many open connections\r\n"

static struct netserve srv = { .name = "kvd", .busy = BUSY, .busy_len = sizeof BUSY - 1, .serve = serve };

struct conn {
    net_conn_t *c;
    char *in;
    size_t len, cap;
    struct mc_out out;
    struct mc_conn mc;
    bool starved;                   // the budget refused a buffer
    // For stats conns. conns.lock held for the links; the others written
    // by the connection's goroutine alone, read by any (atomic, relaxed:
    // statistics).
    struct conn *prev, *next;
    uint64_t id;                    // its accept's number, from 1 (memcached shows its fd)
    struct net_addr remote;
    uint8_t state;                  // enum conn_state
    uint32_t last_cmd;              // the mc_env now of its last read
};

// What stats conns shows of a connection (memcached's conn_states).
enum conn_state { CONN_READ, CONN_NREAD, CONN_PARSE_CMD };
static const char *const state_names[] = { "conn_read", "conn_nread", "conn_parse_cmd" };

static struct {
    kv_lock_t lock;
    struct conn *first;             // lock held
    uint64_t next_id;               // lock held
    uint64_t count;                 // lock held
    struct net_addr listen;         // set before the first connection
} conns;

static void conn_register(struct conn *k)
{
    k->remote = conn_remote_addr(k->c);
    kv_lock(&conns.lock);
    k->id = ++conns.next_id;
    k->next = conns.first;
    if (conns.first)
        conns.first->prev = k;
    conns.first = k;
    conns.count++;
    kv_unlock(&conns.lock);
}

static void conn_unregister(struct conn *k)
{
    kv_lock(&conns.lock);
    if (k->prev)
        k->prev->next = k->next;
    else
        conns.first = k->next;
    if (k->next)
        k->next->prev = k->prev;
    conns.count--;
    kv_unlock(&conns.lock);
}

static void set_state(struct conn *k, enum conn_state s, uint32_t now)
{
    __atomic_store_n(&k->state, (uint8_t)s, __ATOMIC_RELAXED);     // relaxed: a statistic
    __atomic_store_n(&k->last_cmd, now, __ATOMIC_RELAXED);
}

static void stat_line(struct mc_out *out, uint64_t id, const char *name, const char *value)
{
    char line[96];
    int n = snprintf(line, sizeof line, "STAT %llu:%s %s\r\n", (unsigned long long)id, name, value);
    mc_out_put(out, line, (size_t)n);
}

static void addr_value(const struct net_addr *a, char *buf, size_t cap)
{
    memcpy(buf, "tcp:", 4);
    net_addr_string(a, buf + 4, cap - 4);
}

// mc_env's conns: the listener (number 0), then each connection, newest
// first. A snapshot is taken under the lock and written out after it, so
// that a client slow to read the answer holds no other connection up.
static void list_conns(const struct mc_env *env, struct mc_out *out)
{
    struct snap {
        uint64_t id;
        struct net_addr remote;
        uint8_t state;
        uint32_t last_cmd;
    } *snap;
    kv_lock(&conns.lock);
    uint64_t n = conns.count, i = 0;
    snap = malloc((n ? n : 1) * sizeof *snap);
    for (struct conn *k = conns.first; k && i < n; k = k->next, i++)
        snap[i] = (struct snap){ k->id, k->remote, __atomic_load_n(&k->state, __ATOMIC_RELAXED),  // relaxed: set_state's
                                 __atomic_load_n(&k->last_cmd, __ATOMIC_RELAXED) };
    kv_unlock(&conns.lock);
    char listen[32], addr[32], secs[16];
    addr_value(&conns.listen, listen, sizeof listen);
    stat_line(out, 0, "addr", listen);
    stat_line(out, 0, "state", "conn_listening");
    snprintf(secs, sizeof secs, "%u", env->now - 2);
    stat_line(out, 0, "secs_since_last_cmd", secs);
    for (uint64_t j = 0; j < i; j++) {
        addr_value(&snap[j].remote, addr, sizeof addr);
        stat_line(out, snap[j].id, "addr", addr);
        stat_line(out, snap[j].id, "listen_addr", listen);
        stat_line(out, snap[j].id, "state", state_names[snap[j].state]);
        snprintf(secs, sizeof secs, "%u", env->now - snap[j].last_cmd);
        stat_line(out, snap[j].id, "secs_since_last_cmd", secs);
    }
    free(snap);
}

// mc_out's reserve: the answers' buffer grows only within the budget.
static bool reserve_out(struct mc_out *o, size_t newcap)
{
    struct conn *k = o->ctx;
    if (!netserve_charge(&srv, (int64_t)newcap - (int64_t)o->cap))
        k->starved = true;
    return !k->starved;
}

// Writes the answers gathered so far (mc_out's flush).
static bool flush(struct mc_out *o)
{
    struct conn *k = o->ctx;
    if (o->len) {
        if (netserve_write(&srv, k->c, o->buf, o->len) != 0)
            return false;
        __atomic_add_fetch(&counts.bytes_written, o->len, __ATOMIC_RELAXED);
    }
    o->len = 0;
    return true;
}

static void env_now(struct mc_env *e)
{
    e->now = (uint32_t)((nanotime() - started_ns) / 1000000000u) + 2;
    e->curr_connections = __atomic_load_n(&srv.open, __ATOMIC_RELAXED);
    e->total_connections = __atomic_load_n(&srv.accepted, __ATOMIC_RELAXED);
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
    struct mc_env env = { .table = table, .prefixes = prefixes, .conns = list_conns, .started_unix = started_unix,
                          .version = KVD_VERSION, .pid = 1, .threads = (uint64_t)gomaxprocs(0),
                          .max_conns = cfg.max_conns, .idle_timeout_s = cfg.idle_ns / 1000000000u,
                          .port = cfg.port };
    env_now(&env);
    set_state(&k, CONN_READ, env.now);
    conn_register(&k);
    for (;;) {
        // Room for what the incomplete command needs (memcached's limits
        // bound it), at least a little more.
        size_t need = k.mc.need > k.len ? k.mc.need : k.len + BUF_MIN;
        if (need > k.cap) {
            size_t n = k.cap ? k.cap : BUF_MIN;
            while (n < need)
                n *= 2;
            if (!netserve_charge(&srv, (int64_t)(n - k.cap))) {
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
        set_state(&k, CONN_PARSE_CMD, env.now);
        size_t used = mc_serve(&k.mc, k.in, k.len, &env, &k.out);
        memmove(k.in, k.in + used, k.len - used);
        k.len -= used;
        // Before the answers go: a client that has read them sees the state.
        __atomic_store_n(&k.state, (uint8_t)(k.mc.in_data ? CONN_NREAD : CONN_READ), __ATOMIC_RELAXED);  // relaxed: a statistic
        if (k.out.broken || !flush(&k.out) || k.mc.closing)
            break;
        if (!k.len && k.cap > 4 * BUF_MIN) {    // a large value went through: give its room back
            netserve_charge(&srv, -(int64_t)k.cap);
            free(k.in);
            k.in = NULL;
            k.cap = 0;
        }
        if (k.out.cap > OUT_FLUSH) {
            netserve_charge(&srv, -(int64_t)k.out.cap);
            free(k.out.buf);
            k.out.buf = NULL;
            k.out.cap = 0;
        }
    }
    if (k.starved) {
        static const char msg[] = "SERVER_ERROR out of memory reading request\r\n";
        netserve_write(&srv, k.c, msg, sizeof msg - 1);
    }
    conn_unregister(&k);
    netserve_charge(&srv, -(int64_t)(k.cap + k.out.cap));
    free(k.in);
    free(k.out.buf);
    netserve_done(&srv, k.c);
}

static int kvd_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;
        bool ok;
        if (!strncmp(a, "port=", 5))
            ok = netserve_number(a + 5, false, &v) && v >= 1 && v <= 65535 && (cfg.port = (uint16_t)v);
        else if (!strncmp(a, "mem=", 4))
            ok = netserve_number(a + 4, false, &v) && v >= (1u << 20) && (cfg.mem = v, true);
        else if (!strncmp(a, "shards=", 7))
            ok = netserve_number(a + 7, false, &v) && v >= 1 && v <= 1024 && !(v & (v - 1)) && (cfg.shards = (uint32_t)v);
        else if (!strncmp(a, "idle_timeout=", 13))
            ok = netserve_number(a + 13, true, &v) && (cfg.idle_ns = v, true);
        else if (!strncmp(a, "write_timeout=", 14))
            ok = netserve_number(a + 14, true, &v) && (cfg.write_ns = v, true);
        else if (!strncmp(a, "max_conns=", 10))
            ok = netserve_number(a + 10, false, &v) && v >= 1 && (cfg.max_conns = v, true);
        else if (!strncmp(a, "unixtime=", 9))
            ok = netserve_number(a + 9, false, &v) && v < (1ull << 40) && (cfg.unixtime = (int64_t)v, true);
        else
            ok = false;
        if (!ok) {
            printf("kvd: %s: expected port=1..65535, mem=SIZE (at least 1m), shards=POWER_OF_2 (1..1024), "
                   "idle_timeout=DURATION, write_timeout=DURATION, max_conns=N, unixtime=SECONDS\n", a);
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
    prefixes = mc_prefixes_create();
    started_ns = nanotime();
    int64_t wall = walltime_ns();
    if (cfg.unixtime) {
        started_unix = cfg.unixtime - 2;
    } else if (wall > 0) {
        // `now` ticks with the clock's seconds, so that an absolute exptime
        // ends when the clock reaches it, not up to a second later.
        started_ns -= (uint64_t)(wall % 1000000000);
        started_unix = wall / 1000000000 - 2;
    }
    // What the table may still take is set aside first.
    free_bytes = page_free_count() * 4096 - cfg.mem;
    srv.budget = free_bytes / 4;
    if (!cfg.max_conns)
        cfg.max_conns = free_bytes / CONN_COST;
    srv.port = cfg.port;
    srv.write_ns = cfg.write_ns;
    srv.max_conns = cfg.max_conns;
    net_listener_t *ln;
    if (netserve_listen(&srv, &ln))
        return 1;
    kv_lock_init(&conns.lock);
    conns.first = NULL;
    conns.next_id = conns.count = 0;
    conns.listen = listener_addr(ln);
    struct kv_stats s;
    kv_stats(table, &s);
    printf("kvd: listening on port %u, %d cores, mem %llu MiB in %u shards over %d nodes\n", cfg.port, gomaxprocs(0),
           (unsigned long long)(cfg.mem >> 20), s.shards, numa_nodes());
    netserve_run(&srv, ln);
    return 1;
}
GORO_APP(kvd, "a memcached-protocol server: port= mem= shards= idle_timeout= write_timeout= max_conns= unixtime=",
         kvd_main);
