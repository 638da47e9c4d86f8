// SPDX-License-Identifier: MIT
// The floors of Go's benchmarks (package "floor", app=gobench
// bench=^BenchmarkFloor$): for a row whose op needs no goroutine switch,
// and for the hand-off rows on one core (see "switches" below),
// the least an op can do, as a loop in the row's own harness (b.N or
// b.RunParallel with pb_next) that makes the op's unavoidable atomic
// read-modify-writes and memory accesses and nothing else: no waiter
// queues, no scheduler, no checks for misuse. Floor/X is the floor of row
// X (FloorTime/X for the time rows, whose op is a thousand timers: run
// with the rows' small N); docs/performance.md derives each and sets them
// beside goro and Go.
//
// The primitives here are not locks anyone should use (a waiter spins);
// each is the fewest atomics its operation can take:
//   lock      a CAS that takes the word (a lock must see it free and take
//             it in one step)
//   unlock    an atomic add that gives it back (the unlocker must learn, in
//             the same step, whether anyone waits: a plain store could not)
//   rlock     an add of a reader; runlock a subtract; a writer announces
//             itself with one add and leaves with one
//   semrelease an add; semacquire a CAS (take a count only if there is one)
//   wg add    an add (the counter and the waiters share a word); wait a load
//   a buffered channel's send or receive: the lock's CAS, the element, the
//             index, a release store (the lock's word has no waiters: the
//             buffer never fills or empties in these rows)
//   a non-blocking receive that finds nothing, or a send that finds no
//             room: loads of the channel's count (and closed flag)
#include "goro.h"
#include "gobench.h"

#define PAD 64
// The primitives are inlined wherever used, so that a floor's count does
// not follow GCC's inlining choices (a call is no part of any op).
#define FL_INLINE static inline __attribute__((always_inline))
// A check an op must make anyway (room in the buffer, an element in it):
// never false in these rows.
#define FL_CHECK(cond) do { if (!(cond)) __builtin_trap(); } while (0)

static void relax(void)
{
    __asm__ volatile("pause");
}

// RunParallel with a grain of 1: one atomic add of pb_next per op, as the
// rows have (their unmeasured N=1 run is slow enough to size it so); a
// floor's quick N=1 run would size it larger and hide that add.
static void fl_run_parallel(struct gb *b, void (*body)(struct gb_pb *pb, void *arg), void *arg)
{
    b->prev_n = 0;
    gb_run_parallel(b, body, arg);
}

// ---- the primitives ---------------------------------------------------------

FL_INLINE void fl_lock(uint32_t *w)
{
    uint32_t z = 0;
    // acquire: pairs with fl_unlock's release.
    while (!__atomic_compare_exchange_n(w, &z, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        z = 0;
        relax();
    }
}

FL_INLINE void fl_unlock(uint32_t *w)
{
    // release: pairs with fl_lock's acquire. What is left is the waiters a
    // real lock would wake: none here (waiters spin), but the test is part
    // of every unlock.
    if (__atomic_sub_fetch(w, 1, __ATOMIC_RELEASE) != 0)
        __builtin_trap();
}

#define FL_WRITER (1 << 30)

FL_INLINE void fl_rlock(int32_t *rc)
{
    // acquire: pairs with fl_wunlock's release.
    while (__atomic_add_fetch(rc, 1, __ATOMIC_ACQUIRE) < 0) {
        __atomic_fetch_sub(rc, 1, __ATOMIC_RELAXED);    // relaxed: backs out; the writer's CAS waits for it
        while (__atomic_load_n(rc, __ATOMIC_RELAXED) < 0)   // relaxed: a wait; the add above acquires
            relax();
    }
}

FL_INLINE void fl_runlock(int32_t *rc)
{
    __atomic_fetch_sub(rc, 1, __ATOMIC_RELEASE);    // release: pairs with fl_wlock's acquire CAS
}

// A writer takes the count from 0 (no reader, no writer) to -FL_WRITER in
// one CAS, and leaves with one add: two atomics, as a mutex.
FL_INLINE void fl_wlock(int32_t *rc)
{
    int32_t z = 0;
    // acquire: pairs with fl_runlock's and fl_wunlock's release.
    while (!__atomic_compare_exchange_n(rc, &z, -FL_WRITER, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        z = 0;
        relax();
    }
}

FL_INLINE void fl_wunlock(int32_t *rc)
{
    __atomic_fetch_add(rc, FL_WRITER, __ATOMIC_RELEASE);    // release: pairs with fl_rlock's acquire
}

FL_INLINE void fl_semrelease(uint32_t *s, const uint32_t *nwait)
{
    __atomic_fetch_add(s, 1, __ATOMIC_RELEASE);     // release: pairs with fl_semacquire's acquire
    // seq_cst: a release must look for sleepers after its add (Go's nwait
    // check); none sleep here, but the load is part of every release.
    if (__atomic_load_n(nwait, __ATOMIC_SEQ_CST) != 0)
        __builtin_trap();
}

FL_INLINE void fl_semacquire(uint32_t *s)
{
    for (;;) {
        uint32_t v = __atomic_load_n(s, __ATOMIC_RELAXED);  // relaxed: the CAS below acquires
        // acquire: pairs with fl_semrelease's release.
        if (v > 0 && __atomic_compare_exchange_n(s, &v, v - 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        relax();
    }
}

// A WaitGroup's add: counter (high half) and waiters (low half) in one
// word, so one add; what it returns says whether waiters must be woken
// (the counter reached 0 with waiters): none here, but the test is part
// of every add.
FL_INLINE void fl_wg_add(uint64_t *w, int delta)
{
    uint64_t s = __atomic_add_fetch(w, (uint64_t)(int64_t)delta << 32, __ATOMIC_RELEASE);  // release: to the waiters' load
    if ((uint32_t)s != 0)
        __builtin_trap();
}

// A buffered channel of int64 with room for cap elements.
struct fl_chan {
    uint32_t lock;
    uint32_t count, head, cap;
    uint32_t closed;
    int64_t *buf;
} __attribute__((aligned(PAD)));

FL_INLINE void fl_send(struct fl_chan *c, int64_t v)
{
    fl_lock(&c->lock);
    FL_CHECK(c->count < c->cap);
    uint32_t i = c->head + c->count;
    c->buf[i >= c->cap ? i - c->cap : i] = v;
    c->count++;
    __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);   // release: pairs with fl_lock's acquire
}

FL_INLINE int64_t fl_recv(struct fl_chan *c)
{
    fl_lock(&c->lock);
    FL_CHECK(c->count > 0);
    int64_t v = c->buf[c->head];
    c->head = c->head + 1 == c->cap ? 0 : c->head + 1;
    c->count--;
    __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);   // release: pairs with fl_lock's acquire
    return v;
}

// Non-blocking: true if a receive would find an element (or a closed channel).
FL_INLINE bool fl_can_recv(const struct fl_chan *c)
{
    return __atomic_load_n(&c->count, __ATOMIC_RELAXED) != 0 ||     // relaxed: a peek, as Go's empty()
           __atomic_load_n(&c->closed, __ATOMIC_RELAXED) != 0;      // relaxed: as above
}

FL_INLINE bool fl_can_send(const struct fl_chan *c)
{
    return __atomic_load_n(&c->count, __ATOMIC_RELAXED) < c->cap;  // relaxed: a peek, as Go's full()
}

// ---- sync ----------------------------------------------------------------------

struct fl_padded {
    uint32_t a;
    int32_t b;
    uint64_t c;
    uint8_t pad[PAD];
};

static void once_body(struct gb_pb *pb, void *arg)
{
    uint32_t *done = arg;
    while (pb_next(pb))
        if (__atomic_load_n(done, __ATOMIC_ACQUIRE) == 0)  // acquire: would pair with the once's release
            __builtin_trap();
}

static void bench_once(struct gb *b)
{
    uint32_t done = 1;
    fl_run_parallel(b, once_body, &done);
}

static void mutex_own_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct fl_padded m = { 0 };
    while (pb_next(pb)) {
        fl_lock(&m.a);
        fl_unlock(&m.a);
    }
}

static void bench_mutex_uncontended(struct gb *b)
{
    fl_run_parallel(b, mutex_own_body, 0);
}

struct fl_shared {
    struct fl_padded m;
    int work;                   // gb_work100 rounds after the op
    int write_ratio;
};

static void mutex_body(struct gb_pb *pb, void *arg)
{
    struct fl_shared *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        fl_lock(&s->m.a);
        fl_unlock(&s->m.a);
        if (s->work)
            foo = gb_work100(foo);
    }
}

static void mutex_bench(struct gb *b, bool slack, bool work)
{
    struct fl_shared s = { .work = work };
    if (slack)
        b->parallelism = 10;
    fl_run_parallel(b, mutex_body, &s);
}

static void bench_mutex(struct gb *b) { mutex_bench(b, false, false); }
static void bench_mutex_slack(struct gb *b) { mutex_bench(b, true, false); }
static void bench_mutex_work(struct gb *b) { mutex_bench(b, false, true); }
static void bench_mutex_work_slack(struct gb *b) { mutex_bench(b, true, true); }

static void rw_own_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct fl_padded m = { 0 };
    while (pb_next(pb)) {
        fl_rlock(&m.b);
        fl_rlock(&m.b);
        fl_runlock(&m.b);
        fl_runlock(&m.b);
        fl_wlock(&m.b);
        fl_wunlock(&m.b);
    }
}

static void bench_rw_uncontended(struct gb *b)
{
    fl_run_parallel(b, rw_own_body, 0);
}

static void rw_body(struct gb_pb *pb, void *arg)
{
    struct fl_shared *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        foo++;
        if (foo % s->write_ratio == 0) {
            fl_wlock(&s->m.b);
            fl_wunlock(&s->m.b);
        } else {
            fl_rlock(&s->m.b);
            for (int i = 0; i != s->work; i++) {
                foo *= 2;
                __asm__("" : "+r"(foo));
                foo /= 2;
                __asm__("" : "+r"(foo));
            }
            fl_runlock(&s->m.b);
        }
    }
}

static void bench_rw_write100(struct gb *b)
{
    struct fl_shared s = { .work = 0, .write_ratio = 100 };
    fl_run_parallel(b, rw_body, &s);
}

static void bench_rw_work_write100(struct gb *b)
{
    struct fl_shared s = { .work = 100, .write_ratio = 100 };
    fl_run_parallel(b, rw_body, &s);
}

