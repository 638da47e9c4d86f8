// SPDX-License-Identifier: MIT
// Declarations shared among arch/ files only.
#ifndef GORO_ARCH_PRIVATE_H
#define GORO_ARCH_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/arch.h"

// IST slots (TSS.ist[n-1] holds slot n): one stack each for the faults
// that must not run on the faulting stack, and one for every interrupt
// (vectors 32-255): an interrupt is never delivered onto a goroutine's
// stack, whose next page down may not be mapped yet (arch/trap.c).
enum { IST_DF = 1, IST_NMI = 2, IST_MC = 3, IST_PF = 4, IST_COUNT = 4, IST_IRQ = 5 };

extern struct cpu cpus[MAX_CPUS];
// The allocator kernel/ gave arch_platform_init.
extern struct arch_page_allocator arch_pages;

struct trapframe {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;      // pushed by the CPU
};

// inject=ap-silent (arch/inject.c): this AP must halt before it answers.
bool ap_never_answers(uint32_t apic_id);

void cpu_set_gs(uint32_t index);
void cpu_init_descriptors(uint32_t index);
void idt_init(void);
void idt_load(void);
void fpu_init(bool simd);
void paging_init(void);
void paging_map_4k(uint64_t va, uint64_t pa);
void paging_ensure_tables(uint64_t va);
bool paging_set_pte(uint64_t va, uint64_t pa);
bool paging_mapped(uint64_t va);    // a present page maps va (any page size); lock-free
void tsc_calibrate(void);
void tsc_delay_us(uint64_t us);
void timer_calibrate(void);
void timer_init_cpu(void);
void xsave_init(bool simd);
void tlb_init(void);           // arch/tlb.c: the shoot-down IPI's handler

// Local APIC (arch/lapic.c)
void lapic_init(void);
uint32_t lapic_id(void);
bool lapic_x2apic(void);
void lapic_eoi(void);
void lapic_send(uint32_t apic_id, uint32_t icr_low);
#define ICR_FIXED       0x00000u
#define ICR_NMI         0x00400u
#define ICR_INIT        0x00500u
#define ICR_STARTUP     0x00600u
#define ICR_ASSERT      0x04000u
#define ICR_LEVEL       0x08000u
#define ICR_ALL_BUT_SELF 0xC0000u

// Exception dump (arch/trap.c), used by the NMI stop path too.
extern volatile bool arch_stopping;

#endif
