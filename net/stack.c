// SPDX-License-Identifier: MIT
// How lwIP runs on goroutines: its raw API under one lock.
//
// lwIP is not reentrant: NO_SYS (lwipopts.h) leaves every call to the
// port to serialize, and here one lock does it. Whoever holds the lock may
// call lwIP; everyone else who has work for it (a device's interrupt that
// brought frames, lwIP's own timer) posts the work in a word and, if the
// lock is free, has it done by whoever polls next; if it is held, the
// holder does it before it lets go. So no context ever waits for the lock
// except a goroutine or g0 about to call lwIP itself, and those wait only
// for another holder's critical section, never for a parked goroutine:
// the holder is pinned (preempt_disable) from lock to unlock, and nothing
// under the lock parks.
//
// The lock leaves interrupts on (a holder may run for a whole TCP window's
// copy), so an interrupt can come while its own core holds the lock: an
// interrupt handler therefore only posts (net_post) and never waits.
//
// The hand-off without a lost post, a Dekker pair:
//   poster:  pending |= what (seq-cst); then reads locked.
//   holder:  locked = 0 (release); fence; then reads pending, and if it is
//            set, takes the lock back (exchange) and does the work.
// Either the poster sees the lock held (and the holder's read after its
// release sees the post), or the holder has let go and the poster sees
// it free and arranges a poll itself. Both may happen; the work word is
// taken by exchange, so the work is done once.
//
// Lock order: the stack lock comes before every spinlock (arch/spinlock.h):
// its holder takes the page allocator's lock (net/netmem.c), a device's
// transmit lock and the console's, and holds nothing when it takes it.
#include "net/stack.h"
#include "net/ether.h"
#include "net/netmem.h"
#include "net/sys_arch.h"
#include "arch/arch.h"
#include "goro.h"
#include "kernel/netpoll.h"
#include "kernel/timer.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include <lwip/init.h>
#include <lwip/netif.h>
#include <lwip/timeouts.h>
#include <lwip/priv/tcp_priv.h>

static struct {
    // atomic, any core
    uint32_t locked;            // 1 while held
    uint32_t pending;           // NET_WORK_* bits for the holder
    // the holder only (read by net_assert_locked on any core)
    int32_t holder;             // core index of the holder, -1 when free
    struct netpoll_list ready;  // goroutines the holder's work made ready
} stack = { .holder = -1 };

// A holder's rounds of posted work before it hands the rest to the
// netpoller (netpoll_wake) and lets go: a flood of frames must not keep
// one goroutine inside its unlock for ever.
#define WORK_ROUNDS 16

void net_lock(void)
{
    preempt_disable();
    while (__atomic_exchange_n(&stack.locked, 1, __ATOMIC_ACQUIRE))    // acquire: pairs with unlock's release
        while (__atomic_load_n(&stack.locked, __ATOMIC_RELAXED))       // relaxed: a hint; the exchange decides
            cpu_relax();
    stack.holder = (int32_t)cpu_index();
}

bool net_trylock(void)
{
    preempt_disable();
    if (!__atomic_load_n(&stack.locked, __ATOMIC_RELAXED) &&          // relaxed: a hint; the exchange decides
        !__atomic_exchange_n(&stack.locked, 1, __ATOMIC_ACQUIRE)) {   // acquire: pairs with unlock's release
        stack.holder = (int32_t)cpu_index();
        return true;
    }
    preempt_enable();
    return false;
}

void net_assert_locked(void)
{
    ASSERT(__atomic_load_n(&stack.locked, __ATOMIC_RELAXED) &&        // relaxed: only "held by this core" matters
           stack.holder == (int32_t)cpu_index());
}

bool net_post(uint32_t what)
{
    __atomic_fetch_or(&stack.pending, what, __ATOMIC_SEQ_CST);        // the poster's half of the Dekker pair
    return __atomic_load_n(&stack.locked, __ATOMIC_SEQ_CST);          // ordered after the post: see the essay
}

struct netpoll_list *net_ready_list(void)
{
    net_assert_locked();
    return &stack.ready;
}

