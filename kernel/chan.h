// SPDX-License-Identifier: MIT
// Internals shared by channels (chan.c), select (select.c) and sync
// (sync.c, sync_sema.c): the waiter record, the wait queue and its lock.
// Not for applications: tests and benchmarks may include it.
//
// Waiter records (Go's sudog) live on the parked goroutine's stack: a G
// parked in chan_send, chan_select or sema_acquire does not return, so its
// frame stays put until whoever dequeues the record readies the G. The
// dequeuer owns the record from dequeue until goready; after goready it must
// not touch it (the G may already be running and have returned).
//
// The queue lock is a word, not a struct spinlock: it is released on g0 by
// gopark's unlockf, where interrupts must stay off until schedule() has
// picked the next G (spin_unlock would restore the parked G's interrupt
// state there), and it sits in zero-initialized public values (mutex_t,
// cond_t, ...). Rules: take it only with interrupts off (irq_save), which
// also keeps the holder from being preempted; never hold two queue locks
// except channels in select's address order; readying a G (goready) may be
// done with one held.
#ifndef GORO_CHAN_H
#define GORO_CHAN_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/arch.h"
#include "goro.h"

struct g;
struct select_state;

struct sudog {
    // set by the waiter before it is queued, read-only while queued
    struct g *g;
    void *elem;                     // chan: value sent / slot to receive into (may be NULL);
                                    // sema: the sema_t waited on
    struct chan *c;                 // select: which channel this record waits on
    struct select_state *sel;       // NULL unless the G waits in chan_select
    uint32_t casi;                  // select: the case index
    // the queue's lock held
    struct sudog *next, *prev;
    // written by the dequeuer before goready, read by the G after it resumes
    uint32_t ticket;                // sema: 1 = the count was handed over; cond: ticket number
    bool success;                   // chan: a value moved (false: woken by close)
};

// One per chan_select call that parks: the first waker to CAS done 0 -> 1
// wins the G and records which record it dequeued; the others skip its
// records. done: atomic, any core; win: written by the winner before it
// readies the G.
struct select_state {
    uint32_t done;
    struct sudog *win;
};

// Interrupts on, from a goroutine: maps the goroutine-stack pages of the
// size bytes at elem (a channel operation's own value or slot), by
// touching them. The copies run under the channel's lock with interrupts
// off, where a stack fault may only take one of the core's few spare
// pages: every operation maps its own value's pages before interrupts go
// off, so a copy never faults there, whichever side makes it (a parked
// goroutine's value is mapped before it parks, and a goroutine's stack
// pages stay mapped while it lives). An 8-byte value, the common one, is
// mapped by one 8-byte read, whatever its alignment (chan.c's send reads
// its value so and keeps it).
static inline void elem_premap(const void *elem, uint32_t size)
{
    uint64_t a = (uint64_t)elem;
    if (size == sizeof(uint64_t)) {
        if (elem)
            (void)*(const volatile uint64_t *)elem;
        return;
    }
    if (!size || a - ARCH_STACK_REGION >= ARCH_STACK_REGION_SIZE)
        return;                     // nothing to copy, NULL, or not a goroutine stack
    (void)*(const volatile uint8_t *)elem;
    for (uint64_t pg = (a & ~(uint64_t)(ARCH_PAGE_SIZE - 1)) + ARCH_PAGE_SIZE; pg < a + size; pg += ARCH_PAGE_SIZE)
        (void)*(const volatile uint8_t *)pg;
}

// Ranked as LOCK_RANK_WAITQ (arch/spinlock.h), checked in debug builds.
static inline void wq_lock(uint32_t *l)
{
    lockrank_acquire(l, LOCK_RANK_WAITQ, (uintptr_t)__builtin_return_address(0));
    if (__builtin_expect(__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0, 0))  // acquire: pairs with wq_unlock's release
        spin_wait_word(l);
}

// wq_lock without the wait: false, nothing taken, when the lock is held.
static inline bool wq_trylock(uint32_t *l)
{
    if (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0)  // acquire: pairs with wq_unlock's release
        return false;
    lockrank_acquire(l, LOCK_RANK_WAITQ, (uintptr_t)__builtin_return_address(0));
    return true;
}

static inline void wq_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);               // release: publishes the critical section
    lockrank_release(l);
}

// Queue lock held, for all four: FIFO links through sudog next/prev.
static inline void wq_push_back(struct goro_waitq *q, struct sudog *sg)
{
    // q is a queue inside a live object, never NULL; the analyzer cannot
    // see that chan_select queues only its non-nil cases.
    struct sudog *last = q->tail;   // NOLINT(clang-analyzer-core.NullDereference)
    sg->next = 0;
    sg->prev = last;
    if (last)
        last->next = sg;
    else
        q->head = sg;
    q->tail = sg;
}

static inline void wq_push_front(struct goro_waitq *q, struct sudog *sg)
{
    struct sudog *first = q->head;
    sg->prev = 0;
    sg->next = first;
    if (first)
        first->prev = sg;
    else
        q->tail = sg;
    q->head = sg;
}

static inline struct sudog *wq_dequeue(struct goro_waitq *q)
{
    for (;;) {
        struct sudog *sg = q->head;
        if (!sg)
            return 0;
        q->head = sg->next;
        if (sg->next)
            sg->next->prev = 0;
        else
            q->tail = 0;
        sg->next = 0;
        // A select record is ours only if we are the first to claim its G;
        // otherwise another channel already woke it, and the G will find
        // this record gone when it cleans up (wq_remove). So wq_dequeue
        // returns the first record whose G can still be woken.
        if (__builtin_expect(sg->sel != 0, 0)) {
            uint32_t zero = 0;
            // acq_rel: picks one winner among wakers that hold different
            // channels' locks, which order nothing between them; relaxed on
            // failure: another waker won, and this record is dropped
            if (!__atomic_compare_exchange_n(&sg->sel->done, &zero, 1, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_RELAXED))
                continue;
            sg->sel->win = sg;
        }
        return sg;
    }
}

static inline void wq_remove(struct goro_waitq *q, struct sudog *sg)
{
    // Dequeued records have prev == NULL and are not the head; the tail
    // has next == NULL.
    if (sg->prev) {
        sg->prev->next = sg->next;
    } else if (q->head == sg) {
        q->head = sg->next;
    } else {
        return;
    }
    if (sg->next)
        sg->next->prev = sg->prev;
    else
        q->tail = sg->prev;
    sg->next = sg->prev = 0;
}

// gopark's unlockf for a queue lock: releases it, keeps interrupts off.
bool wq_park_unlock(struct g *gp, void *lock);

// chan.c, c->lock held (select.c's passes). Each tries to complete the
// operation without blocking and, when a parked partner took part, returns
// it in *wake for the caller to goready after unlocking.
bool chan_send_locked(struct chan *c, const void *elem, struct g **wake, void *pc);
int chan_recv_locked(struct chan *c, void *elem, struct g **wake);     // enum chan_try_result

// sync_sema.c: Go's runtime semaphore (semacquire1/semrelease1) on a
// sema_t. lifo: queue at the front (a waiter that has waited before);
// handoff: pass the count straight to the first waiter and yield to it.
void semacquire(sema_t *s, bool lifo, const char *reason);
void semrelease(sema_t *s, bool handoff);
// sync.c: m is in starvation mode now (tests; exact while m is held).
bool mutex_starving(const mutex_t *m);

// "fatal error: what (goroutine N, called from fn+0xoff)", then exit 255.
void chan_fatal(const char *what, void *pc) __attribute__((noreturn));

#endif
