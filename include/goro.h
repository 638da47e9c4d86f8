// SPDX-License-Identifier: MIT
// goro's public API: the one header an application includes.
// Go's names, C spelling; docs/api.md is the overview, docs/design.md
// describes how they are built.
// It stands alone: applications are compiled with include/ as their only
// path into the tree (make APP_SRC=), so they reach nothing else of it.
#ifndef GORO_H
#define GORO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---- applications ----------------------------------------------------------

struct goro_app {
    const char *name;
    const char *help;
    int (*main)(int argc, char **argv);
};

// Registers an application: `app=name` on the kernel command line runs
// main_fn as the main goroutine; when it returns, the machine exits with its
// return value.
#define GORO_APP(name_, help_, main_fn_)                                          \
    static const struct goro_app goro_app_##name_                                 \
        __attribute__((used, section(".goro_apps"), aligned(8))) = {              \
            #name_, help_, main_fn_                                               \
        }

// ---- the C library (lib/string.c) ------------------------------------------

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strstr(const char *s, const char *sub);

// Sorts a small array of samples (a few hundred values at most) in place,
// ascending.
static inline void sort_u64(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

// ---- output and exit -------------------------------------------------------

int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void exit(int code) __attribute__((noreturn));
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

// ---- goroutines ------------------------------------------------------------

// Starts fn(arg) as a new goroutine and returns its id. Like Go, the new
// goroutine is queued to run next on this P.
uint64_t go(void (*fn)(void *), void *arg);
void gosched(void);                      // yield the core; stay runnable
void goexit(void) __attribute__((noreturn));
uint64_t goid(void);
int num_goroutine(void);
// Sets the number of Ps (at most num_cpu(); larger values clamp) and returns
// the previous value; n <= 0 only queries. A change stops the world.
int gomaxprocs(int n);

// Scheduler counters, per P and in total. Each P's are written by its
// holder and read here without stopping anyone: a snapshot, not a cut.
struct sched_pstats {
    uint64_t runs;              // G executions started (time slices)
    uint64_t steal_attempts;    // victims tried
    uint64_t steals;            // steals that took at least one G
    uint64_t stolen;            // Gs taken by steals
    uint64_t steals_local;      // steals from a victim on the same NUMA node
    uint64_t steals_remote;     // steals from another node
    uint64_t preemptions;       // Gs preempted at a timer interrupt
    uint64_t wake_ipis;         // IPIs sent to wake an idle core
    uint64_t halts;             // times a core halted for lack of work
    uint64_t spin_cycles;       // TSC cycles spent spinning for work
    uint64_t global_gets;       // Gs taken from the global run queue
    uint64_t preemptions_quantum;   // of preemptions, those for a time slice run out
    uint64_t preemptions_timers;    // of preemptions, those for a due timer of its P (at most one per 1 ms)
    uint64_t preemptions_lock_busy; // of quantum preemptions, those queued on their own P: sched.lock was held
};
#define SCHED_STATS_MAXP 1024     // every P (MAX_CPUS): the struct is 100 KiB, keep it off stacks
struct sched_stats {
    int gomaxprocs;
    int ncpu;
    struct sched_pstats total;
    struct sched_pstats p[SCHED_STATS_MAXP];
};
void sched_stats(struct sched_stats *s);

// The scheduler's state, for monitors and torture programs (apps/soak
// checks that no runnable G waits while a P idles with it). Read without
// stopping anyone: racing values, not a cut; a property built on it must
// hold over several snapshots.
enum sched_pstatus { SCHED_P_IDLE, SCHED_P_RUNNING, SCHED_P_SYSCALL, SCHED_P_STOPPED,
                     SCHED_P_DEAD };
struct sched_state {
    int gomaxprocs;
    int npidle;                 // Ps on the idle list
    int nmspinning;             // Ms looking for work
    int nmidle;                 // Ms (cores) idle, free to take a P
    int global_runq;            // Gs on the global run queue
    bool stopping;              // a stop-the-world is in progress
    struct {
        uint8_t status;         // enum sched_pstatus
        bool runnext;           // a G waits in its runnext slot
        uint32_t runq_head;     // moves on every G taken from its local queue
        uint32_t runq_len;      // Gs in its local queue
    } p[SCHED_STATS_MAXP];
};
void sched_state(struct sched_state *s);
// The scheduler's seed: seed= of the command line, or the one chosen at
// boot. A program that draws its own randomness from it replays with the
// same seed= (apps/soak).
uint64_t sched_seed(void);
// The time slice now (quantum= on the command line; the shell may change it).
uint64_t sched_quantum_ns(void);
// Sets the time slice, in force from each core's next timer interrupt;
// returns the previous one. Values outside 20 us..1 s (the command line's
// quantum= range) clamp to it; 0 only queries. The shell's quantum
// command calls it.
uint64_t sched_set_quantum_ns(uint64_t ns);
// The steal order (steal= on the command line): true tries the victims on
// the thief's own NUMA node first (numa), false every P alike (flat).
// Returns the previous setting; each stealing P takes the new one at its
// next round. The shell's steal command calls it.
bool sched_set_steal_by_node(bool by_node);

// ---- machine ---------------------------------------------------------------

int num_cpu(void);
int core_id(void);
uint64_t nanotime(void);
// The time of day: nanoseconds since 1970-01-01 UTC, the CMOS clock read at
// boot plus nanotime() since (less than a second behind the clock; no
// later correction). 0 when the boot found no valid time in the clock.
int64_t walltime_ns(void);
uint64_t cputicks(void);                 // the TSC
uint64_t cputicks_hz(void);              // cputicks per second
void sleep_ns(uint64_t ns);              // park for at least ns nanoseconds

// What the machine is, for benchmark configuration lines: the CPU's brand
// string (truncated to n - 1 bytes), and what runs the machine: "tcg",
// "kvm", "hypervisor" (another one) or "native".
void cpu_model(char *buf, size_t n);
const char *cpu_accel(void);
// How the core's timer interrupt is armed: "tsc-deadline" or "apic-oneshot".
const char *cpu_timer_mode(void);
// Go's procyield: n PAUSE instructions, for a loop that polls memory
// another core will write (the sibling hyperthread runs meanwhile).
static inline void procyield(uint32_t n)
{
    while (n--)
        __builtin_ia32_pause();
}

// The boot, for the boot_time benchmark: each core's online moment in ns
// after the kernel's first instruction (0: not after it) in
// online_ns[0..max), and the loader's name ("multiboot1", "multiboot2",
// "uefi") in *loader. Returns the number of cores, or 0 when the loader
// recorded no entry time.
int boot_times(uint64_t *online_ns, int max, const char **loader);

// A G that must not be preempted or moved to another core between these
// calls (they nest). A preemption that comes due meanwhile happens at the
// outermost preempt_enable. Between them the G may not wait (block or
// yield): that is a fatal error naming the call.
void preempt_disable(void);
void preempt_enable(void);

// A blocking call that holds the core (a device poll, a long computation
// the scheduler should not count on), as Go's entersyscall/exitsyscall.
// Between the two the goroutine keeps its core, unpreempted, but gives up
// its P: sysmon may hand the P to another core, so that the goroutines
// queued behind it and its timers do not wait for the call (after 20 us
// when goroutines or timers wait for it or no other P is free, after 10 ms
// in any case, if a core can take it); the call still counts against the
// goroutine's time slice. exitsyscall takes its P back if nobody took
// it; if it was taken, the goroutine takes an idle P (or its own, back
// from another core) and goes on at once only when no other goroutine
// waits, else it waits in the global run queue behind them. Calls do not
// nest.
//
// The code between may compute, read and write memory (malloc and free
// too), print, read the clock, and make other goroutines runnable without
// waiting itself: a send or receive that finds its partner waiting,
// chan_try_send/chan_try_recv, chan_close, mutex_unlock, rwmutex unlocks,
// sema_release, cond_signal/cond_broadcast, wg_done, gtimer_stop. Those it
// readies go to an idle core or the global run queue, as ones an
// interrupt readies. It may not wait (block or yield: a held lock, a send
// with no receiver, sleep_ns, irq_wait with nothing pending, gosched,
// exit), start goroutines (go) or timers (time_after, time_afterfunc,
// gtimer_new/reset, ticker_new/reset), or call gomaxprocs: each of those
// is a fatal error naming the call and its call site.
void entersyscall(void);
void exitsyscall(void);

// ---- channels, select and sync (kernel/chan.c, select.c, sync*.c) ---------
//
// Go's semantics in C. Blocking calls park the calling goroutine; call them
// from a goroutine with interrupts on. Fatal errors name the goroutine and
// the call site and stop the machine (QEMU exit 255).

struct goro_waitq {             // internal: a FIFO of parked goroutines
    uint32_t lock;
    uint32_t nwait;
    void *head, *tail;
};

// internal: a channel (kernel/chan.c). Its layout is here for the inline
// non-blocking checks below, which read closed, qcount and the queues'
// heads without the lock; nothing else outside kernel/ may touch it.
typedef struct chan {
    // lock held (closed, qcount and the queues' heads also read without it)
    uint32_t lock;
    uint32_t closed;
    size_t qcount;                  // values in buf
    size_t sendx, recvx;            // buf indices of the next send / receive
    struct goro_waitq recvq;        // blocked receivers (kernel/chan.h's struct sudog)
    struct goro_waitq sendq;        // blocked senders
    // read-only after chan_make
    size_t dataqsiz;                // cap
    uint32_t elemsize;
    uint8_t *buf;
} chan_t;

// A channel of elem_size-byte values (0 is allowed: signals only) with cap
// buffered slots (0: unbuffered, every send meets a receive). Never NULL.
chan_t *chan_make(size_t elem_size, size_t cap);
// Returns the channel's memory. Nobody may use c afterwards; no goroutine
// may be blocked on it. (Go's collector does this; C needs the call.)
void chan_free(chan_t *c);
// Blocks until the value at elem (elem_size bytes; NULL sends the zero
// value) is taken by a receiver or buffered. Fatal on a closed channel; a
// nil channel blocks forever.
void chan_send(chan_t *c, const void *elem);
// Blocks until a value arrives and copies it to elem (NULL discards it).
// Returns false when c is closed and drained; elem is zeroed then.
bool chan_recv(chan_t *c, void *elem);
// Receives without blocking. elem is zeroed unless CHAN_RECEIVED.
enum chan_try_result {
    CHAN_WOULD_BLOCK = 0,       // nothing to receive now
    CHAN_RECEIVED = 1,          // a value was copied to elem
    CHAN_CLOSED = -1,           // closed and drained
};
bool chan_try_send_slow(chan_t *c, const void *elem);
int chan_try_recv_slow(chan_t *c, void *elem);
// internal: nothing to receive, no value buffered and no sender parked (an
// unbuffered channel's qcount stays 0; a buffered one has parked senders
// only when full). Acquire: the loads stay before a later load of closed.
static inline bool goro_chan_empty(chan_t *c)
{
    return (__atomic_load_n(&c->qcount, __ATOMIC_ACQUIRE) |                // acquire: see above
            (uintptr_t)__atomic_load_n(&c->sendq.head, __ATOMIC_ACQUIRE)) == 0;    // acquire: see above
}
// Sends without blocking: true if sent, false if it would block. Fatal on a
// closed channel, like a select with a default. Also callable from g0 with
// a P held (a timer's delivery: time_after and tickers use it).
// Inline, as Go's chansend checks before it locks: a send to an open
// channel with no room (every slot full and no receiver parked; a buffered
// channel has parked receivers only when empty) fails from three loads,
// without the lock. closed never goes back to 0 and a closed channel never
// fills up, so, in either order, the loads saw an instant when the channel
// was open and full (relaxed: nothing read after depends on them).
static inline bool chan_try_send(chan_t *c, const void *elem)
{
    if (c && ((__atomic_load_n(&c->qcount, __ATOMIC_RELAXED) ^ c->dataqsiz) |          // relaxed: see above
              (uintptr_t)__atomic_load_n(&c->recvq.head, __ATOMIC_RELAXED) |           // relaxed: see above
              __atomic_load_n(&c->closed, __ATOMIC_RELAXED)) == 0)                     // relaxed: see above
        return false;
    return chan_try_send_slow(c, elem);
}
// Inline, as Go's chanrecv checks before it locks: a receive that finds an
// open channel empty fails, and one that finds it closed and still empty
// reports closed, from loads alone. Emptiness is read before closed: a
// channel seen empty and then not closed was empty and open at the first
// read; one seen closed and then empty stays so (nothing is sent after a
// close), so a value sent before the close is never missed.
static inline int chan_try_recv(chan_t *c, void *elem)
{
    if (c && goro_chan_empty(c)) {
        int r = CHAN_WOULD_BLOCK;
        if (__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) {   // acquire: pairs with chan_close's release
            if (!goro_chan_empty(c))
                return chan_try_recv_slow(c, elem);
            r = CHAN_CLOSED;
        }
        if (elem)
            __builtin_memset(elem, 0, c->elemsize);
        return r;
    }
    return chan_try_recv_slow(c, elem);
}
// Wakes every blocked receiver (they report closed once the buffer is
// drained); blocked senders die with the fatal error. Fatal on a nil or
// closed channel.
void chan_close(chan_t *c);
size_t chan_len(chan_t *c);             // values buffered now (a snapshot)
size_t chan_cap(chan_t *c);

// select: one case per channel operation. A recv case copies into elem
// (NULL discards) and sets ok (false: closed and drained, elem zeroed).
struct select_case {
    chan_t *c;                  // NULL: never ready
    enum { SELECT_SEND, SELECT_RECV } dir;
    void *elem;
    bool ok;
};
#define SELECT_MAX_CASES 64
// Returns the index of the case that proceeded, chosen uniformly among the
// ready ones; with !block and none ready, returns -1 (the default case).
// n == 0 with block parks forever, like Go's `select {}`.
int chan_select(struct select_case *cases, int n, bool block);

// Timers (kernel/timechan.c): Go's time.After, NewTimer, AfterFunc and
// NewTicker, with Go's semantics. A timer channel has one slot and receives
// the nanotime() at which its timer fired; a delivery that finds the slot
// full is dropped (a ticker whose reader is behind skips ticks), as in Go.
// Durations are nanoseconds; so large that the deadline would overflow
// means never (Go saturates too); 0 means now. Timers never fire early.
// C has no collector: the caller frees what it made (time_after's channel
// with chan_free once received from, timers with gtimer_free, tickers with
// ticker_free); nobody may use it afterwards.

// Go's time.After: a channel that receives once, ns from now.
chan_t *time_after(uint64_t ns);

// Go's time.Timer. gtimer_new: a timer whose channel (gtimer_chan)
// receives once, ns from now. time_afterfunc: a timer without a channel
// that runs fn(arg) in a goroutine of its own when it fires.
typedef struct gtimer gtimer_t;
gtimer_t *gtimer_new(uint64_t ns);
gtimer_t *time_afterfunc(uint64_t ns, void (*fn)(void *), void *arg);
chan_t *gtimer_chan(gtimer_t *t);              // NULL for time_afterfunc's
// Stops t: true if that kept it from firing, false if it had already
// fired or been stopped. Does not drain the channel (Go's Stop). An
// AfterFunc's fn already started runs on in its goroutine.
bool gtimer_stop(gtimer_t *t);
// Makes t fire ns from now (again, if it had fired or been stopped);
// returns what gtimer_stop would have. As in Go, a channel timer should be
// stopped and its channel drained first, or a stale value may be received.
bool gtimer_reset(gtimer_t *t, uint64_t ns);
// Stops t and frees it with its channel (which no goroutine may be
// blocked on). fn of a time_afterfunc that already started is unaffected.
void gtimer_free(gtimer_t *t);

// Go's time.Ticker: its channel receives every period_ns (> 0, else a
// fatal error, like Go's panic). ticker_stop stops the ticks; the channel
// stays open and readable, and ticker_reset restarts them: the next tick
// period_ns from now, then every period_ns.
typedef struct ticker ticker_t;
ticker_t *ticker_new(uint64_t period_ns);
chan_t *ticker_chan(ticker_t *t);
void ticker_stop(ticker_t *t);
void ticker_reset(ticker_t *t, uint64_t period_ns);
void ticker_free(ticker_t *t);                  // stops it; frees it and its channel

// sync. Every type is valid zero-initialized (the _INIT macros are {0}) and
// must not be copied once used.
// A counting semaphore with Go's runtime semantics: acquire waits for a
// positive count and takes one; waiters are served in FIFO order. The
// waiters queue in a table hashed by address, as in Go, so that a release
// touches the value only in its one atomic add: a waiter that returns may
// free it at once.
typedef struct {
    uint32_t count;
} sema_t;
#define SEMA_INIT {0}
void sema_acquire_slow(sema_t *s);
// The fast path inline, as Go inlines cansemacquire's into semacquire: a
// count there is taken with one CAS, no call. seq_cst: the count's side
// of the Dekker with the waiters' count (kernel/sync_sema.c).
static inline void sema_acquire(sema_t *s)
{
    uint32_t v = __atomic_load_n(&s->count, __ATOMIC_SEQ_CST);     // seq_cst: see above
    if (v == 0 || !__atomic_compare_exchange_n(&s->count, &v, v - 1, false, __ATOMIC_SEQ_CST,
                                               __ATOMIC_SEQ_CST))  // seq_cst: see above
        sema_acquire_slow(s);
}
bool sema_try_acquire(sema_t *s);
// internal: the semaphore table (kernel/sync_sema.c): waiters queue in the
// root their semaphore's address hashes to; sema_release reads its nwait.
#define GORO_SEMTABLE_SIZE 256
struct goro_semroot {
    struct goro_waitq q;        // q.lock held: the list; q.nwait read without it as a hint
} __attribute__((aligned(64)));
extern struct goro_semroot goro_semtable[GORO_SEMTABLE_SIZE];
static inline struct goro_semroot *goro_semroot(const sema_t *s)
{
    // Fibonacci hashing: the top 8 bits of the address times 2^64 / phi.
    return &goro_semtable[((uintptr_t)s * 0x9E3779B97F4A7C15ull) >> 56];
}
void sema_release_slow(sema_t *s);
// The fast path inline, as Go inlines semrelease's check of nwait: one
// atomic add and a load of the root's waiter count, no call unless a
// goroutine waits there. seq_cst: the add and the load are the release's
// side of the Dekker with the waiters' count (kernel/sync_sema.c); after
// the add s may be freed, so only its address is used.
static inline void sema_release(sema_t *s)
{
    struct goro_semroot *root = goro_semroot(s);
    __atomic_fetch_add(&s->count, 1, __ATOMIC_SEQ_CST);                     // seq_cst: see above
    if (__atomic_load_n(&root->q.nwait, __ATOMIC_SEQ_CST) != 0)             // seq_cst: see above
        sema_release_slow(s);
}
// Goroutines parked on s now: a snapshot, for tests and benchmarks that
// must know a waiter has parked before they release it.
uint32_t sema_waiters(const sema_t *s);

// Go's sync.Mutex: a CAS fast path, brief spinning while another core
// holds it, then a FIFO queue; a waiter that waited over 1 ms switches the
// mutex to starvation mode, where unlock hands it to the oldest waiter.
// As in Go, mutex_unlock may still touch the mutex after another goroutine
// has taken it: free one only when no goroutine can be inside its unlock.
typedef struct {
    int32_t state;
    sema_t sema;
} mutex_t;
#define MUTEX_INIT {0}
void mutex_lock_slow(mutex_t *m);
void mutex_unlock_slow(mutex_t *m, int32_t state);
bool mutex_trylock(mutex_t *m);
// The fast paths are inline, as in Go: lock is one CAS, unlock one add.
static inline void mutex_lock(mutex_t *m)
{
    int32_t unlocked = 0;
    // acquire: pairs with unlock's release; relaxed on failure: the slow
    // path loads the state again
    if (!__atomic_compare_exchange_n(&m->state, &unlocked, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        mutex_lock_slow(m);
}
static inline void mutex_unlock(mutex_t *m)
{
    int32_t state = __atomic_sub_fetch(&m->state, 1, __ATOMIC_RELEASE);  // release: publishes the critical section
    if (state != 0)
        mutex_unlock_slow(m, state);
}

// Go's sync.RWMutex: writers wait for readers in progress; a waiting writer
// blocks new readers.
typedef struct {
    mutex_t w;                  // held by the writer
    sema_t writer_sem;          // the writer waits here for readers to leave
    sema_t reader_sem;          // readers wait here for the writer
    int32_t reader_count;       // readers in; minus 2^30 while a writer waits/holds
    int32_t reader_wait;        // readers the writer still waits for
} rwmutex_t;
#define RWMUTEX_INIT {0}
#define RWMUTEX_MAX_READERS (1 << 30)
void rwmutex_rlock_slow(rwmutex_t *rw);
void rwmutex_runlock_slow(rwmutex_t *rw, int32_t r);
void rwmutex_lock_slow(rwmutex_t *rw, int32_t r);
void rwmutex_unlock_slow(rwmutex_t *rw, int32_t r);
// The fast paths are inline, as Go's RLock and RUnlock are: each is one
// atomic add on reader_count (Lock and Unlock add a mutex's CAS and add).
// seq_cst, as in Go: the adds of readers and writers are totally ordered,
// so exactly one side of a race waits (kernel/sync.c).
static inline void rwmutex_rlock(rwmutex_t *rw)
{
    if (__atomic_add_fetch(&rw->reader_count, 1, __ATOMIC_SEQ_CST) < 0)   // seq_cst: see above; acquire pairs with unlock
        rwmutex_rlock_slow(rw);
}
static inline void rwmutex_runlock(rwmutex_t *rw)
{
    int32_t r = __atomic_sub_fetch(&rw->reader_count, 1, __ATOMIC_SEQ_CST);   // seq_cst: see above; release to the writer
    if (r < 0)
        rwmutex_runlock_slow(rw, r);
}
static inline void rwmutex_lock(rwmutex_t *rw)
{
    mutex_lock(&rw->w);
    // Announce the writer; r readers are still in.
    int32_t r = __atomic_fetch_sub(&rw->reader_count, RWMUTEX_MAX_READERS, __ATOMIC_SEQ_CST);  // seq_cst: see above
    if (r != 0)
        rwmutex_lock_slow(rw, r);
}
static inline void rwmutex_unlock(rwmutex_t *rw)
{
    int32_t r = __atomic_add_fetch(&rw->reader_count, RWMUTEX_MAX_READERS, __ATOMIC_SEQ_CST);  // seq_cst: see above; release to the readers
    if (r != 0)
        rwmutex_unlock_slow(rw, r);     // readers queued behind the writer (or an unlocked RWMutex)
    else
        mutex_unlock(&rw->w);
}
// Go's TryRLock and TryLock: take the lock only if that needs no wait.
bool rwmutex_tryrlock(rwmutex_t *rw);
bool rwmutex_trylock(rwmutex_t *rw);

// Go's sync.WaitGroup. A negative counter is fatal.
typedef struct {
    uint64_t state;             // counter << 32 | waiters
    sema_t sema;
} waitgroup_t;
#define WAITGROUP_INIT {0}
void wg_add_slow(waitgroup_t *wg, int delta, uint64_t state);
void wg_wait_slow(waitgroup_t *wg, uint64_t state);
// The fast paths are inline: an add that leaves the counter at or above 0
// with no waiter is one atomic add, a wait for a zero counter one load. seq_cst
// as in Go: counter and waiters are one word, whose adds and the waiters'
// CAS are totally ordered; release publishes the done G's work to waiters.
static inline __attribute__((always_inline)) void wg_add(waitgroup_t *wg, int delta)
{
    uint64_t state = __atomic_add_fetch(&wg->state, (uint64_t)(int64_t)delta << 32, __ATOMIC_SEQ_CST);   // seq_cst: see above
    // A negative counter (its sign is the word's) or waiters to wake.
    if ((int64_t)state < 0 || (uint32_t)state != 0)
        wg_add_slow(wg, delta, state);
}
static inline __attribute__((always_inline)) void wg_done(waitgroup_t *wg)
{
    wg_add(wg, -1);
}
static inline void wg_wait(waitgroup_t *wg)
{
    uint64_t state = __atomic_load_n(&wg->state, __ATOMIC_SEQ_CST);    // seq_cst: acquire pairs with wg_add's release
    if ((state >> 32) != 0)
        wg_wait_slow(wg, state);
}

// Go's sync.Once: fn(arg) runs once; every once_do returns after it has.
// If fn ends its goroutine (goexit) the Once is done all the same, as in Go.
typedef struct {
    uint32_t done;
    mutex_t m;
} once_t;
#define ONCE_INIT {0}
void once_do_slow(once_t *o, void (*fn)(void *), void *arg);
// Inline, as Go's Do: after the first, a call is one acquire load.
static inline void once_do(once_t *o, void (*fn)(void *), void *arg)
{
    if (__builtin_expect(!__atomic_load_n(&o->done, __ATOMIC_ACQUIRE), 0))   // acquire: pairs with once_do_slow's release
        once_do_slow(o, fn, arg);
}

// Go's sync.Cond over a mutex_t. cond_wait unlocks m, waits for a signal,
// and locks m again before returning.
typedef struct {
    uint32_t wait;              // next ticket to hand a waiter
    uint32_t notify;            // next ticket to wake
    struct goro_waitq q;
} cond_t;
#define COND_INIT {0}
void cond_wait(cond_t *c, mutex_t *m);
void cond_signal(cond_t *c);
void cond_broadcast(cond_t *c);


// ---- memory and NUMA (kernel/numa.c, page.c, malloc.c) --------------------
//
// Nodes come from the ACPI SRAT (one node without it, or with numa=off) and
// are numbered 0..numa_nodes()-1. Memory is placed on the node that asks.

int numa_nodes(void);
// The calling goroutine's node: its core's node, now (a goroutine may move).
int numa_node(void);
// The node whose memory holds p, or -1 (not RAM, or a goroutine stack,
// whose virtual addresses are not translated).
int numa_node_of(const void *p);
// The node of core (0..num_cpu()-1).
int numa_core_node(uint32_t core);
// The ACPI SLIT distance between two nodes: 10 on the diagonal; 10/20
// without a SLIT.
int numa_distance(int a, int b);

// Physical pages (kernel/page.c), below malloc. Memory is identity-mapped:
// a page's physical address is its pointer.
#define PAGE_SIZE 4096ul
// npages contiguous pages, zeroed, aligned to PAGE_SIZE, from the calling
// core's node, else the nearest node that has them. Running out is a
// fatal error naming every node's usage: never NULL.
void *page_alloc(size_t npages);
// The same from node (0..numa_nodes()-1; < 0: the calling core's node).
void *page_alloc_node(size_t npages, int node);
// Any page from any page_alloc*, to the node it came from. A page freed
// twice, or not from page_alloc, is a fatal error.
void page_free(void *p, size_t npages);
// Page counts: snapshots. A node's total is what it had free once the
// kernel had taken its own.
uint64_t page_free_count(void);
uint64_t page_total_count(void);
uint64_t page_node_free(int node);
uint64_t page_node_total(int node);

// Go's allocator in C: size classes up to 32 KiB served from per-core
// caches backed by the calling core's node, larger blocks straight from its
// pages. Any core may free what any core allocated. Blocks are 16-byte
// aligned, whole pages (4096-byte aligned) above 32 KiB. Running out of
// memory is a fatal error: they never return NULL, except realloc(p, 0),
// which frees p. Freeing a pointer malloc did not return, or one already
// freed, is a fatal error too.
void *malloc(size_t size);
void *calloc(size_t n, size_t size);            // zeroed; overflow is fatal
void *realloc(void *p, size_t size);            // keeps min(old, new) bytes
void free(void *p);                             // NULL is ignored
// From node's memory (falling back to the nearest node when it has none).
void *malloc_node(size_t size, int node);
// The usable size of a block: at least what was asked for.
size_t malloc_usable_size(void *p);

// ---- probes of the kernel's own paths, for benchmarks (kernel/probe.c) ----
//
// What the calls above cannot reach: a timer interrupt's path to a timer's
// function, and an interrupt's path from one core to another, without a
// goroutine or a channel in between. apps/bench_time.c measures both.

// A raw kernel timer, whose function runs in the scheduler's timer check
// (on g0, interrupts off). timer_probe_run arms it ahead_ns from now, waits
// until its function has run, and returns how late that was (ns after the
// deadline). park: the caller parks and the function readies it, so the
// core may halt meanwhile (the idle path); else the caller spins (the
// interrupt path of a busy core). One caller at a time per probe.
typedef struct timer_probe timer_probe_t;
timer_probe_t *timer_probe_new(bool park);
uint64_t timer_probe_run(timer_probe_t *p, uint64_t ahead_ns);
void timer_probe_free(timer_probe_t *p);

// One interrupt round trip: an IPI from the calling core to the next one,
// whose handler answers with an IPI back, while the caller spins (pinned)
// for the answer. *roundtrip_ns: the send to the answer's handler;
// *oneway_ns: the send to the other core's handler, only as good as the
// two TSCs' synchronization (0 when it reads before the send). False with
// one core. One caller at a time.
bool ipi_probe(uint64_t *roundtrip_ns, uint64_t *oneway_ns);

// insncount's marker NOPs 3 and 4 (tools/insncount) on every core: 3 where
// a look for work has found nothing on its own P, the global queue or the
// interrupt-readied list, and is about to steal; 4 where an M that found
// nothing halts (after the steal rounds, the re-check once it stops
// spinning, the idle timers' scan). The instructions from 3 to 4 on one
// core are what a failed look for work costs; apps/bench_idle.c and
// tools/bench/idlelook.py measure them. Off until asked for.
void sched_probe_marks(bool on);

// ---- interrupts and console input (kernel/irqwait.c, console_in.c) --------
//
// irq_wait is the netpoller's analogue: the calling goroutine parks until
// interrupt `vector` fires, and the interrupt readies it. Device vectors
// are 0x30-0x4F: ISA IRQ n is 0x30 + n (COM1, IRQ 4, is 0x34). Every
// goroutine waiting on a vector wakes at its next interrupt; one that fired
// while nobody waited is kept, and the next irq_wait returns at once.
// Returns the number of interrupts the call consumed (>= 1), or -1 when no
// driver has attached the vector (nothing would ever fire it).
int irq_wait(uint8_t vector);
// irq_wait that gives up after ns nanoseconds: returns 0 when no interrupt
// came in time (a device that stays silent), so a driver can report it
// rather than wait forever. Otherwise as irq_wait.
int irq_wait_timeout(uint8_t vector, uint64_t ns);
// Reads one line from the console (COM1 and the PS/2 keyboard) into buf,
// without its end ("\n", "\r" or "\r\n"), NUL-terminated; at most cap - 1
// characters. The caller's unfinished output line (a prompt) is shown
// first; typed keys are echoed and edit the line (Backspace, Delete,
// Left/Right, Home/End, Ctrl-U); Ctrl-C starts the line over. Sleeps in
// irq_wait while no key waits. Returns the line's length, or -1 when the
// console has no input (no usable IOAPIC in the MADT), or, for an app the
// shell runs, once the shell has taken the console back. One line is read
// at a time.
int console_read_line(char *buf, size_t cap);

// Interrupts from software, for programs that exercise irq_wait without a
// device (apps/soak; the in-kernel tests use IRQ_VEC_SOFT_LAST). No device
// uses these vectors.
#define IRQ_VEC_SOFT_FIRST 0x4C
#define IRQ_VEC_SOFT_LAST 0x4F
// Raises interrupt `vector` on core `core` by an IPI, as a device would,
// making it waitable first (irq_wait returns -1 for it until then).
// Returns 0, or -1 for a vector outside the soft range or no such core.
// Two raised before the first is taken may merge into one interrupt.
int irq_raise(uint8_t vector, int core);
// Interrupts delivered on vector since boot (a raised one counts once the
// core it reached has taken it).
uint64_t irq_raised(uint8_t vector);

// ---- network: Go's net in C (net/conn.c, net/udp.c; docs/net.md) ---------
//
// TCP and UDP over IPv4, with Go's semantics: a call that cannot proceed
// parks the calling goroutine (holding no core) until the network, a
// deadline or a close readies it. Call from a goroutine.
//
// Networks are "tcp"/"tcp4" and "udp"/"udp4". Addresses are "host:port":
// host an IPv4 literal, "localhost", or empty (a listener: every address
// of the machine; a dialer: this machine); port 0 in a listener picks a
// free one (listener_addr says which).
//
// Results: an int or long that is >= 0 on success and one of the NET_E*
// errors below otherwise (Go's error values, net_error(err) their text).
// Deadlines are absolute nanotime() values (Go's time.Time); 0 means
// none, and one not in the future makes the next (and any waiting) call
// of that kind fail at once with NET_ETIMEOUT.
//
// C has no collector: a closed connection, listener or packet connection
// still answers (NET_ECLOSED, as in Go) until the caller frees it with its
// _free call, which waits for calls still in progress on other goroutines
// and then returns its memory; nobody may use it afterwards. _free closes
// first when that was not done.
enum {
    NET_EOF = -1,               // io.EOF: the peer closed its side (or CloseRead)
    NET_ETIMEOUT = -2,          // os.ErrDeadlineExceeded, "i/o timeout": net_timeout() is true
    NET_ECLOSED = -3,           // net.ErrClosed, "use of closed network connection"
    NET_ECONNREFUSED = -4,      // "connection refused"
    NET_ECONNRESET = -5,        // "connection reset by peer"
    NET_EPIPE = -6,             // "broken pipe": a write after CloseWrite
    NET_EADDRINUSE = -7,        // "address already in use"
    NET_EADDR = -8,             // an address this API cannot parse
    NET_ENETWORK = -9,          // a network other than tcp, tcp4, udp, udp4
    NET_ENOBUFS = -10,          // the stack's memory budget is spent
    NET_EUNREACH = -11,         // "network is unreachable": no route
    NET_EMSGSIZE = -12,         // a datagram over 65,507 bytes
    NET_ETIMEDOUT = -13,        // "connection timed out": the peer stopped answering (the stack
                                // gave up retransmitting), or the stack ran out of memory for it;
                                // net_timeout() is true, as for Go's ETIMEDOUT
    NET_ENOTCONN = -14,         // "socket is not connected"
};
const char *net_error(long err);        // Go's text for err ("EOF", "i/o timeout", ...)
bool net_timeout(long err);             // Go's net.Error Timeout()

struct net_addr {
    uint8_t ip[4];              // IPv4, in the order written (127.0.0.1: 127, 0, 0, 1)
    uint16_t port;
};
// "A.B.C.D:port" into buf (at least 22 bytes for any address); its length.
size_t net_addr_string(const struct net_addr *a, char *buf, size_t cap);

typedef struct net_listener net_listener_t;    // Go's net.Listener (TCP)
typedef struct net_conn net_conn_t;            // Go's net.Conn (*net.TCPConn)
typedef struct net_pconn net_pconn_t;          // Go's net.PacketConn (*net.UDPConn)

// Go's net.Listen, Listener.Accept, Close, Addr. listener_set_deadline is
// TCPListener.SetDeadline (for accept).
int net_listen(const char *network, const char *address, net_listener_t **l);
int listener_accept(net_listener_t *l, net_conn_t **c);
int listener_close(net_listener_t *l);
void listener_free(net_listener_t *l);
struct net_addr listener_addr(net_listener_t *l);
int listener_set_deadline(net_listener_t *l, uint64_t t);

// Go's net.Dial, net.DialTimeout (timeout_ns 0: none) and a Dialer with a
// Deadline (a nanotime() value): the connect fails with NET_ETIMEOUT when
// it is not established in time.
int net_dial(const char *network, const char *address, net_conn_t **c);
int net_dial_timeout(const char *network, const char *address, uint64_t timeout_ns, net_conn_t **c);
int net_dial_deadline(const char *network, const char *address, uint64_t deadline, net_conn_t **c);

// Go's Conn.Read: waits for data, then returns what there is (1..n
// bytes); NET_EOF once the peer has closed and everything was read.
long conn_read(net_conn_t *c, void *buf, size_t n);
// Go's Conn.Write: returns n once all n bytes are queued for sending,
// waiting for room as needed.
long conn_write(net_conn_t *c, const void *buf, size_t n);
// Go's Close, TCPConn.CloseRead and CloseWrite (a FIN: the peer reads EOF).
int conn_close(net_conn_t *c);
int conn_close_read(net_conn_t *c);
int conn_close_write(net_conn_t *c);
void conn_free(net_conn_t *c);
int conn_set_deadline(net_conn_t *c, uint64_t t);
int conn_set_read_deadline(net_conn_t *c, uint64_t t);
int conn_set_write_deadline(net_conn_t *c, uint64_t t);
struct net_addr conn_local_addr(net_conn_t *c);
struct net_addr conn_remote_addr(net_conn_t *c);

// Go's net.ListenPacket and PacketConn.ReadFrom, WriteTo, Close. A
// datagram longer than n is cut to n bytes (the rest is lost, as Go's).
int net_listen_packet(const char *network, const char *address, net_pconn_t **pc);
long pconn_read_from(net_pconn_t *pc, void *buf, size_t n, struct net_addr *from);
long pconn_write_to(net_pconn_t *pc, const void *buf, size_t n, const struct net_addr *to);
int pconn_close(net_pconn_t *pc);
void pconn_free(net_pconn_t *pc);
int pconn_set_deadline(net_pconn_t *pc, uint64_t t);
int pconn_set_read_deadline(net_pconn_t *pc, uint64_t t);
int pconn_set_write_deadline(net_pconn_t *pc, uint64_t t);
struct net_addr pconn_local_addr(net_pconn_t *pc);

// ---- observability (kernel/profile.c, trace.c; docs/observability.md) -----

// The sampling CPU profiler. profile=HZ at boot starts a run from boot;
// profile_start begins one at hz (100..10000) at any time, from a
// goroutine (the hooks are patched in live when the boot did not ask for
// them, and out again at profile_stop). profile_stop ends the run and
// prints its samples as PROFILE lines (tools/trace/profile2pprof.py reads them).
// False: a run is on, or no memory for the buffers.
bool profile_start(int hz);
void profile_stop(void);

// The event trace (trace=1) as a flight recorder: prints the TRACE lines of
// the last ms milliseconds (0: all the rings hold) while the machine keeps
// running. Each core's ring keeps its latest 8192 events.
void trace_dump_recent(uint64_t ms);

// The scheduler's metrics, after Go's runtime/metrics (metrics=1; printed
// as METRIC lines at exit under runtime/metrics names). Histograms have
// METRICS_HIST_BUCKETS buckets; bucket i holds values in
// [metrics_bucket_lo_ns(i), metrics_bucket_lo_ns(i + 1)), the last one
// everything above. A snapshot read without stopping anyone.
#define METRICS_HIST_BUCKETS 64
#define METRICS_MAXP 64
struct metrics_histogram {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t counts[METRICS_HIST_BUCKETS];
};
struct goro_metrics {
    uint64_t elapsed_ns;                    // since the scheduler started
    uint64_t goroutines;                    // /sched/goroutines:goroutines
    uint64_t gomaxprocs;                    // /sched/gomaxprocs:threads
    struct metrics_histogram sched_latency; // /sched/latencies:seconds: runnable to running
    struct metrics_histogram timer_lateness;    // a timer's function run after its due time
    uint64_t schedules;                     // goroutine starts (each one latency sample)
    uint64_t creates, wakeups;              // goroutines created, readied
    uint64_t steals, stolen;                // steals that took Gs, the Gs they took
    uint64_t preempt_quantum, preempt_timers, preempt_stw;  // preemptions by cause
    int ncpu, nprocs;
    uint64_t m_running_ns[METRICS_MAXP];    // per core: running goroutines
    uint64_t m_idle_ns[METRICS_MAXP];       // halted (or polling) for lack of work
    uint64_t m_sched_ns[METRICS_MAXP];      // the rest: in the scheduler, spinning included
    uint64_t p_running_ns[METRICS_MAXP];    // per P: running goroutines
    uint64_t p_spinning_ns[METRICS_MAXP];   // looking for work while holding it
};
uint64_t metrics_bucket_lo_ns(int i);
// False when the machine booted without metrics=1.
bool metrics_read(struct goro_metrics *m);

#endif
