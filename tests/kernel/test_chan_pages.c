// SPDX-License-Identifier: MIT
// Channel copies into and out of stack pages nothing has mapped yet.
//
// A channel's copies run under its lock, with interrupts off, where a
// stack fault may only take one of the core's 8 spare pages: a 60,000-byte
// element received into a fresh stack buffer needs 15, and a producer that
// hands 8 KiB values to 24 parked receivers faults on 2-3 pages of each
// receiver's stack, all on its own core, which neither idles nor creates a
// goroutine in between (where the spares were refilled). Both ended in
// "fatal error: goroutine N's stack grew inside a spinlock with no spare
// page". Every channel operation now maps its own value's stack pages
// before interrupts go off, on both sides: a parked goroutine's buffer is
// mapped before it parks, so whoever copies into or out of it later never
// faults there.
//
// The buffers are runs of unmapped pages of the goroutine's own stack
// (tests/kernel/stack_test.h): a local array would be mapped by the
// frame's stack probes at the function's entry.
#include "kernel/ktest.h"
#include "kernel/chan.h"
#include "kernel/sched.h"
#include "lib/string.h"
#include "tests/kernel/stack_test.h"

#define BIG_ELEM 60000u
#define BIG_PAGES ((BIG_ELEM + PAGE_SIZE - 1) / PAGE_SIZE + 1)     // a run the value fits at any offset
#define SMALL_ELEM 8192u
#define SMALL_PAGES 3u
#define RECEIVERS 24

static uint8_t pattern(uint64_t seed, size_t i)
{
    return (uint8_t)(seed * 131 + i * 7 + (i >> 12) + 1);
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(seed, i);
}

// 0 when p holds seed's pattern (seed 0: zeros), else the first bad index + 1.
static size_t mismatch(const volatile uint8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (seed ? pattern(seed, i) : 0))
            return i + 1;
    return 0;
}

// Goroutines parked on c's receive (recv) or send queue, counted under its
// lock: a sender that starts only once they are all parked copies into
// every one of them itself.
static uint32_t parked_on(chan_t *c, bool recv)
{
    uint32_t n = 0;
    uint64_t f = irq_save();
    wq_lock(&c->lock);
    for (struct sudog *sg = (recv ? c->recvq : c->sendq).head; sg; sg = sg->next)
        n++;
    wq_unlock(&c->lock);
    irq_restore(f);
    return n;
}

static void wait_parked(chan_t *c, bool recv, uint32_t n)
{
    while (parked_on(c, recv) < n)
        gosched();
}

// ---- one 60,000-byte element ---------------------------------------------------

static chan_t *big_c;
static uint64_t big_done, big_bad, big_fresh;

// Receives one element into a fresh run of its own stack: parked first
// (arg 1: the sender copies into it) or after the sender parked (arg 0).
static void big_receiver(void *arg)
{
    bool park_first = arg != 0;
    uint64_t run = kt_unmapped_pages(kt_curg(), BIG_PAGES);
    uint8_t *dst = run ? (uint8_t *)(run + 16) : malloc(BIG_ELEM);     // no fresh run left: the heap
    kt_add(&big_fresh, run != 0);
    if (!park_first)
        wait_parked(big_c, false, 1);
    if (!chan_recv(big_c, dst) || mismatch(dst, BIG_ELEM, 7))
        kt_add(&big_bad, 1);
    if (!run)
        free(dst);
    kt_add(&big_done, 1);
}

// Sends the zero value from a fresh run of its own stack (the copy reads
// pages nothing has mapped), to a receiver with a heap buffer.
static void big_zero_sender(void *arg)
{
    (void)arg;
    uint64_t buf = kt_unmapped_pages(kt_curg(), BIG_PAGES);
    if (buf) {
        kt_add(&big_fresh, 1);
        chan_send(big_c, (void *)(buf + 16));
    } else {
        uint8_t *zero = calloc(1, BIG_ELEM);
        chan_send(big_c, zero);
        free(zero);
    }
    kt_add(&big_done, 1);
}

