// SPDX-License-Identifier: MIT
// In-kernel tests: KTEST(name) { ... } registers a test in .ktest; app=ktest
// runs them (filter=SUBSTR picks some) and prints one line each:
//   TEST PASS name | TEST FAIL name: message | TEST SKIP name: reason
// then "ktest: N passed, N failed". A test fails through KT_ASSERT /
// KT_FAIL, which record the first failure and return from the test.
#ifndef GORO_KTEST_H
#define GORO_KTEST_H

#include <stdbool.h>
#include "kernel/goro.h"

struct ktest {
    const char *name;
    void (*fn)(void);
    const char *file;
};

#define KTEST(name_)                                                              \
    static void ktest_fn_##name_(void);                                           \
    static const struct ktest ktest_##name_                                       \
        __attribute__((used, section(".ktest"), aligned(8))) = {                  \
            #name_, ktest_fn_##name_, __FILE__                                    \
        };                                                                        \
    static void ktest_fn_##name_(void)

void ktest_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ktest_skip(const char *reason);
bool ktest_failed(void);

#define KT_FAIL(...) do { ktest_fail(__FILE__, __LINE__, __VA_ARGS__); return; } while (0)
#define KT_ASSERT(c) do { if (!(c)) KT_FAIL("%s", #c); } while (0)
#define KT_ASSERT_EQ(a, b)                                                        \
    do {                                                                          \
        long long a_ = (long long)(a), b_ = (long long)(b);                       \
        if (a_ != b_) KT_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);          \
    } while (0)
#define KT_SKIP(reason) do { ktest_skip(reason); return; } while (0)

int ktest_run_all(const char *filter);

// What the tests share: counters touched from many goroutines, and waiting
// for one (yielding) until it reaches a target or timeout_ms pass. Stores
// are release and loads acquire, so a test that sees a count also sees what
// the goroutines wrote before counting; adds are both.
static inline uint64_t kt_load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }  // acquire: pairs with kt_store, kt_add
static inline void kt_store(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }  // release: pairs with kt_load
static inline void kt_add(uint64_t *p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }  // acq_rel: both
bool kt_wait_count(const uint64_t *counter, uint64_t target, uint64_t timeout_ms);

// hostcpus=N from app=ktest's arguments: the host's core count when goro
// runs in a VM (0 = unknown: assume vCPUs are real cores). Wall-clock
// bounds hold only while vCPUs do not outnumber host cores.
extern int ktest_host_cpus;
bool ktest_cores_are_real(void);

#endif
