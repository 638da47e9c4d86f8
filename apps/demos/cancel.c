// SPDX-License-Identifier: MIT
// The seeds' goroutine-leak example, fixed with a done channel: the
// producer selects between sending the next value and the done channel
// (context.WithCancel's Done), so closing done ends it wherever it blocks.
// A second part cancels a pool of busy loops that poll done with a
// default case. Checks: the consumer gets the first values in order, every
// goroutine exits after the cancel.
#include "goro.h"

struct gen {
    chan_t *out, *done;
    waitgroup_t wg;
    uint64_t sent;
    bool cancelled;
};

static void generator(void *arg)
{
    struct gen *g = arg;
    for (uint64_t i = 0; i < 100; i++) {
        struct select_case cs[2] = {
            { .c = g->out, .dir = SELECT_SEND, .elem = &i },
            { .c = g->done, .dir = SELECT_RECV },
        };
        if (chan_select(cs, 2, true) == 1) {
            g->cancelled = true;
            break;
        }
        g->sent++;
    }
    if (!g->cancelled)
        chan_close(g->out);
    wg_done(&g->wg);
}

struct spinner {
    chan_t *done;
    waitgroup_t wg;
    uint64_t rounds;
};

static void busy(void *arg)
{
    struct spinner *s = arg;
    for (;;) {
        struct select_case cs[1] = { { .c = s->done, .dir = SELECT_RECV } };
        if (chan_select(cs, 1, false) == 0)
            break;              // cancelled
        __atomic_fetch_add(&s->rounds, 1, __ATOMIC_RELAXED);
        gosched();              // default: "do something repeatedly"
    }
    wg_done(&s->wg);
}

static int cancel_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    int before = num_goroutine();
    bool ok = true;

    static struct gen g;
    g.out = chan_make(sizeof(uint64_t), 0);
    g.done = chan_make(0, 0);
    wg_add(&g.wg, 1);
    go(generator, &g);
    for (uint64_t want = 0; want < 3; want++) {
        uint64_t v;
        if (!chan_recv(g.out, &v) || v != want)
            ok = false;
    }
    chan_close(g.done);             // cancel(): the generator is parked in its select
    wg_wait(&g.wg);
    printf("cancel: generator sent %lu values, cancelled=%d\n", g.sent, g.cancelled);
    ok = ok && g.cancelled && g.sent == 3;

    static struct spinner s;
    s.done = chan_make(0, 0);
    wg_add(&s.wg, 8);
    for (int i = 0; i < 8; i++)
        go(busy, &s);
    while (__atomic_load_n(&s.rounds, __ATOMIC_RELAXED) < 1000)
        gosched();
    chan_close(s.done);
    wg_wait(&s.wg);
    printf("cancel: 8 busy goroutines stopped after %lu rounds\n", s.rounds);

    // goroutines finish exiting just after their wg_done (on other cores,
    // which an overcommitted host may be slow to run)
    for (uint64_t end = nanotime() + 10000000000ull; num_goroutine() > before && nanotime() < end;)
        gosched();
    printf("cancel: goroutines %d -> %d\n", before, num_goroutine());
    // <=: a straggler of an earlier demo may finish exiting meanwhile; what
    // matters is that none of ours is left.
    ok = ok && num_goroutine() <= before;
    chan_free(g.out);
    chan_free(g.done);
    chan_free(s.done);
    printf("cancel: %s\n", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}
GORO_APP(demo_cancel, "seeds: cancellation with select and a done channel", cancel_main);
