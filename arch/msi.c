// SPDX-License-Identifier: MIT
// Device interrupts by message (MSI and MSI-X): the vectors devices may
// use, and the address and data a device writes to interrupt one core.
//
// The message is the local APIC's: address 0xFEE00000 with the target's
// APIC id in bits 19:12 (physical destination, no redirection hint), data
// the vector with fixed delivery and edge trigger (Intel SDM vol. 3,
// 11.11). The destination field has 8 bits, so a core whose APIC id is
// above 255 (x2APIC machines with many cores) cannot be named without
// interrupt remapping, which goro does not program; arch_irq_cpu is the
// one place that rule lives.
#include "arch/arch_private.h"
#include "lib/panic.h"
#include "lib/printf.h"

#define MSI_ADDR_BASE 0xFEE00000u
#define MSI_DEST_SHIFT 12
#define MSI_MAX_DEST 0xFFu

// One bit per vector of [ARCH_DEV_VEC_FIRST, ARCH_DEV_VEC_LAST]; a set
// bit is taken. Compare-and-swap: any core, any context.
#define NDEV_VEC (ARCH_DEV_VEC_LAST - ARCH_DEV_VEC_FIRST + 1)
static uint64_t taken[(NDEV_VEC + 63) / 64];

int arch_irq_alloc_vector(void)
{
    for (uint32_t i = 0; i < NDEV_VEC; i++) {
        uint64_t *w = &taken[i / 64], bit = 1ull << (i % 64);
        uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);    // relaxed: the CAS below decides
        while (!(old & bit)) {
            // relaxed: the vector's handler is registered after, by its owner, before any device can use it
            if (__atomic_compare_exchange_n(w, &old, old | bit, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                return (int)(ARCH_DEV_VEC_FIRST + i);
        }
    }
    return -1;
}

void arch_irq_free_vector(uint8_t vector)
{
    ASSERT(vector >= ARCH_DEV_VEC_FIRST && vector <= ARCH_DEV_VEC_LAST);
    uint32_t i = vector - ARCH_DEV_VEC_FIRST;
    arch_set_irq_handler(vector, 0);
    __atomic_fetch_and(&taken[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);  // release: the handler's removal before reuse
}

static bool reachable(uint32_t cpu)
{
    return arch_cpu(cpu)->apic_id <= MSI_MAX_DEST;
}

// Whether the one line naming the rule has been printed (exchange,
// relaxed: a flag for one line, ordering nothing).
static uint8_t rerouted_said;

uint32_t arch_irq_cpu(uint32_t cpu)
{
    uint32_t n = arch_ncpu();
    ASSERT(cpu < n);
    if (reachable(cpu))
        return cpu;
    // Spread the unreachable cores' interrupts over the reachable ones
    // (the boot core always is: it has APIC id 0 on every PC we boot, and
    // the loop finds whichever do).
    uint32_t nreach = 0;
    for (uint32_t i = 0; i < n; i++)
        nreach += reachable(i);
    ASSERT(nreach > 0);
    uint32_t pick = cpu % nreach, to = 0;
    for (uint32_t i = 0; i < n; i++)
        if (reachable(i) && pick-- == 0) {
            to = i;
            break;
        }
    ASSERT(reachable(to));
    if (!__atomic_exchange_n(&rerouted_said, 1, __ATOMIC_RELAXED))     // relaxed: see rerouted_said
        kprintf("irq: core %u (APIC id %u) is beyond a device message's 8-bit destination and goro "
                "programs no interrupt remapping: its device interrupts go to core %u, and so for "
                "every core above APIC id %u\n", cpu, arch_cpu(cpu)->apic_id, to, MSI_MAX_DEST);
    return to;
}

void arch_msi_message(uint32_t cpu, uint8_t vector, uint64_t *addr, uint32_t *data)
{
    ASSERT(cpu < arch_ncpu() && reachable(cpu));
    ASSERT(vector >= ARCH_DEV_VEC_FIRST && vector <= ARCH_DEV_VEC_LAST);
    *addr = MSI_ADDR_BASE | (arch_cpu(cpu)->apic_id << MSI_DEST_SHIFT);
    *data = vector;     // fixed delivery, edge, assert: all zero bits
}
