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

#define IST_STACK_SIZE 8192
#define IRQ_STACK_SIZE 16384        // interrupt handlers run here (sysmon's prints among them)
struct cpu cpus[MAX_CPUS];
static struct descriptors desc[MAX_CPUS];
static uint8_t ist_stacks[MAX_CPUS][IST_COUNT][IST_STACK_SIZE] __attribute__((aligned(16)));
static uint8_t irq_stacks[MAX_CPUS][IRQ_STACK_SIZE] __attribute__((aligned(16)));

void cpu_set_gs(uint32_t index)
{
    struct cpu *c = &cpus[index];
    c->self = c;
    c->index = index;
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

// Loads this core's GDT, TSS and IDT. Reloading %gs zeroes GS base, so it
// is set again last.
void cpu_init_descriptors(uint32_t index)
{
    struct descriptors *d = &desc[index];
    struct cpu *c = &cpus[index];
    gdt_build(d);
    for (int i = 0; i < IST_COUNT; i++) {
        c->ist_stacks[i] = (uint64_t)&ist_stacks[index][i][IST_STACK_SIZE];
        d->tss.ist[i] = c->ist_stacks[i];
    }
    d->tss.ist[IST_IRQ - 1] = (uint64_t)&irq_stacks[index][IRQ_STACK_SIZE];
    gdt_load(d);
    cpu_set_gs(index);
    idt_load();
}

struct cpu *arch_cpu(uint32_t index)
{
    return &cpus[index];
}
