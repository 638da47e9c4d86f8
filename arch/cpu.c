// SPDX-License-Identifier: MIT
// Per-core state: the struct cpu reached through GS base, and each core's
// GDT and TSS, whose IST stacks give #DF, NMI, #MC and #PF a known-good
// stack even when the faulting code's stack is the problem, and every
// interrupt a stack that is always mapped.
#include <stddef.h>
#include "arch/arch.h"
#include "arch/arch_private.h"
#include "arch/x86.h"

_Static_assert(offsetof(struct cpu, self) == 0, "gs:0 is self");
_Static_assert(offsetof(struct cpu, index) == 8, "gs:8 is index");
_Static_assert(offsetof(struct cpu, apic_id) == 12, "gs:12 is apic_id");
_Static_assert(offsetof(struct cpu, m) == 16, "gs:16 is m");
_Static_assert(offsetof(struct cpu, preempt_count) == 24, "gs:24 is preempt_count");
_Static_assert(offsetof(struct cpu, preempt_pending) == 28, "gs:28 is preempt_pending");

struct tss {
    uint32_t rsv0;
    uint64_t rsp[3];
    uint64_t rsv1;
    uint64_t ist[7];
    uint64_t rsv2;
    uint16_t rsv3;
    uint16_t iomap_base;
} __attribute__((packed));

// GDT: null, 64-bit code (0x08), data (0x10), TSS (0x18, two slots).
struct descriptors {
    uint64_t gdt[5];
    struct tss tss;
} __attribute__((aligned(64)));

// By start-up slot (the boot core is slot 0, the others in MADT order):
// each core's struct cpu and descriptors stay where it set them up. cpu_of
// maps the dense index to them; index == slot unless a core failed to come
// up (arch/smp.c numbers the others densely).
struct cpu cpus[MAX_CPUS];
struct cpu *cpu_of[MAX_CPUS] = { &cpus[0] };
static struct descriptors desc[MAX_CPUS];
// The boot core's IST and interrupt stacks, usable from its first
// instruction. An AP's are its early block's until go, then its own
// (arch/smp.c, which allocates them for the cores it starts, so that the
// image holds stacks for one core rather than for MAX_CPUS).
static uint8_t boot_ist_stacks[IST_COUNT][ARCH_IST_STACK_SIZE] __attribute__((aligned(16)));
static uint8_t boot_irq_stack[ARCH_IRQ_STACK_SIZE] __attribute__((aligned(16)));

// The core at start-up slot `slot`; its index is the slot until
// arch_start_aps numbers the cores.
void cpu_set_gs(uint32_t slot)
{
    struct cpu *c = &cpus[slot];
    c->self = c;
    c->index = slot;
    wrmsr(MSR_GS_BASE, (uint64_t)c);
}

static void gdt_build(struct descriptors *d)
{
    uint64_t base = (uint64_t)&d->tss;
    uint64_t limit = sizeof d->tss - 1;
    d->gdt[0] = 0;
    d->gdt[1] = 0x00AF9A000000FFFFull;
    d->gdt[2] = 0x00CF92000000FFFFull;
    d->gdt[3] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) | (0x89ull << 40) |
                (((limit >> 16) & 0xF) << 48) | (((base >> 24) & 0xFF) << 56);
    d->gdt[4] = base >> 32;
    d->tss.iomap_base = sizeof d->tss;
}

static void gdt_load(struct descriptors *d)
{
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) gdtr = {
        sizeof d->gdt - 1, (uint64_t)d->gdt
    };
    __asm__ volatile(
        "lgdt %0\n"
        "pushq $0x08\n"
        "leaq 1f(%%rip), %%rax\n"
        "pushq %%rax\n"
        "lretq\n"
        "1: movw $0x10, %%ax\n"
        "movw %%ax, %%ds\n"
        "movw %%ax, %%es\n"
        "movw %%ax, %%ss\n"
        "xorl %%eax, %%eax\n"
        "movw %%ax, %%fs\n"
        "movw %%ax, %%gs\n"
        "movw $0x18, %%ax\n"
        "ltr %%ax\n"
        :: "m"(gdtr) : "rax", "memory");
}

// The core at slot points its TSS at the stacks t gives: from its next
// fault or interrupt on, each runs there. Each entry is one aligned-enough
// store, so an NMI meanwhile finds the old stack or the new, both good.
void cpu_use_stacks(uint32_t slot, const struct cpu_stacks *t)
{
    struct descriptors *d = &desc[slot];
    struct cpu *c = &cpus[slot];
    for (int i = 0; i < IST_COUNT; i++) {
        c->ist_stacks[i] = t->ist[i];
        d->tss.ist[i] = t->ist[i];
    }
    d->tss.ist[IST_IRQ - 1] = t->irq;
}

// Loads this core's GDT, TSS (with the stacks t gives) and IDT. Reloading
// %gs zeroes GS base, so it is set again last.
void cpu_init_descriptors(uint32_t slot, const struct cpu_stacks *t)
{
    gdt_build(&desc[slot]);
    cpu_use_stacks(slot, t);
    gdt_load(&desc[slot]);
    cpu_set_gs(slot);
    idt_load();
}

extern uint8_t boot_stack_top[];

// The boot core, first thing: its per-core pointer, descriptors and the
// IDT, so that a fault from here on prints a dump; and its local APIC,
// which starts the APs (arch/smp.c) and times the APIC timer's window.
void arch_early_init(void)
{
    cpu_set_gs(0);
    cpus[0].stack_top = (uint64_t)boot_stack_top;
    idt_init();
    // Link-time constants, no loop: this runs before the APs' start, on the
    // boot's first page (boot/text_order.txt).
    static const struct cpu_stacks t = {
        .ist = { (uint64_t)&boot_ist_stacks[0][ARCH_IST_STACK_SIZE], (uint64_t)&boot_ist_stacks[1][ARCH_IST_STACK_SIZE],
                 (uint64_t)&boot_ist_stacks[2][ARCH_IST_STACK_SIZE], (uint64_t)&boot_ist_stacks[3][ARCH_IST_STACK_SIZE] },
        .irq = (uint64_t)&boot_irq_stack[ARCH_IRQ_STACK_SIZE],
    };
    _Static_assert(IST_COUNT == 4, "one initializer per IST stack");
    cpu_init_descriptors(0, &t);
    lapic_init();
}

struct cpu *arch_cpu(uint32_t index)
{
    return cpu_of[index];
}
