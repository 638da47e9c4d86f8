// SPDX-License-Identifier: MIT
// The x87 unit across goroutine switches, under a 20 us quantum.
//
// Holders load eight distinct values onto the x87 register stack (full)
// and spin there, so that preemptions take them with the stack loaded;
// then they pop the values and check them. Checkers yield over and over
// and, at every resume, read the x87 tag word, which must say the stack
// is empty (0xFFFF): the ABI has it empty at every call, and a goroutine
// resumed from a voluntary switch or started afresh restores only the
// control words. Fresh goroutines check it as they start.
//
// Before, a preemption saved the state (XSAVE) and left the unit loaded
// for the next goroutine: tens of thousands of dirty resumes a run (on
// hardware its first fld overflows the stack and long double results are
// the NaN indefinite; TCG overwrites silently). With simd=off the x87
// state was not saved at all, and a holder preempted on a core where
// another loaded its own values got those back (the x87-simd-off
// configurations run this file with simd=off).
//
// General registers only: the file runs with simd=off too, where an SSE
// instruction faults; every x87 instruction is inline assembly that
// leaves the stack as it found it.
#pragma GCC target("general-regs-only")
#include "kernel/ktest.h"
#include "goro.h"

#define X87_ROUNDS 6
#define X87_SPIN 40000

static uint64_t x87_stop, x87_holders_done, x87_checkers_done, x87_fresh_started, x87_fresh_done;
static uint64_t x87_dirty, x87_checks, x87_bad_values, x87_rounds;

// The x87 tag word: two bits a register, 11 = empty. FNSTENV masks every
// x87 exception as it stores; FLDENV puts the control word back.
static uint16_t x87_tags(void)
{
    uint8_t env[28];
    __asm__ volatile("fnstenv %0\n\tfldenv %0" : "=m"(env) :: "memory");
    return (uint16_t)(env[8] | env[9] << 8);
}

static void x87_count(uint16_t tags)
{
    kt_add(&x87_checks, 1);
    if (tags != 0xFFFF)
        kt_add(&x87_dirty, 1);
}

// Eight values on the stack, a spin with the stack full (preempted there,
// at a 20 us quantum), the values popped; how many came back changed.
static int x87_hold_round(int32_t base)
{
    int32_t in[8], out[8];
    for (int k = 0; k < 8; k++)
        in[k] = base + k;
    __asm__ volatile("fildl 0(%[in])\n\t"
                     "fildl 4(%[in])\n\t"
                     "fildl 8(%[in])\n\t"
                     "fildl 12(%[in])\n\t"
                     "fildl 16(%[in])\n\t"
                     "fildl 20(%[in])\n\t"
                     "fildl 24(%[in])\n\t"
                     "fildl 28(%[in])\n\t"
                     "mov %[spin], %%ecx\n\t"
                     "1: pause\n\t"
                     "dec %%ecx\n\t"
                     "jnz 1b\n\t"
                     "fistpl 28(%[out])\n\t"
                     "fistpl 24(%[out])\n\t"
                     "fistpl 20(%[out])\n\t"
                     "fistpl 16(%[out])\n\t"
                     "fistpl 12(%[out])\n\t"
                     "fistpl 8(%[out])\n\t"
                     "fistpl 4(%[out])\n\t"
                     "fistpl 0(%[out])"
                     :: [in] "r"(in), [out] "r"(out), [spin] "i"(X87_SPIN)
                     : "rcx", "memory", "cc");
    int bad = 0;
    for (int k = 0; k < 8; k++)
        bad += out[k] != in[k];
    return bad;
}

static void x87_holder(void *arg)
{
    int32_t id = (int32_t)(uintptr_t)arg;
    for (int r = 0; r < X87_ROUNDS; r++) {
        kt_add(&x87_bad_values, (uint64_t)x87_hold_round(id * 1000 + r * 10));
        kt_add(&x87_rounds, 1);
    }
    kt_add(&x87_holders_done, 1);
}

static void x87_fresh(void *arg)
{
    (void)arg;
    x87_count(x87_tags());
    kt_add(&x87_fresh_done, 1);
}

static void x87_checker(void *arg)
{
    (void)arg;
    for (uint64_t n = 1; !kt_load(&x87_stop); n++) {
        gosched();
        x87_count(x87_tags());
        if (n % 16 == 0) {
            kt_add(&x87_fresh_started, 1);
            go(x87_fresh, 0);
        }
    }
    kt_add(&x87_checkers_done, 1);
}

KTEST(x87_stack_empty_at_every_resume_and_values_kept)
{
    x87_stop = x87_holders_done = x87_checkers_done = x87_fresh_started = x87_fresh_done = 0;
    x87_dirty = x87_checks = x87_bad_values = x87_rounds = 0;
    uint64_t q = sched_set_quantum_ns(20000);
    int holders = 2 * num_cpu(), checkers = num_cpu();
    for (int i = 0; i < checkers; i++)
        go(x87_checker, 0);
    for (int i = 0; i < holders; i++)
        go(x87_holder, (void *)(uintptr_t)(i + 1));
    // Progress is a round, not a holder: the holders start together and
    // end together, each after X87_ROUNDS spins, and at 256 vCPUs on a
    // 2-CPU host the first ends over a minute in, past the stall limit.
    // The first wait that stalls, and its count then: once the checkers
    // stop, the rest may well finish before the failure is told.
    const char *stalled = 0;
    uint64_t at = 0, want = (uint64_t)holders * X87_ROUNDS;
    if (!kt_wait_count(&x87_rounds, want, KT_STALL_MS))
        stalled = "held rounds", at = kt_load(&x87_rounds);
    else if (!kt_wait_count(&x87_holders_done, want = (uint64_t)holders, KT_STALL_MS))
        stalled = "holders", at = kt_load(&x87_holders_done);
    kt_store(&x87_stop, 1);
    if (!kt_wait_count(&x87_checkers_done, (uint64_t)checkers, KT_STALL_MS) && !stalled)
        stalled = "checkers", at = kt_load(&x87_checkers_done), want = (uint64_t)checkers;
    if (!kt_wait_count(&x87_fresh_done, kt_load(&x87_fresh_started), KT_STALL_MS) && !stalled)
        stalled = "fresh Gs", at = kt_load(&x87_fresh_done), want = kt_load(&x87_fresh_started);
    sched_set_quantum_ns(q);
    if (stalled)
        KT_FAIL("the %s stalled %d s at %lu of %lu (at the end: %lu of %lu held rounds, %lu of %d "
                "holders, %lu of %d checkers, %lu of %lu fresh Gs done)", stalled, (int)(KT_STALL_MS / 1000),
                at, want, kt_load(&x87_rounds), (uint64_t)holders * X87_ROUNDS, kt_load(&x87_holders_done),
                holders, kt_load(&x87_checkers_done), checkers, kt_load(&x87_fresh_done),
                kt_load(&x87_fresh_started));
    printf("ktest: x87: %lu resumes and starts checked, %lu with the stack not empty; "
           "%lu of %lu values changed over %lu held rounds\n", kt_load(&x87_checks), kt_load(&x87_dirty),
           kt_load(&x87_bad_values), kt_load(&x87_rounds) * 8, kt_load(&x87_rounds));
    KT_ASSERT(kt_load(&x87_checks) > 0);
    KT_ASSERT_EQ(kt_load(&x87_dirty), 0);
    KT_ASSERT_EQ(kt_load(&x87_bad_values), 0);
}
