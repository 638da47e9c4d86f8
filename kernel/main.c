// SPDX-License-Identifier: MIT
// The boot table: what the boot core does, in order, from kernel entry to
// the main goroutine: kmain up to the APs' start, then the boot plan's
// steps in the order it chose, then the scheduler. Each call's comment
// says what holds after it; arch_boot_mark stamps the start of a phase for
// the boot timeline (kernel/boot_timeline.c). docs/boot.md has the
// measurements behind the order.
#include "boot/bootinfo.h"
#include "arch/arch.h"
#include "drivers/acpi.h"
#include "kernel/app.h"
#include "kernel/boot_timeline.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/debugdelay.h"
#include "kernel/inject.h"
#include "drivers/dma.h"
#include "drivers/fw_cfg.h"
#include "drivers/ioapic.h"
#include "drivers/net/probe.h"
#include "drivers/pci/pci.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/profile.h"
#include "kernel/metrics.h"
#include "kernel/malloc.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "kernel/sched.h"
#include "kernel/walltime.h"
#include "shell/shell.h"

struct kparams kparams;
_Static_assert((int)NIC_IRQ_MSIX == (int)PCI_IRQ_MSIX && (int)NIC_IRQ_MSI == (int)PCI_IRQ_MSI &&
               (int)NIC_IRQ_INTX == (int)PCI_IRQ_INTX && (int)NIC_IRQ_NONE == (int)PCI_IRQ_NONE,
               "nic_irq= names pci_irq_mode's values");
extern char _image_start[], _image_end[];

static void cmdline_warn(void *ctx, const char *msg)
{
    (void)ctx;
    kprintf("%s\n", msg);
}

// The loader's command line...
static void cmdline_load(struct boot_info *bi, char *line, size_t cap)
{
    size_t n = strnlen(bi->cmdline, cap - 1);
    memcpy(line, bi->cmdline, n);
    line[n] = 0;
}

// ...plus QEMU's fw_cfg opt/goro/cmdline when present (how tests give an
// ISO boot its command line), read after the APs' broadcast start: it is
// 30 of the boot's first 200 translated blocks under TCG.
static void cmdline_load_fw_cfg(char *line, size_t cap)
{
    size_t n = strlen(line), extra = 0;
    if (n + 2 < cap) {
        line[n] = ' ';
        if (fw_cfg_read_file("opt/goro/cmdline", line + n + 1, cap - n - 2, &extra) && extra)
            n += 1 + extra;
    }
    line[n] = 0;
}

// The MADT's enabled cores, for arch_start_aps; NULL without a MADT.
static const uint32_t *enabled_cores(uint32_t *count)
{
    static uint32_t ids[ACPI_MAX_CPUS];
    *count = 0;
    if (!acpi.madt_found)
        return 0;
    for (uint32_t i = 0; i < acpi.cpu_count; i++)
        if (acpi.cpus[i].enabled)
            ids[(*count)++] = acpi.cpus[i].apic_id;
    return ids;
}

static bool sched_ready;

// Each AP, once online: halted until kmain has the scheduler ready and
// wakes every core. (Spinning here would take host CPUs from the cores
// still starting, and from the boot core, when vCPUs outnumber them.)
static void ap_main(void)
{
    while (!__atomic_load_n(&sched_ready, __ATOMIC_ACQUIRE))   // pairs with kmain's release
        arch_idle_halt();
    DEBUG_DELAY(ap_mstart);
    mstart();
}

static void main_goroutine(void *arg)
{
    (void)arg;
    inject_at_app_start();                          // inject=node-full, stack-full
    arch_boot_mark("main");
    arch_host_marker("goro:main\n");
    boot_timeline_print(kparams.boot_timeline);
    int code = app_run_main();
    kprintf("goro: main returned %d\n", code);
    machine_exit(code);
}

static uint64_t boot_seed(void)
{
    if (kparams.seed_given)
        return kparams.seed;
    uint64_t t = arch_cycles();
    return (t ^ (t >> 29)) & 0xFFFFFFFFFFFFull;    // short enough to retype
}

