// SPDX-License-Identifier: MIT
// What kvd's table takes from the system: a lock that may be held across
// an allocation, memory from a chosen NUMA node, and the node count;
// goro's in the kernel, under the host tests and the fuzzer
// (GORO_HOST_TEST) pthreads and libc's malloc. The server's network,
// clock and goroutines are every server's (apps/netserve/netserve_sys.h).
#ifndef KVD_KV_SYS_H
#define KVD_KV_SYS_H

#include <stddef.h>

#ifdef GORO_HOST_TEST
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef pthread_mutex_t kv_lock_t;
static inline void kv_lock_init(kv_lock_t *l) { pthread_mutex_init(l, NULL); }
static inline void kv_lock(kv_lock_t *l) { pthread_mutex_lock(l); }
static inline void kv_unlock(kv_lock_t *l) { pthread_mutex_unlock(l); }
// The host has one node; tests set kv_host_nodes to see shards spread.
extern int kv_host_nodes;
static inline int kv_nodes(void) { return kv_host_nodes; }
static inline void *kv_alloc(size_t n, int node) { (void)node; return malloc(n); }
static inline void *kv_zalloc(size_t n, int node) { (void)node; return calloc(1, n); }
static inline size_t kv_usable(void *p) { return malloc_usable_size(p); }
static inline void *kv_realloc(void *p, size_t n) { return realloc(p, n); }
static inline void kv_free(void *p) { free(p); }

static inline int numa_nodes(void) { return kv_host_nodes; }
#else
#include "goro.h"

// goro's mutex (Go's sync.Mutex): a waiter parks, so a holder preempted
// or allocating costs the others no spinning.
typedef mutex_t kv_lock_t;
static inline void kv_lock_init(kv_lock_t *l) { *l = (mutex_t){ 0 }; }
static inline void kv_lock(kv_lock_t *l) { mutex_lock(l); }
static inline void kv_unlock(kv_lock_t *l) { mutex_unlock(l); }
static inline int kv_nodes(void) { return numa_nodes(); }
static inline void *kv_alloc(size_t n, int node) { return malloc_node(n, node); }
static inline void *kv_zalloc(size_t n, int node)
{
    void *p = malloc_node(n, node);
    memset(p, 0, n);
    return p;
}
static inline size_t kv_usable(void *p) { return malloc_usable_size(p); }
static inline void *kv_realloc(void *p, size_t n) { return realloc(p, n); }
static inline void kv_free(void *p) { free(p); }
#endif

#endif
