// SPDX-License-Identifier: MIT
// kvd's connections on the host (apps/kvd/kvd.c, whole, over its real
// parser and table): kvd_main's arguments and accept loop and each
// connection's goroutine, over the scripted network and virtual clock of
// fakenet.h. The protocol's answers themselves are test_kvd's (memcached's
// transcripts); here, what a connection does with them: commands split
// anywhere, a value of 1 MB in pieces, one too large, nonsense, a line
// with no end (hung up on), quit, a half-close, a failed write, a client
// that never reads (closed at write_timeout), the idle timeout, the buffer
// budget and max_conns, exptimes as Unix times. After every case no budget
// is left charged and no connection counted open.
#include "check.h"
#include "apps/kvd/kvd.c"

#include "fakenet.h"

int kv_host_nodes = 1;

static const __typeof__(cfg) cfg_default_copy = { 11211, 64u << 20, 0, 60000000000ull, 0, 0, 0 };

static int run(const char *args)
{
    cfg = cfg_default_copy;
    int st = fake_run(kvd_app_main, "kvd", args);
    if (table) {
        kv_destroy(table);
        mc_prefixes_destroy(prefixes);
        table = NULL;
        prefixes = NULL;
    }
    return st;
}

static void check_clean(void)
{
    fake_check_conns();
    CHECKF(srv.open == 0, "%llu connections still counted open", (unsigned long long)srv.open);
    CHECKF(srv.buf_bytes == 0, "%llu bytes of budget still charged", (unsigned long long)srv.buf_bytes);
}

static bool out_is(const struct net_conn *c, const char *want)
{
    return c->out ? !strcmp(c->out, want) : !*want;
}


static void set_get(void)
{
    fake_reset();
    static const struct step s[] = { { 0, "set k 0 0 5\r\nhello\r\nget k\r\n", 0 } };
    struct net_conn *c = conn(s, 1, true);
    CHECK(run("") == 1);
    CHECKF(out_is(c, "STORED\r\nVALUE k 0 5\r\nhello\r\nEND\r\n"), "%s", c->out ? c->out : "(none)");
    check_clean();
}

static void byte_at_a_time(void)
{
    fake_reset();
    static const char cmds[] = "set k 7 0 5 noreply\r\nhello\r\nappend k 0 0 1\r\n!\r\ngets k\r\nincr n 1\r\n";
    static struct step s[sizeof cmds - 1];
    for (size_t i = 0; i < sizeof cmds - 1; i++)
        s[i] = (struct step){ i * MS, cmds + i, 1 };
    struct net_conn *c = conn(s, (int)(sizeof cmds - 1), true);
    run("");
    CHECKF(c->out && !strncmp(c->out, "STORED\r\nVALUE k 7 6 ", 20) && strstr(c->out, "\r\nhello!\r\nEND\r\nNOT_FOUND\r\n"),
           "%s", c->out ? c->out : "(none)");
    check_clean();
}

// A value of 1,000,000 bytes in 64 KiB pieces is stored and read back
// whole; the buffers grown for it are given back.
static void big_value(void)
{
    fake_reset();
    enum { N = 1000000, PIECE = 65536 };
    static char req[N + 64];
    int h = snprintf(req, sizeof req, "set big 0 0 %d\r\n", N);
    for (int i = 0; i < N; i++)
        req[h + i] = (char)('a' + i % 26);
    memcpy(req + h + N, "\r\nget big\r\n", 11);
    size_t total = (size_t)h + N + 11;
    static struct step s[N / PIECE + 2];
    int n = 0;
    for (size_t off = 0; off < total; off += PIECE, n++)
        s[n] = (struct step){ (uint64_t)n * MS, req + off, total - off < PIECE ? total - off : PIECE };
    struct net_conn *c = conn(s, n, true);
    run("");
    char head[64];
    int hl = snprintf(head, sizeof head, "STORED\r\nVALUE big 0 %d\r\n", N);
    CHECKF(c->olen == (size_t)hl + N + 7 && !memcmp(c->out, head, (size_t)hl) && !memcmp(c->out + hl, req + h, N) &&
           !memcmp(c->out + hl + N, "\r\nEND\r\n", 7), "%zu bytes back", c->olen);
    check_clean();
}

