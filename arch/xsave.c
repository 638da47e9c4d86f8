// SPDX-License-Identifier: MIT
// Vector and x87 state for preempted goroutines: XSAVEOPT (or XSAVE) of
// every component enabled in XCR0, area size from CPUID 0xD; FXSAVE on
// CPUs without XSAVE; FNSAVE with simd=off, where the SSE state is off but
// the x87 unit still works (and a goroutine's long double lives there).
// Voluntary switches never get here: the ABI makes vector and x87
// registers caller-saved, and the x87 stack empty at every call.
//
// After the save the x87 unit is reset (FNSAVE does that itself): the
// preempted goroutine's x87 stack may be full, and the goroutine that runs
// next on this core, resumed from a voluntary switch or started afresh,
// restores only the control words (arch/switch.asm) and must find the
// stack empty, as the ABI promises it at every call. Left loaded, its
// first fld overflows the stack on hardware (the result is the NaN
// indefinite); TCG overwrites silently.
#include "arch/arch_private.h"
#include "arch/x86.h"

enum { XS_FNSAVE, XS_FXSAVE, XS_XSAVE, XS_XSAVEOPT };
static int xs_kind;
static uint32_t xs_size;

#define FNSAVE_SIZE 108             // the 64-bit FNSAVE image: environment and 8 x 10-byte registers

// Boot core, after fpu_init.
void xsave_init(bool simd)
{
    if (!simd) {
        xs_kind = XS_FNSAVE;
        xs_size = FNSAVE_SIZE;
        return;
    }
    if (cpuid(1, 0).ecx & (1u << 26)) {
        xs_size = cpuid(0xD, 0).ebx;
        xs_kind = (cpuid(0xD, 1).eax & 1) ? XS_XSAVEOPT : XS_XSAVE;
    } else {
        xs_size = 512;
        xs_kind = XS_FXSAVE;
    }
}

uint32_t arch_xsave_size(void)
{
    return xs_size;
}

// area: 64-byte aligned, arch_xsave_size() bytes, zeroed before first use.
// Leaves the x87 unit reset (see the top).
void arch_xsave(void *area)
{
    if (!area)
        return;
    switch (xs_kind) {
    case XS_XSAVEOPT:
        __asm__ volatile("xsaveopt64 (%0); fninit" :: "r"(area), "a"(~0u), "d"(~0u) : "memory");
        break;
    case XS_XSAVE:
        __asm__ volatile("xsave64 (%0); fninit" :: "r"(area), "a"(~0u), "d"(~0u) : "memory");
        break;
    case XS_FXSAVE:
        __asm__ volatile("fxsave64 (%0); fninit" :: "r"(area) : "memory");
        break;
    case XS_FNSAVE:
        __asm__ volatile("fnsave (%0)" :: "r"(area) : "memory");     // resets the unit itself
        break;
    }
}

void arch_xrstor(void *area)
{
    if (!area)
        return;
    switch (xs_kind) {
    case XS_XSAVEOPT:
    case XS_XSAVE:
        __asm__ volatile("xrstor64 (%0)" :: "r"(area), "a"(~0u), "d"(~0u) : "memory");
        break;
    case XS_FXSAVE:
        __asm__ volatile("fxrstor64 (%0)" :: "r"(area) : "memory");
        break;
    case XS_FNSAVE:
        __asm__ volatile("frstor (%0)" :: "r"(area) : "memory");
        break;
    }
}

extern const uint8_t preempt_resume[], preempt_resume_end[];

// True when the interrupted code must not be preempted by arch_preempt.
bool arch_preempt_unsafe(const struct trapframe *tf)
{
    return tf->rip >= (uint64_t)preempt_resume && tf->rip < (uint64_t)preempt_resume_end;
}
