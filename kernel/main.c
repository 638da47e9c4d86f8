// SPDX-License-Identifier: MIT
// The boot table: what the boot core does, in order, from kernel entry to
// the main goroutine. Each line's comment says what must be true after it.
#include "boot/bootinfo.h"
#include "arch/arch.h"
#include "drivers/acpi.h"
#include "kernel/app.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/debugdelay.h"
#include "kernel/inject.h"
#include "drivers/fw_cfg.h"
#include "drivers/ioapic.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/profile.h"
#include "kernel/metrics.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "kernel/sched.h"
#include "kernel/shell.h"

struct kparams kparams;
extern char _image_start[], _image_end[];

static void cmdline_warn(void *ctx, const char *msg)
{
    (void)ctx;
    kprintf("%s\n", msg);
}

// The loader's command line, plus QEMU's fw_cfg opt/goro/cmdline when
// present (how tests give an ISO boot its command line).
static void cmdline_load(struct boot_info *bi, char *line, size_t cap)
{
    size_t n = strnlen(bi->cmdline, cap - 1);
    memcpy(line, bi->cmdline, n);
    size_t extra = 0;
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

static void ap_main(void)
{
    while (!__atomic_load_n(&sched_ready, __ATOMIC_ACQUIRE))   // pairs with kmain's release
        cpu_relax();
    sched_mstart();
}

static void main_goroutine(void *arg)
{
    (void)arg;
    inject_at_app_start();                          // inject=node-full, stack-full
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

void kmain(struct boot_info *bi)
{
    static char line[CMDLINE_MAX];
    uint32_t ncores;
    arch_early_init();                              // this core's GS, GDT, TSS, IDT: faults print from here
    console_init();                                 // serial: kprintf works
    kprintf("goro: booted by %s\n", bi->loader);
    kprintf("%s", bi->notes);                       // what the boot path found wrong, if anything
    cmdline_load(bi, line, sizeof line);
    kprintf("cmdline: %s\n", line);
    cmdline_parse(line, &kparams, cmdline_warn, 0); // bad words named and ignored
    debug_delay_init();                             // delay= windows widened (debug builds)
    inject_at_boot();                               // inject=ap-silent, acpi: armed
    shell_script_load();                            // fw_cfg's opt/goro/script kept for app=shell
    arch_simd_init(kparams.simd);                   // SSE/AVX usable by applications
    acpi_init(bi);                                  // MADT, FADT known (or safe fallbacks)
    numa_init(bi);                                  // nodes, their memory, distances (SRAT, SLIT)
    page_init(bi, (uint64_t)_image_start, (uint64_t)_image_end);   // page_alloc works, per node
    arch_set_pm_timer((uint16_t)acpi.pm_tmr_port, acpi.pm_tmr_32bit);   // TSC reference
    struct arch_page_allocator pages = { page_alloc, page_alloc_low, page_max_phys() };
    arch_platform_init(&pages);                     // direct map, local APIC, TSC frequency
    ioapic_init();                                  // every IOAPIC pin masked; irq_wait routes its own
    if (kparams.trace || kparams.metrics)
        trace_enable();                             // patches the hooks while this core runs alone
    if (kparams.profile_hz)
        profile_enable();                           // the same, for the sampling profiler
    const uint32_t *cores = enabled_cores(&ncores);
    arch_start_aps(cores, ncores, ap_main);         // every core online or reported missing
    numa_init_cores();                              // each core's node, from its APIC id
    arch_set_fault_handler(14, g_stack_fault);      // guard-page hits name the goroutine
    if (kparams.trace)
        trace_init(arch_ncpu());                    // per-core event rings, printed at the end
    if (kparams.metrics)
        metrics_init(arch_ncpu());                  // the metrics ride on the trace's hooks
    sched_init(arch_ncpu(), (uint32_t)kparams.gomaxprocs, boot_seed(), kparams.seed_given);
    if (kparams.profile_hz)
        profile_init(arch_ncpu(), kparams.profile_hz);  // per-core sample buffers; sampling starts
    go(main_goroutine, 0);                          // the main G is queued on P0
    __atomic_store_n(&sched.started, true, __ATOMIC_RELEASE);      // release: go() may wake cores from now on (its load is a hint)
    __atomic_store_n(&sched_ready, true, __ATOMIC_RELEASE);        // release: pairs with ap_main's acquire
    irq_disable();
    core_rearm(getm(), arch_cycles());              // sysmon's first look
    schedule();                                     // this core is M0 from here on
}
