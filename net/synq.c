// SPDX-License-Identifier: MIT
// A listener's half-open connections, oldest first, at most SYNQ_MAX.
//
// lwIP's own backlog (TCP_LISTEN_BACKLOG) counts half-open connections in
// a u8_t, so it stops at 255, and it drops a SYN that finds it full. Both
// hurt real clients: a burst of connects (wrk opening its connections, a
// client fleet reconnecting) keeps as many handshakes half-open here as
// there are ACKs waiting in the receive ring and the tap's queue, which
// under TCG is hundreds, so the 256th SYN of a burst either waited a
// second for its retransmission or (with the oldest ended, below) cost a
// connection whose ACK was already on its way, which lwIP's listener then
// reset. So lwIP's backlog is off and this file keeps the count, through
// lwIP's per-pcb extension arguments (LWIP_TCP_PCB_NUM_EXT_ARGS): the
// listener's passive_open callback sees each half-open connection made,
// on_accept (net/conn.c) each one that completes, and each one's destroy
// callback the ones lwIP frees first (a reset, its SYN_RCVD timeout).
//
// A SYN that finds SYNQ_MAX half-open is answered by its SYN cookie
// alone, as Linux answers one that finds its queue full (tcp_syncookies,
// its default): lwIP's SYN-ACK goes out, its sequence number the cookie,
// and no pcb is kept; the client's ACK makes the connection
// (net/syncookie.c), even while the queue stays full. A flood of spoofed
// SYNs therefore costs a SYN-ACK each and never shuts the listener:
// dropping that SYN would shut it for lwIP's SYN_RCVD timeout, 20 s,
// until the flood's half-open connections end, and ending the oldest
// instead (BSD's SYN cache's rule) would keep making half-open ones, each
// retransmitting its SYN-ACK. A real handshake lwIP ends half-open (that
// timeout, when every ACK of it was lost in a burst) is not lost either:
// its peer's next segment makes it again from the cookie.
//
// The queue is a doubly linked list, so a completion is O(1).
#include "net/synq.h"
#include "net/netmem.h"
#include "net/syncookie.h"
#include "net/stack.h"
#include "lib/panic.h"
#include <lwip/priv/tcp_priv.h>
#include <lwip/sys.h>
#include <lwip/tcp.h>

struct entry {
    struct entry *prev, *next;      // the queue's ring, the queue itself as sentinel
    struct tcp_pcb *pcb;
    struct synq *q;                 // NULL once the listener is gone
};

struct synq {
    struct entry ring;              // sentinel: ring.next the oldest
    unsigned n;
    bool (*accept_full)(void *arg);
    void *arg;
};

// stack lock held
static int ext_id = -1;
static struct synq_counts counts;
static bool unheld_any, cookie_any;
static uint32_t unheld_at;          // sys_now() of the latest handshake no pcb holds (synq_unheld_within)
static uint32_t cookie_at;          // sys_now() of the latest SYN answered by its cookie alone

static void unlink_entry(struct entry *e)
{
    if (e->q) {
        e->prev->next = e->next;
        e->next->prev = e->prev;
        e->q->n--;
        e->q = 0;
    }
}

// A half-open pcb freed by lwIP.
static void entry_destroyed(u8_t id, void *data)
{
    (void)id;
    struct entry *e = data;
    unlink_entry(e);
    netmem_free(e);
    unheld_any = true;
    unheld_at = sys_now();
}

static const struct tcp_ext_arg_callbacks entry_callbacks = {.destroy = entry_destroyed};
// An established connection's: nothing (lwIP takes no NULL for none).
static const struct tcp_ext_arg_callbacks no_callbacks;

