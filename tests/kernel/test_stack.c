// SPDX-License-Identifier: MIT
// Growable stacks, the cost of a parked goroutine, placement on the P's
// node, the NUMA steal order, and a million parked goroutines.
#include "kernel/ktest.h"
#include "kernel/sched.h"
#include "kernel/numa.h"
#include "kernel/page.h"
#include "kernel/cmdline.h"
#include "lib/string.h"
#include "tests/kernel/stack_test.h"

// ---- a stack grows to 200 KiB on demand ------------------------------------

__attribute__((noinline)) static uint64_t deep(uint32_t depth, volatile uint8_t *lowest)
{
    volatile uint8_t frame[480];
    frame[0] = (uint8_t)depth;
    frame[479] = (uint8_t)(depth >> 8);
    if ((uintptr_t)frame < (uintptr_t)*(volatile uintptr_t *)lowest)
        *(volatile uintptr_t *)lowest = (uintptr_t)frame;
    if (depth == 0)
        return frame[0];
    return deep(depth - 1, lowest) + frame[0] + frame[479];
}

static uint64_t deep_done, deep_used, deep_sum;

static void deep_g(void *arg)
{
    (void)arg;
    uintptr_t lowest = ~(uintptr_t)0;
    uint64_t top = (uint64_t)__builtin_frame_address(0);
    deep_sum = deep(430, (volatile uint8_t *)&lowest);     // over 200 KiB of frames
    deep_used = top - lowest;
    __atomic_store_n(&deep_done, 1, __ATOMIC_RELEASE);
}

KTEST(stack_grows_to_200k_on_demand)
{
    deep_done = 0;
    go(deep_g, 0);
    kt_wait_count(&deep_done, 1, KT_STALL_MS);
    KT_ASSERT_EQ(kt_load(&deep_done), 1);
    uint64_t expect = 0;
    for (uint32_t d = 0; d <= 430; d++)
        expect += (d == 0) ? 0 : (uint8_t)d + (uint8_t)(d >> 8);
    KT_ASSERT_EQ(deep_sum, expect);
    printf("ktest: deep recursion used %lu KiB of stack\n", deep_used / 1024);
    KT_ASSERT(deep_used >= 200 * 1024);
}

// ---- what a parked goroutine costs ------------------------------------------

#define PARKERS 512
static struct g *parked[PARKERS];
static uint64_t nparked, parkers_done;

static bool publish(struct g *gp, void *arg)
{
    uint64_t i = __atomic_fetch_add(&nparked, 1, __ATOMIC_ACQ_REL);
    (void)arg;
    parked[i] = gp;
    return true;
}

static void parker(void *arg)
{
    gopark(publish, arg, "test: parked", 0);
    __atomic_fetch_add(&parkers_done, 1, __ATOMIC_RELEASE);
}

// Bytes mapped for gp's slot plus its share of the page table that maps it.
static uint64_t slot_bytes(const struct g *gp)
{
    uint64_t top = ((uint64_t)gp + G_RECORD_SIZE + 4095) & ~4095ull;
    uint64_t pages = 0;
    for (uint64_t va = top - G_STACK_SLOT; va < top; va += 4096)
        pages += arch_virt_to_phys(va) != 0;
    return pages * 4096 + 4096 / ((2u << 20) / G_STACK_SLOT);
}

KTEST(stack_parked_g_costs_4_5k)
{
    // Earlier tests leave dead Gs with grown stacks; the Ps keep at most
    // GFREE_LOCAL_MAX each, so with the global list trimmed first some
    // parkers get a one-page G whatever ran before. All of it: a
    // background trim under way at the call (256 Gs) left the rest grown,
    // and all 512 parkers came out at 60 KiB on 8 vCPUs.
    stack_scavenge_all();
    nparked = parkers_done = 0;
    for (int i = 0; i < PARKERS; i++)
        go(parker, 0);
    // A timeout leaves slots of parked[] unset; the parkers stay parked.
    if (!kt_wait_count(&nparked, PARKERS, KT_STALL_MS))
        KT_FAIL("only %lu of %d goroutines parked (the count stalled)", kt_load(&nparked), PARKERS);
    // Reused Gs keep what they once mapped; Gs that never grew hold one page.
    uint64_t costs[PARKERS], ones = 0;
    for (int i = 0; i < PARKERS; i++) {
        costs[i] = slot_bytes(parked[i]);
        ones += costs[i] == 4096 + 512;
    }
    for (int i = 0; i < PARKERS; i++)
        goready(parked[i], false);
    KT_ASSERT(kt_wait_count(&parkers_done, PARKERS, KT_STALL_MS));
    uint64_t min = ~0ull;
    for (int i = 0; i < PARKERS; i++)
        if (costs[i] < min)
            min = costs[i];
    printf("ktest: a parked G holds %lu bytes (struct g inside; %lu of %d at the minimum)\n", min,
           ones, PARKERS);
    KT_ASSERT(G_RECORD_SIZE <= 1024);
    KT_ASSERT(min <= 4608);
}

