// SPDX-License-Identifier: MIT
// Spinlocks that remember who holds them (core and call site), so that a
// deadlock report says where the lock was taken. Taking one disables
// interrupts on this core until it is released: a lock holder is never
// interrupted into code that wants the same lock.
//
// Every lock has a rank, and locks are taken in rank order: a core holding
// a lock of rank r may take only locks of a higher rank (or, for the ranks
// arch/spinlock.c lets nest, one of the same rank). Debug builds
// (GORO_DEBUG) check this on every acquisition and panic naming both locks
// and where each was taken, so an order that could deadlock fails on its
// first run, not on the unlucky interleaving (Go's lock ranking).
#ifndef GORO_SPINLOCK_H
#define GORO_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

// The lock order, first taken to last. Each line: what the lock guards,
// and what its holder goes on to take.
enum lock_rank {
    LOCK_RANK_NONE,         // not a rank: a lock that was never initialised
    LOCK_RANK_GTIMER,       // a goroutine timer's stop and reset (kernel/timechan.c); takes
                            // its P's timer heap
    LOCK_RANK_PDDEADLINE,   // a poll descriptor's deadline timers (kernel/netpoll.c); takes
                            // the descriptor's lock, then its P's timer heap
    LOCK_RANK_POLLDESC,     // a poll descriptor's closing flag and deadlines; takes nothing
    LOCK_RANK_WAITQ,        // a channel's, semaphore's or cond's wait queue (kernel/chan.h's
                            // word locks); readies Gs (sched). select holds several
                            // channels' at once, in address order
    LOCK_RANK_SCHED,        // sched.lock: the global run queue, the idle P and M lists;
                            // gomaxprocs moves timers and free Gs under it, and the boot
                            // allocates the Ps' pages under it
    LOCK_RANK_TIMERS,       // a P's timer heap; grows it with pages. gomaxprocs moves one
                            // P's timers into another's, both held, under a stopped world
    LOCK_RANK_GFREE,        // the global free list of dead Gs
    LOCK_RANK_ALLG,         // the list of every G
    LOCK_RANK_IRQLINE,      // an interrupt vector's waiters and pending count
    LOCK_RANK_MCENTRAL,     // malloc's per-node, per-class span lists; taken alone
    LOCK_RANK_SPAN,         // malloc's span records and span map; take pages
    LOCK_RANK_PAGETABLES,   // the kernel's page tables; take pages for new tables
    LOCK_RANK_PAGE,         // a node's page pools
    LOCK_RANK_IOAPIC,       // the IOAPICs' redirection entries
    LOCK_RANK_PCI_CFG,      // ports 0xCF8/0xCFC, PCI configuration space's address and
                            // data pair (drivers/pci/pci.c); taken alone
    LOCK_RANK_CONSOLE_IN,   // COM1's and the keyboard's receive rings, the console's
                            // foreground (shell/console_in.c); each taken alone
    LOCK_RANK_CLOCK,        // the TSC's calibration and refinement (arch/tsc.c); taken
                            // from sysmon's tick and by tests, reads the reference clock
    LOCK_RANK_CONSOLE_STASH,// goroutines' unfinished kprintf lines (kernel/console.c):
                            // kprintf takes it under every other lock but the console's
    LOCK_RANK_CONSOLE,      // whole lines to the serial port and screen: kprintf is
                            // allowed under every other lock
    LOCK_RANK_COUNT
};

struct spinlock {
    // atomic, any core
    uint32_t locked;
    // set once, at initialisation
    uint32_t rank;          // enum lock_rank
    const char *name;
    // holder only
    int32_t cpu;            // holder's core, -1 when free
    uintptr_t pc;           // where the holder took it
    uint64_t saved_irq;     // interrupt state before the lock was taken
};

#define SPINLOCK_INIT(n, r) { .locked = 0, .rank = (r), .name = (n), .cpu = -1 }

// For a lock in memory that is not statically initialised.
void spin_init(struct spinlock *l, const char *name, enum lock_rank rank);
void spin_lock(struct spinlock *l);
// Takes l only if it is free now, never waiting: false leaves l alone and
// the interrupt state as it was. For work that can go elsewhere: under an
// overcommitted host a held lock's holder may not run for a host's whole
// round, and every core that waits spins the host CPUs it needs. The rank
// order applies as for spin_lock.
bool spin_trylock(struct spinlock *l);
// Waits for a lock word (0 free, 1 held) that a first exchange found held,
// then takes it (acquire); interrupts off. spin_lock and the wait queues'
// word locks (kernel/chan.h) both wait here, so how a lock waiter answers
// TLB shoot-downs (arch_lock_wait_begin) is in one place.
void spin_wait_word(uint32_t *word);
void spin_unlock(struct spinlock *l);
bool spin_holding(const struct spinlock *l);

// The rank check for locks that are not struct spinlock (kernel/chan.h's
// wait-queue words): call lockrank_acquire before taking the lock, with
// interrupts off, and lockrank_release after releasing it, on the same
// core. No-ops outside debug builds.
#ifdef GORO_DEBUG
void lockrank_acquire(const void *lock, enum lock_rank rank, uintptr_t pc);
void lockrank_release(const void *lock);
#else
static inline void lockrank_acquire(const void *lock, enum lock_rank rank, uintptr_t pc)
{
    (void)lock, (void)rank, (void)pc;
}
static inline void lockrank_release(const void *lock) { (void)lock; }
#endif

#endif