static err_t passive_open(u8_t id, struct tcp_pcb_listen *lpcb, struct tcp_pcb *cpcb)
{
    struct synq *q = lpcb->ext_args[id].data;
    if (q->accept_full(q->arg)) {
        counts.overflows++;
        return ERR_MEM;         // lwIP abandons cpcb, silently: the peer's SYN is retried
    }
    if (q->n >= SYNQ_MAX && !syncookie_rebuilding()) {
        // Full: lwIP's SYN-ACK, whose sequence number is the cookie, goes
        // out now, and lwIP then abandons cpcb (no reset).
        counts.cookies++;
        unheld_any = cookie_any = true;
        unheld_at = cookie_at = sys_now();
        if (tcp_enqueue_flags(cpcb, TCP_SYN | TCP_ACK) == ERR_OK)
            tcp_output(cpcb);
        return ERR_MEM;
    }
    struct entry *e = netmem_calloc(1, sizeof *e);
    if (!e)
        return ERR_MEM;
    e->pcb = cpcb;
    e->q = q;
    e->prev = q->ring.prev;
    e->next = &q->ring;
    q->ring.prev->next = e;
    q->ring.prev = e;
    q->n++;
    tcp_ext_arg_set_callbacks(cpcb, (u8_t)ext_id, &entry_callbacks);
    tcp_ext_arg_set(cpcb, (u8_t)ext_id, e);
    return ERR_OK;
}

// The listening pcb freed by lwIP (closed): the half-open connections it
// leaves are lwIP's to end (their ACK finds no listener and is reset).
static void listener_destroyed(u8_t id, void *data)
{
    (void)id;
    struct synq *q = data;
    while (q->ring.next != &q->ring)
        unlink_entry(q->ring.next);
    netmem_free(q);
}

static const struct tcp_ext_arg_callbacks listener_callbacks = {
    .destroy = listener_destroyed,
    .passive_open = passive_open,
};

bool synq_listen(struct tcp_pcb *lpcb, bool (*accept_full)(void *arg), void *arg)
{
    net_assert_locked();
    if (ext_id < 0)
        ext_id = tcp_ext_arg_alloc_id();
    struct synq *q = netmem_calloc(1, sizeof *q);
    if (!q)
        return false;
    q->ring.prev = q->ring.next = &q->ring;
    q->accept_full = accept_full;
    q->arg = arg;
    tcp_ext_arg_set_callbacks(lpcb, (u8_t)ext_id, &listener_callbacks);
    tcp_ext_arg_set(lpcb, (u8_t)ext_id, q);
    return true;
}

void synq_established(struct tcp_pcb *pcb)
{
    net_assert_locked();
    ASSERT(ext_id >= 0);
    struct entry *e = tcp_ext_arg_get(pcb, (u8_t)ext_id);
    if (!e)
        return;
    unlink_entry(e);
    netmem_free(e);
    tcp_ext_arg_set_callbacks(pcb, (u8_t)ext_id, &no_callbacks);
    tcp_ext_arg_set(pcb, (u8_t)ext_id, 0);
}

bool synq_holds(struct tcp_pcb *pcb)
{
    net_assert_locked();
    if (pcb->state != SYN_RCVD || ext_id < 0)
        return false;
    struct entry *e = tcp_ext_arg_get(pcb, (u8_t)ext_id);
    if (!e || !e->q || !e->q->accept_full(e->q->arg))
        return false;
    // The peer answered: it is real, not a spoofed source, so its
    // handshake is kept past lwIP's SYN_RCVD timeout (20 s from the last
    // segment taken) for as long as it keeps answering the SYN-ACK's
    // retransmissions (TCP_MAXRTX of them, minutes), as Linux keeps an
    // acknowledged request while its accept queue is full.
    pcb->tmr = tcp_ticks;
    counts.overflows++;
    return true;
}

bool synq_unheld_within(uint32_t ms)
{
    net_assert_locked();
    return unheld_any && sys_now() - unheld_at < ms;   // unsigned: one wrap of sys_now is harmless
}

bool synq_flooded_within(uint32_t ms)
{
    net_assert_locked();
    return cookie_any && sys_now() - cookie_at < ms;   // unsigned, as above
}

void synq_counts(struct synq_counts *out)
{
    out->overflows = __atomic_load_n(&counts.overflows, __ATOMIC_RELAXED);  // a count, read racily
    out->cookies = __atomic_load_n(&counts.cookies, __ATOMIC_RELAXED);      // a count, read racily
}
