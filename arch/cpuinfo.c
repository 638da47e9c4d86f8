// SPDX-License-Identifier: MIT
// What machine this is, for benchmark configuration lines.
#include "arch/arch.h"
#include "arch/x86.h"
#include "lib/string.h"

void arch_cpu_model(char *buf, size_t n)
{
    char s[49] = { 0 };
    if (cpuid(0x80000000, 0).eax >= 0x80000004) {
        for (uint32_t i = 0; i < 3; i++) {
            struct cpuid_regs r = cpuid(0x80000002 + i, 0);
            memcpy(s + 16 * i, &r, 16);
        }
    }
    const char *p = s;
    while (*p == ' ')
        p++;
    size_t k = strnlen(p, n - 1);
    memcpy(buf, p, k);
    buf[k] = 0;
}

bool arch_under_hypervisor(void)
{
    return cpuid(1, 0).ecx & (1u << 31);
}

// "tcg", "kvm", another hypervisor's name (leaf 0x40000000's signature),
// or "native" (no hypervisor bit).
const char *arch_accel(void)
{
    if (!arch_under_hypervisor())
        return "native";
    struct cpuid_regs r = cpuid(0x40000000, 0);
    char sig[13];
    memcpy(sig, &r.ebx, 4);
    memcpy(sig + 4, &r.ecx, 4);
    memcpy(sig + 8, &r.edx, 4);
    sig[12] = 0;
    if (memcmp(sig, "TCGTCGTCGTCG", 12) == 0)
        return "tcg";
    if (memcmp(sig, "KVMKVMKVM", 9) == 0)
        return "kvm";
    return "hypervisor";
}

// AVX2 usable: the CPU has it and fpu_init enabled AVX state in XCR0.
bool arch_has_avx2(void)
{
    if (!arch_simd_enabled || !(cpuid(1, 0).ecx & (1u << 27)) || cpuid(0, 0).eax < 7)
        return false;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6) == 6 && (cpuid(7, 0).ebx & (1u << 5));
}
