// SPDX-License-Identifier: MIT
// Patches the sites of arch/static_branch.h: each .static_branch entry is
// (site, target, key); an enabled key's sites become jmp rel32 to target.
//
// Changing sites while other cores run (static_branch_set_live), as
// Linux's text_poke_bp does: a core may fetch a site at any moment, and
// may see a mix of old and new bytes unless it serializes in between, so
//   1. the first byte of every site becomes int3 (one byte: written whole);
//   2. sync: every other core takes an interrupt, whose iret serializes
//      it, so from now on it sees the int3;
//   3. bytes 1..4 get the new instruction's tail; sync;
//   4. the first byte gets the new opcode; sync;
//   5. every site is written again with the same bytes; sync.
// A core that runs into a site's int3 takes #BP, and static_branch_trap
// resumes it after the site: the "off" path, valid whichever way the key
// goes. The sync is arch_tlb_shootdown's acknowledged IPI (a TLB flush
// besides costs nothing here). The caller waits for the acknowledgements
// with interrupts on, so it answers other cores' shoot-downs meanwhile.
//
// Step 5, and an int3 handled after the change is over, are for QEMU's
// TCG, where the protocol alone was not enough: measured, a core took the
// int3 of a site whose byte had been back to 0xE9 for a whole sync (about
// 1 toggle in 50 under load). A vCPU that translates the site while
// another writes it can keep a stale copy the write did not invalidate;
// writing the bytes again once every core has acknowledged (so every such
// translation is finished and its page marked as code) invalidates it.
// An int3 met anyway still falls through, like the key off: at worst one
// hook's event is missed.
#include <stdint.h>
#include "arch/static_branch.h"
#include "arch/arch_private.h"
#include "arch/x86.h"
#include "lib/panic.h"

struct static_branch_site {
    uint64_t site;                  // the 5-byte NOP
    uint64_t target;                // the block it jumps to when on
    uint64_t key;                   // struct static_key *
};

extern const struct static_branch_site __static_branch_start[], __static_branch_end[];

unsigned static_branch_enable(struct static_key *key)
{
    ASSERT(arch_ncpu() <= 1);       // nothing else runs the sites (see the header)
    if (key->enabled)
        return 0;                   // its sites are jumps already, not NOPs
    unsigned n = 0;
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct static_branch_site *s = __static_branch_start; s < __static_branch_end; s++) {
        if (s->key != (uint64_t)key)
            continue;
        uint8_t *p = (uint8_t *)s->site;
        int64_t rel = (int64_t)s->target - (int64_t)(s->site + 5);
        ASSERT(p[0] == 0x0f && p[1] == 0x1f && rel == (int32_t)rel);
        int32_t rel32 = (int32_t)rel;
        p[0] = 0xe9;
        __builtin_memcpy(p + 1, &rel32, 4);
        n++;
    }
    key->enabled = true;
    return n;
}

static void sync_cores(void)
{
    while (!arch_tlb_shootdown())   // another core's shoot-down: let its IPI in, retry
        cpu_relax();
}

// int3s met at sites, and those met when the site no longer held one (a
// stale copy of the code: see the top). Tests read them.
static uint64_t traps, stale_traps;

uint64_t static_branch_traps(uint64_t *stale)
{
    *stale = __atomic_load_n(&stale_traps, __ATOMIC_RELAXED);     // relaxed: counts
    return __atomic_load_n(&traps, __ATOMIC_RELAXED);             // relaxed: counts
}

bool static_branch_trap(uint64_t *rip)
{
    uint64_t at = *rip - 1;
    // cppcheck-suppress comparePointers ; the linker script's bounds of one section
    for (const struct static_branch_site *s = __static_branch_start; s < __static_branch_end; s++) {
        if (s->site == at) {
            *rip = at + 5;
            __atomic_fetch_add(&traps, 1, __ATOMIC_RELAXED);             // relaxed: a count
            if (__atomic_load_n((uint8_t *)at, __ATOMIC_RELAXED) != 0xcc)   // relaxed: a byte, for the count
                __atomic_fetch_add(&stale_traps, 1, __ATOMIC_RELAXED);   // relaxed: a count
            return true;
        }
    }
    return false;
}

unsigned static_branch_set_live(struct static_key *key, bool on)
{
    static uint32_t busy;
    ASSERT(irqs_enabled());
    while (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))    // acquire: pairs with the release at out
        cpu_relax();
    unsigned n = 0;
    if (key->enabled == on)
        goto out;
    static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
    for (int step = 0; step < 4; step++) {
        // cppcheck-suppress comparePointers ; the linker script's bounds of one section
        for (const struct static_branch_site *s = __static_branch_start; s < __static_branch_end; s++) {
            if (s->key != (uint64_t)key)
                continue;
            uint8_t *p = (uint8_t *)s->site;
            int32_t rel32 = (int32_t)((int64_t)s->target - (int64_t)(s->site + 5));
            uint8_t want[5];
            if (on) {
                want[0] = 0xe9;
                __builtin_memcpy(want + 1, &rel32, 4);
            } else {
                __builtin_memcpy(want, nop5, 5);
            }
            if (step == 0) {
                ASSERT(p[0] == (on ? nop5[0] : 0xe9));
                __atomic_store_n(&p[0], 0xcc, __ATOMIC_RELAXED);   // relaxed: sync_cores orders it
                n++;
            } else if (step == 1) {
                for (int i = 1; i < 5; i++)
                    __atomic_store_n(&p[i], want[i], __ATOMIC_RELAXED);   // relaxed: sync_cores orders it
            } else {
                // step 2 writes the opcode; step 3 writes the whole site
                // again, unchanged (see the top: a copy translated while
                // step 2 wrote may have missed it)
                for (int i = 0; i < (step == 2 ? 1 : 5); i++)
                    __atomic_store_n(&p[i], want[i], __ATOMIC_RELAXED);   // relaxed: sync_cores orders it
            }
        }
        sync_cores();               // also serializes this core (mov to CR3)
    }
    key->enabled = on;
out:
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);              // release: the next changer sees enabled
    return n;
}
