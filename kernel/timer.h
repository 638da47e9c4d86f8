// SPDX-License-Identifier: MIT
// Timers: a 4-ary min-heap per P (as Go's), in TSC cycles. A timer's
// function runs on g0 with a P held and interrupts off, from the scheduler
// (its own P's timers, or overdue ones of another P while stealing), so it
// may ready goroutines (gready) but must not block.
#ifndef GORO_TIMER_H
#define GORO_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct p;

struct timer {
    // set before timer_start; not changed while queued
    uint64_t when;                  // TSC deadline; UINT64_MAX: never
    uint64_t period;                // cycles; 0 = fires once (a period must be at least 1)
    void (*f)(struct timer *t, uint64_t now);
    void *arg;
    // the heap's P's timers_lock held
    struct p *pp;                   // the P whose heap holds it; NULL when not queued
    uint32_t idx;
};

// Queues t on the calling M's P and re-arms this core's timer when t is now
// the earliest. From a G (pinned by the caller or not) or from g0 with a P.
void timer_start(struct timer *t);
// Removes t if queued; returns whether it was (false: it fired or never ran).
bool timer_stop(struct timer *t);
// Runs pp's timers due by now; returns how many ran. The caller holds a P
// (its own, or pp when it is its own).
uint32_t timers_run(struct p *pp, uint64_t now);
// Earliest deadline over the Ps' heaps (racy snapshot), 0 when none.
uint64_t timers_next(void);
bool timers_pending(void);
// The TSC deadline ns from now; UINT64_MAX (never) when it would not fit
// in 64 bits. A deadline of UINT64_MAX never fires.
uint64_t timer_deadline_ns(uint64_t ns);
// A P going away: its timers move to the caller's P.
void timers_move(struct p *from, struct p *to);

#endif