// ---- stack pages come from the running core's node ----------------------------

static uint64_t node_done, node_bad, node_checked;

// Pages a reused G mapped before (on whatever node it ran then) are kept,
// by design; the rule is for the pages faulted in now, on this core. The
// pages are a run of its own stack that nothing has mapped yet, far below
// its frames (a local array would not do: the build probes a large
// frame's pages at the function's entry).
static void node_toucher(void *arg)
{
    (void)arg;
    preempt_disable();                      // fault and check on one core
    struct g *gp = kt_curg();
    uint64_t buf = kt_unmapped_pages(gp, 12);
    if (buf) {
        for (uint64_t va = buf; va < buf + 12 * PAGE_SIZE; va += PAGE_SIZE)
            *(volatile uint8_t *)va = 1;    // new stack pages, faulted in here
        int node = numa_core_node((uint32_t)core_id());
        for (uint64_t va = buf; va < buf + 12 * PAGE_SIZE; va += PAGE_SIZE) {
            kt_add(&node_checked, 1);
            if (numa_node_of_phys(arch_virt_to_phys(va)) != node && page_node_free(node) > 1024)
                kt_add(&node_bad, 1);
        }
    }
    preempt_enable();
    kt_add(&node_done, 1);
}

KTEST(stack_pages_from_the_local_node)
{
    if (numa_nodes() < 2)
        KT_SKIP("one NUMA node");
    node_done = node_bad = node_checked = 0;
    for (int i = 0; i < 64; i++)
        go(node_toucher, 0);
    kt_wait_count(&node_done, 64, KT_STALL_MS);
    KT_ASSERT(node_checked > 0);
    printf("ktest: %lu newly faulted stack pages checked, %lu from another node\n", node_checked, node_bad);
    KT_ASSERT_EQ(node_bad, 0);
}

// ---- a million parked goroutines (an app: it needs a 6 GiB guest) -------------

static struct g **millions;
static uint64_t mparked, mdone;

static bool mpublish(struct g *gp, void *arg)
{
    (void)arg;
    millions[__atomic_fetch_add(&mparked, 1, __ATOMIC_ACQ_REL)] = gp;
    return true;
}

static void mparker(void *arg)
{
    gopark(mpublish, arg, "test: one of a million", 0);
    __atomic_fetch_add(&mdone, 1, __ATOMIC_RELEASE);
}

static int park_million_main(int argc, char **argv)
{
    uint64_t n = 1000000;
    if (argc > 1) {
        n = 0;
        for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
            n = n * 10 + (uint64_t)(*p - '0');
    }
    millions = calloc(n, sizeof *millions);
    uint64_t free0 = page_free_count(), t0 = nanotime();
    // A line every 250,000: the runner's timeout is silence, and on a
    // loaded host parking a million takes minutes.
    for (uint64_t i = 0; i < n; i++) {
        go(mparker, 0);
        if ((i & 1023) == 1023)
            gosched();          // let them park as we go
        if (i % 250000 == 249999)
            printf("park_million: %lu started\n", i + 1);
    }
    while (kt_load(&mparked) < n)
        gosched();
    uint64_t used = (free0 - page_free_count()) * PAGE_SIZE;
    printf("park_million: %lu goroutines parked in %lu ms, %lu bytes each (num_goroutine %d)\n", n,
           (nanotime() - t0) / 1000000, used / n, num_goroutine());
    for (uint64_t i = 0; i < n; i++)
        goready(millions[i], false);
    for (uint64_t next = 250000; kt_load(&mdone) < n;) {
        gosched();
        if (kt_load(&mdone) >= next && next < n) {
            printf("park_million: %lu finished\n", next);
            next += 250000;
        }
    }
    printf("park_million: all %lu finished in %lu ms\n", n, (nanotime() - t0) / 1000000);
    return used / n <= 4608 + 64 ? 0 : 1;
}
GORO_APP(park_million, "park N (default 1000000) goroutines, report bytes each, release them",
         park_million_main);

