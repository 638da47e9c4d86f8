// SPDX-License-Identifier: MIT
// Mutex, RWMutex, WaitGroup and Once: after Go's src/sync (mutex.go,
// rwmutex.go, waitgroup.go, once.go), over the semaphore of sync_sema.c.
//
// mutex_t.state, atomic, any core:
//   bit 0 LOCKED    held
//   bit 1 WOKEN     a waiter is awake and competing (unlock need not wake one)
//   bit 2 STARVING  starvation mode: unlock hands the mutex to the oldest waiter
//   bits 3..        waiters parked (or about to park) on m->sema
// Normal mode: waiters queue FIFO, but a woken waiter competes with newly
// arriving goroutines, which tend to win (they are already running); a
// woken waiter that lost goes back to the front of the queue. A waiter that
// has waited more than 1 ms sets STARVING; then unlock hands the lock over
// (semrelease with handoff), newcomers queue at the tail without trying,
// and the waiter that gets it leaves starvation mode when it is the last
// one or has waited less than 1 ms. Orderings: acquiring transitions
// (CAS setting LOCKED, the hand-off's add) are acquire; unlocking ones
// release (the inline fast paths in goro.h); the others relaxed CAS loops
// whose outcome is re-read under the same word.
//
// rwmutex_t (Go's): reader_count counts readers in, and goes negative by
// RW_MAX_READERS while a writer holds or waits; reader_wait counts readers
// the waiting writer still needs to leave. Every operation is a seq_cst
// atomic add or CAS on these words, as in Go.
//
// waitgroup_t.state: counter << 32 | waiters, one 64-bit word so that the
// "counter reached zero with waiters" check sees both at once (seq_cst).
//
// once_t.done: 0 until fn has returned (or ended its goroutine: a gdefer
// sets it then, as Go's defers do); set with release under the mutex,
// read with acquire on the fast path, so once_do's callers see fn's writes.
#include "kernel/chan.h"
#include "kernel/sched.h"
#include "lib/panic.h"

#define MUTEX_LOCKED 1
#define MUTEX_WOKEN 2
#define MUTEX_STARVING 4
#define MUTEX_WAITER_SHIFT 3
#define STARVATION_THRESHOLD_NS 1000000ull
#define ACTIVE_SPIN 4               // spin rounds before parking
#define ACTIVE_SPIN_PAUSES 30       // PAUSEs per round

// Spinning makes sense only when another core runs the holder, other Ps are
// busy (an idle P would rather run the waiter's peers), and nothing waits
// to run here. Go's sync_runtime_canSpin.
static bool can_spin(int iter)
{
    if (iter >= ACTIVE_SPIN || sched.ncpu <= 1)
        return false;
    // Relaxed: a heuristic; stale counts cost at most a few useless spins.
    uint32_t busy = __atomic_load_n(&sched.npidle, __ATOMIC_RELAXED) +
                    __atomic_load_n(&sched.nmspinning, __ATOMIC_RELAXED) + 1;   // relaxed: as npidle
    if (__atomic_load_n(&sched.gomaxprocs, __ATOMIC_RELAXED) <= busy)   // relaxed: the same heuristic
        return false;
    struct m *mp = acquirem();
    bool empty = mp->p && runqempty(&mp->p->runq);    // no P: in a blocking call, which may not wait
    releasem(mp);
    return empty;
}

static void do_spin(void)
{
    for (int i = 0; i < ACTIVE_SPIN_PAUSES; i++)
        cpu_relax();
}

static bool cas(int32_t *p, int32_t *old, int32_t new, int order)
{
    // order on success is the caller's (each call says why); relaxed on
    // failure: the caller loops with the value read and decides again.
    return __atomic_compare_exchange_n(p, old, new, false, order, __ATOMIC_RELAXED);
}

