// SPDX-License-Identifier: MIT
// Test-and-test-and-set locks. Not FIFO, on purpose: with more vCPUs than
// host cores (a daily configuration here, and any overcommitted host), a
// ticket lock stalls everyone behind a waiter whose vCPU is descheduled,
// even after the lock is free. Here a waiter that is not running simply
// loses its turn.
//
// The rank check (debug builds): each core keeps the locks it holds, with
// where it took them; a new lock must rank above every one of them
// (arch/spinlock.h has the order). A core touches only its own list, with
// interrupts off, so the list needs no lock.
#include "arch/spinlock.h"
#include "arch/arch.h"
#include "lib/panic.h"

void spin_init(struct spinlock *l, const char *name, enum lock_rank rank)
{
    *l = (struct spinlock)SPINLOCK_INIT(name, rank);
}

void spin_lock(struct spinlock *l)
{
    uint64_t flags = irq_save();
    if (spin_holding(l))
        panic("spin_lock: %s already held by this core (taken at %p)", l->name, (void *)l->pc);
    uintptr_t pc = (uintptr_t)__builtin_return_address(0);
    lockrank_acquire(l, (enum lock_rank)l->rank, pc);
    if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))     // acquire: pairs with spin_unlock's release
        spin_wait_word(&l->locked);
    l->cpu = (int32_t)cpu_index();
    l->pc = pc;
    l->saved_irq = flags;
}

bool spin_trylock(struct spinlock *l)
{
    uint64_t flags = irq_save();
    if (spin_holding(l))
        panic("spin_trylock: %s already held by this core (taken at %p)", l->name, (void *)l->pc);
    if (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) ||            // relaxed: a hint; the exchange decides
        __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {     // acquire: pairs with spin_unlock's release
        irq_restore(flags);
        return false;
    }
    uintptr_t pc = (uintptr_t)__builtin_return_address(0);
    lockrank_acquire(l, (enum lock_rank)l->rank, pc);
    l->cpu = (int32_t)cpu_index();
    l->pc = pc;
    l->saved_irq = flags;
    return true;
}

void spin_wait_word(uint32_t *word)
{
    // A shoot-down need not wait for this core meanwhile (arch/tlb.c): many
    // waiters are many vCPUs the host must run before it ends.
    arch_lock_wait_begin();
    do {
        while (__atomic_load_n(word, __ATOMIC_RELAXED))     // relaxed: a hint; the exchange decides
            arch_lock_relax();      // interrupts are off: a TLB shoot-down must not wait for the holder
    } while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE));    // acquire: pairs with the holder's release store
    arch_lock_wait_end();
}

void spin_unlock(struct spinlock *l)
{
    if (!spin_holding(l))
        panic("spin_unlock: %s not held by this core", l->name);
    uint64_t flags = l->saved_irq;
    l->cpu = -1;
    l->pc = 0;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);     // release: publishes the critical section
    lockrank_release(l);
    irq_restore(flags);
}

bool spin_holding(const struct spinlock *l)
{
    // Relaxed: only the answer "this core" matters, and only this core
    // writes cpu while it holds the lock.
    return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
           // relaxed: as locked; a stale cpu of another holder is never ours
           __atomic_load_n(&l->cpu, __ATOMIC_RELAXED) == (int32_t)cpu_index();
}

#ifdef GORO_DEBUG

// The ranks whose locks may be held several at once, and how. Every other
// rank nests with nothing, itself included.
enum lock_nest {
    NEST_NEVER,
    NEST_ADDRESS_ORDER,     // each new one at a higher address than those held
    NEST_ANY,               // in any order: safe for a reason given below
};

static const struct {
    const char *name;
    enum lock_nest nest;
} ranks[LOCK_RANK_COUNT] = {
    [LOCK_RANK_NONE] = { "no rank (uninitialised)", NEST_NEVER },
    [LOCK_RANK_PDDEADLINE] = { "polldesc deadline", NEST_NEVER },
    [LOCK_RANK_POLLDESC] = { "polldesc", NEST_NEVER },
    [LOCK_RANK_WAITQ] = { "wait queue", NEST_ADDRESS_ORDER },
    [LOCK_RANK_SCHED] = { "sched", NEST_NEVER },
    // timers_move holds two Ps' heaps only while the world is stopped, so
    // no other core takes either.
    [LOCK_RANK_TIMERS] = { "timers", NEST_ANY },
    [LOCK_RANK_GFREE] = { "gfree", NEST_NEVER },
    [LOCK_RANK_ALLG] = { "allg", NEST_NEVER },
    [LOCK_RANK_IRQLINE] = { "irqline", NEST_NEVER },
    [LOCK_RANK_MCENTRAL] = { "mcentral", NEST_NEVER },
    [LOCK_RANK_SPAN] = { "span", NEST_NEVER },
    [LOCK_RANK_PAGETABLES] = { "pagetables", NEST_NEVER },
    [LOCK_RANK_PAGE] = { "page node", NEST_NEVER },
    [LOCK_RANK_IOAPIC] = { "ioapic", NEST_NEVER },
    [LOCK_RANK_PCI_CFG] = { "pci cfg", NEST_NEVER },
    [LOCK_RANK_CONSOLE_IN] = { "console_in", NEST_NEVER },
    [LOCK_RANK_CONSOLE_STASH] = { "console stash", NEST_NEVER },
    [LOCK_RANK_CONSOLE] = { "console", NEST_NEVER },
};

