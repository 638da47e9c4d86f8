// SPDX-License-Identifier: MIT
// app=soak's program generator: which kinds a round runs (by weight), the
// random durations, and the memory a round's programs share.
#include "soak.h"

static const struct soak_op_kind kinds[] = {
    { "spawn", prog_spawn, 10 },
    { "chan", prog_chan, 14 },
    { "select", prog_select, 10 },
    { "close", prog_close, 8 },
    { "mutex", prog_mutex, 8 },
    { "rwmutex", prog_rwmutex, 6 },
    { "waitgroup", prog_waitgroup, 5 },
    { "cond", prog_cond, 6 },
    { "sleep", prog_sleep, 4 },
    { "timer", prog_timer, 6 },
    { "afterfunc", prog_afterfunc, 4 },
    { "ticker", prog_ticker, 3 },
    { "after", prog_after, 4 },
    { "syscall", prog_syscall, 4 },
    { "gomaxprocs", prog_gomaxprocs, 2 },
    { "irq", prog_irq, 3 },
    { "bigchan", prog_bigchan, 3 },
    { "bigframe", prog_bigframe, 2 },
    { "net", prog_net, 3 },
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

// only=NAME[,NAME...]: the kinds not named weigh nothing.
static uint32_t weight(uint32_t i)
{
    const char *o = soak_args.only;
    if (!o)
        return kinds[i].weight;
    size_t n = strlen(kinds[i].name);
    for (const char *p = o; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : 0)
        if (!strncmp(p, kinds[i].name, n) && (p[n] == ',' || p[n] == '\0'))
            return kinds[i].weight;
    return 0;
}

bool soak_only_valid(void)
{
    for (uint32_t i = 0; i < NKINDS; i++)
        if (weight(i))
            return true;
    return false;
}

const struct soak_op_kind *soak_pick(rng_t *r)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < NKINDS; i++)
        total += weight(i);
    uint32_t x = rng_below(r, total);
    for (uint32_t i = 0; i < NKINDS; i++) {
        if (x < weight(i))
            return &kinds[i];
        x -= weight(i);
    }
    return &kinds[0];
}

uint64_t soak_duration(rng_t *r)
{
    switch (rng_below(r, 10)) {
    case 0:
        return 0;
    case 1:
        return 1000000 + rng_below(r, 3000000);     // 1-4 ms
    default:
        return 1000 + rng_below(r, 300000);         // 1-300 us
    }
}

void check_not_early(const char *what, uint64_t start, uint64_t d, uint64_t fired)
{
    if (fired + SOAK_SKEW_NS < start + d)
        soak_fail("%s fired early: %lu ns after its start, asked for %lu ns", what,
                  fired > start ? fired - start : 0, d);
}

// ---- the round's shared memory --------------------------------------------

#define MAX_DEFERRED 16384
static struct { void (*fn)(void *); void *p; } deferred[MAX_DEFERRED];
static uint32_t ndeferred;              // atomic: programs start on the main G, but
                                        // goroutines defer too

void round_defer(void (*fn)(void *), void *p)
{
    uint32_t i = __atomic_fetch_add(&ndeferred, 1, __ATOMIC_RELAXED);
    if (i >= MAX_DEFERRED)
        panic("soak: more than %u deferred frees in one round", MAX_DEFERRED);
    deferred[i].fn = fn;
    deferred[i].p = p;
}

void *round_alloc(size_t size)
{
    void *p = calloc(1, size);
    round_defer(free, p);
    return p;
}

// After soak_join: every goroutine of the round is done.
void round_cleanup(void)
{
    for (uint32_t i = 0; i < ndeferred; i++)
        deferred[i].fn(deferred[i].p);
    ndeferred = 0;
}
