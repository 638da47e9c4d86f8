; SPDX-License-Identifier: MIT
;
; Asynchronous preemption: switching away from a goroutine at an interrupt.
;
; The interrupt arrived on this core's interrupt stack (arch/trap.c says
; why); its trapframe (arch/isr.asm) is copied onto the goroutine's own
; stack, below where it was interrupted. Below it we build the frame a
; voluntary switch leaves (see arch/switch.asm), whose return address is
; preempt_resume, and save that rsp as the goroutine's context. Resuming
; it with arch_gogo therefore "returns" into preempt_resume, which
; restores the vector state and irets through the trapframe's copy: every
; register comes back as it was.
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
; Called on this core's interrupt stack (tf is there too) with interrupts
; off, after the EOI. Saves the vector state, copies tf onto the
; goroutine's stack just below where it was interrupted (16-byte aligned,
; where the CPU would have pushed it), builds the switch frame below that
; (the kernel mapped both: arch_preempt_stack) and runs fn(arg) on g0.
; Never returns.
TF_SIZE equ 176                     ; struct trapframe (arch/arch_private.h)
TF_RSP equ 160                      ; its rsp field
align 16
arch_preempt:
    push rdi
    push rsi
    push rdx
    push rcx
    push r8
    push r9
    sub rsp, 8                      ; 16-byte aligned for the call
    mov rdi, rdx
    call arch_xsave                 ; vector state -> area (no-op when area is NULL)
    add rsp, 8
    pop r9
    pop r8
    pop rcx
    pop rdx
    pop r11                         ; save_rsp
    pop rsi                         ; tf, on the interrupt stack
    mov r10, [rsi + TF_RSP]
    and r10, -16
    sub r10, TF_SIZE                ; r10 = the frame's place on the goroutine's stack
    mov rax, rcx
    mov rdi, r10
    mov ecx, TF_SIZE / 8
    cld
    rep movsq
    mov rcx, rax                    ; g0
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
