// SPDX-License-Identifier: MIT
// Patches the sites of arch/static_branch.h: each .static_branch entry is
// (site, target, key); an enabled key's sites become jmp rel32 to target.
#include <stdint.h>
#include "arch/static_branch.h"
#include "arch/arch_private.h"
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
