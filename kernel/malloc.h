// SPDX-License-Identifier: MIT
// malloc's counters (kernel/malloc.c), for the shell and, later, metrics.
// malloc, free and friends are declared in goro.h.
#ifndef GORO_MALLOC_H
#define GORO_MALLOC_H

#include <stdint.h>

#define MALLOC_STATS_CLASSES 48

struct malloc_class_stats {
    uint32_t size;                  // block size; 0 for class 0, the large blocks
    uint64_t mallocs, frees;        // blocks handed out and given back since boot
};

// A snapshot: each core's counters are read without stopping it, so the
// sums may be a few operations apart.
struct malloc_stats {
    uint32_t nclass;                // cls[0] large blocks, cls[1..nclass-1] the size classes
    struct malloc_class_stats cls[MALLOC_STATS_CLASSES];
    uint64_t large_bytes;           // in large blocks now
    uint64_t blocks_in_use;         // every class
    uint64_t bytes_in_use;          // block sizes, not what was asked for
};
void malloc_stats(struct malloc_stats *s);
// Boot core, once the cores are known (arch_ncpu) and before any other
// runs malloc: a cache for each (until then the boot core's only).
void malloc_init_cores(uint32_t ncpu);

#endif
