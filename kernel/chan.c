// SPDX-License-Identifier: MIT
// Channels, after Go's src/runtime/chan.go.
//
// A channel is a lock, a ring buffer of dataqsiz slots and two queues of
// parked goroutines (struct sudog, see chan.h). Invariants, c->lock held:
//   - recvq non-empty  =>  qcount == 0 (a receiver waits only on an empty
//     buffer) and no sender waits, unless the receivers are select records
//     that another channel already won (wq_dequeue drops them).
//   - sendq non-empty  =>  qcount == dataqsiz.
//   - closed  =>  sendq empty (close wakes them all, fatally); recvq empty.
// Direct hand-off: a send that finds a receiver waiting copies straight
// into the receiver's slot and readies it into the sender's runnext, where
// it inherits the time slice (Go's send/recv). A receive that finds a
// sender waiting on a full buffer takes the head and moves the sender's
// value to the tail, so FIFO order holds.
//
// Lock-free fast paths (non-blocking operations only, Go's reasoning): a
// try-send on an open channel that is full, and a try-receive on an empty
// channel, fail without the lock. Each reads two words in turn (closed,
// then the emptiness/fullness state, or the reverse) with relaxed loads;
// since closed never goes back to 0, there was an instant when both
// observations held together, and the operation linearizes there. The
// try-receive re-reads emptiness after an acquire load of closed that saw
// 1, pairing with chan_close's release store, so a value sent before the
// close is never missed. goro.h makes these checks inline
// (chan_try_send, chan_try_recv); the ones here serve a nil channel and
// a check that raced.
//
// The common blocking cases of a buffered channel (a send into a free
// slot, a receive of a buffered value, no goroutine parked on the other
// side, an 8-byte or empty element) complete inline in chansend and
// chanrecv, with no call; everything else, parking included, is out of
// line: send_whole/recv_whole for what is never tried inline (unbuffered
// channels, other element sizes), send_slow/recv_slow for a try that
// failed.
//
// Memory: the header and the buffer are one calloc'd block (kernel/malloc.c),
// on the node of the core that makes the channel.
#include "kernel/chan.h"
#include "arch/arch.h"
#include "kernel/sched.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"

// ---- wait queues ---------------------------------------------------------------

bool wq_park_unlock(struct g *gp, void *lock)
{
    (void)gp;
    wq_unlock(lock);
    return true;
}

// ---- fatal errors --------------------------------------------------------------

void chan_fatal(const char *what, void *pc)
{
    irq_disable();                  // stay on this M while reading its G
    uint64_t off = 0;
    const char *fn = arch_symbolize((uint64_t)pc, &off);
    struct m *mp = getm();
    uint64_t id = mp && mp->curg ? mp->curg->id : 0;
    panic("fatal error: %s (goroutine %lu, called from %s+0x%lx)", what, id, fn ? fn : "?", off);
}

// ---- channels ------------------------------------------------------------------

static inline struct g *curg(void)
{
    return getm()->curg;
}

// Copies one element; src NULL is the zero value, dst NULL discards.
static inline void elem_copy(void *dst, const void *src, uint32_t size)
{
    if (!dst || !size)
        return;
    if (!src)
        memset(dst, 0, size);
    else if (size == sizeof(uint64_t))
        *(uint64_t *)dst = *(const uint64_t *)src;
    else
        memcpy(dst, src, size);
}

static inline void elem_zero(void *dst, uint32_t size)
{
    if (dst && size)
        memset(dst, 0, size);
}

static inline uint8_t *slot(struct chan *c, size_t i)
{
    return c->buf + i * c->elemsize;
}

chan_t *chan_make(size_t elem_size, size_t cap)
{
    if (elem_size >= (1u << 16))
        panic("chan_make: element size %lu too large (at most 65535)", elem_size);
    if (cap > ((size_t)1 << 40) / (elem_size ? elem_size : 1))
        panic("chan_make: capacity %lu out of range", cap);
    size_t hdr = (sizeof(struct chan) + 15) & ~(size_t)15;
    struct chan *c = calloc(1, hdr + elem_size * cap);
    c->elemsize = (uint32_t)elem_size;
    c->dataqsiz = cap;
    c->buf = (uint8_t *)c + hdr;
    return c;
}

void chan_free(chan_t *c)
{
    if (!c)
        return;
    if (c->recvq.head || c->sendq.head)
        chan_fatal("chan_free of a channel with blocked goroutines", __builtin_return_address(0));
    free(c);
}

size_t chan_len(chan_t *c)
{
    return c ? __atomic_load_n(&c->qcount, __ATOMIC_RELAXED) : 0;     // relaxed: a snapshot, as documented
}

