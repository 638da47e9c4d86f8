// SPDX-License-Identifier: MIT
// The seeds' timeout example: wait for a result, but no longer than a
// deadline, with select over the result channel and time_after.
#include "goro.h"

struct job {
    uint64_t work_ns;
    chan_t *result;
};

static void worker(void *arg)
{
    struct job *j = arg;
    sleep_ns(j->work_ns);
    uint64_t v = j->work_ns / 1000;
    chan_send(j->result, &v);           // buffered: never blocks, even after a timeout
}

// Returns 1 when the result came first, 0 on timeout.
static int run_one(uint64_t work_ns, uint64_t timeout_ns, uint64_t *waited_ns)
{
    static struct job jobs[8];
    static int next;
    struct job *j = &jobs[next++ % 8];
    j->work_ns = work_ns;
    j->result = chan_make(sizeof(uint64_t), 1);
    uint64_t t0 = nanotime();
    go(worker, j);
    uint64_t got, fired;
    chan_t *deadline = time_after(timeout_ns);
    struct select_case cases[2] = {
        { .c = j->result, .dir = SELECT_RECV, .elem = &got },
        { .c = deadline, .dir = SELECT_RECV, .elem = &fired },
    };
    int which = chan_select(cases, 2, true);
    *waited_ns = nanotime() - t0;
    return which == 0;
}

static int timeout_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    int bad = 0;
    uint64_t waited;
    // fast work, generous deadline: the result wins. Generous means more
    // than any stall of a loaded host: with a 50 ms deadline, a host that
    // stopped this VM for 50 ms before the worker ran let the deadline win.
    for (int i = 0; i < 3; i++)
        if (!run_one(1000000, 10000000000ull, &waited)) {
            printf("demo_timeout: a 1 ms job lost to a 10 s deadline\n");
            bad++;
        }
    // slow work, short deadline: the timeout wins, on time
    for (int i = 0; i < 3; i++) {
        if (run_one(100000000, 5000000, &waited)) {
            printf("demo_timeout: a 100 ms job beat a 5 ms deadline\n");
            bad++;
        } else if (waited < 5000000) {
            printf("demo_timeout: timed out early, after %lu us\n", waited / 1000);
            bad++;
        }
    }
    // a ticker's i-th tick is never before start + i periods, and ticks
    // come in order
    uint64_t start = nanotime(), prev = 0, t;
    ticker_t *tk = ticker_new(2000000);
    for (uint64_t i = 1; i <= 5; i++) {
        chan_recv(ticker_chan(tk), &t);
        if (t < start + i * 2000000 || t < prev) {
            printf("demo_timeout: tick %lu at %lu us, due no earlier than %lu us\n", i,
                   (t - start) / 1000, i * 2000);
            bad++;
        }
        prev = t;
    }
    ticker_free(tk);
    printf("demo_timeout: %s\n", bad ? "FAILED" : "results before deadlines, timeouts on time, ticks in order");
    return bad ? 1 : 0;
}
GORO_APP(demo_timeout, "a result or a timeout: select with time_after, and a ticker", timeout_main);
