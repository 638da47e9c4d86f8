// SPDX-License-Identifier: MIT
// Host tests of malloc's size classes (kernel/sizeclass.h), the twin of
// that file: size_class() computes the class from the table's shape, and
// must agree with a search of class_size[], the table of record, for every
// size a small block can have.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "check.h"
#include "kernel/sizeclass.h"

// The first class >= size by binary search of the table (size 0: class 1).
static uint32_t size_class_search(size_t size)
{
    uint32_t lo = 1, hi = NCLASS - 1;
    if (size == 0)
        return 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (class_size[mid] >= size)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// Every size 0..SIZECLASS_MAX: the formula gives the search's class.
static void test_formula_matches_the_table(void)
{
    for (size_t size = 0; size <= SIZECLASS_MAX; size++) {
        uint32_t want = size_class_search(size), got = size_class(size);
        CHECKF(got == want, "size %zu: class %u (%u bytes), the table's %u (%u bytes)", size, got,
               got < NCLASS ? class_size[got] : 0, want, class_size[want]);
    }
}

// The search itself: the class is the smallest that holds size, so the
// reference cannot agree with a wrong formula by sharing its mistake.
static void test_class_is_the_smallest_that_holds(void)
{
    for (size_t size = 0; size <= SIZECLASS_MAX; size++) {
        uint32_t c = size_class(size);
        CHECKF(c >= 1 && c < NCLASS, "size %zu: class %u", size, c);
        if (c < 1 || c >= NCLASS)
            return;
        CHECKF(class_size[c] >= size, "size %zu: class %u holds %u", size, c, class_size[c]);
        CHECKF(c == 1 || class_size[c - 1] < size, "size %zu: class %u, but %u holds it", size, c, c - 1);
    }
}

// The table: increasing, multiples of 16 (malloc's alignment), the last
// class SIZECLASS_MAX, and each class at most a quarter larger than the
// one below it above the 16-byte steps.
static void test_table_shape(void)
{
    CHECK(class_size[0] == 0);
    CHECK(class_size[NCLASS - 1] == SIZECLASS_MAX);
    CHECK(class_size[8] == SIZECLASS_STEP_MAX);
    for (uint32_t c = 1; c < NCLASS; c++) {
        CHECKF(class_size[c] > class_size[c - 1], "class %u: %u after %u", c, class_size[c], class_size[c - 1]);
        CHECKF(class_size[c] % 16 == 0, "class %u: %u bytes", c, class_size[c]);
        CHECKF(c <= 8 || 4 * class_size[c] <= 5 * class_size[c - 1], "class %u: %u after %u", c,
               class_size[c], class_size[c - 1]);
    }
}

int main(void)
{
    RUN(test_table_shape);
    RUN(test_class_is_the_smallest_that_holds);
    RUN(test_formula_matches_the_table);
    return CHECK_DONE();
}
