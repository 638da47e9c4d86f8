// SPDX-License-Identifier: MIT
// Starting the application processors.
//
// The MADT lists the cores. Every enabled one but the boot core gets an
// INIT, then (after the 10 ms the MP specification asks for) a STARTUP
// IPI whose vector points at the trampoline page; a core not up 1 ms later
// gets a second STARTUP. All of them run the trampoline at once: each takes
// a ticket (its stack) and finds its own index from its APIC id. A core
// that has not come up within the timeout is reported and left out; the
// rest carry on.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"

#define AP_TRAMPOLINE 0x8000u
#define AP_STACK_PAGES 16           // 64 KiB: the core's scheduler (g0) stack
#define AP_TIMEOUT_US 2000000       // generous: 8 vCPUs on 2 host threads under TCG

struct ap_params {                  // boot/trampoline.asm's parameter block
    uint8_t jmp[8];
    uint64_t cr3;
    uint64_t entry;
    uint64_t stacks;
    uint32_t ticket;
    uint32_t efer;
    uint32_t cr4;
} __attribute__((packed));

extern const uint8_t ap_trampoline_start[], ap_trampoline_end[];

static uint32_t ncpu = 1;
static uint32_t apic_of[MAX_CPUS];          // index -> APIC id, set before the SIPIs
static uint64_t ap_stack_top[MAX_CPUS];     // by ticket
static void (*ap_main_fn)(void);
bool arch_simd_enabled;        // read by arch/switch.asm

uint32_t arch_ncpu(void)
{
    return __atomic_load_n(&ncpu, __ATOMIC_ACQUIRE);   // acquire: pairs with arch_start_aps's release (cpus[] filled)
}

// Per-core set-up shared by the boot core and the APs.
void arch_cpu_init(uint32_t index, bool simd)
{
    cpu_init_descriptors(index);
    fpu_init(simd);
}

extern uint8_t boot_stack_top[];

void arch_early_init(void)
{
    cpu_set_gs(0);
    cpus[0].stack_top = (uint64_t)boot_stack_top;
    idt_init();
    cpu_init_descriptors(0);
}

void arch_simd_init(bool simd)
{
    arch_simd_enabled = simd;
    fpu_init(simd);
    xsave_init(simd);
}

struct arch_page_allocator arch_pages;

void arch_platform_init(const struct arch_page_allocator *pages)
{
    arch_pages = *pages;
    paging_init();
    lapic_init();
    tsc_calibrate();
    timer_calibrate();
    tlb_init();
    cpus[0].online = 1;
    cpus[0].online_tsc = rdtsc();
}

static uint32_t index_of_apic(uint32_t apic, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (apic_of[i] == apic)
            return i;
    return UINT32_MAX;
}

static uint32_t my_apic_id_cpuid(void)
{
    if (cpuid(0, 0).eax >= 0xB)
        return cpuid(0xB, 0).edx;
    return cpuid(1, 0).ebx >> 24;
}

static uint32_t planned;
// By planned slot: arrival (AP writes, release) and the dense index the BSP
// assigns (BSP writes before `released`, release). A core that arrives after
// the release finds UINT32_MAX and halts: it was already reported missing.
static uint8_t arrived[MAX_CPUS];
static uint64_t arrived_tsc[MAX_CPUS];
static uint32_t final_index[MAX_CPUS];
static uint8_t released;

// TSC synchronisation, one AP at a time, at bring-up. Firmware may leave
// the APs' TSCs offset from the boot core's (OVMF does, under QEMU), and
// timers compare TSC values taken on different cores. The boot core reads
// its TSC (t0), signals; the AP answers with its TSC (ta); the boot core
// reads its TSC again (t1). ta - (t0 + t1) / 2 is the AP's offset, within
// (t1 - t0) / 2. The round with the tightest bound wins; an offset larger
// than its bound (plus a margin) is corrected by writing IA32_TSC.
#define TSC_SYNC_ROUNDS 8
static volatile uint32_t sync_turn;         // slot whose AP syncs now (0 = none)
static volatile uint32_t sync_seq, sync_ack;
static volatile uint64_t sync_ap_tsc;
static volatile int64_t sync_offset;
static volatile uint32_t sync_done;
static int64_t measured_offset[MAX_CPUS];

