// SPDX-License-Identifier: MIT
// The semaphore under every sync type, and sync.Cond's notify list: after
// Go's src/runtime/sema.go.
//
// Semaphore waiters queue in a fixed table of roots hashed by the sema_t's
// address (Go's semtable), not in the sema_t: a release then touches the
// value only in its atomic add, after which a waiter may take the count,
// return and free the value (a waitgroup_t on the waiter's stack, say).
// A root's list holds every address that hashes to it, each address's
// records in FIFO order (lifo waiters at the front); dequeue takes the
// first record for the address. Roots are few-waiter lists, not Go's treap.
//
// Invariants and orderings:
//   - s->count: atomic, any core. cansemacquire CASes it down from > 0
//     (seq_cst); semrelease adds 1 (seq_cst).
//   - root nwait: waiters on the root counted before their last check of
//     count. The acquirer increments nwait and then re-checks count; the
//     releaser increments count and then reads nwait, all seq_cst: by
//     Dekker's argument one of them sees the other, so a releaser that
//     reads nwait == 0 and leaves has a count the acquirer will see. nwait
//     changes only under the root's lock; it is read without it as a hint.
//   - A dequeued waiter is readied after the root's lock is released;
//     with handoff its ticket says it already owns one count (handoff only
//     happens with a waiter blocked on the value, which keeps it alive).
//
// Cond invariants: wait is the next ticket to give a waiter (atomic
// fetch-add, outside the lock: cond_wait takes its ticket before unlocking
// the mutex, so a signal after that unlock is counted); notify is the next
// ticket to wake, written under q.lock and read racily by the fast exits.
// A waiter whose ticket is below notify when it takes q.lock was already
// signalled and does not park. A signaller touches the cond_t only under
// q.lock (and the racy fast-exit reads), never after readying a waiter.
#include "kernel/chan.h"
#include "kernel/sched.h"
#include "lib/panic.h"

// The table and its hash are goro.h's (struct goro_semroot), for
// sema_release's inline check of nwait.
struct goro_semroot goro_semtable[GORO_SEMTABLE_SIZE];

