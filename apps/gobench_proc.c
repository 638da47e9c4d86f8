// SPDX-License-Identifier: MIT
// Go 1.19's src/runtime/proc_test.go benchmarks, with its workloads.
#include "goro.h"
#include "gobench.h"

// ---- PingPongHog: a ping-pong pair beside a CPU hog on one P ---------------

struct pph {
    uint64_t n;
    chan_t *stop, *done, *ping, *pong;
};

static void pph_hog(void *arg)
{
    struct pph *s = arg;
    for (;;)
        if (chan_try_recv(s->stop, 0) != CHAN_WOULD_BLOCK) {    // select { case <-stop: ... default: }
            chan_send(s->done, 0);
            return;
        }
}

static void pph_pong(void *arg)
{
    struct pph *s = arg;
    bool v;
    for (uint64_t j = 0; j < s->n; j++) {
        chan_recv(s->ping, &v);
        chan_send(s->pong, &v);
    }
    chan_close(s->stop);
    chan_send(s->done, 0);
}

static void pph_ping(void *arg)
{
    struct pph *s = arg;
    bool v;
    for (uint64_t i = 0; i < s->n; i++) {
        chan_recv(s->pong, &v);
        chan_send(s->ping, &v);
    }
    chan_send(s->done, 0);
}

static void bench_ping_pong_hog(struct gb *b)
{
    int procs = gomaxprocs(1);
    struct pph s = { b->n, chan_make(1, 0), chan_make(1, 0), chan_make(1, 0), chan_make(1, 0) };
    go(pph_hog, &s);
    go(pph_pong, &s);
    go(pph_ping, &s);
    bool t = true;
    gb_start(b);
    chan_send(s.ping, &t);      // start the ping-pong
    chan_recv(s.stop, 0);
    gb_stop(b);
    chan_recv(s.ping, 0);       // let the last ponger exit
    for (int i = 0; i < 3; i++) // Go waits for one; C frees the channels, so all
        chan_recv(s.done, 0);
    chan_free(s.stop);
    chan_free(s.done);
    chan_free(s.ping);
    chan_free(s.pong);
    gomaxprocs(procs);
}

// ---- StackGrowth: recursion with 1 KiB frames in every P -----------------

// Go's frame: `var pad [128]uint64` (zeroed by the compiler, 1 KiB) and a
// read of pad[0]. The empty asm makes the zeroed array live in memory, so
// the compiler must zero all of it as Go's does, and nothing more.
__attribute__((noinline)) static void stack_growth_recursive(int i)
{
    uint64_t pad[128];
    __builtin_memset(pad, 0, sizeof pad);
    __asm__ volatile("" : : "r"(pad) : "memory");
    if (i != 0 && pad[0] == 0)
        stack_growth_recursive(i - 1);
    __asm__ volatile("" ::: "memory");      // not a tail call: every frame stays
}

static void stack_growth_body(struct gb_pb *pb, void *arg)
{
    int rec = (int)(intptr_t)arg;
    while (pb_next(pb))
        stack_growth_recursive(rec);
}

static void bench_stack_growth(struct gb *b)
{
    gb_run_parallel(b, stack_growth_body, (void *)10);
}

static void bench_stack_growth_deep(struct gb *b)
{
    // 1024 frames of 1 KiB: 1 MiB, four times a goroutine's whole stack
    // (256 KiB of address space; goro's stacks do not move).
    gb_skip(b, "needs 1 MiB of stack; a goroutine's stack is 256 KiB and never moves");
}

// ---- CreateGoroutines: a chain of goroutines, each starting the next -------

static chan_t *create_done;

static void create_chain(void *arg)
{
    uint64_t n = (uint64_t)(uintptr_t)arg;
    if (n == 0) {
        bool t = true;
        chan_send(create_done, &t);
        return;
    }
    go(create_chain, (void *)(uintptr_t)(n - 1));
}

static void create_goroutines(struct gb *b, int procs)
{
    create_done = chan_make(1, 0);
    gb_start(b);
    for (int i = 0; i < procs; i++)
        go(create_chain, (void *)(uintptr_t)(b->n / (uint64_t)procs));
    for (int i = 0; i < procs; i++)
        chan_recv(create_done, 0);
    gb_stop(b);
    chan_free(create_done);
}

static void bench_create_goroutines(struct gb *b)
{
    create_goroutines(b, 1);
}

static void bench_create_goroutines_parallel(struct gb *b)
{
    create_goroutines(b, gomaxprocs(0));
}

// ---- CreateGoroutinesCapture: four goroutines and a WaitGroup per op -------

struct capture {
    int i;
    waitgroup_t *wg;
};

static void capture_g(void *arg)
{
    struct capture *c = arg;
    if (c->i >= 4)
        panic("gobench: bad");
    wg_done(c->wg);
}