// ---- the scavenger returns the pages dead goroutines grew ----------------------

#define GROWERS 300
static uint64_t growers_grown, growers_done, grow_bad;
static chan_t *grow_hold;               // closed to let the held growers die; 0: none held

static void grower(void *arg)
{
    uintptr_t lowest = ~(uintptr_t)0;
    uint32_t depth = (uint32_t)(uintptr_t)arg;     // ~0.5 KiB per level
    uint64_t v = deep(depth, (volatile uint8_t *)&lowest);
    uint64_t expect = 0;
    for (uint32_t d = 1; d <= depth; d++)
        expect += (uint8_t)d + (uint8_t)(d >> 8);
    if (v != expect)
        kt_add(&grow_bad, 1);
    kt_add(&growers_grown, 1);
    if (grow_hold)
        chan_recv(grow_hold, 0);
    kt_add(&growers_done, 1);
}

KTEST(stack_scavenger_returns_grown_pages)
{
    // Counted from before the growers start: the background scavenger (an
    // idle core, about once a second) may trim them as soon as they die.
    uint64_t total0 = stack_scavenged_pages();
    // The scavenger takes dead Gs from the global free list only; each P
    // keeps up to GFREE_LOCAL_MAX of its own, so more die than the Ps keep
    // (with 8 Ps, 300 could all stay local: "freed 0 pages" on smp8). All
    // are alive at once before any dies. When each died as it finished,
    // the grown Gs went round: a P's full list spilled half to the global
    // one, the spawner's empty list refilled from it, and a spawn took one
    // again. Once the last refill left none of them on the global list,
    // nothing but Gs trimmed long ago was there to scavenge (a fresh-clone
    // CI run, smp2: "freed 0 pages" after a 60 s wait).
    int growers = GROWERS + gomaxprocs(0) * GFREE_LOCAL_MAX;
    growers_grown = growers_done = grow_bad = 0;
    grow_hold = chan_make(0, 0);
    for (int i = 0; i < growers; i++)
        go(grower, (void *)(uintptr_t)120);        // about 60 KiB each
    bool grown = kt_wait_count(&growers_grown, (uint64_t)growers, KT_STALL_MS);
    chan_close(grow_hold);              // even after a stall: no grower is left held
    KT_ASSERT(grown);
    KT_ASSERT(kt_wait_count(&growers_done, (uint64_t)growers, KT_STALL_MS));
    // At least GROWERS dead Gs past what the Ps keep are on the global free
    // list (a few may still be on their way out); the background scavenger
    // may have trimmed some already: what counts is that pages came back.
    uint64_t free0 = page_free_count();
    stack_scavenge_all();
    uint64_t freed = stack_scavenged_pages() - total0;
    printf("ktest: scavenger freed %lu pages (%lu KiB), free pages %lu -> %lu\n", freed, freed * 4,
           free0, page_free_count());
    chan_free(grow_hold);
    grow_hold = 0;
    KT_ASSERT(freed > 0);
    // the same Gs, reused, grow their stacks again from nothing
    growers_done = 0;
    for (int i = 0; i < growers; i++)
        go(grower, (void *)(uintptr_t)120);
    KT_ASSERT(kt_wait_count(&growers_done, (uint64_t)growers, KT_STALL_MS));
    KT_ASSERT_EQ(grow_bad, 0);
}

// ---- each P (and the run queue inside it) lives on its node --------------------

KTEST(numa_ps_live_on_their_node)
{
    if (numa_nodes() < 2)
        KT_SKIP("one NUMA node");
    for (uint32_t i = 0; i < sched.gomaxprocs; i++) {
        int home = allp[i]->node, where = numa_node_of_phys((uint64_t)allp[i]);
        if (where != home && page_node_total(home) > 0)
            KT_FAIL("P%u (node %d) is in node %d's memory", i, home, where);
        KT_ASSERT_EQ(numa_node_of_phys((uint64_t)&allp[i]->runq), where);
    }
}

