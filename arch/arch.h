// SPDX-License-Identifier: MIT
// The narrow boundary between kernel/ (policy) and arch/ (x86-64).
// kernel/ includes this header and nothing else from arch/; everything that
// knows a register, an MSR or an APIC offset sits behind these calls. Three
// parts of the boundary have headers of their own, included at the end:
// spinlocks (arch/spinlock.h), boot-patched branches (arch/static_branch.h)
// and the trap path's calls into kernel/ (arch/trap_hooks.h).
// tools/check/check_layers.py enforces the rule.
#ifndef GORO_ARCH_H
#define GORO_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_CPUS 1024

// Per-core data reached through GS base. The first fields are read with
// %gs-relative loads, so their offsets are fixed (checked in arch/cpu.c).
struct cpu {
    struct cpu *self;           // gs:0
    uint32_t index;             // gs:8   dense 0..ncpu-1, BSP is 0
    uint32_t apic_id;           // gs:12
    void *m;                    // gs:16  kernel/'s M for this core
    uint32_t preempt_count;     // gs:24  > 0: the running G is not preempted (one incl/decl)
    uint32_t preempt_pending;   // gs:28  kernel/'s preemption requests for this core's G
    uint64_t stack_top;         // the stack this core entered the kernel on: its g0 stack
    // arch/ only below this line
    uint64_t ist_stacks[4];     // tops of the #DF, NMI, #MC, #PF stacks
    uint8_t online;             // written once by the core itself, when ready
    uint8_t pad[7];
    uint64_t online_tsc;        // checked in (arch/smp.c: online)
    uint64_t ready_tsc;         // set up, TSC checked: about to become an M
};

static inline struct cpu *this_cpu(void)
{
    struct cpu *c;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(c));
    return c;
}

// This core's cpu->m in one gs-relative load (the scheduler reads it on
// every switch). Volatile: a G that moves reads its new core's.
static inline void *this_cpu_m(void)
{
    void *m;
    __asm__ volatile("mov %%gs:16, %0" : "=r"(m));
    return m;
}

// The preempt count is changed with single gs-relative instructions, so
// that no interrupt can land between finding this core's counter and
// changing it (after which the G could be on another core).
static inline void preempt_count_inc(void)
{
    __asm__ volatile("incl %%gs:24" ::: "memory", "cc");
}

// Returns the count after the decrement, read from the core the G is on by
// then (the G may move right after the decrement).
static inline uint32_t preempt_count_dec(void)
{
    uint32_t v;
    __asm__ volatile("decl %%gs:24\n\tmovl %%gs:24, %0" : "=r"(v) :: "memory", "cc");
    return v;
}

// Decrements the count; true when it reached zero (the decrement's own
// zero flag: no second read).
static inline bool preempt_count_dec_zero(void)
{
    bool zero;
    __asm__ volatile("decl %%gs:24" : "=@ccz"(zero) :: "memory");
    return zero;
}

static inline uint32_t preempt_pending_here(void)
{
    uint32_t v;
    __asm__ volatile("movl %%gs:28, %0" : "=r"(v));
    return v;
}

static inline uint32_t preempt_count(void)
{
    uint32_t v;
    __asm__ volatile("movl %%gs:24, %0" : "=r"(v));
    return v;
}

static inline uint32_t cpu_index(void)
{
    uint32_t i;
    __asm__ volatile("movl %%gs:8, %0" : "=r"(i));
    return i;
}

