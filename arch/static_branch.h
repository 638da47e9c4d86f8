// SPDX-License-Identifier: MIT
// Branches patched once at boot (Linux's static keys, in miniature): a site
// is a 5-byte NOP, so while its key is off it costs one instruction and no
// memory access; static_branch_enable rewrites every site of the key into a
// jmp to its out-of-line block. For switches set from the command line that
// guard hot paths (trace=).
//
// Must hold: keys are enabled on the boot core before any other core runs
// (arch_start_aps), with the kernel's own page tables in place; no core
// executes a site while it is rewritten, so no cross-modification rules
// apply. The kernel image is one writable segment (linker.ld).
#ifndef GORO_STATIC_BRANCH_H
#define GORO_STATIC_BRANCH_H

#include <stdbool.h>

struct static_key {
    bool enabled;                   // static_branch_enable has patched its sites
};

// True once key is enabled. key must be a global: always inlined, its
// address is a link-time constant recorded beside the site.
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

#endif
