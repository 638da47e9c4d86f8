// SPDX-License-Identifier: MIT
// app=soak's channel programs: senders and receivers over buffered and
// unbuffered channels, blocking and not, select (with a default), close.
// Every message carries a sequence number and a checksum (soak_check.c).
#include "soak.h"

static const uint32_t caps[] = { 0, 0, 1, 2, 4, 16, 64 };

static void free_chan(void *c) { chan_free(c); }

static chan_t *round_chan(rng_t *r)
{
    chan_t *c = chan_make(sizeof(struct soak_msg), caps[rng_below(r, sizeof caps / sizeof caps[0])]);
    round_defer(free_chan, c);
    return c;
}

// Non-blocking tries give up after a few rounds and block: on an
// unbuffered channel a try meets only a goroutine parked on the other side,
// so two sides that only try would never meet.
#define TRIES 8

// A receiver claims a message before it takes one: the claims add up to
// the messages sent, so no receiver waits for a message that never comes.
static bool claim(int32_t *left)
{
    return __atomic_sub_fetch(left, 1, __ATOMIC_RELAXED) >= 0;
}

// ---- one channel, blocking and non-blocking sends and receives ------------

#define MAXCH 4
struct chanprog {
    chan_t *c[MAXCH];
    uint32_t nc;
    int32_t left;                       // messages not yet claimed by a receiver
    uint32_t per_sender;
    uint32_t senders_left;              // close: the last sender closes c[0]
};

struct actor {
    struct chanprog *cp;
    rng_t r;
    uint32_t id;
};

static struct actor *actor(struct chanprog *cp, rng_t *r, uint32_t id)
{
    struct actor *a = round_alloc(sizeof *a);
    a->cp = cp;
    a->r = rng_split(r);
    a->id = id;
    return a;
}

static void send_one(struct actor *a, chan_t *c, bool try)
{
    struct soak_msg m;
    msg_make(&m, a->id, &a->r);
    for (int i = try ? TRIES : 0; i > 0; i--) {
        if (chan_try_send(c, &m)) {
            soak_op(1);
            return;
        }
        gosched();
    }
    chan_send(c, &m);
    soak_op(1);
}

static void chan_sender(void *p)
{
    struct actor *a = p;
    bool try = rng_below(&a->r, 4) == 0;
    for (uint32_t i = 0; i < a->cp->per_sender; i++) {
        send_one(a, a->cp->c[0], try);
        if (rng_below(&a->r, 8) == 0)
            gosched();
    }
}

static void chan_receiver(void *p)
{
    struct actor *a = p;
    bool try = rng_below(&a->r, 4) == 0;
    while (claim(&a->cp->left)) {
        struct soak_msg m;
        int got = CHAN_WOULD_BLOCK;
        for (int i = try ? TRIES : 0; i > 0 && got == CHAN_WOULD_BLOCK; i--)
            if ((got = chan_try_recv(a->cp->c[0], &m)) == CHAN_WOULD_BLOCK)
                gosched();
        if (got == CHAN_CLOSED) {
            soak_fail("chan: try_recv on an open channel reported it closed");
            return;
        } else if (got == CHAN_WOULD_BLOCK && !chan_recv(a->cp->c[0], &m)) {
            soak_fail("chan: recv on an open channel reported it closed");
            return;
        }
        msg_received(&m, "chan");
    }
}

static struct chanprog *chanprog(rng_t *r, uint32_t nc, uint32_t senders)
{
    struct chanprog *cp = round_alloc(sizeof *cp);
    cp->nc = nc;
    for (uint32_t i = 0; i < nc; i++)
        cp->c[i] = round_chan(r);
    cp->per_sender = 1 + rng_below(r, 64);
    cp->left = (int32_t)(cp->per_sender * senders);
    cp->senders_left = senders;
    return cp;
}

// Starts the receivers, then the senders, each an actor of cp.
static void start_actors(struct chanprog *cp, rng_t *r, uint32_t receivers,
                         void (*receiver)(void *), uint32_t senders, void (*sender)(void *))
{
    for (uint32_t i = 0; i < receivers; i++)
        soak_go(receiver, actor(cp, r, i));
    for (uint32_t i = 0; i < senders; i++)
        soak_go(sender, actor(cp, r, i));
}

