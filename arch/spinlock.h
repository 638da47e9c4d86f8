// SPDX-License-Identifier: MIT
// Spinlocks that remember who holds them (core and call site), so that a
// deadlock report says where the lock was taken. Taking one disables
// interrupts on this core until it is released: a lock holder is never
// interrupted into code that wants the same lock.
#ifndef GORO_SPINLOCK_H
#define GORO_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct spinlock {
    // atomic, any core
    uint32_t locked;
    // holder only
    const char *name;
    int32_t cpu;            // holder's core, -1 when free
    uintptr_t pc;           // where the holder took it
    uint64_t saved_irq;     // interrupt state before the lock was taken
};

#define SPINLOCK_INIT(n) { 0, (n), -1, 0, 0 }

void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);
bool spin_holding(const struct spinlock *l);

#endif
