// SPDX-License-Identifier: MIT
// The event trace (trace=1): what each core's scheduler did, kept in a
// per-core ring of the latest TRACE_RING events and printed when the
// machine stops (exit, panic, deadlock) as TRACE lines, which
// tools/trace/trace2json.py turns into a Chrome/Perfetto timeline. Off, each
// hook is one 5-byte NOP.
#ifndef GORO_TRACE_H
#define GORO_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/arch.h"

enum trace_ev {
    TR_GO_CREATE,       // g = the new G, arg = its parent (0: the kernel)
    TR_GO_START,        // g starts or resumes on this core; arg = its P
    TR_GO_YIELD,        // g gave up its core still runnable: gosched (recorded when
                        // the core starts its next G) or a blocking call's return
                        // that found no P
    TR_GO_PREEMPT,      // g was preempted; arg = PREEMPT_* reasons
    TR_GO_PARK,         // g parked; arg = its wait reason (a string)
    TR_GO_UNPARK,       // g was readied; arg = the G that readied it (0: g0 or an interrupt)
    TR_GO_END,          // g exited
    TR_STEAL,           // this P stole g Gs; arg = the victim P
    TR_IDLE,            // this core halts with no P (or waits for work)
    TR_WAKE,            // this core left its idle wait
    TR_PROC_START,      // this core took P arg (acquirep)
    TR_PROC_STOP,       // this core let P arg go
    TR_GOMAXPROCS,      // gomaxprocs is now arg
    TR_SYSCALL,         // g entered a blocking call (entersyscall)
    TR_SYSCALL_EXIT,    // g left it; arg = 1 when its P had been taken meanwhile
    TR_HANDOFF,         // sysmon took P arg from a G in a blocking call
    TR_TIMER,           // this core runs a timer's function; g = how late (TSC cycles), arg = the function
    TR_WAKE_IPI,        // this core sent a wake-up IPI to core arg
    TR_NEVENTS
};

// The rings exist: set once, by trace_init (at boot with trace=1, or by
// the shell's first "trace on"), with a release store.
extern bool trace_on;
extern struct static_key trace_key;

// Boot core, before arch_start_aps: turns every hook on (see static_branch.h).
void trace_enable(void);
// Once the cores are online: their rings. Hooks record nothing before.
void trace_init(uint32_t ncpu);
// From a goroutine, while every core runs (the shell's trace on|off): the
// hooks patched in (the rings made first, once) or out again, so that a
// trace off costs nothing. Returns how many sites changed, or -1 when
// there is no memory for the rings.
int trace_set_hooks(bool on);
struct g;
void trace_record(enum trace_ev ev, uint64_t g, uint64_t arg) __attribute__((cold));
// For the hot hooks: only the G is passed (already in a register), and
// trace.c reads the rest: GoCreate's parent, GoStart's P (this M's),
// GoPark's reason, GoUnpark's readier (this M's G; not for interrupt
// context, which uses trace_event).
void trace_record_g(enum trace_ev ev, struct g *gp) __attribute__((cold));
// As trace_record, for a hook that has the G and an argument of its own.
void trace_record_gp(enum trace_ev ev, struct g *gp, uint64_t arg) __attribute__((cold));
// Prints every core's ring, oldest first, merged by time. The machine must
// be stopped (no core records any more): exit, panic, checkdead.
void trace_dump(void);
// While the machine runs (the shell's trace command): recording on or off
// (the hooks stay patched; returns the previous state), and a dump of what
// was recorded since the last one, recording paused meanwhile. False when
// the trace is off (no trace=1 at boot) or another dump is running.
bool trace_set_recording(bool on);
bool trace_recording(void);
bool trace_dump_live(void);
// gp's run time in TSC cycles while the hooks were on, its current slice
// included when it runs now: for the shell's ps.
uint64_t trace_run_cycles(struct g *gp);

// The flight recorder (goro.h): prints the last ms milliseconds of every
// ring (0: all they hold) while the machine runs; from a G.
void trace_dump_recent(uint64_t ms);

// A macro, not an inline function: the arguments are evaluated only when
// the trace is on, and the record call sits in a cold block behind a
// patched NOP.
#define trace_event(ev, g, arg)                                                   \
    do {                                                                          \
        if (static_branch_unlikely(&trace_key))                                   \
            trace_record((ev), (g), (arg));                                       \
    } while (0)

#define trace_gp(ev, gp, arg)                                                     \
    do {                                                                          \
        if (static_branch_unlikely(&trace_key))                                   \
            trace_record_gp((ev), (gp), (arg));                                   \
    } while (0)

#define trace_g(ev, gp)                                                           \
    do {                                                                          \
        if (static_branch_unlikely(&trace_key))                                   \
            static_branch_call2(trace_record_g, (uint64_t)(ev), (gp));            \
    } while (0)

#endif
