// SPDX-License-Identifier: MIT
// The trace hooks patched in and out while every P runs goroutines through
// the hooked paths (arch/static_branch.c's static_branch_set_live, the
// shell's "trace on|off"): nothing may crash or hang, no goroutine may be
// lost, and each change must find every site where the last one left it.
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/trace.h"
#include "kernel/page.h"
#include "lib/printf.h"

#define TOGGLES 20

static uint64_t churn_stop, churn_done, spawned, ran;

static void tiny(void *arg)
{
    (void)arg;
    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

// Spawns, yields and parks on a channel with a partner: GoCreate, GoStart,
// GoEnd, GoPark and GoUnpark sites all run while they are changed.
static void churn(void *arg)
{
    chan_t *c = arg;
    while (!kt_load(&churn_stop)) {
        go(tiny, 0);
        __atomic_fetch_add(&spawned, 1, __ATOMIC_RELAXED);
        gosched();
        chan_send(c, 0);
    }
    chan_close(c);
    __atomic_fetch_add(&churn_done, 1, __ATOMIC_RELEASE);
}

static void partner(void *arg)
{
    chan_t *c = arg;
    while (chan_recv(c, 0))
        ;
    __atomic_fetch_add(&churn_done, 1, __ATOMIC_RELEASE);
}

KTEST(trace_hooks_toggle_live_under_load)
{
    if (trace_key.enabled)
        KT_SKIP("trace=1: the hooks stay in for the boot's own trace");
    int pairs = gomaxprocs(0);
    chan_t *chans[MAX_CPUS];
    kt_store(&churn_stop, 0);
    kt_store(&churn_done, 0);
    kt_store(&spawned, 0);
    kt_store(&ran, 0);
    for (int i = 0; i < pairs; i++) {
        chans[i] = chan_make(0, 0);
        go(churn, chans[i]);
        go(partner, chans[i]);
    }
    uint64_t stale0, traps0 = static_branch_traps(&stale0);
    struct arch_tlb_stats tlb0, tlb;
    arch_tlb_stats(&tlb0);
    int sites = -1;
    for (int i = 0; i < TOGGLES; i++) {
        int n = trace_set_hooks(i % 2 == 0);
        if (sites < 0)
            sites = n;
        if (n != sites || n <= 0)
            KT_FAIL("toggle %d changed %d sites, the first changed %d", i, n, sites);
        trace_set_recording(i % 2 == 0);
        sleep_ns(1000000);          // let the churn run through the new state
    }
    trace_set_recording(false);
    KT_ASSERT_EQ(trace_set_hooks(false), 0);   // out already: nothing to change
    kt_store(&churn_stop, 1);
    if (!kt_wait_count(&churn_done, (uint64_t)(2 * pairs), 30000))
        KT_FAIL("only %lu of %d goroutines finished", kt_load(&churn_done), 2 * pairs);
    if (!kt_wait_count(&ran, kt_load(&spawned), 30000))
        KT_FAIL("%lu of %lu spawned goroutines ran", kt_load(&ran), kt_load(&spawned));
    for (int i = 0; i < pairs; i++)
        chan_free(chans[i]);
    uint64_t stale, traps = static_branch_traps(&stale);
    arch_tlb_stats(&tlb);
    uint64_t shots = tlb.shootdowns - tlb0.shootdowns;
    // Each change syncs every core through a shoot-down: how long those
    // waits take at this core count is the figure (docs/performance.md).
    printf("ktest: %lu TLB shoot-downs under load, mean wait %lu us (longest since boot %lu us)\n",
           shots, shots ? (tlb.wait_ns - tlb0.wait_ns) / shots / 1000 : 0, tlb.wait_max_ns / 1000);
    printf("ktest: %d hook sites patched in and out %d times under %d busy pairs, %lu goroutines "
           "spawned, %lu int3s met at sites (%lu at a site rewritten already)\n", sites, TOGGLES / 2, pairs,
           kt_load(&spawned), traps - traps0, stale - stale0);
}

// ---- profile_start on a machine without room for its buffers -----------------
//
// goro.h promises that profile_start returns false when there is no memory
// for the per-core sample buffers (512 contiguous pages each). page_alloc
// never returns NULL (running out is fatal), so the check was dead and a
// small machine died "out of memory: 512 pages wanted". The test makes the
// machine small: it takes memory in 128-page chunks until none is left,
// then gives every other chunk back, so that plenty of single pages stay
// free for the other cores but no run of 512 is (a freed chunk between
// two held ones, with any leftover under 128 pages beside it, spans at
// most 382).

#define HOG_CHUNK 128

KTEST(profile_start_without_memory_for_its_buffers_fails)
{
    void *held = 0, *given = 0;     // chunks chained through their first word
    uint64_t nheld = 0;
    bool keep = true;
    for (void *c; (c = page_try_alloc_uncleared(HOG_CHUNK)); keep = !keep) {
        void **list = keep ? &held : &given;
        *(void **)c = *list;
        *list = c;
        nheld += keep;
    }
    while (given) {
        void *next = *(void **)given;
        page_free(given, HOG_CHUNK);
        given = next;
    }
    bool started = profile_start(1000);
    if (started)
        profile_stop();
    while (held) {
        void *next = *(void **)held;
        page_free(held, HOG_CHUNK);
        held = next;
    }
    printf("ktest: profile_start with %lu chunks of %d pages held: %s\n", nheld, HOG_CHUNK,
           started ? "started" : "false");
    KT_ASSERT(!started);
    KT_ASSERT(profile_start(1000));     // with the memory back
    profile_stop();
}
