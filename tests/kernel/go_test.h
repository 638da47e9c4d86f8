// SPDX-License-Identifier: MIT
// What goro's versions of Go's tests (tests/kernel/go_*_test.c) share.
//
// Each KTEST there is named go_TestX after the Go 1.19 test it ports
// (filter=go_ selects them all) and says at its head what it checks and
// where it departs from Go; docs/testing.md has the table. Go's
// testing.Short() parameters are used.
//
// Wall-clock time, as the suite's rule has it: a test asserts what holds
// however long the host stops a vCPU (counts, orders, never early, with
// the cross-core TSC slack below). Two kinds of number remain:
//  - lateness (Go's "too slow" bounds): asserted only on bare metal
//    (go_lateness_asserted), with Go's slack;
//  - stall limits, where Go waits 2-10 s for something that should take
//    microseconds before naming it lost (a lost wake-up, a lost timer):
//    GO_STALL_NS, 60 s, far above any descheduling, reached only by a
//    hang.
#ifndef GORO_GO_TEST_H
#define GORO_GO_TEST_H

#include "kernel/ktest.h"
#include "goro.h"

#define GO_MS UINT64_C(1000000)
#define GO_SEC UINT64_C(1000000000)

#define GO_STALL_MS UINT64_C(60000)
#define GO_STALL_NS (GO_STALL_MS * GO_MS)

// Lateness bounds hold only where no host takes cores away: bare metal,
// which the kernel knows from CPUID's hypervisor bit (kernel/ktest.h's rule).
static inline bool go_lateness_asserted(void) { return ktest_tail_bounds_asserted(); }

// Receives from c into elem unless ns pass first (Go's select with a
// time.After case, without leaving a timer behind). True if received
// (*ok: the receive's ok, false when closed).
static inline bool go_recv_within(chan_t *c, void *elem, uint64_t ns, bool *ok)
{
    gtimer_t *t = gtimer_new(ns);
    struct select_case cs[2] = {
        { .c = c, .dir = SELECT_RECV, .elem = elem },
        { .c = gtimer_chan(t), .dir = SELECT_RECV },
    };
    int r = chan_select(cs, 2, true);
    gtimer_free(t);
    if (ok)
        *ok = cs[0].ok;
    return r == 0;
}

// Go's `select { case <-c: return true; default: return false }` for a
// channel of any element size (the value is discarded).
static inline bool go_ready(chan_t *c)
{
    return chan_try_recv(c, 0) != CHAN_WOULD_BLOCK;
}

// A small PRNG for the tests' own choices (Go's math/rand), seeded by them.
static inline uint32_t go_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

#endif