// Boot, on the boot core, in this order:
//  arch_early_init: per-core pointer, descriptors, IDT (faults are reported
//    from here on), the local APIC;
//  arch_start_aps_early: under a hypervisor, INIT and STARTUP to every
//    other core at once, before the MADT is read (false, nothing done, on
//    hardware); arch_start_aps then gives the plan and sends nothing;
//  arch_start_aps: INIT and STARTUP to
//    every other core named in apic_ids (the MADT's enabled cores, the boot
//    core among them or not; NULL: no MADT, the boot core only). It returns
//    at once: each AP checks in (online: long mode, its own stack,
//    descriptors and local APIC) and waits for arch_finish_aps.
//    init_delay_ns: the wait between INIT and STARTUP, or
//    ARCH_INIT_DELAY_AUTO (none where the CPU does not need it); a wait
//    needs the TSC's rate, so with one it comes after arch_clock_end;
//  arch_wait_checked_in: after arch_start_aps_early's broadcast and the
//    plan, the boot core halts until every AP of the plan has checked in
//    (or a bound): under TCG its own work meanwhile, on a host CPU and
//    QEMU's global lock the APs need, slowed their start (docs/boot.md);
//    nothing done without the broadcast;
//  arch_boot_yield_to_aps: after arch_start_aps_early's broadcast, the boot
//    core halts for a moment. Under TCG each hand-off of QEMU's global
//    lock from the boot core wakes an AP's thread onto the boot core's host
//    CPU, where it waited, runnable, for the boot core's run to its next
//    halt (1.2-1.4 ms measured) while the other host CPU sat idle; called
//    after the boot core's last use of that lock before its wait (fw_cfg).
//    Nothing done without the broadcast;
//  arch_simd_init: SSE/AVX on this core and, later, every AP, unless simd
//    is false (integer-only runs, e.g. under this machine's PVM KVM);
//  arch_clock_begin .. arch_clock_end: the TSC's and the timer's rates;
//  arch_platform_init: the direct map (pages from the allocator it is
//    given), the TLB shoot-down, the APIC timer's window;
//  arch_finish_aps: the APs go on (the direct map, their g0 stacks, SIMD,
//    timer, the TSC check) and each calls ap_main on its g0 stack with
//    interrupts off; returns when all are ready (or reported missing).
//    timeout_ns: how long the APs get from then on before the missing
//    ones are reported.
void arch_early_init(void);
void arch_simd_init(bool simd);
extern bool arch_simd_enabled;      // vector registers usable (simd=on)
// The page allocator arch/ is given (kernel/page.c's): whole zeroed
// pages, never NULL (running out is fatal in the allocator); alloc_low
// below 4 GiB; alloc_uncleared not zeroed (stacks). max_phys: the end of
// the highest usable RAM.
#define ARCH_PAGE_SIZE 4096ul
struct arch_page_allocator {
    void *(*alloc)(size_t npages);
    void *(*alloc_low)(size_t npages);
    void *(*alloc_uncleared)(size_t npages);
    uint64_t max_phys;
};
void arch_platform_init(const struct arch_page_allocator *pages);
// The TSC's and the timer's rates, measured while the boot goes on:
// arch_clock_begin, once ACPI has named the reference clocks
// (arch_set_pm_timer, arch_set_hpet), takes the rate from CPUID or the
// reference's first reading; arch_platform_init starts the APIC timer
// counting against the TSC; arch_clock_end closes both windows (at least
// 1 ms for the TSC, longer until its error bound is 500 ppm);
// arch_clock_report prints the rates and their bounds. Nothing may convert
// between cycles and time before arch_clock_end.
void arch_clock_begin(void);
void arch_clock_end(void);
void arch_clock_report(void);
#define ARCH_INIT_DELAY_AUTO UINT64_MAX
// The APs' early blocks (each AP's stacks from the STARTUP to go), given
// before arch_start_aps_early or arch_start_aps: arch_ap_early_bytes for
// aps of them, whole pages. The caller finds them below 4 GiB (the boot
// page tables map no more), before the page allocator exists when the
// start comes first, and keeps them for good: an AP the start gave up on
// halts on its block. Their count bounds the broadcast's tickets (the
// hypervisor's count of cores; MAX_CPUS - 1 when it gives none); for
// arch_start_aps it must cover the plan.
uint64_t arch_ap_early_bytes(uint32_t aps);
void arch_ap_early_blocks(uint64_t early, uint32_t aps);
struct arch_ap_start {
    const uint32_t *apic_ids;
    uint32_t count;
    uint64_t init_delay_ns;
};
bool arch_start_aps_early(void);
// Where the APs' start-up code goes in low memory (the first start writes
// it there): the loader's bytes in that range are the caller's to keep.
void arch_ap_trampoline_range(uint64_t *phys, uint64_t *len);
void arch_start_aps(const struct arch_ap_start *how);
void arch_wait_checked_in(void);
void arch_boot_yield_to_aps(void);
void arch_finish_aps(uint64_t timeout_ns, void (*ap_main)(void));
uint32_t arch_ncpu(void);               // cores online
struct cpu *arch_cpu(uint32_t index);