static void sema_own_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct fl_padded s = { 0 };
    while (pb_next(pb)) {
        fl_semrelease(&s.a, (const uint32_t *)&s.b);
        fl_semacquire(&s.a);
    }
}

static void bench_sema_uncontended(struct gb *b)
{
    fl_run_parallel(b, sema_own_body, 0);
}

// SemaSynt/Work, Nonblock/Block: release, work, acquire on one shared
// semaphore. Block's extra goroutine takes gomaxprocs/2 counts once: no
// part of an op.
static void sema_body(struct gb_pb *pb, void *arg)
{
    struct fl_shared *s = arg;
    int64_t foo = 0;
    while (pb_next(pb)) {
        fl_semrelease(&s->m.a, (const uint32_t *)&s->m.b);
        if (s->work)
            foo = gb_work100(foo);
        fl_semacquire(&s->m.a);
    }
}

static void sema_bench(struct gb *b, bool work)
{
    struct fl_shared s = { .work = work };
    fl_run_parallel(b, sema_body, &s);
}

static void bench_sema_synt(struct gb *b) { sema_bench(b, false); }
static void bench_sema_work(struct gb *b) { sema_bench(b, true); }

static void wg_own_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    struct fl_padded w = { 0 };
    while (pb_next(pb)) {
        fl_wg_add(&w.c, 1);
        fl_wg_add(&w.c, -1);
        if (__atomic_load_n(&w.c, __ATOMIC_ACQUIRE) >> 32)          // acquire: pairs with fl_wg_add's release
            __builtin_trap();
    }
}

static void bench_wg_uncontended(struct gb *b)
{
    fl_run_parallel(b, wg_own_body, 0);
}

static void wg_add_done_body(struct gb_pb *pb, void *arg)
{
    struct fl_shared *s = arg;
    while (pb_next(pb)) {
        fl_wg_add(&s->m.c, 1);
        fl_wg_add(&s->m.c, -1);
    }
}

static void bench_wg_add_done(struct gb *b)
{
    struct fl_shared s = { 0 };
    fl_run_parallel(b, wg_add_done_body, &s);
}

static void wg_wait_body(struct gb_pb *pb, void *arg)
{
    struct fl_shared *s = arg;
    while (pb_next(pb))
        if (__atomic_load_n(&s->m.c, __ATOMIC_ACQUIRE) >> 32)      // acquire: pairs with the adds
            __builtin_trap();
}

static void bench_wg_wait(struct gb *b)
{
    struct fl_shared s = { 0 };
    fl_run_parallel(b, wg_wait_body, &s);
}

// ---- channels -----------------------------------------------------------------

static void chan_nonblocking_body(struct gb_pb *pb, void *arg)
{
    struct fl_chan *c = arg;
    while (pb_next(pb))
        if (fl_can_recv(c))
            __builtin_trap();
}

static void bench_chan_nonblocking(struct gb *b)
{
    struct fl_chan c = { .cap = 0 };
    fl_run_parallel(b, chan_nonblocking_body, &c);
}

// SelectNonblock: a receive from an unbuffered channel and from an empty
// buffered one, a send to an unbuffered one without receivers and to a
// full buffered one (its first send fills it): four peeks.
struct fl_four {
    struct fl_chan c1, c2, c3, c4;
};

static void select_nonblock_body(struct gb_pb *pb, void *arg)
{
    struct fl_four *f = arg;
    while (pb_next(pb)) {
        if (fl_can_recv(&f->c1))
            __builtin_trap();
        if (fl_can_send(&f->c2))
            __builtin_trap();
        if (fl_can_recv(&f->c3))
            __builtin_trap();
        if (fl_can_send(&f->c4))
            __builtin_trap();
    }
}

static void bench_select_nonblock(struct gb *b)
{
    static int64_t one;
    struct fl_four f = { .c1 = { .cap = 0 }, .c2 = { .cap = 0 }, .c3 = { .cap = 1, .buf = &one },
                         .c4 = { .cap = 1, .count = 1, .buf = &one } };
    fl_run_parallel(b, select_nonblock_body, &f);
}

static void chan_closed_body(struct gb_pb *pb, void *arg)
{
    struct fl_chan *c = arg;
    while (pb_next(pb))
        if (!fl_can_recv(c))
            __builtin_trap();
}

static void bench_chan_closed(struct gb *b)
{
    struct fl_chan c = { .cap = 0, .closed = 1 };
    fl_run_parallel(b, chan_closed_body, &c);
}

// SelectUncontended: a select over two one-slot channels, one of which
// holds the token: the peeks find the ready case, and only its channel is
// locked; then the token is sent to the other.
static void select_uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    int64_t b1, b2;
    struct fl_chan c[2] = { { .cap = 1, .count = 1, .buf = &b1 }, { .cap = 1, .buf = &b2 } };
    while (pb_next(pb)) {
        int r = fl_can_recv(&c[0]) ? 0 : 1;
        FL_CHECK(fl_can_recv(&c[r]));
        fl_send(&c[1 - r], fl_recv(&c[r]));
    }
}

static void bench_select_uncontended(struct gb *b)
{
    fl_run_parallel(b, select_uncontended_body, 0);
}

// ChanUncontended: each G's own channel of 100, filled and drained.
// ChanContended: one channel of 100 per G, shared.
static void chan_fill_drain(struct fl_chan *c)
{
    for (int i = 0; i < 100; i++)
        fl_send(c, 0);
    for (int i = 0; i < 100; i++)
        (void)fl_recv(c);
}

static void chan_uncontended_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    int64_t buf[100];
    struct fl_chan c = { .cap = 100, .buf = buf };
    while (pb_next(pb))
        chan_fill_drain(&c);
}

static void bench_chan_uncontended(struct gb *b)
{
    fl_run_parallel(b, chan_uncontended_body, 0);
}

static void chan_contended_body(struct gb_pb *pb, void *arg)
{
    struct fl_chan *c = arg;
    while (pb_next(pb))
        chan_fill_drain(c);
}

static void bench_chan_contended(struct gb *b)
{
    int procs = gomaxprocs(0);
    int64_t *buf = malloc(sizeof(int64_t) * 100 * (size_t)procs);
    FL_CHECK(buf);
    struct fl_chan c = { .cap = 100 * (uint32_t)procs, .buf = buf };
    fl_run_parallel(b, chan_contended_body, &c);
    free(buf);
}

// ChanSem: a channel of gomaxprocs slots as a semaphore: send, receive.
static void chan_sem_body(struct gb_pb *pb, void *arg)
{
    struct fl_chan *c = arg;
    while (pb_next(pb)) {
        fl_send(c, 0);
        (void)fl_recv(c);
    }
}

static void bench_chan_sem(struct gb *b)
{
    int procs = gomaxprocs(0);
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)procs);
    FL_CHECK(buf);
    struct fl_chan c = { .cap = (uint32_t)procs, .buf = buf };
    fl_run_parallel(b, chan_sem_body, &c);
    free(buf);
}

// ---- switches -------------------------------------------------------------------
//
// The rows whose op needs a goroutine switch, on one vCPU, where the
// partner must run for the value to move: the least a switch can be is a
// coroutine's, the callee-saved registers pushed, one stack pointer saved
// and another loaded, the registers popped (fl_swap). Two coroutines on
// heap stacks take turns through it inside the benchmark's goroutine,
// with no scheduler, run queue or timer between them, and pass values
// through fl_chan's locked ring. At 2 vCPUs the rows hand values across
// cores, which these floors do not model: they run on one core there too.

#define FL_STACK (16 * 1024)

struct fl_co {
    uint64_t sp;                // saved stack pointer while not running
};

// Saves the running coroutine's callee-saved registers and stack pointer
// (in *from, rdi) and resumes the one whose stack pointer is to (rsi).
__attribute__((naked, noinline)) static void fl_swap(__attribute__((unused)) uint64_t *from,
                                                     __attribute__((unused)) uint64_t to)
{
    __asm__("push %rbp\n\tpush %rbx\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"
            "mov %rsp, (%rdi)\n\tmov %rsi, %rsp\n\t"
            "pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbx\n\tpop %rbp\n\tret");
}

// A new coroutine's first fl_swap returns here, with fn in r12 and its
// argument in r13; fn never returns (it ends by swapping away for good).
__attribute__((naked, noinline)) static void fl_co_entry(void)
{
    __asm__("mov %r13, %rdi\n\tcall *%r12\n\tud2");
}

// A coroutine whose stack ends at top.
FL_INLINE void fl_co_make_at(struct fl_co *co, uint8_t *top, void (*fn)(void *), void *arg)
{
    uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);
    *--sp = (uint64_t)(uintptr_t)fl_co_entry;   // fl_swap's ret; fl_co_entry's call then sees rsp 16-aligned
    *--sp = 0;                                  // rbp
    *--sp = 0;                                  // rbx
    *--sp = (uint64_t)(uintptr_t)fn;            // r12
    *--sp = (uint64_t)(uintptr_t)arg;           // r13
    *--sp = 0;                                  // r14
    *--sp = 0;                                  // r15
    co->sp = (uint64_t)(uintptr_t)sp;
}

FL_INLINE void fl_co_make(struct fl_co *co, uint8_t *stack, void (*fn)(void *), void *arg)
{
    fl_co_make_at(co, stack + FL_STACK, fn, arg);
}

// ChanSync: A sends, B receives and sends back, A receives; a switch each
// way. Per two ops (an iteration of each goroutine): four channel
// operations and two switches. ChanSyncWork adds the row's localWork after
// each channel operation. PingPongHog is two hand-offs an op (ping and
// pong): the same loop over twice the ops, without the hog.
// The work is a constant in each coroutine's body, so that the floors
// without it carry no test for it; with it, fl_work hides the constant
// from the compiler, as the row's runtime count is hidden, or the loop,
// whose result is unused, would go.
FL_INLINE void fl_work(int work)
{
    if (work) {
        __asm__("" : "+r"(work));
        gb_local_work(work);
    }
}

struct fl_sync {
    struct fl_co main, a, b;
    struct fl_chan ab, ba;
    uint64_t n;
};

static inline __attribute__((always_inline)) void sync_a(struct fl_sync *s, int work)
{
    for (uint64_t i = 0; i < s->n; i += 2) {
        fl_send(&s->ab, (int64_t)i);
        fl_work(work);
        fl_swap(&s->a.sp, s->b.sp);
        (void)fl_recv(&s->ba);
        fl_work(work);
    }
    fl_swap(&s->a.sp, s->main.sp);
    __builtin_trap();
}

