; SPDX-License-Identifier: MIT
;
; A call that preserves every general register, for the out-of-line blocks
; of static branches (arch/static_branch.h, static_branch_call2). An
; ordinary C call there clobbers the caller-saved registers, so the
; compiler keeps the hot path's live values in callee-saved ones instead,
; pushing and popping them on every pass; through this thunk the call
; clobbers nothing and the hot path is left as it was.

global arch_call_saving_all

section .text

; In, on the stack above the return address: the function, then its first
; and second arguments (pushed in reverse by static_branch_call2). Every
; general register comes back unchanged (the flags do not), and the three
; words are popped on return. The stack is aligned to 16 for the callee
; whatever the caller's alignment was.
arch_call_saving_all:
    push rbp
    mov rbp, rsp                    ; [rbp+16] fn, [rbp+24] a, [rbp+32] b
    push rax
    push rcx
    push rdx
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
    and rsp, -16
    mov rdi, [rbp + 24]
    mov rsi, [rbp + 32]
    call [rbp + 16]
    lea rsp, [rbp - 72]             ; the nine pushes above
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
    pop rbp
    ret 24
