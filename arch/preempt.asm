; SPDX-License-Identifier: MIT
;
; Asynchronous preemption: switching away from a goroutine at an interrupt.
;
; The interrupted goroutine's trapframe (arch/isr.asm) stays on its own
; stack. Below it we build the frame a voluntary switch leaves (see
; arch/switch.asm), whose return address is preempt_resume, and save that
; rsp as the goroutine's context. Resuming it with arch_gogo therefore
; "returns" into preempt_resume, which restores the vector state and irets
; through the original trapframe: every register comes back as it was.
;
; preempt_resume runs with interrupts on for one instruction boundary
; (arch_gogo's sti; ret): the kernel must not preempt an interrupt whose
; rip is preempt_resume (arch_preempt_unsafe), or the second XSAVE would
; overwrite the state the first one saved.

global arch_preempt, preempt_resume, preempt_resume_end
extern isr_return, arch_xsave, arch_xrstor

section .text

; void arch_preempt(struct trapframe *tf, uint64_t *save_rsp, void *xsave_area,
;                   uint64_t g0_top, void (*fn)(void *), void *arg)
; Called on the interrupted goroutine's stack with interrupts off, after the
; EOI. Never returns: fn(arg) runs on g0.
align 16
arch_preempt:
    mov r10, rdi                    ; tf
    mov r11, rsi                    ; save_rsp
    push rcx
    push r8
    push r9
    push rdx
    push r10
    push r11
    mov rdi, rdx
    call arch_xsave                 ; vector state -> area (no-op when area is NULL)
    pop r11
    pop r10
    pop rdx
    pop r9
    pop r8
    pop rcx
    ; the fake switch frame, just below the trapframe
    lea rax, [r10 - 64]
    mov qword [rax], 0x1F80         ; mxcsr / x87 cw slot: defaults (XRSTOR restores the real ones)
    mov word [rax + 4], 0x037F
    mov qword [rax + 8], 0          ; rbx
    mov qword [rax + 16], 0         ; rbp
    mov [rax + 24], rdx             ; r12 = xsave area
    mov qword [rax + 32], 0         ; r13
    mov qword [rax + 40], 0         ; r14
    mov qword [rax + 48], 0         ; r15
    lea rsi, [rel preempt_resume]
    mov [rax + 56], rsi             ; return address
    mov [r11], rax
    mov rsp, rcx                    ; g0
    xor ebp, ebp
    mov rdi, r9
    call r8
    ud2

; Entered by arch_gogo's ret: rsp = the trapframe, r12 = the xsave area.
align 16
preempt_resume:
    cli
    mov rdi, r12
    call arch_xrstor
    jmp isr_return
preempt_resume_end:
