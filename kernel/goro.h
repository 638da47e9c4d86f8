// SPDX-License-Identifier: MIT
// goro's public API: the one header an application includes.
// Go's names, C spelling. See DESIGN.md for the contracts.
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
};
#define SCHED_STATS_MAXP 64
struct sched_stats {
    int gomaxprocs;
    int ncpu;
    struct sched_pstats total;
    struct sched_pstats p[SCHED_STATS_MAXP];
};
void sched_stats(struct sched_stats *s);

// ---- machine ---------------------------------------------------------------

int num_cpu(void);
int core_id(void);
uint64_t nanotime(void);
uint64_t cputicks(void);                 // the TSC

#endif