// Interrupt state. irq_save returns the previous state for irq_restore.
static inline uint64_t irq_save(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(f) :: "memory");
    return f;
}
// Puts the interrupt flag back as it was at irq_save: on or off (a
// restore that could only turn interrupts on would leave them on after a
// section that enabled them on purpose).
static inline void irq_restore(uint64_t f)
{
    if (f & (1u << 9))
        __asm__ volatile("sti" ::: "memory");
    else
        __asm__ volatile("cli" ::: "memory");
}
static inline void irq_disable(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void irq_enable(void) { __asm__ volatile("sti" ::: "memory"); }
static inline bool irqs_enabled(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f & (1u << 9);
}
static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
// A lock waiter's pause, interrupts off: cpu_relax, and the flush a
// pending TLB shoot-down asks for, acknowledged (its IPI waits for
// interrupts; arch/tlb.c).
void arch_lock_relax(void);
// Around a lock's wait loop, interrupts off (after a failed first try,
// until the lock is taken): between them the core touches only the lock
// and its own stack, so a TLB shoot-down does not wait for it, and _end
// flushes for any it missed (arch/tlb.c).
void arch_lock_wait_begin(void);
void arch_lock_wait_end(void);
// How many cores are between those two now (a snapshot, for reports).
uint32_t arch_lock_waiters(void);
static inline uint64_t arch_cycles(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

// Called with interrupts off: enables them and halts until one arrives,
// atomically (sti; hlt), and returns with them off again.
void arch_idle_halt(void);
// The same contract, waiting for a write to the 8 bytes at addr (or an
// interrupt): MONITOR/MWAIT where arch_has_mwait(), or a pause loop.
bool arch_has_mwait(void);
void arch_idle_mwait(const volatile void *addr);
void arch_idle_poll(const volatile void *addr);

// Goroutine context switches (arch/switch.asm). A goroutine's saved
// context is one stack pointer. arch_mcall, called with interrupts off,
// saves the caller into *save_rsp and runs fn(arg) on the g0 stack at
// g0_top; fn never returns. arch_gogo resumes a saved context with interrupts on.
void arch_mcall(uint64_t *save_rsp, uint64_t g0_top, void (*fn)(void *), void *arg);
void arch_gogo(uint64_t rsp) __attribute__((noreturn));
// Prepares a new goroutine's stack [lo, hi) to start fn(arg) and then call
// exit_fn() when fn returns; returns the rsp to hand to arch_gogo.
uint64_t arch_stack_init(uint64_t hi, void (*fn)(void *), void *arg, void (*exit_fn)(void));

// Asynchronous preemption (arch/preempt.asm). From an interrupt handler
// (on this core's interrupt stack), after the EOI: saves the vector state into
// xsave_area (arch_xsave_size() bytes, 64-byte aligned, zeroed; NULL when
// simd is off), makes *save_rsp a context that arch_gogo resumes exactly
// where tf was interrupted, and runs fn(arg) on g0_top. Never returns.
struct trapframe;
void arch_preempt(struct trapframe *tf, uint64_t *save_rsp, void *xsave_area, uint64_t g0_top,
                  void (*fn)(void *), void *arg) __attribute__((noreturn));
// The goroutine's stack bytes [lo, hi) that arch_preempt writes (the
// frame's copy and a switch frame, below the interrupted stack pointer):
// their pages must be mapped before it is called.
void arch_preempt_stack(const struct trapframe *tf, uint64_t *lo, uint64_t *hi);
bool arch_preempt_unsafe(const struct trapframe *tf);
uint32_t arch_xsave_size(void);

// Each core's one-shot timer (arch/timer.c): VEC_TIMER fires at TSC value
// deadline (at once if it passed). TSC-deadline mode where the CPU has it,
// else the calibrated APIC one-shot. Interrupts off.
void arch_timer_arm(uint64_t deadline);
void arch_timer_cancel(void);
bool arch_timer_tsc_deadline(void);

// Goroutine stacks live in their own virtual region of 4 KiB pages.
// arch_stack_reserve creates the page tables for [lo, hi) (nothing mapped);
// arch_stack_map_page then maps one page there without locks or allocation,
// so the page-fault handler can grow a stack: a compare-and-swap of the
// empty entry, so that a page is installed once however many cores map
// it at the same time (ARCH_STACK_TAKEN: another page was there first;
// the caller keeps its own). arch_virt_to_phys translates (identity
// outside the region; 0 when unmapped).
#define ARCH_STACK_REGION 0x0000400000000000ull
#define ARCH_STACK_REGION_SIZE (1ull << 39)
enum arch_stack_map { ARCH_STACK_MAPPED, ARCH_STACK_TAKEN, ARCH_STACK_NO_TABLE };
void arch_stack_reserve(uint64_t lo, uint64_t hi);
enum arch_stack_map arch_stack_map_page(uint64_t va, void *page);
uint64_t arch_virt_to_phys(uint64_t va);
uint64_t arch_stack_unmap_page(uint64_t va);    // returns the page, 0 if none
// Device memory: maps the physical range [phys, phys + len) uncached, in
// a region of its own (ARCH_MMIO_REGION, above any direct map), and
// returns the virtual address of phys; NULL when the region is full or
// the range is not addressable. Mappings last for good. Any context but
// interrupts (it takes the page-table lock and may allocate tables).
#define ARCH_MMIO_REGION 0x0000500000000000ull
#define ARCH_MMIO_REGION_SIZE (1ull << 36)
void *arch_map_mmio(uint64_t phys, uint64_t len);
// Flushes every online core's TLB (an IPI to the others, each
// acknowledged) and returns when all have. False when another shoot-down
// is in progress (try later). The caller stays on its core: interrupts
// off, or preemption disabled (ASSERTed). A wait over a second is
// reported, naming the cores that have not answered (arch/tlb.c).
bool arch_tlb_shootdown(void);
extern uint64_t arch_tlb_stall_reports;     // stalls reported so far
extern uint64_t arch_tlb_stall_report_ns;   // a wait this long is reported (1 s; a test may shorten it)
// Since boot: shoot-downs done, the time their shooters waited for the
// other cores' answers, the longest such wait. A snapshot, any context.
struct arch_tlb_stats {
    uint64_t shootdowns, wait_ns, wait_max_ns;
};
void arch_tlb_stats(struct arch_tlb_stats *st);

// Time (arch/tsc.c). The TSC's frequency comes from CPUID or from a short
// window against a reference clock at boot: the HPET, else the ACPI PM
// timer, else the PIT (kernel/ names the first two from ACPI before
// arch_platform_init). A measured frequency is refined while the machine
// runs: sysmon calls arch_clock_refine(now, false) at each look, and it
// measures again when a ten times longer window is due. arch_nanotime() is
// continuous across refinements (no jump, never back on one core);
// arch_tsc_to_nanotime converts a TSC value read earlier; cycles_to_ns and
// ns_to_cycles convert durations with the current rate.
void arch_set_pm_timer(uint16_t port, bool is_32bit);
void arch_set_hpet(uint64_t phys);
uint64_t arch_tsc_hz(void);
uint64_t arch_ns_to_cycles(uint64_t ns);        // saturates at UINT64_MAX
uint64_t arch_cycles_to_ns(uint64_t cycles);    // saturates at UINT64_MAX
uint64_t arch_nanotime(void);
uint64_t arch_tsc_to_nanotime(uint64_t tsc);
// Core 0 (sysmon) refines; elsewhere force asks sysmon to at its next
// look. force (tests) measures now and applies the result even if its
// bound is no better. True when the rate was changed.
bool arch_clock_refine(uint64_t now, bool force);
// ktest: at core 0's next refinement the rate is set off by ppb (|ppb| <
// 10%) and its bound kept, as if it had gone wrong long ago; refinement
// must find it out (arch/tsc.c, "Corrections"). arch_clock_info's skews
// counts the ones applied; ppb 0 withdraws one not applied yet.
void arch_clock_skew_for_test(int64_t ppb);
struct arch_clock_info {
    uint64_t hz;
    const char *source;         // "HPET", "ACPI PM timer", "PIT", "CPUID 0x15", ...
    uint64_t window_ns;         // the current rate's window; 0: from CPUID
    uint64_t bound_ppb;         // its error bound, parts per billion
    uint32_t refinements;       // rates applied since boot
    uint32_t steps;             // readings that disagreed with the rate (a step): measured again
    uint32_t corrections;       // rates replaced: two stretches in a row disagreed with it, agreed with each other
    uint32_t skews;             // arch_clock_skew_for_test's requests applied (not refinements)
    bool refinable;
    uint64_t boot_hz, boot_bound_ppb, boot_window_ns;   // the boot estimate
    // nanotime's current and previous segments: ns(t) = base_ns + (t -
    // base_tsc) * mult / 2^32 (arch/tsc.c), for a test's failure report
    uint64_t cur_base_tsc, cur_base_ns, cur_mult, prev_base_tsc, prev_base_ns, prev_mult;
};
void arch_clock_info(struct arch_clock_info *ci);
// One reading of the ACPI PM timer bracketed by TSC reads (tests check the
// TSC's rate against it): the TSC at the bracket's midpoint, within +-half
// cycles, and the count (24 or 32 bits wide: mask). False: no PM timer.
struct arch_pm_reading {
    uint64_t tsc, half, count, mask;
};
bool arch_pm_timer_reading(struct arch_pm_reading *r);
#define ARCH_PM_TIMER_HZ 3579545ull

// The CMOS real-time clock (arch/rtc.c): the Unix time it holds (it
// keeps UTC), in whole seconds. century_reg: the FADT's CENTURY, the CMOS
// register of the century (0: none, the year is 20xx). False when the
// clock holds no valid time or its update never ends. Not before
// arch_clock_end (its waits are timed); one core at a time.
bool arch_rtc_read(uint8_t century_reg, int64_t *unix_s);

// The boot timeline (arch/boot_marks.c). The boot core stamps the TSC at
// the start of each boot phase while it runs alone (arch_platform_init
// stamps its own steps); kernel/boot_timeline.c prints them. The first
// stamp is kernel entry, given by the loader (boot_info.entry_tsc).
struct arch_boot_mark {
    const char *phase;
    uint64_t tsc;
};
void arch_boot_entry(uint64_t tsc);
uint64_t arch_boot_entry_tsc(void);
void arch_boot_mark(const char *phase);
uint32_t arch_boot_marks(const struct arch_boot_mark **marks);
// Writes s to QEMU's debug console (port 0x402), for a host that times
// the boot; nothing on real hardware. boot/entry.asm writes "goro:entry".
void arch_host_marker(const char *s);

// Interrupts between cores. Vectors named here; handlers registered by
// kernel/ run with interrupts off on the receiving core.
// Device interrupts use 0x30-0x4F (kernel/irqwait.h: ISA IRQ n at 0x30 + n)
// and, for devices that interrupt by message (MSI, MSI-X) or a PCI line,
// ARCH_DEV_VEC_FIRST-ARCH_DEV_VEC_LAST, handed out by arch_irq_alloc_vector.
#define ARCH_DEV_VEC_FIRST 0x50
#define ARCH_DEV_VEC_LAST 0xDF
enum {
    VEC_PROBE_PING = 0xE0,      // kernel/probe.c's round trip: there
    VEC_PROBE_PONG = 0xE1,      // and back
    VEC_TIMER = 0xF0,
    VEC_WAKE = 0xF1,
    VEC_PREEMPT = 0xF2,
    VEC_TLB = 0xF3,
    VEC_STOP = 0xFE,
    VEC_SPURIOUS = 0xFF,
};
typedef void (*irq_handler_fn)(uint8_t vector);
// From inside an interrupt handler: where this core was interrupted (the
// sampling profiler's sample). False before the core's first interrupt.
struct arch_irq_ctx {
    uint64_t rip, rbp, rsp;
    bool irqs_on;                   // the interrupted code had interrupts enabled
};
bool arch_irq_context(struct arch_irq_ctx *c);
void arch_set_irq_handler(uint8_t vector, irq_handler_fn fn);
void arch_send_ipi(uint32_t cpu, uint8_t vector);
void arch_send_ipi_all_but_self(uint8_t vector);
// Device vectors (ARCH_DEV_VEC_FIRST..LAST): arch_irq_alloc_vector takes
// a free one (-1 when none is left), arch_irq_free_vector gives it back
// and drops its handler. Any core, any context.
int arch_irq_alloc_vector(void);
void arch_irq_free_vector(uint8_t vector);
// The rule for aiming device interrupts: the core an interrupt meant for
// core cpu should go to. cpu itself when a device's message can name it
// (its APIC id fits the MSI address's 8-bit destination field: below 256),
// else a core that can be named, the same one for the same cpu. Every
// driver aims its interrupts through this one function, so that the
// x2APIC work (interrupt remapping, or QEMU's extended destination id)
// widens the rule here alone. After arch_finish_aps.
uint32_t arch_irq_cpu(uint32_t cpu);
// The MSI/MSI-X message (the address and data a device writes) that
// delivers vector to core cpu, which must be one arch_irq_cpu returns.
void arch_msi_message(uint32_t cpu, uint8_t vector, uint64_t *addr, uint32_t *data);
// The highest vector this core's local APIC has in service (delivered and
// not yet acknowledged by its handler's EOI), 0 when none. Outside an
// interrupt handler it is 0: a vector in service there blocks every
// vector of its priority class and below (the class is vector >> 4).
uint32_t arch_irq_in_service(void);
// The highest vector this core's local APIC holds requested and not yet
// delivered, 0 when none: one that stays there while the core halts with
// interrupts on was blocked by a vector in service, or never signalled.
uint32_t arch_irq_pending(void);

// Leave the machine: code 0 means success (QEMU exits 33), 1..15 a failure
// code (QEMU exits 2c+1), ARCH_EXIT_FATAL a fatal error (QEMU exits 255).
#define ARCH_EXIT_FATAL 0x7f
void arch_exit(int code) __attribute__((noreturn));

// inject=ap-silent: the AP with this APIC id will never answer
// INIT-SIPI-SIPI (set before arch_start_aps; arch/inject.c).
void arch_inject_ap_silent(uint32_t apic_id);
// inject=tickets:N: the broadcast start (arch_start_aps_early) hands out
// only N start-up tickets, so that the APs beyond them are started again
// by the second round (arch/smp.c). Set before arch_start_aps_early.
void arch_inject_tickets(uint32_t n);
// inject=evict:S: the broadcast start has S slots and S - 1 tickets, and
// its second round leaves the first ticket's holder out of the plan, so
// that at S + 1 vCPUs a planned AP takes that holder's slot (arch/smp.c).
// Set before arch_start_aps_early.
void arch_inject_evict(uint32_t slots);
// The broadcast start's tickets when inject=tickets: or evict: limited
// them; 0 if neither did, or the APs were not broadcast to.
uint32_t arch_broadcast_tickets(void);

// This core begins a fatal report (a panic's, an exception's): from here
// on a fault on this core prints one line, naming it, and ends the
// machine, instead of a second report over the first one's frames (a
// fault inside the dump comes on the same IST stack, whose frames it
// overwrites). The dump reads memory only where a mapping exists
// (arch_mapped), so this is for what it cannot foresee.
void arch_fatal_dump_begin(void);
// A present page maps va (lock-free; any context, fatal dumps included).
bool arch_mapped(uint64_t va);

// Stop every other core (fatal paths), without locks, by NMI; returns once
// they have halted (or after 100 ms).
void arch_stop_others(void);
// The same for an orderly exit: a maskable IPI first, so that each core
// halts where interrupts are on, never inside code that runs with them off
// (a trace record, a metrics update); the NMI after 100 ms for a core that
// keeps them off.
void arch_stop_others_quiet(void);
// Resets the machine (the chipset's reset register, then the keyboard
// controller's reset line, then a triple fault). Never returns.
void arch_reboot(void) __attribute__((noreturn));
// The local APIC runs in x2APIC mode (MSRs), not xAPIC (MMIO).
bool arch_x2apic(void);
// Asks core cpu, by NMI (so even with interrupts off), where it is. The
// NMI only records it: it may land inside the console's own lock or line,
// so it never prints. False: a report on that core is already under way,
// and this one is dropped. arch_report_flush prints a recorded report
// ("core N: <why>; it is at <rip symbol>" and a short backtrace) and
// returns true; the asker calls it later, from an ordinary context, and
// so does sysmon for every core (debug builds), whoever asked: a report
// is printed once, by whichever flush finds it first.
// arch_reports_printed counts the reports on cpu printed so far.
bool arch_report_cpu(uint32_t cpu, const char *why);
bool arch_report_flush(uint32_t cpu);
uint64_t arch_reports_printed(uint32_t cpu);

// The CPU's brand string, and how it runs: "tcg", "kvm", "hypervisor" or
// "native" (arch/cpuinfo.c).
#include <stddef.h>
void arch_cpu_model(char *buf, size_t n);
bool arch_has_avx2(void);
const char *arch_accel(void);
// True under a hypervisor (CPUID.1:ECX bit 31, which every hypervisor
// sets and no bare CPU does). There the host may stop any vCPU, timer
// interrupts included, for as long as it likes: wall-clock tails measured
// in the guest are the host's to decide.
bool arch_under_hypervisor(void);

// The symbol that contains addr, for backtraces; NULL when unknown.
const char *arch_symbolize(uint64_t addr, uint64_t *offset);
void arch_backtrace(uint64_t rbp, int max);
// The return addresses of at most max frames from rbp, without printing.
int arch_backtrace_collect(uint64_t rbp, uint64_t *ret, int max);

#include "arch/spinlock.h"
#include "arch/static_branch.h"
#include "arch/trap_hooks.h"

#endif
