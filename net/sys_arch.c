// SPDX-License-Identifier: MIT
// lwIP's system layer with NO_SYS (lwIP's sys.h, and its
// doc/NO_SYS_SampleCode.c): no threads, semaphores, mailboxes or mutexes are asked for,
// since every lwIP call is made under net/stack.c's lock. What remains:
//  - sys_now: milliseconds, for lwIP's timeouts and TCP's clocks. lwIP
//    wants a counter that wraps at 2^32 and compares differences only;
//    nanotime / 10^6 truncated is that.
//  - LWIP_RAND (arch/cc.h): TCP's initial sequence numbers, the first
//    ephemeral port, DHCP's transaction ids. A xorshift generator seeded
//    from the TSC at start (its low bits differ from boot to boot by the
//    boot's own jitter), called under the stack lock only.
#include "net/sys_arch.h"
#include "net/stack.h"
#include "goro.h"
#include <lwip/sys.h>

static uint64_t rand_state;     // stack lock held (sys_arch_init: before anyone else)

u32_t sys_now(void)
{
    return (u32_t)(nanotime() / 1000000);
}

void sys_arch_init(void)
{
    uint64_t x = cputicks() * 0x9E3779B97F4A7C15ull;
    rand_state = x ? x : 1;
}

uint32_t net_rand(void)
{
    net_assert_locked();
    uint64_t x = rand_state;    // xorshift64*
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rand_state = x;
    return (uint32_t)((x * 2685821657736338717ull) >> 32);
}