// A value over the item limit is refused and swallowed, whole; the
// connection goes on.
static void too_large(void)
{
    fake_reset();
    static char req[2100000];
    int h = snprintf(req, sizeof req, "set k 0 0 2000000\r\n");
    memset(req + h, 'x', 2000000);
    memcpy(req + h + 2000000, "\r\nget k\r\n", 9);
    static struct step s[1];
    s[0] = (struct step){ 0, req, (size_t)h + 2000000 + 9 };
    struct net_conn *c = conn(s, 1, true);
    run("");
    CHECKF(out_is(c, "SERVER_ERROR object too large for cache\r\nEND\r\n"), "%s", c->out ? c->out : "(none)");
    check_clean();
}

// Nonsense gets memcached's error lines and the connection stays; a line
// that never ends is hung up on once it passes the line limit, before
// the server has read all of it.
static void nonsense(void)
{
    fake_reset();
    static const struct step s1[] = { { 0, "blah\r\nset k\r\nincr\r\n\r\nversion\r\n", 0 } };
    static char endless[1 << 20];
    memset(endless, 'a', sizeof endless);
    static struct step s2[16];
    for (int i = 0; i < 16; i++)
        s2[i] = (struct step){ (uint64_t)i * MS, endless, sizeof endless };
    struct net_conn *c1 = conn(s1, 1, true), *c2 = conn(s2, 16, false);
    run("");
    CHECKF(c1->out && !strncmp(c1->out, "ERROR\r\nERROR\r\nERROR\r\nERROR\r\nVERSION ", 36), "%s",
           c1->out ? c1->out : "(none)");
    CHECKF(c2->i < 2 && c2->olen == 0, "read %d MiB of one line, answered %zu bytes", c2->i, c2->olen);
    check_clean();
}

// quit: answers before it sent, nothing after it read as a command.
static void quit_and_half_close(void)
{
    fake_reset();
    static const struct step s1[] = { { 0, "version\r\nquit\r\nversion\r\n", 0 } };
    static const struct step s2[] = { { 0, "get a\r\n", 0 }, { MS, "get b", 0 } };
    struct net_conn *c1 = conn(s1, 1, false), *c2 = conn(s2, 2, true);
    run("");
    CHECKF(c1->out && !strncmp(c1->out, "VERSION ", 8) && !strstr(c1->out + 8, "VERSION"), "%s",
           c1->out ? c1->out : "(none)");
    CHECKF(out_is(c2, "END\r\n"), "%s", c2->out ? c2->out : "(none)");
    check_clean();
}

static void write_fails(void)
{
    fake_reset();
    static const struct step s[] = { { 0, "version\r\n", 0 }, { MS, "version\r\n", 0 }, { 2 * MS, "version\r\n", 0 } };
    struct net_conn *c = conn(s, 3, true);
    c->write_fail_at = 1;
    run("");
    CHECKF(c->writes == 1, "%d writes after a failed one", c->writes);
    check_clean();
}

// idle_timeout=5s: a silent connection closes at 5 s. (Without it kvd,
// as memcached, waits for a client forever: not checked here.)
// A client that sends and never reads: the write waits its deadline, then
// the connection closes; write_timeout=0 would leave it waiting forever.
static void never_reads(void)
{
    fake_reset();
    static const struct step s[] = { { 0, "version\r\nversion\r\n", 0 } };
    struct net_conn *c = conn(s, 1, false);
    c->unread = true;
    run("write_timeout=30s");
    CHECKF(c->writes == 1, "%d writes", c->writes);
    CHECKF(c->closed && c->closed_at >= 30 * SEC && c->closed_at < 31 * SEC, "closed at %llu ms",
           (unsigned long long)(c->closed_at / MS));
    check_clean();
}

static void idle(void)
{
    fake_reset();
    static const struct step s[] = { { 0, "version\r\n", 0 } };
    struct net_conn *c = conn(s, 1, false);
    run("idle_timeout=5s");
    CHECKF(c->closed_at >= 5 * SEC && c->closed_at < 6 * SEC, "closed at %llu ms",
           (unsigned long long)(c->closed_at / MS));
    check_clean();
}

// 16 MiB free: mem=1m leaves a budget of under 4 MiB for buffers and
// max_conns of a few hundred; max_conns=2 makes the third connection
// refused with memcached's line, and a value needing more buffer than the
// budget ends its connection with memcached's out-of-memory line.
static void limits(void)
{
    fake_reset();
    static char req[4200000];
    int h = snprintf(req, sizeof req, "set k 0 0 1000000\r\n");
    memset(req + h, 'x', 1000000);
    static struct step big[1];
    big[0] = (struct step){ 0, req, (size_t)h + 1000000 };
    static const struct step s[] = { { 0, "version\r\n", 0 } };
    struct net_conn *a = conn(s, 1, true), *b = conn(s, 1, true), *c = conn(s, 1, true);
    free_pages = 4096;
    run("mem=1m max_conns=2");
    CHECK(a->out && !strncmp(a->out, "VERSION ", 8));
    CHECK(b->out && !strncmp(b->out, "VERSION ", 8));
    CHECKF(out_is(c, "ERROR Too many open connections\r\n"), "%s", c->out ? c->out : "(none)");
    check_clean();
    fake_reset();
    struct net_conn *d = conn(big, 1, true);
    free_pages = 1024;              // 4 MiB: mem=1m, a budget of 3/4 MiB
    run("mem=1m");
    CHECKF(out_is(d, "SERVER_ERROR out of memory reading request\r\n"), "%s", d->out ? d->out : "(none)");
    check_clean();
}