static void tsc_sync_ap(uint32_t slot)
{
    while (sync_turn != slot)
        cpu_relax();
    for (uint32_t r = 1; r <= TSC_SYNC_ROUNDS; r++) {
        while (__atomic_load_n(&sync_seq, __ATOMIC_ACQUIRE) != r)   // pairs with the BSP's release
            cpu_relax();
        sync_ap_tsc = rdtsc();
        __atomic_store_n(&sync_ack, r, __ATOMIC_RELEASE);          // pairs with the BSP's acquire
    }
    while (!__atomic_load_n(&sync_done, __ATOMIC_ACQUIRE))     // acquire: sync_offset, from the BSP's release
        cpu_relax();
    int64_t off = sync_offset;
    if (off)
        wrmsr(0x10, rdtsc() - (uint64_t)off);                      // IA32_TSC
    __atomic_store_n(&sync_done, 2, __ATOMIC_RELEASE);     // release: the TSC is set; pairs with the BSP's acquire
}

static void tsc_sync_bsp(uint32_t slot, uint32_t index)
{
    int64_t best_off = 0;
    uint64_t best_err = UINT64_MAX;
    sync_seq = sync_ack = sync_done = 0;
    __atomic_store_n(&sync_turn, slot, __ATOMIC_RELEASE);  // release: the zeroed words, to the AP's wait
    for (uint32_t r = 1; r <= TSC_SYNC_ROUNDS; r++) {
        uint64_t t0 = rdtsc();
        __atomic_store_n(&sync_seq, r, __ATOMIC_RELEASE);          // release: pairs with the AP's acquire
        while (__atomic_load_n(&sync_ack, __ATOMIC_ACQUIRE) != r)  // acquire: sync_ap_tsc, from the AP's release
            cpu_relax();
        uint64_t t1 = rdtsc();
        uint64_t err = (t1 - t0) / 2;
        if (err < best_err) {
            best_err = err;
            best_off = (int64_t)(sync_ap_tsc - (t0 + err));
        }
    }
    int64_t mag = best_off < 0 ? -best_off : best_off;
    measured_offset[index] = best_off;
    sync_offset = (uint64_t)mag > best_err + 2000 ? best_off : 0;
    __atomic_store_n(&sync_done, 1, __ATOMIC_RELEASE);         // release: sync_offset, to the AP's acquire
    while (__atomic_load_n(&sync_done, __ATOMIC_ACQUIRE) != 2)  // acquire: pairs with the AP's release
        cpu_relax();
    if (sync_offset)
        kprintf("tsc: cpu %u's TSC was %ld cycles off the boot core's (within %lu); set it right\n",
                index, (long)best_off, best_err);
    __atomic_store_n(&sync_turn, 0, __ATOMIC_RELEASE);     // release: this AP's turn is over (nobody waits on 0)
}

// 64-bit entry of every AP, on its own stack, interrupts off.
static void ap_entry(uint64_t ticket)
{
    uint32_t slot = index_of_apic(my_apic_id_cpuid(), planned);
    if (slot != UINT32_MAX && !ap_never_answers(my_apic_id_cpuid())) {
        arrived_tsc[slot] = rdtsc();
        __atomic_store_n(&arrived[slot], 1, __ATOMIC_RELEASE);        // pairs with the BSP's acquire
        while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))         // pairs with the BSP's release
            cpu_relax();
        uint32_t idx = final_index[slot];
        if (idx != UINT32_MAX) {
            arch_cpu_init(idx, arch_simd_enabled);
            cpus[idx].stack_top = ap_stack_top[ticket];
            lapic_init();
            timer_init_cpu();
            tsc_sync_ap(slot);
            cpus[idx].online_tsc = arrived_tsc[slot];
            __atomic_store_n(&cpus[idx].online, 1, __ATOMIC_RELEASE);  // pairs with the BSP's acquire
            ap_main_fn();
        }
    }
    for (;;)
        __asm__ volatile("cli; hlt");   // not a core we asked for, or too late
}

static bool all_arrived(uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (!__atomic_load_n(&arrived[i], __ATOMIC_ACQUIRE))  // acquire: pairs with ap_entry's release
            return false;
    return true;
}

static uint32_t plan_cpus(const uint32_t *apic_ids, uint32_t count)
{
    uint32_t n = 1;
    apic_of[0] = cpus[0].apic_id;
    if (!apic_ids) {
        kprintf("smp: no MADT; running on the boot core only\n");
        return 1;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = apic_ids[i];
        if (id == cpus[0].apic_id)
            continue;
        if (id > 0xFF && !lapic_x2apic()) {
            kprintf("smp: core with APIC id %u needs x2APIC, which this CPU lacks; skipped\n", id);
            continue;
        }
        if (n == MAX_CPUS) {
            kprintf("smp: more than %d cores; the rest are not used\n", MAX_CPUS);
            break;
        }
        apic_of[n++] = id;
    }
    return n;
}