// ---- an interrupt that comes while the stack pointer is at an unmapped page ----
//
// A goroutine's stack grows by page faults, so the page below its stack
// pointer may be unmapped at any moment. An interrupt delivered onto that
// stack pushes its frame there: the push faults in the middle of the
// delivery, after the local APIC moved the vector to in-service, so the
// handler never runs nor acknowledges it, and the vector blocks every
// vector of its class on that core for good: timer, wake-up, preemption
// and TLB shoot-down IPIs alike (the next shoot-down then waits forever:
// smp4-kernel's CI hang). Interrupts now arrive on a stack of their own
// (arch/trap.c). The window is a few bytes wide; this test stands the
// stack pointer 16 bytes above the lowest unmapped page of its stack, with
// an IPI pending, and lets interrupts in for two instructions: with a
// preemption request pending too (arg 1), the G is preempted right there,
// its frame copied into the unmapped page (which the kernel maps first).

static uint64_t edge_done, edge_vector, edge_skipped, edge_premapped;

static void edge_sitter(void *arg)
{
    bool preempt = arg != 0;
    if (!preempt)
        preempt_disable();          // not preempted at the edge by a request of its own
    irq_disable();                  // on this core until the sti below
    struct g *gp = getm()->curg;
    uint64_t page = (uint64_t)__builtin_frame_address(0) & ~(uint64_t)(PAGE_SIZE - 1);
    while (page - PAGE_SIZE >= gp->stack_lo && arch_virt_to_phys(page - PAGE_SIZE))
        page -= PAGE_SIZE;          // the lowest mapped page of the stack
    if (page - PAGE_SIZE < gp->stack_lo) {
        kt_store(&edge_skipped, 1);     // grown to the guard: no unmapped page left
    } else {
        if (preempt)
            preempt_request(PREEMPT_QUANTUM);
        arch_send_ipi(cpu_index(), VEC_WAKE);   // pending until the sti below
        __asm__ volatile("mov %%rsp, %%r11\n\t"
                         "lea 16(%0), %%rsp\n\t"  // 16 bytes above the unmapped page
                         "sti\n\t"
                         "nop\n\t"                // the IPI is delivered here
                         "nop\n\t"
                         "cli\n\t"
                         "mov %%r11, %%rsp"
                         :: "r"(page) : "r11", "memory", "cc");
        kt_store(&edge_vector, arch_irq_in_service());     // this core's (preempted: maybe another)
        kt_store(&edge_premapped, arch_virt_to_phys(page - 8) != 0);
    }
    irq_enable();
    if (!preempt)
        preempt_enable();
    kt_store(&edge_done, 1);
}

KTEST(stack_interrupt_at_an_unmapped_page_is_delivered)
{
    for (int preempt = 0; preempt < 2; preempt++) {
        edge_done = edge_vector = edge_skipped = edge_premapped = 0;
        go(edge_sitter, (void *)(uintptr_t)preempt);
        KT_ASSERT(kt_wait_count(&edge_done, 1, 60000));
        if (kt_load(&edge_skipped))
            KT_SKIP("the goroutine's stack had no unmapped page");
        if (kt_load(&edge_vector))
            KT_FAIL("vector %lu stays in service after an interrupt at an unmapped stack page%s",
                    kt_load(&edge_vector), preempt ? " (preempted there)" : "");
        // preempted there: its frame went into the page below, mapped first
        if (preempt)
            KT_ASSERT(kt_load(&edge_premapped));
        else
            KT_ASSERT(!kt_load(&edge_premapped));
    }
}

// ---- a stack page is installed once, however many cores fault on it ------------
//
// A goroutine hands a region of its stack that nothing has touched yet to
// workers on every core, which all write to each page at once: every core
// faults on the same new page. The page must go in once (a compare-and-
// swap of the empty entry): installed twice, each core writes the page it
// mapped until a TLB flush, and the writes to the page that lost are gone
// (43-46 of 96 lost in a review's runs, 2 vCPUs), and a page leaks.

#define FAN_PAGES 8
#define FAN_ROUNDS 6
static uint64_t fan_start, fan_ready, fan_done, fan_rounds, fan_lost, fan_written, fan_stalled;
// Every worker's start and end and the spawner's last word add to it, and
// only grow it: the test's stall limit counts from its last move. A round
// with 64 writers on a host with hundreds of runnable vCPU threads takes
// many of the host's rounds to set up before any worker ends.
static uint64_t fan_progress;
#define FAN_SPAWNER_DONE (1ull << 40)

struct fan_work {
    volatile uint64_t *base;        // FAN_PAGES fresh pages of the spawner's stack
    uint64_t round;
    uint32_t w;
};

static uint64_t fan_word(uint64_t round, uint32_t page, uint32_t w)
{
    return 0xfa00000000000000ull | round << 32 | (uint64_t)page << 16 | w;
}

