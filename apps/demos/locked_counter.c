// SPDX-License-Identifier: MIT
// The seeds' lock-granularity example: a counter per key behind one mutex
// (coarse) against 256 buckets with a mutex each, chosen by the key's
// first byte (fine). Goroutines on every core increment random keys.
// Checks: every increment counted in both; prints both times.
#include "goro.h"

#define KEYS 1024               // key k's first byte is k % 256
#define WORKERS 8
#define PER_WORKER 20000

struct coarse {
    mutex_t mu;
    uint32_t count[KEYS];       // mu held
};

struct bucket {
    mutex_t mu;
    uint32_t count[KEYS / 256]; // mu held: the keys with this first byte
} __attribute__((aligned(64)));

struct fine {
    struct bucket b[256];
};

static struct coarse coarse;
static struct fine fine;

static void coarse_inc(uint32_t key)
{
    mutex_lock(&coarse.mu);
    coarse.count[key]++;
    mutex_unlock(&coarse.mu);
}

static void fine_inc(uint32_t key)
{
    struct bucket *b = &fine.b[key % 256];
    mutex_lock(&b->mu);
    b->count[key / 256]++;
    mutex_unlock(&b->mu);
}

struct run {
    void (*inc)(uint32_t);
    waitgroup_t wg;
};

static void worker(void *arg)
{
    struct run *r = arg;
    uint32_t x = (uint32_t)goid() * 2654435761u | 1;
    for (int i = 0; i < PER_WORKER; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        r->inc(x % KEYS);
    }
    wg_done(&r->wg);
}

static uint64_t timed(void (*inc)(uint32_t))
{
    static struct run r;
    r.inc = inc;
    wg_add(&r.wg, WORKERS);
    uint64_t t0 = nanotime();
    for (int w = 0; w < WORKERS; w++)
        go(worker, &r);
    wg_wait(&r.wg);
    return nanotime() - t0;
}

static int locked_counter_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    memset(&coarse, 0, sizeof coarse);      // counts from an earlier run (the shell's)
    memset(&fine, 0, sizeof fine);
    uint64_t tc = timed(coarse_inc);
    uint64_t tf = timed(fine_inc);
    uint64_t sc = 0, sf = 0;
    for (int k = 0; k < KEYS; k++) {
        sc += coarse.count[k];
        sf += fine.b[k % 256].count[k / 256];
    }
    printf("locked_counter: %d increments on %d cores: one mutex %lu us, 256 mutexes %lu us\n",
           WORKERS * PER_WORKER, num_cpu(), tc / 1000, tf / 1000);
    if (sc != WORKERS * PER_WORKER || sf != WORKERS * PER_WORKER) {
        printf("locked_counter: FAIL: counted %lu and %lu of %d\n", sc, sf, WORKERS * PER_WORKER);
        return 1;
    }
    printf("locked_counter: ok\n");
    return 0;
}
GORO_APP(demo_locked_counter, "seeds: coarse vs fine-grained mutexes around counters",
         locked_counter_main);