// lwIP's retransmission timeout has no ceiling: each retransmission's
// tcp_slowtmr sets rto to the RTT estimate shifted by lwIP's tcp_backoff
// (up to 128 times), stopping only at 0x7FFF ticks (4.5 hours), so a
// connection whose peer went silent waits 3 minutes or more between its
// last retransmissions (from lwIP's least estimate, 1.5 s), longer the
// slower its path was. Linux stops at TCP_RTO_MAX, and so does goro
// (net/stack.h): after every slow tick (tcp_ticks moved) each active
// connection's rto is clamped, before the next tick counts rtime up to
// it. lwIP has no hook there, and its source is built as Debian ships it.
// An RTT sample (tcp_in.c) sets rto too; the same walk clamps it long
// before rtime reaches it. A SYN is never backed off (SYN_SENT keeps its
// 3 s) and SYN_RCVD ends within 20 s (TCP_SYN_RCVD_TIMEOUT), so only a
// synchronized connection reaches the ceiling. Stack lock held.
_Static_assert(NET_TCP_RTO_MAX_TICKS > 0 && NET_TCP_RTO_MAX_TICKS < 0x7FFF, "rto is lwIP's s16_t");
static void cap_rto(void)
{
    static u32_t walked;        // tcp_ticks at the last walk
    if (tcp_ticks == walked)
        return;
    walked = tcp_ticks;
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (pcb->rto > NET_TCP_RTO_MAX_TICKS)
            pcb->rto = NET_TCP_RTO_MAX_TICKS;
}

// Stack lock held: the posted work, and what lwIP queued for itself
// (packets looped back to this machine), until there is none or
// WORK_ROUNDS have gone by. True when work is left.
static bool do_work(void)
{
    for (int round = 0; round < WORK_ROUNDS; round++) {
        uint32_t what = __atomic_exchange_n(&stack.pending, 0, __ATOMIC_ACQUIRE);   // pairs with net_post's seq-cst or
        if (what & NET_WORK_TIMERS) {
            sys_check_timeouts();
            cap_rto();
        }
        if ((what & NET_WORK_RX) && ether_poll())
            net_post(NET_WORK_RX);      // a queue still has frames: another round
        bool looped = false;
        struct netif *nif;
        NETIF_FOREACH(nif) {
            if (nif->loop_first) {
                netif_poll(nif);
                looped = true;
            }
        }
        if (!what && !looped)
            return false;
    }
    return true;
}

// Does the work, lets go, and moves the goroutines made ready to out.
// After WORK_ROUNDS turns (a flood), what is left goes to the netpoller.
static void unlock_to(struct netpoll_list *out)
{
    net_assert_locked();
    bool left;
    for (int turns = 0;; turns++) {
        left = do_work();
        netpoll_list_move(out, &stack.ready);
        stack.holder = -1;
        __atomic_store_n(&stack.locked, 0, __ATOMIC_RELEASE);          // release: publishes the critical section
        if (left)
            break;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);                        // the holder's half of the Dekker pair
        if (!__atomic_load_n(&stack.pending, __ATOMIC_RELAXED))        // ordered by the fence above
            break;
        if (turns >= WORK_ROUNDS) {
            left = true;
            break;
        }
        if (__atomic_exchange_n(&stack.locked, 1, __ATOMIC_ACQUIRE))   // acquire: pairs with unlock's release; taken: its holder works
            break;
        stack.holder = (int32_t)cpu_index();
    }
    if (left && !net_post(NET_WORK_RX))
        netpoll_wake();         // the rest for the netpoller (kernel/netpoll.c); pinned, as wakep needs
    preempt_enable();
}

void net_unlock(void)
{
    struct netpoll_list l = { 0 };
    unlock_to(&l);
    netpoll_ready_list(&l, false);
}

// The netpoller's poll (kernel/netpoll.h): any context, never waits.
static bool stack_poll(struct netpoll_list *out)
{
    if (!net_trylock())
        return false;           // the holder does the work
    unlock_to(out);
    return true;
}

// lwIP's timeouts (ARP, IP reassembly, DHCP, and TCP's 250 ms timer while
// any connection needs it) are checked every TCP_TMR_INTERVAL, the
// shortest of lwIP's periods (lwIP's timeouts.c): a periodic kernel timer
// posts the check, and does it when the lock is free. Its function runs
// on g0 with a P and interrupts off (kernel/timer.h).
static struct timer lwip_timer;

static void lwip_timer_fire(struct timer *t, uint64_t now)
{
    (void)t, (void)now;
    if (!net_post(NET_WORK_TIMERS) && net_trylock())
        net_unlock();
}

static void start_once(void *arg)
{
    (void)arg;
    sys_arch_init();
    netpoll_register(stack_poll);
    net_lock();
    lwip_init();                // the loopback interface, lo, at 127.0.0.1
    struct netif *lo = netif_find("lo0");
    if (lo)
        NETIF_SET_CHECKSUM_CTRL(lo, NETIF_CHECKSUM_DISABLE_ALL);   // nothing corrupts a copy in memory
    ether_attach_all();         // an interface per NIC (net/ether.c)
    net_unlock();
    lwip_timer.when = timer_deadline_ns((uint64_t)TCP_TMR_INTERVAL * 1000000);
    lwip_timer.period = arch_ns_to_cycles((uint64_t)TCP_TMR_INTERVAL * 1000000);
    lwip_timer.f = lwip_timer_fire;
    timer_start(&lwip_timer);
}

void net_start(void)
{
    static once_t once;
    once_do(&once, start_once, 0);
}
