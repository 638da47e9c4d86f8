// SPDX-License-Identifier: MIT
// The seeds' "web server": requests arrive at a steady rate, each handled
// by a goroutine of its own (as net/http does); 20% do heavy computation,
// 80% answer at once. Handlers reply on a channel; latency is arrival to
// reply, reported per class. With more cores, idle Ps steal the handlers
// queued behind a heavy one, which keeps light requests fast.
// Checks: every request answered once, heavy results correct.
#include "goro.h"

#define REQUESTS 1000
#define ARRIVAL_NS 20000ull         // one request every 20 us
#define HEAVY_ITERS 200000u

struct request {
    uint32_t id;
    bool heavy;
    uint64_t arrived;
    chan_t *reply;
};

struct response {
    uint32_t id;
    bool heavy;
    uint64_t latency_ns;
    uint64_t result;
};

static uint64_t compute_heavy(uint32_t n)
{
    uint64_t r = 0;
    for (uint32_t i = 0; i < n; i++) {
        r += i;
        __asm__ volatile("" : "+r"(r));     // no closed form: do the work
    }
    return r;
}

static struct request reqs[REQUESTS];

static void handler(void *arg)
{
    struct request *r = arg;
    struct response resp = { r->id, r->heavy, 0, 0 };
    resp.result = r->heavy ? compute_heavy(HEAVY_ITERS) : 42;
    resp.latency_ns = nanotime() - r->arrived;
    chan_send(r->reply, &resp);
}

struct server {
    chan_t *conns;              // accepted requests
    chan_t *reply;
};

// The accept loop: one goroutine per request.
static void serve(void *arg)
{
    struct server *s = arg;
    struct request *r;
    while (chan_recv(s->conns, &r))
        go(handler, r);
}

static void report(const char *cls, uint64_t *lat, int n)
{
    if (!n)
        return;
    sort_u64(lat, n);
    printf("webserver: %-5s n=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f\n", cls, n,
           lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3, lat[n - 1] / 1e3);
}

static int webserver_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    static struct server s;
    static uint64_t lat_heavy[REQUESTS], lat_light[REQUESTS];
    static uint8_t answered[REQUESTS];
    s.conns = chan_make(sizeof(struct request *), 64);
    s.reply = chan_make(sizeof(struct response), REQUESTS);
    go(serve, &s);

    uint32_t x = 2463534242u;
    uint64_t next = nanotime();
    for (uint32_t i = 0; i < REQUESTS; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        while (nanotime() < next)
            gosched();                      // the client waits for the next arrival
        next += ARRIVAL_NS;
        reqs[i] = (struct request){ i, x % 100 < 20, nanotime(), s.reply };
        struct request *r = &reqs[i];
        chan_send(s.conns, &r);
    }
    chan_close(s.conns);

    int nh = 0, nl = 0, bad = 0;
    uint64_t want = (uint64_t)HEAVY_ITERS * (HEAVY_ITERS - 1) / 2;
    for (int i = 0; i < REQUESTS; i++) {
        struct response resp;
        chan_recv(s.reply, &resp);
        if (resp.id >= REQUESTS || answered[resp.id]++ ||
            resp.result != (resp.heavy ? want : 42)) {
            bad++;
            continue;
        }
        if (resp.heavy)
            lat_heavy[nh++] = resp.latency_ns;
        else
            lat_light[nl++] = resp.latency_ns;
    }
    printf("webserver: %d requests (%d heavy, %d light) on %d cores, one every %llu us\n", REQUESTS, nh,
           nl, gomaxprocs(0), ARRIVAL_NS / 1000);
    report("heavy", lat_heavy, nh);
    report("light", lat_light, nl);
    if (bad || nh + nl != REQUESTS) {
        printf("webserver: FAIL: %d bad or duplicate responses\n", bad);
        return 1;
    }
    printf("webserver: ok\n");
    return 0;
}
GORO_APP(demo_webserver, "seeds: 20% heavy / 80% light requests, latency per class",
         webserver_main);