void arch_start_aps(const uint32_t *apic_ids, uint32_t count, void (*ap_main)(void))
{
    uint32_t n = plan_cpus(apic_ids, count);
    planned = n;
    ap_main_fn = ap_main;
    if (n > 1) {
        memcpy((void *)(uintptr_t)AP_TRAMPOLINE, ap_trampoline_start,
               // cppcheck-suppress comparePointers ; the two labels bound one blob (boot/trampoline_blob.asm)
               (size_t)(ap_trampoline_end - ap_trampoline_start));
        struct ap_params *p = (struct ap_params *)(uintptr_t)AP_TRAMPOLINE;
        for (uint32_t i = 1; i < n; i++)
            ap_stack_top[i - 1] = (uint64_t)arch_pages.alloc(AP_STACK_PAGES) + AP_STACK_PAGES * ARCH_PAGE_SIZE;
        ASSERT(read_cr3() < (4ull << 30));
        p->cr3 = read_cr3();
        p->entry = (uint64_t)ap_entry;
        p->stacks = (uint64_t)ap_stack_top;
        p->ticket = 0;
        p->efer = (uint32_t)(rdmsr(MSR_EFER) & ((1u << 8) | (1u << 11)));   // LME, NXE
        p->cr4 = (uint32_t)(read_cr4() & (CR4_PAE | CR4_PGE));
        // seq_cst fence: the parameters are in memory before the first
        // INIT (an APIC write, which is not ordered by a plain release).
        __atomic_thread_fence(__ATOMIC_SEQ_CST);

        for (uint32_t i = 1; i < n; i++)
            lapic_send(apic_of[i], ICR_INIT | ICR_ASSERT | ICR_LEVEL);
        tsc_delay_us(10000);
        for (int round = 0; round < 2 && !all_arrived(n); round++) {
            for (uint32_t i = 1; i < n; i++)
                if (!__atomic_load_n(&arrived[i], __ATOMIC_ACQUIRE))  // acquire: as in all_arrived
                    lapic_send(apic_of[i], ICR_STARTUP | ICR_ASSERT | (AP_TRAMPOLINE >> 12));
            tsc_delay_us(round == 0 ? 1000 : 200);
        }
        uint64_t deadline = rdtsc() + arch_ns_to_cycles(AP_TIMEOUT_US * 1000ull);
        while (!all_arrived(n) && rdtsc() < deadline)
            cpu_relax();
    }

    // Cores that came up are numbered densely: a missing one leaves no hole.
    uint32_t up = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (__atomic_load_n(&arrived[i], __ATOMIC_ACQUIRE)) {     // acquire: arrived_tsc[i], from ap_entry
            final_index[i] = up;
            cpus[up].apic_id = apic_of[i];
            up++;
        } else {
            final_index[i] = UINT32_MAX;
            kprintf("smp: core with APIC id %u did not come up; continuing without it\n", apic_of[i]);
        }
    }
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);      // release: final_index, to ap_entry's acquire
    for (uint32_t i = 1; i < n; i++)
        if (final_index[i] != UINT32_MAX)
            tsc_sync_bsp(i, final_index[i]);
    for (uint32_t i = 1; i < up; i++)
        while (!__atomic_load_n(&cpus[i].online, __ATOMIC_ACQUIRE))   // acquire: pairs with ap_entry's release
            cpu_relax();

    extern uint64_t boot_entry_tsc;
    uint64_t last = cpus[0].online_tsc;
    for (uint32_t i = 0; i < up; i++) {
        kprintf("cpu %u: apic id %u online\n", i, cpus[i].apic_id);
        if (cpus[i].online_tsc > last)
            last = cpus[i].online_tsc;
    }
    kprintf("smp: %u of %u cores online (%s), kernel entry to last core %lu us\n", up, n,
            lapic_x2apic() ? "x2apic" : "xapic", arch_cycles_to_ns(last - boot_entry_tsc) / 1000);
    __atomic_store_n(&ncpu, up, __ATOMIC_RELEASE);         // release: cpus[], to arch_ncpu's acquire
}
