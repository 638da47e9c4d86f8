// SPDX-License-Identifier: MIT
// app=cpuburn [ms=N] [workers=N] [live=HZ]: N workers (default one per core) each
// spend ms milliseconds (default 500) of wall time computing, about nine
// tenths in cpuburn_hot and one tenth in cpuburn_warm, while main waits.
// The profiler's test workload: a known hottest function, and a known
// amount of busy core time (about workers x ms; printed as busy_us, the
// time each worker actually computed, summed). live=HZ profiles the burn
// from code: profile_start(HZ) before, profile_stop() after.
#include "goro.h"

static uint64_t burn_end;
static waitgroup_t burn_wg;
static uint64_t burn_sink;
static uint64_t burn_busy_ns;       // the workers' time computing, summed

__attribute__((noinline)) static uint64_t cpuburn_hot(uint64_t x)
{
    for (int i = 0; i < 9000; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) static uint64_t cpuburn_warm(uint64_t x)
{
    for (int i = 0; i < 1000; i++)
        x ^= (x << 13) ^ (x >> 7);
    return x;
}

static void cpuburn_worker(void *arg)
{
    uint64_t x = (uint64_t)arg + 1, t0 = nanotime(), t;
    while ((t = nanotime()) < burn_end)
        x = cpuburn_warm(cpuburn_hot(x));
    __atomic_fetch_add(&burn_sink, x, __ATOMIC_RELAXED);
    __atomic_fetch_add(&burn_busy_ns, t - t0, __ATOMIC_RELAXED);
    wg_done(&burn_wg);
}

static long arg_value(int argc, char **argv, const char *key, long dflt)
{
    size_t n = strlen(key);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
        {
            long v = 0;
            for (const char *d = argv[i] + n + 1; *d; d++) {
                if (*d < '0' || *d > '9' || v > 100000000)
                    return -1;
                v = v * 10 + (*d - '0');
            }
            return v;
        }
    return dflt;
}

static int cpuburn_main(int argc, char **argv)
{
    long ms = arg_value(argc, argv, "ms", 500);
    long workers = arg_value(argc, argv, "workers", num_cpu());
    if (ms < 1 || workers < 1) {
        printf("cpuburn: usage: cpuburn [ms=N] [workers=N]\n");
        return 1;
    }
    bool live = arg_value(argc, argv, "live", 0) > 0;
    if (live && !profile_start((int)arg_value(argc, argv, "live", 0))) {
        printf("cpuburn: profile_start failed\n");
        return 1;
    }
    uint64_t t0 = nanotime();
    burn_end = t0 + (uint64_t)ms * 1000000;
    wg_add(&burn_wg, (int)workers);
    for (long i = 0; i < workers; i++)
        go(cpuburn_worker, (void *)i);
    wg_wait(&burn_wg);
    printf("cpuburn: %ld workers for %ld ms, done in %lu us, busy_us=%lu\n", workers, ms,
           (nanotime() - t0) / 1000, __atomic_load_n(&burn_busy_ns, __ATOMIC_RELAXED) / 1000);
    if (live)
        profile_stop();
    return 0;
}
GORO_APP(cpuburn,
         "N workers computing for ms milliseconds (the profiler's workload: ms= workers= live=HZ)",
         cpuburn_main);
