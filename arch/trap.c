// SPDX-License-Identifier: MIT
// The IDT and trap dispatch. An exception nobody claims is fatal: the dump
// names the exception, error code, faulting address, core and goroutine,
// shows every register and a frame-pointer backtrace with symbols, stops
// the other cores and exits non-zero. Never a silent triple fault.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/printf.h"
#include "arch/trap_hooks.h"

struct idt_entry {
    uint16_t off_lo, sel;
    uint8_t ist, type;
    uint16_t off_mid;
    uint32_t off_hi, rsv;
} __attribute__((packed));

_Static_assert(sizeof(struct trapframe) == 176 && __builtin_offsetof(struct trapframe, rsp) == 160,
               "arch/preempt.asm's TF_SIZE and TF_RSP");

static struct idt_entry idt[256] __attribute__((aligned(16)));
extern const uint64_t isr_stubs[256];
static irq_handler_fn irq_handlers[256];
static fault_handler_fn fault_handlers[32];
volatile bool arch_stopping;

static const char *const exc_names[32] = {
    [0] = "#DE divide error", [1] = "#DB debug", [2] = "NMI", [3] = "#BP breakpoint",
    [4] = "#OF overflow", [5] = "#BR bound range", [6] = "#UD invalid opcode",
    [7] = "#NM device not available", [8] = "#DF double fault",
    [10] = "#TS invalid TSS", [11] = "#NP segment not present", [12] = "#SS stack fault",
    [13] = "#GP general protection", [14] = "#PF page fault", [16] = "#MF x87 error",
    [17] = "#AC alignment check", [18] = "#MC machine check", [19] = "#XM SIMD exception",
    [20] = "#VE virtualization", [21] = "#CP control protection",
};

// Interrupts (vectors 32-255) arrive on this core's interrupt stack
// (IST_IRQ), never on the interrupted stack. A goroutine's stack grows by
// page faults, so the page just below its stack pointer may not be mapped:
// an interrupt delivered there would fault while the CPU pushes its frame,
// after the local APIC had already put the vector in service, so its
// handler would never run nor acknowledge it, and that vector would block
// every vector of its priority class on this core for good (all of ours
// share class 0xF: timer, wake-up, preemption, TLB shoot-down). Handlers
// run with interrupts off, so the stack is never entered twice; a
// preemption moves the frame onto the goroutine's stack (arch_preempt),
// after the kernel has mapped the pages it needs (arch_preempt_stack).
void idt_init(void)
{
    for (int v = 0; v < 256; v++) {
        uint64_t off = isr_stubs[v];
        uint8_t ist = 0;
        if (v == 8) ist = IST_DF;
        else if (v == 2) ist = IST_NMI;
        else if (v == 18) ist = IST_MC;
        else if (v == 14) ist = IST_PF;
        else if (v >= 32) ist = IST_IRQ;
        idt[v] = (struct idt_entry){
            .off_lo = off & 0xFFFF, .sel = 0x08, .ist = ist, .type = 0x8E,
            .off_mid = (off >> 16) & 0xFFFF, .off_hi = off >> 32,
        };
    }
}

void idt_load(void)
{
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) idtr = {
        sizeof idt - 1, (uint64_t)idt
    };
    __asm__ volatile("lidt %0" :: "m"(idtr));
}

void arch_set_irq_handler(uint8_t vector, irq_handler_fn fn)
{
    irq_handlers[vector] = fn;
}

void arch_preempt_stack(const struct trapframe *tf, uint64_t *lo, uint64_t *hi)
{
    *hi = tf->rsp;
    *lo = ((tf->rsp & ~15ull) - sizeof *tf) - 64;    // the frame's copy and the switch frame below it (arch/preempt.asm)
}

void arch_set_fault_handler(uint8_t vector, fault_handler_fn fn)
{
    fault_handlers[vector] = fn;
}

