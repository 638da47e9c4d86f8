// SPDX-License-Identifier: MIT
// The boot timeline (kernel/boot_timeline.c): each phase's start in
// microseconds from kernel entry, printed when the main goroutine starts.
#ifndef GORO_BOOT_TIMELINE_H
#define GORO_BOOT_TIMELINE_H

#include <stdbool.h>

// One line of every phase; per_core adds one line per core's online moment.
void boot_timeline_print(bool per_core);

#endif
