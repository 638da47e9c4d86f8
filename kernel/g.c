// SPDX-License-Identifier: MIT
// Goroutine records: creation, stacks, free lists, exit, park and ready,
// and the public goroutine calls of goro.h.
#include "kernel/sched.h"
#include "arch/arch.h"
#include "kernel/page.h"
#include "lib/panic.h"
#include "lib/printf.h"

// allg_lock held: every G ever created (they are reused, never freed).
static struct spinlock allg_lock = SPINLOCK_INIT("allg", LOCK_RANK_ALLG);
static struct g *allg;
static uint64_t nallg;
// gfree_lock held: dead Gs beyond what the Ps keep.
static struct spinlock gfree_lock = SPINLOCK_INIT("gfree", LOCK_RANK_GFREE);
static struct g *gfree_global;
static uint32_t ngfree_global;
// atomic: the next free stack slot in the stack region.
static uint64_t stack_next = ARCH_STACK_REGION;

const char *gstatus_name(uint32_t s)
{
    static const char *const names[] = { "idle", "runnable", "running", "waiting", "syscall", "dead" };
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

// inject=stack-full: every slot of the stack region taken, as after about
// two million goroutines (a dead G's slot is still reused).
void stack_region_fill(void)
{
    __atomic_store_n(&stack_next, ARCH_STACK_REGION + ARCH_STACK_REGION_SIZE, __ATOMIC_RELAXED);  // relaxed: as g_alloc's fetch_add
}

// The one way a stack page is installed: at a G's creation, at a stack
// fault, and for a preemption's frame. The entry is swapped from empty to
// page in one compare-and-swap (arch_stack_map_page), so when two cores
// fault on one new page at once (a goroutine's untouched stack buffer
// handed to workers on several cores) exactly one page goes in and every
// core then reaches it; a second install would leave each core writing
// its own page until a TLB flush, and lose what the other wrote. False:
// another page was there first, and page stays the caller's to give back.
static bool stack_page_install(uint64_t addr, void *page)
{
    enum arch_stack_map r = arch_stack_map_page(addr, page);
    if (r == ARCH_STACK_NO_TABLE)
        panic("goroutine stacks: no page table at %p", (void *)addr);
    return r == ARCH_STACK_MAPPED;
}

// A new G: a stack slot of G_STACK_SLOT bytes whose top page, from node's
// memory, holds the struct g; the stack grows down from just below it.
struct g *g_alloc(int node)
{
    uint64_t slot = __atomic_fetch_add(&stack_next, G_STACK_SLOT, __ATOMIC_RELAXED);   // relaxed: only the slot's uniqueness matters
    if (slot + G_STACK_SLOT > ARCH_STACK_REGION + ARCH_STACK_REGION_SIZE)
        panic("fatal error: out of goroutine stacks: the %llu GiB stack region is used up "
              "(%lu goroutines exist, none dead to reuse)",
              ARCH_STACK_REGION_SIZE >> 30, nallg);
    uint64_t top = slot + G_STACK_SLOT;
    arch_stack_reserve(slot + G_STACK_GUARD, top);
    void *page = page_alloc_node(1, node);      // zeroed
    if (!stack_page_install(top - PAGE_SIZE, page))
        panic("goroutine stacks: the top page of a new slot at %p was mapped already", (void *)top);
    struct g *gp = (struct g *)(top - G_RECORD_SIZE);
    gp->stack_hi = (uint64_t)gp & ~15ull;
    gp->stack_lo = slot + G_STACK_GUARD;
    gp->node = node;
    spin_lock(&allg_lock);
    gp->alllink = allg;
    allg = gp;
    nallg++;
    spin_unlock(&allg_lock);
    return gp;
}

// From a G, pinned (mp is its M): tops up the pages the fault handler
// takes, from this core's node. The handler cannot allocate itself: the
// faulting code may hold the allocator's lock.
void stack_spares_refill(struct m *mp)
{
    while (mp->nspare < M_SPARE_PAGES) {
        void *page = page_alloc(1);
        uint64_t f = irq_save();
        if (mp->nspare < M_SPARE_PAGES) {
            mp->spare[mp->nspare++] = page;
            page = 0;
        }
        irq_restore(f);
        if (page)
            page_free(page, 1);
    }
}

// The scavenger: dead Gs keep the stack pages they grew (a reused G
// usually needs them again), until this trims them. It takes up to max
// dead Gs off the global free list (so nobody can reuse them meanwhile),
// unmaps every stack page but the top one (which holds the struct g),
// flushes every core's TLB, frees the pages and puts the Gs back. The
// freed pages are chained through their first word (the direct map makes
// a physical page writable), so no memory is needed for the batch. Runs on
// an idle core's g0 (find_runnable, when sysmon says it is due) or from a
// G; holds no lock across the shoot-down. False, having done nothing, when
// another trim is under way; else true, with the pages freed in *freed.
static uint64_t scavenged_total;

static bool scavenge(uint32_t max, uint64_t *freed)
{
    static uint8_t running;
    if (__atomic_exchange_n(&running, 1, __ATOMIC_ACQUIRE))    // pairs with the release store at the end
        return false;           // one at a time: its TLB shoot-down waits for the others
    struct g *batch = 0;
    uint32_t n = 0;
    spin_lock(&gfree_lock);
    while (n < max && gfree_global) {
        struct g *gp = gfree_global;
        gfree_global = gp->schedlink;
        ngfree_global--;
        gp->schedlink = batch;
        batch = gp;
        n++;
    }
    spin_unlock(&gfree_lock);
    uint64_t pages = 0, chain = 0;
    for (struct g *gp = batch; gp; gp = gp->schedlink) {
        // a live G here would lose its stack: fail loudly instead
        ASSERT(__atomic_load_n(&gp->status, __ATOMIC_ACQUIRE) == G_DEAD);   // taken under gfree_lock: acquire only for the check
        uint64_t top_page = ((uint64_t)gp & ~(PAGE_SIZE - 1));
        for (uint64_t va = gp->stack_lo; va < top_page; va += PAGE_SIZE) {
            uint64_t pa = arch_stack_unmap_page(va);
            if (pa) {
                *(uint64_t *)pa = chain;
                chain = pa;
                pages++;
            }
        }
    }
    if (pages) {
        // Pinned: a shooter that moved to another core would leave that
        // core's TLB unflushed (arch/tlb.c). While another shoot-down is
        // under way (a test's), interrupts come on between tries, or it
        // would wait for this core's answer while this core waits for it.
        struct m *mp = acquirem();
        while (!arch_tlb_shootdown()) {
            uint64_t f = irq_save();
            irq_enable();
            cpu_relax();
            irq_restore(f);
        }
        releasem(mp);
        while (chain) {
            uint64_t next = *(uint64_t *)chain;
            page_free((void *)chain, 1);
            chain = next;
        }
    }
    spin_lock(&gfree_lock);
    while (batch) {
        struct g *gp = batch;
        batch = gp->schedlink;
        gp->schedlink = gfree_global;
        gfree_global = gp;
        ngfree_global++;
    }
    spin_unlock(&gfree_lock);
    __atomic_fetch_add(&scavenged_total, pages, __ATOMIC_RELAXED);    // a statistic
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);                  // pairs with the exchange at the start
    *freed = pages;
    return true;
}

