; SPDX-License-Identifier: MIT
;
; Voluntary goroutine switches (Go's mcall and gogo).
;
; A switched-out goroutine's stack holds, from its saved rsp upwards:
;   [mxcsr:32 | x87 cw:16 | pad:16] rbx rbp r12 r13 r14 r15 return-address
; i.e. what the SysV ABI says a callee must preserve, plus the two control
; registers the ABI also makes callee-saved. Vector registers themselves
; are caller-saved, so a voluntary switch never touches them.
;
; With simd off (CR4.OSFXSR clear) stmxcsr/ldmxcsr would fault: at boot,
; arch/fpu.c overwrites each one's 4 bytes below (the first half of
; switch_fp_save and switch_fp_restore) with a NOP, so no switch tests a
; flag; the x87 control word is kept either way.
;
; A resumed goroutine finds the x87 register stack empty, as the ABI has
; it at every call: only a preemption leaves it loaded, and the preemption
; saves it and resets the unit (arch/xsave.c).

global arch_mcall, arch_gogo, arch_gstart, switch_fp_save, switch_fp_restore

section .text

; void arch_mcall(uint64_t *save_rsp, uint64_t g0_top, void (*fn)(void *), void *arg)
; Saves the caller (a goroutine) so that arch_gogo(*save_rsp) resumes it
; returning from arch_mcall, then runs fn(arg) on the g0 stack at g0_top.
; The caller has turned interrupts off. fn must not return.
align 16
arch_mcall:
    push r15
    push r14
    push r13
    push r12
    push rbp
    push rbx
    sub rsp, 8
switch_fp_save:                     ; stmxcsr: 4 bytes, patched to a NOP when simd is off
    stmxcsr [rsp]
    fnstcw [rsp + 4]
    mov [rdi], rsp
    mov rsp, rsi
    xor ebp, ebp                    ; g0 frames end the backtrace here
    mov rdi, rcx
    call rdx
    ud2

; void arch_gogo(uint64_t rsp) -- resumes a goroutine saved by arch_mcall
; (or prepared by the kernel to start in arch_gstart), with interrupts on.
align 16
arch_gogo:
    mov rsp, rdi
switch_fp_restore:                  ; ldmxcsr: 4 bytes, patched like switch_fp_save
    ldmxcsr [rsp]
    fldcw [rsp + 4]
    add rsp, 8
    pop rbx
    pop rbp
    pop r12
    pop r13
    pop r14
    pop r15
    sti
    ret

; A new goroutine's first frame returns here with r12 = fn, r13 = arg and
; r14 = the exit function; fn(arg) runs, then exit, which does not return.
align 16
arch_gstart:
    and rsp, -16
    mov rdi, r13
    call r12
    call r14
    ud2
