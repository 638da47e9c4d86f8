/* SPDX-License-Identifier: MIT
 *
 * insnmark 1|2: a static Linux program that executes insncount's marker NOP
 * 1 or 2 and exits, so that a shell script in a guest running unmodified
 * programs (Go's test binaries) can bracket them:
 *     insnmark 1; ./sync.test ...; insnmark 2
 * Built with gcc -nostdlib -static; no libc.
 */
        .text
        .globl _start
_start:
        mov 16(%rsp), %rax              /* argv[1] (argc at 0, argv[0] at 8) */
        test %rax, %rax
        jz 3f
        cmpb $'2', (%rax)
        je 2f
        .byte 0x0f, 0x1f, 0x80, 0x01, 0x00, 0xed, 0xfe  /* marker 1 */
        jmp 3f
2:      .byte 0x0f, 0x1f, 0x80, 0x02, 0x00, 0xed, 0xfe  /* marker 2 */
3:      mov $60, %eax                   /* exit(0) */
        xor %edi, %edi
        syscall
        .section .note.GNU-stack, "", @progbits
