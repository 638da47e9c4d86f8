// SPDX-License-Identifier: MIT
// What httpd takes from the system beyond what every server does
// (apps/netserve/netserve_sys.h): a mutex and the scheduler's counters,
// goro.h's in the kernel; under the host tests (GORO_HOST_TEST) a pthread
// mutex, and the counters the test supplies (tests/host/test_httpd.c).
#ifndef HTTPD_HTTPD_SYS_H
#define HTTPD_HTTPD_SYS_H

#include "apps/netserve/netserve_sys.h"

#ifdef GORO_HOST_TEST
#include <pthread.h>

int num_goroutine(void);

typedef pthread_mutex_t mutex_t;
static inline void mutex_lock(mutex_t *m) { pthread_mutex_lock(m); }
static inline void mutex_unlock(mutex_t *m) { pthread_mutex_unlock(m); }

struct sched_stats {
    int gomaxprocs;
    struct {
        uint64_t runs, steals, preemptions, halts;
    } total;
};
void sched_stats(struct sched_stats *s);
#endif

#endif