static void fan_write(volatile uint64_t *base, uint64_t round, uint32_t w)
{
    for (uint32_t p = 0; p < FAN_PAGES; p++)
        base[p * (PAGE_SIZE / 8) + w] = fan_word(round, p, w);
}

static void fan_worker(void *arg)
{
    const struct fan_work *fw = arg;
    uint64_t round = fw->round;
    uint32_t w = fw->w;
    volatile uint64_t *base = fw->base;
    kt_add(&fan_ready, 1);
    kt_add(&fan_progress, 1);
    while (kt_load(&fan_start) != round)
        cpu_relax();
    fan_write(base, round, w);
    kt_add(&fan_done, 1);
    kt_add(&fan_progress, 1);
}

// Each worker is started once the one before it runs, so that each spins
// on a core of its own (an idle P steals it); the spawner writes too, and
// every core writes the first new page at one moment.
static void fan_spawner(void *arg)
{
    uint32_t writers = (uint32_t)(uintptr_t)arg;
    struct fan_work work[64];
    struct g *gp = kt_curg();
    for (uint64_t round = 1; round <= FAN_ROUNDS; round++) {
        uint64_t base = kt_unmapped_pages(gp, FAN_PAGES);
        if (!base)
            break;                  // this G's stack has no fresh run left
        kt_store(&fan_done, 0);
        kt_store(&fan_ready, 0);
        for (uint32_t w = 1; w < writers; w++) {
            work[w] = (struct fan_work){ (volatile uint64_t *)base, round, w };
            go(fan_worker, &work[w]);
            while (kt_load(&fan_ready) < w)
                cpu_relax();        // a quantum's preemption lets it run here at worst
        }
        kt_store(&fan_start, round);
        fan_write((volatile uint64_t *)base, round, 0);
        if (!kt_wait_count(&fan_done, writers - 1, KT_STALL_MS)) {
            kt_store(&fan_stalled, round);      // a worker never ended: its words are not lost writes
            break;
        }
        for (uint32_t p = 0; p < FAN_PAGES; p++)
            for (uint32_t w = 0; w < writers; w++)
                if (((volatile uint64_t *)base)[p * (PAGE_SIZE / 8) + w] != fan_word(round, p, w))
                    kt_add(&fan_lost, 1);
        kt_add(&fan_written, (uint64_t)FAN_PAGES * writers);
        kt_add(&fan_rounds, 1);
    }
    kt_add(&fan_progress, FAN_SPAWNER_DONE);
}

KTEST(stack_page_installed_once_under_a_fan_out)
{
    uint32_t writers = (uint32_t)num_cpu();     // one per core
    if (writers > 64)
        writers = 64;
    fan_start = fan_done = fan_rounds = fan_lost = fan_written = fan_stalled = fan_progress = 0;
    go(fan_spawner, (void *)(uintptr_t)writers);
    KT_ASSERT(kt_wait_count(&fan_progress, FAN_SPAWNER_DONE, KT_STALL_MS));
    if (kt_load(&fan_stalled))
        KT_FAIL("round %lu: %lu of %u workers ended", kt_load(&fan_stalled), kt_load(&fan_done), writers - 1);
    printf("ktest: fan-out: %lu rounds, %lu of %lu writes to new stack pages lost\n",
           kt_load(&fan_rounds), kt_load(&fan_lost), kt_load(&fan_written));
    KT_ASSERT(kt_load(&fan_rounds) > 0);
    KT_ASSERT_EQ(kt_load(&fan_lost), 0);
}

// ---- preemption does not starve when the spare pages ran out --------------------
//
// A goroutine takes every spare page of its core (stack faults with
// interrupts off), then spins with its stack pointer 16 bytes above an
// unmapped page, on the only P, while the test's goroutine waits to run
// there: only a preemption can let it, and the preemption's frame needs
// that page. The frame's pages were taken from the spares, retried every
// 20 us, and the spares were refilled only by go() or an idle core: the
// spinner was never preempted. Now the frame's page comes from the
// allocator (the interrupted code had interrupts on) and the spares are
// topped up at the next interrupt.

static uint64_t starve_spinning, starve_release, starve_done, starve_took, starve_released;