static void dump_frame(const struct trapframe *tf)
{
    uint64_t off;
    const char *sym = arch_symbolize(tf->rip, &off);
    kprintf("  rip %016lx <%s+0x%lx>  cs %lx  rflags %08lx\n", tf->rip, sym ? sym : "?", off,
            tf->cs, tf->rflags);
    kprintf("  rsp %016lx  ss %lx  cr2 %016lx  cr3 %016lx\n", tf->rsp, tf->ss, read_cr2(), read_cr3());
    kprintf("  rax %016lx  rbx %016lx  rcx %016lx  rdx %016lx\n", tf->rax, tf->rbx, tf->rcx, tf->rdx);
    kprintf("  rsi %016lx  rdi %016lx  rbp %016lx  r8  %016lx\n", tf->rsi, tf->rdi, tf->rbp, tf->r8);
    kprintf("  r9  %016lx  r10 %016lx  r11 %016lx  r12 %016lx\n", tf->r9, tf->r10, tf->r11, tf->r12);
    kprintf("  r13 %016lx  r14 %016lx  r15 %016lx\n", tf->r13, tf->r14, tf->r15);
}

static void pf_reason(uint64_t err, char *buf, size_t n)
{
    snprintf(buf, n, " [%s, %s%s%s]", (err & 1) ? "protection violation" : "not present",
             (err & 2) ? "write" : "read", (err & 16) ? ", instruction fetch" : "",
             (err & 8) ? ", reserved bit" : "");
}

static __attribute__((noreturn)) void fatal_exception(struct trapframe *tf)
{
    uint64_t v = tf->vector;
    arch_stop_others();
    console_panic_mode();
    char extra[96] = "";
    if (v == 14)
        pf_reason(tf->error, extra, sizeof extra);
    kprintf("\nEXCEPTION %s (vector %lu) on cpu %u, error code 0x%lx%s\n",
            exc_names[v] ? exc_names[v] : "reserved", v, cpu_index(), tf->error, extra);
    if (v == 14)
        kprintf("  faulting address %016lx\n", read_cr2());
    trap_describe_context();
    dump_frame(tf);
    kprintf("backtrace:\n");
    uint64_t off;
    const char *sym = arch_symbolize(tf->rip, &off);
    kprintf("  #0 %016lx %s+0x%lx\n", tf->rip, sym ? sym : "?", off);
    // A frameless leaf (GCC keeps none where no stack is needed) leaves its
    // caller's return address at rsp, which the frame-pointer walk skips.
    if (arch_virt_to_phys(tf->rsp) && arch_virt_to_phys(tf->rsp + 7)) {
        uint64_t ret = *(const uint64_t *)tf->rsp, roff;
        const char *rsym = arch_symbolize(ret - 1, &roff);
        if (rsym)
            kprintf("  #0' %016lx %s+0x%lx (return address at rsp: the caller, if #0 is a frameless leaf)\n",
                    ret, rsym, roff + 1);
    }
    arch_backtrace(tf->rbp, 32);
    arch_exit(ARCH_EXIT_FATAL);
}

// Per core: a report that arch_report_cpu asked for, printed by its NMI.
static const char *volatile report_why[MAX_CPUS];

void arch_report_cpu(uint32_t cpu, const char *why)
{
    // acq_rel: release publishes why to the NMI's acquire; acquire pairs
    // with the NMI's release of the previous report.
    if (__atomic_exchange_n(&report_why[cpu], why, __ATOMIC_ACQ_REL))
        return;     // one report at a time per core
    lapic_send(cpus[cpu].apic_id, ICR_NMI | ICR_ASSERT);
}

// An NMI from outside (QEMU's monitor `nmi`, which the test runner sends
// to a hung guest; a hardware NMI button) reaches every core: each says
// where it is, and the first, once the others have spoken or 50 ms have
// passed, prints the scheduler's state and ends the machine, as Go's
// SIGQUIT dump does. A core that does not answer kept its NMI blocked.
static uint32_t outside_nmi_seen;   // cores that took it; acq_rel below
static uint8_t outside_nmi_dumper;  // the core that dumps; exchanged once

