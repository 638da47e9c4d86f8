// SPDX-License-Identifier: MIT
// The seeds' channel-buffering example: a producer sends 0..N-1 and closes,
// the consumer ranges over the channel; unbuffered against a 100-slot
// buffer. Checks: values arrive in order, none lost; prints both times.
#include "goro.h"

#define N 20000

struct pc {
    chan_t *c;
    uint64_t sent;
};

static void producer(void *arg)
{
    struct pc *p = arg;
    for (uint64_t i = 0; i < N; i++) {
        chan_send(p->c, &i);
        p->sent++;
    }
    chan_close(p->c);
}

static bool run(size_t cap, uint64_t *ns)
{
    struct pc p = { chan_make(sizeof(uint64_t), cap), 0 };
    uint64_t t0 = nanotime();
    go(producer, &p);
    uint64_t v, want = 0;
    bool ok = true;
    while (chan_recv(p.c, &v)) {        // `for v := range ch`
        if (v != want)
            ok = false;
        want++;
    }
    *ns = nanotime() - t0;
    chan_free(p.c);
    return ok && want == N;
}

static int prodcons_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint64_t t_unbuf, t_buf;
    bool a = run(0, &t_unbuf);
    bool b = run(100, &t_buf);
    printf("prodcons: %d values: unbuffered %lu ns/value, buffered(100) %lu ns/value\n", N,
           t_unbuf / N, t_buf / N);
    if (!a || !b) {
        printf("prodcons: FAIL: values lost or out of order (unbuffered %s, buffered %s)\n",
               a ? "ok" : "bad", b ? "ok" : "bad");
        return 1;
    }
    printf("prodcons: ok\n");
    return 0;
}
GORO_APP(demo_prodcons, "seeds: producer/consumer over unbuffered and buffered channels",
         prodcons_main);
