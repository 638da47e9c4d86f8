// SPDX-License-Identifier: MIT
// Ticket locks: FIFO, so no core starves when vCPUs outnumber host cores.
#include "spinlock.h"
#include "arch.h"
#include "panic.h"

void spin_lock(struct spinlock *l)
{
    uint64_t flags = irq_save();
    if (spin_holding(l))
        panic("spin_lock: %s already held by this core (taken at %p)", l->name, (void *)l->pc);
    uint32_t t = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != t)   // acquire: pairs with release in spin_unlock
        cpu_relax();
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
    __atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);   // release: publishes the critical section
    irq_restore(flags);
}

bool spin_holding(const struct spinlock *l)
{
    return __atomic_load_n(&l->cpu, __ATOMIC_RELAXED) == (int32_t)cpu_index() &&
           __atomic_load_n(&l->owner, __ATOMIC_RELAXED) != __atomic_load_n(&l->next, __ATOMIC_RELAXED);
}