uint64_t stack_scavenge(uint32_t max)
{
    uint64_t pages = 0;
    scavenge(max, &pages);
    return pages;
}

// From a G (tests): the whole global free list trimmed, waiting out a trim
// that is under way (the background one takes 256 Gs and leaves the rest).
uint64_t stack_scavenge_all(void)
{
    uint64_t pages = 0;
    while (!scavenge(~0u, &pages))
        gosched();
    return pages;
}

uint64_t stack_scavenged_pages(void)
{
    return __atomic_load_n(&scavenged_total, __ATOMIC_RELAXED);      // a statistic
}

bool stack_scavenge_worth(void)
{
    return __atomic_load_n(&ngfree_global, __ATOMIC_RELAXED) != 0;   // a hint: gfree_lock decides
}

// Owner of pp. A dead G for reuse, refilled from the global list in batches.
struct g *gfget(struct p *pp)
{
    if (!pp->gfree && __atomic_load_n(&ngfree_global, __ATOMIC_RELAXED)) {   // a hint: gfree_lock decides
        spin_lock(&gfree_lock);
        while (pp->ngfree < GFREE_LOCAL_MAX / 2 && gfree_global) {
            struct g *gp = gfree_global;
            gfree_global = gp->schedlink;
            ngfree_global--;
            gp->schedlink = pp->gfree;
            pp->gfree = gp;
            pp->ngfree++;
        }
        spin_unlock(&gfree_lock);
    }
    struct g *gp = pp->gfree;
    if (gp) {
        ASSERT(__atomic_load_n(&gp->status, __ATOMIC_RELAXED) == G_DEAD);   // ours: the free list is the P's
        pp->gfree = gp->schedlink;
        pp->ngfree--;
    }
    return gp;
}