void mutex_lock_slow(mutex_t *m)
{
    uint64_t wait_start = 0;
    bool starving = false, awoke = false;
    int iter = 0;
    int32_t old = __atomic_load_n(&m->state, __ATOMIC_RELAXED);    // relaxed: a guess the CAS below checks
    for (;;) {
        // Spin while held by a running goroutine, not in starvation mode
        // (then the lock goes to the queue anyway). Setting WOKEN tells
        // unlock not to wake a parked waiter while we compete.
        if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) == MUTEX_LOCKED && can_spin(iter)) {
            if (!awoke && !(old & MUTEX_WOKEN) && (old >> MUTEX_WAITER_SHIFT) != 0 &&
                cas(&m->state, &old, old | MUTEX_WOKEN, __ATOMIC_RELAXED))   // relaxed: a flag for unlock, guards no data
                awoke = true;
            do_spin();
            iter++;
            old = __atomic_load_n(&m->state, __ATOMIC_RELAXED);    // relaxed: re-checked by the CAS
            continue;
        }
        int32_t new = old;
        if (!(old & MUTEX_STARVING))
            new |= MUTEX_LOCKED;            // newcomers never take a starving mutex
        if (old & (MUTEX_LOCKED | MUTEX_STARVING))
            new += 1 << MUTEX_WAITER_SHIFT;
        if (starving && (old & MUTEX_LOCKED))
            new |= MUTEX_STARVING;
        if (awoke) {
            if (!(new & MUTEX_WOKEN))
                chan_fatal("sync: inconsistent mutex state", __builtin_return_address(0));
            new &= ~MUTEX_WOKEN;
        }
        if (!cas(&m->state, &old, new, __ATOMIC_ACQUIRE)) // acquire: pairs with unlock's release
            continue;
        if (!(old & (MUTEX_LOCKED | MUTEX_STARVING)))
            return;                         // took it
        bool queued_before = wait_start != 0;
        if (!wait_start)
            wait_start = nanotime();
        semacquire(&m->sema, queued_before, "sync.Mutex.Lock");
        starving = starving || nanotime() - wait_start > STARVATION_THRESHOLD_NS;
        // Relaxed: semacquire's queue lock ordered us after the releaser;
        // a hand-over is then taken with the acquire add below.
        old = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
        if (old & MUTEX_STARVING) {
            // Handed over: we own it; LOCKED is clear and we are still
            // counted as a waiter.
            if ((old & (MUTEX_LOCKED | MUTEX_WOKEN)) || (old >> MUTEX_WAITER_SHIFT) == 0)
                chan_fatal("sync: inconsistent mutex state", __builtin_return_address(0));
            int32_t delta = MUTEX_LOCKED - (1 << MUTEX_WAITER_SHIFT);
            if (!starving || (old >> MUTEX_WAITER_SHIFT) == 1)
                delta -= MUTEX_STARVING;    // leave starvation mode
            __atomic_fetch_add(&m->state, delta, __ATOMIC_ACQUIRE);  // acquire: pairs with unlock's release
            return;
        }
        awoke = true;
        iter = 0;
    }
}

bool mutex_starving(const mutex_t *m)
{
    return __atomic_load_n(&m->state, __ATOMIC_RELAXED) & MUTEX_STARVING;   // relaxed: exact only while m is held
}

// state: the value after the fast path dropped LOCKED.
void mutex_unlock_slow(mutex_t *m, int32_t state)
{
    if (!((state + MUTEX_LOCKED) & MUTEX_LOCKED))
        chan_fatal("sync: unlock of unlocked mutex", __builtin_return_address(0));
    if (state & MUTEX_STARVING) {
        semrelease(&m->sema, true);     // hand over, and yield to the new owner
        return;
    }
    int32_t old = state;
    for (;;) {
        // Nobody to wake, or someone already took it, is awake, or it went
        // into starvation mode (the handing-over is then someone else's).
        if ((old >> MUTEX_WAITER_SHIFT) == 0 || (old & (MUTEX_LOCKED | MUTEX_WOKEN | MUTEX_STARVING)))
            return;
        int32_t new = (old - (1 << MUTEX_WAITER_SHIFT)) | MUTEX_WOKEN;
        // Relaxed: the unlock's release was the fast path's sub; this only
        // moves a waiter count to WOKEN, and semrelease orders the wake.
        if (cas(&m->state, &old, new, __ATOMIC_RELAXED)) {
            semrelease(&m->sema, false);
            return;
        }
    }
}

bool mutex_trylock(mutex_t *m)
{
    int32_t old = __atomic_load_n(&m->state, __ATOMIC_RELAXED);    // relaxed: a guess the CAS checks
    if (old & (MUTEX_LOCKED | MUTEX_STARVING))
        return false;
    return cas(&m->state, &old, old | MUTEX_LOCKED, __ATOMIC_ACQUIRE);   // acquire: pairs with unlock's release
}

// ---- RWMutex ------------------------------------------------------------------

#define RW_MAX_READERS RWMUTEX_MAX_READERS

// The slow paths of goro.h's inline fast paths (rlock's add found a
// writer; runlock's found one waiting; lock's found readers in; unlock's
// found readers queued), after Go's rwmutex.go.

void rwmutex_rlock_slow(rwmutex_t *rw)
{
    semacquire(&rw->reader_sem, false, "sync.RWMutex.RLock");  // a writer holds or waits
}

// r: reader_count after runlock's sub, negative. Not inlined, as
// wg_add_slow, for the fatal error's caller.
__attribute__((noinline)) void rwmutex_runlock_slow(rwmutex_t *rw, int32_t r)
{
    if (r + 1 == 0 || r + 1 == -RW_MAX_READERS)
        chan_fatal("sync: RUnlock of unlocked RWMutex", __builtin_return_address(0));
    // A writer waits: the last reader it waits for wakes it.
    // seq_cst: pairs with the writer's add of the readers it waits for.
    if (__atomic_sub_fetch(&rw->reader_wait, 1, __ATOMIC_SEQ_CST) == 0)
        semrelease(&rw->writer_sem, false);
}

