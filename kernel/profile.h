// SPDX-License-Identifier: MIT
// The sampling CPU profiler (profile=HZ): each core's one-shot timer also
// fires HZ times a second; each firing records where the core was (the
// interrupted instruction and a frame-pointer walk of its stack), what it
// was running (a goroutine, g0, an interrupt or the idle wait) and the
// goroutine's id, into the core's own buffer. The samples are printed as
// PROFILE lines when profiling stops (profile_stop, or the machine's exit);
// tools/trace/profile2pprof.py turns them into a pprof profile and folded stacks.
// Off, the hooks are NOPs (static branches, as the event trace's).
#ifndef GORO_PROFILE_H
#define GORO_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/arch.h"

extern struct static_key profile_key;

struct m;

// Boot core, before arch_start_aps: patches the hooks.
void profile_enable(void);
// Once the cores are online: their buffers, and sampling starts at hz.
void profile_init(uint32_t ncpu, uint32_t hz);
// The timer interrupt, on mp's core: takes a sample when one is due.
void profile_tick(struct m *mp, uint64_t now) __attribute__((cold));
// The deadline the core's timer must fire by: d, or the next sample if
// that comes first (0 = none). On mp's core, interrupts off.
uint64_t profile_deadline(struct m *mp, uint64_t d) __attribute__((cold));
// Prints the samples taken since sampling started. The machine must be
// stopped (exit, panic) or sampling stopped (profile_stop).
void profile_dump(void);

// The hooks in kernel/preempt.c.
#define profile_hook_tick(mp, now)                                               \
    do {                                                                         \
        if (static_branch_unlikely(&profile_key))                                \
            profile_tick((mp), (now));                                           \
    } while (0)

#define profile_hook_deadline(mp, d)                                             \
    do {                                                                         \
        if (static_branch_unlikely(&profile_key))                                \
            (d) = profile_deadline((mp), (d));                                   \
    } while (0)

#endif