static inline __attribute__((always_inline)) void sync_b(struct fl_sync *s, int work)
{
    for (;;) {
        int64_t v = fl_recv(&s->ab);
        fl_work(work);
        fl_send(&s->ba, v);
        fl_work(work);
        fl_swap(&s->b.sp, s->a.sp);
    }
}

#define SYNC_WORK 1000          // chan_test.go's localWork in ChanSyncWork
static void sync_a0(void *arg) { sync_a(arg, 0); }
static void sync_b0(void *arg) { sync_b(arg, 0); }
static void sync_aw(void *arg) { sync_a(arg, SYNC_WORK); }
static void sync_bw(void *arg) { sync_b(arg, SYNC_WORK); }

static void chan_sync(struct gb *b, uint64_t handoffs, bool work)
{
    static int64_t ab, ba;
    struct fl_sync *s = calloc(1, sizeof *s);
    uint8_t *stacks = malloc(2 * FL_STACK);
    FL_CHECK(s && stacks);
    s->n = handoffs;
    s->ab = (struct fl_chan){ .cap = 1, .buf = &ab };
    s->ba = (struct fl_chan){ .cap = 1, .buf = &ba };
    fl_co_make(&s->a, stacks, work ? sync_aw : sync_a0, s);
    fl_co_make(&s->b, stacks + FL_STACK, work ? sync_bw : sync_b0, s);
    gb_start(b);
    fl_swap(&s->main.sp, s->a.sp);
    gb_stop(b);
    free(stacks);
    free(s);
}

static void bench_chan_sync(struct gb *b) { chan_sync(b, b->n, false); }
static void bench_chan_sync_work(struct gb *b) { chan_sync(b, b->n, true); }
static void bench_ping_pong(struct gb *b) { chan_sync(b, 2 * b->n, false); }

// ChanProdCons: a producer and a consumer on one core. The producer can
// run ahead by the buffer plus two values (one in a parked receiver's
// slot, one held by the sender that then parks), so a ring of cap + 2
// slots: the producer fills it, then the consumer drains it, two switches
// per cap + 2 ops. A 0 ends the stream, as in the row. ChanProdConsWork
// adds the row's 100 rounds of work before each send and after each
// receive; SelectProdCons makes each send and receive a select whose two
// other cases (a timer's channel, a close channel) are peeked and never
// ready.
struct fl_pc {
    struct fl_co main, prod, cons;
    struct fl_chan ch, other[2];
    uint64_t n;
    int64_t sink;
};

static inline void pc_peek_others(struct fl_pc *s, bool sel)
{
    if (sel && (fl_can_recv(&s->other[0]) || fl_can_recv(&s->other[1])))
        __builtin_trap();
}

static inline __attribute__((always_inline)) void pc_prod(struct fl_pc *s, bool work, bool sel)
{
    int64_t foo = 0;
    for (uint64_t i = 0; i <= s->n; i++) {
        if (work && i < s->n)
            foo = gb_work100(foo);
        pc_peek_others(s, sel);
        if (s->ch.count == s->ch.cap)
            fl_swap(&s->prod.sp, s->cons.sp);
        fl_send(&s->ch, i < s->n);
    }
    s->sink += foo;
    fl_swap(&s->prod.sp, s->cons.sp);
    __builtin_trap();
}

static inline __attribute__((always_inline)) void pc_cons(struct fl_pc *s, bool work, bool sel)
{
    int64_t foo = 0;
    for (;;) {
        pc_peek_others(s, sel);
        if (s->ch.count == 0)
            fl_swap(&s->cons.sp, s->prod.sp);
        if (fl_recv(&s->ch) == 0)
            break;
        if (work)
            foo = gb_work100(foo);
    }
    s->sink += foo;
    fl_swap(&s->cons.sp, s->main.sp);
    __builtin_trap();
}

static void pc_prod0(void *arg) { pc_prod(arg, false, false); }
static void pc_cons0(void *arg) { pc_cons(arg, false, false); }
static void pc_prodw(void *arg) { pc_prod(arg, true, false); }
static void pc_consw(void *arg) { pc_cons(arg, true, false); }
static void pc_prods(void *arg) { pc_prod(arg, true, true); }
static void pc_conss(void *arg) { pc_cons(arg, true, true); }

static void prod_cons(struct gb *b, uint32_t size, bool work, bool sel)
{
    struct fl_pc *s = calloc(1, sizeof *s);
    int64_t *buf = malloc((size + 2) * sizeof *buf);
    uint8_t *stacks = malloc(2 * FL_STACK);
    FL_CHECK(s && buf && stacks);
    s->n = b->n;
    s->ch = (struct fl_chan){ .cap = size + 2, .buf = buf };

    fl_co_make(&s->prod, stacks, sel ? pc_prods : work ? pc_prodw : pc_prod0, s);
    fl_co_make(&s->cons, stacks + FL_STACK, sel ? pc_conss : work ? pc_consw : pc_cons0, s);
    gb_start(b);
    fl_swap(&s->main.sp, s->prod.sp);
    gb_stop(b);
    free(stacks);
    free(buf);
    free(s);
}

static void bench_prod_cons0(struct gb *b) { prod_cons(b, 0, false, false); }
static void bench_prod_cons10(struct gb *b) { prod_cons(b, 10, false, false); }
static void bench_prod_cons100(struct gb *b) { prod_cons(b, 100, false, false); }
static void bench_prod_cons_work0(struct gb *b) { prod_cons(b, 0, true, false); }
static void bench_prod_cons_work10(struct gb *b) { prod_cons(b, 10, true, false); }
static void bench_prod_cons_work100(struct gb *b) { prod_cons(b, 100, true, false); }
static void bench_select_prod_cons(struct gb *b) { prod_cons(b, 128, true, true); }

// SelectSyncContended: per P a sender selecting over three unbuffered
// channels and a done channel, and a receiver selecting over the three.
// ChanProdCons0's floor (a ring of two slots, the value in the parked
// receiver's and the one the sender holds when it parks: a switch per
// op) on three channels: the sender's select peeks done and the three
// and sends on the next in turn, the receiver's peeks the three and
// takes from the first ready.
struct fl_ssc {
    struct fl_co main, snd, rcv;
    struct fl_chan c[3], done;
    uint64_t n;
    int64_t buf[3][2];
};

static inline uint32_t ssc_queued(const struct fl_ssc *s)
{
    return s->c[0].count + s->c[1].count + s->c[2].count;
}

static void ssc_sender(void *arg)
{
    struct fl_ssc *s = arg;
    for (uint32_t k = 0;; k = k == 2 ? 0 : k + 1) {
        FL_CHECK(!fl_can_recv(&s->done));
        if (ssc_queued(s) == 2)
            fl_swap(&s->snd.sp, s->rcv.sp);
        fl_send(&s->c[k], 0);
    }
}

static void ssc_receiver(void *arg)
{
    struct fl_ssc *s = arg;
    for (uint64_t i = 0; i < s->n; i++) {
        if (ssc_queued(s) == 0)
            fl_swap(&s->rcv.sp, s->snd.sp);
        uint32_t k = fl_can_recv(&s->c[0]) ? 0 : fl_can_recv(&s->c[1]) ? 1 : 2;
        (void)fl_recv(&s->c[k]);
    }
    fl_swap(&s->rcv.sp, s->main.sp);
    __builtin_trap();
}

static void bench_select_sync_contended(struct gb *b)
{
    struct fl_ssc *s = calloc(1, sizeof *s);
    uint8_t *stacks = malloc(2 * FL_STACK);
    FL_CHECK(s && stacks);
    s->n = b->n;
    for (int k = 0; k < 3; k++)
        s->c[k] = (struct fl_chan){ .cap = 2, .buf = s->buf[k] };
    fl_co_make(&s->snd, stacks, ssc_sender, s);
    fl_co_make(&s->rcv, stacks + FL_STACK, ssc_receiver, s);
    gb_start(b);
    fl_swap(&s->main.sp, s->rcv.sp);
    gb_stop(b);
    free(stacks);
    free(s);
}

// CondN: an op is a round of N waiters and the broadcaster, the
// goroutines coroutines on one core taking turns through a run queue (a
// ring, as a P's). A waiter takes the mutex (a CAS), counts itself in,
// pushes itself on the cond's waiter list (a CAS: a broadcaster need not
// hold the mutex), unlocks (an add), parks (a switch to the next
// runnable), and once woken locks and unlocks again; the last to arrive
// takes the whole list in one exchange and makes each runnable (no
// atomic: the run queue is its core's). 5N + 3 atomics and N switches a
// round; the broadcaster of one round is a waiter of the next.
#define FL_COND_MAX 33

struct fl_cond;

struct fl_cg {
    struct fl_co co;
    struct fl_cg *next;         // on the waiter list
    struct fl_cond *s;
};

struct fl_cond {
    uint32_t m;                 // the mutex
    int id, waiters, alive;
    uint64_t n;
    struct fl_cg *list;         // the waiter list
    uint32_t head, tail;        // the run queue: runq[head..tail) mod FL_COND_MAX
    struct fl_cg *runq[FL_COND_MAX];
    struct fl_cg g[FL_COND_MAX];
    struct fl_co main;
};

// The running goroutine gives the core to the next runnable one, or to
// the benchmark once none is left (only at the end).
static void cond_switch(struct fl_cond *s, struct fl_cg *me)
{
    if (s->head == s->tail) {
        fl_swap(&me->co.sp, s->main.sp);
        return;
    }
    struct fl_cg *next = s->runq[s->head];
    s->head = s->head + 1 == FL_COND_MAX ? 0 : s->head + 1;
    fl_swap(&me->co.sp, next->co.sp);
}

static void cond_ready(struct fl_cond *s, struct fl_cg *g)
{
    s->runq[s->tail] = g;
    s->tail = s->tail + 1 == FL_COND_MAX ? 0 : s->tail + 1;
}

