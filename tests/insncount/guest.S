/* SPDX-License-Identifier: MIT
 *
 * A multiboot (v1) guest with loops of known instruction counts between
 * insncount's marker NOPs, for tests/insncount/check.py. QEMU loads it with
 * -kernel (32-bit protected mode, paging off). Between marker 1 and marker 2
 * of the first two pairs run exactly 1 + 2*N instructions: marker 1 itself
 * and N rounds of dec+jnz (the mov comes before marker 1; marker 2 is not
 * counted). The third pair's 1 + 7*N instructions hold N of each kind of
 * atomic the plugin tells apart: lock cmpxchg, lock xadd, xchg with memory
 * (locked without a prefix), lock inc; the xchg between registers and the
 * pause are not atomics.
 */
#define MARK(id) .byte 0x0f, 0x1f, 0x80, id, 0x00, 0xed, 0xfe

        .text
        .code32
        .globl _start
        .align 4
multiboot_header:
        .long 0x1BADB002                /* magic */
        .long 0                         /* flags: nothing asked of the loader */
        .long -0x1BADB002               /* checksum: the three sum to zero */

_start:
        mov $1000, %ecx
        MARK(1)
1:      dec %ecx
        jnz 1b
        MARK(2)

        mov $100000, %ecx
        MARK(1)
2:      dec %ecx
        jnz 2b
        MARK(2)

        mov $1000, %ecx
        MARK(1)
3:      lock cmpxchg %edx, word
        lock xadd %eax, word
        xchg %eax, word
        lock incl word
        xchg %eax, %edx
        pause
        loop 3b
        MARK(2)

        /* isa-debug-exit at 0xf4: QEMU exits with status (0 << 1) | 1. */
        xor %eax, %eax
        outb %al, $0xf4
4:      hlt
        jmp 4b

        .data
        .align 4
word:   .long 0