// inject=tickets:N and evict:S: armed before the broadcast start that
// they limit. A test's hook, kept off the boot's first page
// (boot/text_order.txt), as the look below.
static __attribute__((noinline)) void inject_tickets_early(const char *line)
{
    uint64_t n;
    if (cmdline_word_number(line, "inject=tickets:", &n) && n && n <= UINT32_MAX)
        arch_inject_tickets((uint32_t)n);
    if (cmdline_word_number(line, "inject=evict:", &n) && n >= 2 && n < MAX_CPUS)
        arch_inject_evict((uint32_t)n);
}

static __attribute__((noinline)) bool inject_keeps_aps_first(const char *line)
{
    return cmdline_has_word(line, "inject=tickets:") || cmdline_has_word(line, "inject=evict:");
}

// Whether the boot may take the aps_first order (the boot plan, below).
static bool aps_may_start_first(const char *line)
{
    return !cmdline_has_word(line, "init_delay=") &&
           (!cmdline_has_word(line, "inject=") || inject_keeps_aps_first(line));
}

// The boot plan. Under a hypervisor every AP is started at once from
// kmain, before anything is parsed (arch_start_aps_early). Then the boot
// takes one of two orders, decided once, from the command line's text
// (cmdline_has_word, which errs on the cautious side), before any step
// it orders runs:
//  - aps_first: the MADT is read and the APs started and checked in
//    before the console, the parse and the rest, which would otherwise
//    compete with the APs for the host under TCG (docs/boot.md);
//  - aps_late, with init_delay= or inject=: the APs start once the line is
//    parsed and the clock calibrated. The wait between INIT and STARTUP is
//    timed by the calibrated TSC, and inject= may corrupt the MADT or
//    silence an AP, both before the first STARTUP. inject=tickets:N and
//    evict:S are the exception: they limit the broadcast start itself
//    (its tickets), so kmain arms them from the loader's text and the
//    order stays aps_first. A word that asks for aps_late but appears only in
//    fw_cfg's text, read after the broadcast, finds the APs started:
//    inject= still acts, init_delay= is named and has nothing left to
//    delay.
struct boot {
    struct boot_info *bi;
    char line[CMDLINE_MAX];             // the loader's words, then fw_cfg's
    bool broadcast;                     // the APs were started from kmain
    uint64_t init_delay_ns;             // for arch_start_aps; the parse may set it
    bool pages_up;                      // page_init has run
    uint64_t kept, kept_len;            // taken before page_init (take_ap_early), kept from it
};

// The APs' early blocks for aps of them: before the page allocator, the
// top of usable RAM below 4 GiB, kept from page_init; after, its pages.
// 0 when there is no room.
static uint64_t take_ap_early(struct boot *b, uint32_t aps)
{
    uint64_t len = arch_ap_early_bytes(aps);
    if (b->pages_up)
        return (uint64_t)(uintptr_t)page_alloc_low(len / PAGE_SIZE);
    ASSERT(!b->kept_len);               // one take before the allocator
    uint64_t at = boot_take_top(b->bi, (uint64_t)_image_end, len);
    b->kept = at;
    b->kept_len = at ? len : 0;
    return at;
}

typedef void boot_step(struct boot *b);

// The steps, in the aps_first order; the comments say what holds after
// each call.
static void step_acpi(struct boot *b)
{
    arch_boot_mark("acpi");
    acpi_init(b->bi);                   // the MADT known (or the boot core only), nothing printed
}

static void step_aps(struct boot *b)
{
    uint32_t ncores;
    const uint32_t *cores = enabled_cores(&ncores);
    struct arch_ap_start aps = { .apic_ids = cores, .count = ncores,
                                 .init_delay_ns = b->init_delay_ns };
    if (!b->broadcast && ncores > 1) {  // an early block for each AP the plan may name
        uint32_t n = ncores < MAX_CPUS ? ncores - 1 : MAX_CPUS - 1;
        uint64_t at = take_ap_early(b, n);
        if (!at)
            panic("smp: no usable RAM below 4 GiB holds the early stacks of %u APs (%lu bytes)", n,
                  arch_ap_early_bytes(n));
        arch_ap_early_blocks(at, n);
    }
    arch_start_aps(&aps);               // INIT and STARTUP to the MADT's cores (unless from kmain)
}

static void step_checked_in(struct boot *b)
{
    (void)b;
    arch_wait_checked_in();             // after the broadcast: halted until the last check-in
}

static void step_console(struct boot *b)
{
    arch_boot_mark("console");
    console_init();                     // serial: the held lines have somewhere to go
    kprintf("goro: booted by %s\n", b->bi->loader);
}

