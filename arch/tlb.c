// SPDX-License-Identifier: MIT
// TLB shoot-down: after unmapping pages, the shooter makes every other
// online core reload CR3 (goroutine stacks are not global mappings, so
// that drops them all) and waits until each has, so the pages can be
// reused.
//
// Each shoot-down has a number (tlb_gen); each core records in its own
// slot of tlb_done the number it last flushed for. A core has flushed for
// shoot-down g once tlb_done[core] >= g: it read tlb_gen >= g before its
// CR3 reload, and the shooter unmapped before it stored g.
//
// A core waiting for a lock (between arch_lock_wait_begin and _end,
// interrupts off) is not waited for: it sets tlb_waiting[core], and while
// set it touches nothing but the lock, these words and its own live stack,
// none of which a shoot-down frees; on leaving it flushes for any number
// it missed before going on. At 256 vCPUs on a 2-CPU host the waiters on
// sched.lock are hundreds of runnable vCPU threads, and a shoot-down that
// needed each to be run by the host once waited 1-2 s (docs/performance.md).
// The shooter counts a waiting core as flushed: the core clears its flag
// (a seq-cst exchange) before it reads tlb_gen, the shooter stores tlb_gen
// and fences before it reads the flag, so either the shooter waits for it
// or it reads the new number and flushes. The flush reloads CR3, which
// serializes, so static_branch's sync through a shoot-down holds for it
// too: it executes no patched site before that.
//
// Invariants:
//  - One shoot-down at a time: tlb_busy is held from the number's store
//    to the last ack, and only its holder writes tlb_gen.
//  - tlb_done[c] is written by core c only (its IPI handler, or
//    arch_lock_relax while it waits for a lock); it never goes down and
//    never passes tlb_gen. tlb_waiting[c] is written by core c only.
//  - A shoot-down g is complete when every other core has tlb_done >= g
//    or was seen waiting for a lock after g was stored.
//  - The shooter stays on one core throughout (interrupts off or
//    preemption disabled: ASSERTed). A shooter that moved would flush the
//    core it left and skip the core it runs on, whose TLB nobody flushed.
//  - While it waits, the shooter keeps interrupts as its caller had them;
//    a waiting core needs nothing from any other core but its ack, so the
//    only way to hang is a core that never takes the IPI. After a second
//    the stall is reported (which cores, and where each is) and the wait
//    goes on: the report is a diagnostic, never a way out.
//
// Orderings: the unmapping PTE stores and tlb_gen's release store come
// before the IPI (lapic_send fences where the ICR write alone would not
// order them); the handler's acquire load of tlb_gen pairs with that
// store, its release store of tlb_done with the shooter's acquire load.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/panic.h"
#include "lib/printf.h"


static uint8_t tlb_busy;
static uint64_t tlb_gen;
static uint64_t tlb_done[MAX_CPUS];
static uint8_t tlb_waiting[MAX_CPUS];
uint64_t arch_tlb_stall_reports;            // how many stalls were reported (tests read it)
// Written by the holder of tlb_busy only, read by anyone (a snapshot).
static uint64_t tlb_count, tlb_wait_total, tlb_wait_max;  // shoot-downs, their waits (cycles)
uint64_t arch_tlb_stall_report_ns = 1000000000ull;     // a shoot-down waiting this long is reported

static void tlb_ipi(uint8_t vector)
{
    (void)vector;
    uint64_t g = __atomic_load_n(&tlb_gen, __ATOMIC_ACQUIRE);     // pairs with the shooter's release store
    write_cr3(read_cr3());
    __atomic_store_n(&tlb_done[cpu_index()], g, __ATOMIC_RELEASE); // after the flush; pairs with the shooter's acquire
}

// A core waiting for a lock, interrupts off: the shoot-down's IPI waits
// for them, and hundreds of cores queued on sched.lock held shoot-downs
// for up to 28 s (256 vCPUs under TCG), so the waiter flushes and acks
// here. The IPI still comes once interrupts are on and flushes again for
// the same or a later number: tlb_done does not go down. Nothing is
// pending before the first shoot-down, which comes after every core has
// its index.
void arch_lock_relax(void)
{
    uint64_t g = __atomic_load_n(&tlb_gen, __ATOMIC_RELAXED);     // relaxed: a hint; tlb_ipi loads it again (acquire)
    if (g && __atomic_load_n(&tlb_done[cpu_index()], __ATOMIC_RELAXED) < g)   // relaxed: this core's own slot
        tlb_ipi(VEC_TLB);
    cpu_relax();
}

void arch_tlb_stats(struct arch_tlb_stats *st)
{
    st->shootdowns = __atomic_load_n(&tlb_count, __ATOMIC_RELAXED);     // relaxed: a statistic
    st->wait_ns = arch_cycles_to_ns(__atomic_load_n(&tlb_wait_total, __ATOMIC_RELAXED));   // relaxed: a statistic
    st->wait_max_ns = arch_cycles_to_ns(__atomic_load_n(&tlb_wait_max, __ATOMIC_RELAXED)); // relaxed: a statistic
}

void arch_lock_wait_begin(void)
{
    ASSERT(!irqs_enabled());    // an interrupt handler would touch more than the lock
    __atomic_store_n(&tlb_waiting[cpu_index()], 1, __ATOMIC_RELAXED);   // relaxed: a shooter that misses it waits for arch_lock_relax's answer
}

