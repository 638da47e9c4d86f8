// SPDX-License-Identifier: MIT
// What the app=gobench files share: Go's testing.B and testing.PB in C.
//
// A benchmark function gets b->n, does its setup, calls gb_start(b) just
// before the n iterations and gb_stop(b) once they are all done (workers
// included), then cleans up. The two calls bracket the measured loop with
// the instruction-count markers (apps/bench_util.h), so every printed
// result line has exactly one marker pair, in output order.
#ifndef GORO_GOBENCH_H
#define GORO_GOBENCH_H
#include <stdbool.h>
#include <stdint.h>
#include "goro.h"

struct gb {
    uint64_t n;                 // b.N
    int parallelism;            // b.SetParallelism: RunParallel starts this many Gs per P
    bool skipped;               // gb_skip was called; reason says why
    const char *reason;
    // the runner's
    bool mark;                  // emit the markers (not in the N=1 warm-up run)
    int starts, stops;          // gb_start/gb_stop calls: each exactly once
    uint64_t t0, ns;            // the measured interval
    uint64_t prev_n, prev_ns;   // the previous run, for RunParallel's grain
};

void gb_start(struct gb *b);    // b.ResetTimer at the start of the loop
void gb_stop(struct gb *b);     // b.StopTimer after it
// b.Skip: nothing ran; the runner prints Go's --- SKIP lines.
void gb_skip(struct gb *b, const char *reason);

// testing.PB: the iterations of a RunParallel split among its Gs, taken
// from one shared counter in grains (Go's PB.Next).
struct gb_pb {
    uint64_t *global;
    uint64_t grain;
    uint64_t bn;
    uint64_t cache;
};
static inline bool pb_next(struct gb_pb *pb)
{
    if (pb->cache == 0) {
        uint64_t n = __atomic_add_fetch(pb->global, pb->grain, __ATOMIC_RELAXED); // relaxed: a ticket counter, no data rides on it
        if (n <= pb->bn)
            pb->cache = pb->grain;
        else if (n < pb->bn + pb->grain)
            pb->cache = pb->bn + pb->grain - n;
        else
            return false;
    }
    pb->cache--;
    return true;
}

// b.RunParallel: parallelism x gomaxprocs Gs each run body(pb, arg) and
// it returns when all have. Starts and stops the timer around them unless
// the caller already started it (then the caller stops it).
void gb_run_parallel(struct gb *b, void (*body)(struct gb_pb *pb, void *arg), void *arg);

// The work loops of Go's benchmarks, kept from being folded away.
static inline int64_t gb_work100(int64_t foo)       // for i < 100 { foo *= 2; foo /= 2 }
{
    for (int i = 0; i < 100; i++) {
        foo *= 2;
        __asm__("" : "+r"(foo));
        foo /= 2;
        __asm__("" : "+r"(foo));
    }
    return foo;
}
static inline void gb_local_work(int w)             // chan_test.go's localWork
{
    int64_t foo = 0;
    for (int i = 0; i < w; i++) {
        foo /= (foo + 1);
        __asm__("" : "+r"(foo));
    }
    // Go keeps the loop although foo is dead after it; GCC would not.
    __asm__ volatile("" : : "r"(foo));
}
// Busy-waits d nanoseconds (time.Now().Before(end)).
static inline void gb_spin(uint64_t d)
{
    uint64_t end = nanotime() + d;
    while (nanotime() < end)
        ;
}

struct gobench {
    const char *name;           // without "Benchmark": "ChanSync", "MakeChan/Byte"
    uint64_t n;                 // default iterations (benchtime=Nx overrides)
    void (*fn)(struct gb *b);
};

// One package's benchmarks, in Go's order, ended by a { 0 } entry.
struct gobench_pkg {
    const char *pkg;            // "runtime", "sync", "time", "goro" or "floor"
    const struct gobench *list;
};

extern const struct gobench gobench_proc[], gobench_chan[], gobench_select[];
extern const struct gobench gobench_sync[], gobench_sema[], gobench_time[], gobench_goro[], gobench_floor[];

#endif
