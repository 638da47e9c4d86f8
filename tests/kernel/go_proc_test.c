// SPDX-License-Identifier: MIT
// Go 1.19's src/runtime/proc_test.go, the tests whose property applies to
// goro, in C: each go_TestX checks what Go's TestX checks, with Go's
// parameters (its testing.Short() values where it has them) and
// thresholds. docs/testing.md lists every test of that file, the goro test
// or why it does not apply, and where a port departs from Go.
//
// Go's runtime.GC() stops the world; goro has no collector, so the ports
// that use it as a stop-the-world stop and start the world instead
// (stw_cycle). Go's GOMAXPROCS(n) above the CPU count still runs n
// goroutines at once on OS threads; goro's Ms are cores, so gomaxprocs()
// clamps and the parallelism tests use min(n, num_cpu()) goroutines.
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/runq.h"
#include "kernel/steal_order.h"
#include "lib/string.h"

static void send_true(chan_t *c)
{
    bool v = true;
    chan_send(c, &v);
}

static bool recv_bool(chan_t *c)
{
    bool v = false;
    chan_recv(c, &v);
    return v;
}

// ---- TestPingPongHog -------------------------------------------------------------
//
// On one P, a pair handing a token back and forth after 1e6 increments
// each and a pair doing 1e3: both pairs must hand the P to their partner
// within a time slice, so after 100 ms the counts are within a factor of
// 20. Go skips it in -short mode; it is the test of time slices continued
// through runnext, so it runs here in full. Under TCG a 1e6 batch can
// take longer than a slice (host load decides), and then the hog is
// preempted inside it and the test cannot tell; the deterministic check
// of the same rule is race_runnext_handoffs_continue_the_slice.
#define PPH_HOG 1000000
#define PPH_LIGHT 1000

static struct {
    chan_t *done, *hog_chan, *light_chan;
    volatile int hog_count, light_count;
    waitgroup_t wg;
} pph;

struct pph_arg {
    int limit;
    volatile int *counter;
    chan_t **wake;
};

static void pph_run(void *arg)
{
    struct pph_arg *a = arg;
    for (;;) {
        struct select_case cs[2] = { { pph.done, SELECT_RECV, 0, false },
                                     { *a->wake, SELECT_RECV, 0, false } };
        if (chan_select(cs, 2, true) == 0)
            break;
        for (int i = 0; i < a->limit; i++)
            (*a->counter)++;
        send_true(*a->wake);
    }
    wg_done(&pph.wg);
}

KTEST(go_TestPingPongHog)
{
    int orig = gomaxprocs(1);
    static struct pph_arg hog = { PPH_HOG, &pph.hog_count, &pph.hog_chan };
    static struct pph_arg light = { PPH_LIGHT, &pph.light_count, &pph.light_chan };
    pph.done = chan_make(0, 0);
    pph.hog_chan = chan_make(sizeof(bool), 0);
    pph.light_chan = chan_make(sizeof(bool), 0);
    pph.hog_count = pph.light_count = 0;
    wg_add(&pph.wg, 4);
    for (int i = 0; i < 2; i++)
        go(pph_run, &hog);
    for (int i = 0; i < 2; i++)
        go(pph_run, &light);
    send_true(pph.hog_chan);
    send_true(pph.light_chan);
    sleep_ns(100000000);
    chan_close(pph.done);
    recv_bool(pph.hog_chan);
    recv_bool(pph.light_chan);
    wg_wait(&pph.wg);
    int hog_count = pph.hog_count, light_count = pph.light_count;
    chan_free(pph.done);
    chan_free(pph.hog_chan);
    chan_free(pph.light_chan);
    gomaxprocs(orig);
    printf("ktest: ping-pong hog %d light %d\n", hog_count, light_count);
    const int factor = 20;
    if (hog_count / factor > light_count || light_count / factor > hog_count)
        KT_FAIL("want hog_count/light_count in [1/%d, %d]; got %d/%d", factor, factor, hog_count,
                light_count);
}
