// SPDX-License-Identifier: MIT
// What goro's network servers (apps/httpd, apps/kvd, and apps/netserve
// under them) take from the system: goro.h's Go net in C, its clock,
// goroutines and the free memory. goro's in the kernel; under the host
// tests (GORO_HOST_TEST) the same names declared here, the network, the
// clock and go() supplied by the test (tests/host/fakenet.h): connections
// whose bytes, stalls and closes it scripts, on a clock it advances.
#ifndef NETSERVE_NETSERVE_SYS_H
#define NETSERVE_NETSERVE_SYS_H

#ifdef GORO_HOST_TEST
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// goro.h's net API as declared there: the same names, error values and
// meanings.
typedef struct net_listener net_listener_t;
typedef struct net_conn net_conn_t;
struct net_addr {
    uint8_t ip[4];
    uint16_t port;
};
size_t net_addr_string(const struct net_addr *a, char *buf, size_t cap);
struct net_addr listener_addr(net_listener_t *l);
struct net_addr conn_remote_addr(net_conn_t *c);
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
int conn_close_write(net_conn_t *c);
void conn_free(net_conn_t *c);
int conn_set_read_deadline(net_conn_t *c, uint64_t t);
int conn_set_write_deadline(net_conn_t *c, uint64_t t);

uint64_t nanotime(void);
int64_t walltime_ns(void);
void sleep_ns(uint64_t ns);
uint64_t go(void (*fn)(void *), void *arg);
int gomaxprocs(int n);
uint64_t page_free_count(void);

// The app's entry point, callable by the test.
#define GORO_APP(name_, help_, main_fn_) int name_##_app_main(int argc, char **argv) { return main_fn_(argc, argv); }
#else
#include "goro.h"
#endif

#endif
