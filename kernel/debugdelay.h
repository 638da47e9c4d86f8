// SPDX-License-Identifier: MIT
// Delay points: debug builds (make DEBUG=1) can widen a named race window
// of a few instructions into microseconds, so that a test hits it every
// time instead of once in a million runs. Each point is a DEBUG_DELAY(name)
// at the window; in normal builds it compiles to nothing. A window is
// widened by delay=NAME:US on the command line or by debug_delay_set from a
// test (tests/kernel/test_sched_races.c says which test widens which).
// The wait is a spin on the TSC with interrupts as the caller has them, so
// an interrupt may land inside the window, which is often the point; before
// the TSC's rate is known a microsecond counts 1,000 cycles (1 GHz, the
// least a TSC here runs at: at most the microseconds asked). A point in
// arch/ is one too (tools/check/check_layers.py allows this header there),
// and the loader's delay= words are armed before the APs' start
// (debug_delay_early), whose windows come before the parse.
#ifndef GORO_DEBUGDELAY_H
#define GORO_DEBUGDELAY_H

#include <stdbool.h>
#include <stdint.h>

// X(name, where): every delay point, in one list for the enum and the
// command line's names.
#define DEBUG_DELAY_POINTS(X)                                                        \
    X(exitsyscall_retaken, "exitsyscall, P retaken: after the M gave its P up, "  \
                           "before the switch to g0")                              \
    X(exitsyscall_leaving, "exitsyscall: the G has left the call and holds "      \
                           "no P yet")                                              \
    X(core_leave_idle, "core_leave_idle: after choosing the idle M that takes "   \
                       "over the timer watch, before waking it")                   \
    X(timers_run_taken, "timers_run: a due timer taken (a periodic one "          \
                        "rescheduled in its heap), before the lock is let go")     \
    X(ap_mstart, "ap_main: the scheduler has started, before the AP's M "       \
                 "joins the idle list (main's first go() finds none)")            \
    X(smp_evict_leave, "arch/smp.c's wait_for_go: an AP told to leave its slot "  \
                       "(EVICT), before it moves the slot to FREE")                \
    X(spinner_look, "find_runnable: a spinning M before it steals; one core at a " \
                    "time (DEBUG_DELAY_ONE), never core 0 (sysmon's)")

enum debug_delay_point {
#define DEBUG_DELAY_ENUM(name, where) DELAY_##name,
    DEBUG_DELAY_POINTS(DEBUG_DELAY_ENUM)
#undef DEBUG_DELAY_ENUM
    DELAY_COUNT
};

#ifdef GORO_DEBUG
// Microseconds each window is widened by; 0 = not widened (atomic, relaxed:
// a test sets them before it starts the goroutines that race).
extern uint32_t debug_delay_us[DELAY_COUNT];
void debug_delay_spin(uint32_t us);
#define DEBUG_DELAY(name)                                                            \
    do {                                                                             \
        /* relaxed: set before the racing goroutines start (above) */                \
        uint32_t us_ = __atomic_load_n(&debug_delay_us[DELAY_##name], __ATOMIC_RELAXED); \
        if (__builtin_expect(us_ != 0, 0))                                           \
            debug_delay_spin(us_);                                                   \
    } while (0)
// The same, for one core at a time: the first to come waits, the others
// pass while it does. Its wait also ends when the window is closed
// (debug_delay_set(name, 0)), so a test can hold a core there for as long
// as it needs and no longer.
void debug_delay_spin_one(enum debug_delay_point point, uint32_t us);
#define DEBUG_DELAY_ONE(name)                                                        \
    do {                                                                             \
        /* relaxed: as DEBUG_DELAY's */                                              \
        uint32_t us_ = __atomic_load_n(&debug_delay_us[DELAY_##name], __ATOMIC_RELAXED); \
        if (__builtin_expect(us_ != 0, 0))                                           \
            debug_delay_spin_one(DELAY_##name, us_);                                 \
    } while (0)
#else
#define DEBUG_DELAY(name) ((void)0)
#define DEBUG_DELAY_ONE(name) ((void)0)
#endif

// Each point's core waiting in DEBUG_DELAY_ONE, + 1; 0 for none (atomic,
// relaxed: a state, with no data behind it). Always 0 in normal builds.
extern uint32_t debug_delay_holder[DELAY_COUNT];

// Widens window name by us microseconds (0 closes it again). False when
// this is not a debug build or no point has that name.
bool debug_delay_set(const char *name, uint32_t us);
// Boot: applies the command line's delay= (a warning for each name that
// is not a point, or for any delay= in a normal build).
void debug_delay_init(void);
// Boot core, before the APs' start (debug builds): the delay= words of
// line, the loader's, widened silently (debug_delay_init names them).
void debug_delay_early(const char *line);

#endif
