// SPDX-License-Identifier: MIT
// goro's own benchmarks in go test's format (package "goro"): workloads
// that are not in Go's test files but that goro's performance notes rest
// on. SpawnBatch/B is the spawn peer of tests/peers (B empty goroutines
// started, then waited for) with the wait by yielding, at batch sizes on
// both sides of the 256-slot run queue: an op is one spawn, run and exit.
// KnownWork is the instruction counts' yardstick: its op is exactly
// 2 * KNOWN_WORK_ROUNDS instructions of work under b.RunParallel, and its
// Go twin (tools/bench/knownwork_go) the same. TCP4Persistent is Go's net
// benchmark of that name (tcpsock_test.go, benchmarkTCP with persistent
// connections) over goro's lwIP on the loopback interface: GOMAXPROCS*2
// connections, each doing b.N / conns round trips of 512 bytes; the stack
// lock's cost shows in its insn/op from 1 to 8 Ps (docs/design.md).
#include "goro.h"
#include "gobench.h"

// ---- KnownWork: a RunParallel loop of known length --------------------------

#define KNOWN_WORK_ROUNDS 5000      // knownwork_test.go's Rounds

static void known_work_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        uint64_t r = KNOWN_WORK_ROUNDS;
        __asm__ volatile("1: dec %0; jnz 1b" : "+r"(r));   // 2 instructions a round
    }
}

static void bench_known_work(struct gb *b)
{
    gb_run_parallel(b, known_work_body, 0);
}

// ---- SpawnBatch -----------------------------------------------------------------

static uint64_t spawned_done;

static void empty_g(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&spawned_done, 1, __ATOMIC_RELEASE);    // release: pairs with the waiter's acquire
}

static void spawn_batch(struct gb *b, uint64_t batch)
{
    gb_start(b);
    for (uint64_t i = 0; i < b->n; i += batch) {
        uint64_t k = b->n - i < batch ? b->n - i : batch;
        __atomic_store_n(&spawned_done, 0, __ATOMIC_RELAXED);  // no G of the last batch is left to add to it
        for (uint64_t j = 0; j < k; j++)
            go(empty_g, 0);
        while (__atomic_load_n(&spawned_done, __ATOMIC_ACQUIRE) < k)
            gosched();
    }
    gb_stop(b);
}

#define BATCH(n) static void bench_spawn_batch_##n(struct gb *b) { spawn_batch(b, n); }
BATCH(10)
BATCH(100)
BATCH(300)
BATCH(1000)
BATCH(3000)
BATCH(10000)

// ---- TCP4Persistent: Go's net benchmark over the loopback interface ---------

#define TCP_MSG_LEN 512

struct tcp_bench {
    net_listener_t *ln;
    uint64_t msgs;
    waitgroup_t clients, servers;
    uint16_t port;
    uint32_t failures;
};

static bool tcp_send(net_conn_t *c, uint8_t *buf)
{
    return conn_write(c, buf, TCP_MSG_LEN) == TCP_MSG_LEN;
}

static bool tcp_recv(net_conn_t *c, uint8_t *buf)
{
    for (size_t got = 0; got != TCP_MSG_LEN;) {
        long n = conn_read(c, buf + got, TCP_MSG_LEN - got);
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

struct tcp_server_arg {
    struct tcp_bench *t;
    net_conn_t *c;
};

static void tcp_server(void *arg)
{
    struct tcp_server_arg *a = arg;
    uint8_t buf[TCP_MSG_LEN];
    for (uint64_t m = 0; m < a->t->msgs; m++)
        if (!tcp_recv(a->c, buf) || !tcp_send(a->c, buf))
            break;
    conn_free(a->c);
    wg_done(&a->t->servers);
    free(a);
}

static void tcp_acceptor(void *arg)
{
    struct tcp_bench *t = arg;
    net_conn_t *c;
    while (listener_accept(t->ln, &c) == 0) {
        struct tcp_server_arg *a = malloc(sizeof *a);
        *a = (struct tcp_server_arg){ t, c };
        wg_add(&t->servers, 1);
        go(tcp_server, a);
    }
    wg_done(&t->servers);
}

static void tcp_client(void *arg)
{
    struct tcp_bench *t = arg;
    char addr[32];
    uint8_t buf[TCP_MSG_LEN] = { 0 };
    net_conn_t *c;
    snprintf(addr, sizeof addr, "127.0.0.1:%u", t->port);
    if (net_dial("tcp", addr, &c) == 0) {
        for (uint64_t m = 0; m < t->msgs; m++)
            if (!tcp_send(c, buf) || !tcp_recv(c, buf)) {
                __atomic_fetch_add(&t->failures, 1, __ATOMIC_RELAXED);     // relaxed: a count read after wg_wait
                break;
            }
        conn_free(c);
    } else {
        __atomic_fetch_add(&t->failures, 1, __ATOMIC_RELAXED);             // relaxed: a count read after wg_wait
    }
    wg_done(&t->clients);
}

static void bench_tcp4_persistent(struct gb *b)
{
    struct tcp_bench t = { .clients = WAITGROUP_INIT, .servers = WAITGROUP_INIT };
    uint64_t conns = (uint64_t)gomaxprocs(0) * 2;
    t.msgs = b->n / conns ? b->n / conns : 1;
    if (conns > b->n)
        conns = b->n;
    if (net_listen("tcp", "127.0.0.1:0", &t.ln)) {
        gb_skip(b, "net_listen failed");
        return;
    }
    t.port = listener_addr(t.ln).port;
    wg_add(&t.servers, 1);
    go(tcp_acceptor, &t);
    gb_start(b);
    wg_add(&t.clients, (int)conns);
    for (uint64_t i = 0; i < conns; i++)
        go(tcp_client, &t);
    wg_wait(&t.clients);
    gb_stop(b);
    listener_close(t.ln);
    wg_wait(&t.servers);
    listener_free(t.ln);
    if (t.failures)
        printf("TCP4Persistent: %u of %lu connections failed\n", t.failures, (unsigned long)conns);
}

const struct gobench gobench_goro[] = {
    { "KnownWork", 2000, bench_known_work },
    { "SpawnBatch/10", 20000, bench_spawn_batch_10 },
    { "SpawnBatch/100", 20000, bench_spawn_batch_100 },
    { "SpawnBatch/300", 20000, bench_spawn_batch_300 },
    { "SpawnBatch/1000", 20000, bench_spawn_batch_1000 },
    { "SpawnBatch/3000", 20000, bench_spawn_batch_3000 },
    { "SpawnBatch/10000", 20000, bench_spawn_batch_10000 },
    { "TCP4Persistent", 2000, bench_tcp4_persistent },
    { 0 },
};
