// SPDX-License-Identifier: MIT
// Timers that deliver on channels: time_after and tickers (Go's
// time.After and time.NewTicker). The timer functions run on g0 with a P
// (kernel/timer.h) and deliver with chan_try_send, which never blocks: a
// ticker whose reader is behind drops ticks, as Go's does (its channel
// holds one). The value sent is the nanotime() at which the timer fired.
#include "kernel/goro.h"
#include "arch/arch.h"
#include "kernel/timer.h"
#include "lib/panic.h"

struct ticker {
    struct timer t;                 // first: the timer function gets the ticker
    chan_t *c;
};

static void deliver(struct timer *t, uint64_t now)
{
    struct ticker *tk = (struct ticker *)t;
    uint64_t ns = arch_cycles_to_ns(now);
    chan_try_send(tk->c, &ns);
    if (!t->period)
        free(tk);                   // one-shot: nothing refers to it any more
}

static struct ticker *ticker_alloc(uint64_t first_ns, uint64_t period_ns)
{
    struct ticker *tk = calloc(1, sizeof *tk);
    tk->c = chan_make(sizeof(uint64_t), 1);
    tk->t.when = arch_cycles() + arch_ns_to_cycles(first_ns);
    tk->t.period = arch_ns_to_cycles(period_ns);
    tk->t.f = deliver;
    return tk;
}

chan_t *time_after(uint64_t ns)
{
    struct ticker *tk = ticker_alloc(ns, 0);
    chan_t *c = tk->c;
    timer_start(&tk->t);            // tk may be freed from here on
    return c;
}

ticker_t *ticker_new(uint64_t period_ns)
{
    if (period_ns == 0)
        panic("fatal error: ticker_new: non-positive interval");
    struct ticker *tk = ticker_alloc(period_ns, period_ns);
    timer_start(&tk->t);
    return tk;
}

chan_t *ticker_chan(ticker_t *tk)
{
    return tk->c;
}

// Stops the ticks; the channel stays open (as in Go) and is freed with the
// ticker, so no one may still be reading it.
void ticker_stop(ticker_t *tk)
{
    timer_stop(&tk->t);
    chan_free(tk->c);
    free(tk);
}
