// SPDX-License-Identifier: MIT
// Starting the application processors, all at once and as early as the
// boot allows.
//
// The boot core starts them in two steps, so that the APs' own start-up
// overlaps everything else the boot does:
//
//   arch_start_aps_early, under a hypervisor, before the MADT is read:
//   INIT and STARTUP to every other core at once (the all-excluding-self
//   shorthand). Each AP takes the slot of its ticket (1, 2, ... in the
//   order they reach the trampoline) and records its APIC id there. The
//   MADT's list arrives later (arch_start_aps, no IPIs then) and decides
//   which of them are used: the cores are numbered in MADT order, whatever
//   their slots, and an AP the MADT does not name halts at go (LATE, not
//   reported). Not on hardware: a broadcast wakes the cores the firmware
//   disabled too, and Linux never broadcasts for that reason; a hypervisor
//   has no such cores (QEMU's hot-plug slots have no vCPU behind them).
//
//   The second round, when the broadcast started more APs than there are
//   tickets (MAX_CPUS - 1; fewer with inject=tickets:N): the ones the host
//   ran last halt in the trampoline without one, whether the plan names
//   them or not. Once the MADT is read, the boot core waits (a bound) until
//   every AP it lists has taken its number and every ticket holder has
//   checked in; then each planned AP without a slot gets one, a slot no
//   ticket reached or one held by an AP the plan does not name. Such a
//   holder is told to leave (ARRIVED -> EVICT, and a nudge): in its wait
//   for go it moves its slot to FREE in the same asm block that halts it,
//   so it touches nothing of the slot after, and once the boot core sees
//   FREE an INIT makes it inert for good (an INIT'd core waits for a
//   STARTUP and takes no interrupt, an NMI included). Then new tickets,
//   each naming its slot (ticket_slot[]), and INIT and STARTUP by APIC id
//   to the planned APs left out (INIT resets one halted in the
//   trampoline). The alternative, more tickets than slots, fails past any
//   fixed count (q35 takes 4096 vCPUs), and a ticket cannot know whether
//   the plan, unread yet, names its AP. A round that takes slots from APs
//   is left to arch_finish_aps: how soon an evicted AP runs is the host's
//   choice (a loaded one leaves a vCPU unrun for tens of milliseconds),
//   so its wait is bounded by the AP timeout, which needs the TSC's rate
//   that the check-in wait does not have yet.
//
//   arch_start_aps, right after the MADT is read: each core named there
//   gets a start-up slot (the boot core is slot 0, the others in MADT
//   order); the boot core (its local APIC enabled by arch_early_init,
//   which decided the APIC mode the APs follow) sends every AP an INIT,
//   waits only where the CPU needs it (init_wait_us), then a STARTUP whose
//   vector points at the trampoline page, one right after the other, and
//   returns. Each AP runs the trampoline at once: a ticket (its early
//   stack), long mode on the boot page tables, then ap_entry: its slot
//   from its APIC id, its GDT, TSS, IDT and GS, its local APIC. Then it
//   checks in (it is *online*: docs/boot.md) and halts until the boot core
//   says go.
//
//   arch_finish_aps, once the boot core has built what the APs need (the
//   direct map, the calibrated clocks, the page allocator for their g0
//   stacks, the command line's SIMD choice): go. Every AP moves to the
//   kernel's page tables and its g0 stack, sets up SIMD and its timer,
//   and checks its TSC against the boot core's (arch/tsc_sync.c), which
//   the boot core answers while it waits. Then the AP is *ready* and calls
//   ap_main. The boot core waits until every AP is ready or the timeout,
//   counted from go (before go an AP has nothing to wait for but the boot
//   core). On hardware a second STARTUP goes 200 us after go (the MP
//   specification's wait is long past by then) to any AP that has not
//   checked in; not under a hypervisor, which latches the first: under TCG
//   with 64 vCPUs most APs have not run 200 us after the STARTUP, and each
//   would get a second IPI for nothing.
//
// The APs' path to online is kept short on purpose: under TCG every basic
// block an AP runs first costs 5-8 us of translation, and the work that
// needs the boot core's later state is left to after go.
//
// Waiting. With more vCPUs than host CPUs (8 or 64 under TCG on this
// 2-core host) a vCPU that spins holds a host CPU the vCPU it waits for
// needs. An AP waiting for go halts at once (the boot core is busy for a
// while yet); go is followed by one broadcast nudge. The boot core's wait
// spins for SMP_SPIN_US, then halts until nudged: it halts with its timer
// armed for its next deadline (the second STARTUP, the timeout, or 1 ms);
// an AP that asks, or goes ready, nudges it (VEC_SMP_NUDGE) if its halt
// flag is up. The flag and the slot states are a Dekker pair: the boot
// core raises the flag, then looks at the slots; an AP changes its slot,
// then reads the flag (seq_cst on both sides). On real hardware the waits
// end within the spin and nobody halts.
//
// A core set up at slot s uses the struct cpu, descriptors and stacks of
// slot s for good; its index (what the rest of goro calls it) is its place
// among the MADT's cores that came up (s itself when started one by one
// and none before it failed). Every slot moves through
//
//   WAITING --AP: checked in--> ARRIVED --AP: ready--> ONLINE
//   WAITING or ARRIVED --boot core, at the timeout--> LATE
//   ARRIVED --AP at go, not in the MADT (broadcast only)--> LATE
//   ARRIVED --boot core before go, a planned AP needs the slot--> EVICT
//   EVICT --AP, its last store--> FREE --boot core, second round--> WAITING
//   EVICT or FREE --boot core, numbering: the slot was not reused--> LATE
//
// with a CAS at each step, so an AP and the boot core's timeout never both
// win: a LATE core halts, interrupts off, and touches nothing shared but
// its own slot's struct cpu and descriptors (one halted in the TSC check
// is nudged to see it: with interrupts on it would answer broadcast IPIs,
// a TLB shoot-down's among them). After all are ready or the timeout, the
// boot core moves every slot still WAITING to LATE (a broadcast AP that
// takes its ticket later finds its slot closed and halts), then numbers
// the ONLINE ones densely in MADT order (cpu_of[], and each struct cpu's
// index) before anything reads an index; the APs are still waiting in
// ap_main for the scheduler by then.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "kernel/debugdelay.h"
#include "lib/panic.h"
#include "lib/printf.h"
#include "lib/string.h"