size_t chan_cap(chan_t *c)
{
    return c ? c->dataqsiz : 0;
}

#define HOT static inline __attribute__((always_inline))

// c->lock held. A parked receiver takes elem directly; else a free slot.
HOT bool send_locked(struct chan *c, const void *elem, struct g **wake, void *pc)
{
    if (c->closed)
        chan_fatal("send on closed channel", pc);
    struct sudog *sg = wq_dequeue(&c->recvq);
    if (sg) {
        elem_copy(sg->elem, elem, c->elemsize);
        sg->success = true;
        *wake = sg->g;
        return true;
    }
    if (c->qcount < c->dataqsiz) {
        elem_copy(slot(c, c->sendx), elem, c->elemsize);
        if (++c->sendx == c->dataqsiz)
            c->sendx = 0;
        __atomic_store_n(&c->qcount, c->qcount + 1, __ATOMIC_RELAXED);    // relaxed: c->lock orders it; racy readers: chan_len, fast paths
        return true;
    }
    return false;
}

// c->lock held. A parked sender (buffer full or unbuffered) first, then
// the buffer, then closed.
HOT int recv_locked(struct chan *c, void *elem, struct g **wake)
{
    struct sudog *sg = wq_dequeue(&c->sendq);
    if (sg) {
        if (c->dataqsiz == 0) {
            elem_copy(elem, sg->elem, c->elemsize);
        } else {
            // Full buffer: the head goes to us, the sender's value to the
            // slot it frees, which is now the tail.
            elem_copy(elem, slot(c, c->recvx), c->elemsize);
            elem_copy(slot(c, c->recvx), sg->elem, c->elemsize);
            if (++c->recvx == c->dataqsiz)
                c->recvx = 0;
            c->sendx = c->recvx;
        }
        sg->success = true;
        *wake = sg->g;
        return CHAN_RECEIVED;
    }
    if (c->qcount > 0) {
        elem_copy(elem, slot(c, c->recvx), c->elemsize);
        if (++c->recvx == c->dataqsiz)
            c->recvx = 0;
        __atomic_store_n(&c->qcount, c->qcount - 1, __ATOMIC_RELAXED);    // relaxed: c->lock orders it; racy readers: chan_len, fast paths
        return CHAN_RECEIVED;
    }
    if (c->closed) {
        elem_zero(elem, c->elemsize);
        return CHAN_CLOSED;
    }
    return CHAN_WOULD_BLOCK;
}

bool chan_send_locked(struct chan *c, const void *elem, struct g **wake, void *pc)
{
    return send_locked(c, elem, wake, pc);
}

int chan_recv_locked(struct chan *c, void *elem, struct g **wake)
{
    return recv_locked(c, elem, wake);
}

// Blocking operations run on a G with interrupts on (goro.h says so), so
// they need not save the flags: the restore is a plain sti.
#define IF_FLAG (1ull << 9)
HOT uint64_t irq_off(bool block)
{
    if (block) {
        irq_disable();
        return IF_FLAG;
    }
    return irq_save();
}

static inline void ready(struct g *gp)
{
    if (gp)
        goready(gp, true);
}

static __attribute__((noreturn)) void block_forever(const char *reason)
{
    gopark(0, 0, reason, 0);
    panic("a goroutine blocked on a nil channel was woken");
}

// The lock-free checks of the non-blocking fast paths: relaxed loads, whose
// linearization point the top of this file explains.
static inline bool full(struct chan *c)
{
    if (c->dataqsiz == 0)
        return __atomic_load_n(&c->recvq.head, __ATOMIC_RELAXED) == 0;    // relaxed: see above
    return __atomic_load_n(&c->qcount, __ATOMIC_RELAXED) == c->dataqsiz;  // relaxed: see above
}

static inline bool empty(struct chan *c)
{
    if (c->dataqsiz == 0)
        return __atomic_load_n(&c->sendq.head, __ATOMIC_RELAXED) == 0;    // relaxed: see full()
    return __atomic_load_n(&c->qcount, __ATOMIC_RELAXED) == 0;            // relaxed: see full()
}

