// SPDX-License-Identifier: MIT
// What goro's network servers share (apps/httpd, apps/kvd): the accept
// loop of Go's net/http Server.Serve with a bound on the connections open
// at once, a goroutine per connection, writes that must be taken within a
// deadline, the one budget every connection's buffers are charged to, and
// the numbers of their arguments. Each server keeps its protocol and what
// its connections' goroutines do.
//
// Memory: goro's allocator never fails (running out is fatal), so what
// clients can make a server hold is bounded here instead: its buffers by
// the budget, its goroutines by max_conns.
#ifndef NETSERVE_NETSERVE_H
#define NETSERVE_NETSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netserve_sys.h"

struct netserve {
    // Set before netserve_listen; read-only after.
    const char *name;               // the server's, at the start of its log lines
    uint16_t port;
    uint64_t max_conns;             // open at once; one more is answered busy and closed
    const char *busy;               // that answer (the protocol's own), busy_len bytes
    size_t busy_len;
    uint64_t write_ns;              // each write must be taken within this; 0: no deadline
    uint64_t budget;                // bytes of buffer all connections may hold at once
    void (*serve)(void *c);         // a connection's goroutine (net_conn_t *); ends in netserve_done

    // Atomic, relaxed: statistics, and what the budget has charged.
    uint64_t accepted, open, refused;
    uint64_t buf_bytes;
};

// Listens on s->port ("name: listen on port N: why" printed on failure);
// 0 or the error.
int netserve_listen(struct netserve *s, net_listener_t **ln);
// Accepts until the listener fails: each connection runs s->serve in a
// goroutine of its own, or is answered s->busy and closed when max_conns
// are open. An error of a connection, or of memory, is waited out as Go's
// Server.Serve does (5 ms, doubling to 1 s); the listener's own ends the
// loop, returned.
int netserve_run(struct netserve *s, net_listener_t *ln);
// A connection's goroutine ends here: the connection closed and freed,
// and no longer counted open. Lock-free; any connection's goroutine, once.
void netserve_done(struct netserve *s, net_conn_t *c);

// Go's Conn.Write under a write deadline of s->write_ns from now: 0 once
// all n bytes are taken, else the error.
int netserve_write(const struct netserve *s, net_conn_t *c, const void *buf, size_t n);

// Charges n bytes of buffer (n < 0 gives them back); false, with nothing
// charged, when they would take the budget over. Lock-free; any goroutine.
bool netserve_charge(struct netserve *s, int64_t n);

// An argument's number: decimal with an optional unit, times the unit;
// false when malformed or over 64 bits. A duration's unit as Go writes it
// (us, ms, s, m, h; seconds without one), in nanoseconds; a size's k, m or
// g (KiB, MiB, GiB; bytes without one).
bool netserve_number(const char *s, bool duration, uint64_t *out);

#endif