static void gfree_spill(struct p *pp, uint32_t keep)
{
    spin_lock(&gfree_lock);
    while (pp->ngfree > keep) {
        struct g *gp = pp->gfree;
        pp->gfree = gp->schedlink;
        pp->ngfree--;
        gp->schedlink = gfree_global;
        gfree_global = gp;
        ngfree_global++;
    }
    spin_unlock(&gfree_lock);
}

// Owner of pp.
void gfput(struct p *pp, struct g *gp)
{
    gp->schedlink = pp->gfree;
    pp->gfree = gp;
    if (++pp->ngfree >= GFREE_LOCAL_MAX)
        gfree_spill(pp, GFREE_LOCAL_MAX / 2);
}

void g_free_list_move(struct p *pp)
{
    gfree_spill(pp, 0);
}

static uint64_t new_goid(struct p *pp)
{
    if (pp->goidcache == pp->goidcacheend) {
        pp->goidcache = __atomic_fetch_add(&sched.goidgen, 16, __ATOMIC_RELAXED) + 1;   // relaxed: ids need only be unique
        pp->goidcacheend = pp->goidcache + 16;
    }
    return pp->goidcache++;
}

static void goexit1(void);

__attribute__((noinline, cold)) static void gosched_global(struct g *gp)
{
    spin_lock(&sched.lock);
    globrunqput(gp);
    spin_unlock(&sched.lock);
    wakep();                    // the global queue holds work: an idle P may help
}

uint64_t go(void (*fn)(void *), void *arg)
{
    struct m *mp = acquirem();
    struct p *pp = mp->p;
    if (__builtin_expect(!pp, 0))
        sched_fatal_without_p("go", __builtin_return_address(0));
    struct g *gp = gfget(pp);
    if (!gp)
        gp = g_alloc(pp->node);
    if (__builtin_expect(mp->nspare < M_SPARE_PAGES / 2, 0))
        stack_spares_refill(mp);
    gp->rsp = arch_stack_init(gp->stack_hi, fn, arg, goexit1);
    gp->fn = fn;
    gp->id = new_goid(pp);
    gp->parent_id = mp->curg ? mp->curg->id : 0;
    gp->waitreason = 0;
    gp->waiton = 0;
    __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);      // published by runqput's release store
    pp->ncreated++;
    uint64_t id = gp->id;
    trace_g(TR_GO_CREATE, gp);
    // Seeded schedules vary runnext use for new goroutines (not for
    // wake-ups, whose latency guarantees rest on runnext).
    bool next = !(sched.random_runnext && (fastrand(mp) & 3) == 0);
    runqput(pp, gp, next);      // published by runq_push's release store
    if (__atomic_load_n(&sched.started, __ATOMIC_RELAXED)) {         // set once at boot, before any other core runs a G
        if (next)
            wakep_after_rmw();  // runnext's exchange published it
        else
            wakep();
    }
    releasem(mp);
    return id;
}

