// SPDX-License-Identifier: MIT
// Delay points (kernel/debugdelay.h).
#include "kernel/debugdelay.h"
#include "arch/arch.h"
#include "kernel/cmdline.h"
#include "lib/printf.h"
#include "lib/string.h"

static const char *const point_names[DELAY_COUNT] __attribute__((unused)) = {
#define DEBUG_DELAY_NAME(name, where) #name,
    DEBUG_DELAY_POINTS(DEBUG_DELAY_NAME)
#undef DEBUG_DELAY_NAME
};

uint32_t debug_delay_holder[DELAY_COUNT];

#ifdef GORO_DEBUG
uint32_t debug_delay_us[DELAY_COUNT];

#define UNCALIBRATED_CYCLES_PER_US 1000

static uint64_t deadline_in(uint32_t us)
{
    uint64_t cycles = arch_ns_to_cycles((uint64_t)us * 1000);
    cycles = cycles ? cycles : (uint64_t)us * UNCALIBRATED_CYCLES_PER_US;   // the rate not known yet
    return arch_cycles() + cycles;
}

void debug_delay_spin(uint32_t us)
{
    uint64_t end = deadline_in(us);
    while (arch_cycles() < end)
        cpu_relax();
}

void debug_delay_spin_one(enum debug_delay_point point, uint32_t us)
{
    uint32_t none = 0;
    // relaxed: the holder word carries no data; the test reads it as a state
    if (!__atomic_compare_exchange_n(&debug_delay_holder[point], &none, cpu_index() + 1, false,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;
    uint64_t end = deadline_in(us);
    while (arch_cycles() < end && __atomic_load_n(&debug_delay_us[point], __ATOMIC_RELAXED))   // relaxed: closing ends the wait
        cpu_relax();
    __atomic_store_n(&debug_delay_holder[point], 0, __ATOMIC_RELAXED);     // relaxed: a state, as above
}
#endif

bool debug_delay_set(const char *name, uint32_t us)
{
#ifdef GORO_DEBUG
    for (int i = 0; i < DELAY_COUNT; i++) {
        if (strcmp(name, point_names[i]) == 0) {
            __atomic_store_n(&debug_delay_us[i], us, __ATOMIC_RELAXED);   // read by DEBUG_DELAY
            return true;
        }
    }
#else
    (void)name;
    (void)us;
#endif
    return false;
}

void debug_delay_init(void)
{
    for (int i = 0; i < kparams.ndelays; i++) {
        const struct cmdline_delay *d = &kparams.delays[i];
#ifdef GORO_DEBUG
        if (debug_delay_set(d->name, d->us)) {
            kprintf("debug: delay point %s widened by %u us\n", d->name, d->us);
            continue;
        }
        kprintf("cmdline: delay=: no delay point named \"%s\"; the points are:", d->name);
        for (int k = 0; k < DELAY_COUNT; k++)
            kprintf(" %s", point_names[k]);
        kprintf("\n");
#else
        kprintf("cmdline: delay=%s:%u needs a debug build (make DEBUG=1); ignored\n", d->name, d->us);
#endif
    }
}

#ifdef GORO_DEBUG
static void early_warn(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;      // the parse proper names it
}
#endif

void debug_delay_early(const char *line)
{
#ifdef GORO_DEBUG
    static struct kparams early;
    cmdline_parse(line, &early, early_warn, 0);
    for (int i = 0; i < early.ndelays; i++)
        debug_delay_set(early.delays[i].name, early.delays[i].us);
#else
    (void)line;
#endif
}