static void cond_g(void *arg)
{
    struct fl_cg *me = arg;
    struct fl_cond *s = me->s;
    for (uint64_t i = 0; i < s->n; i++) {
        fl_lock(&s->m);
        if (++s->id == s->waiters + 1) {
            s->id = 0;
            // acquire: pairs with the waiters' release CAS
            for (struct fl_cg *w = __atomic_exchange_n(&s->list, 0, __ATOMIC_ACQUIRE); w; w = w->next)
                cond_ready(s, w);
        } else {
            me->next = __atomic_load_n(&s->list, __ATOMIC_RELAXED);   // relaxed: the CAS below decides
            // release: me->next, to the broadcaster's acquire exchange
            while (!__atomic_compare_exchange_n(&s->list, &me->next, me, false, __ATOMIC_RELEASE,
                                                __ATOMIC_RELAXED))
                ;
            fl_unlock(&s->m);
            cond_switch(s, me);
            fl_lock(&s->m);
        }
        fl_unlock(&s->m);
    }
    s->alive--;
    cond_switch(s, me);             // its end: never resumed
    __builtin_trap();
}

static void cond_bench(struct gb *b, int waiters)
{
    struct fl_cond *s = calloc(1, sizeof *s);
    uint8_t *stacks = malloc((size_t)(waiters + 1) * FL_STACK);
    FL_CHECK(s && stacks && waiters + 1 <= FL_COND_MAX);
    s->waiters = waiters;
    s->n = b->n;
    gb_start(b);
    for (int k = 0; k <= waiters; k++) {
        s->g[k].s = s;
        fl_co_make(&s->g[k].co, stacks + (size_t)k * FL_STACK, cond_g, &s->g[k]);
        cond_ready(s, &s->g[k]);
        s->alive++;
    }
    struct fl_cg *first = s->runq[s->head++];
    fl_swap(&s->main.sp, first->co.sp);
    gb_stop(b);
    FL_CHECK(s->alive == 0);
    free(stacks);
    free(s);
}

static void bench_cond1(struct gb *b) { cond_bench(b, 1); }
static void bench_cond2(struct gb *b) { cond_bench(b, 2); }
static void bench_cond4(struct gb *b) { cond_bench(b, 4); }
static void bench_cond8(struct gb *b) { cond_bench(b, 8); }
static void bench_cond16(struct gb *b) { cond_bench(b, 16); }
static void bench_cond32(struct gb *b) { cond_bench(b, 32); }

// WakeupParallelSpinning/0s: two goroutines hand a token back and forth,
// each spinning the row's 5 us (gb_spin, the row's own loop) before its
// send and 0 before its receive. At 2 vCPUs the row's two run on two
// cores one after the other; here on one, a switch after each send:
// ChanSync's floor with the spins. WakeupParallelSyscall/0s makes each
// spin a blocking call: entering one publishes that its P may be taken
// (a sequentially consistent store, an XCHG: the stop-the-world flag is
// read after it) and leaving takes the P back with a CAS (another M may
// have taken it), as Go's entersyscall and exitsyscallfast.
#define FL_WAKE_DELAY 5000
#define FL_P_RUNNING 0
#define FL_P_SYSCALL 1

struct fl_wake {
    struct fl_co main, a, b;
    struct fl_chan ping, pong;
    uint64_t n;
    int64_t ping_slot, pong_slot;
    uint32_t pstatus;           // the P's state word a blocking call gives up and takes back
    uint32_t stw;               // a stop-the-world's flag (never set here)
};

FL_INLINE void fl_wake_spin(struct fl_wake *w, uint64_t d, bool sys)
{
    if (!sys) {
        gb_spin(d);
        return;
    }
    (void)__atomic_exchange_n(&w->pstatus, FL_P_SYSCALL, __ATOMIC_SEQ_CST);    // seq-cst: before the flag's load
    if (__atomic_load_n(&w->stw, __ATOMIC_SEQ_CST))     // seq-cst: pairs with a stopper's store (none here)
        __builtin_trap();
    gb_spin(d);
    uint32_t old = FL_P_SYSCALL;
    // acquire: pairs with the release of an M that took the P meanwhile (none here)
    if (!__atomic_compare_exchange_n(&w->pstatus, &old, FL_P_RUNNING, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        __builtin_trap();
}

FL_INLINE void wake_a(struct fl_wake *w, bool sys)
{
    for (uint64_t i = 0; i < w->n; i++) {
        fl_wake_spin(w, FL_WAKE_DELAY, sys);
        fl_send(&w->ping, 0);
        fl_wake_spin(w, 0, sys);
        if (!fl_can_recv(&w->pong))
            fl_swap(&w->a.sp, w->b.sp);
        (void)fl_recv(&w->pong);
    }
    fl_swap(&w->a.sp, w->main.sp);
    __builtin_trap();
}

FL_INLINE void wake_b(struct fl_wake *w, bool sys)
{
    for (;;) {
        fl_wake_spin(w, 0, sys);
        (void)fl_recv(&w->ping);
        fl_wake_spin(w, FL_WAKE_DELAY, sys);
        fl_send(&w->pong, 0);
        fl_swap(&w->b.sp, w->a.sp);
    }
}

static void wake_a_spin(void *arg) { wake_a(arg, false); }
static void wake_b_spin(void *arg) { wake_b(arg, false); }
static void wake_a_sys(void *arg) { wake_a(arg, true); }
static void wake_b_sys(void *arg) { wake_b(arg, true); }

static void wakeup_parallel(struct gb *b, bool sys)
{
    struct fl_wake *w = calloc(1, sizeof *w);
    uint8_t *stacks = malloc(2 * FL_STACK);
    FL_CHECK(w && stacks);
    w->n = b->n;
    w->ping = (struct fl_chan){ .cap = 1, .buf = &w->ping_slot };
    w->pong = (struct fl_chan){ .cap = 1, .buf = &w->pong_slot };
    fl_co_make(&w->a, stacks, sys ? wake_a_sys : wake_a_spin, w);
    fl_co_make(&w->b, stacks + FL_STACK, sys ? wake_b_sys : wake_b_spin, w);
    gb_start(b);
    fl_swap(&w->main.sp, w->a.sp);
    gb_stop(b);
    free(stacks);
    free(w);
}

static void bench_wakeup_spinning(struct gb *b) { wakeup_parallel(b, false); }
static void bench_wakeup_syscall(struct gb *b) { wakeup_parallel(b, true); }

// ---- MutexSpin, MutexNoSpin -----------------------------------------------------
//
// MutexSpin: the lock, the two shared counters, the unlock, then the row's
// walk over 16 Ki words of the goroutine's own data (every fourth word
// incremented). MutexNoSpin: every fourth op that, the others a walk over
// 4 Ki words and the row's "go func() { c <- true }(); <-c": a goroutine
// made (fl_co_make), run (a switch), its send (the lock's CAS and a
// release store) and its end (a switch back), then the receive.

struct fl_acc {
    struct fl_padded m;
    uint64_t acc0, acc1;
};

FL_INLINE void fl_walk(uint64_t *data, int words)
{
    for (int i = 0; i < words; i += 4) {
        data[i]++;
        __asm__("" ::: "memory");   // each increment stays one, as Go's loop
    }
}

FL_INLINE void fl_acc_op(struct fl_acc *s)
{
    fl_lock(&s->m.a);
    s->acc0 -= 100;
    s->acc1 += 100;
    fl_unlock(&s->m.a);
}

static void mutex_spin_body(struct gb_pb *pb, void *arg)
{
    struct fl_acc *s = arg;
    uint64_t *data = calloc(16 << 10, sizeof *data);
    FL_CHECK(data);
    while (pb_next(pb)) {
        fl_acc_op(s);
        fl_walk(data, 16 << 10);
    }
    free(data);
}

static void bench_mutex_spin(struct gb *b)
{
    struct fl_acc s = { 0 };
    fl_run_parallel(b, mutex_spin_body, &s);
}

struct fl_nospin {
    struct fl_co main, g;
    struct fl_chan c;
    int64_t slot;
};

static void nospin_sender(void *arg)
{
    struct fl_nospin *n = arg;
    fl_send(&n->c, 1);
    fl_swap(&n->g.sp, n->main.sp);  // its end: never resumed
    __builtin_trap();
}

static void mutex_nospin_body(struct gb_pb *pb, void *arg)
{
    struct fl_acc *s = arg;
    uint64_t *data = calloc(4 << 10, sizeof *data);
    uint8_t *stack = malloc(FL_STACK);
    struct fl_nospin *n = calloc(1, sizeof *n);
    FL_CHECK(data && stack && n);
    n->c = (struct fl_chan){ .cap = 1, .buf = &n->slot };
    for (int i = 0; pb_next(pb); i++) {
        if (i % 4 == 0) {
            fl_acc_op(s);
        } else {
            fl_walk(data, 4 << 10);
            fl_co_make(&n->g, stack, nospin_sender, n);
            fl_swap(&n->main.sp, n->g.sp);
            (void)fl_recv(&n->c);
        }
    }
    free(n);
    free(stack);
    free(data);
}

static void bench_mutex_nospin(struct gb *b)
{
    struct fl_acc s = { 0 };
    b->parallelism = 4;
    fl_run_parallel(b, mutex_nospin_body, &s);
}

// ---- CreateGoroutines(Parallel): a chain of goroutines, each making the next ----
//
// An op is a goroutine made (a coroutine on the stack its creator's
// predecessor left) and run once its creator ends (a switch); the last
// sends on the benchmark's channel. The parallel row runs gomaxprocs
// chains of N / gomaxprocs: per op the same, here one chain on one core.

struct fl_chain {
    struct fl_co main, g[2];
    uint8_t *stacks;
    struct fl_chan done;
    int64_t slot;
};

struct fl_link {
    struct fl_chain *c;
    uint64_t n;
    int k;                      // which of the two stacks this goroutine runs on
};

static void chain_g(void *arg)
{
    struct fl_link *l = arg;
    struct fl_chain *c = l->c;
    if (l->n == 0) {
        fl_send(&c->done, 1);
        fl_swap(&c->g[l->k].sp, c->main.sp);    // its end: never resumed
        __builtin_trap();
    }
    int next = 1 - l->k;
    struct fl_link *nl = &((struct fl_link *)(c + 1))[next];
    nl->c = c;
    nl->n = l->n - 1;
    nl->k = next;
    fl_co_make(&c->g[next], c->stacks + (size_t)next * FL_STACK, chain_g, nl);
    fl_swap(&c->g[l->k].sp, c->g[next].sp);     // its end: the next runs
    __builtin_trap();
}

static void bench_create_goroutines(struct gb *b)
{
    struct fl_chain *c = calloc(1, sizeof *c + 2 * sizeof(struct fl_link));
    uint8_t *stacks = malloc(2 * FL_STACK);
    FL_CHECK(c && stacks);
    c->stacks = stacks;
    c->done = (struct fl_chan){ .cap = 1, .buf = &c->slot };
    struct fl_link *l = (struct fl_link *)(c + 1);
    *l = (struct fl_link){ c, b->n, 0 };
    gb_start(b);
    fl_co_make(&c->g[0], stacks, chain_g, l);
    fl_swap(&c->main.sp, c->g[0].sp);
    (void)fl_recv(&c->done);
    gb_stop(b);
    free(stacks);
    free(c);
}

// ---- CreateGoroutinesCapture: four goroutines and a WaitGroup an op ------------
//
// The add of four, then each goroutine made, run and ended (two switches)
// with its done (an add), then the wait's load: five atomics.

struct fl_capture {
    struct fl_co main, g;
    uint64_t wg;
    int i;
};

static void capture_g(void *arg)
{
    struct fl_capture *c = arg;
    if (c->i >= 4)
        __builtin_trap();
    fl_wg_add(&c->wg, -1);
    fl_swap(&c->g.sp, c->main.sp);  // its end: never resumed
    __builtin_trap();
}

static void bench_create_goroutines_capture(struct gb *b)
{
    struct fl_capture *c = calloc(1, sizeof *c);
    uint8_t *stack = malloc(FL_STACK);
    FL_CHECK(c && stack);
    gb_start(b);
    for (uint64_t k = 0; k < b->n; k++) {
        fl_wg_add(&c->wg, 4);
        for (int i = 0; i < 4; i++) {
            c->i = i;
            fl_co_make(&c->g, stack, capture_g, c);
            fl_swap(&c->main.sp, c->g.sp);
        }
        if (__atomic_load_n(&c->wg, __ATOMIC_ACQUIRE) >> 32)      // acquire: pairs with the adds
            __builtin_trap();
    }
    gb_stop(b);
    free(stack);
    free(c);
}

// ---- allocation ---------------------------------------------------------------
//
// The least an allocation can be: a block off a per-goroutine free list
// (no atomics), zeroed a word at a time (make's memory is zeroed; a REP
// STOS would count as one instruction under TCG and hide the stores).

struct fl_block {
    struct fl_block *next;
};

FL_INLINE void *fl_alloc(struct fl_block **free_list, int words)
{
    struct fl_block *p = *free_list;
    FL_CHECK(p);
    *free_list = p->next;
    volatile uint64_t *w = (volatile uint64_t *)p;
    for (int i = 0; i < words; i++)
        w[i] = 0;
    return p;
}

FL_INLINE void fl_free(struct fl_block **free_list, void *p)
{
    struct fl_block *b = p;
    b->next = *free_list;
    *free_list = b;
}

static struct fl_block *fl_blocks(void *mem, size_t size, int count)
{
    struct fl_block *head = 0;
    for (int i = count - 1; i >= 0; i--)
        fl_free(&head, (uint8_t *)mem + (size_t)i * size);
    return head;
}

// MakeChan/T: make(chan T, 8): a channel's header and its buffer of 8
// elements, zeroed, its capacity and buffer set; the one before freed.
#define FL_CHAN_WORDS (sizeof(struct fl_chan) / 8)

static void make_chan(struct gb *b, int elem)
{
    int words = (int)FL_CHAN_WORDS + (8 * elem + 7) / 8;
    void *mem = malloc(2 * (size_t)words * 8);
    FL_CHECK(mem);
    struct fl_block *free_list = fl_blocks(mem, (size_t)words * 8, 2);
    struct fl_chan *x = 0;
    gb_start(b);
    for (uint64_t i = 0; i < b->n; i++) {
        if (x)
            fl_free(&free_list, x);
        x = fl_alloc(&free_list, words);
        x->cap = 8;
        x->buf = (int64_t *)(x + 1);
        __asm__("" : "+r"(x));      // the channel escapes, as the row's
    }
    gb_stop(b);
    free(mem);
}

static void bench_make_chan_byte(struct gb *b) { make_chan(b, 1); }
static void bench_make_chan_int(struct gb *b) { make_chan(b, 8); }
static void bench_make_chan_struct0(struct gb *b) { make_chan(b, 0); }
static void bench_make_chan_struct32(struct gb *b) { make_chan(b, 32); }
static void bench_make_chan_struct40(struct gb *b) { make_chan(b, 40); }

// ChanCreation: a one-slot channel of int made, sent to, received from,
// freed: the send's and the receive's lock CAS.
static void chan_creation_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    int words = (int)FL_CHAN_WORDS + 1;
    void *mem = malloc((size_t)words * 8);
    FL_CHECK(mem);
    struct fl_block *free_list = fl_blocks(mem, (size_t)words * 8, 1);
    while (pb_next(pb)) {
        struct fl_chan *c = fl_alloc(&free_list, words);
        c->cap = 1;
        c->buf = (int64_t *)(c + 1);
        fl_send(c, 0);
        (void)fl_recv(c);
        fl_free(&free_list, c);
    }
    free(mem);
}

static void bench_chan_creation(struct gb *b)
{
    fl_run_parallel(b, chan_creation_body, 0);
}

// ---- SelectAsyncContended: the bounce on two channels of gomaxprocs slots ------
//
// Each G puts a token in c1 first; an op then peeks both channels, takes
// the token from the ready one (the peek may be stale at 2 vCPUs: the
// take, under the lock, decides) and puts it in the other.

FL_INLINE bool fl_try_recv(struct fl_chan *c)
{
    fl_lock(&c->lock);
    bool got = c->count > 0;
    if (got) {
        c->head = c->head + 1 == c->cap ? 0 : c->head + 1;
        c->count--;
    }
    __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);   // release: pairs with fl_lock's acquire
    return got;
}