static void bench_create_goroutines_capture(struct gb *b)
{
    gb_start(b);
    for (uint64_t k = 0; k < b->n; k++) {
        waitgroup_t wg = WAITGROUP_INIT;
        struct capture c[4];    // Go's closures escape to the heap; these live until Wait
        wg_add(&wg, 4);
        for (int i = 0; i < 4; i++) {
            c[i] = (struct capture){ i, &wg };
            go(capture_g, &c[i]);
        }
        wg_wait(&wg);
    }
    gb_stop(b);
}

// ---- CreateGoroutinesSingle: one producer, every P warmed up to steal ----

struct warmup {
    int32_t count, target;
    waitgroup_t wg;
};

static void warmup_g(void *arg)
{
    struct warmup *w = arg;
    __atomic_add_fetch(&w->count, 1, __ATOMIC_RELAXED);     // relaxed: a rendezvous count
    while (__atomic_load_n(&w->count, __ATOMIC_RELAXED) < w->target)
        ;                       // spin until every one has started
    gb_spin(1000000);           // and a millisecond more, each on its own core
    wg_done(&w->wg);
}

// Go's warmupScheduler: every P busy at once, so every core is awake.
static void warmup_scheduler(int n)
{
    struct warmup w = { 0, n, WAITGROUP_INIT };
    wg_add(&w.wg, n);
    for (int i = 0; i < n; i++)
        go(warmup_g, &w);
    wg_wait(&w.wg);
}

static void done_g(void *arg)
{
    wg_done(arg);
}

static void bench_create_goroutines_single(struct gb *b)
{
    warmup_scheduler(gomaxprocs(0));
    waitgroup_t wg = WAITGROUP_INIT;
    gb_start(b);
    wg_add(&wg, (int)b->n);
    for (uint64_t i = 0; i < b->n; i++)
        go(done_g, &wg);
    wg_wait(&wg);
    gb_stop(b);
}

// ---- WakeupParallel: two goroutines hand a token back and forth, each
// spinning (or in a blocking call) for delay before each half -------------

struct wakeup {
    uint64_t n, delay;
    void (*spin)(uint64_t ns);
    chan_t *ping, *pong, *start, *done;
};

#define WAKE_DELAY 5000         // ns: the sender's extra spin

static void wakeup_a(void *arg)
{
    struct wakeup *w = arg;
    chan_recv(w->start, 0);
    for (uint64_t i = 0; i < w->n; i++) {
        w->spin(w->delay + WAKE_DELAY);
        chan_send(w->ping, 0);
        w->spin(w->delay);
        chan_recv(w->pong, 0);
    }
    chan_send(w->done, 0);
}

static void wakeup_b(void *arg)
{
    struct wakeup *w = arg;
    for (uint64_t i = 0; i < w->n; i++) {
        w->spin(w->delay);
        chan_recv(w->ping, 0);
        w->spin(w->delay + WAKE_DELAY);
        chan_send(w->pong, 0);
    }
    chan_send(w->done, 0);
}

static void spin_syscall(uint64_t ns)   // Go's sysNanosleep: a blocking call that holds the core
{
    entersyscall();
    gb_spin(ns);
    exitsyscall();
}

static void wakeup_parallel(struct gb *b, uint64_t delay_us, void (*spin)(uint64_t))
{
    if (gomaxprocs(0) == 1) {
        gb_skip(b, "skipping: GOMAXPROCS=1");
        return;
    }
    struct wakeup w = { b->n, delay_us * 1000, spin, chan_make(0, 0), chan_make(0, 0),
                        chan_make(0, 0), chan_make(0, 0) };
    go(wakeup_a, &w);
    go(wakeup_b, &w);
    gb_start(b);
    chan_send(w.start, 0);
    chan_recv(w.done, 0);
    chan_recv(w.done, 0);
    gb_stop(b);
    chan_free(w.ping);
    chan_free(w.pong);
    chan_free(w.start);
    chan_free(w.done);
}

#define WAKEUP(kind, spin, us)                                              \
    static void bench_wakeup_##kind##_##us(struct gb *b) { wakeup_parallel(b, us, spin); }
WAKEUP(spinning, gb_spin, 0)
WAKEUP(spinning, gb_spin, 1)
WAKEUP(spinning, gb_spin, 2)
WAKEUP(spinning, gb_spin, 5)
WAKEUP(spinning, gb_spin, 10)
WAKEUP(spinning, gb_spin, 20)
WAKEUP(spinning, gb_spin, 50)
WAKEUP(spinning, gb_spin, 100)
WAKEUP(syscall, spin_syscall, 0)
WAKEUP(syscall, spin_syscall, 1)
WAKEUP(syscall, spin_syscall, 2)
WAKEUP(syscall, spin_syscall, 5)
WAKEUP(syscall, spin_syscall, 10)
WAKEUP(syscall, spin_syscall, 20)
WAKEUP(syscall, spin_syscall, 50)
WAKEUP(syscall, spin_syscall, 100)

// ---- Matmult: recursive blocked matrix product, a goroutine per split ------

struct mm {
    chan_t *done;
    double **a, **b, **c;
    int i0, i1, j0, j1, k0, k1, threshold;
};

static void matmult(struct mm *m);

static void matmult_go(void *arg)
{
    matmult(arg);
    free(arg);
}

