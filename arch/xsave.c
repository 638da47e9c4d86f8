// SPDX-License-Identifier: MIT
// Vector state for preempted goroutines: XSAVEOPT (or XSAVE) of every
// component enabled in XCR0, area size from CPUID 0xD; FXSAVE on CPUs
// without XSAVE. Voluntary switches never get here: the ABI makes vector
// registers caller-saved.
#include "arch/arch_private.h"
#include "arch/x86.h"

enum { XS_NONE, XS_FXSAVE, XS_XSAVE, XS_XSAVEOPT };
static int xs_kind;
static uint32_t xs_size;

// Boot core, after fpu_init.
void xsave_init(bool simd)
{
    if (!simd) {
        xs_kind = XS_NONE;
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
    return xs_kind == XS_NONE ? 0 : xs_size;
}

// area: 64-byte aligned, arch_xsave_size() bytes, zeroed before first use.
void arch_xsave(void *area)
{
    if (!area)
        return;
    switch (xs_kind) {
    case XS_XSAVEOPT:
        __asm__ volatile("xsaveopt64 (%0)" :: "r"(area), "a"(~0u), "d"(~0u) : "memory");
        break;
    case XS_XSAVE:
        __asm__ volatile("xsave64 (%0)" :: "r"(area), "a"(~0u), "d"(~0u) : "memory");
        break;
    case XS_FXSAVE:
        __asm__ volatile("fxsave64 (%0)" :: "r"(area) : "memory");
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
    }
}

extern const uint8_t preempt_resume[], preempt_resume_end[];

// True when the interrupted code must not be preempted by arch_preempt.
bool arch_preempt_unsafe(const struct trapframe *tf)
{
    return tf->rip >= (uint64_t)preempt_resume && tf->rip < (uint64_t)preempt_resume_end;
}