static void select_async_body(struct gb_pb *pb, void *arg)
{
    struct fl_chan *c = arg;
    fl_send(&c[0], 0);
    while (pb_next(pb))
        for (;;) {
            if (fl_can_recv(&c[0]) && fl_try_recv(&c[0])) {
                fl_send(&c[1], 0);
                break;
            }
            if (fl_can_recv(&c[1]) && fl_try_recv(&c[1])) {
                fl_send(&c[0], 0);
                break;
            }
            relax();
        }
}

static void bench_select_async_contended(struct gb *b)
{
    uint32_t procs = (uint32_t)gomaxprocs(0);
    int64_t *buf = malloc(2 * sizeof(int64_t) * procs);
    struct fl_chan *c = calloc(2, sizeof *c);
    FL_CHECK(buf && c);
    c[0] = (struct fl_chan){ .cap = procs, .buf = buf };
    c[1] = (struct fl_chan){ .cap = procs, .buf = buf + procs };
    fl_run_parallel(b, select_async_body, c);
    free(c);
    free(buf);
}

// ---- Matmult: the product's multiply-adds, in one loop nest -------------------
//
// The row splits the product into blocks of at most 8 a side and runs the
// splits in goroutines; the floor is the same n^3 multiply-adds with
// neither.

static double **fl_matrix(int n)
{
    double **m = malloc((size_t)n * sizeof *m);
    FL_CHECK(m);
    for (int i = 0; i < n; i++) {
        m[i] = malloc((size_t)n * sizeof **m);
        FL_CHECK(m[i]);
        for (int j = 0; j < n; j++)
            m[i][j] = (double)(i * n + j);
    }
    return m;
}

static void fl_matrix_free(double **m, int n)
{
    for (int i = 0; i < n; i++)
        free(m[i]);
    free(m);
}

static void bench_matmult(struct gb *b)
{
    int n = 0;
    while ((uint64_t)(n + 1) * (uint64_t)(n + 1) * (uint64_t)(n + 1) <= b->n)
        n++;
    n++;                            // the row's cube root of N, plus one
    double **a = fl_matrix(n), **bm = fl_matrix(n), **c = fl_matrix(n);
    gb_start(b);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                c[i][j] += a[i][k] * bm[k][j];
    gb_stop(b);
    __asm__ volatile("" :: "r"(c[n - 1][n - 1]));
    fl_matrix_free(a, n);
    fl_matrix_free(bm, n);
    fl_matrix_free(c, n);
}

// ---- ChanPopular: 1000 goroutines in selects on one shared channel ---------------
//
// An op: 1000 goroutines made (coroutines), each running N selects that
// receive from the shared channel c (never sent on) or its own d[j], while
// the benchmark's goroutine sends on each d[j] in turn, N rounds, then
// waits for them all (a WaitGroup: the add, each done, the wait's CAS).
// On one core, taking turns through a run queue as the Cond floor's. A
// select that finds nothing ready locks c and d[j] (address order),
// queues itself on both and parks: 2 atomics. A send that finds the
// receiver parked takes it off d[j] under d[j]'s lock and claims its
// select with a CAS (a sender on another of its channels could race it),
// hands the value and makes it runnable; the receiver, resumed, takes
// itself off c's queue under c's lock (doubly linked: any waiter may go
// first): 3 atomics. A send that finds no receiver parks on d[j] (1), and
// the select that comes takes its value and makes it runnable. Each lock
// is a CAS taken and a release store given back (fl_chan's).

#define FL_POPULAR 1000
#define FL_POPULAR_STACK 4096   // a coroutine here calls nothing but fl_swap

struct fl_pg {
    struct fl_co co;
    struct fl_pg *prev, *next;  // on c's queue
    struct fl_popular *s;
    uint32_t j;
    uint32_t done;              // the select's claim (a CAS)
    int64_t slot;
};

struct fl_pchan {
    uint32_t lock;
    struct fl_pg *recv;         // a parked receiver's select
    struct fl_co *send;         // a parked sender
    int64_t v;                  // its value
} __attribute__((aligned(PAD)));

struct fl_popular {
    struct fl_co main;
    uint64_t n, wg;
    bool main_waits;
    uint32_t head, tail;        // the run queue: runq[head..tail) mod FL_POPULAR + 1
    struct fl_co *runq[FL_POPULAR + 1];
    struct {
        uint32_t lock;
        struct fl_pg *head, *tail;
    } __attribute__((aligned(PAD))) c;
    struct fl_pchan d[FL_POPULAR];  // after c: a select locks c first
    struct fl_pg g[FL_POPULAR];
};

FL_INLINE void fl_release(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);   // release: pairs with fl_lock's acquire
}

static void pop_ready(struct fl_popular *s, struct fl_co *co)
{
    s->runq[s->tail] = co;
    s->tail = s->tail + 1 == FL_POPULAR + 1 ? 0 : s->tail + 1;
}

