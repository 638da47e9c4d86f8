// SPDX-License-Identifier: MIT
// The scheduler's metrics (metrics=1), after Go's runtime/metrics. They
// ride on the event trace's hooks (kernel/trace.h): metrics=1 patches
// those hooks on as trace=1 does, and trace_record hands each event here,
// so the metrics add no hook of their own and cost nothing when off.
#ifndef GORO_METRICS_H
#define GORO_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/trace.h"

// Read-only once metrics_init has run.
extern bool metrics_on;

struct g;
// Once the cores are online, before the scheduler starts.
void metrics_init(uint32_t ncpu);
// From trace_record, on the recording core with interrupts off. gp is the
// G the event is about when the hook knew it (NULL otherwise).
void metrics_event(enum trace_ev ev, struct g *gp, uint64_t g, uint64_t arg, uint64_t now);
// Prints every metric as METRIC lines (tools/trace/metrics.py reads them), once,
// as the machine stops.
void metrics_print(void);
// The same now, from a goroutine (the shell's `metrics`); false when the
// machine booted without metrics=1.
bool metrics_print_live(void);

#endif