KTEST(chan_60k_element_into_and_out_of_fresh_stack_pages)
{
    uint8_t *val = malloc(BIG_ELEM);
    fill(val, BIG_ELEM, 7);
    big_done = big_bad = big_fresh = 0;
    for (int round = 0; round < 2; round++) {
        // unbuffered: the receiver parked first, or the sender
        big_c = chan_make(BIG_ELEM, 0);
        kt_fresh_stacks();
        go(big_receiver, (void *)(uintptr_t)(round == 0));
        if (round == 0)
            wait_parked(big_c, true, 1);
        chan_send(big_c, val);
        KT_ASSERT(kt_wait_count(&big_done, (uint64_t)round * 2 + 1, KT_STALL_MS));
        // from a sender's fresh pages, read under the lock
        kt_fresh_stacks();
        go(big_zero_sender, 0);
        uint8_t *got = malloc(BIG_ELEM);
        memset(got, 0xff, BIG_ELEM);
        if (round == 0)
            wait_parked(big_c, false, 1);
        KT_ASSERT(chan_recv(big_c, got));
        KT_ASSERT_EQ(mismatch(got, BIG_ELEM, 0), 0);
        free(got);
        KT_ASSERT(kt_wait_count(&big_done, (uint64_t)round * 2 + 2, KT_STALL_MS));
        chan_free(big_c);
    }
    // buffered: the value waits in the ring; the receiver copies it out
    big_c = chan_make(BIG_ELEM, 1);
    chan_send(big_c, val);
    kt_fresh_stacks();
    go(big_receiver, (void *)(uintptr_t)1);
    KT_ASSERT(kt_wait_count(&big_done, 5, KT_STALL_MS));
    chan_free(big_c);
    free(val);
    printf("ktest: 60,000-byte elements: %lu of 5 copies through fresh stack pages\n", kt_load(&big_fresh));
    KT_ASSERT(kt_load(&big_fresh) > 0);
    KT_ASSERT_EQ(kt_load(&big_bad), 0);
}

// ---- 8 KiB values handed to 24 parked receivers --------------------------------

static chan_t *hand_c;
static uint64_t hand_done, hand_bad, hand_fresh;
static bool hand_select;

// Parks on hand_c (a receive, or a select with a nil case beside it)
// with its buffer in fresh pages of its own stack; checks what arrives:
// a value (seed = the sender's count), or the zero value at a close.
static void hand_receiver(void *arg)
{
    (void)arg;
    uint64_t buf = kt_unmapped_pages(kt_curg(), SMALL_PAGES);
    volatile uint64_t *dst = buf ? (volatile uint64_t *)(buf + 2048) : malloc(SMALL_ELEM);
    if (buf)
        kt_add(&hand_fresh, 1);
    bool ok;
    if (hand_select) {
        struct select_case cs[2] = {
            { .c = 0, .dir = SELECT_RECV, .elem = 0 },
            { .c = hand_c, .dir = SELECT_RECV, .elem = (void *)dst },
        };
        ok = chan_select(cs, 2, true) == 1 && cs[1].ok;
    } else {
        ok = chan_recv(hand_c, (void *)dst);
    }
    // a value is its seed in the first word, then the seed's pattern
    uint64_t seed = ok ? dst[0] : 0;
    if (ok ? seed == 0 || mismatch((volatile uint8_t *)dst + 8, SMALL_ELEM - 8, seed)
           : mismatch((volatile uint8_t *)dst, SMALL_ELEM, 0))
        kt_add(&hand_bad, 1);
    if (!buf)
        free((void *)dst);
    kt_add(&hand_done, 1);
}

// Every receiver parked, one goroutine sends (or closes) to all of them
// back to back, never yielding, creating nothing, never idle.
static void hand_off(bool select, bool close)
{
    hand_c = chan_make(SMALL_ELEM, 0);
    hand_select = select;
    hand_done = 0;
    kt_fresh_stacks();
    for (int i = 0; i < RECEIVERS; i++)
        go(hand_receiver, 0);
    wait_parked(hand_c, true, RECEIVERS);
    if (close) {
        chan_close(hand_c);
    } else {
        uint8_t *val = malloc(SMALL_ELEM);
        for (uint64_t k = 1; k <= RECEIVERS; k++) {
            memcpy(val, &k, 8);
            for (size_t i = 8; i < SMALL_ELEM; i++)
                val[i] = pattern(k, i - 8);
            chan_send(hand_c, val);
        }
        free(val);
    }
    kt_wait_count(&hand_done, RECEIVERS, KT_STALL_MS);
    chan_free(hand_c);
}

KTEST(chan_8k_handoffs_to_24_parked_receivers)
{
    hand_bad = hand_fresh = 0;
    hand_off(false, false);
    KT_ASSERT_EQ(kt_load(&hand_done), RECEIVERS);
    hand_off(true, false);          // the receivers wait in select
    KT_ASSERT_EQ(kt_load(&hand_done), RECEIVERS);
    hand_off(false, true);          // close zeroes every receiver's buffer
    KT_ASSERT_EQ(kt_load(&hand_done), RECEIVERS);
    printf("ktest: 8 KiB hand-offs: %lu of %d receivers waited on fresh stack pages\n",
           kt_load(&hand_fresh), 3 * RECEIVERS);
    KT_ASSERT(kt_load(&hand_fresh) > 0);
    KT_ASSERT_EQ(kt_load(&hand_bad), 0);
}