static void goexit0(struct g *gp)
{
    ASSERT(!gp->defers);            // a call returned without gdefer_pop
    struct m *mp = dropg(gp);
    struct p *pp = mp->p;
    trace_g(TR_GO_END, gp);
    __atomic_store_n(&gp->status, G_DEAD, __ATOMIC_RELAXED);          // read by dumps only; gfree_lock publishes it
    pp->nexited++;
    gfput(pp, gp);
    schedule_m(mp);
}

static void goexit1(void)
{
    mcall(goexit0);
    __builtin_unreachable();
}

void gdefer_push(struct gdefer *d, void (*fn)(void *), void *arg)
{
    struct g *gp = getg();
    d->fn = fn;
    d->arg = arg;
    d->next = gp->defers;
    gp->defers = d;
}

void gdefer_pop(struct gdefer *d)
{
    struct g *gp = getg();
    ASSERT(gp->defers == d);        // pops in the reverse order of the pushes
    gp->defers = d->next;
}

// Go's Goexit: the deferred calls run first (once_do's release among
// them), each taken off before it runs, so one that exits again goes on
// with the rest.
void goexit(void)
{
    struct g *gp = getg();
    for (struct gdefer *d; (d = gp->defers);) {
        gp->defers = d->next;
        d->fn(d->arg);
    }
    goexit1();
    __builtin_unreachable();
}

// The yielder goes behind every G already waiting on the global queue
// (Go's Gosched puts it there), so a G that keeps yielding cannot starve
// them; with the global queue empty it goes to its own P's tail, which
// takes no lock (docs/design.md: the departure and its measurement).
static void gosched_m(struct g *gp)
{
    struct m *mp = dropg(gp);
    struct p *pp = mp->p;
    __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);      // published by the queue's release (lock or tail store)
    if (__builtin_expect(__atomic_load_n(&sched.runq_size, __ATOMIC_RELAXED) != 0, 0))  // a hint: sched.lock decides
        gosched_global(gp);
    else
        runqput(pp, gp, false);
    schedule_m(mp);
}

void gosched(void)
{
    mcall(gosched_m);
}

uint64_t goid(void)
{
    struct m *mp = acquirem();
    uint64_t id = mp->curg ? mp->curg->id : 0;
    releasem(mp);
    return id;
}

int num_goroutine(void)
{
    int64_t n = 0;
    for (uint32_t i = 0; i < sched.ncpu; i++)
        n += (int64_t)(SNAPSHOT(allp[i]->ncreated) - SNAPSHOT(allp[i]->nexited));   // racing counts, as Go's
    return (int)n;
}

static void park_m(void *arg)
{
    struct g *gp = arg;
    struct m *mp = dropg(gp);
    trace_g(TR_GO_PARK, gp);        // before the G can be readied
    __atomic_store_n(&gp->status, G_WAITING, __ATOMIC_RELEASE);       // pairs with goready's and the netpoller's acquire checks
    bool (*unlockf)(struct g *, void *) = gp->waitunlockf;
    if (unlockf && !unlockf(gp, gp->waitlock)) {
        // The wait was called off: run gp again at once.
        trace_gp(TR_GO_UNPARK, gp, 0);
        __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);  // published by runqput's release store
        runqput(mp->p, gp, true);
    }
    schedule_m(mp);
}