// c->lock held, interrupts off (fl: what to restore). Completes the send
// if it can (a parked receiver, a free slot), else fails (!block) or
// parks until a receiver takes elem (mapped: see elem_premap).
HOT bool send_finish(struct chan *c, const void *elem, bool block, uint64_t fl, void *pc)
{
    struct g *wake = 0;
    if (send_locked(c, elem, &wake, pc)) {
        wq_unlock(&c->lock);
        ready(wake);
        irq_restore(fl);
        return true;
    }
    if (!block) {
        wq_unlock(&c->lock);
        irq_restore(fl);
        return false;
    }
    struct sudog sg;                // the fields a waker reads, and the links
    sg.g = curg();
    sg.elem = (void *)elem;
    sg.sel = 0;
    sg.success = false;
    wq_push_back(&c->sendq, &sg);
    gopark(wq_park_unlock, &c->lock, "chan send", c);
    // Woken by a receiver that took the value, or by chan_close.
    if (!sg.success)
        chan_fatal("send on closed channel", pc);
    return true;
}

// A send chansend does not try inline (an unbuffered channel's hand-off
// or park, an element of another size than 8 or 0): the whole of it, out
// of line once per value of block, so that the interrupt flag's handling
// folds as it does inline.
HOT bool send_whole(struct chan *c, const void *elem, bool block, void *pc)
{
    elem_premap(elem, c->elemsize);     // read with interrupts off, now or by a receiver once parked
    uint64_t fl = irq_off(block);
    wq_lock(&c->lock);
    return send_finish(c, elem, block, fl, pc);
}

static __attribute__((noinline)) bool send_whole_block(struct chan *c, const void *elem, void *pc)
{
    return send_whole(c, elem, true, pc);
}

static __attribute__((noinline)) bool send_whole_try(struct chan *c, const void *elem, void *pc)
{
    return send_whole(c, elem, false, pc);
}

// The inline try failed: interrupts off (fl), c->lock held if locked.
static __attribute__((noinline)) bool send_slow(struct chan *c, const void *elem, bool block, uint64_t fl, void *pc,
                                                bool locked)
{
    if (!locked)
        wq_lock(&c->lock);
    return send_finish(c, elem, block, fl, pc);
}

// The common case inline: a free slot in a buffered channel, no parked
// receiver, an 8-byte value (read before interrupts go off: the read maps
// its pages, see elem_premap) or none. No call on that path: an unbuffered
// channel and another element size are send_whole's, a busy lock and a
// failed try send_slow's, tail-called, so that the path saves no register.
HOT bool chansend(struct chan *c, const void *elem, bool block, void *pc)
{
    if (!c) {
        if (!block)
            return false;
        block_forever("chan send (nil chan)");
    }
    // Relaxed: closed never goes back to 0, so open-then-full held at once.
    if (!block && !__atomic_load_n(&c->closed, __ATOMIC_RELAXED) && full(c))
        return false;
    uint32_t size = c->elemsize;
    if (c->dataqsiz == 0 || (size != sizeof(uint64_t) && size != 0))
        return block ? send_whole_block(c, elem, pc) : send_whole_try(c, elem, pc);
    uint64_t v = 0;
    if (size && elem)
        v = *(const volatile uint64_t *)elem;
    uint64_t fl = irq_off(block);
    bool locked = wq_trylock(&c->lock);
    if (__builtin_expect(locked && !(c->closed | (uintptr_t)c->recvq.head) && c->qcount < c->dataqsiz, 1)) {
        // The indices first: the copy might alias them, for all the
        // compiler knows. A racy reader that sees the count first takes
        // the lock to use it.
        size_t i = c->sendx;
        c->sendx = i + 1 == c->dataqsiz ? 0 : i + 1;
        __atomic_store_n(&c->qcount, c->qcount + 1, __ATOMIC_RELAXED);    // relaxed: c->lock orders it; racy readers: chan_len, fast paths
        if (size)
            *(uint64_t *)(c->buf + i * sizeof v) = v;
        wq_unlock(&c->lock);
        irq_restore(fl);
        return true;
    }
    return send_slow(c, elem, block, fl, pc, locked);
}

// c->lock held, interrupts off (fl: what to restore). Completes the
// receive if it can (a parked sender, a buffered value, a closed channel),
// else fails (!block) or parks until a sender fills elem (mapped: see
// elem_premap) or the channel closes.
HOT int recv_finish(struct chan *c, void *elem, bool block, uint64_t fl)
{
    struct g *wake = 0;
    int r = recv_locked(c, elem, &wake);
    if (r != CHAN_WOULD_BLOCK || !block) {
        wq_unlock(&c->lock);
        ready(wake);
        irq_restore(fl);
        if (r == CHAN_WOULD_BLOCK)
            elem_zero(elem, c->elemsize);
        return r;
    }
    struct sudog sg;                // the fields a waker reads, and the links
    sg.g = curg();
    sg.elem = elem;
    sg.sel = 0;
    sg.success = false;
    wq_push_back(&c->recvq, &sg);
    gopark(wq_park_unlock, &c->lock, "chan receive", c);
    // Woken by a sender (the value is in elem) or by chan_close (zeroed).
    return sg.success ? CHAN_RECEIVED : CHAN_CLOSED;
}