// The running coroutine me gives the core to the next runnable one.
static void pop_switch(struct fl_popular *s, struct fl_co *me)
{
    FL_CHECK(s->head != s->tail);
    struct fl_co *next = s->runq[s->head];
    s->head = s->head + 1 == FL_POPULAR + 1 ? 0 : s->head + 1;
    fl_swap(&me->sp, next->sp);
}

static void pop_g(void *arg)
{
    struct fl_pg *me = arg;
    struct fl_popular *s = me->s;
    struct fl_pchan *d = &s->d[me->j];
    for (uint64_t i = 0; i < s->n; i++) {
        fl_lock(&s->c.lock);
        fl_lock(&d->lock);
        if (d->send) {
            me->slot = d->v;
            pop_ready(s, d->send);
            d->send = 0;
            fl_release(&d->lock);
            fl_release(&s->c.lock);
            continue;
        }
        me->done = 0;
        d->recv = me;
        me->next = 0;
        me->prev = s->c.tail;
        if (s->c.tail)
            s->c.tail->next = me;
        else
            s->c.head = me;
        s->c.tail = me;
        fl_release(&d->lock);
        fl_release(&s->c.lock);
        pop_switch(s, &me->co);
        fl_lock(&s->c.lock);
        if (me->prev)
            me->prev->next = me->next;
        else
            s->c.head = me->next;
        if (me->next)
            me->next->prev = me->prev;
        else
            s->c.tail = me->prev;
        fl_release(&s->c.lock);
    }
    // release: pairs with the wait's acquire
    uint64_t v = __atomic_sub_fetch(&s->wg, 1ull << 32, __ATOMIC_RELEASE);
    if (v >> 32 == 0 && (uint32_t)v != 0) {
        __atomic_store_n(&s->wg, 0, __ATOMIC_RELAXED);     // relaxed: the waiter runs after this, on this core
        pop_ready(s, &s->main);
    }
    pop_switch(s, &me->co);         // its end: never resumed
    __builtin_trap();
}

static void pop_send(struct fl_popular *s, struct fl_pchan *d, int64_t v)
{
    fl_lock(&d->lock);
    struct fl_pg *w = d->recv;
    if (!w) {
        d->send = &s->main;
        d->v = v;
        fl_release(&d->lock);
        pop_switch(s, &s->main);
        return;
    }
    d->recv = 0;
    fl_release(&d->lock);
    uint32_t z = 0;
    // acq_rel: the select's queueing before, the value after; pairs with a rival's CAS
    FL_CHECK(__atomic_compare_exchange_n(&w->done, &z, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    w->slot = v;
    pop_ready(s, &w->co);
}

static void bench_chan_popular(struct gb *b)
{
    struct fl_popular *s = calloc(1, sizeof *s);
    uint8_t *stacks = malloc((size_t)FL_POPULAR * FL_POPULAR_STACK);
    FL_CHECK(s && stacks);
    s->n = b->n;
    gb_start(b);
    fl_wg_add(&s->wg, FL_POPULAR);
    for (uint32_t j = 0; j < FL_POPULAR; j++) {
        struct fl_pg *g = &s->g[j];
        g->s = s;
        g->j = j;
        fl_co_make_at(&g->co, stacks + (size_t)(j + 1) * FL_POPULAR_STACK, pop_g, g);
        pop_ready(s, &g->co);
    }
    for (uint64_t i = 0; i < s->n; i++)
        for (uint32_t j = 0; j < FL_POPULAR; j++)
            pop_send(s, &s->d[j], 1);
    uint64_t v = __atomic_load_n(&s->wg, __ATOMIC_ACQUIRE);   // acquire: pairs with the dones' release
    // acquire: pairs with the dones' release
    if (v >> 32 && __atomic_compare_exchange_n(&s->wg, &v, v + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
        pop_switch(s, &s->main);
    FL_CHECK(__atomic_load_n(&s->wg, __ATOMIC_RELAXED) == 0 && s->head == s->tail);    // relaxed: this core's
    gb_stop(b);
    free(stacks);
    free(s);
}

// ---- StackGrowth: ten nested calls with 1 KiB frames ----------------------------
//
// An op is stackGrowthRecursive(10): eleven calls, each zeroing its 1 KiB
// frame and reading its first word. The stack is the goroutine's own
// (grown once, before the timed loop, on either side), so nothing is
// allocated per op. The frame is zeroed with 128 eight-byte stores, the
// least instructions that write it without REP STOS (which TCG, and so
// the count, takes as one instruction: goro's compiled frame uses one).

__attribute__((noinline)) static void fl_stack_recursive(int i)
{
    uint64_t pad[128];
    __asm__ volatile(".set fl_off, 0\n\t.rept 128\n\tmovq $0, fl_off(%1)\n\t"
                     ".set fl_off, fl_off + 8\n\t.endr" : "=m"(pad) : "r"(pad));
    if (i != 0 && pad[0] == 0)
        fl_stack_recursive(i - 1);
    __asm__ volatile("" ::: "memory");      // not a tail call: every frame stays
}

static void stack_growth_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb))
        fl_stack_recursive(10);
}

static void bench_stack_growth(struct gb *b) { fl_run_parallel(b, stack_growth_body, 0); }

// ---- timers ----------------------------------------------------------------------
//
// The time rows' op is 1000 timer operations while each P's heap holds
// 32768 hour-long timers (FloorTime/X, run with the rows' small N). The floor's heap is the rows' (4-ary, keyed by
// deadline) under a spin lock: an XCHG to take it, a release store to give
// it back (nobody sleeps on it): one atomic a heap operation. A timer is a
// free-list block; its deadline reads the clock (RDTSC). A reset to a
// later deadline is lazy (only the deadline word changes), as the rows'.

#define FL_TIMER_OP 1000
#define FL_GARBAGE (1 << 15)
#define FL_HOUR (1ull << 40)        // cycles: beyond any run
#define FL_SECOND (1ull << 31)

struct fl_timer {
    uint64_t when, later, period;
    uint32_t idx;
};

struct fl_heap {
    uint32_t lock;
    uint32_t n;
    struct fl_timer **t;
} __attribute__((aligned(PAD)));

static inline uint64_t fl_now(void)
{
    return __builtin_ia32_rdtsc();
}

static inline void fl_hlock(uint32_t *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))    // acquire: pairs with fl_hunlock's release
        relax();
}

static inline void fl_hunlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);       // release: pairs with fl_hlock's acquire
}

static inline void fl_heap_set(struct fl_heap *h, uint32_t i, struct fl_timer *t)
{
    h->t[i] = t;
    t->idx = i;
}

static void fl_sift_up(struct fl_heap *h, uint32_t i)
{
    struct fl_timer *t = h->t[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 4;
        if (h->t[parent]->when <= t->when)
            break;
        fl_heap_set(h, i, h->t[parent]);
        i = parent;
    }
    fl_heap_set(h, i, t);
}

static void fl_sift_down(struct fl_heap *h, uint32_t i)
{
    struct fl_timer *t = h->t[i];
    for (;;) {
        uint32_t c = 4 * i + 1, best = i;
        uint64_t w = t->when;
        for (uint32_t k = c; k < c + 4 && k < h->n; k++)
            if (h->t[k]->when < w) {
                best = k;
                w = h->t[k]->when;
            }
        if (best == i)
            break;
        fl_heap_set(h, i, h->t[best]);
        i = best;
    }
    fl_heap_set(h, i, t);
}

static void fl_timer_start(struct fl_heap *h, struct fl_timer *t)
{
    fl_hlock(&h->lock);
    fl_heap_set(h, h->n++, t);
    fl_sift_up(h, t->idx);
    fl_hunlock(&h->lock);
}

static inline void fl_heap_del(struct fl_heap *h, struct fl_timer *t)
{
    uint32_t i = t->idx;
    struct fl_timer *last = h->t[--h->n];
    if (last != t) {
        fl_heap_set(h, i, last);
        fl_sift_up(h, i);
        fl_sift_down(h, last->idx);
    }
}

static void fl_timer_stop(struct fl_heap *h, struct fl_timer *t)
{
    fl_hlock(&h->lock);
    fl_heap_del(h, t);
    fl_hunlock(&h->lock);
}

static void fl_timer_reset(struct fl_heap *h, struct fl_timer *t, uint64_t when, uint64_t period)
{
    fl_hlock(&h->lock);
    t->period = period;
    if (when > t->when) {
        t->later = when;
    } else {
        t->when = when;
        fl_sift_up(h, t->idx);
    }
    fl_hunlock(&h->lock);
}

// A timer (and, for a timer with a channel, its channel) off the free list.
#define FL_TIMER_WORDS ((int)(sizeof(struct fl_timer) / 8))
#define FL_CHAN_TIMER_WORDS (FL_TIMER_WORDS + (int)FL_CHAN_WORDS + 1)

FL_INLINE struct fl_timer *fl_timer_new(struct fl_block **free_list, bool chan, uint64_t when,
                                        uint64_t period)
{
    struct fl_timer *t = fl_alloc(free_list, chan ? FL_CHAN_TIMER_WORDS : FL_TIMER_WORDS);
    t->when = when;
    t->period = period;
    return t;
}

// The rows whose timers fire (FloorTime/AfterFunc, After,
// SimultaneousAfterFunc, Sleep, Ticker): a timer that fires carries its
// function and argument, and a channel timer its one-slot channel in the
// same block. The worker's own code is its P's scheduler: it runs the
// op's goroutine g (a coroutine) while g can run, and its heap's due
// timers when g is parked (fl_sched). A timer's function runs in the
// scheduler, or, for an AfterFunc, in a goroutine made and run at once
// (a coroutine on the second stack, Go's "go f()"). Waiting on a channel
// or a WaitGroup is a switch to the scheduler and one back.
struct fl_tw;

struct fl_ftimer {
    struct fl_timer t;          // first: the heap holds its address
    void (*f)(struct fl_tw *w, void *arg);
    void *arg;
    bool go;                    // f runs in a goroutine of its own
};

struct fl_ctimer {
    struct fl_chan c;           // first: the block's 64-byte alignment
    int64_t slot;
    struct fl_ftimer ft;
};