// From a G: parks it. unlockf(gp, lock) runs on g0 after the G's context
// is saved, so whoever it makes the G visible to can ready it safely;
// returning false cancels the park. The wait fields are written with
// interrupts off, in the same step as the switch, so the G cannot move to
// another M in between.
void gopark(bool (*unlockf)(struct g *, void *), void *lock, const char *reason, const void *on)
{
    if (__builtin_expect(preempt_count() != 0, 0))
        sched_fatal_pinned(reason, __builtin_return_address(0));     // it would block
    irq_disable();
    struct m *mp = getm();
    struct g *gp = mp->curg;
    gp->waitunlockf = unlockf;
    gp->waitlock = lock;
    gp->waitreason = reason;
    gp->waiton = on;
    arch_mcall(&gp->rsp, mp->g0_top, park_m, gp);     // returns when gp is readied and runs
}

// Owner of the P (a G, or g0 with a P): makes a parked G runnable on this
// P, in runnext when next (it inherits the time slice). A G between
// entersyscall and exitsyscall holds no P: gp goes to an idle P or the
// global queue, as from an interrupt (injectglist).
void goready(struct g *gp, bool next)
{
    ASSERT(__atomic_load_n(&gp->status, __ATOMIC_ACQUIRE) == G_WAITING);   // pairs with park_m's release
    struct m *mp = acquirem();
    trace_g(TR_GO_UNPARK, gp);
    __atomic_store_n(&gp->status, G_RUNNABLE, __ATOMIC_RELAXED);      // published by the queue's release
    if (__builtin_expect(!mp->p, 0)) {
        gp->schedlink = 0;
        injectglist(gp, 0);
    } else {
        runqput(mp->p, gp, next);
        if (next)
            wakep_after_rmw();  // runnext's exchange published it
        else
            wakep();
    }
    releasem(mp);
}

// The goroutines a dump would list now: every G neither dead nor never run.
uint32_t g_count_live(void)
{
    uint32_t n = 0;
    spin_lock(&allg_lock);
    for (struct g *gp = allg; gp; gp = gp->alllink) {
        uint32_t s = __atomic_load_n(&gp->status, __ATOMIC_RELAXED);   // a snapshot, as the dump's
        n += s != G_DEAD && s != G_IDLE;
    }
    spin_unlock(&allg_lock);
    return n;
}

// Any context: fn(gp, arg) for every G ever created, newest first. No lock
// is held while fn runs: the list only grows at its head, with alllink set
// before the head moves (under allg_lock), and records are never freed; a
// G's fields are a snapshot that may change under fn.
void g_for_each(void (*fn)(struct g *gp, void *arg), void *arg)
{
    spin_lock(&allg_lock);
    struct g *gp = allg;
    spin_unlock(&allg_lock);
    for (; gp; gp = gp->alllink)
        fn(gp, arg);
}

void g_dump_all(void)
{
    for (struct g *gp = allg; gp; gp = gp->alllink) {
        uint32_t s = __atomic_load_n(&gp->status, __ATOMIC_RELAXED);   // a snapshot: the machine is stopping
        if (s == G_DEAD || s == G_IDLE)
            continue;
        kprintf("goroutine %lu [%s%s%s]: created by goroutine %lu, entry %s\n", gp->id,
                gstatus_name(s), gp->waitreason && s == G_WAITING ? ", " : "",
                gp->waitreason && s == G_WAITING ? gp->waitreason : "", gp->parent_id,
                ({ uint64_t off; const char *n = arch_symbolize((uint64_t)gp->fn, &off); n ? n : "?"; }));
        if (s == G_WAITING && gp->waiton)
            kprintf("  waiting on %p\n", gp->waiton);
        if (s != G_RUNNING) {
            // A saved context's frame pointer sits 6 slots above its rsp
            // (see arch/switch.asm), so the parked G's stack can be walked.
            const uint64_t *sp = (const uint64_t *)gp->rsp;
            if (gp->rsp >= gp->stack_lo && gp->rsp + 64 <= gp->stack_hi && arch_mapped((uint64_t)&sp[2]))
                arch_backtrace(sp[2], 8);
        }
    }
}