static void step_cmdline(struct boot *b)
{
    arch_boot_mark("cmdline");
    kprintf("%s", b->bi->notes);        // what the boot path found wrong, if anything
    kprintf("cmdline: %s\n", b->line);
    cmdline_parse(b->line, &kparams, cmdline_warn, 0);     // kparams: bad words named and ignored
    if (kparams.init_delay_ns != INIT_DELAY_AUTO)
        b->init_delay_ns = kparams.init_delay_ns;
    debug_delay_init();                 // delay= windows widened (debug builds)
    inject_at_boot();                   // inject=ap-silent, acpi: armed
    shell_script_load();                // fw_cfg's opt/goro/script kept for app=shell
    if (b->broadcast && kparams.init_delay_ns != INIT_DELAY_AUTO)
        kprintf("cmdline: init_delay= has nothing to delay: the APs were started under a "
                "hypervisor (which needs no wait) before fw_cfg's opt/goro/cmdline was read\n");
    if (kparams.simd != arch_simd_enabled)  // a word simd=off... the parse did not take
        kprintf("cmdline: SIMD stays off: a word starting simd=off was read before the parse\n");
}

static void step_firmware(struct boot *b)
{
    (void)b;
    acpi_init_rest();                   // the FADT, the HPET (or safe fallbacks)
    acpi_report();                      // what the MADT and FADT said
    arch_set_pm_timer((uint16_t)acpi.pm_tmr_port, acpi.pm_tmr_32bit);    // TSC references
    arch_set_hpet(acpi.hpet_addr);
    arch_boot_mark("clock");
    arch_clock_begin();                 // the TSC's rate: CPUID, or a window opens here...
}

static void step_memory(struct boot *b)
{
    arch_boot_mark("numa");
    numa_init(b->bi);                   // nodes, their memory, distances (SRAT, SLIT)
    arch_boot_mark("pages");
    page_init(b->bi, (uint64_t)_image_start, (uint64_t)_image_end, b->kept, b->kept_len);   // page_alloc works, per node
    b->pages_up = true;
    struct arch_page_allocator pages = { page_alloc, page_alloc_low, page_alloc_uncleared,
                                         page_max_phys() };
    arch_platform_init(&pages);         // the direct map, the APIC timer's window (its own marks)
    arch_boot_mark("ioapic");
    ioapic_init();                      // every IOAPIC pin masked; irq_wait routes its own
}

// Started APs wait for go in arch/smp.c, halted, running none of the
// code the hooks patch; go makes them serialize before they do.
static void step_hooks(struct boot *b)
{
    (void)b;
    if (kparams.trace || kparams.metrics)
        trace_enable();                 // the trace's hooks patched while the other cores wait
    if (kparams.profile_hz)
        profile_enable();               // the same, for the sampling profiler
    arch_boot_mark("calibrated");
    arch_clock_end();                   // ...and closes here (>= 1 ms, <= 500 ppm): time works
    walltime_init(acpi.rtc_century);    // the time of day, before the APs go
}

static void step_go(struct boot *b)
{
    (void)b;
    arch_finish_aps(kparams.ap_timeout_ns, ap_main);   // go: every core ready or reported missing
    arch_clock_report();                // tsc: and timer: lines, now that the cores are up
    console_release();                  // the boot's lines, written out
}

static boot_step *const aps_first[] = {
    step_acpi, step_aps, step_checked_in, step_console, step_cmdline, step_firmware, step_memory,
    step_hooks, step_go, 0,
};
static boot_step *const aps_late[] = {
    step_console, step_cmdline, step_acpi, step_firmware, step_memory, step_hooks, step_aps,
    step_go, 0,
};

static struct boot boot = { .init_delay_ns = ARCH_INIT_DELAY_AUTO };

static void boot_after_startup(void) __attribute__((noinline, noreturn));
static void start_aps_early(struct boot *b);

