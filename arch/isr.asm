; SPDX-License-Identifier: MIT
;
; Interrupt and exception entry. Every vector has a stub that pushes an
; error code (a zero where the CPU pushes none) and the vector number, then
; jumps to isr_common, which saves the general registers as a struct
; trapframe (arch/arch_private.h) and calls trap_dispatch(frame).
; trap_dispatch returns the frame to resume: the same one, or another
; goroutine's when the interrupt switches goroutines. The kernel always runs
; at ring 0 and GS base is per core, never swapped, so there is no swapgs.
;
; isr_common and each stub have a section of their own, named after them,
; so that boot/text_order.txt can place the boot core's wake from its halt
; for the APs' check-ins (one stub, isr_common, trap_dispatch) beside the
; rest of its boot: under TCG a page's first block walks every vCPU's TLB.

extern trap_dispatch
global isr_stubs, isr_return

section .text.isr_common progbits alloc exec nowrite align=16
isr_common:
    push rax
    push rbx
    push rcx
    push rdx
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    cld
    mov rdi, rsp
    call trap_dispatch
    mov rsp, rax
isr_return:                         ; rsp = a struct trapframe: restore it and return
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    add rsp, 16
    iretq

%macro STUB 1
section .text.isr_stub_%1 progbits alloc exec nowrite align=16
isr_stub_%1:
%if %1 = 8 || %1 = 10 || %1 = 11 || %1 = 12 || %1 = 13 || %1 = 14 || %1 = 17 || %1 = 21 || %1 = 29 || %1 = 30
    push qword %1
%else
    push qword 0
    push qword %1
%endif
    jmp isr_common
%endmacro

%assign i 0
%rep 256
STUB i
%assign i i + 1
%endrep

section .rodata
align 8
isr_stubs:
%assign i 0
%rep 256
    dq isr_stub_%+i
%assign i i + 1
%endrep
