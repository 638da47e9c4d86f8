// SPDX-License-Identifier: MIT
// Probes of the kernel's own paths, for benchmarks (goro.h): a raw timer's
// lateness and an IPI's round trip, measured where an application cannot
// reach (apps/bench_time.c's timer_latency and raw_ipi_roundtrip).
#include "goro.h"
#include "arch/arch.h"
#include "kernel/timer.h"

// ---- a raw timer ---------------------------------------------------------------

struct timer_probe {
    struct timer t;                 // first: the timer's function gets the probe
    uint64_t fired;                 // arch_cycles() when the function ran; 0 before
    chan_t *wake;                   // park mode: the function readies the caller through it
};

static void timer_probe_fire(struct timer *t, uint64_t now)
{
    (void)now;                      // read by timers_run before earlier timers ran
    struct timer_probe *p = (struct timer_probe *)t;
    __atomic_store_n(&p->fired, arch_cycles(), __ATOMIC_RELEASE);     // release: pairs with timer_probe_run's acquire
    if (p->wake)
        chan_try_send(p->wake, 0);
}

timer_probe_t *timer_probe_new(bool park)
{
    struct timer_probe *p = calloc(1, sizeof *p);
    p->t.f = timer_probe_fire;
    p->wake = park ? chan_make(0, 1) : 0;
    return p;
}

uint64_t timer_probe_run(struct timer_probe *p, uint64_t ahead_ns)
{
    p->fired = 0;
    p->t.when = arch_cycles() + arch_ns_to_cycles(ahead_ns);
    timer_start(&p->t);
    uint64_t fired;
    if (p->wake) {
        chan_recv(p->wake, 0);
        fired = __atomic_load_n(&p->fired, __ATOMIC_RELAXED);     // relaxed: the channel's handoff ordered it
    } else {
        while (!(fired = __atomic_load_n(&p->fired, __ATOMIC_ACQUIRE)))     // acquire: pairs with timer_probe_fire's release
            procyield(1);
    }
    return arch_cycles_to_ns(fired - p->t.when);
}

void timer_probe_free(struct timer_probe *p)
{
    if (p->wake)
        chan_free(p->wake);
    free(p);
}

// ---- an IPI there and back ----------------------------------------------------------

static uint32_t ipi_from;
static uint64_t ipi_arrived, ipi_back;

static void ipi_ping(uint8_t vector)
{
    (void)vector;
    // release: pairs with ipi_probe's acquire of ipi_arrived; the PONG
    // below reaches the prober after this store (arch_send_ipi fences)
    __atomic_store_n(&ipi_arrived, arch_cycles(), __ATOMIC_RELEASE);
    arch_send_ipi(__atomic_load_n(&ipi_from, __ATOMIC_ACQUIRE), VEC_PROBE_PONG);   // acquire: pairs with ipi_probe's release of ipi_from
}

static void ipi_pong(uint8_t vector)
{
    (void)vector;
    __atomic_store_n(&ipi_back, arch_cycles(), __ATOMIC_RELEASE);     // release: pairs with ipi_probe's acquire
}

static void ipi_probe_init(void *arg)
{
    (void)arg;
    arch_set_irq_handler(VEC_PROBE_PING, ipi_ping);
    arch_set_irq_handler(VEC_PROBE_PONG, ipi_pong);
}

bool ipi_probe(uint64_t *roundtrip_ns, uint64_t *oneway_ns)
{
    static once_t handlers = ONCE_INIT;
    if (arch_ncpu() < 2)
        return false;
    once_do(&handlers, ipi_probe_init, 0);
    preempt_disable();              // this G stays on this core until the answer
    uint32_t me = cpu_index();
    // relaxed: the handlers run after the IPI below, which arch_send_ipi
    // sends only once these stores are visible (it fences)
    __atomic_store_n(&ipi_arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ipi_back, 0, __ATOMIC_RELAXED);        // relaxed: as ipi_arrived above
    __atomic_store_n(&ipi_from, me, __ATOMIC_RELEASE);      // release: pairs with ipi_ping's acquire
    uint64_t t0 = arch_cycles(), back;
    arch_send_ipi((me + 1) % arch_ncpu(), VEC_PROBE_PING);
    while (!(back = __atomic_load_n(&ipi_back, __ATOMIC_ACQUIRE)))     // acquire: pairs with ipi_pong's release
        procyield(1);
    preempt_enable();
    uint64_t arrived = __atomic_load_n(&ipi_arrived, __ATOMIC_ACQUIRE);  // acquire: pairs with ipi_ping's release, stored before it sent PONG
    *roundtrip_ns = arch_cycles_to_ns(back - t0);
    *oneway_ns = arrived > t0 ? arch_cycles_to_ns(arrived - t0) : 0;
    return true;
}
