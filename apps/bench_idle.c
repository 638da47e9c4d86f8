// SPDX-License-Identifier: MIT
// app=bench_idle: what a failed look for work costs on an idle machine, in
// instructions. Every P but the main goroutine's is idle; the main
// goroutine sleeps reps times, and each sleep leaves its P with nothing to
// run, so its M looks for work (the steal rounds over the candidate Ps,
// the re-check once it stops spinning, the idle timers' scan) and halts
// until the sleep's timer. The kernel's probe markers bracket each look
// (sched_probe_marks, goro.h); tools/bench/idlelook.py boots this app under
// the insncount plugin at several gomaxprocs and reads the instructions
// between the markers on the core that looked. Markers 1 and 2 bracket the
// whole loop: what every core together executes per sleep, the figure the
// Go peer (tools/bench/idlelook_go) is measured by.
//
// Arguments: reps=N (default 100), sleep_us=N (default 500).
// Output: IDLELOOK impl=goro vcpus=V gomaxprocs=P reps=N sleep_us=S
#include "goro.h"
#include "bench_util.h"

static int bench_idle_main(int argc, char **argv)
{
    uint64_t reps = 100, sleep_us = 500;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool ok = false;
        if (strncmp(a, "reps=", 5) == 0)
            ok = bench_parse_u64(a + 5, &reps) && reps > 0;
        else if (strncmp(a, "sleep_us=", 9) == 0)
            ok = bench_parse_u64(a + 9, &sleep_us) && sleep_us > 0;
        if (!ok) {
            printf("bench_idle: bad argument \"%s\" (reps=N sleep_us=N)\n", a);
            return 2;
        }
    }
    sleep_ns(10 * 1000000);         // the boot's last wake-ups settle
    sched_probe_marks(true);
    BENCH_MARK_BEGIN();             // the whole machine's count per sleep: markers 1 and 2
    for (uint64_t i = 0; i < reps; i++)
        sleep_ns(sleep_us * 1000);
    BENCH_MARK_END();
    sched_probe_marks(false);
    printf("IDLELOOK impl=goro vcpus=%d gomaxprocs=%d reps=%lu sleep_us=%lu\n", num_cpu(), gomaxprocs(0),
           reps, sleep_us);
    return 0;
}
GORO_APP(bench_idle, "a failed look for work on an idle machine, bracketed for insncount "
                     "(reps=N sleep_us=N; tools/bench/idlelook.py)", bench_idle_main);
