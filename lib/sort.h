// SPDX-License-Identifier: MIT
// Sorting small arrays of samples (benchmarks and tests: a few hundred
// values at most), in place, ascending.
#ifndef GORO_SORT_H
#define GORO_SORT_H
#include <stdint.h>

static inline void sort_u64(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

#endif