void prog_chan(rng_t *r)
{
    uint32_t senders = 1 + rng_below(r, 4), receivers = 1 + rng_below(r, 4);
    start_actors(chanprog(r, 1, senders), r, receivers, chan_receiver, senders, chan_sender);
}

// ---- select over several channels, with and without a default -------------

// Half the time, TRIES selects with a default case first (yielding between
// them); then one that blocks. Returns the case chosen.
static int select_some_tries(struct actor *a, struct select_case *cs, int n)
{
    int k = -1;
    for (int t = rng_below(&a->r, 2) ? TRIES : 0; t > 0 && k < 0; t--)
        if ((k = chan_select(cs, n, false)) < 0)
            gosched();                  // the default case: try again
    return k >= 0 ? k : chan_select(cs, n, true);
}

static void select_sender(void *p)
{
    struct actor *a = p;
    struct chanprog *cp = a->cp;
    for (uint32_t i = 0; i < cp->per_sender; i++) {
        struct soak_msg m;
        msg_make(&m, a->id, &a->r);
        struct select_case cs[MAXCH];
        for (uint32_t k = 0; k < cp->nc; k++)
            cs[k] = (struct select_case){ .c = cp->c[k], .dir = SELECT_SEND, .elem = &m };
        int k = select_some_tries(a, cs, (int)cp->nc);
        if (k >= (int)cp->nc)
            soak_fail("select: send case %d of %u chosen", k, cp->nc);
        soak_op(1);
    }
}

static void select_receiver(void *p)
{
    struct actor *a = p;
    struct chanprog *cp = a->cp;
    while (claim(&cp->left)) {
        struct soak_msg m[MAXCH];
        struct select_case cs[MAXCH];
        for (uint32_t k = 0; k < cp->nc; k++)
            cs[k] = (struct select_case){ .c = cp->c[k], .dir = SELECT_RECV, .elem = &m[k] };
        int k = select_some_tries(a, cs, (int)cp->nc);
        if (k >= (int)cp->nc || !cs[k].ok) {
            soak_fail("select: recv case %d (ok %d) on open channels", k, k < MAXCH && cs[k].ok);
            return;
        }
        msg_received(&m[k], "select");
    }
}

void prog_select(rng_t *r)
{
    uint32_t senders = 1 + rng_below(r, 3), receivers = 1 + rng_below(r, 3);
    struct chanprog *cp = chanprog(r, 2 + rng_below(r, MAXCH - 1), senders);
    start_actors(cp, r, receivers, select_receiver, senders, select_sender);
}

// ---- close: receivers drain until closed; the last sender closes ---------

static void close_sender(void *p)
{
    struct actor *a = p;
    for (uint32_t i = 0; i < a->cp->per_sender; i++)
        send_one(a, a->cp->c[0], false);
    if (__atomic_sub_fetch(&a->cp->senders_left, 1, __ATOMIC_ACQ_REL) == 0) {
        chan_close(a->cp->c[0]);        // after every send: acq_rel orders the others'
        soak_op(1);
    }
}

static void close_receiver(void *p)
{
    struct actor *a = p;
    bool by_select = rng_below(&a->r, 3) == 0;
    for (;;) {
        struct soak_msg m;
        bool ok;
        if (by_select) {
            struct select_case cs = { .c = a->cp->c[0], .dir = SELECT_RECV, .elem = &m };
            chan_select(&cs, 1, true);
            ok = cs.ok;
        } else {
            ok = chan_recv(a->cp->c[0], &m);
        }
        if (!ok) {
            if (m.seq != 0 || m.sum != 0)
                soak_fail("close: a receive from the closed channel left a value");
            if (chan_try_recv(a->cp->c[0], &m) != CHAN_CLOSED)
                soak_fail("close: try_recv after the close did not report it");
            return;
        }
        msg_received(&m, "close");
    }
}

void prog_close(rng_t *r)
{
    uint32_t senders = 1 + rng_below(r, 3), receivers = 1 + rng_below(r, 3);
    start_actors(chanprog(r, 1, senders), r, receivers, close_receiver, senders, close_sender);
}