// select holds one wait-queue lock per channel (SELECT_MAX_CASES) and
// readies a G under them.
#define HELD_MAX 80

struct held {
    const void *lock;
    uintptr_t pc;
    uint32_t rank;
};

// Each core's own list: written by that core only, with interrupts off.
// busy is set while the list changes: an NMI that takes a lock in the
// middle (the debug irq-off report prints) skips the bookkeeping, for its
// acquisition and its release alike, and the list stays whole.
static struct {
    uint32_t n;
    bool busy;
    struct held h[HELD_MAX];
} held_by[MAX_CPUS];

// After the first report the checks stop: the panic that follows may take
// locks in whatever order it must.
static bool reported;

static bool checks_off(void)
{
    return __atomic_load_n(&reported, __ATOMIC_RELAXED);   // relaxed: a flag, no data behind it
}

static void checks_stop(void)
{
    __atomic_store_n(&reported, true, __ATOMIC_RELAXED);   // relaxed: a flag, no data behind it
}

static const char *lock_name(const void *lock, uint32_t rank)
{
    // A struct spinlock names itself; a word lock (a wait queue's, a timer
    // heap's) is known by its rank.
    if (rank != LOCK_RANK_WAITQ && rank != LOCK_RANK_TIMERS && ((const struct spinlock *)lock)->name)
        return ((const struct spinlock *)lock)->name;
    return rank < LOCK_RANK_COUNT ? ranks[rank].name : "?";
}

static bool may_nest(const struct held *h, const void *lock, uint32_t rank)
{
    if (h->rank < rank)
        return true;
    if (h->rank > rank)
        return false;
    switch (ranks[rank].nest) {
    case NEST_ADDRESS_ORDER:
        return (uintptr_t)h->lock < (uintptr_t)lock;
    case NEST_ANY:
        return true;
    default:
        return false;
    }
}

__attribute__((noinline, cold)) static void rank_violation(const struct held *h, const void *lock,
                                                          uint32_t rank, uintptr_t pc)
{
    checks_stop();
    panic("lock order: %s (rank %u) taken at %p while holding %s (rank %u) taken at %p",
          lock_name(lock, rank), rank, (void *)pc, lock_name(h->lock, h->rank), h->rank,
          (void *)h->pc);
}

void lockrank_acquire(const void *lock, enum lock_rank rank, uintptr_t pc)
{
    ASSERT(!irqs_enabled());
    typeof(held_by[0]) *me = &held_by[cpu_index()];
    if (me->busy || checks_off())
        return;
    me->busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);    // seq_cst, compiler only: busy is set before the list changes (an NMI on this core)
    if (rank == LOCK_RANK_NONE || rank >= LOCK_RANK_COUNT) {
        checks_stop();
        panic("lock order: %s taken at %p has no rank", lock_name(lock, LOCK_RANK_NONE), (void *)pc);
    }
    for (uint32_t i = 0; i < me->n; i++)
        if (!may_nest(&me->h[i], lock, rank))
            rank_violation(&me->h[i], lock, rank, pc);
    if (me->n == HELD_MAX)
        panic("lock order: more than %d locks held by one core", HELD_MAX);
    me->h[me->n++] = (struct held){ lock, pc, rank };
    __atomic_signal_fence(__ATOMIC_SEQ_CST);    // seq_cst, compiler only: the list is whole before busy clears
    me->busy = false;
}

void lockrank_release(const void *lock)
{
    typeof(held_by[0]) *me = &held_by[cpu_index()];
    if (me->busy || checks_off())
        return;
    me->busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);    // seq_cst, compiler only: busy is set before the list changes (an NMI on this core)
    // Not always the last one taken: select releases its channels in the
    // order it took them.
    uint32_t i = me->n;
    while (i > 0 && me->h[i - 1].lock != lock)
        i--;
    if (i == 0) {
        checks_stop();
        panic("lock order: lock %p released by a core that does not hold it", lock);
    }
    me->h[i - 1] = me->h[--me->n];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);    // seq_cst, compiler only: the list is whole before busy clears
    me->busy = false;
}

#endif
