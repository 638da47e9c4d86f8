// SPDX-License-Identifier: MIT
// Patched branches (Linux's static keys, in miniature): a site is a 5-byte
// NOP, so while its key is off it costs one instruction and no memory
// access; static_branch_enable rewrites every site of the key into a jmp to
// its out-of-line block at boot, static_branch_set_live either way while
// the machine runs. For switches that guard hot paths (trace=, and the
// shell's trace on|off).
//
// Must hold: static_branch_enable runs on the boot core before any other
// core runs (arch_start_aps), with the kernel's own page tables in place;
// no core executes a site while it is rewritten, so no cross-modification
// rules apply. The kernel image is one writable segment (linker.ld).
// static_branch_set_live flips a key while every core runs, with the
// protocol of Linux's text_poke_bp (see arch/static_branch.c); its caller
// stays on its core (preemption disabled), as arch_tlb_shootdown's must.
#ifndef GORO_STATIC_BRANCH_H
#define GORO_STATIC_BRANCH_H

#include <stdbool.h>
#include <stdint.h>

struct static_key {
    bool enabled;                   // static_branch_enable has patched its sites
};

// True once key is enabled. key must be a global: always inlined, its
// address is a link-time constant recorded beside the site.
#ifdef GORO_NO_STATIC_BRANCHES
// make NOHOOKS=1: no site at all, the branch never taken (the baseline of
// make hooks-off-test; the tools cannot be turned on in such an image).
static inline __attribute__((always_inline)) bool static_branch_unlikely(struct static_key *key)
{
    (void)key;
    return false;
}
#else
static inline __attribute__((always_inline)) bool static_branch_unlikely(struct static_key *key)
{
    __asm__ goto("1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"
                 ".pushsection .static_branch, \"a\"\n\t"
                 ".balign 8\n\t"
                 ".quad 1b, %l[on], %c0\n\t"
                 ".popsection"
                 : : "i"(key) : : on);
    return false;
on:
    return true;
}
#endif

// Calls fn(a, b) from a static branch's out-of-line block without
// clobbering any general register (arch/coldcall.asm). The arguments go on
// the stack from whatever register or constant they are in, so the block
// pins no register and costs the hot path no spills or moves. fn must be
// kernel code (no vector registers); a must be a constant, b a value.
#define static_branch_call2(fn, a, b)                                              \
    __asm__ volatile("pushq %2\n\tpushq %1\n\tpushq %0\n\tcall arch_call_saving_all"   \
                     : : "i"(fn), "i"(a), "r"(b) : "memory", "cc")

// Boot core, before arch_start_aps: every site of key jumps from now on.
// Returns how many sites were patched.
unsigned static_branch_enable(struct static_key *key);
// Any time, from a goroutine with interrupts on: every site of key jumps
// (on) or falls through (off) from now on, while the other cores run. A
// core that reaches a site during the change falls through, as if the key
// were off. One change at a time (callers wait for each other). Returns
// how many sites changed.
unsigned static_branch_set_live(struct static_key *key, bool on);
// The #BP handler's question (arch/trap.c): an int3 at *rip - 1 that is a
// site being changed resumes at the site's end (*rip moved), true; false
// for any other int3.
bool static_branch_trap(uint64_t *rip);
// How many int3s at sites static_branch_trap has handled; *stale: how
// many of them at a site that no longer held one (for tests).
uint64_t static_branch_traps(uint64_t *stale);

#endif