// The trap path's view of the running goroutine.
void trap_describe_context(void)
{
    struct m *mp = getm();
    if (mp && mp->curg)
        kprintf("  goroutine %lu (created by goroutine %lu) on cpu %u\n", mp->curg->id,
                mp->curg->parent_id, cpu_index());
    else
        kprintf("  cpu %u on its scheduler stack (no goroutine)\n", cpu_index());
}

// The slot of a stack-region address.
static uint64_t slot_of(uint64_t addr)
{
    return ARCH_STACK_REGION + (addr - ARCH_STACK_REGION) / G_STACK_SLOT * G_STACK_SLOT;
}

static bool in_stack_region(uint64_t addr)
{
    return addr - ARCH_STACK_REGION < ARCH_STACK_REGION_SIZE;
}

// In an interrupt that came with interrupts on, on this core (so the
// interrupted code holds no lock, the allocator's included): tops up the
// spare pages that faults with interrupts off took, so that they never
// run out on a core that keeps running Gs without creating any or idling.
void stack_spares_top_up(struct m *mp)
{
    while (mp->nspare < M_SPARE_PAGES)
        mp->spare[mp->nspare++] = page_alloc(1);
}

// In an interrupt that came with interrupts on (trap_switch_hook), on this
// core: maps the stack page holding addr, if it is in a G's slot and
// unmapped, from the allocator (the interrupted code holds no lock). False
// when addr is in the slot's guard page (never mapped: the G overflows
// there soon enough).
bool g_stack_premap(uint64_t addr)
{
    if (!in_stack_region(addr) || arch_virt_to_phys(addr))
        return true;
    if (addr < slot_of(addr) + G_STACK_GUARD)
        return false;           // the guard page stays unmapped: the G is about to overflow
    void *page = page_alloc(1);
    if (!stack_page_install(addr, page))
        page_free(page, 1);     // another core mapped it first
    return true;
}

// #PF on the IST stack, interrupts off. Inside a G's slot: a guard-page hit
// is a stack overflow, fatal, naming the G that owns the slot; any other
// not-present page is stack growth. With interrupts on at the fault the
// code held no spinlock, so the allocator is safe to enter (and the spare
// pages are topped up while at it); the spares are kept for faults with
// interrupts off (a spinlock holder), which may not enter it.
bool g_stack_fault(uint64_t vector, uint64_t error, uint64_t addr, uint64_t rip, bool irqs_on)
{
    (void)rip;
    if (vector != 14 || !in_stack_region(addr))
        return false;
    uint64_t slot = slot_of(addr);
    if (slot >= __atomic_load_n(&stack_next, __ATOMIC_RELAXED) || (error & 1))   // a faulting G's slot was handed out before it ran
        return false;           // no G there, or a protection fault: not ours to fix
    struct g *gp = (struct g *)(slot + G_STACK_SLOT - G_RECORD_SIZE);
    if (addr < slot + G_STACK_GUARD)
        panic("fatal error: stack overflow: goroutine %lu (created by goroutine %lu) ran past its %lu KiB stack (fault at %p)",
              gp->id, gp->parent_id, (gp->stack_hi - gp->stack_lo) / 1024, (void *)addr);
    struct m *mp = getm();
    if (irqs_on) {
        void *page = page_alloc(1);
        if (!stack_page_install(addr, page))
            page_free(page, 1);     // another core mapped it first
        if (mp)
            stack_spares_top_up(mp);
        return true;
    }
    if (!mp || !mp->nspare)
        panic("fatal error: goroutine %lu's stack grew inside a spinlock with no spare page on core %u (fault at %p)",
              gp->id, cpu_index(), (void *)addr);
    void *page = mp->spare[--mp->nspare];
    if (!stack_page_install(addr, page))
        mp->spare[mp->nspare++] = page;    // another core mapped it first: still a spare
    return true;
}
