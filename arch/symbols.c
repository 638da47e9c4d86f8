// SPDX-License-Identifier: MIT
// Symbol lookup and frame-pointer backtraces. The table is generated from
// the first link's symbols (tools/build/mksyms.py) and linked into .ksyms.
#include "arch/arch.h"
#include "arch/arch_private.h"
#include "lib/printf.h"

extern const uint64_t ksyms_count;
extern const uint64_t ksyms_table[];       // pairs: address, offset into names
extern const char ksyms_names[];
extern char _image_start[], _etext[];

const char *arch_symbolize(uint64_t addr, uint64_t *offset)
{
    uint64_t lo = 0, hi = ksyms_count;
    if (hi == 0 || addr < ksyms_table[0] || addr >= (uint64_t)_etext)
        return 0;
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (ksyms_table[2 * mid] <= addr)
            lo = mid;
        else
            hi = mid;
    }
    *offset = addr - ksyms_table[2 * lo];
    return &ksyms_names[ksyms_table[2 * lo + 1]];
}

// A frame is trusted only while it is 8-byte aligned, moves up the stack
// and both its words (saved rbp, return address) lie in mapped memory: a
// corrupt chain ends the walk, not the dump (a fault inside a fatal dump
// would lose the dump).
static int frame_ok(uint64_t rbp, uint64_t prev)
{
    return rbp && !(rbp & 7) && rbp > prev && rbp < (1ull << 47) && paging_mapped(rbp) &&
           paging_mapped(rbp + 8);
}

int arch_backtrace_collect(uint64_t rbp, uint64_t *ret, int max)
{
    uint64_t prev = 0;
    int n = 0;
    while (n < max && frame_ok(rbp, prev)) {
        const uint64_t *frame = (const uint64_t *)rbp;
        if (!frame[1])
            break;
        ret[n++] = frame[1];
        prev = rbp;
        rbp = frame[0];
    }
    return n;
}

void arch_backtrace(uint64_t rbp, int max)
{
    uint64_t prev = 0;
    for (int i = 1; i <= max && frame_ok(rbp, prev); i++) {
        const uint64_t *frame = (const uint64_t *)rbp;
        uint64_t ret = frame[1], off = 0;
        if (!ret)
            break;
        const char *sym = arch_symbolize(ret - 1, &off);
        kprintf("  #%d %016lx %s+0x%lx\n", i, ret, sym ? sym : "?", off + 1);
        prev = rbp;
        rbp = frame[0];
    }
}
