// SPDX-License-Identifier: MIT
// Timers: a 4-ary min-heap per P (as Go's), in TSC cycles. A timer's
// function runs on g0 with a P held and interrupts off, from the scheduler
// (its own P's timers, or overdue ones of another P while stealing), so it
// may ready goroutines (goready) but must not block. It may free a one-shot
// timer: nothing touches the timer after its function returns.
#ifndef GORO_TIMER_H
#define GORO_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct p;

struct timer {
    // set before timer_start; while queued, changed only under the heap's
    // P's timers_lock (timer_modify, timers_run)
    uint64_t when;                  // TSC deadline, the heap's key; UINT64_MAX: never
    uint64_t period;                // cycles; 0 = fires once (a period must be at least 1)
    void (*f)(struct timer *t, uint64_t now);
    void *arg;
    // the heap's P's timers_lock held (pp also read atomically, acquire)
    struct p *pp;                   // the P whose heap holds it; NULL when not queued
    uint32_t idx;
    uint64_t later;                 // 0, or the real deadline, later than when (Go's timerModifiedLater)
    // a periodic timer: set under the heap's lock when an M takes it to
    // run, cleared (release) when its function returns
    uint32_t running;
};

// Queues t on the calling M's P and re-arms this core's timer when t is now
// the earliest. From a G (pinned by the caller or not) or from g0 with a P.
void timer_start(struct timer *t);
// Removes t if queued and returns whether it was (false: a one-shot timer
// that fired, or one never started). It may run at once with any other
// timer_stop or timer_modify of t: the heap's lock orders them. Once it returns, t's function is not
// running and will not run again unless t is started again, so t may be
// freed: when the function is running on another core, timer_stop waits
// for it (a timer function must therefore not stop a timer whose function
// may stop its own timer's: they would wait for each other). A timer's
// function may stop its own timer. From a G, or from g0 with a P.
bool timer_stop(struct timer *t);
// Go's modtimer: t to fire at when (then every period cycles; 0: once),
// whether queued, fired or stopped; returns whether it was queued (Go's
// Reset result). A queued timer of this P's heap moves in place
// (timer_modify_here). Otherwise it is timer_stop then timer_start, so
// the caller serializes timer_modify calls of one timer (timer_start must
// not find it queued); a timer_stop may run beside them.
bool timer_modify(struct timer *t, uint64_t when, uint64_t period);
// timer_modify's in-place part, safe beside any other stop or modify of t:
// when t is queued in the calling M's P's heap, moves it to fire at when
// (then every period) and returns true (it was queued); to an earlier
// deadline by a sift up, to a later one lazily (t->later; the heap keeps
// the earlier key until it reaches the top, as Go's timerModifiedLater),
// so a reset costs no heap walk. Otherwise changes nothing: false.
bool timer_modify_here(struct timer *t, uint64_t when, uint64_t period);
// Runs pp's timers due by now; returns how many ran. The caller holds a P
// (its own, or pp when it is its own).
uint32_t timers_run(struct p *pp, uint64_t now);
// Earliest deadline over the Ps' heaps (racy snapshot), 0 when none; the
// earliest after a given TSC value.
uint64_t timers_next(void);
uint64_t timers_next_after(uint64_t after);
bool timers_pending(void);
// The TSC deadline ns from now; UINT64_MAX (never) when it would not fit
// in 64 bits. A deadline of UINT64_MAX never fires.
uint64_t timer_deadline_ns(uint64_t ns);
// The heap's lock of pp, for tests that look into a heap: returns the
// interrupt state for timers_unlock.
uint64_t timers_lock(struct p *pp);
void timers_unlock(struct p *pp, uint64_t f);
// A P going away: its timers move to the caller's P.
void timers_move(struct p *from, struct p *to);

#endif
