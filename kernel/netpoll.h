// SPDX-License-Identifier: MIT
// The network poller, after Go's runtime/netpoll.go: poll descriptors,
// the scheduler's poll, and the hooks the network stack registers. The
// protocol is in kernel/netpoll.c's essay; docs/net.md has the overview.
//
// The kernel knows nothing of the network stack: net/ registers its poll
// function here (netpoll_register) and calls netpoll_wake when it has work
// that nobody is doing; it keeps a poll descriptor in each socket and
// parks and readies goroutines only through the calls below.
#ifndef GORO_NETPOLL_H
#define GORO_NETPOLL_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/arch.h"
#include "kernel/timer.h"

struct g;

// Goroutines made ready by a poll, linked through the G (Go's gList).
// Whoever filled it hands it to the scheduler (netpoll_ready_list).
struct netpoll_list {
    struct g *head, *tail;
    uint32_t n;
};

// Go's pollDesc: a read and a write waiter, and their deadlines.
//
// rg and wg are each a binary semaphore (Go's states, by who moves them):
//   0         nothing: no readiness pending, nobody waiting
//   PD_READY  readiness pending: the poll (netpoll_ready) set it; a
//             waiter consumes it by moving it back to 0
//   PD_WAIT   a goroutine is about to park: it commits by moving it to
//             its G, or the poll (to PD_READY) or a deadline or close
//             (to 0) gets there first and it does not park
//   a G       parked: the poll (to PD_READY) or a deadline or close (to
//             0) takes it and readies it
// One waiter per mode at a time (Go's fdMutex guarantees it there; here
// the socket layer's per-direction lock does).
#define PD_READY ((uintptr_t)1)
#define PD_WAIT ((uintptr_t)2)

struct polldesc {
    // atomic, any core
    uintptr_t rg, wg;
    uint32_t info;              // POLL_INFO_*: closing and expired deadlines, for waiters that take no lock
    // lock held
    struct spinlock lock;
    bool closing;
    uint64_t rd, wd;            // deadlines (TSC): 0 none, PD_EXPIRED passed, PD_NEVER beyond the clock
    // dlock held (taken before lock): the timers follow rd and wd
    struct spinlock dlock;
    struct timer rt, wt;        // queued while rd, wd are in the future
};
#define PD_EXPIRED UINT64_MAX
#define PD_NEVER (UINT64_MAX - 1)

enum { NETPOLL_READ = 'r', NETPOLL_WRITE = 'w' };      // Go's modes
enum {
    NETPOLL_OK = 0,
    NETPOLL_ERR_CLOSING = 1,    // the descriptor is closed
    NETPOLL_ERR_TIMEOUT = 2,    // its deadline has passed
};

// ---- poll descriptors (a goroutine, unless said otherwise) ----------------

// Go's pollOpen: pd ready for a new socket (its memory need not be zeroed).
void netpoll_open(struct polldesc *pd);
// Go's pollReset: NETPOLL_OK, or why the mode cannot be waited on, before
// an attempt at I/O; clears a stale readiness.
int netpoll_reset(struct polldesc *pd, int mode);
// Go's pollWait: parks until pd is ready for mode, closed, or past its
// deadline for mode. NETPOLL_OK means "try the I/O again".
int netpoll_wait(struct polldesc *pd, int mode);
// Go's pollSetDeadline: deadline is a nanotime() value, 0 for none; one
// not in the future expires at once, waking a waiter of that mode. mode is
// NETPOLL_READ, NETPOLL_WRITE or their sum (both).
void netpoll_set_deadline(struct polldesc *pd, uint64_t deadline, int mode);
// Go's pollUnblock: closing, for good; every waiter wakes with
// NETPOLL_ERR_CLOSING, and so does every later wait.
void netpoll_unblock(struct polldesc *pd);
// Go's pollClose: after netpoll_unblock, once no goroutine can be waiting
// on pd; its timers are stopped, and pd's memory may go.
void netpoll_close(struct polldesc *pd);

// ---- the network stack's side --------------------------------------------

// The stack's poll. Any context (a goroutine, g0 with or without a P, an
// interrupt handler: sysmon's look), never waits: does the work that is
// pending, appending to ready the goroutines it made ready
// (netpoll_ready). Returns false when it could not start (the work is
// someone else's already, who will do it).
typedef bool (*netpoll_fn)(struct netpoll_list *ready);
// From a goroutine, once per poller (at most 4: the stack, and a test's).
// Every poll calls every poller; each returns at once when it has nothing.
void netpoll_register(netpoll_fn poll);
// Any context, interrupt handlers included: the stack has work nobody is
// doing (a device's frames). An M polls soon: an idle one is started for
// it (wakep); with every P busy, one whose G stops, or sysmon.
void netpoll_wake(void);
// Go's netpollready, called by the stack during its poll (and, with any
// list of its own, outside one): pd is ready for mode (or both); its
// waiter, if any, is appended to ready.
void netpoll_ready(struct netpoll_list *ready, struct polldesc *pd, int mode);
// Go's netpollcheckerr, for a caller that does not wait: NETPOLL_OK, or
// why a wait for mode would fail at once. Any core.
int netpoll_check(const struct polldesc *pd, int mode);
// Moves every G of src to the end of dst.
void netpoll_list_move(struct netpoll_list *dst, struct netpoll_list *src);
// Makes the listed goroutines runnable. A goroutine or g0 with a P: on
// this P (the first in runnext when next); anything else: as sysmon does
// (injectglist). Empties the list.
void netpoll_ready_list(struct netpoll_list *l, bool next);

// ---- device interrupts (kernel/irqwait.c) ---------------------------------
//
// A G waiting for a device vector (irq_wait) is the netpoller's too: its
// interrupt hands it here and the poll makes it runnable, as it does a G
// on a descriptor, so interrupts ready goroutines one way only.

// g0, committing the park of a G that only an interrupt will hand here:
// counted as a waiter (Go's netpollWaiters, and sched.nexternal) before
// its record is visible to the handler, so the poll's uncount never comes
// first. netpoll_waiter_cancel undoes it when the park is called off.
void netpoll_waiter_add(void);
void netpoll_waiter_cancel(void);
// Interrupt context (or any): gp, G_WAITING and counted, is ready. It
// joins the next poll's results, oldest handed first and ahead of the
// stack's; the caller then calls netpoll_wake once for the lot.
void netpoll_ready_irq(struct g *gp);

// ---- the scheduler's side (kernel/proc.c, kernel/preempt.c, sysmon.c) -------

struct p;
// Any core: interrupts or the stack left work no one has taken (a hint).
bool netpoll_pending(void);
// find_runnable, holding pp: polls without waiting; returns a G to run
// (the rest injected: onto idle Ps, then pp's queue), or NULL.
struct g *netpoll_find(struct p *pp);
// The owner of pp, on g0 (a time slice that ended): polls and injects
// every G it finds, as netpoll_find does the rest. Returns whether it did.
bool netpoll_inject(struct p *pp);
// sysmon's look (core 0's timer interrupt): polls when work has waited
// through a whole look, or nobody has polled for 10 ms, and injects
// what it finds (onto idle Ps, waking them; the rest to the global queue).
// Returns whether it readied anything.
bool netpoll_sysmon(uint64_t now);
// Gs parked on the netpoller, on descriptors and device vectors (Go's
// netpollWaiters), a snapshot.
uint32_t netpoll_waiters(void);
// Times sysmon's look polled and injected Gs itself (tests read it).
uint64_t netpoll_sysmon_polls(void);

#endif