#define AP_TRAMPOLINE 0x8000u
#define AP_STACK_PAGES 16           // 64 KiB: the core's scheduler (g0) stack
// What an AP runs on until go, by ticket: its early stack (ap_entry's
// frames, and the dump of a fatal fault that has no IST stack), one stack
// for every IST fault and the NMI, and one for interrupts (the nudges,
// whose handler is empty). Until go an NMI stops the core for good and a
// fault is fatal, so sharing one stack among them loses nothing. 14 KiB a
// ticket, in memory the caller found before the page allocator exists
// (arch_ap_early_bytes; 14 MiB for MAX_CPUS - 1 APs would not fit below
// the firmware's memory as .bss); the stacks a core keeps after go are
// allocated then, for the cores that came up (ap_stacks).
#define AP_EARLY_STACK 8192
#define AP_EARLY_IST 4096
#define AP_EARLY_IRQ 2048
struct ap_early {
    uint8_t stack[AP_EARLY_STACK];
    uint8_t ist[AP_EARLY_IST];
    uint8_t irq[AP_EARLY_IRQ];
} __attribute__((aligned(16)));
// From go on, each AP's own stacks, allocated together: its IST stacks,
// its interrupt stack and its g0 stack (in that order, AP_STRIDE bytes).
#define AP_STRIDE (IST_COUNT * ARCH_IST_STACK_SIZE + ARCH_IRQ_STACK_SIZE + AP_STACK_PAGES * ARCH_PAGE_SIZE)
_Static_assert(AP_STRIDE % ARCH_PAGE_SIZE == 0, "whole pages per AP");
#define SECOND_SIPI_US 200          // the MP specification's wait before STARTUP again
#define LEGACY_INIT_WAIT_US 10000   // the MP specification's wait after INIT

struct ap_params {                  // boot/trampoline.asm's parameter block
    uint8_t jmp[2];
    uint8_t warm;                   // a near return (trampoline_warm)
    uint8_t pad[5];
    uint64_t cr3;
    uint64_t entry;
    uint64_t stacks;
    uint64_t ticket;                // &ticket_next
    uint32_t efer;
    uint32_t cr4;
    uint32_t tickets;               // tickets with a stack: a later AP halts in the trampoline
} __attribute__((packed));

extern const uint8_t ap_trampoline_start[], ap_trampoline_end[];

static size_t trampoline_len(void)
{
    // cppcheck-suppress [comparePointers, subtractPointers] ; the two labels bound one blob (boot/trampoline_blob.asm)
    return (size_t)(ap_trampoline_end - ap_trampoline_start);
}

enum slot_state { SLOT_WAITING, SLOT_ARRIVED, SLOT_ONLINE, SLOT_LATE, SLOT_EVICT, SLOT_FREE };

static uint32_t ncpu = 1;
// Set by the boot core before the first STARTUP, read-only after:
static bool broadcast;                      // arch_start_aps_early started every AP
static uint64_t init_wait;                  // us between INIT and STARTUP
// The early blocks, slot s's at s - 1, for slots 1 .. ap_early_n (the
// caller's memory, arch_start_aps_early or arch_start_aps).
static struct ap_early *ap_early;
static uint32_t ap_early_n;
// By ticket: its early stack (the trampoline's), and the slot whose early
// block (ap_early) it uses, which is the AP's slot when broadcast
// (ap_entry's). Set by the boot core before the STARTUP of the round that
// hands the tickets out, read by the APs after it (the IPI orders them);
// the second round rewrites the first entries once every first-round AP
// has passed its ticket (second_round).
static uint64_t early_stack_top[MAX_CPUS];
static uint32_t ticket_slot[MAX_CPUS];
// The next ticket: the APs take it (lock xadd in the trampoline, which
// writes nothing on its own page), the boot core resets it before the
// STARTUP of a round that hands tickets out.
static uint32_t ticket_next;
// Broadcast, boot core only: the first round's tickets (MAX_CPUS - 1, or
// fewer by inject=), the APs the MADT lists (every one of them the
// broadcast started), and the second round's state and what it did, for
// the report.
static uint32_t round1_tickets, madt_aps;
static uint32_t tickets_limit;              // inject=tickets:N; 0: none (set before the broadcast)
// inject=evict:S (set before the broadcast, arch_inject_evict): S slots,
// S - 1 tickets, a plan of at most S + 1 cores, and the second round
// leaves the first ticket's holder out of the plan, so that a planned AP
// without a ticket finds no free slot and takes that holder's. 0: none.
static uint32_t evict_slots;
// The second round: undecided; left to arch_finish_aps (the first round
// is in, and a slot must be taken from an AP: its wait needs the AP
// timeout, which needs the TSC's rate); done; or given up.
static enum { ROUND2_PENDING, ROUND2_LEFT, ROUND2_DONE, ROUND2_GIVEN_UP } round2;
static uint32_t round2_restarted, round2_evicted, round2_not_freed;

// The plan: the MADT's cores, the boot core first. Set by the boot core in
// arch_start_aps (before the first STARTUP, or after the broadcast's),
// read by the APs after go (go orders them) or, started one by one, after
// their STARTUP.
static uint32_t planned;                    // cores in the plan, the boot core's included
static uint32_t plan_apic[MAX_CPUS];        // plan index -> APIC id
static bool no_madt;                        // for the report: the boot core only
static uint32_t need_x2apic[MAX_CPUS], n_need_x2apic;  // skipped: the CPU lacks x2APIC
static uint32_t over_max;                   // skipped: more than MAX_CPUS

// slot -> APIC id: the plan's, by the boot core, when started one by one;
// the AP's own (relaxed store, published by its seq_cst check-in), when
// broadcast. UINT32_MAX: no AP there yet.
static uint32_t apic_of[MAX_CPUS];

// Set by the boot core before go, read by the APs after it (go orders them):
static void (*ap_main_fn)(void);
static uint64_t kernel_cr3;                 // the direct map (paging_init)
static uint8_t *ap_stacks;                  // plan index k's at (k - 1) * AP_STRIDE
// Boot core (seq_cst store), APs (acquire): the APs may go on.
static uint8_t go;

// CAS by the AP (forward) and the boot core (to LATE): enum slot_state.
static uint8_t slot_state[MAX_CPUS];
// Slots ONLINE, the boot core's included: each AP adds itself (seq_cst)
// right after its move, so the boot core's look is one load, not one per
// slot, and the pair with bsp_halted holds as for the slots.
static uint32_t nonline = 1;

uint32_t arch_ncpu(void)
{
    return __atomic_load_n(&ncpu, __ATOMIC_ACQUIRE);   // acquire: pairs with arch_finish_aps's release (cpus[] filled)
}

static uint8_t bsp_halted;          // boot core (seq_cst): halted in wait_online

// The boot core's halt until the last check-in (arch_wait_checked_in).
// Dekker: the boot core stores bsp_waits_last, then loads checked_in; an
// AP adds to checked_in, then loads bsp_waits_last. Both seq_cst, so one
// of them sees the other: the boot core sees every check-in, or the last
// AP sees it waiting and nudges it.
static uint32_t checked_in;         // APs (seq_cst add): checked in so far
static uint8_t bsp_waits_last;      // boot core (seq_cst store): halted in arch_wait_checked_in
// Boot core only, for the report: how the wait ended.
static uint64_t check_in_wait_start, check_in_wait_end;
static const char *check_in_wait_how;