static void starver(void *arg)
{
    (void)arg;
    irq_disable();                  // on this core until the sti below
    struct m *mp = getm();
    struct g *gp = mp->curg;
    uint32_t n = mp->nspare;
    uint64_t run = kt_unmapped_pages(gp, n + 1);
    if (run) {
        for (uint32_t i = 1; i <= n; i++)       // each fault takes a spare
            *(volatile uint8_t *)(run + i * PAGE_SIZE) = 1;
        kt_store(&starve_took, n - getm()->nspare);
        kt_store(&starve_spinning, 1);
        uint64_t end = arch_cycles() + arch_ns_to_cycles(KT_STALL_NS);
        __asm__ volatile("mov %%rsp, %%r11\n\t"
                         "lea 16(%[page]), %%rsp\n\t"   // 16 bytes above the unmapped page
                         "sti\n\t"
                         "1: pause\n\t"
                         "cmpq $0, (%[flag])\n\t"
                         "jne 2f\n\t"
                         "rdtsc\n\t"
                         "shl $32, %%rdx\n\t"
                         "or %%rdx, %%rax\n\t"
                         "cmp %[end], %%rax\n\t"
                         "jb 1b\n\t"
                         "2: cli\n\t"
                         "mov %%r11, %%rsp"
                         :: [page] "r"(run + PAGE_SIZE), [flag] "r"(&starve_release), [end] "r"(end)
                         : "rax", "rdx", "r11", "memory", "cc");
        kt_store(&starve_released, kt_load(&starve_release));
    }
    irq_enable();
    kt_store(&starve_spinning, 1);
    kt_store(&starve_done, 1 + (run != 0));
}

KTEST(stack_preemption_after_the_spares_ran_out)
{
    starve_spinning = starve_release = starve_done = starve_took = starve_released = 0;
    int procs = gomaxprocs(1);
    go(starver, 0);
    kt_wait_count(&starve_spinning, 1, KT_STALL_MS);    // runs again only once the spinner is preempted
    kt_store(&starve_release, 1);
    kt_wait_count(&starve_done, 1, KT_STALL_MS);
    gomaxprocs(procs);
    if (kt_load(&starve_done) == 1)
        KT_SKIP("the goroutine's stack had no unmapped run for its spares");
    printf("ktest: spinner took %lu spare pages, then was %s\n", kt_load(&starve_took),
           kt_load(&starve_released) ? "preempted" : "never preempted");
    KT_ASSERT(kt_load(&starve_released));
}

// ---- a large frame at the bottom of a stack hits the guard, not the neighbour ----
//
// A goroutine with less than 2 KiB of its stack left calls a function with
// an 8 KiB frame. Without stack probing the frame jumped the 4 KiB guard
// page and its lowest bytes lay in the slot below: the neighbour's stack,
// written without a fault (or, unmapped there, mapped as the neighbour's
// growth). With the frame's pages probed top down, the first probe below
// the stack lands in the guard: "stack overflow", naming this goroutine.
// An app: the fatal error ends the machine (tests/matrix.py checks the
// goroutine named is the one that overflowed).

__attribute__((noinline)) static void big_frame(void)
{
    volatile uint8_t buf[8192];
    buf[0] = 0x5a;                  // the deepest byte, written first
    buf[sizeof buf - 1] = 0x5a;
    __asm__ volatile("" :: "r"(buf) : "memory");
}

__attribute__((noinline)) static void descend(uint64_t stack_lo)
{
    volatile uint8_t pad[512];
    pad[0] = 1;
    if ((uint64_t)__builtin_frame_address(0) - stack_lo > 2048)
        descend(stack_lo);
    else
        big_frame();
    __asm__ volatile("" :: "r"(pad) : "memory");
}

static uint64_t frame_returned;

static void frame_overflower(void *arg)
{
    (void)arg;
    struct g *gp = kt_curg();
    printf("stack_overflow_frame: goroutine %lu calls an 8 KiB frame with under 2 KiB of its stack left\n",
           goid());
    descend(gp->stack_lo);
    printf("stack_overflow_frame: the frame wrote below goroutine %lu's stack without a fault\n", goid());
    kt_store(&frame_returned, 1);
}

static void frame_neighbour(void *arg)
{
    (void)arg;
    gopark(0, 0, "test: the overflower's neighbour", 0);
}

static int stack_overflow_frame_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    go(frame_neighbour, 0);         // most likely the slot just below the overflower's
    go(frame_overflower, 0);
    kt_wait_count(&frame_returned, 1, KT_STALL_MS);
    return 1;
}
GORO_APP(stack_overflow_frame, "an 8 KiB frame at the bottom of a goroutine's stack (expect the overflow error, exit 255)",
         stack_overflow_frame_main);