#define FL_FTIMER_WORDS ((int)(sizeof(struct fl_ftimer) / 8))
#define FL_CTIMER_WORDS ((int)((offsetof(struct fl_ctimer, ft) + sizeof(struct fl_ftimer)) / 8))
#define FL_TIMER_BLOCK 128      // bytes: every timer kind, 64-byte aligned
#define FL_TIMER_BLOCKS (FL_TIMER_OP + 2)
_Static_assert(sizeof(struct fl_ctimer) <= FL_TIMER_BLOCK, "a channel timer fits a block");
_Static_assert(FL_CHAN_TIMER_WORDS * 8 <= FL_TIMER_BLOCK, "a timer and its channel fit a block");

struct fl_tw {
    struct fl_heap *h;
    struct fl_block *free_list;
    struct fl_co sched, g, fn;  // the scheduler, the op's goroutine, a timer function's goroutine
    uint8_t *stacks;            // g's, then fn's
    bool ready, done;           // g can run; g's op is done
    void (*go_f)(struct fl_tw *w, void *arg);
    void *go_arg;               // fn's function and argument
    uint64_t wg;                // a WaitGroup: counter (high half), waiters (low)
    int chain;                  // AfterFunc: timers the chain has still to start
    struct fl_chan *c;          // AfterFunc: the channel its last function sends on
    struct fl_ftimer *ts[FL_TIMER_OP + 1];  // the op's timers, freed at its end
};

struct fl_timers {
    struct fl_heap *heaps;
    uint32_t nheaps, next;
    void (*op)(struct fl_tw *w);
};

static void timers_body(struct gb_pb *pb, void *arg)
{
    struct fl_timers *s = arg;
    struct fl_tw *w = calloc(1, sizeof *w);
    uint8_t *mem = malloc(FL_TIMER_BLOCKS * FL_TIMER_BLOCK + 63);
    w->stacks = malloc(2 * FL_STACK);
    FL_CHECK(w && mem && w->stacks);
    // relaxed: hands out heaps, one a G (a G per P)
    w->h = &s->heaps[__atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED) % s->nheaps];
    w->free_list = fl_blocks((void *)(((uintptr_t)mem + 63) & ~(uintptr_t)63), FL_TIMER_BLOCK, FL_TIMER_BLOCKS);
    while (pb_next(pb))
        s->op(w);
    free(w->stacks);
    free(mem);
    free(w);
}

static void run_fl_timers(struct gb *b, void (*op)(struct fl_tw *w))
{
    uint32_t procs = (uint32_t)gomaxprocs(0);
    struct fl_timers s = { calloc(procs, sizeof(struct fl_heap)), procs, 0, op };
    struct fl_timer *garbage = calloc((size_t)procs * FL_GARBAGE, sizeof *garbage);
    FL_CHECK(s.heaps && garbage);
    for (uint32_t p = 0; p < procs; p++) {
        s.heaps[p].t = malloc((FL_GARBAGE + FL_TIMER_OP + 1) * sizeof(struct fl_timer *));
        FL_CHECK(s.heaps[p].t);
        for (uint32_t i = 0; i < FL_GARBAGE; i++) {
            struct fl_timer *t = &garbage[(size_t)p * FL_GARBAGE + i];
            t->when = fl_now() + FL_HOUR;
            fl_timer_start(&s.heaps[p], t);
        }
    }
    fl_run_parallel(b, timers_body, &s);
    for (uint32_t p = 0; p < procs; p++)
        free(s.heaps[p].t);
    free(garbage);
    free(s.heaps);
}

// StartStop: 1000 hour-long AfterFuncs started, then stopped, then freed.
static void start_stop_op(struct fl_tw *w)
{
    struct fl_heap *h = w->h;
    struct fl_block **free_list = &w->free_list;
    struct fl_timer *ts[FL_TIMER_OP];
    for (int i = 0; i < FL_TIMER_OP; i++) {
        ts[i] = fl_timer_new(free_list, false, fl_now() + FL_HOUR, 0);
        fl_timer_start(h, ts[i]);
    }
    for (int i = 0; i < FL_TIMER_OP; i++)
        fl_timer_stop(h, ts[i]);
    for (int i = 0; i < FL_TIMER_OP; i++)
        fl_free(free_list, ts[i]);
}

// Stop: NewTimer(1 s) (a timer and its channel), Stop, 1000 times: the
// second-long timer goes to the top of the heap and comes out of it.
static void stop_op(struct fl_tw *w)
{
    struct fl_heap *h = w->h;
    struct fl_block **free_list = &w->free_list;
    for (int i = 0; i < FL_TIMER_OP; i++) {
        struct fl_timer *t = fl_timer_new(free_list, true, fl_now() + FL_SECOND, 0);
        fl_timer_start(h, t);
        fl_timer_stop(h, t);
        fl_free(free_list, t);
    }
}

// Reset: a NewTimer(hour) reset to an hour 1000 times, stopped, freed.
// TickerReset: a 1 ns ticker reset to 2 ns 1000 times, stopped, freed.
static void reset_loop(struct fl_heap *h, struct fl_block **free_list, uint64_t first, uint64_t then,
                       uint64_t period)
{
    struct fl_timer *t = fl_timer_new(free_list, true, fl_now() + first, period ? 1 : 0);
    fl_timer_start(h, t);
    for (int i = 0; i < FL_TIMER_OP; i++)
        fl_timer_reset(h, t, fl_now() + then, period);
    fl_timer_stop(h, t);
    fl_free(free_list, t);
}

static void reset_op(struct fl_tw *w)
{
    reset_loop(w->h, &w->free_list, FL_HOUR, FL_HOUR, 0);
}

static void ticker_reset_op(struct fl_tw *w)
{
    reset_loop(w->h, &w->free_list, 3, 6, 6);      // 1 ns and 2 ns at 3 GHz
}

// ---- the firing rows -------------------------------------------------------

FL_INLINE struct fl_ftimer *fl_ftimer_new(struct fl_tw *w, uint64_t when,
                                          void (*f)(struct fl_tw *w, void *arg), void *arg, bool go)
{
    struct fl_ftimer *ft = fl_alloc(&w->free_list, FL_FTIMER_WORDS);
    ft->t.when = when;
    ft->f = f;
    ft->arg = arg;
    ft->go = go;
    return ft;
}

FL_INLINE struct fl_chan *fl_chan_new(struct fl_tw *w)
{
    struct fl_chan *c = fl_alloc(&w->free_list, (int)FL_CHAN_WORDS + 1);
    c->cap = 1;
    c->buf = (int64_t *)(c + 1);
    return c;
}

// Go's sendTime: the time to the timer's channel unless its slot is full;
// the receiver (parked on it in these rows) made runnable.
static void fl_send_time(struct fl_tw *w, void *arg)
{
    struct fl_chan *c = arg;
    if (fl_can_send(c)) {
        fl_send(c, (int64_t)fl_now());
        w->ready = true;
    }
}

FL_INLINE struct fl_ctimer *fl_ctimer_new(struct fl_tw *w, uint64_t when, uint64_t period)
{
    struct fl_ctimer *ct = fl_alloc(&w->free_list, FL_CTIMER_WORDS);
    ct->c.cap = 1;
    ct->c.buf = &ct->slot;
    ct->ft.t.when = when;
    ct->ft.t.period = period;
    ct->ft.f = fl_send_time;
    ct->ft.arg = &ct->c;
    return ct;
}

static void fl_fn_entry(void *arg)
{
    struct fl_tw *w = arg;
    w->go_f(w, w->go_arg);
    fl_swap(&w->fn.sp, w->sched.sp);    // its end: never resumed
    __builtin_trap();
}

// The scheduler's look at its heap (Go's checkTimers): the clock read
// once, then while the earliest deadline has passed, that timer taken off
// under the lock (a periodic one moved to its next deadline after now
// instead) and its function run outside it. The peek needs no lock: only
// this worker writes its heap (the lock stands for the row's, which
// other Ps take).
static void fl_run_timers(struct fl_tw *w)
{
    struct fl_heap *h = w->h;
    uint64_t now = fl_now();
    for (;;) {
        struct fl_timer *t = h->t[0];
        if (t->when > now)
            return;
        fl_hlock(&h->lock);
        if (t->period) {
            t->when += t->period * (1 + (now - t->when) / t->period);
            fl_sift_down(h, 0);
        } else {
            fl_heap_del(h, t);
        }
        fl_hunlock(&h->lock);
        struct fl_ftimer *ft = (struct fl_ftimer *)t;
        if (ft->go) {
            w->go_f = ft->f;
            w->go_arg = ft->arg;
            fl_co_make(&w->fn, w->stacks + FL_STACK, fl_fn_entry, w);
            fl_swap(&w->sched.sp, w->fn.sp);
        } else {
            ft->f(w, ft->arg);
        }
    }
}

// Runs a goroutine of body until it is done: it while it can run, else
// the timers due.
static void fl_sched(struct fl_tw *w, void (*body)(void *))
{
    fl_co_make(&w->g, w->stacks, body, w);
    w->ready = true;
    w->done = false;
    while (!w->done) {
        if (w->ready) {
            w->ready = false;
            fl_swap(&w->sched.sp, w->g.sp);
        } else {
            fl_run_timers(w);
        }
    }
}

FL_INLINE void fl_park(struct fl_tw *w)
{
    fl_swap(&w->g.sp, w->sched.sp);
}

static void fl_g_end(struct fl_tw *w)
{
    w->done = true;
    fl_park(w);                     // never resumed
    __builtin_trap();
}

FL_INLINE void fl_chan_wait(struct fl_tw *w, struct fl_chan *c)
{
    if (!fl_can_recv(c))
        fl_park(w);
    (void)fl_recv(c);
}

