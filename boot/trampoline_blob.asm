; SPDX-License-Identifier: MIT
; The assembled AP trampoline, carried in the image for arch/smp.c to copy.
section .rodata
global ap_trampoline_start, ap_trampoline_end
align 16
ap_trampoline_start:
    incbin TRAMPOLINE_BIN
ap_trampoline_end:
