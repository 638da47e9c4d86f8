// SPDX-License-Identifier: MIT
// The seeds' batching example: one goroutine per item against one goroutine
// per core, each over a slice of the items, both waiting on a WaitGroup.
// Checks: both compute the same sum of squares; prints both times.
#include "goro.h"

#define ITEMS 10000
#define SPAWN_YIELD 500      // bounds the live goroutines (16 KiB stacks each) on one P

static uint64_t items[ITEMS];

struct one {
    uint64_t item;
    uint64_t *sum;
    waitgroup_t *wg;
};
static struct one ones[ITEMS];

static void per_item(void *arg)
{
    struct one *o = arg;
    __atomic_fetch_add(o->sum, o->item * o->item, __ATOMIC_RELAXED);
    wg_done(o->wg);
}

struct batch {
    const uint64_t *begin, *end;
    uint64_t *sum;
    waitgroup_t *wg;
};

static void per_batch(void *arg)
{
    struct batch *b = arg;
    uint64_t s = 0;
    for (const uint64_t *p = b->begin; p < b->end; p++)
        s += *p * *p;
    __atomic_fetch_add(b->sum, s, __ATOMIC_RELAXED);
    wg_done(b->wg);
}

static int batching_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint64_t want = 0;
    for (int i = 0; i < ITEMS; i++) {
        items[i] = (uint64_t)i * 7 + 3;
        want += items[i] * items[i];
    }

    uint64_t sum1 = 0;
    waitgroup_t wg1 = WAITGROUP_INIT;
    wg_add(&wg1, ITEMS);
    uint64_t t0 = nanotime();
    for (int i = 0; i < ITEMS; i++) {
        ones[i] = (struct one){ items[i], &sum1, &wg1 };
        go(per_item, &ones[i]);
        if (i % SPAWN_YIELD == SPAWN_YIELD - 1)
            gosched();
    }
    wg_wait(&wg1);
    uint64_t t_items = nanotime() - t0;

    uint64_t sum2 = 0;
    waitgroup_t wg2 = WAITGROUP_INIT;
    int ncpu = num_cpu();
    static struct batch batches[256];
    if (ncpu > 256)
        ncpu = 256;
    int size = (ITEMS + ncpu - 1) / ncpu;
    wg_add(&wg2, ncpu);
    t0 = nanotime();
    for (int i = 0; i < ncpu; i++) {
        int b = i * size, e = b + size < ITEMS ? b + size : ITEMS;
        batches[i] = (struct batch){ items + b, items + (b < e ? e : b), &sum2, &wg2 };
        go(per_batch, &batches[i]);
    }
    wg_wait(&wg2);
    uint64_t t_batch = nanotime() - t0;

    printf("batching: %d items: one goroutine each %lu us, %d batches %lu us (%.1fx)\n", ITEMS,
           t_items / 1000, ncpu, t_batch / 1000, t_batch ? (double)t_items / (double)t_batch : 0.0);
    if (sum1 != want || sum2 != want) {
        printf("batching: FAIL: sums %lu and %lu, want %lu\n", sum1, sum2, want);
        return 1;
    }
    printf("batching: ok\n");
    return 0;
}
GORO_APP(demo_batching, "seeds: one goroutine per item vs one per core over a batch",
         batching_main);
