// SPDX-License-Identifier: MIT
// goro's own benchmarks in go test's format (package "goro"): workloads
// that are not in Go's test files but that goro's performance notes rest
// on. SpawnBatch/B is the spawn peer of tests/peers (B empty goroutines
// started, then waited for) with the wait by yielding, at batch sizes on
// both sides of the 256-slot run queue: an op is one spawn, run and exit.
// KnownWork is the instruction counts' yardstick: its op is exactly
// 2 * KNOWN_WORK_ROUNDS instructions of work under b.RunParallel, and its
// Go twin (tools/bench/knownwork_go) the same.
#include "goro.h"
#include "gobench.h"

// ---- KnownWork: a RunParallel loop of known length --------------------------

#define KNOWN_WORK_ROUNDS 5000      // knownwork_test.go's Rounds

static void known_work_body(struct gb_pb *pb, void *arg)
{
    (void)arg;
    while (pb_next(pb)) {
        uint64_t r = KNOWN_WORK_ROUNDS;
        __asm__ volatile("1: dec %0; jnz 1b" : "+r"(r));   // 2 instructions a round
    }
}

static void bench_known_work(struct gb *b)
{
    gb_run_parallel(b, known_work_body, 0);
}

// ---- SpawnBatch -----------------------------------------------------------------

static uint64_t spawned_done;

static void empty_g(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&spawned_done, 1, __ATOMIC_RELEASE);    // release: pairs with the waiter's acquire
}

static void spawn_batch(struct gb *b, uint64_t batch)
{
    gb_start(b);
    for (uint64_t i = 0; i < b->n; i += batch) {
        uint64_t k = b->n - i < batch ? b->n - i : batch;
        __atomic_store_n(&spawned_done, 0, __ATOMIC_RELAXED);  // no G of the last batch is left to add to it
        for (uint64_t j = 0; j < k; j++)
            go(empty_g, 0);
        while (__atomic_load_n(&spawned_done, __ATOMIC_ACQUIRE) < k)
            gosched();
    }
    gb_stop(b);
}

#define BATCH(n) static void bench_spawn_batch_##n(struct gb *b) { spawn_batch(b, n); }
BATCH(10)
BATCH(100)
BATCH(300)
BATCH(1000)
BATCH(3000)
BATCH(10000)

const struct gobench gobench_goro[] = {
    { "KnownWork", 2000, bench_known_work },
    { "SpawnBatch/10", 20000, bench_spawn_batch_10 },
    { "SpawnBatch/100", 20000, bench_spawn_batch_100 },
    { "SpawnBatch/300", 20000, bench_spawn_batch_300 },
    { "SpawnBatch/1000", 20000, bench_spawn_batch_1000 },
    { "SpawnBatch/3000", 20000, bench_spawn_batch_3000 },
    { "SpawnBatch/10000", 20000, bench_spawn_batch_10000 },
    { 0 },
};
