// SPDX-License-Identifier: MIT
// app=flightrec [ms=N] [quiet=1]: the flight recorder while the machine
// runs. Pairs of goroutines ping-pong over unbuffered channels on every
// core; after 200 ms main starts four short goroutines (flightrec_marker:
// the dump's GoCreate events name it) and prints the last N ms (default
// 50) of the event trace with trace_dump_recent, then stops the pairs and
// returns (the whole trace is printed again at exit). quiet=1 stops the
// pairs first and dumps 20 ms after the markers: only a window reaching
// that far back holds them. Boot with trace=1.
#include "goro.h"

static bool stop;
static waitgroup_t wg, markers;

static void flightrec_marker(void *arg)
{
    (void)arg;
    wg_done(&markers);
}

static void start_markers(void)
{
    wg_add(&markers, 4);
    for (int i = 0; i < 4; i++)
        go(flightrec_marker, 0);
}

struct pair {
    chan_t *ping, *pong;
};

static void pinger(void *arg)
{
    struct pair *p = arg;
    int v = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {     // relaxed: a flag polled each round
        chan_send(p->ping, &v);
        chan_recv(p->pong, &v);
    }
    v = -1;
    chan_send(p->ping, &v);
    wg_done(&wg);
}

static void ponger(void *arg)
{
    struct pair *p = arg;
    int v;
    for (;;) {
        chan_recv(p->ping, &v);
        if (v < 0)
            break;
        v++;
        chan_send(p->pong, &v);
    }
    wg_done(&wg);
}

static int flightrec_main(int argc, char **argv)
{
    uint64_t ms = 50;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "ms=", 3) == 0) {
            ms = 0;
            for (const char *d = argv[i] + 3; *d >= '0' && *d <= '9'; d++)    // saturates
                ms = ms > (UINT64_MAX - 9) / 10 ? UINT64_MAX : ms * 10 + (uint64_t)(*d - '0');
        }
        quiet |= strcmp(argv[i], "quiet=1") == 0;
    }
    static struct pair pairs[8];
    int n = num_cpu() < 8 ? num_cpu() : 8;
    wg_add(&wg, 2 * n);
    for (int i = 0; i < n; i++) {
        pairs[i].ping = chan_make(sizeof(int), 0);
        pairs[i].pong = chan_make(sizeof(int), 0);
        go(pinger, &pairs[i]);
        go(ponger, &pairs[i]);
    }
    sleep_ns(200 * 1000000ull);
    if (quiet) {
        __atomic_store_n(&stop, true, __ATOMIC_RELAXED);    // relaxed: the pairs poll it
        wg_wait(&wg);
        start_markers();
        wg_wait(&markers);
        sleep_ns(20 * 1000000ull);
        printf("flightrec: the last %lu ms, 20 ms after the markers started, the pairs stopped\n", ms);
        trace_dump_recent(ms);
    } else {
        // Pinned from the markers' start to the dump's copies: a main
        // preempted in between waits a time slice or more for a core, in
        // which the pairs lap its ring; and one resumed on another core
        // takes the dump's end time from that core's TSC, which may be
        // behind the one that stamped the markers' GoCreate events, and
        // leaves them out as written after the dump began.
        printf("flightrec: the last %lu ms, while %d pairs run\n", ms, n);
        preempt_disable();
        start_markers();
        trace_dump_recent(ms);
        preempt_enable();
        wg_wait(&markers);
        __atomic_store_n(&stop, true, __ATOMIC_RELAXED);    // relaxed: the pairs poll it
        wg_wait(&wg);
    }
    printf("flightrec: ok\n");
    return 0;
}
GORO_APP(flightrec, "ping-pong pairs; trace_dump_recent(ms) while they run (trace=1; ms=N)",
         flightrec_main);
