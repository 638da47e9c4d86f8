// SPDX-License-Identifier: MIT
// Test-and-test-and-set locks. Not FIFO, on purpose: with more vCPUs than
// host cores (a daily configuration here, and any overcommitted host), a
// ticket lock stalls everyone behind a waiter whose vCPU is descheduled,
// even after the lock is free. Here a waiter that is not running simply
// loses its turn.
#include "arch/spinlock.h"
#include "arch/arch.h"
#include "lib/panic.h"

void spin_lock(struct spinlock *l)
{
    uint64_t flags = irq_save();
    if (spin_holding(l))
        panic("spin_lock: %s already held by this core (taken at %p)", l->name, (void *)l->pc);
    for (;;) {
        if (!__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))   // acquire: pairs with spin_unlock's release
            break;
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            cpu_relax();
    }
    l->cpu = (int32_t)cpu_index();
    l->pc = (uintptr_t)__builtin_return_address(0);
    l->saved_irq = flags;
}

void spin_unlock(struct spinlock *l)
{
    if (!spin_holding(l))
        panic("spin_unlock: %s not held by this core", l->name);
    uint64_t flags = l->saved_irq;
    l->cpu = -1;
    l->pc = 0;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);     // release: publishes the critical section
    irq_restore(flags);
}

bool spin_holding(const struct spinlock *l)
{
    return __atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
           __atomic_load_n(&l->cpu, __ATOMIC_RELAXED) == (int32_t)cpu_index();
}
