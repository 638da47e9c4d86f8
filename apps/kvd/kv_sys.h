// SPDX-License-Identifier: MIT
// What kvd takes from the system. The table: a lock that may be held
// across an allocation, memory from a chosen NUMA node, and the node
// count. The server (kvd.c): goro.h's Go net in C, its clock and
// goroutines. goro's in the kernel; under the host tests and the fuzzer
// (GORO_HOST_TEST) pthreads and libc's malloc, and the network, clock and
// go() the test supplies (tests/host/fakenet.h).
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

// goro.h's net API as declared there: the same names and meanings.
typedef struct net_listener net_listener_t;
typedef struct net_conn net_conn_t;
enum {
    NET_EOF = -1,
    NET_ETIMEOUT = -2,
    NET_ECLOSED = -3,
    NET_ECONNRESET = -5,
    NET_EPIPE = -6,
};
const char *net_error(long err);
int net_listen(const char *network, const char *address, net_listener_t **l);
int listener_accept(net_listener_t *l, net_conn_t **c);
long conn_read(net_conn_t *c, void *buf, size_t n);
long conn_write(net_conn_t *c, const void *buf, size_t n);
int conn_close(net_conn_t *c);
void conn_free(net_conn_t *c);
int conn_set_read_deadline(net_conn_t *c, uint64_t t);
int conn_set_write_deadline(net_conn_t *c, uint64_t t);
uint64_t nanotime(void);
void sleep_ns(uint64_t ns);
uint64_t go(void (*fn)(void *), void *arg);
int gomaxprocs(int n);
uint64_t page_free_count(void);
static inline int numa_nodes(void) { return kv_host_nodes; }

// The app's entry point, callable by the test.
#define GORO_APP(name_, help_, main_fn_) int name_##_app_main(int argc, char **argv) { return main_fn_(argc, argv); }
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
