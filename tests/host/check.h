// SPDX-License-Identifier: MIT
// The host unit tests' harness: each test function prints one line,
// "PASS name" or "FAIL name: what (file:line)"; main returns non-zero when
// any failed. tests/run.py reads these lines.
#ifndef GORO_CHECK_H
#define GORO_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failed_total;
static int check_failed_now;
static const char *check_name;

#define CHECK(c)                                                                      \
    do {                                                                              \
        if (!(c) && !check_failed_now++)                                              \
            printf("FAIL %s: %s (%s:%d)\n", check_name, #c, __FILE__, __LINE__);      \
    } while (0)

#define CHECKF(c, ...)                                                                \
    do {                                                                              \
        if (!(c) && !check_failed_now++) {                                            \
            printf("FAIL %s: ", check_name);                                          \
            printf(__VA_ARGS__);                                                      \
            printf(" (%s:%d)\n", __FILE__, __LINE__);                                 \
        }                                                                             \
    } while (0)

#define RUN(fn)                                                                       \
    do {                                                                              \
        check_name = #fn;                                                             \
        check_failed_now = 0;                                                         \
        fn();                                                                         \
        if (check_failed_now)                                                         \
            check_failed_total++;                                                     \
        else                                                                          \
            printf("PASS %s\n", #fn);                                                 \
        fflush(stdout);                                                               \
    } while (0)

#define CHECK_DONE() (check_failed_total ? 1 : 0)

#endif