void arch_lock_wait_end(void)
{
    uint32_t self = cpu_index();
    __atomic_exchange_n(&tlb_waiting[self], 0, __ATOMIC_SEQ_CST);   // before the tlb_gen load: pairs with the shooter's fence
    uint64_t g = __atomic_load_n(&tlb_gen, __ATOMIC_SEQ_CST);         // after the flag's clearing (above)
    if (__atomic_load_n(&tlb_done[self], __ATOMIC_RELAXED) < g)       // relaxed: this core's own slot
        tlb_ipi(VEC_TLB);
}

uint32_t arch_lock_waiters(void)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < arch_ncpu(); c++)
        n += __atomic_load_n(&tlb_waiting[c], __ATOMIC_RELAXED);   // relaxed: a count to show
    return n;
}

void tlb_init(void)
{
    arch_set_irq_handler(VEC_TLB, tlb_ipi);
}

// The first core (other than self) that has not flushed for g, from
// index from on; ncpu when all have.
static uint32_t tlb_first_behind(uint64_t g, uint32_t self, uint32_t from, uint32_t ncpu)
{
    for (uint32_t c = from; c < ncpu; c++)
        if (c != self && __atomic_load_n(&tlb_done[c], __ATOMIC_ACQUIRE) < g &&  // pairs with tlb_ipi's release
            !__atomic_load_n(&tlb_waiting[c], __ATOMIC_SEQ_CST))    // after tlb_gen's store and fence: pairs with arch_lock_wait_end
            return c;
    return ncpu;
}

// Cores that have not acked shoot-down g by now: named, and each asked
// (NMI) where it is. One line: the cores are listed into a buffer first,
// the first TLB_STALL_LIST of them and how many more.
#define TLB_STALL_LIST 32
static void tlb_report_stall(uint64_t g, uint32_t self, uint32_t ncpu, uint64_t waited)
{
    char list[6 * TLB_STALL_LIST + 32] = "";
    size_t len = 0;
    uint32_t n = 0;
    for (uint32_t c = tlb_first_behind(g, self, 0, ncpu); c < ncpu; c = tlb_first_behind(g, self, c + 1, ncpu))
        if (n++ < TLB_STALL_LIST)
            len += (size_t)snprintf(list + len, sizeof list - len, " %u", c);
    if (!n)
        return;                 // they answered meanwhile
    if (n > TLB_STALL_LIST)
        snprintf(list + len, sizeof list - len, " and %u more", n - TLB_STALL_LIST);
    __atomic_fetch_add(&arch_tlb_stall_reports, 1, __ATOMIC_RELAXED);    // a counter
    kprintf("tlb: shoot-down %lu from core %u has waited %lu ms for core(s)%s; still waiting\n", g, self,
            arch_cycles_to_ns(waited) / 1000000, list);
    for (uint32_t c = tlb_first_behind(g, self, 0, ncpu); c < ncpu; c = tlb_first_behind(g, self, c + 1, ncpu))
        arch_report_cpu(c, "has not acknowledged a TLB shoot-down");
    // The NMIs only record (arch/trap.c); printed from here, an ordinary
    // context, once recorded (an NMI takes microseconds; 10 ms is plenty).
    uint64_t until = arch_cycles() + arch_ns_to_cycles(10000000);
    for (uint32_t c = 0; c < ncpu; c++)
        while (c != self && !arch_report_flush(c) && arch_cycles() < until)
            cpu_relax();
}

bool arch_tlb_shootdown(void)
{
    ASSERT(!irqs_enabled() || preempt_count() > 0);    // pinned to this core: see the top
    if (__atomic_exchange_n(&tlb_busy, 1, __ATOMIC_ACQUIRE))   // pairs with the release at the end
        return false;
    uint32_t self = cpu_index(), ncpu = arch_ncpu();
    uint64_t g = tlb_gen + 1;                       // only the holder of tlb_busy writes it
    __atomic_store_n(&tlb_gen, g, __ATOMIC_RELEASE);    // the unmaps before it; pairs with tlb_ipi's acquire
    __atomic_thread_fence(__ATOMIC_SEQ_CST);            // tlb_gen before tlb_waiting's loads: pairs with arch_lock_wait_end
    write_cr3(read_cr3());
    __atomic_store_n(&tlb_done[self], g, __ATOMIC_RELAXED);    // for the stall report only: self is never waited for
    if (ncpu > 1) {
        lapic_send(0, ICR_FIXED | ICR_ASSERT | ICR_ALL_BUT_SELF | VEC_TLB);
        uint64_t every = arch_ns_to_cycles(__atomic_load_n(&arch_tlb_stall_report_ns, __ATOMIC_RELAXED));   // relaxed: a setting
        uint64_t start = arch_cycles(), report = start + every;
        uint32_t c = 0;
        while ((c = tlb_first_behind(g, self, c, ncpu)) < ncpu) {
            cpu_relax();
            uint64_t now = arch_cycles();
            if (now > report) {
                tlb_report_stall(g, self, ncpu, now - start);
                report = now + 10 * every;     // and every ten times that after
            }
        }
        uint64_t waited = arch_cycles() - start;
        __atomic_store_n(&tlb_wait_total, tlb_wait_total + waited, __ATOMIC_RELAXED);   // relaxed: a statistic
        if (waited > tlb_wait_max)
            __atomic_store_n(&tlb_wait_max, waited, __ATOMIC_RELAXED);   // relaxed: a statistic
    }
    __atomic_store_n(&tlb_count, g, __ATOMIC_RELAXED);     // relaxed: a statistic (shoot-down g is done)
    __atomic_store_n(&tlb_busy, 0, __ATOMIC_RELEASE);      // the next shoot-down starts after this one
    return true;
}
