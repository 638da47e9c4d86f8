// SPDX-License-Identifier: MIT
// Regression tests for the scheduler defects of issue 11, one or more per
// defect, each failing on the code before its fix. Windows of a few
// instructions are widened with debug builds' delay points
// (kernel/debugdelay.h): each such test names the window it widens, sets
// it itself, and runs without it (as a plain stress of the same path) in
// normal builds. The matrix runs this file in the debug build
// (tests/matrix.py, the race-debug-* configurations).
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "kernel/debugdelay.h"
#include "kernel/irqwait.h"
#include "kernel/cmdline.h"
#include "lib/string.h"

// ---- gosched lets the global queue run -----------------------------------
//
// A G that keeps yielding starved the global queue: 4000 Gs spawned on one
// P (most overflow to the global queue), 80,000 yields later only 3402 had
// run, because the yielder went to its own P's tail and the global queue
// was looked at once per 61 schedules. Go's Gosched puts the yielder on the
// global queue behind them, so one yield lets every one of them run first.

#define YIELD_SPAWN 4000
static uint64_t yield_ran;

static void yield_counted(void *arg)
{
    (void)arg;
    kt_add(&yield_ran, 1);
}

KTEST(race_gosched_yields_to_the_global_queue)
{
    int orig = gomaxprocs(1);
    kt_store(&yield_ran, 0);
    for (int i = 0; i < YIELD_SPAWN; i++)
        go(yield_counted, 0);
    uint64_t yields = 0;
    while (kt_load(&yield_ran) < YIELD_SPAWN && yields < 80000) {
        gosched();
        yields++;
    }
    uint64_t ran = kt_load(&yield_ran);
    gomaxprocs(orig);
    printf("ktest: %lu of %d spawned goroutines ran after %lu yields\n", ran, YIELD_SPAWN, yields);
    KT_ASSERT_EQ(ran, YIELD_SPAWN);
    // Everything queued before the yield runs before the yielder again.
    KT_ASSERT_EQ(yields, 1);
}