static void outside_nmi(struct trapframe *tf)
{
    uint64_t off;
    const char *sym = arch_symbolize(tf->rip, &off);
    kprintf("NMI: core %u is at %016lx %s+0x%lx, interrupts %s\n", cpu_index(), tf->rip,
            sym ? sym : "?", off, (tf->rflags & (1u << 9)) ? "on" : "off");
    trap_describe_context();
    arch_backtrace(tf->rbp, 12);
    __atomic_fetch_add(&outside_nmi_seen, 1, __ATOMIC_ACQ_REL);    // acq_rel: our lines are out before the dumper reads the count
    if (__atomic_exchange_n(&outside_nmi_dumper, 1, __ATOMIC_ACQ_REL))    // one dumper
        for (;;)
            __asm__ volatile("cli; hlt");
    uint64_t end = arch_cycles() + arch_ns_to_cycles(50000000);
    while (__atomic_load_n(&outside_nmi_seen, __ATOMIC_ACQUIRE) < arch_ncpu() &&    // pairs with the fetch_add
           arch_cycles() < end)
        cpu_relax();
    console_panic_mode();           // a core that took its NMI holding the console's lock never lets go
    kprintf("NMI from outside: %u of %u cores answered; the scheduler's state:\n",
            __atomic_load_n(&outside_nmi_seen, __ATOMIC_ACQUIRE), arch_ncpu());      // pairs with the fetch_add
    trap_dump_sched_state();
    arch_exit(ARCH_EXIT_FATAL);
}

// An NMI is the stop request of a core that is going down, a report
// (arch_report_cpu: where this core is, even with interrupts off), or one
// from outside (outside_nmi).
static void nmi(struct trapframe *tf)
{
    if (arch_stopping) {
        for (;;)
            __asm__ volatile("cli; hlt");
    }
    const char *why = __atomic_load_n(&report_why[cpu_index()], __ATOMIC_ACQUIRE);    // acquire: pairs with arch_report_cpu
    if (why) {
        uint64_t off;
        const char *sym = arch_symbolize(tf->rip, &off);
        char isr[32] = "";
        if (arch_irq_in_service())     // an interrupt handler's, or one never acknowledged
            snprintf(isr, sizeof isr, ", vector %u in service", arch_irq_in_service());
        kprintf("core %u: %s; it is at %016lx %s+0x%lx, interrupts %s%s\n", cpu_index(), why, tf->rip,
                sym ? sym : "?", off, (tf->rflags & (1u << 9)) ? "on" : "off", isr);
        arch_backtrace(tf->rbp, 8);
        __atomic_store_n(&report_why[cpu_index()], 0, __ATOMIC_RELEASE);  // release: the report is out; pairs with arch_report_cpu
        return;
    }
    outside_nmi(tf);
}

struct trapframe *trap_dispatch(struct trapframe *tf)
{
    uint64_t v = tf->vector;
    if (v < 32) {
        if (v == 2) {
            nmi(tf);
            return tf;
        }
        if (v == 3 && static_branch_trap(&tf->rip))
            return tf;              // a site met while static_branch_set_live changes it
        if (fault_handlers[v] &&
            fault_handlers[v](v, tf->error, read_cr2(), tf->rip, tf->rflags & (1u << 9)))
            return tf;
        fatal_exception(tf);
    }
    if (v == VEC_SPURIOUS)
        return tf;
    if (irq_handlers[v])
        irq_handlers[v]((uint8_t)v);
    else
        kprintf("trap: unexpected interrupt vector %lu on cpu %u\n", v, cpu_index());
    lapic_eoi();
    return trap_switch_hook(tf);
}

void arch_stop_others(void)
{
    if (__atomic_exchange_n(&arch_stopping, true, __ATOMIC_ACQ_REL))   // acq_rel: one core stops the others
        return;     // another core is already stopping everyone
    if (arch_ncpu() > 1)
        lapic_send(0, ICR_NMI | ICR_ASSERT | ICR_ALL_BUT_SELF);
}