// r: the readers in as lock announced the writer (its sub), not 0.
void rwmutex_lock_slow(rwmutex_t *rw, int32_t r)
{
    // seq_cst: pairs with runlock's decrement of reader_wait.
    if (__atomic_add_fetch(&rw->reader_wait, r, __ATOMIC_SEQ_CST) != 0)
        semacquire(&rw->writer_sem, false, "sync.RWMutex.Lock");
}

bool rwmutex_tryrlock(rwmutex_t *rw)
{
    int32_t c = __atomic_load_n(&rw->reader_count, __ATOMIC_SEQ_CST);     // seq_cst: as rlock's add
    while (c >= 0)                  // no writer holds or waits
        // seq_cst: rlock's add, if no writer came (on failure c is reloaded)
        if (__atomic_compare_exchange_n(&rw->reader_count, &c, c + 1, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return true;
    return false;
}

bool rwmutex_trylock(rwmutex_t *rw)
{
    if (!mutex_trylock(&rw->w))
        return false;
    int32_t zero = 0;
    // seq_cst: lock's sub, if no reader is in
    if (!__atomic_compare_exchange_n(&rw->reader_count, &zero, -RW_MAX_READERS, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        mutex_unlock(&rw->w);       // readers are in
        return false;
    }
    return true;
}

// r: reader_count after unlock's add, not 0: the readers that queued
// behind the writer, or RW_MAX_READERS or more for an unlocked RWMutex.
// Not inlined, as wg_add_slow.
__attribute__((noinline)) void rwmutex_unlock_slow(rwmutex_t *rw, int32_t r)
{
    if (r >= RW_MAX_READERS)
        chan_fatal("sync: Unlock of unlocked RWMutex", __builtin_return_address(0));
    for (int32_t i = 0; i < r; i++)
        semrelease(&rw->reader_sem, false);     // the readers that queued behind us
    mutex_unlock(&rw->w);
}

// ---- WaitGroup ----------------------------------------------------------------

// state: the word after wg_add's add, whose fast path saw the counter
// below 0, or waiters. Not inlined: its return address is the place in
// the caller that wg_add (inline) was called from, for the fatal errors.
__attribute__((noinline)) void wg_add_slow(waitgroup_t *wg, int delta, uint64_t state)
{
    void *pc = __builtin_return_address(0);
    int32_t v = (int32_t)(state >> 32);
    uint32_t w = (uint32_t)state;
    if (v < 0)
        chan_fatal("sync: negative WaitGroup counter", pc);
    if (w != 0 && delta > 0 && v == delta)
        chan_fatal("sync: WaitGroup misuse: wg_add called concurrently with wg_wait", pc);
    if (v > 0 || w == 0)
        return;
    // The counter reached 0 with waiters: nobody may change the state now
    // (a concurrent add would be the misuse above). Reset, then wake them.
    if (__atomic_load_n(&wg->state, __ATOMIC_SEQ_CST) != state)    // seq_cst: a misuse check, as Go's
        chan_fatal("sync: WaitGroup misuse: wg_add called concurrently with wg_wait", pc);
    __atomic_store_n(&wg->state, 0, __ATOMIC_SEQ_CST);     // seq_cst: before the wake-ups, seen by wg_wait's reuse check
    for (; w; w--)
        semrelease(&wg->sema, false);
}

// state: the word wg_wait read, with a counter above 0.
void wg_wait_slow(waitgroup_t *wg, uint64_t state)
{
    for (;;) {
        if ((state >> 32) == 0)
            return;
        // seq_cst both ways: counts this waiter in the same total order
        // as wg_add's adds (the failure value is the next try's state).
        if (__atomic_compare_exchange_n(&wg->state, &state, state + 1, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            semacquire(&wg->sema, false, "sync.WaitGroup.Wait");
            if (__atomic_load_n(&wg->state, __ATOMIC_SEQ_CST) != 0)    // seq_cst: pairs with wg_add's reset
                chan_fatal("sync: WaitGroup is reused before previous wg_wait has returned",
                           __builtin_return_address(0));
            return;
        }
    }
}

// ---- Once -------------------------------------------------------------------

// fn ended its goroutine (goexit) instead of returning: as Go's doSlow,
// whose two defers run then, the Once counts as done and is unlocked, so
// later callers return instead of waiting forever.
static void once_exited(void *arg)
{
    once_t *o = arg;
    __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);   // release: fn's writes before done
    mutex_unlock(&o->m);
}

void once_do_slow(once_t *o, void (*fn)(void *), void *arg)
{
    mutex_lock(&o->m);
    if (!o->done) {
        struct gdefer d;
        gdefer_push(&d, once_exited, o);
        fn(arg);
        gdefer_pop(&d);
        __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);   // release: fn's writes before done
    }
    mutex_unlock(&o->m);
}