static bool cansemacquire(uint32_t *count)
{
    uint32_t v = __atomic_load_n(count, __ATOMIC_SEQ_CST);    // seq_cst: see nwait above
    while (v > 0)
        // seq_cst: the count's side of the Dekker with nwait (see above)
        if (__atomic_compare_exchange_n(count, &v, v - 1, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return true;
    return false;
}

void semacquire(sema_t *s, bool lifo, const char *reason)
{
    if (cansemacquire(&s->count))
        return;
    struct goro_semroot *root = goro_semroot(s);
    struct sudog sg = { .elem = s };
    for (;;) {
        uint64_t fl = irq_save();
        wq_lock(&root->q.lock);
        __atomic_fetch_add(&root->q.nwait, 1, __ATOMIC_SEQ_CST);  // seq_cst: before the re-check below
        if (cansemacquire(&s->count)) {
            __atomic_fetch_sub(&root->q.nwait, 1, __ATOMIC_RELAXED);   // relaxed: under the root's lock; a hint outside
            wq_unlock(&root->q.lock);
            irq_restore(fl);
            return;
        }
        sg.g = getm()->curg;
        sg.ticket = 0;
        if (lifo)
            wq_push_front(&root->q, &sg);
        else
            wq_push_back(&root->q, &sg);
        gopark(wq_park_unlock, &root->q.lock, reason, s);
        if (sg.ticket || cansemacquire(&s->count))
            return;
        // Another goroutine took the count first: wait again, at the front.
        lifo = true;
    }
}

// semrelease after its add found waiters on s's root: wakes the first
// that waits on s, if any.
static void semrelease_wake(sema_t *s, bool handoff)
{
    struct goro_semroot *root = goro_semroot(s);
    uint64_t fl = irq_save();
    wq_lock(&root->q.lock);
    struct sudog *sg = 0;
    for (struct sudog *w = root->q.head; w; w = w->next) {
        if (w->elem == s) {
            sg = w;
            break;
        }
    }
    if (sg) {
        wq_remove(&root->q, sg);
        __atomic_fetch_sub(&root->q.nwait, 1, __ATOMIC_RELAXED);   // relaxed: under the root's lock; a hint outside
    }
    wq_unlock(&root->q.lock);
    bool handed = false;
    if (sg) {
        handed = handoff && cansemacquire(&s->count);
        sg->ticket = handed;
        goready(sg->g, true);        // sg is the woken G's from here on
    }
    irq_restore(fl);
    // Starvation mode: let the waiter that owns the count run now, on our
    // time slice, instead of after our next lock attempt. Only a G that may
    // switch yields (Go's m.locks == 0): inside preempt_disable or a
    // blocking call the preempt count is held, and with interrupts off the
    // caller may hold a lock; there the waiter, in runnext, runs when the
    // P next schedules.
    if (handed && preempt_count() == 0 && irqs_enabled())
        gosched();
}

void semrelease(sema_t *s, bool handoff)
{
    struct goro_semroot *root = goro_semroot(s);
    __atomic_fetch_add(&s->count, 1, __ATOMIC_SEQ_CST);   // seq_cst: before the nwait read; s may die now
    if (__atomic_load_n(&root->q.nwait, __ATOMIC_SEQ_CST) != 0)    // seq_cst: Dekker with semacquire (see top)
        semrelease_wake(s, handoff);
}

uint32_t sema_waiters(const sema_t *s)
{
    struct goro_semroot *root = goro_semroot(s);
    uint32_t n = 0;
    uint64_t fl = irq_save();
    wq_lock(&root->q.lock);
    for (struct sudog *w = root->q.head; w; w = w->next)
        n += w->elem == s;
    wq_unlock(&root->q.lock);
    irq_restore(fl);
    return n;
}

// goro.h's sema_acquire found no count (or lost its CAS).
void sema_acquire_slow(sema_t *s)
{
    semacquire(s, false, "semacquire");
}

bool sema_try_acquire(sema_t *s)
{
    return cansemacquire(&s->count);
}

// goro.h's sema_release made its add and found waiters on s's root.
void sema_release_slow(sema_t *s)
{
    semrelease_wake(s, false);
}

// ---- sync.Cond ------------------------------------------------------------------

static bool ticket_less(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

void cond_wait(cond_t *c, mutex_t *m)
{
    uint32_t t = __atomic_fetch_add(&c->wait, 1, __ATOMIC_SEQ_CST);   // seq_cst: before the unlock
    mutex_unlock(m);
    uint64_t fl = irq_save();
    wq_lock(&c->q.lock);
    // Relaxed: notify is written under q.lock, which we hold.
    if (ticket_less(t, __atomic_load_n(&c->notify, __ATOMIC_RELAXED))) {
        wq_unlock(&c->q.lock);
        irq_restore(fl);
    } else {
        struct sudog sg = { .g = getm()->curg, .ticket = t };
        wq_push_back(&c->q, &sg);
        gopark(wq_park_unlock, &c->q.lock, "sync.Cond.Wait", c);
    }
    mutex_lock(m);
}

void cond_signal(cond_t *c)
{
    // No waiter since the last signal: nothing to do, without the lock.
    // seq_cst: wait pairs with cond_wait's fetch-add, which comes before
    // that waiter's unlock, so a signal after the unlock sees its ticket.
    if (__atomic_load_n(&c->wait, __ATOMIC_SEQ_CST) == __atomic_load_n(&c->notify, __ATOMIC_SEQ_CST))
        return;
    uint64_t fl = irq_save();
    wq_lock(&c->q.lock);
    uint32_t t = c->notify;
    if (t == __atomic_load_n(&c->wait, __ATOMIC_SEQ_CST)) {   // seq_cst: as above, now under q.lock
        wq_unlock(&c->q.lock);
        irq_restore(fl);
        return;
    }
    __atomic_store_n(&c->notify, t + 1, __ATOMIC_RELAXED);     // relaxed: q.lock orders it for waiters
    // The waiter with ticket t may not have queued yet (it took the ticket
    // and is on its way to the lock); then it sees notify > t and returns.
    struct sudog *sg;
    for (sg = c->q.head; sg; sg = sg->next)
        if (sg->ticket == t)
            break;
    if (sg)
        wq_remove(&c->q, sg);
    wq_unlock(&c->q.lock);
    if (sg)
        goready(sg->g, true);
    irq_restore(fl);
}

void cond_broadcast(cond_t *c)
{
    // seq_cst: as in cond_signal.
    if (__atomic_load_n(&c->wait, __ATOMIC_SEQ_CST) == __atomic_load_n(&c->notify, __ATOMIC_SEQ_CST))
        return;
    uint64_t fl = irq_save();
    wq_lock(&c->q.lock);
    struct sudog *list = c->q.head;
    c->q.head = c->q.tail = 0;
    // Every ticket handed out so far is woken. seq_cst load as in
    // cond_signal; relaxed store: q.lock orders it for waiters.
    __atomic_store_n(&c->notify, __atomic_load_n(&c->wait, __ATOMIC_SEQ_CST), __ATOMIC_RELAXED);
    wq_unlock(&c->q.lock);
    while (list) {
        struct sudog *sg = list;
        list = sg->next;            // read before goready: sg dies with its G's frame
        goready(sg->g, true);        // runnext, as Go's goready: the last one readied runs next
    }
    irq_restore(fl);
}