static bool slot_move(uint32_t slot, uint8_t from, uint8_t to)
{
    // seq_cst: one side of the Dekker pair with bsp_halted (wait_online);
    // an AP's move also publishes its struct cpu to the boot core.
    return __atomic_compare_exchange_n(&slot_state[slot], &from, to, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

static uint8_t slot_get(uint32_t slot)
{
    return __atomic_load_n(&slot_state[slot], __ATOMIC_SEQ_CST);   // seq_cst: pairs with slot_move (Dekker, wait_online)
}

// Any AP, right after a seq_cst change the boot core may be waiting for.
void smp_nudge_boot_core(void)
{
    if (__atomic_load_n(&bsp_halted, __ATOMIC_SEQ_CST))    // seq_cst: Dekker with wait_online's store
        smp_nudge(cpus[0].apic_id);
}

// An AP just checked in. The last of the plan nudges the boot core if it
// waits for it. planned is 1 until the plan is read and only grows (but
// for inject=evict's one, whose second round's check-ins all nudge): a
// stale read makes an AP take itself for the last, which costs at most a
// needless nudge. Short of tickets the boot core waits for every ticket
// holder's check-in, then the second round's (check_ins_wanted): as many
// as the plan's or more, so every check-in from the plan's count on
// nudges and the last one among them; only a first round with fewer
// tickets than the plan (inject=tickets) or a second round one short (a
// slot not freed) leaves the last one to the wait's look every 1 ms.
static void count_check_in(void)
{
    uint32_t in = __atomic_add_fetch(&checked_in, 1, __ATOMIC_SEQ_CST);    // seq_cst: Dekker with bsp_waits_last
    if (in + 1 >= __atomic_load_n(&planned, __ATOMIC_RELAXED) &&           // relaxed: see above
        __atomic_load_n(&bsp_waits_last, __ATOMIC_SEQ_CST))                // seq_cst: Dekker with checked_in
        smp_nudge(cpus[0].apic_id);
}

static void nudged(uint8_t vector)
{
    (void)vector;       // ending the halt was the point
}

// The plan index of a core, 0 if the plan does not name it (the boot
// core's own index is 0 too: it never asks).
static uint32_t plan_index(uint32_t apic)
{
    for (uint32_t i = 1; i < planned; i++)
        if (plan_apic[i] == apic)
            return i;
    return 0;
}

// The slots an AP may hold: the plan's when started one by one, every
// ticket's when broadcast.
static uint32_t nslots(void)
{
    return broadcast ? MAX_CPUS : planned;
}

// The slot an AP with this APIC id holds; UINT32_MAX if none.
static uint32_t slot_holding(uint32_t apic)
{
    for (uint32_t i = 1; i < nslots(); i++)
        if (__atomic_load_n(&apic_of[i], __ATOMIC_RELAXED) == apic)   // relaxed: its check-in (seq_cst) is looked at after
            return i;
    return UINT32_MAX;
}

static uint32_t my_apic_id_cpuid(void)
{
    if (cpuid(0, 0).eax >= 0xB)
        return cpuid(0xB, 0).edx;
    return cpuid(1, 0).ebx >> 24;
}

// Any core, lock-free (the fatal paths): sends icr to every other core
// that has checked in (its slot ARRIVED or ONLINE; slot 0 is the boot
// core), by its APIC id, and returns how many. A core that has checked in
// has its IDT and IST stacks, so it can take an NMI. One that has not, an
// AP still in the trampoline or halted there for want of a ticket, has
// neither: an NMI makes it triple-fault, which resets the machine and
// loses the report the stop was for, and a broadcast reaches it.
uint32_t smp_send_to_checked_in(uint32_t icr)
{
    uint32_t n = 0;
    for (uint32_t slot = 0; slot < MAX_CPUS; slot++) {
        uint8_t st = slot ? slot_get(slot) : SLOT_ONLINE;
        if ((st == SLOT_ARRIVED || st == SLOT_ONLINE) && &cpus[slot] != this_cpu()) {
            lapic_send(cpus[slot].apic_id, icr);
            n++;
        }
    }
    return n;
}

bool smp_slot_late(uint32_t slot)
{
    return slot_get(slot) == SLOT_LATE;
}

bool smp_slot_setting_up(uint32_t slot)
{
    return slot_get(slot) == SLOT_ARRIVED;
}

void __attribute__((noreturn)) smp_ap_halt(void)
{
    for (;;)
        __asm__ volatile("cli; hlt");
}

// An AP after go, on its g0 stack: the rest of its set-up, then ready.
static void __attribute__((noreturn)) ap_setup(uint32_t slot)
{
    timer_init_cpu();
    tsc_sync_ap(slot);      // halts here if the slot goes LATE meanwhile
    cpus[slot].ready_tsc = rdtsc();
    cpus[slot].online = 1;
    if (!slot_move(slot, SLOT_ARRIVED, SLOT_ONLINE))
        smp_ap_halt();  // set up too late: the others go on without this core
    __atomic_fetch_add(&nonline, 1, __ATOMIC_SEQ_CST);      // seq_cst: Dekker with wait_online's bsp_halted
    smp_nudge_boot_core();
    tsc_sync_pass_turn(slot);
    ap_main_fn();
    smp_ap_halt();
}

// An AP told to leave its slot (EVICT, broadcast only, before go): FREE
// and halted for good in one asm block, so that nothing after the store
// touches the slot's stack, descriptors or struct cpu, which the boot
// core hands to another AP once it sees FREE (and INITs this one). The
// CAS fails only if the boot core gave up on the slot meanwhile (LATE):
// halting is right then too.
// Off the boot's first page (noinline, not in boot/text_order.txt): only
// an evicted AP runs it.
static void __attribute__((noreturn, noinline)) leave_slot(uint32_t slot)
{
    uint8_t expect = SLOT_EVICT;
    // lock cmpxchg, seq_cst: pairs with second_round's slot_get of FREE.
    __asm__ volatile("lock cmpxchgb %2, %0\n"
                     "1: cli\n"
                     "hlt\n"
                     "jmp 1b"
                     : "+m"(slot_state[slot]), "+a"(expect) : "q"((uint8_t)SLOT_FREE) : "memory");
    __builtin_unreachable();
}

// An AP checked in: halted until go, or until told to leave its slot.
// Interrupts are off at each look, so a nudge that comes after it stays
// pending and ends the halt at once. A nudge that came before this core's
// APIC was enabled may be lost, but then go (or EVICT) was set before the
// look (the boot core sets it, then nudges; the fence in ap_entry keeps
// the look after the enabling).
static void wait_for_go(uint32_t slot)
{
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {  // acquire: pairs with arch_finish_aps's store
        if (slot_get(slot) == SLOT_EVICT) {
            DEBUG_DELAY(smp_evict_leave);   // a host that leaves this vCPU unrun
            leave_slot(slot);
        }
        arch_idle_halt();
    }
}

// An AP at go, still on its early stack: to its own stacks and the
// kernel's page tables, or halted if the plan does not use it. Apart from
// ap_entry and off the boot's first page (boot/text_order.txt puts it with
// ap_setup): it runs after go, not on the way to the check-in.
static void __attribute__((noreturn, noinline)) ap_go(uint32_t slot, uint32_t apic)
{
    uint32_t k = plan_index(apic);
    if (!k || ap_never_answers(apic)) {     // broadcast: not in the MADT, or silenced by inject= since
        if (slot_move(slot, SLOT_ARRIVED, SLOT_LATE))
            tsc_sync_pass_turn(slot);   // the next slot may be waiting for this one
        smp_ap_halt();
    }
    write_cr3(kernel_cr3);  // serializing: the code the boot core patched meanwhile is seen as patched
    fpu_init(arch_simd_enabled);
    uint8_t *mine = ap_stacks + (uint64_t)(k - 1) * AP_STRIDE;
    struct cpu_stacks own = { .irq = (uint64_t)mine + IST_COUNT * ARCH_IST_STACK_SIZE + ARCH_IRQ_STACK_SIZE };
    for (int i = 0; i < IST_COUNT; i++)
        own.ist[i] = (uint64_t)mine + (uint64_t)(i + 1) * ARCH_IST_STACK_SIZE;
    cpu_use_stacks(slot, &own);
    uint64_t top = (uint64_t)mine + AP_STRIDE;
    cpus[slot].stack_top = top;
    __asm__ volatile("mov %0, %%rsp\n"
                     "xor %%ebp, %%ebp\n"   // the g0 stack's frames end the backtrace here
                     "call *%%rax\n"        // rax: not rbp, which the line before clears
                     "ud2"
                     :: "r"(top), "a"(ap_setup), "D"(slot) : "memory");
    __builtin_unreachable();
}

// 64-bit entry of every AP, on its early stack, interrupts off, on the
// boot page tables. Everything up to the check-in is what "online" means;
// the rest waits for go.
static void __attribute__((noreturn)) ap_entry(uint64_t ticket)
{
    uint32_t apic = my_apic_id_cpuid();
    uint32_t slot;
    if (broadcast) {        // the ticket's slot (the trampoline bounds the ticket); the plan is not known yet
        slot = ticket_slot[ticket];
        ASSERT(slot && slot < MAX_CPUS);
        __atomic_store_n(&apic_of[slot], apic, __ATOMIC_RELAXED);    // relaxed: published by the check-in's seq_cst CAS
    } else {                // the ticket picked the early stack; the slot is the plan's
        slot = plan_index(apic);
        if (!slot || ap_never_answers(apic))
            smp_ap_halt();  // not a core we asked for, or silent by inject=: reported later
    }
    struct ap_early *e = &ap_early[ticket_slot[ticket] - 1];    // the block of the ticket's early stack
    struct cpu_stacks early = { .irq = (uint64_t)&e->irq[AP_EARLY_IRQ] };
    for (int i = 0; i < IST_COUNT; i++)
        early.ist[i] = (uint64_t)&e->ist[AP_EARLY_IST];
    cpu_init_descriptors(slot, &early);     // the kernel's IDT: the trampoline's parked any NMI until here
    lapic_enable();
    this_cpu()->apic_id = apic;     // the ID CPUID gives is the one INIT leaves in the register
    cpus[slot].online_tsc = rdtsc();
    if (!slot_move(slot, SLOT_WAITING, SLOT_ARRIVED))
        smp_ap_halt();      // too late: reported already
    smp_nudge_boot_core();  // wait_online may be waiting for the check-in
    count_check_in();       // or arch_wait_checked_in, for the last one
    __atomic_thread_fence(__ATOMIC_SEQ_CST);    // the APIC enabled before go is looked at (wait_for_go)
    wait_for_go(slot);
    ap_go(slot, apic);
}

// Whether the CPU needs the wait between INIT and STARTUP: as Linux decides
// (smp_quirk_init_udelay: none on Intel family 6, AMD family 0xF and later,
// Hygon 0x18 and later), and none under a hypervisor, which handles INIT
// at once. The 10 ms is for the discrete APICs of the MP specification's
// time; init_delay= on the command line forces a wait.
static uint64_t init_wait_us(uint64_t asked_ns)
{
    if (asked_ns != ARCH_INIT_DELAY_AUTO)
        return asked_ns / 1000;
    struct cpuid_regs v = cpuid(0, 0), f = cpuid(1, 0);
    uint32_t family = (f.eax >> 8) & 0xF;
    if (family == 0xF)
        family += (f.eax >> 20) & 0xFF;
    bool intel = v.ebx == 0x756E6547, amd = v.ebx == 0x68747541, hygon = v.ebx == 0x6F677948;
    bool modern = (intel && family == 6) || (amd && family >= 0xF) || (hygon && family >= 0x18);
    return modern || arch_under_hypervisor() ? 0 : LEGACY_INIT_WAIT_US;
}

// The most cores the plan takes: MAX_CPUS, or inject=evict:S's S + 1
// (the second round leaves one of them out).
static uint32_t plan_max(void)
{
    return broadcast && evict_slots ? evict_slots + 1 : MAX_CPUS;
}

// Silent: the console is not up yet; arch_finish_aps reports what was skipped.
static uint32_t plan_cpus(const uint32_t *apic_ids, uint32_t count)
{
    uint32_t n = 1;
    plan_apic[0] = cpus[0].apic_id;
    no_madt = !apic_ids;
    for (uint32_t i = 0; apic_ids && i < count; i++) {
        uint32_t id = apic_ids[i];
        if (id == cpus[0].apic_id)
            continue;
        madt_aps++;
        if (id > 0xFF && !lapic_x2apic()) {
            need_x2apic[n_need_x2apic++] = id;
            continue;
        }
        if (n == plan_max()) {
            over_max++;
            continue;
        }
        plan_apic[n++] = id;
    }
    return n;
}

static void report_skipped(void)
{
    if (no_madt)
        kprintf("smp: no MADT; running on the boot core only\n");
    for (uint32_t i = 0; i < n_need_x2apic; i++)
        kprintf("smp: core with APIC id %u needs x2APIC, which this CPU lacks; skipped\n", need_x2apic[i]);
    if (over_max)
        kprintf("smp: more than %u cores; the rest (%u) are not used\n", plan_max(), over_max);
}

uint64_t arch_ap_early_bytes(uint32_t aps)
{
    return ((uint64_t)aps * sizeof(struct ap_early) + ARCH_PAGE_SIZE - 1) & ~(ARCH_PAGE_SIZE - 1);
}

// Off the boot's first page (not in boot/text_order.txt's head): the
// kernel calls it before the start, from a function of its own.
void arch_ap_early_blocks(uint64_t early, uint32_t aps)
{
    ASSERT(early && early + arch_ap_early_bytes(aps) <= (4ull << 30));  // the boot page tables map it
    ap_early = (struct ap_early *)(uintptr_t)early;
    ap_early_n = aps < MAX_CPUS - 1 ? aps : MAX_CPUS - 1;
}

// slot <= ap_early_n: trampoline_prepare and second_round hand out no more.
static uint64_t early_stack_of(uint32_t slot)
{
    return (uint64_t)&ap_early[slot - 1].stack[AP_EARLY_STACK];
}

// Boot core, before the first INIT of tickets 0 .. tickets - 1: what the
// first AP to reach each would do with every other AP of the round
// contending for it, done once, here. On hardware it costs a call and a
// store per ticket; under TCG:
//
// - It runs a block of the trampoline page. The first block QEMU
//   translates on a page written since its last translation walks every
//   vCPU's TLB (4.4 ms at 256 vCPUs on this host), holding the page's
//   spinlock, and every vCPU that translates from the page meanwhile
//   spins on that lock (tb_lock_page0). Left to the first AP of a
//   broadcast, up to 255 threads spin behind it, whole host time slices
//   each while the host has the holder preempted.
// - It writes each ticket's stack top. An AP's first store to guest RAM
//   the host has not backed yet faults in its QEMU thread, and where the
//   host backs it with 2 MiB pages every thread that faults before the
//   first has its page mapped zeroes a 2 MiB page of its own (4.5 ms of
//   CPU each on this host).
static void trampoline_warm(uint32_t tickets)
{
    for (uint32_t t = 0; t < tickets; t++)
        *(volatile uint64_t *)(uintptr_t)(early_stack_top[t] - sizeof(uint64_t)) = 0;
    ((void (*)(void))(uintptr_t)(AP_TRAMPOLINE + offsetof(struct ap_params, warm)))();
}

// The trampoline page and its parameters, the boot page tables' CR3 (the
// direct map does not exist yet), and tickets 0 .. tickets - 1, ticket t
// for slot t + 1 and its early stack.
static void trampoline_prepare(uint32_t tickets)
{
    ASSERT(tickets <= ap_early_n);
    memcpy((void *)(uintptr_t)AP_TRAMPOLINE, ap_trampoline_start, trampoline_len());
    struct ap_params *p = (struct ap_params *)(uintptr_t)AP_TRAMPOLINE;
    for (uint32_t t = 0; t < tickets; t++) {
        ticket_slot[t] = t + 1;
        early_stack_top[t] = early_stack_of(t + 1);
    }
    p->tickets = tickets;
    ASSERT(read_cr3() < (4ull << 30));
    p->cr3 = read_cr3();
    p->entry = (uint64_t)ap_entry;
    p->stacks = (uint64_t)early_stack_top;
    p->ticket = (uint64_t)&ticket_next;
    __atomic_store_n(&ticket_next, 0, __ATOMIC_RELAXED);     // relaxed: the fence below publishes it
    p->efer = (uint32_t)(rdmsr(MSR_EFER) & ((1u << 8) | (1u << 11)));   // LME, NXE
    p->cr4 = (uint32_t)(read_cr4() & (CR4_PAE | CR4_PGE));
    trampoline_warm(tickets);       // after the page's last write
    // seq_cst fence: the parameters are in memory before the first INIT
    // (an APIC write, which is not ordered by a plain release).
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

// Only the plan's cores go ONLINE (an AP the plan does not name goes LATE).
static uint32_t count_online(void)
{
    return __atomic_load_n(&nonline, __ATOMIC_SEQ_CST);     // seq_cst: Dekker with ap_setup's add
}

static void send_startup(uint32_t n, bool only_waiting)
{
    for (uint32_t i = 1; i < n; i++)
        if (!only_waiting || slot_get(i) == SLOT_WAITING)
            lapic_send(apic_of[i], ICR_STARTUP | ICR_ASSERT | (AP_TRAMPOLINE >> 12));
}

// Boot core: answers TSC questions until every AP is ready or the
// timeout; the second STARTUP goes to the ones not in after 200 us. The
// timeout counts from the last sign of progress (an AP ready, a TSC
// question answered), not from go: a thousand APs take their turns at
// the TSC check one after another, seconds under TCG on a busy host,
// and only an AP that stops the line should run out of time. It is
// timeout_ns for each 64 cores planned: go wakes every AP at once, and a
// host runs that many vCPU threads by turns, the boot core's among them,
// so a gap between two signs of progress grows with their number (at
// 1024 vCPUs on a 2-CPU host with 30 runnable threads beside them, no AP
// had answered 2 s after go).
// Boot core only, for the report when a planned core is missing: how its
// wait for the APs ended (all ready, or the timeout), when, and the last
// sign of progress before it; and what number_cores found of the missing.
static uint64_t online_wait_end, online_last_progress;
static bool online_wait_all;
static uint32_t missing_no_slot, missing_not_ready, missing_halted;

// Boot core, when its wait for ready ran out: the first AP still setting
// up, which holds the TSC turn the others wait for (arch/tsc_sync.c), its
// check's state, and where it is (an NMI records where it was
// interrupted), so that a log of a stalled start-up says which wait
// stopped the line.
static void report_first_in_turn(void)
{
    for (uint32_t s = 1; s < nslots(); s++) {
        if (slot_get(s) != SLOT_ARRIVED)
            continue;
        uint32_t apic = __atomic_load_n(&apic_of[s], __ATOMIC_RELAXED);   // relaxed: its check-in (seq_cst) was seen
        char what[96];
        tsc_sync_describe(s, what, sizeof what);
        kprintf("smp: the wait for ready ran out with slot %u (APIC id %u) first in the TSC turns: %s\n", s,
                apic, what);
        if (arch_report_slot(s, apic, "first in the start-up's TSC turns when the wait ran out")) {
            uint64_t until = rdtsc() + arch_ns_to_cycles(10000000);   // an NMI takes microseconds
            while (!arch_report_flush(s) && rdtsc() < until)
                cpu_relax();
        }
        return;
    }
}

static void wait_online(uint32_t n, bool second_startup, uint64_t timeout_ns)
{
    ASSERT(!second_startup || !broadcast);  // the broadcast is under a hypervisor only
    uint64_t start = rdtsc(), spin = arch_ns_to_cycles(SMP_SPIN_US * 1000);
    uint64_t second = start + arch_ns_to_cycles(SECOND_SIPI_US * 1000ull);
    uint64_t timeout = arch_ns_to_cycles(timeout_ns) * ((planned + 63) / 64), deadline = start + timeout;
    uint64_t busy = start;          // when a question was last answered
    uint32_t seen = count_online();
    bool second_sent = !second_startup;
    online_last_progress = start;
    for (uint32_t up; (up = count_online()) < planned;) {
        uint64_t now = rdtsc();
        if (tsc_sync_serve(nslots()))
            busy = now;
        if (up > seen || busy == now) {
            seen = up;
            deadline = now + timeout;
            online_last_progress = now;
        }
        if (!second_sent && now >= second) {
            send_startup(n, true);
            second_sent = true;
        }
        if (now >= deadline)
            break;
        if (now - busy < spin) {
            cpu_relax();
            continue;
        }
        __atomic_store_n(&bsp_halted, 1, __ATOMIC_SEQ_CST);        // Dekker with smp_nudge_boot_core
        if (!tsc_sync_pending(nslots()) && count_online() < planned) {
            uint64_t wake = now + arch_ns_to_cycles(1000000);
            wake = !second_sent && second < wake ? second : wake;
            arch_timer_arm(deadline < wake ? deadline : wake);
            arch_idle_halt();
        }
        __atomic_store_n(&bsp_halted, 0, __ATOMIC_RELAXED);    // relaxed: a stale 1 costs an AP one needless IPI
        busy = rdtsc();
    }
    arch_timer_cancel();
    online_wait_end = rdtsc();
    online_wait_all = count_online() >= planned;
    if (!online_wait_all)
        report_first_in_turn();
}

// Whether the AP at slot is ONLINE for good; if not, its slot is LATE
// from here on (moved by this core, or by the AP itself). One CAS decides
// against the AP's own move.
static bool keep_or_drop(uint32_t slot)
{
    for (;;) {
        uint8_t st = slot_get(slot);
        if (st == SLOT_ONLINE)
            return true;
        if (st == SLOT_LATE)
            return false;
        if (slot_move(slot, st, SLOT_LATE)) {
            tsc_sync_release(slot);     // an AP halted in the TSC check sees LATE
            return false;
        }
    }
}

// The cores that came up are numbered densely, in the plan's (the MADT's)
// order: a missing one leaves no hole, and a broadcast's arrival order
// does not show. Every slot with no AP yet is closed first. Returns how
// many there are.
static uint32_t number_cores(void)
{
    for (uint32_t i = 1; i < nslots(); i++)
        slot_move(i, SLOT_WAITING, SLOT_LATE);  // closed: an AP that checks in later halts
    uint32_t up = 1;
    for (uint32_t k = 1; k < planned; k++) {
        uint32_t slot = slot_holding(plan_apic[k]);
        uint8_t st = slot == UINT32_MAX ? SLOT_WAITING : slot_get(slot);
        if (slot == UINT32_MAX || !keep_or_drop(slot)) {
            kprintf("smp: core with APIC id %u did not come up; continuing without it\n", plan_apic[k]);
            missing_no_slot += slot == UINT32_MAX;
            missing_not_ready += slot != UINT32_MAX && st == SLOT_ARRIVED;
            missing_halted += slot != UINT32_MAX && st != SLOT_ARRIVED;
            continue;
        }
        cpus[slot].index = up;
        cpu_of[up++] = &cpus[slot];
    }
    for (uint32_t i = 1; i < nslots(); i++)     // broadcast: the arrivals the plan does not name, silently
        if (!plan_index(__atomic_load_n(&apic_of[i], __ATOMIC_RELAXED)))   // relaxed: the close above ordered the check-ins
            keep_or_drop(i);
    return up;
}

static void boot_core_online(void)
{
    cpus[0].online = 1;
    cpus[0].online_tsc = rdtsc();
    cpus[0].ready_tsc = cpus[0].online_tsc;
    // The boot core's halts in wait_online end at a nudge or its timer,
    // and the APs' wait for go ends at a nudge; the kernel installs its
    // own timer handler later.
    arch_set_irq_handler(VEC_SMP_NUDGE, nudged);
    arch_set_irq_handler(VEC_TIMER, nudged);
    for (uint32_t i = 1; i < MAX_CPUS; i++)
        apic_of[i] = UINT32_MAX;
}

void arch_ap_trampoline_range(uint64_t *phys, uint64_t *len)
{
    *phys = AP_TRAMPOLINE;
    *len = trampoline_len();
}

// insncount's markers 5 and 6 (tools/insncount): the broadcast start and
// the end of the boot core's wait for the check-ins, so that each AP's
// instructions to online, and with threads=1 its thread's host time, are
// read on the plugin's MARK lines (docs/performance.md, "AP start-up").
// A NOP on hardware.
#define SMP_MARK(id) __asm__ volatile(".byte 0x0f,0x1f,0x80," #id ",0x00,0xed,0xfe" ::: "memory")

bool arch_start_aps_early(void)
{
    if (!arch_under_hypervisor() || !ap_early_n)
        return false;       // hardware: only the MADT's enabled cores are started (above)
    arch_boot_mark("aps");
    boot_core_online();
    broadcast = true;
    planned = 1;            // until the MADT is read
    round1_tickets = tickets_limit && tickets_limit < ap_early_n ? tickets_limit : ap_early_n;
    trampoline_prepare(round1_tickets);
    SMP_MARK(0x05);
    // Under a hypervisor no wait after INIT (init_wait_us); both IPIs
    // reach every core but this one, whatever their APIC ids.
    lapic_send(0, ICR_INIT | ICR_ASSERT | ICR_LEVEL | ICR_ALL_BUT_SELF);
    arch_boot_mark("startup");
    lapic_send(0, ICR_STARTUP | ICR_ASSERT | ICR_ALL_BUT_SELF | (AP_TRAMPOLINE >> 12));
    return true;
}

// The wait's bound, in TSC cycles (the rate is not known yet): 20 ms at
// 1 GHz, 7.7 ms at this machine's 2.6 GHz, past the slowest 64-vCPU AP
// phase seen under TCG. Between looks, the APIC timer's count (1 ms at the
// 1 GHz QEMU and KVM give it): a look is only the fallback for a nudge.
#define CHECK_IN_WAIT_CYCLES 20000000ull
#define CHECK_IN_LOOK_COUNT 1000000u

// The boot core's halt that gives its host CPU to the AP threads queued
// behind it (arch.h). The timer is only the way back: how long the halt
// lasts is the host's to decide (0.1-1 ms at 64 vCPUs under TCG here).
#define YIELD_COUNT 20000u          // 20 us at the 1 GHz QEMU and KVM give the APIC timer

void arch_boot_yield_to_aps(void)
{
    if (!broadcast)
        return;
    ASSERT(cpu_index() == 0);
    lapic_timer_oneshot(YIELD_COUNT, VEC_TIMER);
    arch_idle_halt();       // interrupts off before and after: a timer that fired first ends it at once
    lapic_timer_oneshot(0, VEC_TIMER);
}

// Boot core, broadcast: how many APs have taken a number in the
// trampoline, with a ticket or without.
static uint32_t tickets_taken(void)
{
    return __atomic_load_n(&ticket_next, __ATOMIC_RELAXED);     // relaxed: a count only; the check-ins (seq_cst) order the rest
}

// Whether the broadcast started more APs than the first round had
// tickets for (the second round's case).
static bool short_of_tickets(void)
{
    return madt_aps > round1_tickets;
}

// The check-ins the boot core waits for: the plan's, or, short of
// tickets, every ticket holder's (the plan's and the others) and the
// second round's. An unplanned holder told to leave was counted when it
// checked in, and the AP that takes its slot counts again.
static uint32_t check_ins_wanted(void)
{
    return short_of_tickets() ? round1_tickets + round2_restarted : planned - 1;
}

// inject=evict: the first ticket's holder leaves the plan, as if the
// MADT had not named it (the plan's last core if that holder is not in
// it), before any AP reads the plan (after go).
static void plan_leave_out_first_holder(void)
{
    uint32_t i = plan_index(__atomic_load_n(&apic_of[1], __ATOMIC_RELAXED));   // relaxed: its check-in was seen
    i = i ? i : planned - 1;
    for (; i + 1 < planned; i++)
        plan_apic[i] = plan_apic[i + 1];
    __atomic_store_n(&planned, planned - 1, __ATOMIC_RELAXED);   // relaxed: as arch_start_aps's store
}

// Boot core, the second round (the comment at the top): every AP the MADT
// lists has taken its number and every first-round holder has checked in,
// so apic_of[] says which planned APs hold no slot, and no first-round AP
// reads a ticket's entries again. A round that must take slots from APs
// waits until each has left, which on a loaded host takes as long as the
// host leaves its vCPU unrun: without may_evict (the TSC's rate, and so
// the AP timeout, not known yet) it does nothing and returns false.
static bool second_round(uint64_t deadline, bool may_evict)
{
    static uint32_t missing[MAX_CPUS], reuse[MAX_CPUS], leaving[MAX_CPUS];
    uint32_t k = 0, n = 0;
    for (uint32_t i = 1; i < planned; i++)
        if (slot_holding(plan_apic[i]) == UINT32_MAX)
            missing[k++] = plan_apic[i];
    // The slots there are: ap_early_n, or inject=evict:S's S - 1.
    uint32_t last = evict_slots && evict_slots - 1 < ap_early_n ? evict_slots - 1 : ap_early_n;
    for (uint32_t s = round1_tickets + 1; s <= last && n < k; s++)
        reuse[n++] = s;                 // no ticket named it: WAITING, never held
    if (n < k && !may_evict)
        return false;
    uint32_t first_evicted = n;
    for (uint32_t s = 1; s <= round1_tickets && n < k; s++) {
        uint32_t apic = __atomic_load_n(&apic_of[s], __ATOMIC_RELAXED);   // relaxed: its check-in (seq_cst) was seen
        if (!plan_index(apic) && slot_move(s, SLOT_ARRIVED, SLOT_EVICT)) {
            leaving[n] = apic;
            reuse[n++] = s;
            smp_nudge(apic);            // it halts in wait_for_go: the nudge makes it look
        }
    }
    // n == k when there is an early block for every planned AP (the
    // caller sized them by the hypervisor's count); with fewer, the
    // planned APs past n stay down and are reported missing.
    // Every one told to leave moves to FREE and halts for good; the slot
    // is reused only then. One that has not by the deadline keeps its
    // slot (EVICT), and the planned AP meant for it stays down.
    for (uint32_t j = first_evicted; j < n; j++) {
        while (slot_get(reuse[j]) != SLOT_FREE && rdtsc() < deadline) {
            lapic_timer_oneshot(YIELD_COUNT, VEC_TIMER);
            arch_idle_halt();           // its host CPU to the AP that has to move
        }
    }
    lapic_timer_oneshot(0, VEC_TIMER);
    struct ap_params *p = (struct ap_params *)(uintptr_t)AP_TRAMPOLINE;
    uint32_t t = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t s = reuse[j];
        if (j >= first_evicted) {
            if (!slot_move(s, SLOT_FREE, SLOT_WAITING)) {
                round2_not_freed++;
                continue;
            }
            lapic_send(leaving[j], ICR_INIT | ICR_ASSERT | ICR_LEVEL);    // inert: it waits for a STARTUP it never gets
            round2_evicted++;
        }
        __atomic_store_n(&apic_of[s], UINT32_MAX, __ATOMIC_RELAXED);    // relaxed: the fence below publishes it
        ticket_slot[t] = s;
        early_stack_top[t] = early_stack_of(s);
        missing[t++] = missing[j];
    }
    __atomic_store_n(&ticket_next, 0, __ATOMIC_RELAXED);     // relaxed: the fence below publishes it
    p->tickets = t;
    round2_restarted = t;
    round2 = ROUND2_DONE;
    // seq_cst fence: the tickets and slots are in memory before the INITs
    // (APIC writes, which a plain release does not order).
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (uint32_t j = 0; j < t; j++)
        lapic_send(missing[j], ICR_INIT | ICR_ASSERT | ICR_LEVEL);     // one halted in the trampoline starts over
    for (uint32_t j = 0; j < t; j++)
        lapic_send(missing[j], ICR_STARTUP | ICR_ASSERT | (AP_TRAMPOLINE >> 12));
    return true;
}

// Boot core, broadcast: halts until every check-in it waits for is in
// (check_ins_wanted), short of tickets the second round in between, or
// until the deadline (TSC cycles), or, without may_evict, until the
// second round is left to arch_finish_aps (second_round). Returns whether
// all came in.
static bool wait_check_ins(uint64_t deadline, bool may_evict)
{
    __atomic_store_n(&bsp_waits_last, 1, __ATOMIC_SEQ_CST);    // seq_cst: Dekker with count_check_in
    bool all = false;
    for (;;) {
        uint32_t in = __atomic_load_n(&checked_in, __ATOMIC_SEQ_CST);     // seq_cst: Dekker with count_check_in
        if (round2 == ROUND2_PENDING && tickets_taken() >= madt_aps && in >= round1_tickets) {
            if (evict_slots)
                plan_leave_out_first_holder();
            round2 = ROUND2_LEFT;
        }
        if (round2 == ROUND2_LEFT) {
            if (!second_round(deadline, may_evict))
                break;
            continue;
        }
        all = round2 == ROUND2_DONE && in >= check_ins_wanted();
        if (all || rdtsc() >= deadline)
            break;
        lapic_timer_oneshot(CHECK_IN_LOOK_COUNT, VEC_TIMER);
        arch_idle_halt();   // interrupts are off between the look and the halt: a nudge then ends it at once
    }
    __atomic_store_n(&bsp_waits_last, 0, __ATOMIC_RELAXED);    // relaxed: a stale 1 costs the last AP a needless nudge
    lapic_timer_oneshot(0, VEC_TIMER);                          // a count of 0 stops it
    return all;
}

void arch_wait_checked_in(void)
{
    if (!broadcast)
        return;
    ASSERT(cpu_index() == 0);
    check_in_wait_start = rdtsc();
    bool all = wait_check_ins(check_in_wait_start + CHECK_IN_WAIT_CYCLES, false);
    check_in_wait_end = rdtsc();
    SMP_MARK(0x06);
    check_in_wait_how = all                    ? "all in"
                        : round2 == ROUND2_LEFT ? "the first round in; the second round takes slots from APs, "
                                                  "bounded by ap_timeout="
                                                : "its bound came first";
}

void arch_start_aps(const struct arch_ap_start *how)
{
    uint32_t n = plan_cpus(how->apic_ids, how->count);
    if (broadcast) {        // started already; the plan says which of them are used
        __atomic_store_n(&planned, n, __ATOMIC_RELAXED);   // relaxed: the APs read it after go; the boot core alone before
        round2 = short_of_tickets() ? ROUND2_PENDING : ROUND2_DONE;
        return;
    }
    arch_boot_mark("aps");
    boot_core_online();
    planned = n;
    init_wait = init_wait_us(how->init_delay_ns);
    if (n == 1)
        return;
    for (uint32_t i = 1; i < n; i++)
        apic_of[i] = plan_apic[i];
    trampoline_prepare(n - 1);
    for (uint32_t i = 1; i < n; i++)
        lapic_send(apic_of[i], ICR_INIT | ICR_ASSERT | ICR_LEVEL);
    if (init_wait)
        tsc_delay_us(init_wait);    // only where the TSC is calibrated (kernel/main.c starts the APs late then)
    arch_boot_mark("startup");
    send_startup(n, false);
}

void arch_inject_tickets(uint32_t n)
{
    tickets_limit = n;
}

void arch_inject_evict(uint32_t slots)
{
    ASSERT(slots >= 2 && slots < MAX_CPUS);
    evict_slots = slots;
    tickets_limit = slots - 1;
}

uint32_t arch_broadcast_tickets(void)
{
    return broadcast && tickets_limit ? round1_tickets : 0;
}

static void report_second_round(void)
{
    if (!broadcast || !short_of_tickets())
        return;
    if (round2 == ROUND2_GIVEN_UP) {
        kprintf("smp: %u APs started for %u ticket%s, and not all had taken a number or checked in when "
                "the wait ran out: no second round; a planned core without a ticket stays down\n",
                madt_aps, round1_tickets, round1_tickets == 1 ? "" : "s");
        return;
    }
    kprintf("smp: %u APs started for %u ticket%s; second round: %u planned AP%s restarted, %u unplanned AP%s "
            "evicted from %s slot%s%s\n", madt_aps, round1_tickets, round1_tickets == 1 ? "" : "s",
            round2_restarted, round2_restarted == 1 ? "" : "s",
            round2_evicted, round2_evicted == 1 ? "" : "s", round2_evicted == 1 ? "its" : "their",
            round2_evicted == 1 ? "" : "s", round2_not_freed ? " (some told to leave did not)" : "");
}

// Each core online and its APIC id: a line per core up to
// ONLINE_LINES_MAX cores, "cpu 3: apic id 3 online"; beyond, a line per
// run of cores whose APIC ids go up by one with their indexes,
// "cpus 0-1023: apic ids 0-1023 online" (a run of one as above).
#define ONLINE_LINES_MAX 64
static void report_online(uint32_t up)
{
    for (uint32_t i = 0; i < up;) {
        uint32_t j = i;
        while (up > ONLINE_LINES_MAX && j + 1 < up && cpu_of[j + 1]->apic_id == cpu_of[j]->apic_id + 1)
            j++;
        if (j == i)
            kprintf("cpu %u: apic id %u online\n", i, cpu_of[i]->apic_id);
        else
            kprintf("cpus %u-%u: apic ids %u-%u online\n", i, j, cpu_of[i]->apic_id, cpu_of[j]->apic_id);
        i = j + 1;
    }
}

static uint64_t us_since_entry(uint64_t tsc)
{
    uint64_t entry = arch_boot_entry_tsc();
    return tsc > entry ? arch_cycles_to_ns(tsc - entry) / 1000 : 0;
}

void arch_finish_aps(uint64_t timeout_ns, void (*ap_main)(void))
{
    report_skipped();
    // Broadcast, short of tickets: the second round comes before go (an
    // AP told to leave its slot looks for that only before go), bounded
    // by the AP timeout if the check-in wait ran out first or left it here.
    if (broadcast && round2 != ROUND2_DONE &&
        !wait_check_ins(rdtsc() + arch_ns_to_cycles(timeout_ns), true) && round2 != ROUND2_DONE)
        round2 = ROUND2_GIVEN_UP;
    report_second_round();
    uint32_t n = planned;       // after the second round, which may leave a core out (inject=evict)
    // Broadcast: go even with a plan of one, so that the arrivals halt
    // with interrupts off (LATE) instead of waiting with them on.
    if (n > 1 || broadcast) {
        // Uncleared: zeroing 64 KiB for each of 63 APs was 0.5 M
        // instructions, about 2 ms under TCG.
        ap_stacks = n > 1 ? arch_pages.alloc_uncleared((n - 1) * (AP_STRIDE / ARCH_PAGE_SIZE)) : 0;
        ap_main_fn = ap_main;
        kernel_cr3 = read_cr3();
        arch_boot_mark("go");
        __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);     // release: the plan, stacks, CR3 and ap_main to wait_for_go; seq_cst: before the nudge
        arch_send_ipi_all_but_self(VEC_SMP_NUDGE);      // the APs halted in wait_for_go
        wait_online(n, !arch_under_hypervisor(), timeout_ns);  // a second STARTUP on hardware only
    }
    uint32_t up = number_cores();
    report_online(up);
    uint64_t worst = 0, online = cpus[0].online_tsc, ready = online;
    for (uint32_t i = 0; i < up; i++) {
        uint32_t slot = (uint32_t)(cpu_of[i] - cpus);
        if (slot) {
            uint64_t b = tsc_sync_report(slot, i);
            worst = b > worst ? b : worst;
        }
        online = cpu_of[i]->online_tsc > online ? cpu_of[i]->online_tsc : online;
        ready = cpu_of[i]->ready_tsc > ready ? cpu_of[i]->ready_tsc : ready;
    }
    kprintf("smp: %u of %u cores online (%s, %lu us INIT wait), kernel entry to last core %lu us, "
            "to last core ready %lu us; TSCs within %lu cycles of the boot core's\n", up, n,
            lapic_x2apic() ? "x2apic" : "xapic", init_wait, us_since_entry(online), us_since_entry(ready), worst);
    if (check_in_wait_start)
        kprintf("smp: the boot core waited for the check-ins from %lu to %lu us: %s\n",
                us_since_entry(check_in_wait_start), us_since_entry(check_in_wait_end),
                check_in_wait_how);
    if (up < n)     // what the missing ones were doing, so that a log says which wait failed
        kprintf("smp: of the %u missing: %u held no slot with their APIC id, %u had checked in and were not "
                "ready, %u had halted; the wait for ready ended at %lu us (%s, last progress at %lu us) "
                "with %u cores counted ready\n", n - up, missing_no_slot, missing_not_ready, missing_halted,
                us_since_entry(online_wait_end), online_wait_all ? "all ready by the count" : "the timeout",
                us_since_entry(online_last_progress), count_online());
    __atomic_store_n(&ncpu, up, __ATOMIC_RELEASE);         // release: cpus[], cpu_of[], to arch_ncpu's acquire
}