// A WaitGroup wait that finds the counter above 0: counted in as a waiter
// (a CAS), parked; the done that takes the counter to 0 clears the word
// and makes it runnable.
static void fl_wg_wait(struct fl_tw *w)
{
    uint64_t v = __atomic_load_n(&w->wg, __ATOMIC_ACQUIRE);    // acquire: pairs with fl_wg_done's release
    while (v >> 32) {
        // acquire: pairs with fl_wg_done's release
        if (__atomic_compare_exchange_n(&w->wg, &v, v + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
            fl_park(w);
            return;
        }
    }
}

static void fl_wg_done(struct fl_tw *w, void *arg)
{
    (void)arg;
    // release: pairs with fl_wg_wait's acquire
    uint64_t v = __atomic_sub_fetch(&w->wg, 1ull << 32, __ATOMIC_RELEASE);
    if (v >> 32 == 0 && (uint32_t)v != 0) {
        __atomic_store_n(&w->wg, 0, __ATOMIC_RELAXED);     // relaxed: the waiter runs after this, on this core
        w->ready = true;
    }
}

// AfterFunc: a chain of 1000 AfterFunc(0), each function starting the
// next, the last sending on a channel the op's goroutine waits on.
static void chain_f(struct fl_tw *w, void *arg)
{
    (void)arg;
    int n = --w->chain;
    if (n >= 0) {
        w->ts[n] = fl_ftimer_new(w, fl_now(), chain_f, 0, true);
        fl_timer_start(w->h, &w->ts[n]->t);
    } else {
        fl_send(w->c, 1);
        w->ready = true;
    }
}

static void afterfunc_g(void *arg)
{
    struct fl_tw *w = arg;
    w->chain = FL_TIMER_OP;
    w->c = fl_chan_new(w);
    w->ts[FL_TIMER_OP] = fl_ftimer_new(w, fl_now(), chain_f, 0, true);
    fl_timer_start(w->h, &w->ts[FL_TIMER_OP]->t);
    fl_chan_wait(w, w->c);
    for (int i = 0; i <= FL_TIMER_OP; i++)
        fl_free(&w->free_list, w->ts[i]);
    fl_free(&w->free_list, w->c);
    fl_g_end(w);
}

static void afterfunc_op(struct fl_tw *w) { fl_sched(w, afterfunc_g); }

// After: <-After(1 ns), 1000 times: a timer and its channel made and
// started, the receive parks, the timer fires (its send), the receive.
static void after_g(void *arg)
{
    struct fl_tw *w = arg;
    for (int i = 0; i < FL_TIMER_OP; i++) {
        struct fl_ctimer *ct = fl_ctimer_new(w, fl_now() + 3, 0);
        fl_timer_start(w->h, &ct->ft.t);
        fl_chan_wait(w, &ct->c);
        fl_free(&w->free_list, ct);
    }
    fl_g_end(w);
}

static void after_op(struct fl_tw *w) { fl_sched(w, after_g); }

// SimultaneousAfterFunc: 1000 AfterFunc(0, wg.Done) started, then Wait;
// each function a goroutine that makes one done.
static void simultaneous_g(void *arg)
{
    struct fl_tw *w = arg;
    fl_wg_add(&w->wg, FL_TIMER_OP);
    for (int i = 0; i < FL_TIMER_OP; i++) {
        w->ts[i] = fl_ftimer_new(w, fl_now(), fl_wg_done, 0, true);
        fl_timer_start(w->h, &w->ts[i]->t);
    }
    fl_wg_wait(w);
    for (int i = 0; i < FL_TIMER_OP; i++)
        fl_free(&w->free_list, w->ts[i]);
    fl_g_end(w);
}

static void simultaneous_op(struct fl_tw *w) { fl_sched(w, simultaneous_g); }

// Sleep: 1000 goroutines, each sleeping 1 ns then a WaitGroup done, and
// the wait. Each is made and run at once: its timer started, it parks,
// the timer makes it runnable, it runs its done and ends; the wait then
// finds the counter at 0.
static void fl_wake(struct fl_tw *w, void *arg)
{
    (void)arg;
    w->ready = true;
}

static void sleeper_g(void *arg)
{
    struct fl_tw *w = arg;
    struct fl_ftimer *ft = fl_ftimer_new(w, fl_now() + 3, fl_wake, 0, false);
    fl_timer_start(w->h, &ft->t);
    fl_park(w);
    fl_free(&w->free_list, ft);
    fl_wg_add(&w->wg, -1);
    fl_g_end(w);
}

static void sleep_op(struct fl_tw *w)
{
    fl_wg_add(&w->wg, FL_TIMER_OP);
    for (int i = 0; i < FL_TIMER_OP; i++)
        fl_sched(w, sleeper_g);
    if (__atomic_load_n(&w->wg, __ATOMIC_ACQUIRE) != 0)   // acquire: pairs with the dones' release
        __builtin_trap();
}

// Ticker: a 1 ns ticker, 1000 receives from its channel, each parked
// until the tick; then stopped and freed.
static void ticker_g(void *arg)
{
    struct fl_tw *w = arg;
    struct fl_ctimer *ct = fl_ctimer_new(w, fl_now() + 3, 3);
    fl_timer_start(w->h, &ct->ft.t);
    for (int i = 0; i < FL_TIMER_OP; i++)
        fl_chan_wait(w, &ct->c);
    fl_timer_stop(w->h, &ct->ft.t);
    fl_free(&w->free_list, ct);
    fl_g_end(w);
}

static void ticker_op(struct fl_tw *w) { fl_sched(w, ticker_g); }

static void bench_afterfunc(struct gb *b) { run_fl_timers(b, afterfunc_op); }
static void bench_after(struct gb *b) { run_fl_timers(b, after_op); }
static void bench_simultaneous(struct gb *b) { run_fl_timers(b, simultaneous_op); }
static void bench_sleep(struct gb *b) { run_fl_timers(b, sleep_op); }
static void bench_ticker(struct gb *b) { run_fl_timers(b, ticker_op); }
static void bench_start_stop(struct gb *b) { run_fl_timers(b, start_stop_op); }
static void bench_stop(struct gb *b) { run_fl_timers(b, stop_op); }
static void bench_reset(struct gb *b) { run_fl_timers(b, reset_op); }
static void bench_ticker_reset(struct gb *b) { run_fl_timers(b, ticker_reset_op); }

const struct gobench gobench_floor[] = {
    { "Floor/ChanNonblocking", 20000, bench_chan_nonblocking },
    { "Floor/SelectNonblock", 20000, bench_select_nonblock },
    { "Floor/SelectUncontended", 10000, bench_select_uncontended },
    { "Floor/ChanUncontended", 200, bench_chan_uncontended },
    { "Floor/ChanContended", 100, bench_chan_contended },
    { "Floor/ChanSem", 5000, bench_chan_sem },
    { "Floor/ChanClosed", 50000, bench_chan_closed },
    { "Floor/MutexUncontended", 50000, bench_mutex_uncontended },
    { "Floor/Mutex", 50000, bench_mutex },
    { "Floor/MutexSlack", 50000, bench_mutex_slack },
    { "Floor/MutexWork", 10000, bench_mutex_work },
    { "Floor/MutexWorkSlack", 10000, bench_mutex_work_slack },
    { "Floor/Once", 100000, bench_once },
    { "Floor/RWMutexUncontended", 10000, bench_rw_uncontended },
    { "Floor/RWMutexWrite100", 50000, bench_rw_write100 },
    { "Floor/RWMutexWorkWrite100", 5000, bench_rw_work_write100 },
    { "Floor/SemaUncontended", 20000, bench_sema_uncontended },
    { "Floor/SemaSyntNonblock", 20000, bench_sema_synt },
    { "Floor/SemaSyntBlock", 50000, bench_sema_synt },
    { "Floor/SemaWorkNonblock", 20000, bench_sema_work },
    { "Floor/SemaWorkBlock", 20000, bench_sema_work },
    { "Floor/WaitGroupUncontended", 20000, bench_wg_uncontended },
    { "Floor/WaitGroupAddDone", 50000, bench_wg_add_done },
    { "Floor/WaitGroupWait", 100000, bench_wg_wait },
    { "Floor/ChanSync", 20000, bench_chan_sync },
    { "Floor/ChanProdCons0", 20000, bench_prod_cons0 },
    { "Floor/ChanProdCons10", 20000, bench_prod_cons10 },
    { "Floor/ChanProdCons100", 20000, bench_prod_cons100 },
    { "Floor/ChanSyncWork", 2000, bench_chan_sync_work },
    { "Floor/ChanProdConsWork0", 5000, bench_prod_cons_work0 },
    { "Floor/ChanProdConsWork10", 5000, bench_prod_cons_work10 },
    { "Floor/ChanProdConsWork100", 5000, bench_prod_cons_work100 },
    { "Floor/SelectProdCons", 5000, bench_select_prod_cons },
    { "Floor/PingPongHog", 10000, bench_ping_pong },
    { "Floor/MutexNoSpin", 500, bench_mutex_nospin },
    { "Floor/MutexSpin", 500, bench_mutex_spin },
    { "Floor/CreateGoroutinesCapture", 5000, bench_create_goroutines_capture },
    { "Floor/CreateGoroutines", 20000, bench_create_goroutines },
    { "Floor/CreateGoroutinesParallel", 20000, bench_create_goroutines },
    { "Floor/MakeChan/Byte", 20000, bench_make_chan_byte },
    { "Floor/MakeChan/Int", 20000, bench_make_chan_int },
    { "Floor/MakeChan/Ptr", 20000, bench_make_chan_int },
    { "Floor/MakeChan/Struct/0", 20000, bench_make_chan_struct0 },
    { "Floor/MakeChan/Struct/32", 20000, bench_make_chan_struct32 },
    { "Floor/MakeChan/Struct/40", 20000, bench_make_chan_struct40 },
    { "Floor/ChanCreation", 20000, bench_chan_creation },
    { "Floor/SelectAsyncContended", 10000, bench_select_async_contended },
    { "Floor/Matmult", 500000, bench_matmult },
    { "Floor/SelectSyncContended", 20000, bench_select_sync_contended },
    { "Floor/Cond1", 20000, bench_cond1 },
    { "Floor/Cond2", 10000, bench_cond2 },
    { "Floor/Cond4", 5000, bench_cond4 },
    { "Floor/Cond8", 2000, bench_cond8 },
    { "Floor/Cond16", 2000, bench_cond16 },
    { "Floor/Cond32", 500, bench_cond32 },
    { "Floor/WakeupParallelSpinning/0s", 1000, bench_wakeup_spinning },
    { "Floor/WakeupParallelSyscall/0s", 1000, bench_wakeup_syscall },
    { "Floor/StackGrowth", 1000, bench_stack_growth },
    { "FloorLarge/ChanPopular", 1, bench_chan_popular },
    { "FloorTime/StartStop", 4, bench_start_stop },
    { "FloorTime/Stop", 2, bench_stop },
    { "FloorTime/Reset", 20, bench_reset },
    { "FloorTime/TickerReset", 20, bench_ticker_reset },
    { "FloorTime/AfterFunc", 2, bench_afterfunc },
    { "FloorTime/After", 2, bench_after },
    { "FloorTime/SimultaneousAfterFunc", 1, bench_simultaneous },
    { "FloorTime/Sleep", 1, bench_sleep },
    { "FloorTime/Ticker", 2, bench_ticker },
    { 0 },
};
