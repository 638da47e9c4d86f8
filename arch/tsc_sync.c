// SPDX-License-Identifier: MIT
// The TSC check at bring-up: every AP measures its TSC against the boot
// core's, all of them at once, and sets its own right when it is off.
//
// Firmware may leave the APs' TSCs offset from the boot core's (OVMF does,
// under QEMU), and timers and the event trace compare TSC values taken on
// different cores. Each AP asks and the boot core answers:
//
//   AP:        t0 = its TSC; asks round r
//   boot core: sees the question; b = its TSC; answers round r
//   AP:        sees the answer; t1 = its TSC
//
// b was read between t0 and t1, so the AP's TSC is (t0 + t1) / 2 - b ahead
// of the boot core's, within (t1 - t0) / 2. The AP keeps the round with the
// tightest bound: up to 8 rounds, fewer once one is tight. An offset larger
// than its bound plus a margin is corrected by the AP itself
// (IA32_TSC_ADJUST where the CPU has it, else IA32_TSC) and measured again;
// the boot core reports both.
//
// Concurrency: the APs take turns in slot order (wait_turn), and each has
// a question slot of its own (its own cache line), being the only writer
// of `asked` and `sleeping`; the boot core is the
// only writer of `answered` and `bsp_tsc`, and answers whatever is pending
// in one pass over the slots (tsc_sync_serve) while it waits for the cores
// to come online. The TSC reads around the exchange are ordered (lfence): a
// read that ran early would shrink the bracket below the truth.
//
// Waiting. An AP whose answer has not come within SMP_SPIN_US halts until
// the boot core nudges it, and asking nudges a halted boot core (smp.c):
// with more vCPUs than host CPUs, a spinning AP would hold a host CPU the
// boot core needs to answer. `asked`/the boot core's halt flag and
// `answered`/`sleeping` are Dekker pairs (seq_cst on both sides): the
// waiter raises its flag, then looks again; the other side changes the
// word, then reads the flag. One of them always sees the other. A round
// that included a halt has a wide bracket and simply loses to a better one.
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/printf.h"

#define ROUNDS 8
#define TIGHT_CYCLES 1000           // a bound this good ends the rounds
#define MARGIN_CYCLES 2000          // offsets within bound + margin are left alone
#define MSR_TSC 0x10u
#define MSR_TSC_ADJUST 0x3Bu

struct tsc_probe {
    uint32_t asked;                 // AP (seq_cst): the round it asks for
    uint32_t answered;              // boot core (seq_cst): the round it answered
    uint64_t bsp_tsc;               // boot core: its TSC for that answer
    uint32_t apic_id;               // AP, before its first question
    uint8_t sleeping;               // AP (seq_cst): halted, waiting for an answer or its turn
    // The AP's results, written before it goes online (release), read by
    // the boot core after it sees it online (acquire):
    int64_t offset, residual;       // before and after a correction
    uint64_t bound, residual_bound;
    bool corrected;
} __attribute__((aligned(64)));

static struct tsc_probe probes[MAX_CPUS];      // by start-up slot

// Boot core: answers every pending question once; returns how many.
uint32_t tsc_sync_serve(uint32_t nslots)
{
    uint32_t served = 0;
    for (uint32_t s = 1; s < nslots; s++) {
        struct tsc_probe *p = &probes[s];
        uint32_t q = __atomic_load_n(&p->asked, __ATOMIC_SEQ_CST);      // pairs with ask()
        if (q == p->answered)
            continue;
        p->bsp_tsc = rdtsc_ordered();                                   // after the question was seen
        __atomic_store_n(&p->answered, q, __ATOMIC_SEQ_CST);            // pairs with wait_answer()
        if (__atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST))           // Dekker with wait_answer()
            smp_nudge(p->apic_id);
        served++;
    }
    return served;
}

// Boot core, after raising its halt flag: is a question waiting?
bool tsc_sync_pending(uint32_t nslots)
{
    for (uint32_t s = 1; s < nslots; s++)
        if (__atomic_load_n(&probes[s].asked, __ATOMIC_SEQ_CST) != probes[s].answered)  // seq_cst: Dekker with ask()
            return true;
    return false;
}

static void ask(struct tsc_probe *p, uint32_t q)
{
    __atomic_store_n(&p->asked, q, __ATOMIC_SEQ_CST);                   // pairs with tsc_sync_serve()
    smp_nudge_boot_core();
}

// Halts for good (interrupts off) once the boot core has given up on the
// slot: it no longer answers, and the core must not take interrupts.
static void wait_answer(struct tsc_probe *p, uint32_t slot, uint32_t q)
{
    uint64_t spin_until = rdtsc() + arch_ns_to_cycles(SMP_SPIN_US * 1000);
    while (__atomic_load_n(&p->answered, __ATOMIC_SEQ_CST) != q) {     // pairs with tsc_sync_serve()
        if (rdtsc() < spin_until) {
            cpu_relax();
            continue;
        }
        if (smp_slot_late(slot))
            smp_ap_halt();
        __atomic_store_n(&p->sleeping, 1, __ATOMIC_SEQ_CST);            // Dekker with tsc_sync_serve(), tsc_sync_release()
        // seq_cst: Dekker with tsc_sync_serve() (answered) and number_cores' move to LATE
        if (__atomic_load_n(&p->answered, __ATOMIC_SEQ_CST) != q && !smp_slot_late(slot))
            arch_idle_halt();
        __atomic_store_n(&p->sleeping, 0, __ATOMIC_RELAXED);          // relaxed: a stale 1 costs one needless IPI
    }
}