static void matmult_split(struct mm *first, struct mm *second)
{
    struct mm *child = malloc(sizeof *child);
    *child = *first;
    child->done = chan_make(0, 1);
    chan_t *done1 = child->done;
    go(matmult_go, child);
    second->done = 0;
    matmult(second);
    chan_recv(done1, 0);
    chan_free(done1);
}

static void matmult(struct mm *m)
{
    int di = m->i1 - m->i0, dj = m->j1 - m->j0, dk = m->k1 - m->k0;
    struct mm lo = *m, hi = *m;
    if (di >= dj && di >= dk && di >= m->threshold) {
        lo.i1 = hi.i0 = m->i0 + di / 2;
        matmult_split(&lo, &hi);
    } else if (dj >= dk && dj >= m->threshold) {
        lo.j1 = hi.j0 = m->j0 + dj / 2;
        matmult_split(&lo, &hi);
    } else if (dk >= m->threshold) {
        // not parallel: both halves write the same C elements
        lo.k1 = hi.k0 = m->k0 + dk / 2;
        lo.done = hi.done = 0;
        matmult(&lo);
        matmult(&hi);
    } else {
        for (int i = m->i0; i < m->i1; i++)
            for (int j = m->j0; j < m->j1; j++)
                for (int k = m->k0; k < m->k1; k++)
                    m->c[i][j] += m->a[i][k] * m->b[k][j];
    }
    if (m->done)
        chan_send(m->done, 0);
}

static double **make_matrix(int n)
{
    double **m = malloc((size_t)n * sizeof *m);
    for (int i = 0; i < n; i++) {
        m[i] = malloc((size_t)n * sizeof **m);
        for (int j = 0; j < n; j++)
            m[i][j] = (double)(i * n + j);
    }
    return m;
}

static void free_matrix(double **m, int n)
{
    for (int i = 0; i < n; i++)
        free(m[i]);
    free(m);
}

static int icbrt(uint64_t x)
{
    int r = 0;
    while ((uint64_t)(r + 1) * (uint64_t)(r + 1) * (uint64_t)(r + 1) <= x)
        r++;
    return r;
}

static void bench_matmult(struct gb *b)
{
    // O(n^3) work for O(N): n is the cube root of N, plus one.
    int n = icbrt(b->n) + 1;
    struct mm m = { 0, make_matrix(n), make_matrix(n), make_matrix(n), 0, n, 0, n, 0, n, 8 };
    gb_start(b);
    matmult(&m);
    gb_stop(b);
    free_matrix(m.a, n);
    free_matrix(m.b, n);
    free_matrix(m.c, n);
}

const struct gobench gobench_proc[] = {
    { "PingPongHog", 10000, bench_ping_pong_hog },
    { "StackGrowth", 1000, bench_stack_growth },
    { "StackGrowthDeep", 100, bench_stack_growth_deep },
    { "CreateGoroutines", 20000, bench_create_goroutines },
    { "CreateGoroutinesParallel", 20000, bench_create_goroutines_parallel },
    { "CreateGoroutinesCapture", 5000, bench_create_goroutines_capture },
    { "CreateGoroutinesSingle", 20000, bench_create_goroutines_single },
    { "WakeupParallelSpinning/0s", 1000, bench_wakeup_spinning_0 },
    { "WakeupParallelSpinning/1\xc2\xb5s", 1000, bench_wakeup_spinning_1 },
    { "WakeupParallelSpinning/2\xc2\xb5s", 500, bench_wakeup_spinning_2 },
    { "WakeupParallelSpinning/5\xc2\xb5s", 500, bench_wakeup_spinning_5 },
    { "WakeupParallelSpinning/10\xc2\xb5s", 200, bench_wakeup_spinning_10 },
    { "WakeupParallelSpinning/20\xc2\xb5s", 100, bench_wakeup_spinning_20 },
    { "WakeupParallelSpinning/50\xc2\xb5s", 50, bench_wakeup_spinning_50 },
    { "WakeupParallelSpinning/100\xc2\xb5s", 20, bench_wakeup_spinning_100 },
    { "WakeupParallelSyscall/0s", 1000, bench_wakeup_syscall_0 },
    { "WakeupParallelSyscall/1\xc2\xb5s", 1000, bench_wakeup_syscall_1 },
    { "WakeupParallelSyscall/2\xc2\xb5s", 500, bench_wakeup_syscall_2 },
    { "WakeupParallelSyscall/5\xc2\xb5s", 500, bench_wakeup_syscall_5 },
    { "WakeupParallelSyscall/10\xc2\xb5s", 200, bench_wakeup_syscall_10 },
    { "WakeupParallelSyscall/20\xc2\xb5s", 100, bench_wakeup_syscall_20 },
    { "WakeupParallelSyscall/50\xc2\xb5s", 50, bench_wakeup_syscall_50 },
    { "WakeupParallelSyscall/100\xc2\xb5s", 20, bench_wakeup_syscall_100 },
    { "Matmult", 500000, bench_matmult },
    { 0 },
};