// A receive chanrecv does not try inline, as in send_whole.
HOT int recv_whole(struct chan *c, void *elem, bool block)
{
    elem_premap(elem, c->elemsize);     // written with interrupts off, now or by a sender once parked
    uint64_t fl = irq_off(block);
    wq_lock(&c->lock);
    return recv_finish(c, elem, block, fl);
}

static __attribute__((noinline)) int recv_whole_block(struct chan *c, void *elem)
{
    return recv_whole(c, elem, true);
}

static __attribute__((noinline)) int recv_whole_try(struct chan *c, void *elem)
{
    return recv_whole(c, elem, false);
}

// The inline try failed, as in send_slow.
static __attribute__((noinline)) int recv_slow(struct chan *c, void *elem, bool block, uint64_t fl, bool locked)
{
    if (!locked)
        wq_lock(&c->lock);
    return recv_finish(c, elem, block, fl);
}

// The common case inline, as in chansend: a buffered 8-byte value (or
// none) and no parked sender; the rest is recv_whole's or recv_slow's.
HOT int chanrecv(struct chan *c, void *elem, bool block)
{
    if (!c) {
        if (!block)
            return CHAN_WOULD_BLOCK;
        block_forever("chan receive (nil chan)");
    }
    if (!block && empty(c)) {
        if (!__atomic_load_n(&c->closed, __ATOMIC_ACQUIRE)) {  // acquire: pairs with chan_close's release
            elem_zero(elem, c->elemsize);
            return CHAN_WOULD_BLOCK;
        }
        if (empty(c)) {
            elem_zero(elem, c->elemsize);
            return CHAN_CLOSED;
        }
    }
    uint32_t size = c->elemsize;
    if (c->dataqsiz == 0 || (size != sizeof(uint64_t) && size != 0))
        return block ? recv_whole_block(c, elem) : recv_whole_try(c, elem);
    elem_premap(elem, size);        // written with interrupts off, now or by a sender once parked
    uint64_t fl = irq_off(block);
    bool locked = wq_trylock(&c->lock);
    if (__builtin_expect(locked && c->qcount != 0 && !c->sendq.head, 1)) {
        // The indices first, as in chansend; the slot stays ours until we
        // unlock.
        size_t i = c->recvx;
        c->recvx = i + 1 == c->dataqsiz ? 0 : i + 1;
        __atomic_store_n(&c->qcount, c->qcount - 1, __ATOMIC_RELAXED);    // relaxed: c->lock orders it; racy readers: chan_len, fast paths
        if (size && elem)
            *(uint64_t *)elem = *(const uint64_t *)(c->buf + i * sizeof(uint64_t));
        wq_unlock(&c->lock);
        irq_restore(fl);
        return CHAN_RECEIVED;
    }
    return recv_slow(c, elem, block, fl, locked);
}

void chan_send(chan_t *c, const void *elem)
{
    chansend(c, elem, true, __builtin_return_address(0));
}

bool chan_try_send_slow(chan_t *c, const void *elem)
{
    return chansend(c, elem, false, __builtin_return_address(0));
}

bool chan_recv(chan_t *c, void *elem)
{
    return chanrecv(c, elem, true) == CHAN_RECEIVED;
}

int chan_try_recv_slow(chan_t *c, void *elem)
{
    return chanrecv(c, elem, false);
}

void chan_close(chan_t *c)
{
    void *pc = __builtin_return_address(0);
    if (!c)
        chan_fatal("close of nil channel", pc);
    uint64_t fl = irq_save();
    wq_lock(&c->lock);
    if (c->closed)
        chan_fatal("close of closed channel", pc);
    __atomic_store_n(&c->closed, 1, __ATOMIC_RELEASE);     // release: pairs with the try-receive fast path
    // Collect every waiter, then ready them after unlocking. Records stay
    // valid until their G is readied; they are chained through next.
    struct sudog *list = 0, *sg;
    while ((sg = wq_dequeue(&c->recvq))) {
        elem_zero(sg->elem, c->elemsize);
        sg->success = false;
        sg->next = list;
        list = sg;
    }
    while ((sg = wq_dequeue(&c->sendq))) {
        sg->success = false;        // the sender dies with the fatal error
        sg->next = list;
        list = sg;
    }
    wq_unlock(&c->lock);
    while (list) {
        sg = list;
        list = sg->next;            // read before goready: sg dies with its G's frame
        goready(sg->g, true);        // runnext, as Go's goready: the last one readied runs next
    }
    irq_restore(fl);
}
