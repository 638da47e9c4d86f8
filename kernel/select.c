// SPDX-License-Identifier: MIT
// select, after Go's src/runtime/select.go (selectgo).
//
//   1. Poll order: the non-nil cases shuffled (Fisher-Yates with the M's
//      fastrand), so every ready case is equally likely to win.
//   2. Lock order: the same cases sorted by channel address; every
//      distinct channel is locked once, in that order, by every select,
//      so two selects over the same channels cannot deadlock.
//   3. Pass 1, all locked: the first case in poll order that can proceed
//      does (chan_send_locked / chan_recv_locked) and wins.
//   4. None can and !block: unlock, -1.
//   5. Pass 2: a waiter record per case, all sharing one select_state, is
//      queued on every channel; the G parks, and selparkcommit unlocks
//      the channels on g0. The first waker to CAS select_state.done 0 -> 1
//      owns the G: it records the record it took in select_state.win,
//      completes its case and readies the G. Wakers that lose the CAS drop the record (wq_dequeue).
//   6. Pass 3, woken: lock everything again, unlink the records that are
//      still queued, unlock, report the winner.
//
// Lifetime: the records, the case array and the lock order live on the
// parked G's stack. selparkcommit reads them while unlocking; the G can be
// woken (on another core) as soon as the first channel is unlocked, but it
// must then lock every channel in the same order, so it waits behind the
// next one we still hold, and nothing it reads is freed before our last
// unlock, after which selparkcommit reads nothing.
#include "kernel/chan.h"
#include "kernel/sched.h"
#include "lib/panic.h"

struct selpark {
    struct select_case *cases;
    const uint16_t *lockorder;
    int n;
};

// Interrupts off. Locks each distinct channel once, in address order.
static void sellock(struct select_case *cases, const uint16_t *lockorder, int n)
{
    struct chan *last = 0;
    for (int k = 0; k < n; k++) {
        struct chan *c = cases[lockorder[k]].c;
        if (c != last)
            wq_lock(&c->lock);
        last = c;
    }
}

// Unlocks in the same order; reads the next channel before releasing the
// current one, so nothing is read after the last unlock (see the top).
static void selunlock(struct select_case *cases, const uint16_t *lockorder, int n)
{
    struct chan *c = cases[lockorder[0]].c;
    for (int k = 0; k < n; k++) {
        struct chan *next = k + 1 < n ? cases[lockorder[k + 1]].c : 0;
        if (c != next)
            wq_unlock(&c->lock);
        c = next;
    }
}

static bool selparkcommit(struct g *gp, void *arg)
{
    (void)gp;
    struct selpark *sp = arg;
    selunlock(sp->cases, sp->lockorder, sp->n);
    return true;
}

// The non-nil cases: a random permutation in pollorder and the address
// order in lockorder. Returns how many there are.
static int select_orders(struct select_case *cases, int n, uint16_t *pollorder, uint16_t *lockorder)
{
    int norder = 0;
    struct m *mp = acquirem();
    for (int i = 0; i < n; i++) {
        if (!cases[i].c)
            continue;
        // inside-out Fisher-Yates: i goes to a uniform position j in [0, norder]
        int j = (int)(fastrand(mp) % (uint64_t)(norder + 1));
        // With j == norder this reads the slot it is about to fill, and the
        // next line overwrites it.
        pollorder[norder] = pollorder[j];   // NOLINT(clang-analyzer-core.uninitialized.Assign)
        pollorder[j] = (uint16_t)i;
        norder++;
    }
    releasem(mp);
    // insertion sort by address; n <= SELECT_MAX_CASES
    for (int k = 0; k < norder; k++) {
        uint16_t i = pollorder[k];
        int j = k;
        while (j > 0 && (uintptr_t)cases[lockorder[j - 1]].c > (uintptr_t)cases[i].c) {
            lockorder[j] = lockorder[j - 1];
            j--;
        }
        lockorder[j] = i;
    }
    return norder;
}

int chan_select(struct select_case *cases, int n, bool block)
{
    void *pc = __builtin_return_address(0);
    if (n < 0 || n > SELECT_MAX_CASES)
        chan_fatal("select with a case count out of range", pc);
    uint16_t pollorder[SELECT_MAX_CASES], lockorder[SELECT_MAX_CASES];
    int norder = select_orders(cases, n, pollorder, lockorder);
    for (int i = 0; i < n; i++)
        cases[i].ok = false;
    if (norder == 0) {
        if (!block)
            return -1;
        gopark(0, 0, "select (no cases)", 0);
        panic("a goroutine blocked in an empty select was woken");
    }

    // Every case's value, and the waiter records below, are copied or
    // written with interrupts off: their stack pages are mapped first
    // (elem_premap, chan.h). norder > 0 here (0 returned above); the
    // analyzer loses that.
    struct sudog sgs[norder];          // NOLINT(clang-analyzer-core.VLASize): on the stack only while it waits
    // cppcheck-suppress uninitvar ; it touches sgs's pages, not its values
    elem_premap(sgs, (uint32_t)(sizeof sgs));
    for (int k = 0; k < norder; k++)
        elem_premap(cases[pollorder[k]].elem, cases[pollorder[k]].c->elemsize);
    uint64_t fl = irq_save();
    sellock(cases, lockorder, norder);

    // Pass 1: the first case in poll order that can proceed.
    for (int k = 0; k < norder; k++) {
        int i = pollorder[k];
        struct select_case *cs = &cases[i];
        struct g *wake = 0;
        bool done;
        if (cs->dir == SELECT_SEND) {
            done = chan_send_locked(cs->c, cs->elem, &wake, pc);
        } else {
            int r = chan_recv_locked(cs->c, cs->elem, &wake);
            done = r != CHAN_WOULD_BLOCK;
            cs->ok = r == CHAN_RECEIVED;
        }
        if (done) {
            selunlock(cases, lockorder, norder);
            if (wake)
                goready(wake, true);
            irq_restore(fl);
            return i;
        }
    }
    if (!block) {
        selunlock(cases, lockorder, norder);
        irq_restore(fl);
        return -1;
    }

    // Pass 2: wait on every channel.
    struct g *gp = getm()->curg;
    struct select_state st = { 0, 0 };
    for (int k = 0; k < norder; k++) {
        int i = lockorder[k];
        struct sudog *sg = &sgs[k];
        *sg = (struct sudog){ .g = gp, .elem = cases[i].elem, .c = cases[i].c, .sel = &st,
                              .casi = (uint32_t)i };
        wq_push_back(cases[i].dir == SELECT_SEND ? &sg->c->sendq : &sg->c->recvq, sg);
    }
    struct selpark sp = { cases, lockorder, norder };
    gopark(selparkcommit, &sp, "select", 0);

    // Pass 3: unlink the records other than the winner's.
    fl = irq_save();
    sellock(cases, lockorder, norder);
    struct sudog *win = st.win;
    for (int k = 0; k < norder; k++) {
        struct sudog *sg = &sgs[k];
        if (sg != win)
            wq_remove(cases[sg->casi].dir == SELECT_SEND ? &sg->c->sendq : &sg->c->recvq, sg);
    }
    selunlock(cases, lockorder, norder);
    irq_restore(fl);
    if (!win)
        panic("select woken without a winning case");
    struct select_case *cs = &cases[win->casi];
    if (cs->dir == SELECT_SEND) {
        if (!win->success)
            chan_fatal("send on closed channel", pc);
    } else {
        cs->ok = win->success;
    }
    return (int)win->casi;
}
