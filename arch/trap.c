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
// 0, or the index + 1 of the core stopping the others (arch_stop_others*):
// an NMI stops every core but that one, which may still be asked for a
// report (a debug build's sysmon sees its interrupts off while it waits
// for the others, and asks; the stopper halting there never exited).
static uint32_t arch_stopping;
static uint32_t arch_nstopped;      // cores halted by arch_stop_others (its IPI or NMI)
static bool arch_stopped_here[MAX_CPUS];    // each written by its own core, once

// Counts this core as stopped (once) and halts it for good.
static __attribute__((noreturn)) void stop_here(void)
{
    if (!arch_stopped_here[cpu_index()]) {
        arch_stopped_here[cpu_index()] = true;
        __atomic_fetch_add(&arch_nstopped, 1, __ATOMIC_RELEASE);  // release: this core's last writes (trace rings, metrics) are done; pairs with wait_stopped's acquire
    }
    for (;;)
        __asm__ volatile("cli; hlt");
}

static void stop_ipi(uint8_t vector)
{
    (void)vector;
    stop_here();
}

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

// The frame of the interrupt each core is handling (or handled last):
// written by that core only, with interrupts off, before its handler runs.
static struct trapframe *irq_frame[MAX_CPUS];

bool arch_irq_context(struct arch_irq_ctx *c)
{
    const struct trapframe *tf = irq_frame[cpu_index()];
    if (!tf)
        return false;
    c->rip = tf->rip;
    c->rbp = tf->rbp;
    c->rsp = tf->rsp;
    c->irqs_on = tf->rflags & (1u << 9);
    return true;
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

// Per core: a fatal report is being printed (arch_fatal_dump_begin).
// Written and read by that core only.
static bool dumping[MAX_CPUS];

void arch_fatal_dump_begin(void)
{
    dumping[cpu_index()] = true;
}

bool arch_mapped(uint64_t va)
{
    return paging_mapped(va);
}

// A fault while this core prints a fatal report: one line, and the end.
// The report's frames are gone (this fault came on the same IST stack, or
// the dump itself is what broke), so nothing returns to it.
static __attribute__((noreturn)) void fault_in_dump(const struct trapframe *tf)
{
    uint64_t v = tf->vector, off;
    const char *sym = arch_symbolize(tf->rip, &off);
    kprintf("\nEXCEPTION %s (vector %lu) on cpu %u inside the fatal report at %016lx <%s+0x%lx>, "
            "address %016lx: the report stops here\n", exc_names[v] ? exc_names[v] : "reserved", v,
            cpu_index(), tf->rip, sym ? sym : "?", off, v == 14 ? read_cr2() : 0);
    arch_exit(ARCH_EXIT_FATAL);
}

static __attribute__((noreturn)) void fatal_exception(struct trapframe *tf)
{
    uint64_t v = tf->vector;
    arch_fatal_dump_begin();
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
    // Read only where a page maps it: a wild rsp is what some faults are.
    if (!(tf->rsp & 7) && paging_mapped(tf->rsp)) {
        uint64_t ret = *(const uint64_t *)tf->rsp, roff;
        const char *rsym = arch_symbolize(ret - 1, &roff);
        if (rsym)
            kprintf("  #0' %016lx %s+0x%lx (return address at rsp: the caller, if #0 is a frameless leaf)\n",
                    ret, rsym, roff + 1);
    }
    arch_backtrace(tf->rbp, 32);
    arch_exit(ARCH_EXIT_FATAL);
}

// Per core: a report that arch_report_cpu asked for, recorded by its NMI
// and printed by arch_report_flush. state moves FREE -> CLAIMED -> ASKED
// (the asker, who writes why between the two) -> RECORDED (the NMI) ->
// PRINTING (the one flush that wins the CAS; sysmon's and the asker's may
// race) -> FREE; each step publishes the fields it wrote (release) to the
// next one's acquire.
enum { REPORT_FREE, REPORT_CLAIMED, REPORT_ASKED, REPORT_RECORDED, REPORT_PRINTING };
#define REPORT_FRAMES 8
static struct {
    uint32_t state;                 // atomic
    const char *why;                // the asker's
    uint64_t rip;                   // the NMI's, from here on
    bool irqs_on;
    uint32_t in_service;            // a vector the core has not acknowledged, or 0
    uint32_t pending;               // a vector requested and not delivered, or 0
    int nframes;
    uint64_t ret[REPORT_FRAMES];
    uint64_t printed;               // reports printed: atomic, written by the flush in PRINTING
} reports[MAX_CPUS];

static bool report_by_apic(uint32_t cpu, uint32_t apic_id, const char *why)
{
    uint32_t free = REPORT_FREE;
    // acquire: pairs with the flush's release (the last report is out);
    // relaxed on failure: a report is under way, and this one is dropped
    if (!__atomic_compare_exchange_n(&reports[cpu].state, &free, REPORT_CLAIMED, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return false;   // one report at a time per core
    reports[cpu].why = why;
    __atomic_store_n(&reports[cpu].state, REPORT_ASKED, __ATOMIC_RELEASE);  // publishes why: pairs with the NMI's acquire
    lapic_send(apic_id, ICR_NMI | ICR_ASSERT);
    return true;
}

bool arch_report_cpu(uint32_t cpu, const char *why)
{
    return report_by_apic(cpu, cpu_of[cpu]->apic_id, why);
}

// Before the cores are numbered an AP's index is its start-up slot
// (arch/smp.c), and cpu_of[] does not name it yet.
bool arch_report_slot(uint32_t slot, uint32_t apic_id, const char *why)
{
    return report_by_apic(slot, apic_id, why);
}

bool arch_report_flush(uint32_t cpu)
{
    uint32_t recorded = REPORT_RECORDED;
    // acquire: pairs with the NMI's release; relaxed on failure: nothing
    // recorded, or another flush prints it
    if (!__atomic_compare_exchange_n(&reports[cpu].state, &recorded, REPORT_PRINTING, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    uint64_t off;
    const char *sym = arch_symbolize(reports[cpu].rip, &off);
    char isr[32] = "", irr[32] = "";
    if (reports[cpu].in_service)
        snprintf(isr, sizeof isr, ", vector %u in service", reports[cpu].in_service);
    if (reports[cpu].pending)
        snprintf(irr, sizeof irr, ", vector %u pending", reports[cpu].pending);
    kprintf("core %u: %s; it is at %016lx %s+0x%lx, interrupts %s%s%s\n", cpu, reports[cpu].why,
            reports[cpu].rip, sym ? sym : "?", off, reports[cpu].irqs_on ? "on" : "off", isr, irr);
    for (int i = 0; i < reports[cpu].nframes; i++) {
        sym = arch_symbolize(reports[cpu].ret[i] - 1, &off);
        kprintf("  #%d %016lx %s+0x%lx\n", i + 1, reports[cpu].ret[i], sym ? sym : "?", off + 1);
    }
    __atomic_store_n(&reports[cpu].printed, reports[cpu].printed + 1, __ATOMIC_RELEASE);  // pairs with arch_reports_printed
    __atomic_store_n(&reports[cpu].state, REPORT_FREE, __ATOMIC_RELEASE);   // pairs with arch_report_cpu's acquire
    return true;
}

uint64_t arch_reports_printed(uint32_t cpu)
{
    return __atomic_load_n(&reports[cpu].printed, __ATOMIC_ACQUIRE);     // pairs with the flush's release
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
// from outside (outside_nmi). A report is recorded, never printed here:
// the NMI may have landed inside kprintf, holding the console's lock.
static void nmi(struct trapframe *tf)
{
    uint32_t me = cpu_index();
    uint32_t stopper = __atomic_load_n(&arch_stopping, __ATOMIC_ACQUIRE);   // acquire: pairs with claim_stop's acq_rel
    if (stopper && stopper != me + 1)
        stop_here();
    if (__atomic_load_n(&reports[me].state, __ATOMIC_ACQUIRE) == REPORT_ASKED) {    // pairs with arch_report_cpu's release
        reports[me].rip = tf->rip;
        reports[me].irqs_on = (tf->rflags & (1u << 9)) != 0;
        reports[me].in_service = arch_irq_in_service();    // an interrupt handler's, or one never acknowledged
        reports[me].pending = arch_irq_pending();          // a wake IPI held back, or lost on its way if 0
        reports[me].nframes = arch_backtrace_collect(tf->rbp, reports[me].ret, REPORT_FRAMES);
        __atomic_store_n(&reports[me].state, REPORT_RECORDED, __ATOMIC_RELEASE);  // pairs with arch_report_flush
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
        if (dumping[cpu_index()])
            fault_in_dump(tf);
        if (fault_handlers[v] &&
            fault_handlers[v](v, tf->error, read_cr2(), tf->rip, tf->rflags & (1u << 9)))
            return tf;
        fatal_exception(tf);
    }
    if (v == VEC_SPURIOUS)
        return tf;
    irq_frame[cpu_index()] = tf;    // for arch_irq_context (the profiler's samples)
    if (irq_handlers[v])
        irq_handlers[v]((uint8_t)v);
    else
        kprintf("trap: unexpected interrupt vector %lu on cpu %u\n", v, cpu_index());
    lapic_eoi();
    return trap_switch_hook(tf);
}

// Waits (up to 100 ms) until the n cores sent the stop have halted. Under
// TCG a vCPU can run on for milliseconds before it takes the IPI or NMI.
static bool wait_stopped(uint32_t n)
{
    for (int i = 0; i < 1000; i++) {
        if (__atomic_load_n(&arch_nstopped, __ATOMIC_ACQUIRE) >= n)  // acquire: pairs with stop_here's release
            return true;
        tsc_delay_us(100);
    }
    return false;
}

// True for the one core that stops the others; false when another already does.
static bool claim_stop(void)
{
    uint32_t none = 0;
    // acq_rel: one core stops the others; pairs with nmi's acquire
    return __atomic_compare_exchange_n(&arch_stopping, &none, cpu_index() + 1, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

// The stop goes to each core that has checked in, by its APIC id, never
// as a broadcast: a broadcast NMI also reached APs that never got that
// far (at more than 64 vCPUs, one left without a start-up ticket, halted
// in the trampoline with no IDT), which triple-faulted, reset the machine
// and lost the fatal report (smp_send_to_checked_in).
void arch_stop_others(void)
{
    if (!claim_stop())
        return;     // another core is already stopping everyone
    uint32_t n = smp_send_to_checked_in(ICR_NMI | ICR_ASSERT);
    if (n)
        wait_stopped(n);        // what this core prints next must not change under it
}

void arch_stop_others_quiet(void)
{
    if (!claim_stop())
        return;
    irq_handlers[VEC_STOP] = stop_ipi;
    uint32_t n = smp_send_to_checked_in(ICR_FIXED | ICR_ASSERT | VEC_STOP);
    if (n && !wait_stopped(n)) {    // a core that keeps interrupts off: the NMI then
        smp_send_to_checked_in(ICR_NMI | ICR_ASSERT);
        wait_stopped(n);
    }
}