// Absolute exptimes against the machine's clock, which reads
// 1700000000.6 s when kvd starts: the item expiring at 1700000002 is read
// at 1700000001.9 and gone at 1700000002.1 (kvd's seconds tick with the
// clock's); one set to expire in the past is never read. stats' time is
// the clock's second.
static void wall_clock(void)
{
    fake_reset();
    static const struct step s[] = {
        { 0, "set a 0 1700000002 1\r\nx\r\nset p 0 1699999990 1\r\ny\r\nget a p\r\n", 0 },
        { 1300 * MS, "get a\r\n", 0 },
        { 1500 * MS, "get a\r\n", 0 },
    };
    static const struct step st[] = { { 0, "stats\r\n", 0 } };
    struct net_conn *d = conn(st, 1, true), *c = conn(s, 3, true);     // d's goroutine runs first
    fake_wall_ns = 1700000000600000000ll - (int64_t)now_ns;
    CHECK(run("") == 1);
    CHECKF(out_is(c, "STORED\r\nSTORED\r\nVALUE a 0 1\r\nx\r\nEND\r\nVALUE a 0 1\r\nx\r\nEND\r\nEND\r\n"), "%s",
           c->out ? c->out : "(none)");
    const char *t = d->out ? strstr(d->out, "STAT time ") : NULL;
    CHECKF(t && !strncmp(t, "STAT time 1700000000\r\n", 22), "%.24s", t ? t : "(none)");
    check_clean();
}

// stats conns: the listener, then the connection asking (reading its
// command: conn_parse_cmd), as memcached lists them.
static void stats_conns(void)
{
    fake_reset();
    static const struct step s[] = { { 0, "stats conns\r\n", 0 } };
    struct net_conn *c = conn(s, 1, true);
    CHECK(run("") == 1);
    CHECKF(out_is(c, "STAT 0:addr tcp:0.0.0.0:11211\r\nSTAT 0:state conn_listening\r\nSTAT 0:secs_since_last_cmd 0\r\n"
                     "STAT 1:addr tcp:127.0.0.1:40000\r\nSTAT 1:listen_addr tcp:0.0.0.0:11211\r\n"
                     "STAT 1:state conn_parse_cmd\r\nSTAT 1:secs_since_last_cmd 0\r\nEND\r\n"),
           "%s", c->out ? c->out : "(none)");
    check_clean();
}

static void arguments(void)
{
    fake_reset();
    CHECK(run("mem=0") == 2);
    CHECK(run("shards=3") == 2);
    CHECK(run("port=65536") == 2);
    CHECK(run("idle_timeout=1d") == 2);
    CHECK(run("mem=200m") == 2);    // over half of the 256 MiB free
    CHECK(run("port=11311 mem=8m shards=4 idle_timeout=250ms max_conns=7 unixtime=1700000000") == 1);
    CHECK(cfg.port == 11311 && cfg.mem == 8u << 20 && cfg.shards == 4 && cfg.idle_ns == 250 * MS &&
          cfg.max_conns == 7 && cfg.unixtime == 1700000000);
    CHECK(run("idle_timeout=2m") == 1 && cfg.idle_ns == 120 * SEC);
    CHECK(run("write_timeout=0") == 1 && cfg.write_ns == 0);
    CHECK(run("write_timeout=5") == 1 && cfg.write_ns == 5 * SEC);
    CHECK(run("write_timeout=-1") == 2);
    check_clean();
}

int main(void)
{
    RUN(set_get);
    RUN(byte_at_a_time);
    RUN(big_value);
    RUN(too_large);
    RUN(nonsense);
    RUN(quit_and_half_close);
    RUN(write_fails);
    RUN(never_reads);
    RUN(idle);
    RUN(limits);
    RUN(wall_clock);
    RUN(stats_conns);
    RUN(arguments);
    fake_reset();
    return check_failed_total != 0;
}
