// SPDX-License-Identifier: MIT
// SSE and AVX on every core. Applications may use vector registers (the
// kernel is compiled without them). XCR0 enables every state component the
// CPU supports among x87, SSE, AVX and AVX-512, so that code compiled for
// any of them runs; XSAVE area size is taken from CPUID 0xD when the
// preemption code needs it.
//
// simd=off skips all of it, for this machine's PVM KVM, where any SSE or
// xsetbv instruction at ring 0 kills the guest.
#include "arch/arch_private.h"
#include "arch/x86.h"

#define XCR0_X87    (1ull << 0)
#define XCR0_SSE    (1ull << 1)
#define XCR0_AVX    (1ull << 2)
#define XCR0_AVX512 (7ull << 5)     // opmask, ZMM_Hi256, Hi16_ZMM

bool arch_simd_enabled;        // read by arch/switch.asm

extern uint8_t switch_fp_save[], switch_fp_restore[];

// Boot core only, before any goroutine switch: the switch code's MXCSR
// save and restore (its first 4 bytes each, stmxcsr/ldmxcsr, which fault
// with CR4.OSFXSR clear) become NOPs (0F 1F 40 00 is the 4-byte NOP); the
// x87 control word is still saved and restored, the x87 unit being there.
static void switch_drop_mxcsr(void)
{
    static const uint8_t nop4[4] = { 0x0F, 0x1F, 0x40, 0x00 };
    for (int i = 0; i < 4; i++) {
        switch_fp_save[i] = nop4[i];
        switch_fp_restore[i] = nop4[i];
    }
    __asm__ volatile("" ::: "memory");   // a serializing jump follows before either runs
}

void fpu_init(bool simd)
{
    uint64_t cr0 = read_cr0();
    cr0 &= ~(uint64_t)(CR0_EM | CR0_TS);
    cr0 |= CR0_MP | CR0_NE;
    write_cr0(cr0);
    if (!simd) {
        if (cpu_index() == 0)
            switch_drop_mxcsr();
        return;
    }

    struct cpuid_regs r1 = cpuid(1, 0);
    uint64_t cr4 = read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT;
    bool xsave = r1.ecx & (1u << 26);
    if (xsave)
        cr4 |= CR4_OSXSAVE;
    write_cr4(cr4);

    if (xsave) {
        struct cpuid_regs d = cpuid(0xD, 0);
        uint64_t supported = d.eax | ((uint64_t)d.edx << 32);
        uint64_t xcr0 = XCR0_X87 | XCR0_SSE;
        if ((supported & XCR0_AVX) && (r1.ecx & (1u << 28)))
            xcr0 |= XCR0_AVX;
        if ((xcr0 & XCR0_AVX) && (supported & XCR0_AVX512) == XCR0_AVX512)
            xcr0 |= XCR0_AVX512;
        xsetbv(0, xcr0);
    }
    uint32_t mxcsr = 0x1F80;        // all exceptions masked, round to nearest
    __asm__ volatile("fninit; ldmxcsr %0" :: "m"(mxcsr));
}

// The boot core: SIMD on it (each AP follows after go, arch/smp.c) and the
// XSAVE area's layout for preemption.
void arch_simd_init(bool simd)
{
    arch_simd_enabled = simd;
    fpu_init(simd);
    xsave_init(simd);
}