// The boot core up to the APs' start under a hypervisor. Its own function,
// apart from the rest of the boot, so that what runs before the STARTUP
// stays small enough for the image's first page (boot/text_order.txt;
// docs/boot.md says why a page matters under TCG).
void kmain(struct boot_info *bi)
{
    boot.bi = bi;
    arch_boot_entry(bi->entry_tsc);     // the timeline's zero
    arch_early_init();                  // this core's GS, GDT, TSS, IDT, local APIC: faults print
                                        // from here (kprintf holds lines until console_release)
    uint64_t tramp, tramp_len;
    arch_ap_trampoline_range(&tramp, &tramp_len);
    boot_keep(tramp, tramp_len);        // the loader's bytes the APs' start-up page will cover
    const char *early = boot_early_cmdline(bi);
    if (cmdline_has_word(early, "inject="))
        inject_tickets_early(early);    // inject=tickets:N or evict:S limits the start below
#ifdef GORO_DEBUG
    if (cmdline_has_word(early, "delay="))
        debug_delay_early(early);       // windows the APs pass before the parse
#endif
    if (aps_may_start_first(early))
        start_aps_early(&boot);         // under a hypervisor: every AP started at once
    boot_after_startup();
}

// Under a hypervisor, before anything is parsed: an early block for each
// AP the hypervisor says it has (fw_cfg; MAX_CPUS - 1 when it does not
// say), then the broadcast start.
static __attribute__((noinline)) void start_aps_early(struct boot *b)
{
    if (!arch_under_hypervisor())
        return;                         // hardware: the MADT's cores, one by one (step_aps)
    uint32_t n = fw_cfg_cpu_count();
    uint32_t aps = n && n < MAX_CPUS ? n - 1 : MAX_CPUS - 1;
    uint64_t at = aps ? take_ap_early(b, aps) : 0;
    if (!at)
        return;
    arch_ap_early_blocks(at, aps);
    b->broadcast = arch_start_aps_early();
}

static void boot_after_startup(void)
{
    struct boot *b = &boot;
    boot_parse(b->bi);                  // multiboot 1: the loader's information, read only now
    cmdline_load(b->bi, b->line, sizeof b->line);   // the loader's words...
    cmdline_load_fw_cfg(b->line, sizeof b->line);   // ...and fw_cfg's: the whole line, unparsed
    arch_boot_yield_to_aps();           // after the broadcast: its host CPU to the APs it woke
    // SIMD is switched on before the parse: under TCG code run on both
    // sides of a CR0/CR4 change is translated twice (docs/boot.md).
    arch_simd_init(!cmdline_has_word(b->line, "simd=off"));    // SSE/AVX for apps (the APs' at go)
    boot_step *const *plan = aps_may_start_first(b->line) ? aps_first : aps_late;
    for (; *plan; plan++)
        (*plan)(b);
    malloc_init_cores(arch_ncpu());     // the APs wait for sched_ready yet
    arch_boot_mark("sched");
    numa_init_cores();                  // each core's node, from its APIC id
    arch_boot_mark("pci");
    struct dma_allocator dma = { page_alloc_node, numa_core_node };
    dma_init(&dma);                     // drivers' rings and buffers: pages on their queue's node
    pci_irq_mode_limit((enum pci_irq_mode)kparams.nic_irq);    // nic_irq=: NICs' best mode
    pci_init();                         // every PCI function found, parsed, named if in error
    net_probe();                        // NICs set up, interrupts aimed, registered as netdevs
    arch_set_fault_handler(14, g_stack_fault);      // guard-page hits name the goroutine
    if (kparams.trace)
        trace_init(arch_ncpu());        // per-core event rings, printed at the end
    if (kparams.metrics)
        metrics_init(arch_ncpu());      // the metrics ride on the trace's hooks
    sched_init(arch_ncpu(), (uint32_t)kparams.gomaxprocs, boot_seed(), kparams.seed_given);
    if (kparams.profile_hz)
        profile_init(arch_ncpu(), kparams.profile_hz);  // per-core sample buffers; sampling starts
    go(main_goroutine, 0);              // the main G is queued on P0
    // release: go() may wake cores from now on (its load is a hint)
    __atomic_store_n(&sched.started, true, __ATOMIC_RELEASE);
    __atomic_store_n(&sched_ready, true, __ATOMIC_RELEASE);    // release: ap_main's acquire
    if (arch_ncpu() > 1)
        arch_send_ipi_all_but_self(VEC_WAKE);       // the APs halted in ap_main start scheduling
    irq_disable();
    core_rearm(getm(), arch_cycles());  // sysmon's first look
    schedule();                         // this core is M0 from here on
}