// AP: this core's TSC minus the boot core's, within *bound cycles.
static void measure(struct tsc_probe *p, uint32_t slot, int64_t *offset, uint64_t *bound)
{
    *bound = UINT64_MAX;
    *offset = 0;
    for (uint32_t r = 0; r < ROUNDS && *bound > TIGHT_CYCLES; r++) {
        uint32_t q = p->asked + 1;
        uint64_t t0 = rdtsc_ordered();
        ask(p, q);
        wait_answer(p, slot, q);
        uint64_t t1 = rdtsc_ordered();
        uint64_t half = (t1 - t0 + 1) / 2;
        if (half < *bound) {
            *bound = half;
            *offset = (int64_t)(t0 + (t1 - t0) / 2 - p->bsp_tsc);
        }
    }
}

// This core's TSC, made to read `offset` cycles less.
static void tsc_shift(int64_t offset)
{
    if (cpuid(0, 0).eax >= 7 && (cpuid(7, 0).ebx & (1u << 1)))
        wrmsr(MSR_TSC_ADJUST, rdmsr(MSR_TSC_ADJUST) - (uint64_t)offset);
    else
        wrmsr(MSR_TSC, rdtsc() - (uint64_t)offset);
}

// AP: waits until the core of the slot before it is no longer setting up
// (ready, late, or not arrived: then it checks later, alongside).
// Released together by go, 63 APs asking at once under TCG kept 64 vCPU
// threads runnable on 2 host CPUs: the boot core got a sliver of a CPU,
// every bracket was wide and every AP ran all 8 rounds. In turn, the
// waiting ones halt. The turn passes by tsc_sync_pass_turn (the core
// before going ready) or tsc_sync_release (the boot core, at the timeout,
// to every slot it gives up on, this one among them).
static void wait_turn(struct tsc_probe *p, uint32_t slot)
{
    while (slot > 1 && smp_slot_setting_up(slot - 1)) {
        if (smp_slot_late(slot))
            smp_ap_halt();
        __atomic_store_n(&p->sleeping, 1, __ATOMIC_SEQ_CST);            // Dekker with tsc_sync_pass_turn(), tsc_sync_release()
        if (smp_slot_setting_up(slot - 1) && !smp_slot_late(slot))     // seq_cst: the other side of the same pairs
            arch_idle_halt();
        __atomic_store_n(&p->sleeping, 0, __ATOMIC_RELAXED);          // relaxed: a stale 1 costs one needless IPI
    }
}

// AP at slot, right after its seq_cst move to ready: the next slot's turn.
void tsc_sync_pass_turn(uint32_t slot)
{
    if (slot + 1 < MAX_CPUS && __atomic_load_n(&probes[slot + 1].sleeping, __ATOMIC_SEQ_CST))   // seq_cst: Dekker with wait_turn()
        smp_nudge(probes[slot + 1].apic_id);
}

// AP, before it goes online (its release publishes the results).
void tsc_sync_ap(uint32_t slot)
{
    struct tsc_probe *p = &probes[slot];
    p->apic_id = this_cpu()->apic_id;
    wait_turn(p, slot);
    measure(p, slot, &p->offset, &p->bound);
    int64_t mag = p->offset < 0 ? -p->offset : p->offset;
    p->residual = p->offset;
    p->residual_bound = p->bound;
    if ((uint64_t)mag > p->bound + MARGIN_CYCLES) {
        tsc_shift(p->offset);
        p->corrected = true;
        measure(p, slot, &p->residual, &p->residual_bound);
    }
}

// Boot core, right after it moved slot to LATE (seq_cst): an AP halted
// waiting for an answer is woken to see that and halt for good.
void tsc_sync_release(uint32_t slot)
{
    struct tsc_probe *p = &probes[slot];
    if (__atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST))   // seq_cst: Dekker with wait_answer()
        smp_nudge(p->apic_id);
}

void tsc_sync_describe(uint32_t slot, char *buf, size_t len)
{
    struct tsc_probe *p = &probes[slot];
    uint32_t asked = __atomic_load_n(&p->asked, __ATOMIC_SEQ_CST);         // seq_cst: as tsc_sync_pending
    uint8_t sleeping = __atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST);    // seq_cst: as tsc_sync_serve
    snprintf(buf, len, "its question %u, the boot core's answer %u, %s", asked, p->answered,
             sleeping ? "halted for an answer or its turn" : "not halted");
}

// Boot core, once the core at slot is online as cpu index. Returns the
// bound its TSC is now known to within.
uint64_t tsc_sync_report(uint32_t slot, uint32_t index)
{
    struct tsc_probe *p = &probes[slot];
    int64_t mag = p->residual < 0 ? -p->residual : p->residual;
    if (p->corrected)
        kprintf("tsc: cpu %u's TSC was %ld cycles off the boot core's (within %lu); set right: %ld (within %lu)\n",
                index, (long)p->offset, p->bound, (long)p->residual, p->residual_bound);
    if ((uint64_t)mag > p->residual_bound + MARGIN_CYCLES)
        kprintf("tsc: cpu %u's TSC is still %ld cycles off the boot core's (within %lu)\n", index,
                (long)p->residual, p->residual_bound);
    return p->residual_bound + (uint64_t)mag;
}
