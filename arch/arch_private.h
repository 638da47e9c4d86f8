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

extern struct cpu cpus[MAX_CPUS];     // by start-up slot (arch/cpu.c)
extern struct cpu *cpu_of[MAX_CPUS];   // by dense index
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

// A core's fault and interrupt stacks (arch/cpu.c): one for each IST
// fault and one for interrupts, their tops.
#define ARCH_IST_STACK_SIZE 8192
#define ARCH_IRQ_STACK_SIZE 16384   // interrupt handlers run here (sysmon's prints among them)
struct cpu_stacks {
    uint64_t ist[IST_COUNT];
    uint64_t irq;
};
void cpu_set_gs(uint32_t slot);
void cpu_init_descriptors(uint32_t slot, const struct cpu_stacks *t);
void cpu_use_stacks(uint32_t slot, const struct cpu_stacks *t);     // this core's own slot, interrupts off
void idt_init(void);
void idt_load(void);
void fpu_init(bool simd);
void paging_init(void);
void paging_map_4k(uint64_t va, uint64_t pa);
void paging_ensure_tables(uint64_t va);
enum arch_stack_map paging_install_pte(uint64_t va, uint64_t pa);
bool paging_mapped(uint64_t va);    // a present page maps va (any page size); lock-free
// Reference clocks (arch/refclock.c) for measuring the TSC.
struct refclock {
    const char *name;
    uint64_t hz;
    uint64_t mask;              // the counter's width
    bool down;                  // counts down (the PIT)
    bool refinable;             // may be read while the machine runs
    uint64_t (*read)(void);
};
// A reading: the TSC at the bracket's midpoint, within +-half cycles.
struct refsample {
    uint64_t tsc;
    uint64_t half;
    uint64_t count;
};
bool refclock_pick(struct refclock *rc);
bool refclock_sample(const struct refclock *rc, int tries, uint64_t max_half, struct refsample *s);
uint64_t refclock_ticks(const struct refclock *rc, const struct refsample *a, const struct refsample *b);

// The TSC's frequency (arch/tsc.c) and the one-shot timer's (arch/timer.c),
// measured over windows that stay open while the boot goes on
// (arch_clock_begin .. arch_clock_end, arch/platform.c).
void tsc_calibrate_begin(void);
void tsc_calibrate_mark(void);
void tsc_calibrate_end(void);
void tsc_report(void);
void tsc_delay_us(uint64_t us);
// AP start-up (arch/smp.c). A core waiting on another spins for a while,
// then halts until nudged (VEC_SMP_NUDGE, a no-op handler): see smp.c.
#define VEC_SMP_NUDGE 0xF4
#define SMP_SPIN_US 20
void smp_nudge_boot_core(void);
bool smp_slot_late(uint32_t slot);          // the boot core gave up on this AP
uint32_t smp_send_to_checked_in(uint32_t icr);  // each other core with an IDT, by APIC id; how many
bool smp_slot_setting_up(uint32_t slot);    // checked in, neither ready nor late (seq_cst)
void __attribute__((noreturn)) smp_ap_halt(void);   // interrupts off, for good
// arch_report_cpu for an AP not numbered yet: by its start-up slot (its
// index until then) and APIC id.
bool arch_report_slot(uint32_t slot, uint32_t apic_id, const char *why);

// The TSC check at bring-up (arch/tsc_sync.c), by start-up slot.
uint32_t tsc_sync_serve(uint32_t nslots);
bool tsc_sync_pending(uint32_t nslots);
void tsc_sync_ap(uint32_t slot);
uint64_t tsc_sync_report(uint32_t slot, uint32_t index);
void tsc_sync_release(uint32_t slot);
void tsc_sync_pass_turn(uint32_t slot);
// Boot core: the TSC check's state of the AP at slot, for a report.
void tsc_sync_describe(uint32_t slot, char *buf, size_t len);
void timer_calibrate_begin(void);
void timer_calibrate_end(void);
void timer_report(void);
void timer_init_cpu(void);
void xsave_init(bool simd);
void tlb_init(void);           // arch/tlb.c: the shoot-down IPI's handler

// Local APIC (arch/lapic.c)
void lapic_init(void);         // the boot core
void lapic_enable(void);       // every core; all an AP needs after its INIT
uint32_t lapic_id(void);
bool lapic_x2apic(void);
void lapic_eoi(void);
void lapic_send(uint32_t apic_id, uint32_t icr_low);
// The local APIC timer, for arch/timer.c.
void lapic_timer_oneshot(uint32_t count, uint8_t vector);
uint32_t lapic_timer_current(void);
void lapic_timer_stop(void);
void lapic_timer_deadline_mode(uint8_t vector);
void lapic_timer_mask(void);
#define ICR_FIXED       0x00000u
#define ICR_NMI         0x00400u
#define ICR_INIT        0x00500u
#define ICR_STARTUP     0x00600u
#define ICR_ASSERT      0x04000u
#define ICR_LEVEL       0x08000u
#define ICR_ALL_BUT_SELF 0xC0000u

// Ends the halt of a core waiting in the start-up (VEC_SMP_NUDGE), by its
// APIC id: the cores' numbers (arch_send_ipi) do not exist yet.
static inline void smp_nudge(uint32_t apic_id)
{
    lapic_send(apic_id, ICR_FIXED | ICR_ASSERT | VEC_SMP_NUDGE);
}

#endif
