// SPDX-License-Identifier: MIT
// app=soak's scheduler programs: spawning trees with yields, blocking
// calls (entersyscall), gomaxprocs changes, and irq_wait woken by IPIs.
#include "soak.h"

struct sysprog {
    rng_t r;
    uint32_t depth;
};

static struct sysprog *sysprog(rng_t *r, uint32_t depth)
{
    struct sysprog *s = round_alloc(sizeof *s);
    s->r = rng_split(r);
    s->depth = depth;
    return s;
}

// ---- spawn: a random tree of goroutines that yield ----------------------------

static void spawner(void *p)
{
    struct sysprog *s = p;
    for (uint32_t i = rng_below(&s->r, 4); i > 0; i--) {
        gosched();
        soak_op(1);
    }
    if (s->depth < 3)
        for (uint32_t i = rng_below(&s->r, 4); i > 0; i--)
            soak_go(spawner, sysprog(&s->r, s->depth + 1));
    volatile uint64_t x = 0;            // a little work, long enough to be preempted at 20 us now and then
    for (uint32_t i = rng_below(&s->r, 20000); i > 0; i--)
        x += i;
}

void prog_spawn(rng_t *r)
{
    for (uint32_t i = 1 + rng_below(r, 8); i > 0; i--)
        soak_go(spawner, sysprog(r, 0));
}

// ---- entersyscall: a G holds its core in a blocking call --------------------------

static void syscaller(void *p)
{
    struct sysprog *s = p;
    uint64_t d = 5000 + rng_below(&s->r, 500000);
    entersyscall();
    uint64_t end = nanotime() + d;
    while (nanotime() < end)
        ;                               // the device poll this stands for
    exitsyscall();
    soak_op(1);
}

static void queued_behind(void *p)
{
    (void)p;
    soak_op(1);
}

void prog_syscall(rng_t *r)
{
    for (uint32_t i = 1 + rng_below(r, 3); i > 0; i--) {
        soak_go(syscaller, sysprog(r, 0));
        for (uint32_t k = rng_below(r, 4); k > 0; k--)
            soak_go(queued_behind, 0);  // on the same P: sysmon must hand it off or they wait
    }
}

// ---- gomaxprocs: one change at a time, read back ------------------------------------

static uint32_t changing;               // atomic: a gomaxprocs program runs

static void procs_changer(void *p)
{
    struct sysprog *s = p;
    int n = 1 + (int)rng_below(&s->r, (uint32_t)num_cpu());
    gomaxprocs(n);
    if (gomaxprocs(0) != n)
        soak_fail("gomaxprocs: set %d, reads %d", n, gomaxprocs(0));
    for (uint32_t i = rng_below(&s->r, 4); i > 0; i--)
        gosched();
    if (rng_below(&s->r, 2))
        gomaxprocs(num_cpu());
    soak_op(1);
    __atomic_store_n(&changing, 0, __ATOMIC_RELEASE);
}

void prog_gomaxprocs(rng_t *r)
{
    uint32_t idle = 0;
    if (__atomic_compare_exchange_n(&changing, &idle, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        soak_go(procs_changer, sysprog(r, 0));
    else
        prog_spawn(r);
}

// ---- irq_wait woken by IPIs -------------------------------------------------------
//
// Waiters park on IRQ_VEC_SOFT_FIRST; a raiser sends IPIs to random cores
// until every waiter has returned. Each wait consumes at least one
// interrupt, and none is lost (irq_finish). One irq program at a time owns
// the vector.

#define VEC IRQ_VEC_SOFT_FIRST
#define MAX_RAISES 1000000u
static uint32_t irq_busy;               // atomic: an irq program runs
static uint64_t consumed;               // interrupts returned by irq_wait (atomic)
static uint64_t raised0;                // irq_raised(VEC) at irq_setup

struct irqprog {
    rng_t r;
    uint32_t waiters;
    uint32_t returned;                  // atomic
};

static void irq_waiter(void *p)
{
    struct irqprog *ip = p;
    int n = irq_wait(VEC);
    if (n < 1)
        soak_fail("irq: irq_wait returned %d", n);
    else
        __atomic_fetch_add(&consumed, (uint64_t)n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ip->returned, 1, __ATOMIC_RELEASE);   // pairs with the raiser's acquire
    soak_op(1);
}

static void irq_raiser(void *p)
{
    struct irqprog *ip = p;
    uint32_t raises = 0;
    while (__atomic_load_n(&ip->returned, __ATOMIC_ACQUIRE) < ip->waiters) {
        if (++raises > MAX_RAISES) {
            soak_fail("irq: %u IPIs raised, %u of %u waiters woke", MAX_RAISES,
                      ip->returned, ip->waiters);
            break;
        }
        if (irq_raise(VEC, (int)rng_below(&ip->r, (uint32_t)num_cpu())) != 0)
            soak_fail("irq: irq_raise refused");
        sleep_ns(10000 + rng_below(&ip->r, 100000));
    }
    soak_op(raises);
    __atomic_store_n(&irq_busy, 0, __ATOMIC_RELEASE);
}

void prog_irq(rng_t *r)
{
    uint32_t idle = 0;
    if (!__atomic_compare_exchange_n(&irq_busy, &idle, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED)) {
        prog_spawn(r);
        return;
    }
    struct irqprog *ip = round_alloc(sizeof *ip);
    ip->r = rng_split(r);
    ip->waiters = 1 + rng_below(r, 4);
    for (uint32_t i = 0; i < ip->waiters; i++)
        soak_go(irq_waiter, ip);
    soak_go(irq_raiser, ip);
}

// Interrupts delivered but not yet consumed, taken until none is left and
// none is in flight (the delivered count has stopped moving).
static uint64_t irq_drain(void)
{
    uint64_t took = 0, seen;
    do {
        seen = irq_raised(VEC);
        int n;
        while ((n = irq_wait_timeout(VEC, 2000000)) > 0)
            took += (uint64_t)n;
    } while (irq_raised(VEC) != seen);
    return took;
}

void irq_setup(void)
{
    if (irq_raise(VEC, core_id()) != 0)             // makes the vector waitable
        panic("soak: irq_raise(%#x) refused", VEC);
    raised0 = irq_raised(VEC);
    irq_drain();
    raised0 = irq_raised(VEC);
}

// Each interrupt delivered either wakes every waiter parked then (each
// counts it) or is kept pending for the next wait (which counts all it
// took): so, over the run, interrupts counted by waits are at least those
// delivered (none lost) and at most 4 times as many (a program has up to
// 4 waiters). An IPI still in flight is waited for.
void irq_finish(void)
{
    uint64_t extra = 0, delivered = 0, total = 0;
    for (int tries = 0; tries < 100; tries++) {
        extra += irq_drain();
        delivered = irq_raised(VEC) - raised0;
        total = __atomic_load_n(&consumed, __ATOMIC_RELAXED) + extra;
        if (total >= delivered)
            break;
        sleep_ns(100000000);
    }
    if (total < delivered || total > 4 * delivered)
        soak_fail("irq: %lu interrupts delivered, waits counted %lu", delivered, total);
    else
        printf("soak: irq: %lu interrupts delivered, waits counted %lu\n", delivered, total);
}
